//! The build.rs API: build kernel crates with the same engine as `cargo ptx build`, embed
//! every artifact into `OUT_DIR`, and generate a module with typed launch methods.
//!
//! ```no_run
//! // build.rs of a host crate with `ptx-build` as a build-dependency
//! fn main() -> Result<(), ptx_build::Error> {
//!     ptx_build::Builder::new()
//!         .kernel_crate("../kernels")
//!         .arch("sm_80")
//!         .arch("sm_90")
//!         .build()?;
//!     Ok(())
//! }
//! ```
//!
//! and in the host crate: `mod kernels { ptx_runtime::include_kernels!(); }` or
//! `mod kernels { include!(concat!(env!("OUT_DIR"), "/kernels.rs")); }`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::arch;
use crate::cache;
use crate::codegen::{self, EmbeddedImage, Unit};
use crate::diag::Level;
use crate::engine::{BuildOptions, BuildOutput};
use crate::error::{Error, Result};
use crate::ptx;
use crate::report::{ArtifactKind, Event, Reporter};
use crate::signature;
use crate::toolchain;

/// Variables a build script reads besides those of tool discovery.
const BUILDER_ENV: &[&str] = &["CARGO_PTX_ARCH", "CARGO_PTX_TOOLCHAIN", "CARGO_PTX_KERNEL_PROFILE"];

/// Builds kernels from a build script and generates the module that embeds them.
#[derive(Clone, Debug, Default)]
#[must_use]
pub struct Builder {
    kernel_crates: Vec<PathBuf>,
    archs: Vec<String>,
    out_file: Option<String>,
    debug_kernels: bool,
    toolchain: Option<String>,
}

/// What [`Builder::build`] wrote.
#[derive(Debug)]
pub struct Generated {
    /// The generated module (`$OUT_DIR/kernels.rs`).
    pub module: PathBuf,
    pub output: BuildOutput,
}

impl Builder {
    pub fn new() -> Builder {
        Builder::default()
    }

    /// A kernel crate (a package with `[package.metadata.ptx]`), relative to the host crate.
    pub fn kernel_crate(mut self, path: impl Into<PathBuf>) -> Self {
        self.kernel_crates.push(path.into());
        self
    }

    /// An arch (`sm_80`, `compute_90`, a comma list). Default: `CARGO_PTX_ARCH`, else the
    /// kernel crate's `archs`, else `native`.
    pub fn arch(mut self, arch: impl Into<String>) -> Self {
        self.archs.push(arch.into());
        self
    }

    /// The generated file's name in `OUT_DIR` (default `kernels.rs`).
    pub fn out_file(mut self, name: impl Into<String>) -> Self {
        self.out_file = Some(name.into());
        self
    }

    /// Build kernels unoptimised (kernels are built in release by default, whatever the host's
    /// profile: unoptimised Rust kernels are large and slow). `CARGO_PTX_KERNEL_PROFILE=debug`
    /// does the same.
    pub fn debug_kernels(mut self, yes: bool) -> Self {
        self.debug_kernels = yes;
        self
    }

    /// The rustup toolchain for kernels (default: the crate's `toolchain`, else `nightly`).
    pub fn toolchain(mut self, name: impl Into<String>) -> Self {
        self.toolchain = Some(name.into());
        self
    }

    /// Builds, embeds and generates; prints `cargo:rerun-if-*` lines and warnings for cargo.
    pub fn build(self) -> Result<Generated> {
        let manifest_dir = env_path("CARGO_MANIFEST_DIR")?;
        let out_dir = env_path("OUT_DIR")?;
        let reporter = BuildScript;
        for var in toolchain::ENV_VARS.iter().chain(BUILDER_ENV) {
            println!("cargo:rerun-if-env-changed={var}");
        }

        let mut archs = Vec::new();
        let arch_env = std::env::var("CARGO_PTX_ARCH").ok().filter(|s| !s.trim().is_empty());
        for a in self.archs.iter().cloned().chain(arch_env.filter(|_| self.archs.is_empty())) {
            archs.extend(arch::parse_list(&a)?);
        }
        let debug = self.debug_kernels || std::env::var("CARGO_PTX_KERNEL_PROFILE").is_ok_and(|p| p == "debug");
        let opts = BuildOptions {
            paths: self.kernel_crates.iter().map(|p| manifest_dir.join(p)).collect(),
            archs,
            release: !debug,
            toolchain: self.toolchain.clone().or_else(|| std::env::var("CARGO_PTX_TOOLCHAIN").ok()),
            ..BuildOptions::default()
        };
        if opts.paths.is_empty() {
            return Err(Error::NoKernelCrate { searched: "the Builder (no `.kernel_crate(..)` was given)".into() });
        }
        // A lock file the nested cargo creates now would look newer than this build to cargo
        // and rerun the build script once more; only a lock that existed before is watched.
        let locks_before: BTreeSet<PathBuf> = opts
            .paths
            .iter()
            .flat_map(|p| p.ancestors().map(|a| a.join("Cargo.lock")).collect::<Vec<_>>())
            .filter(|l| l.is_file())
            .collect();
        let output = opts.run(&reporter)?;

        let mut units = Vec::new();
        let mut rerun: BTreeSet<PathBuf> = BTreeSet::new();
        for c in &output.crates {
            rerun.extend(c.sources.iter().cloned());
            let krate_dir = c.manifest_path.parent().unwrap_or(Path::new(".")).to_path_buf();
            let lib = c.lib_src.clone().unwrap_or_else(|| krate_dir.join("src/lib.rs"));
            let sigs = signature::rust_kernels(&lib)?;
            let unit_name = c.lib_name.clone();
            let mut images = Vec::new();
            let mut struct_sizes = Vec::new();
            for a in &c.artifacts {
                let ext = match a.kind {
                    ArtifactKind::Ptx => "ptx",
                    ArtifactKind::Cubin => "cubin",
                };
                let rel = format!("ptx-build/{unit_name}/{}.{ext}", a.arch);
                let bytes = std::fs::read(&a.path).map_err(|e| Error::io("read", &a.path, e))?;
                let mut ptx_isa = None;
                if a.kind == ArtifactKind::Ptx {
                    let module = ptx::Module::parse(&String::from_utf8_lossy(&bytes));
                    for sig in &sigs {
                        signature::check(sig, module.entry(&sig.name))?;
                        if struct_sizes.iter().any(|(k, _, _): &(String, usize, u32)| *k == sig.name) {
                            continue;
                        }
                        if let Some(entry) = module.entry(&sig.name) {
                            for (i, (p, e)) in sig.params.iter().zip(&entry.params).enumerate() {
                                if matches!(p.ty, signature::ParamType::ByValue { .. }) {
                                    struct_sizes.push((sig.name.clone(), i, e.size));
                                }
                            }
                        }
                    }
                    ptx_isa = module.version.clone();
                }
                cache::write_atomic(&out_dir.join(&rel), &bytes)?;
                images.push(EmbeddedImage { arch: a.arch.parse()?, kind: a.kind, file: rel, ptx_isa });
            }
            units.push(Unit { name: unit_name, kernels: sigs, images, struct_sizes });
        }
        let code = codegen::generate(&units)?;
        let module = out_dir.join(self.out_file.as_deref().unwrap_or("kernels.rs"));
        cache::write_atomic(&module, code.as_bytes())?;
        for p in rerun.iter().filter(|p| !p.ends_with("Cargo.lock") || locks_before.contains(*p)) {
            println!("cargo:rerun-if-changed={}", p.display());
        }
        Ok(Generated { module, output })
    }
}

fn env_path(var: &'static str) -> Result<PathBuf> {
    std::env::var_os(var).map(PathBuf::from).ok_or(Error::NotInBuildScript { what: var })
}

/// Reports to cargo: warnings as `cargo:warning`, compiler errors on stderr (cargo shows a
/// failed build script's stderr).
struct BuildScript;

impl Reporter for BuildScript {
    fn report(&self, event: Event<'_>) {
        if let Event::Diagnostic(d) = event {
            match d.level {
                Level::Warning if d.rendered.is_none() => {
                    for line in d.to_string().lines() {
                        println!("cargo:warning={line}");
                    }
                }
                _ => eprintln!("{d}"),
            }
        }
    }
}
