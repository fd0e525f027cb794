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

pub mod arch;
mod arch_errors;
mod bitcode;
mod builder;
mod c_lex;
#[doc(hidden)]
pub mod cache;
mod cargo_json;
mod codegen;
#[doc(hidden)]
pub mod config;
mod cuda;
mod cxx;
mod depfile;
mod diag;
mod engine;
mod error;
#[doc(hidden)]
pub mod fuzzing;
mod host_types;
#[doc(hidden)]
pub mod inline_ptx;
mod kernel_ir;
mod link;
pub mod options;
#[doc(hidden)]
pub mod process;
mod ptx;
mod ptxas;
mod report;
mod rust;
pub mod shared_cache;
mod shared_ir;
#[doc(hidden)]
pub mod signature;
mod sysroot;
pub mod toolchain;

pub use arch::{Arch, ArchRequest};
pub use builder::{Builder, Generated};
pub use diag::{Diagnostic, Level, Origin};
pub use engine::{BuildOptions, BuildOutput, CheckOutput, CrateOutput, ManifestFlags};
pub use error::{Error, Result};
pub use options::{Options, Profile};
pub use report::{Artifact, ArtifactKind, Event, KernelInfo, Reporter, Silent};
