//! `cargo ptx`: the command line over [`ptx_build`], the engine that build scripts use too.
//!
//! The engine compiles; this crate parses arguments, prints, and holds what only the command
//! line runs: [`scaffold`] (`new`/`init` and its templates), [`setup`] (installs the toolchain)
//! [`doctor`] (the report of every tool), [`package`] (a library's prebuilt kernel set), [`inspect`] (a kernel's PTX or SASS with its source
//! lines) and [`sanitize`] (programs run under compute-sanitizer, findings mapped to source).

pub mod cli;
pub mod doctor;
pub mod error;
pub mod inspect;
mod output;
pub mod package;
pub mod sanitize;
pub mod scaffold;
pub mod setup;
mod tools;

pub use error::{Error, Result};
