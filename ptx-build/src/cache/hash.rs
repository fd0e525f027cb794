//! Content hashes and keys: every cached step is keyed by the content of its inputs, the
//! versions of the tools and the flags, never by modification times alone.
//!
//! xxh3-128 rather than `sha2`: a cache key needs no cryptographic hash, 128 bits put an
//! accidental collision out of reach, and xxhash-rust is one small package in the
//! build-dependency tree of every host crate.

use std::fmt::Write as _;
use std::fs;
use std::path::Path;

use xxhash_rust::xxh3::{xxh3_128, Xxh3};

/// Builds a content key from strings, bytes and files, in order.
#[derive(Clone)]
pub struct Key(Xxh3);

impl Key {
    /// A key for steps of one kind (`domain`, with a version to bump when the step changes).
    pub fn new(domain: &str) -> Self {
        let mut key = Key(Xxh3::new());
        key.str(domain);
        key
    }

    /// Adds a string, length-prefixed so that ("ab","c") and ("a","bc") differ.
    pub fn str(&mut self, s: &str) -> &mut Self {
        self.bytes(s.as_bytes())
    }

    /// Adds bytes, length-prefixed.
    pub fn bytes(&mut self, b: &[u8]) -> &mut Self {
        self.0.update(&(b.len() as u64).to_le_bytes());
        self.0.update(b);
        self
    }

    /// The key, as 32 hex digits.
    pub fn finish(&self) -> String {
        hex(&self.0.digest128().to_be_bytes())
    }
}

/// The hash of a file's content, or `None` when it cannot be read.
pub fn file_hash(path: &Path) -> Option<String> {
    let content = fs::read(path).ok()?;
    Some(hex(&xxh3_128(&content).to_be_bytes()))
}

/// The hash of some bytes, as [`file_hash`] spells it.
pub fn bytes_hash(bytes: &[u8]) -> String {
    hex(&xxh3_128(bytes).to_be_bytes())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
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
    fn file_hashes_follow_content() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        fs::write(&a, b"same").unwrap();
        fs::write(&b, b"same").unwrap();
        assert_eq!(file_hash(&a), file_hash(&b));
        fs::write(&b, b"other").unwrap();
        assert_ne!(file_hash(&a), file_hash(&b));
        assert_eq!(file_hash(&dir.path().join("missing")), None);
    }
}
