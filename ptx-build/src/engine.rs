//! The build: kernel crates -> archs -> Rust front end -> per-arch link and ptxas, in parallel,
//! every step cached by content.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::arch::{self, Arch, ArchRequest};
use crate::cache::{self, Key};
use crate::config::{self, KernelCrate, PtxIsa};
use crate::diag::Diagnostic;
use crate::error::{Error, Result};
use crate::link::ArchLink;
use crate::ptxas::{self, Resources};
use crate::report::{Artifact, ArtifactKind, Event, KernelInfo, Reporter};
use crate::rust::{Features, Frontend, Profile, RustKernels};
use crate::toolchain::{self, Cuda, Libdevice, Llvm, Rust};

/// What to build and how: the options of `cargo ptx build`.
#[derive(Clone, Debug, Default)]
pub struct BuildOptions {
    /// `--manifest-path`: the workspace to search when no `paths` are given.
    pub manifest_path: Option<PathBuf>,
    /// Package folders, workspace folders or manifests to build.
    pub paths: Vec<PathBuf>,
    /// `-p NAME`.
    pub packages: Vec<String>,
    /// `--arch` values (lists, `all`, `native`). Empty: each crate's `archs`, else `native`.
    pub archs: Vec<ArchRequest>,
    pub release: bool,
    pub features: Features,
    /// `--target-dir`; default: the kernel crate's workspace target dir.
    pub target_dir: Option<PathBuf>,
    /// `--ptx-isa`, over the crate's `ptx-isa`.
    pub ptx_isa: Option<PtxIsa>,
    /// The rustup toolchain, over the crate's `toolchain`.
    pub toolchain: Option<String>,
    /// Parallel link/ptxas jobs; default: the number of CPUs.
    pub jobs: Option<usize>,
    /// Colored rustc diagnostics.
    pub color: bool,
}

/// Everything a build produced.
#[derive(Clone, Debug, Default)]
pub struct BuildOutput {
    pub crates: Vec<CrateOutput>,
}

/// One kernel crate's results.
#[derive(Clone, Debug)]
pub struct CrateOutput {
    pub name: String,
    /// The lib target's crate name: names the artifacts.
    pub lib_name: String,
    /// The lib target's root file.
    pub lib_src: Option<PathBuf>,
    pub manifest_path: PathBuf,
    pub archs: Vec<Arch>,
    pub kernels: Vec<String>,
    pub artifacts: Vec<Artifact>,
    /// Every input file (for `cargo:rerun-if-changed`).
    pub sources: Vec<PathBuf>,
}

impl BuildOptions {
    pub fn profile(&self) -> Profile {
        if self.release {
            Profile::Release
        } else {
            Profile::Debug
        }
    }

    /// Runs the build, reporting progress to `reporter`.
    pub fn run(&self, reporter: &dyn Reporter) -> Result<BuildOutput> {
        let started = Instant::now();
        let crates = config::find_kernel_crates(self.manifest_path.as_deref(), &self.paths, &self.packages)?;
        for k in &crates {
            for w in &k.warnings {
                reporter.report(Event::Diagnostic(w));
            }
        }
        let cuda = Cuda::find();
        if let Some(mix) = &cuda.mixed {
            reporter.report(Event::Diagnostic(&Diagnostic::warning(mix.clone())));
        }
        let mut toolchains: HashMap<String, Rust> = HashMap::new();
        let mut output = BuildOutput::default();
        let mut warned_no_ptxas = false;
        let libdevice_hash = cuda.libdevice.as_ref().and_then(|l| cache::file_hash(&l.path)).unwrap_or_default();

        for krate in &crates {
            let tc = self
                .toolchain
                .clone()
                .or_else(|| krate.config.toolchain.clone())
                .unwrap_or_else(|| toolchain::DEFAULT_TOOLCHAIN.to_string());
            if !toolchains.contains_key(&tc) {
                toolchains.insert(tc.clone(), Rust::find(&tc)?);
            }
            let rust = &toolchains[&tc];
            let llvm = rust.require()?;
            let archs = self.resolve_archs(krate, llvm, &cuda)?;
            let ptx_isa = self.ptx_isa.or(krate.config.ptx_isa);
            if let Some(isa) = ptx_isa {
                check_ptx_isa(isa, llvm, rust)?;
            }
            if cuda.ptxas.is_none() && archs.iter().any(Arch::makes_cubin) && !warned_no_ptxas {
                warned_no_ptxas = true;
                reporter.report(Event::Diagnostic(
                    &Diagnostic::warning("ptxas not found: built PTX only, no cubins (the driver will JIT-compile the PTX at load time)")
                        .note("run `cargo ptx setup` to install NVIDIA's ptxas, or set PTXAS or CUDA_PATH"),
                ));
            }
            let job = CrateJob { opts: self, krate, rust, llvm, cuda: &cuda, archs, ptx_isa, libdevice_hash: &libdevice_hash };
            output.crates.push(job.run(reporter)?);
        }
        let archs: Vec<String> = {
            let mut all: Vec<Arch> = output.crates.iter().flat_map(|c| c.archs.iter().copied()).collect();
            all.sort();
            all.dedup();
            all.iter().map(Arch::to_string).collect()
        };
        reporter.report(Event::Status {
            verb: "Finished",
            message: format!("{} [{}] in {:.2}s", self.profile().dir_name(), archs.join(", "), started.elapsed().as_secs_f64()),
        });
        Ok(output)
    }

    fn resolve_archs(&self, krate: &KernelCrate, llvm: &Llvm, cuda: &Cuda) -> Result<Vec<Arch>> {
        let requests = if !self.archs.is_empty() {
            self.archs.clone()
        } else if let Some(a) = &krate.config.archs {
            a.clone()
        } else {
            match arch::native() {
                Ok(native) => native.into_iter().map(ArchRequest::Arch).collect(),
                Err(Error::NoNativeGpu { why }) => {
                    return Err(Error::NoArch { package: krate.name.clone(), manifest: krate.manifest_path.clone(), why })
                }
                Err(e) => return Err(e),
            }
        };
        let llvm_supported = llvm.supported();
        let ptxas_supported = cuda.ptxas_supported();
        let mut archs = Vec::new();
        for r in requests {
            match r {
                ArchRequest::Arch(a) => archs.push(a),
                ArchRequest::Native => archs.extend(arch::native()?),
                ArchRequest::All => {
                    let all = llvm_supported.all();
                    archs.extend(all.into_iter().filter(|a| ptxas_supported.as_ref().is_none_or(|p| p.contains(a))));
                }
            }
        }
        archs.sort();
        archs.dedup();
        for a in &archs {
            if !llvm_supported.contains(a) {
                return Err(Error::UnsupportedArch {
                    arch: a.to_string(),
                    tool: "LLVM",
                    version: llvm.bin.display().to_string(),
                    path: llvm.tool("llc"),
                    help: format!("this nightly's LLVM knows: {}; a newer nightly may know more", llvm_supported.describe()),
                });
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
    Err(Error::UnsupportedArch {
        arch: format!("PTX ISA {isa}"),
        tool: "LLVM",
        version: rust.llvm_version.clone(),
        path: llvm.tool("llc"),
        help: format!("choose one of: {}", list.join(", ")),
    })
}

struct CrateJob<'a> {
    opts: &'a BuildOptions,
    krate: &'a KernelCrate,
    rust: &'a Rust,
    llvm: &'a Llvm,
    cuda: &'a Cuda,
    archs: Vec<Arch>,
    ptx_isa: Option<PtxIsa>,
    libdevice_hash: &'a str,
}

#[derive(Serialize, Deserialize)]
struct LinkStamp {
    key: String,
    ptx_hash: String,
}

#[derive(Serialize, Deserialize)]
struct PtxasStamp {
    key: String,
    cubin_hash: String,
    resources: Vec<Resources>,
}

impl CrateJob<'_> {
    fn target_dir(&self) -> PathBuf {
        self.opts.target_dir.clone().unwrap_or_else(|| self.krate.target_dir.clone())
    }

    fn run(&self, reporter: &dyn Reporter) -> Result<CrateOutput> {
        let target = self.target_dir();
        let out_dir = target.join("ptx").join(self.opts.profile().dir_name()).join(&self.krate.name);
        // Stamps and scratch files are per manifest: two workspaces sharing a target dir
        // (CARGO_TARGET_DIR) may both have a kernel crate of this name.
        let manifest_key = Key::new("manifest").str(&self.krate.manifest_path.to_string_lossy()).finish();
        let work = out_dir.join(format!(".work-{}", &manifest_key[..12]));
        cache::create_dir_all(&work)?;
        reporter.report(Event::Plan { steps: 1 + self.archs.len() * 2 });

        let rust = if self.krate.config.rust {
            let fe = Frontend {
                rust: self.rust,
                llvm: self.llvm,
                krate: self.krate,
                profile: self.opts.profile(),
                features: &self.opts.features,
                cpu: *self.archs.iter().min().expect("at least one arch"),
                cargo_target_dir: target.join("ptx").join("cargo"),
                work_dir: work.clone(),
                color: self.opts.color,
            };
            Some(fe.compile(reporter)?)
        } else {
            None
        };
        reporter.report(Event::StepDone);
        let Some(rust) = rust else {
            return Ok(CrateOutput {
                name: self.krate.name.clone(),
                lib_name: self.krate.lib_name.clone(),
                lib_src: self.krate.lib_src.clone(),
                manifest_path: self.krate.manifest_path.clone(),
                archs: self.archs.clone(),
                kernels: vec![],
                artifacts: vec![],
                sources: vec![],
            });
        };

        let artifacts = self.per_arch(&rust, &out_dir, &work, reporter)?;
        if rust.fresh && artifacts.iter().all(|a| a.fresh) {
            reporter.report(Event::Status { verb: "Fresh", message: self.krate.name.clone() });
        }
        for a in &artifacts {
            reporter.report(Event::Artifact(a));
        }
        let sources = rust.sources.clone();
        Ok(CrateOutput {
            name: self.krate.name.clone(),
            lib_name: self.krate.lib_name.clone(),
            lib_src: self.krate.lib_src.clone(),
            manifest_path: self.krate.manifest_path.clone(),
            archs: self.archs.clone(),
            kernels: rust.kernels.clone(),
            artifacts,
            sources,
        })
    }

    /// Links and assembles every arch, `jobs` at a time.
    fn per_arch(&self, rust: &RustKernels, out_dir: &Path, work: &Path, reporter: &dyn Reporter) -> Result<Vec<Artifact>> {
        let jobs = self.opts.jobs.unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)).max(1);
        let next = AtomicUsize::new(0);
        let results: Mutex<Vec<(usize, Result<Vec<Artifact>>)>> = Mutex::new(Vec::new());
        std::thread::scope(|s| {
            for _ in 0..jobs.min(self.archs.len()) {
                s.spawn(|| loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(arch) = self.archs.get(i) else { break };
                    let r = self.one_arch(*arch, rust, out_dir, &work.join(arch.to_string()), reporter);
                    results.lock().unwrap_or_else(|e| e.into_inner()).push((i, r));
                });
            }
        });
        let mut results = results.into_inner().unwrap_or_else(|e| e.into_inner());
        results.sort_by_key(|(i, _)| *i);
        let mut artifacts = Vec::new();
        for (_, r) in results {
            artifacts.extend(r?);
        }
        Ok(artifacts)
    }

    fn one_arch(&self, arch: Arch, rust: &RustKernels, out_dir: &Path, work: &Path, reporter: &dyn Reporter) -> Result<Vec<Artifact>> {
        let arch_dir = out_dir.join(arch.to_string());
        let ptx_path = arch_dir.join(format!("{}.ptx", self.krate.lib_name));
        let profile = self.opts.profile();
        let libdevice: Option<&Libdevice> = self.cuda.libdevice.as_ref();

        // Link: keyed by the module, libdevice, LLVM, arch and flags.
        let link_key = {
            let mut k = Key::new("link-v1");
            k.str(&rust.module_hash).str(&rust.kernels.join(",")).str(self.libdevice_hash).str(&self.rust.version);
            k.str(&arch.to_string()).str(&self.ptx_isa.map(|i| i.to_string()).unwrap_or_default());
            k.str(&format!("{:?}{}", profile, self.krate.config.ftz));
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
            None => {
                reporter.report(Event::Status { verb: "Linking", message: format!("{} for {arch}", self.krate.name) });
                ArchLink {
                    llvm: self.llvm,
                    package: &self.krate.name,
                    module: &rust.module,
                    kernels: &rust.kernels,
                    libdevice,
                    arch,
                    ptx_isa: self.ptx_isa,
                    ftz: self.krate.config.ftz,
                    profile,
                    work_dir: work,
                    out: &ptx_path,
                }
                .run()?;
                let h = cache::file_hash(&ptx_path).unwrap_or_default();
                cache::write_stamp(&link_stamp, &LinkStamp { key: link_key, ptx_hash: h.clone() })?;
                h
            }
        };
        reporter.report(Event::StepDone);
        let ptx_artifact = Artifact {
            package: self.krate.name.clone(),
            arch: arch.to_string(),
            kind: ArtifactKind::Ptx,
            path: ptx_path.clone(),
            kernels: rust.kernels.iter().map(|k| KernelInfo::named(k)).collect(),
            fresh: link_fresh,
        };
        let mut artifacts = vec![ptx_artifact];

        // ptxas: keyed by the PTX, the ptxas and the arch.
        let ptxas_tool = self.cuda.ptxas.as_ref().filter(|_| arch.makes_cubin());
        if let Some(ptxas_tool) = ptxas_tool {
            let cubin = arch_dir.join(format!("{}.cubin", self.krate.lib_name));
            let key = Key::new("ptxas-v1")
                .str(&ptx_hash)
                .str(&ptxas_tool.version)
                .str(&ptxas_tool.path.to_string_lossy())
                .str(&arch.to_string())
                .finish();
            let stamp_path = work.join("ptxas.json");
            let stamp = cache::read_stamp::<PtxasStamp>(&stamp_path)
                .filter(|s| s.key == key && cache::file_hash(&cubin).as_deref() == Some(s.cubin_hash.as_str()));
            let fresh = stamp.is_some();
            let resources = match stamp {
                Some(s) => s.resources,
                None => {
                    reporter.report(Event::Status {
                        verb: "Assembling",
                        message: format!("{} for {arch} (ptxas {})", self.krate.name, ptxas_tool.version),
                    });
                    let r = ptxas::assemble(ptxas_tool, &ptx_path, arch, &cubin, &self.krate.name, &self.krate.dir);
                    let r = match r {
                        Err(Error::Ptxas { package, arch, count, diagnostics }) => {
                            for d in &diagnostics {
                                reporter.report(Event::Diagnostic(d));
                            }
                            return Err(Error::Ptxas { package, arch, count, diagnostics });
                        }
                        other => other?,
                    };
                    cache::write_stamp(
                        &stamp_path,
                        &PtxasStamp { key, cubin_hash: cache::file_hash(&cubin).unwrap_or_default(), resources: r.clone() },
                    )?;
                    r
                }
            };
            artifacts.push(Artifact {
                package: self.krate.name.clone(),
                arch: arch.to_string(),
                kind: ArtifactKind::Cubin,
                path: cubin,
                kernels: resources.iter().map(KernelInfo::from).collect(),
                fresh,
            });
        }
        reporter.report(Event::StepDone);
        Ok(artifacts)
    }
}
