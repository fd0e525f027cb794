//! The build: kernel crates -> archs -> inline-PTX checks -> Rust front end -> per arch, in
//! parallel: Rust link, nvcc for each .cu file, ptxas for both. Every step is cached by content.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::arch::{self, Arch, ArchRequest};
use crate::cache::{self, Key};
use crate::config::{self, CudaSource, KernelCrate};
use crate::cuda::{CudaCompile, Nvcc};
use crate::diag::{relative, Diagnostic, Level};
use crate::error::{Error, Result};
use crate::inline_ptx;
use crate::link::ArchLink;
use crate::options::{Options, PtxIsa, Source};
use crate::ptxas::{self, Resources};
use crate::report::{Artifact, ArtifactKind, Event, KernelInfo, Reporter};
use crate::rust::{Frontend, RustKernels};
use crate::shared_cache::SharedCache;
use crate::toolchain::{Cuda, Libdevice, Llvm, Rust};

/// What to build and how: what `cargo ptx build` and [`Builder`](crate::Builder) hand the engine.
#[derive(Clone, Debug, Default)]
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
    pub cuda_files: Vec<config::CudaFiles>,
    /// cargo's `--locked`, `--offline` and `--frozen`, for the nested cargo that builds Rust
    /// kernels.
    pub manifest_flags: ManifestFlags,
}

/// cargo's `--locked`, `--offline` and `--frozen`: what the nested cargo may do to Cargo.lock
/// and the network. A CI job that passes them to `cargo ptx build` means the kernel crate's
/// build too.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ManifestFlags {
    /// Fail if Cargo.lock would change.
    pub locked: bool,
    /// No network access.
    pub offline: bool,
    /// Both.
    pub frozen: bool,
}

impl ManifestFlags {
    /// The flags as cargo's arguments.
    pub fn args(&self) -> Vec<&'static str> {
        [(self.locked, "--locked"), (self.offline, "--offline"), (self.frozen, "--frozen")]
            .into_iter()
            .filter(|f| f.0)
            .map(|f| f.1)
            .collect()
    }
}

/// Everything a build produced.
#[derive(Clone, Debug, Default)]
pub struct BuildOutput {
    /// One entry per kernel crate (or group of .cu files), in build order.
    pub crates: Vec<CrateOutput>,
}

/// What `cargo ptx check` found.
#[derive(Clone, Debug, Default)]
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
    /// Kernel signatures read from what the compiler saw, by module, where the source alone
    /// does not show every kernel: a .cu file after the preprocessor (kernels stamped out by
    /// macros), a Rust crate after macro expansion. Other modules are read from their source.
    pub signatures: std::collections::BTreeMap<String, Vec<crate::signature::KernelSig>>,
}

impl BuildOptions {
    /// Runs the build, reporting progress to `reporter`.
    pub fn run(&self, reporter: &dyn Reporter) -> Result<BuildOutput> {
        let started = Instant::now();
        let crates = self.crates()?;
        for k in &crates {
            for w in &k.warnings {
                reporter.report(Event::Diagnostic(w));
            }
        }
        let cuda = Cuda::find();
        if let Some(r) = cuda.rejected.first() {
            return Err(r.to_error());
        }
        if let Some(mix) = &cuda.mixed {
            reporter.report(Event::Diagnostic(&Diagnostic::warning(mix.clone())));
        }
        let mut toolchains: HashMap<String, Rust> = HashMap::new();
        let mut output = BuildOutput::default();
        let mut warned_no_ptxas = false;
        let libdevice_hash = cuda.libdevice.as_ref().and_then(|l| cache::file_hash(&l.path)).unwrap_or_default();
        // nvcc (and the host compiler `cc` picks for it) only when some crate has .cu files.
        let nvcc: Option<Nvcc> = match &cuda.nvcc {
            Some(tool) if crates.iter().any(|k| !k.cuda_sources.is_empty()) => Some(Nvcc::new(tool.clone())),
            _ => None,
        };

        for krate in &crates {
            let has_rust = krate.config.rust && krate.lib_src.is_some();
            let rust = if has_rust {
                let tc = krate.config.toolchain.clone();
                if !toolchains.contains_key(&tc) {
                    toolchains.insert(tc.clone(), Rust::find(&tc)?);
                }
                let rust = &toolchains[&tc];
                Some((rust, rust.require()?))
            } else {
                None
            };
            let llvm = rust.map(|(_, l)| l);
            let archs = self.resolve_archs(krate, llvm, &cuda, nvcc.as_ref())?;
            let ptx_isa = krate.config.ptx_isa;
            if let (Some(isa), Some((rust, llvm))) = (ptx_isa, rust) {
                check_ptx_isa(isa, llvm, rust)?;
            }
            if cuda.ptxas.is_none() && archs.iter().any(Arch::makes_cubin) && !warned_no_ptxas {
                warned_no_ptxas = true;
                reporter.report(Event::Diagnostic(
                    &Diagnostic::warning("ptxas not found: built PTX only, no cubins (the driver will JIT-compile the PTX at load time)")
                        .note("run `cargo ptx setup` to install NVIDIA's ptxas, or set PTXAS or CUDA_PATH"),
                ));
            }
            let job = CrateJob {
                opts: self,
                krate,
                rust,
                cuda: &cuda,
                nvcc: nvcc.as_ref(),
                archs,
                ptx_isa,
                libdevice_hash: &libdevice_hash,
                hashes: Mutex::new(HashMap::new()),
                shared: krate.config.shared_cache.as_ref().map(SharedCache::new),
                launcher: find_launcher(krate)?,
                stored: AtomicBool::new(false),
            };
            let out = job.run(&crate::report::WithOrigin { inner: reporter, origin: krate.origin() })?;
            if job.stored.load(Ordering::Relaxed) {
                if let Some(shared) = &job.shared {
                    shared.evict();
                }
            }
            output.crates.push(out);
        }
        let archs: Vec<String> = {
            let mut all: Vec<Arch> = output.crates.iter().flat_map(|c| c.archs.iter().copied()).collect();
            all.sort();
            all.dedup();
            all.iter().map(Arch::to_string).collect()
        };
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
            config::find_kernel_crates(self.manifest_path.as_deref(), &self.paths, &self.packages, &front, &self.source)?
        };
        for f in &self.cuda_files {
            crates.push(f.clone().into_crate(&front)?);
        }
        Ok(crates)
    }

    /// `cargo ptx check`: the inline-PTX checker alone over the kernel crates and .cu files of
    /// `paths` (no compiler runs). Diagnostics go to `reporter`; errors fail.
    pub fn check(&self, reporter: &dyn Reporter) -> Result<CheckOutput> {
        let crates = self.crates()?;
        let mut out = CheckOutput::default();
        let mut diags = Vec::new();
        for k in &crates {
            for w in &k.warnings {
                reporter.report(Event::Diagnostic(w));
            }
            let (files, found) = inline_ptx::check_crate(k)?;
            out.files += files;
            diags.extend(found);
        }
        for d in &diags {
            reporter.report(Event::Diagnostic(d));
        }
        out.errors = diags.iter().filter(|d| d.level == Level::Error).count();
        out.warnings = diags.len() - out.errors;
        let names: Vec<&str> = crates.iter().map(|k| k.name.as_str()).collect();
        if out.errors > 0 {
            return Err(Error::InlinePtx { package: names.join("`, `"), count: out.errors, diagnostics: diags });
        }
        reporter.report(Event::Status {
            verb: "Checked",
            message: format!(
                "{} ({} file{}, {} warning{})",
                names.join(", "),
                out.files,
                if out.files == 1 { "" } else { "s" },
                out.warnings,
                if out.warnings == 1 { "" } else { "s" }
            ),
        });
        Ok(out)
    }

    fn resolve_archs(&self, krate: &KernelCrate, llvm: Option<&Llvm>, cuda: &Cuda, nvcc: Option<&Nvcc>) -> Result<Vec<Arch>> {
        let requests = if let Some(a) = &krate.config.archs {
            a.clone()
        } else {
            match arch::native() {
                Ok(native) => native.into_iter().map(ArchRequest::Arch).collect(),
                Err(Error::NoNativeGpu { why }) => {
                    return Err(Error::NoArch {
                        package: krate.name.clone(),
                        why,
                        help: self.source.no_arch_help(krate.options_table.as_ref()),
                    })
                }
                Err(e) => return Err(e),
            }
        };
        let llvm_supported = llvm.map(Llvm::supported);
        let ptxas_supported = cuda.ptxas_supported();
        let uses_nvcc = nvcc.filter(|_| !krate.cuda_sources.is_empty());
        let mut archs = Vec::new();
        for r in requests {
            match r {
                ArchRequest::Arch(a) => archs.push(a),
                ArchRequest::Native => archs.extend(arch::native()?),
                ArchRequest::All => {
                    // Every arch all the tools of this crate know.
                    let candidates: Vec<Arch> = match (llvm_supported, uses_nvcc.and_then(Nvcc::archs)) {
                        (Some(l), _) => l.all(),
                        (None, Some(list)) => list.iter().filter_map(|a| a.replace("compute_", "sm_").parse().ok()).collect(),
                        (None, None) => ptxas_supported.as_ref().map(|p| p.all()).unwrap_or_default(),
                    };
                    archs.extend(
                        candidates
                            .into_iter()
                            .filter(|a| ptxas_supported.as_ref().is_none_or(|p| p.contains(a)) && uses_nvcc.is_none_or(|n| n.supports(*a))),
                    );
                }
            }
        }
        archs.sort();
        archs.dedup();
        if archs.is_empty() {
            return Err(Error::NoArch {
                package: krate.name.clone(),
                help: self.source.no_arch_help(krate.options_table.as_ref()),
                why: "`all` matched no arch every tool supports".into(),
            });
        }
        for a in &archs {
            if let (Some(llvm), Some(sup)) = (llvm, llvm_supported) {
                if !sup.contains(a) {
                    return Err(Error::UnsupportedArch {
                        arch: a.to_string(),
                        tool: "LLVM",
                        version: llvm.bin.display().to_string(),
                        path: llvm.tool("llc"),
                        help: format!("this nightly's LLVM knows: {}; a newer nightly may know more", sup.describe()),
                    });
                }
            }
            if let Some(nvcc) = uses_nvcc {
                if !nvcc.supports(*a) {
                    let dropped = if a.capability < 75 && nvcc.tool.release().is_some_and(|r| r.0 >= 13) {
                        "CUDA 13 dropped archs below sm_75: build those with a CUDA 12 nvcc (set NVCC), or choose "
                    } else {
                        "choose "
                    };
                    return Err(Error::UnsupportedArch {
                        arch: a.to_string(),
                        tool: "nvcc",
                        version: nvcc.tool.version.clone(),
                        path: nvcc.tool.path.clone(),
                        help: format!("{dropped}an arch it lists: {}", nvcc.archs().unwrap_or_default().join(", ")),
                    });
                }
            }
            if let (Some(ptxas), Some(sup)) = (&cuda.ptxas, &ptxas_supported) {
                if a.makes_cubin() && !sup.contains(a) {
                    let dropped = if a.capability < 75 && ptxas.release().is_some_and(|r| r.0 >= 13) {
                        "CUDA 13 dropped archs below sm_75: build those with a CUDA 12 toolkit (set PTXAS to its ptxas), or use "
                    } else {
                        "use "
                    };
                    return Err(Error::UnsupportedArch {
                        arch: a.to_string(),
                        tool: "ptxas",
                        version: ptxas.version.clone(),
                        path: ptxas.path.clone(),
                        help: format!("{dropped}`{}` for PTX only, or an arch it supports: {}", a.compute_name(), sup.describe()),
                    });
                }
            }
        }
        Ok(archs)
    }
}

fn check_ptx_isa(isa: PtxIsa, llvm: &Llvm, rust: &Rust) -> Result<()> {
    let known = llvm.ptx_versions();
    if known.iter().any(|f| *f == isa.llvm_feature()) {
        return Ok(());
    }
    let list: Vec<String> =
        known.iter().filter_map(|f| f.strip_prefix("ptx")).map(|d| format!("{}.{}", &d[..d.len() - 1], &d[d.len() - 1..])).collect();
    Err(Error::UnsupportedPtxIsa {
        isa: isa.to_string(),
        llvm_version: rust.llvm_version.clone(),
        path: llvm.tool("llc"),
        help: format!("set `ptx-isa` to one of: {}, or remove it to let LLVM choose", list.join(", ")),
    })
}

struct CrateJob<'a> {
    opts: &'a BuildOptions,
    krate: &'a KernelCrate,
    /// The toolchain and its LLVM, when the crate has Rust kernels.
    rust: Option<(&'a Rust, &'a Llvm)>,
    cuda: &'a Cuda,
    nvcc: Option<&'a Nvcc>,
    archs: Vec<Arch>,
    ptx_isa: Option<PtxIsa>,
    libdevice_hash: &'a str,
    /// Content hashes of headers, computed once per build (several archs read them).
    hashes: Mutex<HashMap<PathBuf, Option<String>>>,
    /// The shared step cache, unless off.
    shared: Option<SharedCache>,
    /// Whether this crate's build stored anything there (then it may need an eviction).
    stored: AtomicBool,
    /// The program nvcc and ptxas run through.
    launcher: Option<PathBuf>,
}

#[derive(Serialize, Deserialize)]
struct LinkStamp {
    key: String,
    ptx_hash: String,
}

#[derive(Serialize, Deserialize)]
struct CudaStamp {
    key: String,
    /// Every file nvcc read that lies outside the CUDA install, with its content hash.
    inputs: Vec<(PathBuf, String)>,
    ptx_hash: String,
    kernels: Vec<String>,
}

/// A .cu file's kernel signatures as read from its preprocessed translation unit.
#[derive(Serialize, Deserialize)]
struct SignatureStamp {
    key: String,
    sigs: Vec<crate::signature::KernelSig>,
}

#[derive(Serialize, Deserialize)]
struct PtxasStamp {
    key: String,
    cubin_hash: String,
    resources: Vec<Resources>,
}

/// One unit of per-arch work.
#[derive(Clone, Copy)]
enum Job {
    /// Link the Rust module for an arch, then ptxas.
    Rust(Arch),
    /// nvcc one .cu file (by index) for an arch, then ptxas.
    Cuda(Arch, usize),
}

/// What a job produced.
struct JobOut {
    artifacts: Vec<Artifact>,
    /// Files the job read (a .cu file and its headers).
    inputs: Vec<PathBuf>,
    /// A .cu module's signatures read after the preprocessor (see `CrateOutput::signatures`).
    signatures: Option<(String, Vec<crate::signature::KernelSig>)>,
}

impl CrateJob<'_> {
    fn target_dir(&self) -> PathBuf {
        // Absolute: the nested cargo runs in the kernel crate's folder, where a relative
        // `--target-dir` would name another place.
        let dir = self.opts.target_dir.clone().unwrap_or_else(|| self.krate.target_dir.clone());
        std::path::absolute(&dir).unwrap_or(dir)
    }

    fn run(&self, reporter: &dyn Reporter) -> Result<CrateOutput> {
        self.check_inline_ptx(reporter)?;
        let target = self.target_dir();
        let out_dir = target.join("ptx").join(self.krate.config.profile.dir_name()).join(&self.krate.name);
        // Stamps and scratch files are per manifest: two workspaces sharing a target dir
        // (CARGO_TARGET_DIR) may both have a kernel crate of this name.
        let manifest_key = Key::new("manifest").str(&self.krate.manifest_path.to_string_lossy()).finish();
        let work = out_dir.join(format!(".work-{}", &manifest_key[..12]));
        cache::create_dir_all(&work)?;
        // What a killed build left: its scratch folders and half-written artifacts.
        cache::remove_stale(&work);
        for arch in &self.archs {
            cache::remove_stale(&work.join(arch.to_string()));
            cache::remove_stale(&out_dir.join(arch.to_string()));
        }
        self.check_cuda_libraries()?;
        let cuda_jobs = if self.nvcc.is_some() { self.krate.cuda_sources.len() } else { 0 };
        let rust_steps = if self.rust.is_some() { 1 + self.archs.len() } else { 0 };
        reporter.report(Event::Plan { steps: rust_steps + self.archs.len() * cuda_jobs });

        let rust = match self.rust {
            Some((rust, llvm)) => {
                let fe = Frontend {
                    rust,
                    llvm,
                    krate: self.krate,
                    profile: self.krate.config.profile,
                    features: &self.krate.config.features,
                    cpu: *self.archs.iter().min().expect("at least one arch"),
                    cargo_target_dir: target.join("ptx").join("cargo"),
                    work_dir: work.clone(),
                    color: self.opts.color,
                    shared_cache: self.shared.as_ref().map(SharedCache::root),
                    manifest_flags: self.opts.manifest_flags,
                };
                let r = fe.compile(reporter)?;
                self.check_rust_kernel_names(&r.kernels)?;
                if !r.fresh {
                    self.warn_unexported_kernels(reporter);
                }
                reporter.report(Event::StepDone);
                Some(r)
            }
            None => None,
        };

        // CUDA jobs first: nvcc is the slow step.
        let mut jobs = Vec::new();
        for arch in &self.archs {
            jobs.extend((0..cuda_jobs).map(|i| Job::Cuda(*arch, i)));
        }
        if rust.is_some() {
            jobs.extend(self.archs.iter().map(|a| Job::Rust(*a)));
        }
        let results = parallel(self.jobs(), jobs.len(), |i| match jobs[i] {
            Job::Rust(arch) => self.rust_arch(
                arch,
                rust.as_ref().expect("rust jobs only with a front end"),
                &out_dir,
                &work.join(arch.to_string()),
                reporter,
            ),
            Job::Cuda(arch, n) => self.cuda_arch(arch, &self.krate.cuda_sources[n], &out_dir, &work.join(arch.to_string()), reporter),
        });
        let mut artifacts = Vec::new();
        let mut inputs: BTreeSet<PathBuf> = BTreeSet::new();
        let mut first_error: Option<Error> = None;
        let mut signatures = std::collections::BTreeMap::new();
        // A source error every arch hits is one error: each diagnostic is reported once, with
        // the archs it applies to when there are several.
        let mut diagnostics: Vec<(Diagnostic, Vec<String>)> = Vec::new();
        for r in results {
            match r {
                Ok(out) => {
                    artifacts.extend(out.artifacts);
                    inputs.extend(out.inputs);
                    signatures.extend(out.signatures);
                }
                Err(e) => {
                    if let Error::Ptxas { diagnostics: ds, arch, .. } | Error::Nvcc { diagnostics: ds, arch, .. } = &e {
                        for d in ds {
                            match diagnostics.iter_mut().find(|(seen, _)| seen == d) {
                                Some((_, archs)) => archs.push(arch.clone()),
                                None => diagnostics.push((d.clone(), vec![arch.clone()])),
                            }
                        }
                    }
                    // The same file failing for several archs: one error naming them all.
                    match (&mut first_error, e) {
                        (Some(Error::Nvcc { file, arch, .. }), Error::Nvcc { file: f2, arch: a2, .. }) if *file == f2 => {
                            arch.push_str(", ");
                            arch.push_str(&a2);
                        }
                        (Some(Error::Ptxas { package, arch, .. }), Error::Ptxas { package: p2, arch: a2, .. }) if *package == p2 => {
                            arch.push_str(", ");
                            arch.push_str(&a2);
                        }
                        (None, e) => first_error = Some(e),
                        _ => {}
                    }
                }
            }
        }
        for (mut d, archs) in diagnostics {
            if archs.len() > 1 {
                d.notes.push(format!("for {}", archs.join(", ")));
            }
            reporter.report(Event::Diagnostic(&d));
        }
        if let Some(e) = first_error {
            return Err(e);
        }
        if !self.krate.cuda_sources.is_empty() && self.nvcc.is_none() {
            // Rust kernels of the crate were built above; the .cu files cannot be.
            return Err(Error::ToolMissing {
                what: "nvcc".into(),
                detail: format!(
                    " (needed for {} .cu file{} of `{}`, e.g. {})",
                    self.krate.cuda_sources.len(),
                    if self.krate.cuda_sources.len() == 1 { "" } else { "s" },
                    self.krate.name,
                    relative(&self.krate.cuda_sources[0].path, &self.krate.dir).display()
                ),
                help: "run `cargo ptx setup` (installs NVIDIA's nvcc, ptxas and libdevice), or set NVCC or CUDA_PATH".into(),
            });
        }
        artifacts.sort_by(|a, b| (&a.arch, &a.module, a.kind as u8).cmp(&(&b.arch, &b.module, b.kind as u8)));
        self.check_unique_kernels(&artifacts)?;
        self.check_cuda_kernel_names(&artifacts)?;

        let fresh = rust.as_ref().is_none_or(|r| r.fresh) && artifacts.iter().all(|a| a.fresh);
        if fresh {
            reporter.report(Event::Status { verb: "Fresh", message: self.krate.name.clone() });
        }
        for a in &artifacts {
            reporter.report(Event::Artifact(a));
        }
        let mut kernels: Vec<String> = rust.as_ref().map(|r| r.kernels.clone()).unwrap_or_default();
        if let Some(first) = self.archs.first() {
            for a in
                artifacts.iter().filter(|a| a.kind == ArtifactKind::Ptx && a.arch == first.to_string() && a.module != self.krate.lib_name)
            {
                kernels.extend(a.kernels.iter().map(|k| k.name.clone()));
            }
        }
        let mut sources: Vec<PathBuf> = rust.as_ref().map(|r| r.sources.clone()).unwrap_or_default();
        sources.extend(inputs);
        // The Rust module's, from the expanded crate when the source reader missed kernels
        // (the .cu modules' were gathered from their jobs above).
        if let Some(sigs) = rust.as_ref().and_then(|r| self.expanded_signatures(r, reporter)) {
            signatures.insert(self.krate.lib_name.clone(), sigs);
        }
        Ok(CrateOutput {
            name: self.krate.name.clone(),
            lib_name: self.krate.lib_name.clone(),
            lib_src: self.krate.lib_src.clone(),
            manifest_path: self.krate.manifest_path.clone(),
            archs: self.archs.clone(),
            kernels,
            artifacts,
            sources,
            signatures,
        })
    }

    /// The Rust kernels with those stamped out by macros, read from the expanded crate the
    /// front end wrote when the source reader missed some; `None` leaves the Builder to the
    /// source reader (those kernels then stay untyped, and a warning says why).
    fn expanded_signatures(&self, r: &crate::rust::RustKernels, reporter: &dyn Reporter) -> Option<Vec<crate::signature::KernelSig>> {
        let lib = self.krate.lib_src.as_deref()?;
        match crate::rust::expanded_kernels(lib, r) {
            Ok(sigs) => sigs,
            Err(why) => {
                reporter.report(Event::Diagnostic(
                    &Diagnostic::warning(format!(
                        "kernels of `{}` stamped out by macros get no typed launch method: {why}",
                        self.krate.name
                    ))
                    .at(lib, None, None)
                    .note("they are embedded and listed in KERNEL_NAMES: launch them with `kernels.launch_builder(&stream, NAME)`"),
                ));
                None
            }
        }
    }

    fn jobs(&self) -> usize {
        self.opts
            .jobs
            .or_else(|| std::env::var("NUM_JOBS").ok().and_then(|n| n.parse().ok()))
            .unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1))
            .max(1)
    }

    /// Runs the inline-PTX checker over the crate's .cu files and Rust sources.
    fn check_inline_ptx(&self, reporter: &dyn Reporter) -> Result<()> {
        let (_, diags) = inline_ptx::check_crate(self.krate)?;
        for d in &diags {
            reporter.report(Event::Diagnostic(d));
        }
        let count = diags.iter().filter(|d| d.level == Level::Error).count();
        if count > 0 {
            return Err(Error::InlinePtx { package: self.krate.name.clone(), count, diagnostics: diags });
        }
        Ok(())
    }

    /// A kernel name in two modules of the crate (Rust and CUDA, or two .cu files) would make
    /// launching by name ambiguous.
    fn check_unique_kernels(&self, artifacts: &[Artifact]) -> Result<()> {
        let Some(first) = self.archs.first().map(Arch::to_string) else { return Ok(()) };
        let ptx: Vec<&Artifact> = artifacts.iter().filter(|a| a.kind == ArtifactKind::Ptx && a.arch == first).collect();
        for (i, a) in ptx.iter().enumerate() {
            for b in &ptx[i + 1..] {
                // C++ (mangled) kernels get no method, so two .cu modules may each define the same
                // helper kernel (llm.c does): they are loaded as separate modules.
                if let Some(k) = a.kernels.iter().find(|k| !k.name.starts_with("_Z") && b.kernels.iter().any(|o| o.name == k.name)) {
                    return Err(Error::DuplicateKernel {
                        name: k.name.clone(),
                        first: self.definition(a, &k.name),
                        second: self.definition(b, &k.name),
                    });
                }
            }
        }
        Ok(())
    }

    /// A Rust kernel named like a libdevice function or an LLVM intrinsic is refused at its line:
    /// the link would bind the crate's own calls of that function to the kernel (a kernel that
    /// calls `math::sin` and is named `__nv_sinf` calls itself).
    fn check_rust_kernel_names(&self, kernels: &[String]) -> Result<()> {
        let sigs = || self.krate.lib_src.as_deref().and_then(|src| crate::signature::rust_kernels(src).ok()).unwrap_or_default();
        let root = &self.krate.dir;
        let at = |sig: Option<&crate::signature::KernelSig>| match sig {
            Some(s) => format!("{}:{}", relative(&s.file, root).display(), s.line),
            None => relative(self.krate.lib_src.as_deref().unwrap_or(&self.krate.manifest_path), root).display().to_string(),
        };
        for name in kernels {
            if let Some(reason) = reserved_name(name) {
                let sigs = sigs();
                return Err(Error::ReservedKernelName {
                    name: name.clone(),
                    location: at(sigs.iter().find(|s| &s.name == name)),
                    reason: reason.into(),
                });
            }
        }
        Ok(())
    }

    /// Warns (when the front end ran) about `extern "ptx-kernel"` functions without
    /// `#[no_mangle]`: rustc drops them or exports them under a mangled name, and either way the
    /// host cannot launch them by name.
    fn warn_unexported_kernels(&self, reporter: &dyn Reporter) {
        let Some(src) = self.krate.lib_src.as_deref() else { return };
        for (name, file, line) in crate::signature::unexported_rust_kernels(src).unwrap_or_default() {
            let d = Diagnostic::warning(format!(
                "`extern \"ptx-kernel\" fn {name}` has no `#[no_mangle]`, so it is not exported as kernel `{name}`"
            ))
            .at(relative(&file, &self.krate.dir), Some(line), None)
            .rooted(&self.krate.dir)
            .note("hosts load kernels by name: add `#[no_mangle]` to the function, or use `#[ptx_device::kernel]`");
            reporter.report(Event::Diagnostic(&d));
        }
    }

    /// The CUDA libraries the crate lists (`cuda-libraries`) must have their headers in the
    /// CUDA install nvcc comes from, or nvcc would fail on the `#include` once per file and arch.
    fn check_cuda_libraries(&self) -> Result<()> {
        let Some(nvcc) = self.nvcc.filter(|_| !self.krate.cuda_sources.is_empty()) else { return Ok(()) };
        let Some(include) = nvcc.tool.path.parent().and_then(Path::parent).map(|r| r.join("include")) else { return Ok(()) };
        for lib in &self.krate.config.cuda.libraries {
            let header = crate::toolchain::CUDA_LIBRARIES.iter().find(|(n, _)| n == lib).map(|(_, h)| *h).unwrap_or("");
            if !include.join(header).is_file() {
                return Err(Error::ToolMissing {
                    what: format!("{lib}'s headers ({header} in {})", include.display()),
                    detail: format!(" (`cuda-libraries` of `{}`)", self.krate.name),
                    help: format!(
                        "run `cargo ptx setup` in the project (it installs what `cuda-libraries` lists), or `cargo ptx setup --with {lib}`"
                    ),
                });
            }
        }
        Ok(())
    }

    /// The same rule for the kernels of .cu files, at their definition.
    fn check_cuda_kernel_names(&self, artifacts: &[Artifact]) -> Result<()> {
        for a in artifacts.iter().filter(|a| a.kind == ArtifactKind::Ptx && a.module != self.krate.lib_name) {
            if let Some((k, reason)) = a.kernels.iter().find_map(|k| Some((k, reserved_name(&k.name)?))) {
                return Err(Error::ReservedKernelName {
                    name: k.name.clone(),
                    location: self.definition(a, &k.name),
                    reason: reason.into(),
                });
            }
        }
        Ok(())
    }

    fn shared_fetch(
        &self,
        key: &str,
        outputs: &[(&str, &Path)],
        accept: impl FnOnce(&serde_json::Value) -> bool,
    ) -> Option<serde_json::Value> {
        self.shared.as_ref()?.fetch(key, outputs, accept)
    }

    /// Stores a step's outputs in the shared cache. A cache that cannot be written (a full disk,
    /// a read-only CI cache) costs the next checkout a rebuild, never this build.
    fn shared_store(&self, key: &str, files: &[(&str, &Path)], meta: &impl Serialize) {
        if let Some(shared) = &self.shared {
            if shared.store(key, files, meta).is_ok() {
                self.stored.store(true, Ordering::Relaxed);
            }
        }
    }

    /// `file:line` of a kernel's definition, as far as the sources tell.
    fn definition(&self, artifact: &Artifact, kernel: &str) -> String {
        let sigs = match &artifact.source {
            Some(src) if src.extension().is_some_and(|e| e == "cu") => crate::signature::cuda_kernels(src).ok(),
            Some(src) => crate::signature::rust_kernels(src).ok(),
            None => None,
        };
        let root = &self.krate.dir;
        match sigs.and_then(|s| s.into_iter().find(|s| s.name == kernel)) {
            Some(s) => format!("{}:{}", relative(&s.file, root).display(), s.line),
            None => artifact.source.as_ref().map(|p| relative(p, root).display().to_string()).unwrap_or_else(|| artifact.module.clone()),
        }
    }

    fn hash_of(&self, path: &Path) -> Option<String> {
        if let Some(h) = self.hashes.lock().unwrap_or_else(|e| e.into_inner()).get(path) {
            return h.clone();
        }
        let h = cache::file_hash(path);
        self.hashes.lock().unwrap_or_else(|e| e.into_inner()).insert(path.to_path_buf(), h.clone());
        h
    }

    fn rust_arch(&self, arch: Arch, rust: &RustKernels, out_dir: &Path, work: &Path, reporter: &dyn Reporter) -> Result<JobOut> {
        let (toolchain, llvm) = self.rust.expect("rust jobs only with a toolchain");
        let arch_dir = out_dir.join(arch.to_string());
        let ptx_path = arch_dir.join(format!("{}.ptx", self.krate.lib_name));
        let profile = self.krate.config.profile;
        let libdevice: Option<&Libdevice> = self.cuda.libdevice.as_ref();

        // Link: keyed by the module, libdevice, LLVM, arch and flags.
        let link_key = {
            // The link stage's recipe (its rewrites and default flags); fmad and unroll-threshold.
            let mut k = Key::new(crate::link::RECIPE);
            k.str(&rust.module_hash).str(&rust.kernels.join(",")).str(self.libdevice_hash).str(&toolchain.version);
            k.str(&arch.to_string()).str(&self.ptx_isa.map(|i| i.to_string()).unwrap_or_default());
            k.str(&format!("{:?}{}", profile, self.krate.config.ftz));
            k.str(&format!("fmad={} unroll={:?}", self.krate.config.fmad, self.krate.config.unroll_threshold));
            k.finish()
        };
        let link_stamp = work.join("link.json");
        // The PTX's hash is read once: it checks the link stamp and keys the ptxas step.
        let current_hash = cache::file_hash(&ptx_path);
        let fresh_hash = cache::read_stamp::<LinkStamp>(&link_stamp)
            .filter(|s| s.key == link_key && current_hash.as_deref() == Some(s.ptx_hash.as_str()))
            .map(|s| s.ptx_hash);
        let link_fresh = fresh_hash.is_some();
        let ptx_hash = match fresh_hash {
            Some(h) => h,
            None if self.shared_fetch(&link_key, &[("ptx", &ptx_path)], |_| true).is_some() => {
                let h = cache::file_hash(&ptx_path).unwrap_or_default();
                cache::write_stamp(&link_stamp, &LinkStamp { key: link_key, ptx_hash: h.clone() })?;
                h
            }
            None => {
                reporter.report(Event::Status { verb: "Linking", message: format!("{} for {arch}", self.krate.name) });
                ArchLink {
                    llvm,
                    package: &self.krate.name,
                    module: &rust.module,
                    kernels: &rust.kernels,
                    libdevice,
                    arch,
                    ptx_isa: self.ptx_isa,
                    ftz: self.krate.config.ftz,
                    fmad: self.krate.config.fmad,
                    unroll_threshold: self.krate.config.unroll_threshold,
                    profile,
                    work_dir: work,
                    out: &ptx_path,
                }
                .run()?;
                crate::ptx::relative_file_lines(&ptx_path, &self.krate.workspace_root)?;
                self.shared_store(&link_key, &[("ptx", &ptx_path)], &());
                let h = cache::file_hash(&ptx_path).unwrap_or_default();
                cache::write_stamp(&link_stamp, &LinkStamp { key: link_key, ptx_hash: h.clone() })?;
                h
            }
        };
        reporter.report(Event::StepDone);
        let module = Module {
            name: &self.krate.lib_name,
            source: self.krate.lib_src.as_deref(),
            kernels: &rust.kernels,
            root: &self.krate.workspace_root,
        };
        let artifacts = self.with_cubin(arch, &module, &ptx_path, &ptx_hash, link_fresh, work, reporter)?;
        Ok(JobOut { artifacts, inputs: Vec::new(), signatures: None })
    }

    fn cuda_arch(&self, arch: Arch, src: &CudaSource, out_dir: &Path, work: &Path, reporter: &dyn Reporter) -> Result<JobOut> {
        let nvcc = self.nvcc.expect("cuda jobs only with nvcc");
        let ptx_path = out_dir.join(arch.to_string()).join(format!("{}.ptx", src.module));
        let lone = self.krate.manifest_path.extension().is_some_and(|e| e == "cu");
        // Kernels stamped out by macros (candle's style) are read from the preprocessed unit nvcc
        // keeps on the way (not under a launcher: sccache would not cache a `-keep` compile).
        let first_arch = self.archs.first() == Some(&arch);
        let kept = work.join(format!("{}.cpp1.ii", src.module));
        let _ = std::fs::remove_file(&kept);
        let keep = first_arch && self.launcher.is_none();
        let include_help = self.opts.source.include_help(self.krate.options_table.as_ref(), lone);
        let compile = CudaCompile {
            nvcc,
            source: src,
            config: &self.krate.config.cuda,
            package_dir: &self.krate.dir,
            arch,
            ftz: self.krate.config.ftz,
            fmad: self.krate.config.fmad,
            device_debug: self.krate.config.cuda.gdb,
            out: &ptx_path,
            work_dir: work,
            launcher: self.launcher.as_deref(),
            include_help: &include_help,
            keep_preprocessed: keep.then_some(kept.as_path()),
        };
        // Keyed by the flags, nvcc and its host compiler; the stamp adds the hash of every file
        // nvcc read last time (headers inside the CUDA install are covered by its version).
        let key = {
            let mut k = Key::new("cuda-v1");
            k.str(&nvcc.tool.version).str(&nvcc.tool.path.to_string_lossy()).str(&nvcc.host_key()).str(&src.path.to_string_lossy());
            for f in compile.flags() {
                k.str(&f.to_string_lossy());
            }
            k.finish()
        };
        let stamp_path = work.join(format!("cuda-{}.json", src.module));
        let fresh = cache::read_stamp::<CudaStamp>(&stamp_path).filter(|s| {
            s.key == key
                && s.inputs.iter().all(|(p, h)| self.hash_of(p).as_deref() == Some(h.as_str()))
                && cache::file_hash(&ptx_path).as_deref() == Some(s.ptx_hash.as_str())
        });
        let was_fresh = fresh.is_some();
        // The shared cache's key cannot hold this checkout's paths: flags and the source are
        // named relative to the package, the source by its content too; the entry records the
        // other files nvcc read, checked before it is used.
        let shared_key = self.shared.as_ref().and_then(|_| {
            let mut k = Key::new("cuda-shared-v1");
            k.str(&nvcc.tool.version).str(&nvcc.host_key()).str(&relative(&src.path, &self.krate.dir).to_string_lossy());
            k.str(&self.hash_of(&src.path)?);
            for f in compile.flags() {
                k.str(&relative_flag(&f.to_string_lossy(), &self.krate.dir));
            }
            Some(k.finish())
        });
        let shared_hit = match (&fresh, &shared_key) {
            (None, Some(sk)) => self
                .shared_fetch(sk, &[("ptx", &ptx_path)], |meta| {
                    serde_json::from_value::<SharedCuda>(meta.clone())
                        .is_ok_and(|m| m.inputs.iter().all(|(p, h)| self.hash_of(&self.krate.dir.join(p)).as_deref() == Some(h.as_str())))
                })
                .and_then(|meta| serde_json::from_value::<SharedCuda>(meta).ok())
                .map(|m| {
                    let inputs = m.inputs.into_iter().map(|(p, h)| (self.krate.dir.join(p), h)).collect();
                    CudaStamp { key: key.clone(), inputs, ptx_hash: cache::file_hash(&ptx_path).unwrap_or_default(), kernels: m.kernels }
                }),
            _ => None,
        };
        if let Some(stamp) = &shared_hit {
            cache::write_stamp(&stamp_path, stamp)?;
        }
        let stamp = match fresh.or(shared_hit) {
            Some(s) => s,
            None => {
                reporter.report(Event::Status {
                    verb: "Compiling",
                    message: format!("{} (CUDA, {}) for {arch}", self.krate.name, relative(&src.path, &self.krate.dir).display()),
                });
                let read = compile.run()?;
                let inputs: Vec<(PathBuf, String)> = read.iter().filter_map(|p| Some((p.clone(), cache::file_hash(p)?))).collect();
                let text = std::fs::read_to_string(&ptx_path).map_err(|e| Error::io("read", &ptx_path, e))?;
                let kernels = crate::ptx::Module::parse(&text).entries.into_iter().map(|e| e.name).collect();
                let stamp = CudaStamp { key, inputs, ptx_hash: cache::file_hash(&ptx_path).unwrap_or_default(), kernels };
                cache::write_stamp(&stamp_path, &stamp)?;
                if let Some(sk) = &shared_key {
                    let inputs = stamp.inputs.iter().map(|(p, h)| (relative(p, &self.krate.dir), h.clone())).collect();
                    self.shared_store(sk, &[("ptx", &ptx_path)], &SharedCuda { inputs, kernels: stamp.kernels.clone() });
                }
                stamp
            }
        };
        reporter.report(Event::StepDone);
        let module = Module { name: &src.module, source: Some(&src.path), kernels: &stamp.kernels, root: &self.krate.dir };
        let artifacts = self.with_cubin(arch, &module, &ptx_path, &stamp.ptx_hash, was_fresh, work, reporter)?;
        // Signatures are the same for every arch: read once, for the first.
        let signatures = match first_arch {
            true => self.preprocessed_signatures(&compile, &stamp, work, reporter).map(|s| (src.module.clone(), s)),
            false => None,
        };
        let _ = std::fs::remove_file(&kept);
        Ok(JobOut { artifacts, inputs: stamp.inputs.into_iter().map(|(p, _)| p).collect(), signatures })
    }

    /// The kernels of a .cu file read from its preprocessed translation unit, where the source
    /// does not show every PTX entry (kernels stamped out by macros, as candle's are); `None`
    /// where the source shows them all (no extra nvcc run). Cached in the arch's work folder,
    /// keyed by the compile's key and the content of every file nvcc read.
    fn preprocessed_signatures(
        &self,
        compile: &CudaCompile<'_>,
        stamp: &CudaStamp,
        work: &Path,
        reporter: &dyn Reporter,
    ) -> Option<Vec<crate::signature::KernelSig>> {
        let source = crate::signature::cuda_kernels(&compile.source.path).unwrap_or_default();
        let shown = |entry: &String| {
            let name = crate::cxx::demangle(entry).map(|d| d.name().to_string()).unwrap_or_else(|| entry.clone());
            source.iter().any(|s| s.name == name)
        };
        if stamp.kernels.iter().all(shown) {
            return None;
        }
        let mut key = Key::new("preprocessed-signatures-v1");
        key.str(&stamp.key);
        for (path, hash) in &stamp.inputs {
            key.str(&path.to_string_lossy()).str(hash);
        }
        let key = key.finish();
        let path = work.join(format!("signatures-{}.json", compile.source.module));
        if let Some(cached) = cache::read_stamp::<SignatureStamp>(&path).filter(|s| s.key == key) {
            return Some(cached.sigs);
        }
        let text = match compile.keep_preprocessed.and_then(|p| std::fs::read_to_string(p).ok()) {
            Some(text) => Ok(text),
            None => compile.preprocess(),
        };
        let read = text.and_then(|text| crate::signature::cuda_kernels_preprocessed(&text, compile.package_dir));
        match read {
            Ok(sigs) => {
                // Not cached is only slower: the next build reads them again.
                let _ = cache::write_stamp(&path, &SignatureStamp { key, sigs: sigs.clone() });
                Some(sigs)
            }
            Err(e) => {
                let d = Diagnostic::warning(format!(
                    "the kernels of {} that macros stamp out get no typed launch method: {e}",
                    relative(&compile.source.path, &self.krate.dir).display()
                ));
                reporter.report(Event::Diagnostic(&d));
                None
            }
        }
    }

    /// The PTX artifact and, for `sm_XX` archs with ptxas found, the cubin: the one ptxas step
    /// of Rust and CUDA kernels. Keyed by the PTX, the ptxas and the arch.
    #[allow(clippy::too_many_arguments)]
    fn with_cubin(
        &self,
        arch: Arch,
        module: &Module<'_>,
        ptx_path: &Path,
        ptx_hash: &str,
        ptx_fresh: bool,
        work: &Path,
        reporter: &dyn Reporter,
    ) -> Result<Vec<Artifact>> {
        let artifact = |kind, path: PathBuf, kernels, fresh| Artifact {
            package: self.krate.name.clone(),
            module: module.name.to_string(),
            source: module.source.map(Path::to_path_buf),
            arch: arch.to_string(),
            kind,
            path,
            kernels,
            fresh,
        };
        let mut artifacts = vec![artifact(
            ArtifactKind::Ptx,
            ptx_path.to_path_buf(),
            module.kernels.iter().map(|k| KernelInfo::named(k)).collect(),
            ptx_fresh,
        )];
        let Some(ptxas_tool) = self.cuda.ptxas.as_ref().filter(|_| arch.makes_cubin()) else {
            return Ok(artifacts);
        };
        let cubin = ptx_path.with_extension("cubin");
        let key = Key::new("ptxas-v1")
            .str(ptx_hash)
            .str(&ptxas_tool.version)
            .str(&ptxas_tool.path.to_string_lossy())
            .str(&arch.to_string())
            .finish();
        let stamp_path = work.join(format!("ptxas-{}.json", module.name));
        let stamp = cache::read_stamp::<PtxasStamp>(&stamp_path)
            .filter(|s| s.key == key && cache::file_hash(&cubin).as_deref() == Some(s.cubin_hash.as_str()));
        let fresh = stamp.is_some();
        let shared_hit = match stamp {
            Some(_) => None,
            None => self
                .shared_fetch(&key, &[("cubin", &cubin)], |m| serde_json::from_value::<Vec<Resources>>(m.clone()).is_ok())
                .and_then(|m| serde_json::from_value::<Vec<Resources>>(m).ok()),
        };
        if let Some(r) = &shared_hit {
            cache::write_stamp(
                &stamp_path,
                &PtxasStamp { key: key.clone(), cubin_hash: cache::file_hash(&cubin).unwrap_or_default(), resources: r.clone() },
            )?;
        }
        let resources = match stamp.map(|s| s.resources).or(shared_hit) {
            Some(r) => r,
            None => {
                reporter.report(Event::Status {
                    verb: "Assembling",
                    message: format!("{} ({}) for {arch} (ptxas {})", self.krate.name, module.name, ptxas_tool.version),
                });
                let r = ptxas::assemble(ptxas_tool, self.launcher.as_deref(), ptx_path, arch, &cubin, &self.krate.name, module.root)?;
                self.shared_store(&key, &[("cubin", &cubin)], &r);
                cache::write_stamp(
                    &stamp_path,
                    &PtxasStamp { key, cubin_hash: cache::file_hash(&cubin).unwrap_or_default(), resources: r.clone() },
                )?;
                r
            }
        };
        artifacts.push(artifact(ArtifactKind::Cubin, cubin, resources.iter().map(KernelInfo::from).collect(), fresh));
        Ok(artifacts)
    }
}

/// The `launcher` program of a crate, found on PATH (or as a path), or an error saying how to get it.
fn find_launcher(krate: &KernelCrate) -> Result<Option<PathBuf>> {
    let Some(name) = &krate.config.launcher else { return Ok(None) };
    crate::toolchain::find_program(name).map(Some).ok_or_else(|| Error::ToolMissing {
        what: format!("the launcher `{name}`"),
        detail: format!(" (the `launcher` option of `{}`, or CARGO_PTX_LAUNCHER)", krate.name),
        help: format!("install it (`cargo ptx setup --with sccache` installs sccache) or put it on PATH, or unset the option; `{name}` runs nvcc and ptxas"),
    })
}

/// What the shared cache records of an nvcc step: the files nvcc read (relative to the package
/// where they lie below it) with their hashes, and the kernels.
#[derive(Serialize, Deserialize)]
struct SharedCuda {
    inputs: Vec<(PathBuf, String)>,
    kernels: Vec<String>,
}

/// A flag with the package folder's path made relative (`-I/abs/pkg/include` -> `-Iinclude`),
/// for keys that hold across checkouts.
fn relative_flag(flag: &str, dir: &Path) -> String {
    flag.replace(&crate::diag::dir_prefix(dir), "")
}

/// Why a kernel may not have this name, if it may not.
fn reserved_name(name: &str) -> Option<&'static str> {
    if name.starts_with("__nv_") {
        Some("has the name of a libdevice function (`__nv_*`): linking libdevice would make calls of that function call the kernel instead")
    } else if name.starts_with("llvm.") {
        Some("has the name of an LLVM intrinsic (`llvm.*`), which LLVM reserves")
    } else {
        None
    }
}

/// A PTX module of a crate: the Rust kernels, or one .cu file.
struct Module<'a> {
    name: &'a str,
    source: Option<&'a Path>,
    kernels: &'a [String],
    /// What relative `.file` paths in the PTX are relative to (see `rust::rustflags` and
    /// `cuda::relative_file_lines`).
    root: &'a Path,
}

/// Runs `f(0..n)` on up to `jobs` threads; results in index order. Inside a build script that
/// cargo gave a jobserver, every thread past the first works only while it holds a jobserver
/// token, so nested builds share cargo's `-j` instead of adding to it. Tokens are polled, never
/// waited for: a thread that would wait while the first thread drains the queue could wait
/// forever when sibling build scripts hold every token the same way.
fn parallel<T: Send>(jobs: usize, n: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    // SAFETY: `from_env` takes over the file descriptors named in CARGO_MAKEFLAGS/MAKEFLAGS;
    // nothing else in this process uses them.
    let client = if std::env::var_os("CARGO_MAKEFLAGS").is_some() { unsafe { jobserver::Client::from_env() } } else { None };
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, T)>> = Mutex::new(Vec::with_capacity(n));
    std::thread::scope(|s| {
        for worker in 0..jobs.min(n) {
            let (next, results, f, client) = (&next, &results, &f, &client);
            s.spawn(move || loop {
                if next.load(Ordering::SeqCst) >= n {
                    break;
                }
                // The first worker runs on the token cargo gave this build script.
                let token = match client {
                    Some(c) if worker > 0 => match c.try_acquire() {
                        Ok(Some(t)) => Some(t),
                        Ok(None) => {
                            std::thread::sleep(std::time::Duration::from_millis(10));
                            continue;
                        }
                        Err(_) => None, // a jobserver we cannot read: run as if there were none
                    },
                    _ => None,
                };
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= n {
                    break;
                }
                let r = f(i);
                drop(token);
                results.lock().unwrap_or_else(|e| e.into_inner()).push((i, r));
            });
        }
    });
    let mut results = results.into_inner().unwrap_or_else(|e| e.into_inner());
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}
