//! One kernel crate's build: the front end once, then every (arch, module) job in parallel,
//! then the results gathered into a [`CrateOutput`].

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use super::steps::JobOut;
use super::{pool, BuildOptions, CrateOutput};
use crate::arch::Arch;
use crate::cache::{self, Key, StepCache};
use crate::cuda::Nvcc;
use crate::diag::{relative, Diagnostic};
use crate::embed::signature::KernelSig;
use crate::error::{Error, Result};
use crate::project::KernelCrate;
use crate::report::{Artifact, ArtifactKind, Event, Reporter};
use crate::rust::Frontend;
use crate::tools::{Cuda, Llvm, Rust};

pub(super) struct CrateJob<'a> {
    pub opts: &'a BuildOptions,
    pub krate: &'a KernelCrate,
    /// The toolchain and its LLVM, when the crate has Rust kernels.
    pub rust: Option<(&'a Rust, &'a Llvm)>,
    pub cuda: &'a Cuda,
    pub nvcc: Option<&'a Nvcc>,
    /// Sorted; the first is the lowest.
    pub archs: Vec<Arch>,
    /// Each .cu file's archs (sorted), by index in the crate's `cuda_sources`: the crate's
    /// `archs`, or the file's own from `cuda-file-archs`.
    pub file_archs: Vec<Vec<Arch>>,
    pub libdevice_hash: String,
    /// Content hashes of headers, computed once per build (several archs read them).
    hashes: Mutex<HashMap<PathBuf, Option<String>>>,
    /// The headers the .cu files include, found once per build: the inline-PTX checks before
    /// and after the compiles both read them ([`CrateJob::included_headers`]).
    included: OnceLock<Vec<PathBuf>>,
    /// The machine's step cache, unless off.
    pub step_cache: Option<StepCache>,
    /// The program nvcc and ptxas run through.
    pub launcher: Option<PathBuf>,
    /// The target dir (absolute).
    target: PathBuf,
    /// `<target>/ptx/<profile>/<crate>`: the artifacts.
    pub out_dir: PathBuf,
    /// Stamps and scratch files of this crate, per manifest (see [`CrateJob::new`]).
    pub work: PathBuf,
}

/// One unit of per-arch work.
#[derive(Clone, Copy)]
enum Job {
    /// Link the Rust module for an arch, then ptxas.
    Rust(Arch),
    /// nvcc one .cu file (by index) for an arch, then ptxas.
    Cuda(Arch, usize),
}

impl<'a> CrateJob<'a> {
    pub fn new(
        opts: &'a BuildOptions,
        krate: &'a KernelCrate,
        rust: Option<(&'a Rust, &'a Llvm)>,
        cuda: &'a Cuda,
        nvcc: Option<&'a Nvcc>,
        archs: Vec<Arch>,
        libdevice_hash: &str,
    ) -> Result<Self> {
        // Absolute: the nested cargo runs in another folder, where a relative `--target-dir`
        // would name another place.
        let target = opts.target_dir.clone().unwrap_or_else(|| krate.target_dir.clone());
        let target = std::path::absolute(&target).unwrap_or(target);
        let out_dir = target.join("ptx").join(krate.config.profile.dir_name()).join(&krate.name);
        // Per manifest: two workspaces sharing a target dir (CARGO_TARGET_DIR) may both have a
        // kernel crate of this name.
        let manifest_key = Key::new("manifest").str(&krate.manifest_path.to_string_lossy()).finish();
        let work = out_dir.join(format!(".work-{}", &manifest_key[..12]));
        let file_archs = krate
            .cuda_sources
            .iter()
            .map(|s| match &s.archs {
                Some(requests) => super::archs::resolve_file(krate, s, requests, &archs, nvcc),
                None => Ok(archs.clone()),
            })
            .collect::<Result<_>>()?;
        Ok(CrateJob {
            opts,
            krate,
            rust,
            cuda,
            nvcc,
            archs,
            file_archs,
            libdevice_hash: libdevice_hash.to_string(),
            hashes: Mutex::new(HashMap::new()),
            included: OnceLock::new(),
            step_cache: krate.config.shared_cache.dir().map(StepCache::new),
            launcher: find_launcher(krate)?,
            target,
            out_dir,
            work,
        })
    }

    /// nvcc's warnings in what a run of it printed (`output`, as its step recorded it), each
    /// `-diag-suppress` note said for the front end that started the build.
    pub(super) fn nvcc_warnings(&self, output: &str, arch: Arch, nvcc: &Nvcc) -> Vec<crate::diag::Diagnostic> {
        let flag_help = |flag: &str| self.opts.source.nvcc_flag_help(self.krate.nvcc_flags_table.as_ref(), flag);
        crate::cuda::warnings(output, &self.krate.dir, arch, &nvcc.tool, &flag_help)
    }

    pub fn run(&self, reporter: &dyn Reporter) -> Result<CrateOutput> {
        match self.check_inline_ptx(reporter) {
            // rustc, which the build runs next, says where and why better than syn can.
            Err(Error::RustSyntax { .. }) => {}
            checked => checked?,
        }
        self.prepare_dirs()?;
        self.check_cuda_libraries()?;
        if self.krate.static_lib.is_some() {
            return self.run_static_lib(reporter);
        }
        // (arch, file) pairs: each file for its own archs.
        let mut cuda_jobs: Vec<(Arch, usize)> = match self.nvcc {
            Some(_) => self.archs_with_files().flat_map(|a| self.files_of(a).map(move |i| (a, i))).collect(),
            None => Vec::new(),
        };
        pool::heaviest_first(
            &mut cuda_jobs,
            |(_, i)| &self.krate.cuda_sources[*i].path,
            &self.work.join("weights.json"),
            |p| self.hash_of(p),
        );
        let rust_steps = if self.rust.is_some() { 1 + self.archs.len() } else { 0 };
        reporter.report(Event::Plan { steps: rust_steps + cuda_jobs.len() });

        let frontend = self.frontend();
        let rust = match &frontend {
            Some(fe) => {
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
        let mut jobs: Vec<Job> = cuda_jobs.iter().map(|&(a, i)| Job::Cuda(a, i)).collect();
        if rust.is_some() {
            jobs.extend(self.archs.iter().map(|a| Job::Rust(*a)));
        }
        let results = pool::parallel(self.jobs(), jobs.len(), |i| match jobs[i] {
            Job::Rust(arch) => self.rust_arch(arch, rust.as_ref().expect("rust jobs only with a front end"), reporter),
            Job::Cuda(arch, n) => self.cuda_arch(arch, &self.krate.cuda_sources[n], reporter),
        });
        let (mut artifacts, inputs, cuda_signatures) = self.gather(results, reporter)?;
        self.check_header_asm(&inputs, reporter)?;
        if !self.krate.cuda_sources.is_empty() && self.nvcc.is_none() {
            // The crate's Rust kernels were built above; its .cu files cannot be.
            return Err(self.nvcc_missing());
        }
        artifacts.sort_by(|a, b| (&a.arch, &a.module, a.kind as u8).cmp(&(&b.arch, &b.module, b.kind as u8)));
        self.check_unique_kernels(&artifacts)?;
        self.check_cuda_kernel_names(&artifacts)?;
        if let Some(c) = &self.step_cache {
            c.evict_if_stored();
        }

        if rust.as_ref().is_none_or(|r| r.fresh) && artifacts.iter().all(|a| a.fresh) {
            reporter.report(Event::Status { verb: "Fresh", message: self.krate.name.clone() });
        }
        for a in &artifacts {
            reporter.report(Event::Artifact(a));
        }
        let signatures = match self.opts.signatures {
            true => self.signatures(frontend.as_ref().zip(rust.as_ref()), cuda_signatures, reporter)?,
            false => BTreeMap::new(),
        };
        let mut kernels: Vec<String> = rust.as_ref().map(|r| r.kernels.clone()).unwrap_or_default();
        for a in first_ptx(&artifacts).into_iter().filter(|a| a.module != self.krate.lib_name) {
            kernels.extend(a.kernels.iter().map(|k| k.name.clone()));
        }
        let mut sources: Vec<PathBuf> = rust.map(|r| r.sources).unwrap_or_default();
        sources.extend(inputs);
        sources.extend(self.krate.workspace_manifest.clone());
        Ok(CrateOutput {
            name: self.krate.name.clone(),
            lib_name: self.krate.lib_name.clone(),
            lib_src: self.krate.lib_src.clone(),
            manifest_path: self.krate.manifest_path.clone(),
            archs: self.all_archs(),
            kernels,
            artifacts,
            sources,
            signatures,
            untyped_kernels: self.krate.config.untyped_kernels,
            static_lib: None,
        })
    }

    /// Creates the work folder and removes what a killed build left: its scratch folders and
    /// half-written artifacts.
    fn prepare_dirs(&self) -> Result<()> {
        cache::create_dir_all(&self.work)?;
        cache::remove_stale(&self.work);
        for arch in &self.all_archs() {
            cache::remove_stale(&self.work.join(arch.to_string()));
            cache::remove_stale(&self.out_dir.join(arch.to_string()));
        }
        Ok(())
    }

    /// The Rust front end of the crate, when it has Rust kernels.
    fn frontend(&self) -> Option<Frontend<'_>> {
        let (rust, llvm) = self.rust?;
        Some(Frontend {
            rust,
            llvm,
            krate: self.krate,
            config: &self.krate.config,
            // The lowest arch of the build, so the bitcode is valid for every arch.
            cpu: *self.archs.first()?,
            cargo_target_dir: self.target.join("ptx").join("cargo"),
            work_dir: self.work.clone(),
            color: self.opts.color,
            shared_cache: self.step_cache.as_ref().map(StepCache::root),
            manifest_flags: self.opts.manifest_flags,
        })
    }

    /// The jobs' results: artifacts, the files they read, and the highest arch's nvcc records
    /// (for the signatures of kernels that macros stamp out). A source error every arch hits is
    /// one error: each diagnostic is reported once, with the archs it applies to.
    #[allow(clippy::type_complexity)]
    pub(super) fn gather(
        &self,
        results: Vec<Result<JobOut>>,
        reporter: &dyn Reporter,
    ) -> Result<(Vec<Artifact>, BTreeSet<PathBuf>, BTreeMap<String, Vec<KernelSig>>)> {
        let mut artifacts = Vec::new();
        let mut inputs: BTreeSet<PathBuf> = BTreeSet::new();
        let mut cuda_signatures = BTreeMap::new();
        let mut first_error: Option<Error> = None;
        // The other files that failed: each counted once, whatever its archs.
        let mut other_failures: BTreeSet<PathBuf> = BTreeSet::new();
        let mut diagnostics: Vec<(Diagnostic, Vec<String>)> = Vec::new();
        // The errors that came from nvcc (the rest from ptxas): "(N errors above)" counts those
        // of the failure it ends.
        let mut from_nvcc: Vec<Diagnostic> = Vec::new();
        // Results come file by file, arch by arch: a header's diagnostic recurs across files.
        let mut add = |d: Diagnostic, arch: String| match diagnostics.iter_mut().find(|(seen, _)| *seen == d) {
            Some((_, archs)) if !archs.contains(&arch) => archs.push(arch),
            Some(_) => {}
            None => diagnostics.push((d, vec![arch])),
        };
        for r in results {
            let e = match r {
                Ok(out) => {
                    for (d, arch) in out.warnings {
                        add(d, arch);
                    }
                    artifacts.extend(out.artifacts);
                    inputs.extend(out.inputs);
                    cuda_signatures.extend(out.cuda_signatures);
                    continue;
                }
                Err(e) => e,
            };
            if let Error::Ptxas { diagnostics: ds, arch, .. } | Error::Nvcc { diagnostics: ds, arch, .. } = &e {
                for d in ds {
                    add(d.clone(), arch.clone());
                }
            }
            if let Error::Nvcc { diagnostics: ds, .. } = &e {
                from_nvcc.extend(ds.iter().cloned());
            }
            // The same file failing for several archs: one error naming them all; other files
            // are counted in it.
            match (&mut first_error, e) {
                (Some(Error::Nvcc { file, arch, .. }), Error::Nvcc { file: f2, arch: a2, .. }) if *file == f2 => {
                    arch.push_str(", ");
                    arch.push_str(&a2);
                }
                (Some(Error::Nvcc { others, count, .. }), Error::Nvcc { file: f2, count: c2, .. }) if other_failures.insert(f2.clone()) => {
                    *others += 1;
                    *count += c2;
                }
                (Some(Error::Ptxas { package, arch, .. }), Error::Ptxas { package: p2, arch: a2, .. }) if *package == p2 => {
                    arch.push_str(", ");
                    arch.push_str(&a2);
                }
                (None, e) => first_error = Some(e),
                _ => {}
            }
        }
        let diagnostics = diagnostics.into_iter().map(|(mut d, archs)| {
            if archs.len() > 1 {
                d.notes.push(format!("for {}", archs.join(", ")));
            }
            d
        });
        let shown = crate::diag::group_repeats(diagnostics.collect());
        for d in &shown {
            reporter.report(Event::Diagnostic(d));
        }
        // "(N errors above)" counts what is above, of its own kind: repeats shown as one count
        // once (a grouped diagnostic is nvcc's where its first place was).
        let nvcc_first = matches!(first_error, Some(Error::Nvcc { .. }));
        let same_kind =
            |d: &Diagnostic| from_nvcc.iter().any(|n| n.message == d.message && n.file == d.file && n.line == d.line) == nvcc_first;
        let errors = shown.iter().filter(|d| d.level == crate::diag::Level::Error && same_kind(d)).count();
        if let Some(Error::Nvcc { count, .. } | Error::Ptxas { count, .. }) = &mut first_error {
            *count = errors.max(1);
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok((artifacts, inputs, cuda_signatures)),
        }
    }

    /// The crate's archs and every file's own, sorted.
    pub(super) fn all_archs(&self) -> Vec<Arch> {
        let mut all: Vec<Arch> = self.archs.iter().chain(self.file_archs.iter().flatten()).copied().collect();
        all.sort();
        all.dedup();
        all
    }

    /// Archs some .cu file is built for, sorted (nvcc jobs go arch by arch).
    fn archs_with_files(&self) -> impl Iterator<Item = Arch> + '_ {
        let mut all: Vec<Arch> = self.file_archs.iter().flatten().copied().collect();
        all.sort();
        all.dedup();
        all.into_iter()
    }

    /// The .cu files (by index) built for `arch`.
    fn files_of(&self, arch: Arch) -> impl Iterator<Item = usize> + '_ {
        (0..self.file_archs.len()).filter(move |&i| self.file_archs[i].contains(&arch))
    }

    /// The archs `src` is built for.
    pub(super) fn archs_of(&self, src: &crate::project::CudaSource) -> &[Arch] {
        self.krate.cuda_sources.iter().position(|s| s.module == src.module).map_or(&self.archs, |i| &self.file_archs[i])
    }

    pub(super) fn nvcc_missing(&self) -> Error {
        let n = self.krate.cuda_sources.len();
        Error::ToolMissing {
            what: "nvcc".into(),
            detail: format!(
                " (needed for {n} .cu file{} of `{}`, e.g. {})",
                if n == 1 { "" } else { "s" },
                self.krate.name,
                relative(&self.krate.cuda_sources[0].path, &self.krate.dir).display()
            ),
            help: "run `cargo ptx setup` (installs NVIDIA's nvcc, ptxas and libdevice), or set NVCC or CUDA_PATH".into(),
        }
    }

    pub(super) fn jobs(&self) -> usize {
        self.opts
            .jobs
            .or_else(|| std::env::var("NUM_JOBS").ok().and_then(|n| n.parse().ok()))
            .unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1))
            .max(1)
    }

    /// The content hash of a file, computed once per build.
    pub fn hash_of(&self, path: &Path) -> Option<String> {
        if let Some(h) = self.hashes.lock().unwrap_or_else(|e| e.into_inner()).get(path) {
            return h.clone();
        }
        let h = cache::file_hash(path);
        self.hashes.lock().unwrap_or_else(|e| e.into_inner()).insert(path.to_path_buf(), h.clone());
        h
    }

    /// The headers the crate's .cu files include ([`crate::inline_ptx::crate_headers`]).
    pub fn included_headers(&self) -> &[PathBuf] {
        self.included.get_or_init(|| crate::inline_ptx::crate_headers(self.krate))
    }

    /// Each recorded input (relative to the package folder where it lies below it) still has
    /// the recorded hash.
    pub fn inputs_unchanged(&self, inputs: &[(PathBuf, String)]) -> bool {
        inputs.iter().all(|(p, h)| self.hash_of(&crate::diag::joined(&self.krate.dir, p)).as_deref() == Some(h.as_str()))
    }
}

/// Each module's PTX of its lowest arch (modules may have archs of their own: `cuda-file-archs`).
pub(super) fn first_ptx(artifacts: &[Artifact]) -> Vec<&Artifact> {
    let ptx = || artifacts.iter().filter(|a| a.kind == ArtifactKind::Ptx);
    ptx().filter(|a| ptx().filter(|b| b.module == a.module).all(|b| b.arch >= a.arch)).collect()
}

/// The `launcher` program of a crate, found on PATH (or as a path), or an error saying how to get it.
fn find_launcher(krate: &KernelCrate) -> Result<Option<PathBuf>> {
    let Some(name) = krate.config.launcher.as_ref().filter(|l| !l.trim().is_empty()) else { return Ok(None) };
    crate::tools::find_program(name).map(Some).ok_or_else(|| Error::ToolMissing {
        what: format!("the launcher `{name}`"),
        detail: format!(" (the `launcher` option of `{}`, or CARGO_PTX_LAUNCHER)", krate.name),
        help: format!("install it (`cargo ptx setup --with sccache` installs sccache) or put it on PATH, or unset the option; `{name}` runs nvcc and ptxas"),
    })
}
