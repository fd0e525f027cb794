//! Content hashes, fingerprints and atomic writes.
//!
//! Every cached step is keyed by the content of its inputs, the versions of the tools and the
//! flags; never by modification times alone. Outputs are written to a temporary file in the same
//! folder and renamed into place, so two builds at once never see half a file.

use std::fmt::Write as _;
use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde::{de::DeserializeOwned, Serialize};
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

/// Builds a content key from strings, bytes and files, in order.
#[derive(Clone, Default)]
pub struct Key(Sha256);

impl Key {
    pub fn new(domain: &str) -> Self {
        let mut key = Key(Sha256::new());
        key.str(domain);
        key
    }

    /// Adds a string, length-prefixed so that ("ab","c") and ("a","bc") differ.
    pub fn str(&mut self, s: &str) -> &mut Self {
        self.bytes(s.as_bytes())
    }

    pub fn bytes(&mut self, b: &[u8]) -> &mut Self {
        self.0.update((b.len() as u64).to_le_bytes());
        self.0.update(b);
        self
    }

    pub fn finish(&self) -> String {
        hex(&self.0.clone().finalize())
    }
}

/// The SHA-256 of a file's content, or `None` when it cannot be read.
pub fn file_hash(path: &Path) -> Option<String> {
    let content = fs::read(path).ok()?;
    Some(hex(&Sha256::digest(&content)))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// Creates `dir` and its parents.
pub fn create_dir_all(dir: &Path) -> Result<()> {
    fs::create_dir_all(dir).map_err(|e| Error::io("create directory", dir, e))
}

/// Writes `contents` to `path` through a temporary file in the same folder and a rename.
pub fn write_atomic(path: &Path, contents: &[u8]) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    create_dir_all(dir)?;
    let mut tmp = tempfile::Builder::new().prefix(".tmp-").tempfile_in(dir).map_err(|e| Error::io("create a temporary file in", dir, e))?;
    tmp.write_all(contents).map_err(|e| Error::io("write", tmp.path().to_path_buf(), e))?;
    tmp.persist(path).map_err(|e| Error::io("write", path, e.error))?;
    Ok(())
}

/// Moves a finished file (written by a tool into a scratch name) to its final place.
pub fn rename_into_place(from: &Path, to: &Path) -> Result<()> {
    fs::rename(from, to).map_err(|e| Error::io("move into place", to, e))
}

/// A temporary output path next to `path`, for tools that write files themselves.
pub fn scratch_path(path: &Path) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    path.with_file_name(format!(".tmp-{}-{name}", std::process::id()))
}

/// A small JSON record of what a cached step produced and the key it was made under.
pub fn read_stamp<T: DeserializeOwned>(path: &Path) -> Option<T> {
    let text = fs::read(path).ok()?;
    serde_json::from_slice(&text).ok()
}

pub fn write_stamp<T: Serialize>(path: &Path, stamp: &T) -> Result<()> {
    let json = serde_json::to_vec_pretty(stamp).map_err(|e| Error::io("encode", path, std::io::Error::other(e)))?;
    write_atomic(path, &json)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_depend_on_boundaries_and_content() {
        let a = Key::new("t").str("ab").str("c").finish();
        let b = Key::new("t").str("a").str("bc").finish();
        assert_ne!(a, b);
        assert_eq!(a, Key::new("t").str("ab").str("c").finish());
    }

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
}
