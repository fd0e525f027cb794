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
//! Inside, one folder a stage, in the order a build runs them (`engine` drives them):
//!
//! | stage | what it does | reads | writes |
//! |---|---|---|---|
//! | `project` | finds kernel crates (`cargo metadata`) and resolves their [`Options`] | `Cargo.toml`s | `KernelCrate`s |
//! | `tools` | finds and versions rustc, llvm-tools, nvcc, ptxas, libdevice; starts every process | the environment | `Rust`, `Cuda` |
//! | `arch` | parses and checks archs | option values | [`Arch`]s |
//! | `inline_ptx` | checks `asm!`/`asm()` against NVIDIA's rules before any compiler | sources | diagnostics |
//! | `rust` | nested cargo: a kernel crate to one LLVM bitcode module | a crate | `RustKernels` |
//! | `cuda` | nvcc: a .cu file to PTX for one arch | a .cu file | PTX, the files it read |
//! | `backend` | bitcode + libdevice to PTX per arch (`link`), PTX to cubins (`ptxas`), reading PTX (`ptx`) | bitcode, PTX | PTX, cubins, resources |
//! | `embed` | for a [`Builder`]: signatures, binding to PTX entries, host types, the generated module | sources, PTX | `kernels.rs` |
//!
//! Under all of them: `cache` (every step is a `CachedStep`: key -> stamp -> the machine's step
//! cache -> run -> store), `options`, `report` (events for the front end), `diag`, `error` and
//! `text` (the C++ lexer, make-style dep files, line markers). `build_script` is the Builder
//! front end; `cargo-ptx` is the other, reaching what it needs beyond this API through the
//! `internals` feature. Modules import each other only down this list (a unit test checks
//! that no two import each other in a circle).

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
#[cfg(test)]
mod layout;
pub mod options;
mod prebuilt;
mod project;
mod report;
mod rust;
mod text;
mod tools;

pub use arch::{Arch, ArchRequest};
pub use build_script::{Builder, Generated};
pub use diag::{Diagnostic, Level, Origin};
pub use engine::{BuildOptions, BuildOutput, CheckOutput, CrateOutput, StaticLib};
pub use error::{Error, Result};
pub use options::{Options, Profile, UntypedKernels};
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
    /// nvcc, and what it needs beside itself: the host C++ compiler it accepts, and for a static
    /// library the archiver and the CUDA runtime.
    pub mod cuda {
        pub use crate::cuda::host_compiler::{host_compiler, HostCompiler};
        pub use crate::cuda::static_lib::{archiver, runtime_dir};
        pub use crate::cuda::Nvcc;
    }
    /// Text entry points of every parser that reads outside input, for the fuzz targets.
    pub mod fuzzing {
        pub use crate::fuzzing::*;
    }
    /// The inline-PTX checker (`asm()` in .cu files, `asm!` in Rust kernels).
    pub mod inline_ptx {
        pub use crate::inline_ptx::*;
    }
    /// Reading PTX: entries and the `.file`/`.loc` line table with its inline chains.
    pub mod ptx {
        pub use crate::backend::ptx::{Module, SourcePos};
    }
    /// Kernel crates and their resolved options.
    pub mod prebuilt {
        pub use crate::prebuilt::{
            check_value, set_dir, write_value, ArtifactFile, CrateSet, Manifest, SourceFile, FORMAT, MANIFEST, WRITE_VAR,
        };
    }
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
