//! `ptx-build`: the engine of cargo-ptx.
//!
//! It compiles Rust kernel crates (`no_std`, `nvptx64-nvidia-cuda`) and CUDA C++ (`.cu`, through
//! nvcc) into PTX for every requested GPU arch, links NVIDIA's libdevice, and runs ptxas for cubins. `cargo ptx` is a
//! thin front end over [`BuildOptions`]; build scripts use the same engine.
//!
//! The pipeline, one module a stage:
//!
//! | stage | module | in | out |
//! |---|---|---|---|
//! | find tools | [`toolchain`] | environment, PATH, rustup | [`toolchain::Rust`], [`toolchain::Cuda`] |
//! | find crates | [`config`] | `cargo metadata` ([`cargo_json`]) | [`config::KernelCrate`] |
//! | choose archs | [`arch`] | `--arch`, metadata, driver | [`arch::Arch`] |
//! | Rust front end | [`rust`] | kernel crate | one bitcode module ([`rust::RustKernels`]) |
//! | CUDA front end | [`cuda`] | .cu file, per arch | PTX + the headers it read |
//! | inline-PTX checks | [`inline_ptx`] | `asm()` / `asm!` sources | diagnostics at the source line |
//! | link | [`link`] | module + libdevice, per arch | PTX |
//! | assemble | [`ptxas`] | PTX, per arch | cubin + [`ptxas::Resources`] |
//! | read PTX | [`ptx`] | PTX | entries, params, source lines |
//! | cache | [`cache`] | content, versions, flags | keys, atomic writes |
//!
//! Shared by several stages: [`bitcode`] (the profile; reading and linking crate bitcode, for
//! `rust` and `link`), [`depfile`] (rustc's and nvcc's make-style dep files), [`c_lex`] (the C++
//! lexer of `signature` and `inline_ptx`), and [`process`] (the one place a tool is started).
//!
//! [`engine`] runs them in order; [`setup`] installs missing tools; [`scaffold`] writes new
//! projects (`cargo ptx new`) from the repository's `templates/`.

pub mod arch;
pub mod bitcode;
pub mod builder;
pub mod c_lex;
pub mod cache;
pub mod cargo_json;
pub mod codegen;
pub mod config;
pub mod cuda;
pub mod depfile;
pub mod diag;
pub mod engine;
pub mod error;
pub mod inline_ptx;
pub mod link;
pub mod process;
pub mod ptx;
pub mod ptxas;
pub mod report;
pub mod rust;
pub mod signature;
pub mod toolchain;

pub use arch::{Arch, ArchRequest};
pub use builder::{Builder, Generated};
pub use diag::{Diagnostic, Level};
pub use engine::{BuildOptions, BuildOutput, CheckOutput, CrateOutput};
pub use error::{Error, Result};
pub use report::{Artifact, ArtifactKind, Event, KernelInfo, Reporter, Silent};
