//! Build GPU kernels written in Rust and CUDA C++ into PTX and cubins from a build script, and
//! embed them into the host crate with one typed launch method per kernel.
//!
//! ```no_run
//! // build.rs of a host crate with `ptx-build` as a build-dependency and `ptx-runtime` as a dependency
//! fn main() -> Result<(), ptx_build::Error> {
//!     ptx_build::Builder::new()
//!         .kernel_crate("../kernels") // a `no_std` crate with `[package.metadata.ptx]`
//!         .cuda("cuda/*.cu")          // CUDA C++ files of the host crate itself
//!         .arch("sm_80,sm_90")
//!         .build()?;
//!     Ok(())
//! }
//! ```
//!
//! The host crate then writes `mod kernels { ptx_runtime::include_kernels!(); }` and launches
//! `kernels::Kernels::load(&ctx)?.saxpy(&stream, cfg, n, a, &x, &mut y)`.
//!
//! Every kernel option ([`Options`]) has the same name and default as a [`Builder`] method, a
//! `[package.metadata.ptx]` key and a `cargo ptx build` flag. `cargo ptx` (the `cargo-ptx` crate)
//! runs the same engine through [`BuildOptions`].
//!
//! Inside, one stage a module: `toolchain` (find and version every tool) -> `config` (kernel
//! crates and their options) -> `arch` -> `rust` (nested cargo to LLVM bitcode) / `cuda` (nvcc)
//! -> `link` (bitcode + libdevice -> PTX) -> `ptxas` (cubins, resource usage) -> `ptx` (read
//! PTX) -> `signature` (kernel signatures) -> `codegen` (the embedded module), with `cache`
//! (content keys, atomic writes) under all of them. Shared by several stages: `bitcode`
//! (reading and linking crate bitcode, for `rust` and `link`), `depfile` (rustc's and nvcc's
//! make-style dep files), `c_lex` (the C++ lexer of `signature` and `inline_ptx`) and `process`
//! (the one place a tool is started, with the command line in its errors).

#![warn(missing_docs)]
// Without `internals`, what only cargo-ptx calls looks unused; the workspace build, where
// cargo-ptx turns the feature on, still reports dead code.
#![cfg_attr(not(feature = "internals"), allow(dead_code, unused_imports))]

pub mod arch;
mod backend;
mod build_script;
mod cache;
mod cuda;
mod diag;
mod embed;
mod engine;
mod error;
#[cfg(any(test, feature = "internals"))]
mod fuzzing;
mod inline_ptx;
pub mod options;
mod project;
mod report;
mod rust;
mod text;
mod tools;

pub use arch::{Arch, ArchRequest};
pub use build_script::{Builder, Generated};
pub use diag::{Diagnostic, Level, Origin};
pub use engine::{BuildOptions, BuildOutput, CheckOutput, CrateOutput};
pub use error::{Error, Result};
pub use options::{Options, Profile};
pub use report::{Artifact, ArtifactKind, Event, KernelInfo, Reporter, Silent};
pub use rust::ManifestFlags;

/// The engine's parts that `cargo-ptx` uses beyond the build-script API (and this repository's
/// end-to-end tests and fuzz targets), behind the `internals` feature. Not a stable API: it
/// changes with any release, so whoever enables the feature depends on an exact version
/// (`ptx-build = { version = "=0.1.0", features = ["internals"] }`), as cargo-ptx does: a
/// newer ptx-build can then never break `cargo install cargo-ptx`.
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod internals {
    /// Content hashes, atomic writes, stale scratch files and the machine-wide step cache.
    pub mod cache {
        pub use crate::cache::*;
    }
    /// Text entry points of every parser that reads outside input, for the fuzz targets.
    pub mod fuzzing {
        pub use crate::fuzzing::*;
    }
    /// The inline-PTX checker (`asm()` in .cu files, `asm!` in Rust kernels).
    pub mod inline_ptx {
        pub use crate::inline_ptx::*;
    }
    /// Kernel crates and their resolved options.
    pub mod project {
        pub use crate::project::*;
    }
    /// A Rust crate's source files as rustc finds them.
    pub mod rust_modules {
        pub use crate::rust::modules::*;
    }
    /// Finding and versioning tools, the machine's GPUs, and starting processes.
    pub mod tools {
        pub use crate::tools::*;
    }
}
