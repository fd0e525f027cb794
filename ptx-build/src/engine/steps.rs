//! The per-arch steps of a crate, each a [`CachedStep`]: the Rust link, nvcc for one .cu file,
//! and ptxas for the PTX of either.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::job::CrateJob;
use crate::arch::Arch;
use crate::backend::link::ArchLink;
use crate::backend::ptxas::{self, Resources};
use crate::cache::{CachedStep, Key, Outcome};
use crate::cuda::CudaCompile;
use crate::diag::{joined, path_from, relative, Diagnostic};
use crate::embed::signature::KernelSig;
use crate::error::Result;
use crate::project::CudaSource;
use crate::report::{Artifact, ArtifactKind, Event, KernelInfo, Reporter};
use crate::rust::RustKernels;

/// What a job produced.
pub(super) struct JobOut {
    pub artifacts: Vec<Artifact>,
    /// Files the job read (a .cu file and its headers).
    pub inputs: Vec<PathBuf>,
    /// For a .cu file's highest arch (see `signature_arch`), when a Builder asks for
    /// signatures: its module name and kernel signatures.
    pub cuda_signatures: Option<(String, Vec<KernelSig>)>,
    /// nvcc's warnings, with the archs they are for.
    pub warnings: Vec<(Diagnostic, String)>,
}

/// What the nvcc step records.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct CudaRecord {
    /// Every file nvcc read outside the CUDA install, relative to the package where it lies
    /// below it (so the record holds in another checkout), with its content hash.
    pub inputs: Vec<(PathBuf, String)>,
    /// The PTX's kernels.
    pub kernels: Vec<String>,
    /// Those that sync their grid, which only a cooperative launch allows
    /// ([`crate::backend::ptx::cooperative_entries`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cooperative: Vec<String>,
    /// nvcc's output when it holds warnings (`cuda::Compiled::output`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub output: String,
}

/// A PTX module of a crate: the Rust kernels, or one .cu file.
struct Module<'a> {
    name: &'a str,
    source: Option<&'a Path>,
    kernels: &'a [String],
    /// Those that sync their grid ([`CudaRecord::cooperative`]).
    cooperative: &'a [String],
    /// What relative `.file` paths in the PTX are relative to (see `rust::Frontend`'s flags and
    /// `ptx::relative_file_lines`).
    root: &'a Path,
}

impl CrateJob<'_> {
    /// The keys of one nvcc step (`tags`: the target dir's, the step cache's), for the PTX and
    /// the static-library paths alike. The target dir's holds this checkout's paths and nvcc's.
    /// The step cache's cannot: flags and the source are named relative to the package, the
    /// source by its content too; the record's other inputs are checked before an entry is used.
    pub(super) fn nvcc_keys(
        &self,
        tags: (&str, &str),
        nvcc: &crate::cuda::Nvcc,
        src: &CudaSource,
        flags: &[std::ffi::OsString],
    ) -> (String, Option<(&crate::cache::StepCache, String)>) {
        let mut k = Key::new(tags.0);
        k.str(&nvcc.tool.version).str(&nvcc.tool.path.to_string_lossy()).str(&nvcc.host_key()).str(&src.path.to_string_lossy());
        for f in flags {
            k.str(&f.to_string_lossy());
        }
        let key = k.finish();
        let shared = match (&self.step_cache, self.hash_of(&src.path)) {
            (Some(cache), Some(source_hash)) => {
                let mut k = Key::new(tags.1);
                k.str(&nvcc.tool.version).str(&nvcc.host_key()).str(&relative(&src.path, &self.krate.dir).to_string_lossy());
                k.str(&source_hash);
                // A flag with the package folder's path made relative (`-I/abs/pkg/include` -> `-Iinclude`).
                let prefix = crate::diag::dir_prefix(&self.krate.dir);
                for f in flags {
                    k.str(&f.to_string_lossy().replace(&prefix, ""));
                }
                Some((cache, k.finish()))
            }
            _ => None,
        };
        (key, shared)
    }

    /// The Rust module linked for `arch`, then assembled.
    pub(super) fn rust_arch(&self, arch: Arch, rust: &RustKernels, reporter: &dyn Reporter) -> Result<JobOut> {
        let (toolchain, llvm) = self.rust.expect("rust jobs only with a toolchain");
        let work = self.work.join(arch.to_string());
        let ptx_path = self.out_dir.join(arch.to_string()).join(format!("{}.ptx", self.krate.lib_name));
        let config = &self.krate.config;
        let key = {
            // The link stage's recipe (its rewrites and default flags), then the inputs.
            let mut k = Key::new(crate::backend::link::RECIPE);
            k.str(&rust.module_hash).str(&rust.kernels.join(",")).str(&self.libdevice_hash).str(&toolchain.version);
            k.str(&arch.to_string()).str(&config.ptx_isa.map(|i| i.to_string()).unwrap_or_default());
            k.str(&format!("{:?}{}", config.profile, config.ftz));
            k.str(&format!("fmad={} unroll={:?}", config.fmad, config.unroll_threshold));
            k.finish()
        };
        let step = CachedStep {
            stamp: work.join("link.json"),
            shared: self.step_cache.as_ref().map(|c| (c, key.clone())),
            key,
            outputs: vec![("ptx", ptx_path.clone())],
        };
        let done = step.run(
            |_: &()| true,
            || {
                reporter.report(Event::Status { verb: "Linking", message: format!("{} for {arch}", self.krate.name) });
                ArchLink {
                    llvm,
                    package: &self.krate.name,
                    module: &rust.module,
                    kernels: &rust.kernels,
                    libdevice: self.cuda.libdevice.as_ref(),
                    arch,
                    ptx_isa: config.ptx_isa,
                    ftz: config.ftz,
                    fmad: config.fmad,
                    unroll_threshold: config.unroll_threshold.map(|t| t.0),
                    profile: config.profile,
                    work_dir: &work,
                    out: &ptx_path,
                }
                .run()?;
                crate::backend::ptx::relative_file_lines(&ptx_path, &self.krate.workspace_root, None)
            },
        )?;
        reporter.report(Event::StepDone);
        let module = Module {
            name: &self.krate.lib_name,
            source: self.krate.lib_src.as_deref(),
            kernels: &rust.kernels,
            // ptx-device has no grid sync.
            cooperative: &[],
            root: &self.krate.workspace_root,
        };
        let artifacts = self.with_cubin(arch, &module, &ptx_path, &done.hashes[0], done.outcome == Outcome::Fresh, &work, reporter)?;
        Ok(JobOut { artifacts, inputs: Vec::new(), cuda_signatures: None, warnings: Vec::new() })
    }

    /// One .cu file compiled by nvcc for `arch`, then assembled.
    pub(super) fn cuda_arch(&self, arch: Arch, src: &CudaSource, reporter: &dyn Reporter) -> Result<JobOut> {
        let work = self.work.join(arch.to_string());
        let ptx_path = self.out_dir.join(arch.to_string()).join(format!("{}.ptx", src.module));
        // The signature stage reads kernels that macros stamp out (candle's style) from the
        // preprocessed unit nvcc keeps on the way (not under a launcher: sccache would not cache
        // a `-keep` compile), for the file's highest arch: kernels under `#if __CUDA_ARCH__ >= 800`
        // (candle's bf16 and fp8 ones) are in its unit and not in sm_75's.
        let first_arch = signature_arch(self.archs_of(src)) == Some(arch);
        let kept = self.kept_unit(arch, src);
        let _ = std::fs::remove_file(&kept);
        let keep = first_arch && self.launcher.is_none() && self.opts.signatures;
        let compile = self.cuda_compile(arch, src, &work, &ptx_path, keep.then_some(kept.as_path()));
        let nvcc = compile.nvcc;
        // Keyed by the flags, nvcc and its host compiler; the record adds the hash of every file
        // nvcc read last time (headers inside the CUDA install are covered by its version).
        let (key, shared) = self.nvcc_keys(("cuda-v4", "cuda-shared-v3"), nvcc, src, &compile.flags());
        let step =
            CachedStep { stamp: work.join(format!("cuda-{}.json", src.module)), key, shared, outputs: vec![("ptx", ptx_path.clone())] };
        let done = step.run(
            |r: &CudaRecord| self.inputs_unchanged(&r.inputs),
            || {
                reporter.report(Event::Status {
                    verb: "Compiling",
                    message: format!("{} (CUDA, {}) for {arch}", self.krate.name, relative(&src.path, &self.krate.dir).display()),
                });
                let compiled = compile.run()?;
                let inputs = self.record_inputs(&compiled.read, nvcc);
                let text = std::fs::read_to_string(&ptx_path).map_err(|e| crate::error::Error::io("read", &ptx_path, e))?;
                let kernels = crate::backend::ptx::Module::parse_entries(&text).entries.into_iter().map(|e| e.name).collect();
                // A scan of the whole PTX, so only where cooperative groups are included.
                let cooperative = if compiled.cooperative_groups { crate::backend::ptx::cooperative_entries(&text) } else { Vec::new() };
                Ok(CudaRecord { inputs, kernels, cooperative, output: compiled.output })
            },
        )?;
        reporter.report(Event::StepDone);
        let record = done.meta;
        let module = Module {
            name: &src.module,
            source: Some(&src.path),
            kernels: &record.kernels,
            cooperative: &record.cooperative,
            root: &self.krate.dir,
        };
        let artifacts = self.with_cubin(arch, &module, &ptx_path, &done.hashes[0], done.outcome == Outcome::Fresh, &work, reporter)?;
        let inputs = record.inputs.iter().map(|(p, _)| joined(&self.krate.dir, p)).collect();
        let cuda_signatures = match first_arch && self.opts.signatures {
            true => Some((src.module.clone(), self.cuda_signatures(arch, src, &record.kernels, (&step, &record), reporter)?)),
            false => None,
        };
        let warnings = self.nvcc_warnings(&record.output, arch, nvcc);
        Ok(JobOut { artifacts, inputs, cuda_signatures, warnings: warnings.into_iter().map(|w| (w, arch.to_string())).collect() })
    }

    /// The files an nvcc run read, each with its content hash, for its step's record: named from
    /// the package folder, `..` for a header outside it (a monorepo's shared include folder), so
    /// the record holds in another checkout and checks that checkout's files; the CUDA install's
    /// and the system's headers by their own paths.
    pub(super) fn record_inputs(&self, read: &[PathBuf], nvcc: &crate::cuda::Nvcc) -> Vec<(PathBuf, String)> {
        let fixed = crate::cuda::install_roots(&nvcc.tool.path);
        let portable = |p: &Path| {
            let fixed = !p.starts_with(&self.krate.dir) && fixed.iter().any(|r| p.starts_with(r));
            if fixed {
                p.to_path_buf()
            } else {
                path_from(p, &self.krate.dir)
            }
        };
        read.iter().filter_map(|p| Some((portable(p), self.hash_of(p)?))).collect()
    }

    /// Where the highest arch's nvcc run keeps the user's parts of the preprocessed unit of `src`.
    pub(super) fn kept_unit(&self, arch: Arch, src: &CudaSource) -> PathBuf {
        self.work.join(arch.to_string()).join(format!("{}.cpp1.ii", src.module))
    }

    /// The nvcc run of `src` for `arch`, as the crate's options ask.
    pub(super) fn cuda_compile<'c>(
        &'c self,
        arch: Arch,
        src: &'c CudaSource,
        work: &'c Path,
        out: &'c Path,
        keep_preprocessed: Option<&'c Path>,
    ) -> CudaCompile<'c> {
        let lone = self.krate.manifest_path.extension().is_some_and(|e| e == "cu");
        CudaCompile {
            nvcc: self.nvcc.expect("cuda jobs only with nvcc"),
            source: src,
            config: &self.krate.config,
            package_dir: &self.krate.dir,
            arch,
            ftz: self.krate.config.ftz,
            fmad: self.krate.config.fmad,
            device_debug: self.krate.config.cuda_gdb,
            out,
            work_dir: work,
            launcher: self.launcher.as_deref(),
            include_help: self.opts.source.include_help(self.krate.options_table.as_ref(), lone),
            keep_preprocessed,
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
        let artifact = |kind, path: PathBuf, kernels, fresh, hash: &str| Artifact {
            package: self.krate.name.clone(),
            module: module.name.to_string(),
            source: module.source.map(Path::to_path_buf),
            arch,
            kind,
            path,
            kernels,
            fresh,
            content_hash: Some(hash.to_string()),
        };
        let mut artifacts = vec![artifact(
            ArtifactKind::Ptx,
            ptx_path.to_path_buf(),
            module.kernels.iter().map(|k| KernelInfo { cooperative: module.cooperative.contains(k), ..KernelInfo::named(k) }).collect(),
            ptx_fresh,
            ptx_hash,
        )];
        let Some(ptxas_tool) = self.cuda.ptxas.as_ref().filter(|_| arch.makes_cubin()) else {
            return Ok(artifacts);
        };
        let cubin = ptx_path.with_extension("cubin");
        let key = Key::new("ptxas-v2")
            .str(ptx_hash)
            .str(&ptxas_tool.version)
            .str(&ptxas_tool.path.to_string_lossy())
            .str(&arch.to_string())
            .finish();
        // The machine's cache is keyed without ptxas's path: the same release installed under
        // another home (a CI cache restored on another runner) makes the same cubin.
        let shared_key = Key::new("ptxas-shared-v1").str(ptx_hash).str(&ptxas_tool.version).str(&arch.to_string()).finish();
        let step = CachedStep {
            stamp: work.join(format!("ptxas-{}.json", module.name)),
            shared: self.step_cache.as_ref().map(|c| (c, shared_key)),
            key,
            outputs: vec![("cubin", cubin.clone())],
        };
        let done = step.run(
            |_: &Vec<Resources>| true,
            || {
                reporter.report(Event::Status {
                    verb: "Assembling",
                    message: format!("{} ({}) for {arch} (ptxas {})", self.krate.name, module.name, ptxas_tool.version),
                });
                ptxas::assemble(ptxas_tool, self.launcher.as_deref(), ptx_path, arch, &cubin, &self.krate.name, module.root)
            },
        )?;
        let kernels = done.meta.iter().map(KernelInfo::from).collect();
        artifacts.push(artifact(ArtifactKind::Cubin, cubin, kernels, done.outcome == Outcome::Fresh, &done.hashes[0]));
        Ok(artifacts)
    }
}

/// The arch whose preprocessed unit a .cu file's signatures are read from: the highest
/// capability (the first of equals), whose `#if __CUDA_ARCH__` branches keep the most kernels.
fn signature_arch(archs: &[Arch]) -> Option<Arch> {
    archs.iter().copied().reduce(|best, a| if a.capability > best.capability { a } else { best })
}
