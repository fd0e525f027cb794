//! Caches: content keys, atomic writes and stamps (`fs`), and the machine-wide step cache
//! (`steps`).

pub mod fs;
pub mod steps;

pub use fs::*;
