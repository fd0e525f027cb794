//! The build.rs API: build kernel crates with the same engine as `cargo ptx build`, embed
//! every artifact into `OUT_DIR`, and generate a module with typed launch methods.
//!
//! ```no_run
//! // build.rs of a host crate with `ptx-build` as a build-dependency
//! fn main() -> Result<(), ptx_build::Error> {
//!     ptx_build::Builder::new()
//!         .kernel_crate("../kernels")
//!         .cuda("cuda/*.cu")
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

use crate::arch::ArchRequest;
use crate::cache;
use crate::codegen::{self, EmbeddedImage, StructLayout, Unit};
use crate::config::{glob_files, CudaFiles};
use crate::diag::{Diagnostic, Level};
use crate::engine::{BuildOptions, BuildOutput};
use crate::error::{Error, Result};
use crate::options::{self, CudaStd, Define, Options, Profile, PtxIsa, Source};
use crate::ptx;
use crate::report::{Artifact, ArtifactKind, Event, Reporter};
use crate::signature;
use crate::toolchain;

/// Builds kernels from a build script and generates the module that embeds them.
///
/// Its kernel options are [`Options`]: each method below sets one, under the same name as
/// the `[package.metadata.ptx]` key and the `cargo ptx build` flag. A value set here wins over
/// the `CARGO_PTX_*` variables and the kernel crate's metadata (a warning says so where the
/// crate sets it differently). Kernels are built in release unless `.profile(Profile::Debug)`.
#[derive(Clone, Debug, Default)]
#[must_use]
pub struct Builder {
    kernel_crates: Vec<PathBuf>,
    cuda: Vec<String>,
    out_file: Option<String>,
    options: Options,
    /// Bad values given to setters, reported by [`Builder::build`] (setters cannot fail).
    invalid: Vec<(&'static str, String)>,
}

/// What [`Builder::build`] wrote.
#[derive(Debug)]
pub struct Generated {
    /// The generated module (`$OUT_DIR/kernels.rs`).
    pub module: PathBuf,
    /// What the engine built.
    pub output: BuildOutput,
}

/// Appends to a list option.
fn push<T>(list: &mut Option<Vec<T>>, item: T) {
    list.get_or_insert_with(Vec::new).push(item);
}

impl Builder {
    /// A builder with nothing to build yet.
    pub fn new() -> Builder {
        Builder::default()
    }

    /// A kernel crate (a package with `[package.metadata.ptx]`), relative to the host crate.
    pub fn kernel_crate(mut self, path: impl Into<PathBuf>) -> Self {
        self.kernel_crates.push(path.into());
        self
    }

    /// CUDA C++ files of the host crate itself: a glob relative to the host crate
    /// (`cuda/*.cu`). A glob that matches nothing is a warning.
    pub fn cuda(mut self, glob: impl Into<String>) -> Self {
        self.cuda.push(glob.into());
        self
    }

    /// The generated file's name in `OUT_DIR` (default `kernels.rs`).
    pub fn out_file(mut self, name: impl Into<String>) -> Self {
        self.out_file = Some(name.into());
        self
    }

    /// Every option set in `options` (over those set before).
    pub fn options(mut self, options: Options) -> Self {
        self.options = options.or(self.options);
        self
    }

    /// `archs`: an arch (`sm_80`, `compute_90`, `all`, `native`) or a comma list; repeatable.
    /// Default: `CARGO_PTX_ARCH`, else the kernel crate's `archs`, else `native`.
    pub fn arch(mut self, arch: impl AsRef<str>) -> Self {
        match crate::arch::parse_list(arch.as_ref()) {
            Ok(list) => list.into_iter().for_each(|a: ArchRequest| push(&mut self.options.archs, a)),
            Err(e) => self.invalid.push(("archs", e.to_string())),
        }
        self
    }

    /// `profile`: [`Profile::Release`] (the default) or [`Profile::Debug`].
    pub fn profile(mut self, profile: Profile) -> Self {
        self.options.profile = Some(profile);
        self
    }

    /// `toolchain`: the rustup toolchain for Rust kernels (default `nightly`).
    pub fn toolchain(mut self, name: impl Into<String>) -> Self {
        self.options.toolchain = Some(name.into());
        self
    }

    /// `features`: a feature of the kernel crates to enable; repeatable.
    pub fn feature(mut self, name: impl Into<String>) -> Self {
        push(&mut self.options.features, name.into());
        self
    }

    /// `all-features`.
    pub fn all_features(mut self, yes: bool) -> Self {
        self.options.all_features = Some(yes);
        self
    }

    /// `no-default-features`.
    pub fn no_default_features(mut self, yes: bool) -> Self {
        self.options.no_default_features = Some(yes);
        self
    }

    /// `ftz`: flush denormals to zero (libdevice's `__CUDA_FTZ`, nvcc `-ftz=true`).
    pub fn ftz(mut self, yes: bool) -> Self {
        self.options.ftz = Some(yes);
        self
    }

    /// `fmad`: contract `a * b + c` into FMA, as nvcc's `-fmad` (Rust kernels: LLVM `contract`
    /// flags on the crate's own code, not libdevice's; CUDA C++: `nvcc -fmad=`). Default true.
    pub fn fmad(mut self, yes: bool) -> Self {
        self.options.fmad = Some(yes);
        self
    }

    /// `unroll-threshold`: opt's `-unroll-threshold` for Rust kernels (IR instructions up to which
    /// a loop with a constant trip count unrolls completely). Default: 1500, what nvcc's build
    /// unrolls (300 is LLVM's own).
    pub fn unroll_threshold(mut self, threshold: u32) -> Self {
        match threshold.to_string().parse::<crate::options::UnrollThreshold>() {
            Ok(t) => self.options.unroll_threshold = Some(t),
            Err(m) => self.invalid.push(("unroll_threshold", m)),
        }
        self
    }

    /// `ptx-isa`: pin the PTX ISA version of Rust kernels (`"7.8"`).
    pub fn ptx_isa(mut self, version: impl AsRef<str>) -> Self {
        match version.as_ref().parse::<PtxIsa>() {
            Ok(v) => self.options.ptx_isa = Some(v),
            Err(m) => self.invalid.push(("ptx_isa", m)),
        }
        self
    }

    /// `rust`: whether the kernel crates' lib targets hold Rust kernels.
    pub fn rust(mut self, yes: bool) -> Self {
        self.options.rust = Some(yes);
        self
    }

    /// `cuda-sources`: a glob of the kernel crates' CUDA C++ files, relative to each kernel
    /// crate (for the host crate's own files, see [`Builder::cuda`]); repeatable.
    pub fn cuda_sources(mut self, glob: impl Into<String>) -> Self {
        push(&mut self.options.cuda_sources, glob.into());
        self
    }

    /// `cuda-include`: an `-I` folder for nvcc, relative to the host crate; repeatable.
    pub fn cuda_include(mut self, dir: impl Into<PathBuf>) -> Self {
        push(&mut self.options.cuda_include, dir.into());
        self
    }

    /// `cuda-defines`: `-D NAME` (`value` `None`) or `-D NAME=VALUE`; repeatable.
    pub fn cuda_define(mut self, name: impl AsRef<str>, value: Option<&str>) -> Self {
        match Define::new(name.as_ref(), value.map(str::to_string)) {
            Ok(d) => push(&mut self.options.cuda_defines, d),
            Err(m) => self.invalid.push(("cuda_defines", m)),
        }
        self
    }

    /// `nvcc-flags`: one extra nvcc flag, passed as it is; repeatable.
    pub fn nvcc_flag(mut self, flag: impl Into<String>) -> Self {
        push(&mut self.options.nvcc_flags, flag.into());
        self
    }

    /// `cuda-std`: nvcc's `-std` (`"c++20"`).
    pub fn cuda_std(mut self, std: impl AsRef<str>) -> Self {
        match std.as_ref().parse::<CudaStd>() {
            Ok(v) => self.options.cuda_std = Some(v),
            Err(m) => self.invalid.push(("cuda_std", m)),
        }
        self
    }

    /// `cuda-gdb`: CUDA C++ for cuda-gdb (nvcc `-G`: device debug info, optimisations off).
    pub fn cuda_gdb(mut self, yes: bool) -> Self {
        self.options.cuda_gdb = Some(yes);
        self
    }

    /// `cuda-libraries`: a CUDA library whose headers the .cu files include (`"cublas"`);
    /// repeatable.
    pub fn cuda_library(mut self, name: impl Into<String>) -> Self {
        push(&mut self.options.cuda_libraries, name.into());
        self
    }

    /// `shared-cache`: the shared step cache folder (relative to the host crate), or `None` to
    /// use none.
    pub fn shared_cache(mut self, dir: Option<impl Into<PathBuf>>) -> Self {
        self.options.shared_cache = Some(match dir {
            Some(d) => crate::options::SharedCacheSetting::Dir(d.into()),
            None => crate::options::SharedCacheSetting::Off,
        });
        self
    }

    /// `launcher`: run nvcc and ptxas through this program (`"sccache"`).
    pub fn launcher(mut self, program: impl Into<String>) -> Self {
        self.options.launcher = Some(program.into());
        self
    }

    /// The kernel options set so far (paths as given, relative to the host crate); a value a
    /// setter could not parse is its error, as [`Builder::build`] would report it.
    pub fn kernel_options(&self) -> Result<Options> {
        if let Some((key, message)) = self.invalid.first() {
            let script =
                std::env::var_os("CARGO_MANIFEST_DIR").map(|d| PathBuf::from(d).join("build.rs")).unwrap_or_else(|| "build.rs".into());
            return Err(Source::Builder(script).error(key, message.clone()));
        }
        Ok(self.options.clone())
    }

    /// Builds, embeds and generates; prints `cargo:rerun-if-*` lines and warnings for cargo.
    ///
    /// Kernel diagnostics name files by absolute path (a build script cannot know the folder
    /// cargo was started in), with the source line and a caret. Directives and warnings are
    /// printed once the build succeeded; on failure the warnings and errors go to stderr
    /// alone, as cargo shows a failed build script's output, with no directive between them.
    pub fn build(self) -> Result<Generated> {
        let reporter = BuildScript::default();
        let result = self.build_reporting(&reporter);
        reporter.finish(result.is_ok());
        result
    }

    fn build_reporting(self, reporter: &BuildScript) -> Result<Generated> {
        let manifest_dir = env_path("CARGO_MANIFEST_DIR")?;
        let out_dir = env_path("OUT_DIR")?;
        let source = Source::Builder(manifest_dir.join("build.rs"));
        let options = self.kernel_options()?;
        let option_vars = options::ENV_VARS.iter().map(|(var, _)| var);
        for var in toolchain::ENV_VARS.iter().chain(option_vars).chain(crate::cuda::ENV_VARS) {
            reporter.directive(format!("cargo:rerun-if-env-changed={var}"));
        }

        let cuda_files = self.host_cuda(&manifest_dir, &out_dir, &source, reporter)?;
        let opts = BuildOptions {
            paths: self.kernel_crates.iter().map(|p| manifest_dir.join(p)).collect(),
            options: options.resolve_paths(&manifest_dir, &source)?,
            source,
            cuda_files: cuda_files.into_iter().collect(),
            ..BuildOptions::default()
        };
        if opts.paths.is_empty() && opts.cuda_files.is_empty() {
            return Err(Error::NoKernelCrate {
                searched: "the Builder (neither `.kernel_crate(..)` nor `.cuda(..)` was given)".into(),
                help: "give the Builder a kernel crate, `.kernel_crate(\"kernels\")`, or CUDA files, `.cuda(\"src/kernels.cu\")`".into(),
            });
        }
        // A lock file the nested cargo creates now would look newer than this build to cargo
        // and rerun the build script once more; only a lock that existed before is watched.
        let locks_before: BTreeSet<PathBuf> = opts
            .paths
            .iter()
            .flat_map(|p| p.ancestors().map(|a| a.join("Cargo.lock")).collect::<Vec<_>>())
            .filter(|l| l.is_file())
            .collect();
        let output = opts.run(reporter)?;

        let mut units: Vec<Unit> = Vec::new();
        let mut rerun: BTreeSet<PathBuf> = BTreeSet::new();
        for c in &output.crates {
            rerun.extend(c.sources.iter().cloned());
            // One unit per PTX module: the Rust crate's, and one per .cu file.
            let mut modules: Vec<&str> = Vec::new();
            for a in &c.artifacts {
                if !modules.contains(&a.module.as_str()) {
                    modules.push(&a.module);
                }
            }
            for module in modules {
                let artifacts: Vec<&Artifact> = c.artifacts.iter().filter(|a| a.module == module).collect();
                let source = artifacts.first().and_then(|a| a.source.clone());
                let cuda_source = source.as_ref().filter(|p| p.extension().is_some_and(|e| e == "cu"));
                let sigs = match (c.signatures.get(module), cuda_source) {
                    (Some(sigs), Some(_)) => sigs.clone(),
                    (None, Some(cu)) => c_kernels(cu)?,
                    (read, None) => {
                        let krate_dir = c.manifest_path.parent().unwrap_or(Path::new(".")).to_path_buf();
                        let lib_rs = c.lib_src.clone().unwrap_or_else(|| krate_dir.join("src/lib.rs"));
                        // The expanded crate's kernels where the front end read them, else the source's.
                        let sigs = match read {
                            Some(sigs) => sigs.clone(),
                            None => signature::rust_kernels(&lib_rs)?,
                        };
                        rust_kernels_for_host(&lib_rs, sigs, reporter)?
                    }
                };
                // Unit names are Rust modules of the generated file: unique across crates.
                let unit_name =
                    if units.iter().any(|u| u.name == module) { format!("{}_{}", c.lib_name, module) } else { module.to_string() };
                units.push(self.unit(&unit_name, sigs, &artifacts, &out_dir)?);
            }
        }
        codegen::prefix_shared_cxx_names(&mut units);
        let code = codegen::generate(&units)?;
        let module = out_dir.join(self.out_file.as_deref().unwrap_or("kernels.rs"));
        cache::write_atomic(&module, code.as_bytes())?;
        for p in rerun.iter().filter(|p| !p.ends_with("Cargo.lock") || locks_before.contains(*p)) {
            reporter.directive(format!("cargo:rerun-if-changed={}", p.display()));
        }
        Ok(Generated { module, output })
    }
}

impl Builder {
    /// The host crate's own .cu files, from the `.cuda(..)` globs.
    fn host_cuda(&self, manifest_dir: &Path, out_dir: &Path, source: &Source, reporter: &BuildScript) -> Result<Option<CudaFiles>> {
        if self.cuda.is_empty() {
            return Ok(None);
        }
        // Its `[package.metadata.ptx]` applies to these files (archs, includes, defines).
        reporter.directive(format!("cargo:rerun-if-changed={}", manifest_dir.join("Cargo.toml").display()));
        let mut files = Vec::new();
        for g in &self.cuda {
            let matched = glob_files(manifest_dir, g).map_err(|message| source.error("cuda", message))?;
            if matched.is_empty() {
                reporter.warning(format!("ptx-build: `.cuda(\"{g}\")` matches no file under {}", manifest_dir.display()));
            }
            // A new file matching the glob changes the build: watch the glob's folder.
            let fixed: PathBuf =
                Path::new(g).components().take_while(|c| !c.as_os_str().to_string_lossy().contains(['*', '?', '['])).collect();
            reporter.directive(format!("cargo:rerun-if-changed={}", manifest_dir.join(fixed).display()));
            files.extend(matched);
        }
        files.sort();
        files.dedup();
        Ok(Some(CudaFiles {
            name: std::env::var("CARGO_PKG_NAME").unwrap_or_else(|_| "host".into()),
            dir: manifest_dir.to_path_buf(),
            files,
            // Beside the generated module: the host crate's target dir is locked by the outer cargo.
            target_dir: Some(out_dir.join("ptx-target")),
        }))
    }

    /// One PTX module's unit: its signatures checked against its PTX, its images copied to
    /// `OUT_DIR`. Kernels that cannot be typed (C++ mangled names, untypeable parameters, and
    /// PTX entries the source does not show, such as kernels stamped out by macros) are
    /// embedded without a typed method, with a warning.
    fn unit(&self, name: &str, sigs: Vec<signature::KernelSig>, artifacts: &[&Artifact], out_dir: &Path) -> Result<Unit> {
        // C++ kernels are bound to their mangled entries (templates become generic kernels).
        let entries: Vec<&str> = artifacts
            .iter()
            .find(|a| a.kind == ArtifactKind::Ptx)
            .map(|a| a.kernels.iter().map(|k| k.name.as_str()).collect())
            .unwrap_or_default();
        let sigs = crate::cxx::bind(sigs, &entries);
        let (sigs, untypeable): (Vec<_>, Vec<_>) = sigs.into_iter().partition(|s| s.untyped.is_none() && !s.mangled);
        for s in &untypeable {
            let why = match &s.untyped {
                Some(reason) => reason.clone(),
                None => {
                    "no mangled PTX name matches this C++ declaration's parameters; declare it `extern \"C\"` for a typed method".into()
                }
            };
            println!(
                "cargo:warning={}:{}: kernel `{}` has no typed launch method ({why}); it is embedded: launch it with `kernels.launch_builder(&stream, NAME)`",
                s.file.display(),
                s.line,
                s.name
            );
        }
        let mut untyped: Vec<String> = Vec::new();
        let mut images = Vec::new();
        let mut struct_layouts: Vec<StructLayout> = Vec::new();
        let mut launch_bounds: Vec<(String, u32)> = Vec::new();
        for a in artifacts {
            let ext = match a.kind {
                ArtifactKind::Ptx => "ptx",
                ArtifactKind::Cubin => "cubin",
            };
            let rel = format!("ptx-build/{name}/{}.{ext}", a.arch);
            let bytes = std::fs::read(&a.path).map_err(|e| Error::io("read", &a.path, e))?;
            let mut ptx_isa = None;
            if a.kind == ArtifactKind::Ptx {
                let module = ptx::Module::parse(&String::from_utf8_lossy(&bytes));
                if untyped.is_empty() {
                    untyped = module
                        .entries
                        .iter()
                        .map(|e| e.name.clone())
                        .filter(|n| !sigs.iter().any(|s| s.ptx_names().contains(&n.as_str())))
                        .collect();
                }
                for (entry, instance) in sigs.iter().flat_map(|s| s.monomorphic()) {
                    signature::check(&instance, module.entry(&entry))?;
                }
                for sig in &sigs {
                    if struct_layouts.iter().any(|l| l.kernel == sig.name) {
                        continue;
                    }
                    // A generic kernel's non-generic struct parameters are the same in every instance.
                    if let Some(entry) = sig.ptx_names().first().and_then(|n| module.entry(n)) {
                        for (i, (p, e)) in sig.params.iter().zip(&entry.params).enumerate() {
                            if matches!(p.ty, signature::ParamType::ByValue { .. }) {
                                struct_layouts.push(StructLayout { kernel: sig.name.clone(), param: i, size: e.size, align: e.align });
                            }
                        }
                    }
                }
                ptx_isa = module.version.clone();
                // Every arch's PTX has the same bounds, but keep the largest: never refuse a launch the driver takes.
                for (name, bound) in module.entries.iter().filter_map(|e| Some((&e.name, e.max_threads?))) {
                    match launch_bounds.iter_mut().find(|(n, _)| n == name) {
                        Some((_, b)) => *b = (*b).max(bound),
                        None => launch_bounds.push((name.clone(), bound)),
                    }
                }
            }
            cache::write_atomic(&out_dir.join(&rel), &bytes)?;
            images.push(EmbeddedImage { arch: a.arch.parse()?, kind: a.kind, file: rel, ptx_isa });
        }
        if !untyped.is_empty() {
            let typed = sigs.iter().map(|s| s.ptx_names().len()).sum::<usize>();
            let total = typed + untyped.len();
            println!(
                "cargo:warning=ptx-build: {} of {total} kernels of `{name}` have typed launch methods; the other {} are embedded and listed in KERNEL_NAMES: launch them with `kernels.launch_builder(&stream, NAME)`",
                typed,
                untyped.len()
            );
        }
        Ok(Unit { name: name.to_string(), kernels: sigs, images, struct_layouts, untyped, launch_bounds })
    }
}

/// The Rust kernels of a crate, their by-value struct types named as the host can reach them
/// (`use shared::Affine` -> `::shared::Affine`); a type the kernel crate defines itself is a
/// warning with the fix (see `host_types`).
fn rust_kernels_for_host(lib_rs: &Path, mut sigs: Vec<signature::KernelSig>, reporter: &BuildScript) -> Result<Vec<signature::KernelSig>> {
    let root = lib_rs.parent().unwrap_or(Path::new("/"));
    for w in crate::host_types::resolve(lib_rs, &mut sigs)? {
        // Paths relative to the crate's folder where they lie below it, absolute in the output.
        let file = w.file.clone().unwrap_or_default();
        let w = Diagnostic { file: Some(crate::diag::relative(&file, root)), ..w }.rooted(root);
        reporter.report(Event::Diagnostic(&w));
    }
    Ok(sigs)
}

/// The `__global__` kernels of a .cu file.
fn c_kernels(cu: &Path) -> Result<Vec<signature::KernelSig>> {
    signature::cuda_kernels(cu)
}

fn env_path(var: &'static str) -> Result<PathBuf> {
    std::env::var_os(var).map(PathBuf::from).ok_or(Error::NotInBuildScript { what: var })
}

/// Reports to cargo. Everything is held until the build ends: on success the directives and
/// each warning line as `cargo:warning=` (cargo adds `warning: pkg@ver: ` itself, so the
/// diagnostic's own `warning: ` is dropped); on failure the warnings and errors on stderr only,
/// since cargo prints a failed script's stdout too, and directives there are noise (cargo reruns a
/// failed build script anyway). Each diagnostic is printed once. `cargo::error=` lines (stable
/// since cargo 1.84) are not used: a `main` returning `Err` exits with 1, and cargo then prints
/// them and, in its dump of the script's stdout, prints them again.
#[derive(Default)]
struct BuildScript {
    directives: std::sync::Mutex<Vec<String>>,
    diagnostics: std::sync::Mutex<Vec<(Level, String)>>,
}

impl BuildScript {
    fn directive(&self, line: String) {
        self.directives.lock().unwrap_or_else(|e| e.into_inner()).push(line);
    }

    fn warning(&self, text: String) {
        self.push(Level::Warning, text);
    }

    fn push(&self, level: Level, text: String) {
        let mut ds = self.diagnostics.lock().unwrap_or_else(|e| e.into_inner());
        if !ds.iter().any(|(l, t)| *l == level && *t == text) {
            ds.push((level, text));
        }
    }

    fn finish(&self, ok: bool) {
        let directives = std::mem::take(&mut *self.directives.lock().unwrap_or_else(|e| e.into_inner()));
        let diagnostics = std::mem::take(&mut *self.diagnostics.lock().unwrap_or_else(|e| e.into_inner()));
        for (level, text) in diagnostics {
            match (ok, level) {
                (true, Level::Warning) => {
                    for line in text.lines().filter(|l| !l.trim().is_empty()) {
                        println!("cargo:warning={line}");
                    }
                }
                (_, Level::Warning) => eprintln!("warning: {text}"),
                (_, Level::Error) => eprintln!("{text}"),
            }
        }
        if ok {
            for d in directives {
                println!("{d}");
            }
        }
    }
}

impl Reporter for BuildScript {
    fn report(&self, event: Event<'_>) {
        if let Event::Diagnostic(d) = event {
            // rustc's `failure-note`s ("For more information about this error, try ...") come
            // as warnings; the rendering shows what they are.
            if d.rendered.as_deref().is_some_and(|r| !r.starts_with("warning") && !r.starts_with("error")) {
                return;
            }
            match d.level {
                Level::Warning => self.push(Level::Warning, d.render_absolute_unprefixed()),
                Level::Error => self.push(Level::Error, d.render_absolute()),
            }
        }
    }
}
