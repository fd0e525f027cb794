//! `cargo ptx`: the command line over [`ptx_build`], the engine that build scripts use too.
//!
//! The engine compiles; this crate parses arguments, prints, and holds what only the command
//! line runs: [`scaffold`] (`new`/`init` and its templates), [`setup`] (installs the toolchain)
//! and [`doctor`] (the report of every tool).

pub mod cli;
pub mod doctor;
pub mod error;
mod output;
pub mod scaffold;
pub mod setup;

pub use error::{Error, Result};
