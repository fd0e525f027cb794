//! The per-arch jobs of a crate run on a pool of threads that shares cargo's jobserver.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::tools::slots::{self, Slots};

/// Runs `f(0..n)` on a pool of threads; results in index order. At most `jobs` tools run at
/// once (see [`slots`]: inside a build script that cargo gave a jobserver, each past the first
/// holds a jobserver token, so nested builds share cargo's `-j` instead of adding to it), on
/// one thread more than that: a job's own work before and after its tool runs while the
/// others' tools do.
pub(super) fn parallel<T: Send>(jobs: usize, n: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    // SAFETY: `from_env` takes over the file descriptors named in CARGO_MAKEFLAGS/MAKEFLAGS;
    // nothing else in this process uses them.
    let client = if std::env::var_os("CARGO_MAKEFLAGS").is_some() { unsafe { jobserver::Client::from_env() } } else { None };
    let slots = Slots::new(jobs, client);
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, T)>> = Mutex::new(Vec::with_capacity(n));
    std::thread::scope(|s| {
        for _ in 0..(jobs + 1).min(n) {
            let (next, results, f, slots) = (&next, &results, &f, &slots);
            s.spawn(move || {
                slots::within(slots, || loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    if i >= n {
                        break;
                    }
                    let r = f(i);
                    results.lock().unwrap_or_else(|e| e.into_inner()).push((i, r));
                })
            });
        }
    });
    let mut results = results.into_inner().unwrap_or_else(|e| e.into_inner());
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}

/// Sorts `items` heaviest source file first, by [`crate::text::weight::expanded_size`] (stable:
/// equal weights keep their order). The pool takes jobs in order, so the last job to start should
/// be a short one: candle's quantized.cu (178 KB, most of its PTX build) started seventh of eleven
/// in name order and ran alone at the end, 1.4x bindgen_cuda's build, whose split of the list
/// started it first.
///
/// The weights are remembered in `memo` by each file's content hash (`hash`): weighing candle's
/// 11 files and their headers was a quarter of a build script's rerun after one file changed
/// (0.11 s, built without optimisation). A header's edit leaves its includers' weights as they
/// were: they only order the jobs.
pub(super) fn heaviest_first<T, P: AsRef<Path>>(
    items: &mut [T],
    path: impl Fn(&T) -> P,
    memo: &Path,
    hash: impl Fn(&Path) -> Option<String>,
) {
    let known: BTreeMap<String, u64> = crate::cache::read_stamp(memo).unwrap_or_default();
    let mut weights: HashMap<PathBuf, (Option<String>, u64)> = Default::default();
    items.sort_by_cached_key(|item| {
        let p = path(item).as_ref().to_path_buf();
        let (_, w) = *weights.entry(p.clone()).or_insert_with(|| {
            let h = hash(&p);
            let w = h.as_ref().and_then(|h| known.get(h).copied()).unwrap_or_else(|| crate::text::weight::expanded_size(&p));
            (h, w)
        });
        std::cmp::Reverse(w)
    });
    let now: BTreeMap<String, u64> = weights.into_values().filter_map(|(h, w)| Some((h?, w))).collect();
    if now != known {
        // Only an order is lost when it cannot be written.
        let _ = crate::cache::write_stamp(memo, &now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_heaviest_file_goes_first_and_equal_weights_keep_their_order() {
        let dir = tempfile::tempdir().unwrap();
        for (name, size) in [("a.cu", 10), ("b.cu", 300), ("c.cu", 10), ("d.cu", 20)] {
            std::fs::write(dir.path().join(name), vec![name.as_bytes()[0]; size]).unwrap();
        }
        let mut jobs: Vec<(u32, std::path::PathBuf)> =
            [(80, "a.cu"), (90, "a.cu"), (80, "b.cu"), (80, "c.cu"), (80, "d.cu"), (80, "gone.cu")]
                .map(|(a, f)| (a, dir.path().join(f)))
                .to_vec();
        let memo = dir.path().join("weights.json");
        let hash = |p: &Path| crate::cache::file_hash(p);
        heaviest_first(&mut jobs, |j| j.1.clone(), &memo, hash);
        let order = |jobs: &[(u32, PathBuf)]| -> Vec<(u32, String)> {
            jobs.iter().map(|(a, p)| (*a, p.file_name().unwrap().to_string_lossy().into_owned())).collect()
        };
        let expected = [(80, "b.cu"), (80, "d.cu"), (80, "a.cu"), (90, "a.cu"), (80, "c.cu"), (80, "gone.cu")];
        assert_eq!(order(&jobs), expected.map(|(a, f)| (a, f.to_string())));

        // Remembered by content: a file whose content a known weight belongs to takes it unread
        // (a remembered weight made up here), and an edited one is weighed again.
        let mut known: BTreeMap<String, u64> = crate::cache::read_stamp(&memo).unwrap();
        assert_eq!(known.len(), 4, "one weight per file that exists");
        known.insert(hash(&dir.path().join("c.cu")).unwrap(), 1000);
        crate::cache::write_stamp(&memo, &known).unwrap();
        std::fs::write(dir.path().join("b.cu"), b"x").unwrap();
        heaviest_first(&mut jobs, |j| j.1.clone(), &memo, hash);
        let expected = [(80, "c.cu"), (80, "d.cu"), (80, "a.cu"), (90, "a.cu"), (80, "b.cu"), (80, "gone.cu")];
        assert_eq!(order(&jobs), expected.map(|(a, f)| (a, f.to_string())));
    }
}
