//! The build, stage by stage: kernel crates and their options ([`crate::project`]) -> archs
//! (`archs`) -> the inline-PTX checker -> the Rust front end ([`crate::rust`]) -> per arch, in
//! parallel (`pool`): the Rust link ([`crate::backend::link`]) and nvcc for each .cu file
//! ([`crate::cuda`]), then ptxas ([`crate::backend::ptxas`]) for both (`steps`) -> the checks of
//! the result (`checks`) -> for a Builder, every module's kernel signatures (`signatures`, the
//! embed stage's input). Every step is a [`crate::cache::CachedStep`].

mod archs;
mod checks;
mod job;
mod pool;
mod signatures;
mod static_lib;
mod steps;

pub use static_lib::StaticLib;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::arch::Arch;
use crate::cuda::Nvcc;
use crate::diag::{Diagnostic, Level};
use crate::embed::signature::KernelSig;
use crate::error::{Error, Result};
use crate::inline_ptx;
use crate::options::{Options, Source};
use crate::project::{self, KernelCrate};
use crate::report::{Artifact, Event, Reporter, WithOrigin};
use crate::rust::ManifestFlags;
use crate::tools::{Cuda, Rust};

/// What to build and how: what `cargo ptx build` and [`Builder`](crate::Builder) hand the engine.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct BuildOptions {
    /// `--manifest-path`: the workspace to search when no `paths` are given.
    pub manifest_path: Option<PathBuf>,
    /// Package folders, workspace folders, manifests or lone `.cu` files to build.
    pub paths: Vec<PathBuf>,
    /// `-p NAME`.
    pub packages: Vec<String>,
    /// The front end's kernel options; `CARGO_PTX_*` variables and each crate's metadata fill
    /// in what they leave unset.
    pub options: Options,
    /// Where `options` came from, for messages.
    pub source: Source,
    /// `--target-dir`; default: the kernel crate's workspace target dir.
    pub target_dir: Option<PathBuf>,
    /// Parallel link/ptxas jobs; default: the number of CPUs.
    pub jobs: Option<usize>,
    /// Colored rustc diagnostics.
    pub color: bool,
    /// .cu files outside kernel crates (a host crate's `Builder::cuda` files).
    pub cuda_files: Vec<project::CudaFiles>,
    /// cargo's `--locked`, `--offline` and `--frozen`, for the nested cargo that builds Rust
    /// kernels.
    pub manifest_flags: ManifestFlags,
    /// Read every module's kernel signatures for typed launch methods (the embed stage's input;
    /// a Builder asks for it, `cargo ptx build` does not).
    pub(crate) signatures: bool,
}

/// Everything a build produced.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct BuildOutput {
    /// One entry per kernel crate (or group of .cu files), in build order.
    pub crates: Vec<CrateOutput>,
}

/// What `cargo ptx check` found.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct CheckOutput {
    /// Source files read.
    pub files: usize,
    /// Errors found.
    pub errors: usize,
    /// Warnings found.
    pub warnings: usize,
}

/// One kernel crate's results.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct CrateOutput {
    /// The package name.
    pub name: String,
    /// The lib target's crate name: names the artifacts.
    pub lib_name: String,
    /// The lib target's root file.
    pub lib_src: Option<PathBuf>,
    /// Its Cargo.toml (or the .cu file, for files outside a package).
    pub manifest_path: PathBuf,
    /// The archs built, sorted.
    pub archs: Vec<Arch>,
    /// Every kernel name, Rust ones first.
    pub kernels: Vec<String>,
    /// Every PTX and cubin file, by arch and module.
    pub artifacts: Vec<Artifact>,
    /// Every input file (for `cargo:rerun-if-changed`): Rust sources, .cu files and their headers.
    pub sources: Vec<PathBuf>,
    /// Each module's kernel signatures (when [`BuildOptions::signatures`] asked for them).
    pub(crate) signatures: BTreeMap<String, Vec<KernelSig>>,
    /// The crate's `untyped-kernels` option, for the embed stage.
    pub(crate) untyped_kernels: crate::options::UntypedKernels,
    /// For a `Builder::cuda_static_lib` group: the library and what it links with (no PTX).
    pub static_lib: Option<StaticLib>,
}

impl CrateOutput {
    /// The package, as cargo's JSON messages name it.
    pub fn origin(&self) -> crate::diag::Origin {
        crate::diag::Origin {
            package: self.name.clone(),
            manifest_path: self.manifest_path.clone(),
            target: self.lib_name.clone(),
            src_path: self.lib_src.clone().unwrap_or_else(|| self.manifest_path.with_file_name("src/lib.rs")),
        }
    }
}

impl BuildOptions {
    /// Runs the build, reporting progress to `reporter`.
    pub fn run(&self, reporter: &dyn Reporter) -> Result<BuildOutput> {
        let started = Instant::now();
        crate::tools::check_home()?;
        let cuda = Cuda::find();
        // With .cu files given, nvcc will run: its host compiler (`cc` starts the C++ compiler to
        // learn its family) is asked beside `cargo metadata`, not after it, before the first nvcc.
        let early_nvcc = cuda.nvcc.as_ref().filter(|_| !self.cuda_files.is_empty()).map(|tool| Nvcc::new(tool.clone()));
        let crates = std::thread::scope(|s| {
            if let Some(n) = &early_nvcc {
                s.spawn(|| n.host_args());
            }
            self.crates()
        })?;
        for k in &crates {
            for w in &k.warnings {
                reporter.report(Event::Diagnostic(w));
            }
        }
        if let Some(r) = cuda.rejected.first() {
            return Err(r.to_error());
        }
        if let Some(mix) = &cuda.mixed {
            reporter.report(Event::Diagnostic(&Diagnostic::warning(mix.clone())));
        }
        // nvcc (and the host compiler `cc` picks for it) only when some crate has .cu files.
        let nvcc: Option<Nvcc> = match &cuda.nvcc {
            Some(tool) if crates.iter().any(|k| !k.cuda_sources.is_empty()) => Some(early_nvcc.unwrap_or_else(|| Nvcc::new(tool.clone()))),
            _ => None,
        };
        // Read once: every Rust crate's link step is keyed by it (.cu files never link it).
        let links = crates.iter().any(|k| k.config.rust && k.lib_src.is_some());
        let libdevice_hash = cuda.libdevice.as_ref().filter(|_| links).and_then(|l| crate::cache::file_hash(&l.path)).unwrap_or_default();
        let mut toolchains: HashMap<String, Rust> = HashMap::new();
        let mut warned_no_ptxas = false;
        let mut output = BuildOutput::default();
        for krate in &crates {
            let rust = match krate.config.rust && krate.lib_src.is_some() {
                true => {
                    let tc = &krate.config.toolchain;
                    if !toolchains.contains_key(tc) {
                        toolchains.insert(tc.clone(), Rust::find(tc)?);
                    }
                    let rust = &toolchains[tc];
                    Some((rust, rust.require()?))
                }
                false => None,
            };
            let archs = archs::resolve(self, krate, rust.map(|r| r.0), rust.map(|r| r.1), &cuda, nvcc.as_ref())?;
            if let (Some(isa), Some((rust, llvm))) = (krate.config.ptx_isa, rust) {
                archs::check_ptx_isa(isa, llvm, rust)?;
            }
            if cuda.ptxas.is_none() && archs.iter().any(Arch::makes_cubin) && !warned_no_ptxas {
                warned_no_ptxas = true;
                reporter.report(Event::Diagnostic(
                    &Diagnostic::warning("ptxas not found: built PTX only, no cubins (the driver will JIT-compile the PTX at load time)")
                        .note("run `cargo ptx setup` to install NVIDIA's ptxas, or set PTXAS or CUDA_PATH"),
                ));
            }
            let job = job::CrateJob::new(self, krate, rust, &cuda, nvcc.as_ref(), archs, &libdevice_hash)?;
            output.crates.push(job.run(&WithOrigin { inner: reporter, origin: krate.origin() })?);
        }
        let mut archs: Vec<Arch> = output.crates.iter().flat_map(|c| c.archs.iter().copied()).collect();
        archs.sort();
        archs.dedup();
        let archs: Vec<String> = archs.iter().map(Arch::to_string).collect();
        let mut profiles: Vec<&str> = crates.iter().map(|k| k.config.profile.dir_name()).collect();
        profiles.dedup();
        reporter.report(Event::Status {
            verb: "Finished",
            message: format!("{} [{}] in {:.2}s", profiles.join(", "), archs.join(", "), started.elapsed().as_secs_f64()),
        });
        Ok(output)
    }

    /// The kernel crates of `paths` (or of the workspace), and the `cuda_files` groups, each
    /// with its options resolved.
    fn crates(&self) -> Result<Vec<KernelCrate>> {
        self.options.check(&self.source)?;
        let front = self.options.clone().or(Options::from_env()?);
        let mut crates = if self.paths.is_empty() && !self.cuda_files.is_empty() {
            Vec::new()
        } else {
            project::find_kernel_crates(self.manifest_path.as_deref(), &self.paths, &self.packages, &front, &self.source)?
        };
        for f in &self.cuda_files {
            crates.push(f.clone().into_crate(&front, &self.source)?);
        }
        Ok(crates)
    }

    /// `cargo ptx check`: the inline-PTX checker alone over the kernel crates and .cu files of
    /// `paths` (no compiler runs). Diagnostics go to `reporter`; errors fail.
    pub fn check(&self, reporter: &dyn Reporter) -> Result<CheckOutput> {
        // With no PATH or package named, the .cu files that host crates build in build.rs are
        // the project's too (a `cargo ptx new --kernels cuda` project has nothing else).
        let builders = self.paths.is_empty() && self.cuda_files.is_empty() && self.packages.is_empty();
        // A folder of .cu files with no package in it (a Builder host's `csrc/`): its files.
        let mut loose: Vec<(String, Vec<PathBuf>)> = Vec::new();
        let mut others = self.clone();
        others.paths.retain(|p| match project::loose_cuda_files(p) {
            Some(files) => {
                loose.push((p.display().to_string(), files));
                false
            }
            None => true,
        });
        let only_loose = !loose.is_empty() && others.paths.is_empty() && others.cuda_files.is_empty();
        let (mut crates, none_found) = if only_loose {
            (Vec::new(), None)
        } else {
            match others.crates() {
                Err(e @ Error::NoKernelCrate { .. }) if builders => (Vec::new(), Some(e)),
                found => (found?, None),
            }
        };
        if builders {
            let front = self.options.clone().or(Options::from_env()?);
            for group in project::builder_cuda_files(self.manifest_path.as_deref()) {
                // A host with a table of its own is a kernel crate already.
                if !crates.iter().any(|k| k.dir == group.files.dir) {
                    crates.push(group.files.into_crate(&front.clone().or(group.options), &self.source)?);
                }
            }
        }
        if let (true, Some(e)) = (crates.is_empty(), none_found) {
            return Err(e);
        }
        let mut out = CheckOutput::default();
        let mut diags = Vec::new();
        // Headers that several crates or folders include are checked once.
        let mut headers = std::collections::BTreeSet::new();
        // `-I` folders: a loose folder's only include flags.
        let include_dirs = self.options.cuda_include.clone().unwrap_or_default();
        for (dir, files) in &loose {
            let (n, found) = inline_ptx::check_loose(Path::new(dir), files, &include_dirs, &mut headers)?;
            out.files += n;
            diags.extend(found);
        }
        for k in &crates {
            for w in &k.warnings {
                reporter.report(Event::Diagnostic(w));
            }
            let (files, found) = inline_ptx::check_crate(k, inline_ptx::Headers::Included, &mut headers)?;
            out.files += files;
            diags.extend(found);
        }
        for d in &diags {
            reporter.report(Event::Diagnostic(d));
        }
        out.errors = diags.iter().filter(|d| d.level == Level::Error).count();
        out.warnings = diags.len() - out.errors;
        let names: Vec<&str> = crates.iter().map(|k| k.name.as_str()).chain(loose.iter().map(|(name, _)| name.as_str())).collect();
        if out.errors > 0 {
            return Err(Error::InlinePtx { package: names.join("`, `"), in_build: false, count: out.errors, diagnostics: diags });
        }
        let plural = |n: usize| if n == 1 { "" } else { "s" };
        reporter.report(Event::Status {
            verb: "Checked",
            message: format!(
                "{} ({} file{}, {} warning{})",
                names.join(", "),
                out.files,
                plural(out.files),
                out.warnings,
                plural(out.warnings)
            ),
        });
        Ok(out)
    }
}
