//! Atomic writes, private scratch folders, what killed builds leave behind, and stamps (small
//! JSON records of what a step produced).
//!
//! Outputs are written to a temporary file in the same folder and renamed into place, so two
//! builds at once never see half a file. The temporary files are made here rather than with
//! `tempfile`: ptx-build is a build-dependency of every host crate, and each package in its tree
//! costs a no-op `cargo build` of that crate about a millisecond (resolution and fingerprints;
//! BENCHMARKS.md).

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

use serde::{de::DeserializeOwned, Serialize};

use crate::error::{Error, Result};

/// Creates `dir` and its parents.
pub fn create_dir_all(dir: &Path) -> Result<()> {
    fs::create_dir_all(dir).map_err(|e| Error::io("create directory", dir, e))
}

/// Scratch files and folders this process made and has not yet renamed into place or removed:
/// what a front end ended by a signal removes on its way out ([`remove_scratch`]).
static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn live(path: &Path) {
    LIVE.lock().unwrap_or_else(|e| e.into_inner()).push(path.to_path_buf());
}

fn settled(path: &Path) {
    LIVE.lock().unwrap_or_else(|e| e.into_inner()).retain(|p| p != path);
}

/// Removes every scratch file and folder this process still has: for a front end's SIGINT
/// handler, after its tools have stopped, so that an interrupted build leaves none behind.
pub fn remove_scratch() {
    for p in std::mem::take(&mut *LIVE.lock().unwrap_or_else(|e| e.into_inner())) {
        let _ = if p.is_dir() { fs::remove_dir_all(&p) } else { fs::remove_file(&p) };
    }
}

/// Writes `contents` to `path` through a temporary file in the same folder and a rename.
pub fn write_atomic(path: &Path, contents: &[u8]) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    create_dir_all(dir)?;
    let tmp = unique_sibling(path);
    live(&tmp);
    let written = fs::OpenOptions::new().write(true).create_new(true).open(&tmp).and_then(|mut f| f.write_all(contents));
    let result = written.and_then(|()| fs::rename(&tmp, path));
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    settled(&tmp);
    result.map_err(|e| Error::io("write", path, e))
}

/// `.tmp-<pid>-<n>-<name>` next to `path`: unique among the threads and processes writing there.
fn unique_sibling(path: &Path) -> PathBuf {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    path.with_file_name(format!(".tmp-{}-{}-{name}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed)))
}

/// Moves a finished file (written by a tool into a scratch name) to its final place.
pub fn rename_into_place(from: &Path, to: &Path) -> Result<()> {
    let moved = fs::rename(from, to).map_err(|e| Error::io("move into place", to, e));
    settled(from);
    moved
}

/// A temporary output path next to `path`, for tools that write files themselves; unique among
/// the threads and processes writing there, and named so that [`remove_stale`] finds it.
pub fn scratch_path(path: &Path) -> PathBuf {
    let p = unique_sibling(path);
    live(&p);
    p
}

/// A private folder for one step's intermediate files (`.tmp-<pid>-<n>` inside `parent`),
/// removed when dropped. Steps never share intermediate names: two processes building the same
/// package into one target dir each link in their own folder and publish by rename.
pub struct ScratchDir(PathBuf);

impl ScratchDir {
    /// A new folder inside `parent` (created with its parents).
    pub fn new(parent: &Path) -> Result<ScratchDir> {
        let dir = unique_sibling(&parent.join("step"));
        live(&dir);
        create_dir_all(&dir)?;
        Ok(ScratchDir(dir))
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
        settled(&self.0);
    }
}

/// Removes the `.tmp-<pid>-*` files and folders in `dir` that a process left behind when it was
/// killed: those of a process that no longer runs (on Linux) or, elsewhere, older than a day.
/// Entries of live processes, this one's included, are kept.
pub fn remove_stale(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) =
            name.to_str().and_then(|n| n.strip_prefix(".tmp-")).and_then(|r| r.split('-').next()).and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == std::process::id() || !is_stale(pid, &entry) {
            continue;
        }
        let path = entry.path();
        let _ = if entry.file_type().is_ok_and(|t| t.is_dir()) { fs::remove_dir_all(&path) } else { fs::remove_file(&path) };
    }
}

fn is_stale(pid: u32, entry: &fs::DirEntry) -> bool {
    if cfg!(target_os = "linux") {
        return !Path::new("/proc").join(pid.to_string()).exists();
    }
    const DAY: std::time::Duration = std::time::Duration::from_secs(24 * 3600);
    entry.metadata().and_then(|m| m.modified()).ok().and_then(|t| t.elapsed().ok()).is_some_and(|age| age > DAY)
}

/// A small JSON record of what a cached step produced and the key it was made under.
pub fn read_stamp<T: DeserializeOwned>(path: &Path) -> Option<T> {
    let text = fs::read(path).ok()?;
    serde_json::from_slice(&text).ok()
}

/// Writes a stamp atomically.
pub fn write_stamp<T: Serialize>(path: &Path, stamp: &T) -> Result<()> {
    let json = serde_json::to_vec_pretty(stamp).map_err(|e| Error::io("encode", path, std::io::Error::other(e)))?;
    write_atomic(path, &json)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_whole_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sub dir/é.txt");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"two");
        let leftovers: Vec<_> = fs::read_dir(p.parent().unwrap()).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temporary file is left behind");
    }

    #[test]
    fn a_failed_write_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("taken");
        fs::create_dir(target.join("x").parent().unwrap()).unwrap();
        fs::write(target.join("x"), b"a folder cannot be replaced by a file").unwrap();
        let err = write_atomic(&target, b"data").unwrap_err().to_string();
        assert!(err.contains("taken"), "{err}");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1, "only the folder that was there");
    }

    #[test]
    fn scratch_folders_are_private_and_removed() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (ScratchDir::new(dir.path()).unwrap(), ScratchDir::new(dir.path()).unwrap());
        assert_ne!(a.path(), b.path());
        fs::write(a.path().join("linked.bc"), b"x").unwrap();
        let kept = a.path().to_path_buf();
        drop(a);
        assert!(!kept.exists());
    }

    #[test]
    fn leftovers_of_dead_processes_are_removed_and_live_ones_kept() {
        let dir = tempfile::tempdir().unwrap();
        // pid 4194304 is above Linux's pid_max limit, so no process has it.
        let dead = dir.path().join(".tmp-4194304-0-saxpy.ptx");
        let dead_dir = dir.path().join(".tmp-4194304-1-step");
        let live = scratch_path(&dir.path().join("saxpy.ptx"));
        let other = dir.path().join("saxpy.ptx");
        for f in [&dead, &live, &other] {
            fs::write(f, b"x").unwrap();
        }
        fs::create_dir(&dead_dir).unwrap();
        fs::write(dead_dir.join("opt.bc"), b"x").unwrap();
        remove_stale(dir.path());
        if cfg!(target_os = "linux") {
            assert!(!dead.exists() && !dead_dir.exists(), "a dead process's files go");
        }
        assert!(live.exists() && other.exists(), "this process's scratch and real artifacts stay");
    }
}
