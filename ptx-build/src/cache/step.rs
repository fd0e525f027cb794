//! One protocol for every cached step (the Rust front end, the link, nvcc, ptxas, and the
//! signature reads of the embed stage): key -> this target dir's stamp -> the machine's step
//! cache -> run -> store.
//!
//! A step names its output files and records whatever else it learned (the files nvcc read, the
//! kernels, ptxas's resource usage) as its metadata. The stamp holds the key, each output's hash
//! and the metadata; the step is fresh when the key matches, every output is still the file it
//! wrote, and the step's own check of the metadata passes (its recorded inputs unchanged).
//!
//! "Still the file it wrote" is the recorded size and modification time, as cargo and ninja
//! tell; only an output whose size or time moved is hashed again. Hashing every output of a
//! fresh step was a quarter of a build script's rerun when one of candle's 11 files changed
//! (16 MB of PTX through xxh3 built without optimisation, 0.2 s; BENCHMARKS.md, issue 25).

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::fs::{read_stamp, write_stamp};
use super::hash::file_hash;
use super::store::StepCache;
use crate::error::Result;

/// A step whose result is files plus metadata, cached by content.
pub struct CachedStep<'a> {
    /// The target dir's record of the last run.
    pub stamp: PathBuf,
    /// What the result depends on, this checkout's paths included: tool versions and paths,
    /// flags, the inputs' content (those not recorded in the metadata).
    pub key: String,
    /// The machine's step cache and the step's key there, when the step takes part. That key
    /// must hold no path of this checkout, or another checkout could never hit it.
    pub shared: Option<(&'a StepCache, String)>,
    /// The files the step writes, by name (`ptx`, `cubin`).
    pub outputs: Vec<(&'static str, PathBuf)>,
}

/// Where a step's result came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// This target dir's stamp: nothing was written.
    Fresh,
    /// The machine's step cache: the outputs were copied from it.
    Fetched,
    /// The step ran.
    Ran,
}

/// A step's result.
#[derive(Debug)]
pub struct Done<M> {
    /// What the step recorded.
    pub meta: M,
    /// Each output's content hash, in the order of [`CachedStep::outputs`].
    pub hashes: Vec<String>,
    /// Where it came from.
    pub outcome: Outcome,
}

#[derive(Serialize, Deserialize)]
struct Stamp<M> {
    key: String,
    /// Each output as it was written.
    outputs: Vec<Written>,
    meta: M,
}

/// An output's name, content hash, and the size and modification time (nanoseconds since the
/// epoch) it had when the stamp was written.
#[derive(Serialize, Deserialize)]
struct Written(String, String, u64, u128);

impl Written {
    fn new(name: &str, hash: &str, path: &Path) -> Written {
        let (len, time) = size_and_time(path).unwrap_or_default();
        Written(name.to_string(), hash.to_string(), len, time)
    }
}

fn size_and_time(path: &Path) -> Option<(u64, u128)> {
    let m = std::fs::metadata(path).ok()?;
    Some((m.len(), m.modified().ok()?.duration_since(std::time::UNIX_EPOCH).ok()?.as_nanos()))
}

impl CachedStep<'_> {
    /// The step's result: from the stamp when fresh, else from the step cache, else by `run`.
    /// `valid` checks metadata read back from either (recorded inputs unchanged); `run` does the
    /// work, writing the outputs, and returns the metadata. A step cache that cannot be written
    /// (a full disk, a read-only CI cache) costs another checkout a run, never this build.
    pub fn run<M: Serialize + DeserializeOwned>(&self, valid: impl Fn(&M) -> bool, run: impl FnOnce() -> Result<M>) -> Result<Done<M>> {
        if let Some(stamp) = read_stamp::<Stamp<M>>(&self.stamp) {
            if stamp.key == self.key {
                if let Some((hashes, moved)) = self.current_hashes(&stamp.outputs) {
                    if valid(&stamp.meta) {
                        if moved {
                            // Touched, not changed: record the new times, so the next run need not hash.
                            self.write(&stamp.meta, &hashes)?;
                        }
                        return Ok(Done { meta: stamp.meta, hashes, outcome: Outcome::Fresh });
                    }
                }
            }
        }
        let files: Vec<(&str, &Path)> = self.outputs.iter().map(|(n, p)| (*n, p.as_path())).collect();
        if let Some((cache, key)) = &self.shared {
            let fetched = cache
                .fetch(key, &files, |v| serde_json::from_value::<M>(v.clone()).is_ok_and(|m| valid(&m)))
                .and_then(|(v, hashes)| Some((serde_json::from_value(v).ok()?, hashes)));
            if let Some((meta, hashes)) = fetched {
                self.write(&meta, &hashes)?;
                return Ok(Done { meta, hashes, outcome: Outcome::Fetched });
            }
        }
        let meta = run()?;
        let hashes = self.record(&meta)?;
        if let Some((cache, key)) = &self.shared {
            let _ = cache.store(key, &files, &meta);
        }
        Ok(Done { meta, hashes, outcome: Outcome::Ran })
    }

    /// The outputs' hashes when each is still the file the stamp recorded, and whether any had
    /// to be hashed to tell (its size or time had moved).
    fn current_hashes(&self, recorded: &[Written]) -> Option<(Vec<String>, bool)> {
        let mut moved = false;
        let hashes = self
            .outputs
            .iter()
            .map(|(name, path)| {
                let Written(_, hash, len, time) = recorded.iter().find(|w| w.0 == *name)?;
                if size_and_time(path)? == (*len, *time) {
                    return Some(hash.clone());
                }
                moved = true;
                file_hash(path).filter(|h| h == hash)
            })
            .collect::<Option<Vec<String>>>()?;
        Some((hashes, moved))
    }

    /// Writes the stamp for outputs now in place; returns their hashes.
    fn record<M: Serialize>(&self, meta: &M) -> Result<Vec<String>> {
        let hashes: Vec<String> = self.outputs.iter().map(|(_, p)| file_hash(p).unwrap_or_default()).collect();
        self.write(meta, &hashes)?;
        Ok(hashes)
    }

    /// Writes the stamp for outputs of known `hashes`.
    fn write<M: Serialize>(&self, meta: &M, hashes: &[String]) -> Result<()> {
        let outputs = self.outputs.iter().zip(hashes).map(|((n, p), h)| Written::new(n, h, p)).collect();
        write_stamp(&self.stamp, &Stamp { key: self.key.clone(), outputs, meta })
    }
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    /// A tool that copies its input to its output and records the input's hash, counting runs.
    struct FakeTool {
        input: PathBuf,
        runs: AtomicUsize,
    }

    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    struct Meta {
        input_hash: String,
    }

    impl FakeTool {
        fn step<'a>(&self, work: &Path, cache: Option<&'a StepCache>) -> CachedStep<'a> {
            CachedStep {
                stamp: work.join("step.json"),
                key: "key-1".into(),
                shared: cache.map(|c| (c, "shared-key-1".to_string())),
                outputs: vec![("out", work.join("out.txt"))],
            }
        }

        fn run(&self, step: &CachedStep<'_>) -> Done<Meta> {
            let valid = |m: &Meta| file_hash(&self.input).as_deref() == Some(m.input_hash.as_str());
            step.run(valid, || {
                self.runs.fetch_add(1, Ordering::SeqCst);
                let text = fs::read(&self.input).unwrap();
                crate::cache::write_atomic(&step.outputs[0].1, &text)?;
                Ok(Meta { input_hash: file_hash(&self.input).unwrap() })
            })
            .unwrap()
        }
    }

    fn setup() -> (tempfile::TempDir, FakeTool) {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in.txt");
        fs::write(&input, "one").unwrap();
        (dir, FakeTool { input, runs: AtomicUsize::new(0) })
    }

    #[test]
    fn a_second_run_is_fresh_and_a_changed_input_or_key_or_output_runs_again() {
        let (dir, tool) = setup();
        let work = dir.path().join("work");
        let step = tool.step(&work, None);
        assert_eq!(tool.run(&step).outcome, Outcome::Ran);
        let again = tool.run(&step);
        assert_eq!((again.outcome, tool.runs.load(Ordering::SeqCst)), (Outcome::Fresh, 1));
        assert_eq!(again.hashes, vec![file_hash(&work.join("out.txt")).unwrap()]);

        fs::write(&tool.input, "two").unwrap();
        assert_eq!(tool.run(&step).outcome, Outcome::Ran, "a recorded input changed");
        assert_eq!(fs::read_to_string(work.join("out.txt")).unwrap(), "two");

        fs::write(work.join("out.txt"), "edited by hand").unwrap();
        assert_eq!(tool.run(&step).outcome, Outcome::Ran, "the output is not the file the step wrote");
        // The same size, a later time (set: two writes within one clock tick keep the time).
        let out = work.join("out.txt");
        fs::write(&out, "TWO").unwrap();
        later(&out);
        assert_eq!(tool.run(&step).outcome, Outcome::Ran, "an output of the same size edited");
        // Touched, the same content: fresh, and the stamp takes the new time.
        later(&out);
        assert_eq!(tool.run(&step).outcome, Outcome::Fresh, "a touched output");
        let stamp: Stamp<Meta> = read_stamp(&step.stamp).unwrap();
        assert_eq!(Some((stamp.outputs[0].2, stamp.outputs[0].3)), size_and_time(&out));

        let other_key = CachedStep { key: "key-2".into(), ..tool.step(&work, None) };
        assert_eq!(tool.run(&other_key).outcome, Outcome::Ran, "another key");
        assert_eq!(tool.runs.load(Ordering::SeqCst), 5);
    }

    /// Moves a file's modification time a second later.
    fn later(path: &Path) {
        let f = fs::File::options().write(true).open(path).unwrap();
        let t = f.metadata().unwrap().modified().unwrap();
        f.set_modified(t + std::time::Duration::from_secs(1)).unwrap();
    }

    #[test]
    fn another_target_dir_fetches_from_the_step_cache_and_a_damaged_entry_runs_again() {
        let (dir, tool) = setup();
        let cache = StepCache::new(dir.path().join("cache"));
        assert_eq!(tool.run(&tool.step(&dir.path().join("a"), Some(&cache))).outcome, Outcome::Ran);
        let b = tool.step(&dir.path().join("b"), Some(&cache));
        assert_eq!(tool.run(&b).outcome, Outcome::Fetched);
        assert_eq!(fs::read_to_string(dir.path().join("b/out.txt")).unwrap(), "one");
        assert_eq!(tool.run(&b).outcome, Outcome::Fresh, "a fetch writes the stamp");
        assert_eq!(tool.runs.load(Ordering::SeqCst), 1);

        // An entry whose recorded input no longer matches is not used.
        fs::write(&tool.input, "two").unwrap();
        assert_eq!(tool.run(&tool.step(&dir.path().join("c"), Some(&cache))).outcome, Outcome::Ran);

        // A damaged entry (a truncated output) is a miss, and the run replaces it.
        let entry = fs::read_dir(dir.path().join("cache/v1")).unwrap().flatten().next().unwrap().path();
        let entry = fs::read_dir(entry).unwrap().flatten().next().unwrap().path();
        fs::write(entry.join("out"), "t").unwrap();
        assert_eq!(tool.run(&tool.step(&dir.path().join("d"), Some(&cache))).outcome, Outcome::Ran);
        assert_eq!(fs::read_to_string(dir.path().join("d/out.txt")).unwrap(), "two");
        assert_eq!(tool.run(&tool.step(&dir.path().join("e"), Some(&cache))).outcome, Outcome::Fetched);
        assert_eq!(tool.runs.load(Ordering::SeqCst), 3);
    }

    #[test]
    fn concurrent_publishes_of_one_key_leave_one_whole_entry() {
        let (dir, tool) = setup();
        let cache = StepCache::new(dir.path().join("cache"));
        std::thread::scope(|s| {
            for i in 0..8 {
                let (tool, cache, dir) = (&tool, &cache, dir.path());
                s.spawn(move || tool.run(&tool.step(&dir.join(format!("t{i}")), Some(cache))));
            }
        });
        assert_eq!(cache.stats().entries, 1);
        let later = tool.run(&tool.step(&dir.path().join("later"), Some(&cache)));
        assert_eq!(later.outcome, Outcome::Fetched);
        assert_eq!(fs::read_to_string(dir.path().join("later/out.txt")).unwrap(), "one");
        for i in 0..8 {
            assert_eq!(fs::read_to_string(dir.path().join(format!("t{i}/out.txt"))).unwrap(), "one");
        }
    }
}
