//! The machine-wide step cache (the `shared-cache` option, `~/.cache/cargo-ptx/steps` by
//! default): outputs of the link, ptxas and nvcc steps kept outside the target dir, keyed by
//! their inputs' content, tool versions and flags (never by a checkout's paths), so another
//! checkout, a fresh target dir or a CI job that restored the folder starts no tool for
//! unchanged kernels. [`super::CachedStep`] consults it after the target dir's own stamp.
//!
//! An entry is a folder `v1/<key[..2]>/<key>/` holding the output files and `entry.json` (each
//! file's hash and length, and the step's metadata). It is written whole in a private scratch
//! folder and published with one rename, so readers never see half an entry and no lock is held
//! across a compile. A fetch checks every file against `entry.json`: a corrupt or truncated entry
//! is a miss (and is removed), never an input. Entries are evicted oldest-used first once the
//! folder passes its size limit.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::fs::{create_dir_all, read_stamp, remove_stale, write_atomic, write_stamp, ScratchDir};
use super::hash::bytes_hash;
use crate::error::{Error, Result};

/// Default size limit: 5 GiB (`CARGO_PTX_CACHE_SIZE` in MiB changes it).
const DEFAULT_LIMIT: u64 = 5 << 30;

/// A step cache folder.
#[derive(Debug)]
pub struct StepCache {
    root: PathBuf,
    /// Whether this process stored an entry (then the folder may need an eviction).
    stored: AtomicBool,
}

#[derive(Serialize, Deserialize)]
struct Entry {
    files: Vec<EntryFile>,
    meta: Value,
}

#[derive(Serialize, Deserialize)]
struct EntryFile {
    name: String,
    hash: String,
    len: u64,
}

/// What `cargo ptx cache --stats` prints.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Stats {
    /// The folder.
    pub root: PathBuf,
    /// Entries.
    pub entries: u64,
    /// Their total size in bytes.
    pub bytes: u64,
    /// The size past which the oldest-used entries are evicted.
    pub limit: u64,
}

impl StepCache {
    /// The cache in `root` (created on the first store).
    pub fn new(root: impl Into<PathBuf>) -> StepCache {
        StepCache { root: root.into(), stored: AtomicBool::new(false) }
    }

    /// Its folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn entries_dir(&self) -> PathBuf {
        self.root.join("v1")
    }

    fn entry_dir(&self, key: &str) -> PathBuf {
        self.entries_dir().join(&key[..2.min(key.len())]).join(key)
    }

    /// The metadata of entry `key` when it is whole and `accept` takes it, with the content hash
    /// of each output checked on the way (in `outputs`' order: the caller's stamp needs them,
    /// and hashing is most of a fetch in a build script cargo compiles unoptimised); then copies
    /// its files to their destinations (`(name, path)`). A miss is `None`, never an error: the
    /// caller runs the step.
    pub fn fetch(&self, key: &str, outputs: &[(&str, &Path)], accept: impl FnOnce(&Value) -> bool) -> Option<(Value, Vec<String>)> {
        let dir = self.entry_dir(key);
        let entry: Entry = read_stamp(&dir.join("entry.json"))?;
        if !accept(&entry.meta) {
            return None;
        }
        let mut contents = Vec::with_capacity(outputs.len());
        for (name, dest) in outputs {
            let want = entry.files.iter().find(|f| f.name == *name)?;
            let bytes = fs::read(dir.join(name)).ok();
            match bytes {
                Some(b) if b.len() as u64 == want.len && bytes_hash(&b) == want.hash => contents.push((dest, b, want.hash.clone())),
                _ => {
                    // Corrupt or truncated: drop it so the next store replaces it.
                    self.remove(&dir);
                    return None;
                }
            }
        }
        let mut hashes = Vec::with_capacity(contents.len());
        for (dest, bytes, hash) in contents {
            write_atomic(dest, &bytes).ok()?;
            hashes.push(hash);
        }
        // The entry's use time, for eviction.
        let _ = fs::File::options().append(true).open(dir.join("entry.json")).and_then(|f| f.set_modified(SystemTime::now()));
        Some((entry.meta, hashes))
    }

    /// Publishes `files` (`(name, path)`) and `meta` as entry `key`, replacing an entry of that
    /// key (a step whose recorded inputs changed).
    pub fn store(&self, key: &str, files: &[(&str, &Path)], meta: &impl Serialize) -> Result<()> {
        let tmp_root = self.root.join("tmp");
        create_dir_all(&tmp_root)?;
        remove_stale(&tmp_root);
        let scratch = ScratchDir::new(&tmp_root)?;
        let mut entry = Entry { files: Vec::new(), meta: serde_json::to_value(meta).unwrap_or(Value::Null) };
        for (name, path) in files {
            let bytes = fs::read(path).map_err(|e| Error::io("read", path, e))?;
            fs::write(scratch.path().join(name), &bytes).map_err(|e| Error::io("write", scratch.path().join(name), e))?;
            entry.files.push(EntryFile { name: name.to_string(), hash: bytes_hash(&bytes), len: bytes.len() as u64 });
        }
        write_stamp(&scratch.path().join("entry.json"), &entry)?;
        let dest = self.entry_dir(key);
        if let Some(parent) = dest.parent() {
            create_dir_all(parent)?;
        }
        if fs::rename(scratch.path(), &dest).is_err() {
            // Taken: another process published this key first (same content), or an entry with
            // other recorded inputs is there. Move that one aside, then publish ours.
            let aside = ScratchDir::new(&tmp_root)?;
            let old = aside.path().join("old");
            if fs::rename(&dest, &old).is_ok() {
                let _ = fs::rename(scratch.path(), &dest);
            }
        }
        self.stored.store(true, Ordering::Relaxed);
        Ok(())
    }

    fn remove(&self, dir: &Path) {
        let tmp_root = self.root.join("tmp");
        if let Ok(aside) = ScratchDir::new(&tmp_root) {
            let _ = fs::rename(dir, aside.path().join("bad"));
        }
    }

    /// Entries and their size.
    pub fn stats(&self) -> Stats {
        let mut stats = Stats { root: self.root.clone(), limit: limit(), ..Stats::default() };
        for (_, bytes, _) in self.entries() {
            stats.entries += 1;
            stats.bytes += bytes;
        }
        stats
    }

    /// `(folder, bytes, last use)` of every entry.
    fn entries(&self) -> Vec<(PathBuf, u64, SystemTime)> {
        let mut out = Vec::new();
        let Ok(shards) = fs::read_dir(self.entries_dir()) else { return out };
        for shard in shards.flatten() {
            let Ok(entries) = fs::read_dir(shard.path()) else { continue };
            for e in entries.flatten() {
                let dir = e.path();
                let used = fs::metadata(dir.join("entry.json")).and_then(|m| m.modified()).unwrap_or(SystemTime::UNIX_EPOCH);
                let bytes =
                    fs::read_dir(&dir).map(|files| files.flatten().filter_map(|f| f.metadata().ok()).map(|m| m.len()).sum()).unwrap_or(0);
                out.push((dir, bytes, used));
            }
        }
        out
    }

    /// Evicts the oldest-used entries until the cache is under 90% of its limit, when it is over.
    pub fn evict(&self) {
        self.evict_to(limit());
    }

    /// [`StepCache::evict`], when this process stored anything: a build that only read the
    /// cache leaves it as it was.
    pub fn evict_if_stored(&self) {
        if self.stored.load(Ordering::Relaxed) {
            self.evict();
        }
    }

    fn evict_to(&self, limit: u64) {
        let mut entries = self.entries();
        let mut total: u64 = entries.iter().map(|e| e.1).sum();
        if total <= limit {
            return;
        }
        entries.sort_by_key(|e| e.2);
        for (dir, bytes, _) in entries {
            if total <= limit / 10 * 9 {
                break;
            }
            self.remove(&dir);
            total = total.saturating_sub(bytes);
        }
    }

    /// Removes every entry.
    pub fn clear(&self) -> Result<()> {
        for dir in [self.entries_dir(), self.root.join("tmp"), self.root.join("sysroot")] {
            match fs::remove_dir_all(&dir) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(Error::io("remove", dir, e)),
            }
        }
        Ok(())
    }
}

/// The size limit: `CARGO_PTX_CACHE_SIZE` (MiB) or 5 GiB.
fn limit() -> u64 {
    std::env::var("CARGO_PTX_CACHE_SIZE").ok().and_then(|v| v.trim().parse::<u64>().ok()).map(|mib| mib << 20).unwrap_or(DEFAULT_LIMIT)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup() -> (tempfile::TempDir, StepCache, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let cache = StepCache::new(dir.path().join("cache"));
        let src = dir.path().join("k.ptx");
        fs::write(&src, b".version 8.0\n").unwrap();
        (dir, cache, src)
    }

    #[test]
    fn a_stored_entry_is_fetched_with_its_metadata() {
        let (dir, cache, src) = setup();
        cache.store("abcd", &[("ptx", &src)], &serde_json::json!({"kernels": ["k"]})).unwrap();
        let dest = dir.path().join("out/k.ptx");
        let (meta, hashes) = cache.fetch("abcd", &[("ptx", &dest)], |_| true).unwrap();
        assert_eq!(meta["kernels"][0], "k");
        assert_eq!(hashes, [crate::cache::file_hash(&dest).unwrap()], "the hash of the file written");
        assert_eq!(fs::read(&dest).unwrap(), b".version 8.0\n");
        assert!(cache.fetch("abce", &[("ptx", &dest)], |_| true).is_none(), "another key misses");
        assert!(cache.fetch("abcd", &[("ptx", &dest)], |_| false).is_none(), "a rejected entry misses");
        assert_eq!(cache.stats().entries, 1);
    }

    #[test]
    fn a_corrupt_or_truncated_entry_is_a_miss_and_is_dropped() {
        for damage in [b".versioN 8.0\n".to_vec(), b".vers".to_vec()] {
            let (dir, cache, src) = setup();
            cache.store("abcd", &[("ptx", &src)], &()).unwrap();
            fs::write(cache.entry_dir("abcd").join("ptx"), &damage).unwrap();
            let dest = dir.path().join("k.out.ptx");
            assert!(cache.fetch("abcd", &[("ptx", &dest)], |_| true).is_none());
            assert!(!dest.exists(), "nothing is copied out of a bad entry");
            assert_eq!(cache.stats().entries, 0, "the bad entry is gone");
            cache.store("abcd", &[("ptx", &src)], &()).unwrap();
            assert!(cache.fetch("abcd", &[("ptx", &dest)], |_| true).is_some(), "and can be stored again");
        }
    }

    #[test]
    fn a_second_store_of_a_key_replaces_the_entry() {
        let (dir, cache, src) = setup();
        cache.store("abcd", &[("ptx", &src)], &1).unwrap();
        cache.store("abcd", &[("ptx", &src)], &2).unwrap();
        let dest = dir.path().join("o.ptx");
        assert_eq!(cache.fetch("abcd", &[("ptx", &dest)], |_| true).map(|f| f.0), Some(serde_json::json!(2)));
        assert_eq!(cache.stats().entries, 1);
    }

    #[test]
    fn eviction_removes_the_oldest_used_entries_first() {
        let (dir, cache, src) = setup();
        for key in ["aa01", "aa02", "aa03"] {
            cache.store(key, &[("ptx", &src)], &()).unwrap();
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        // Use the oldest, so the middle one is now the least recently used.
        assert!(cache.fetch("aa01", &[("ptx", &dir.path().join("o"))], |_| true).is_some());
        let per_entry = cache.stats().bytes / 3;
        // Room for two and a half: down to 90% of it leaves two, the recently used ones.
        cache.evict_to(per_entry * 5 / 2);
        let left: Vec<String> = cache.entries().iter().map(|e| e.0.file_name().unwrap().to_string_lossy().into_owned()).collect();
        assert_eq!(left.len(), 2, "{left:?}");
        assert!(!left.contains(&"aa02".to_string()), "the least recently used went first: {left:?}");
        cache.clear().unwrap();
        assert_eq!(cache.stats().entries, 0);
    }
}
