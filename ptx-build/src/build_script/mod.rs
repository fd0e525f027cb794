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

use crate::embed::{self, CrateModules};
use crate::engine::{BuildOptions, BuildOutput};
use crate::error::{Error, Result};
use crate::options::{self, Options, Prebuilt, Source};
use crate::prebuilt;
use crate::project::{glob_files, CudaFiles, StaticLibSpec};
use crate::tools;

mod reporter;
mod verbose;

use reporter::BuildScript;

/// [`Source::error`] for an option, [`Source::method_error`] for a Builder call of its own.
type InvalidAs = fn(&Source, &str, String) -> Error;

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
    /// `(name, globs)` of each `cuda_static_lib`, in the order first named.
    static_libs: Vec<(String, Vec<String>)>,
    out_file: Option<String>,
    options: Options,
    /// Bad values given to setters, reported by [`Builder::build`] (setters cannot fail): how
    /// the error names what was set (an option by its key, `.cuda_static_lib(..)` as a call).
    invalid: Vec<(InvalidAs, &'static str, String)>,
}

/// What [`Builder::build`] wrote.
#[derive(Debug)]
#[non_exhaustive]
pub struct Generated {
    /// The generated module (`$OUT_DIR/kernels.rs`).
    pub module: PathBuf,
    /// What the engine built.
    pub output: BuildOutput,
}

/// One method per option, generated from its declaration (`options_list!`), under the
/// option's own name or, for a list, the name of one item (`feature`, `cuda_include`).
macro_rules! builder_setters {
    ($(
        $(#[$($attr:tt)*])*
        $field:ident : $ty:ty $(= $default:expr)?,
            $(env $env:literal,)?
            builder $setter:ident ( $($arg:ident : $argty:ty),* ) $how:ident $value:expr;
    )*) => {
        impl Builder {
            $( builder_setter! { [] $(#[$($attr)*])* $field, $setter ($($arg: $argty),*) $how $value } )*
        }
    };
}

/// One Builder method: the option's doc comments kept (its serde and clap attributes dropped).
macro_rules! builder_setter {
    ([$($docs:tt)*] #[doc = $doc:literal] $($rest:tt)*) => {
        builder_setter! { [$($docs)* #[doc = $doc]] $($rest)* }
    };
    ([$($docs:tt)*] #[$($other:tt)*] $($rest:tt)*) => {
        builder_setter! { [$($docs)*] $($rest)* }
    };
    ([$($docs:tt)*] $field:ident, $setter:ident ($($arg:ident : $argty:ty),*) $how:ident $value:expr) => {
        #[doc = concat!("`", stringify!($field), "` (see [`Options::", stringify!($field), "`]):")]
        $($docs)*
        pub fn $setter(mut self, $($arg: $argty),*) -> Self {
            let value: std::result::Result<_, String> = $value;
            match value {
                Ok(v) => builder_setter!(@$how self.options.$field, v),
                // Named by the option, as every front end names it (README, "Options").
                Err(m) => self.invalid.push((Source::error, stringify!($field), m)),
            }
            self
        }
    };
    (@set $slot:expr, $v:expr) => { $slot = Some($v) };
    (@push $slot:expr, $v:expr) => { $slot.get_or_insert_with(Vec::new).push($v) };
    (@extend $slot:expr, $v:expr) => { $slot.get_or_insert_with(Vec::new).extend($v) };
}

crate::options::options_list!(builder_setters);

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
    /// (`cuda/*.cu`), less what `cuda_exclude` names. A glob that matches nothing is a warning.
    pub fn cuda(mut self, glob: impl Into<String>) -> Self {
        self.cuda.push(glob.into());
        self
    }

    /// CUDA C++ that launches its own kernels from host code (`kernel<<<grid, block>>>(..)` in
    /// `extern "C"` functions), built into the static library `lib<name>.a` in `OUT_DIR` and
    /// linked into this crate with the CUDA runtime (`cudart_static`): a glob relative to the host
    /// crate (`cuda/moe/*.cu`); call it again with the same name to add files. The host crate
    /// declares the functions in an `extern "C"` block. Each file is one `nvcc -c` run with a cubin
    /// for every arch and the PTX of the highest (see the README); the crate's options apply
    /// (`archs`, `cuda-include`, `cuda-defines`, `nvcc-flags`, `cuda-file-archs`, ...).
    pub fn cuda_static_lib(mut self, name: impl Into<String>, glob: impl Into<String>) -> Self {
        let name = name.into();
        // `libops.a` names the file: the library is `ops` (`lib` and `.a` are added). A name
        // that merely starts with `lib` (`library`) is a name.
        if let Some(file) = name.strip_suffix(".a") {
            let bare = file.strip_prefix("lib").filter(|b| !b.is_empty()).unwrap_or(file);
            self.invalid.push((
                Source::method_error,
                "cuda_static_lib",
                format!("`{name}` names the archive: the library's name is `{bare}` (the file is `lib{bare}.a`)"),
            ));
            return self;
        }
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
            self.invalid.push((
                Source::method_error,
                "cuda_static_lib",
                format!("`{name}` is not a library name: use letters, digits, `_` and `-` (`moe`)"),
            ));
            return self;
        }
        match self.static_libs.iter_mut().find(|(n, _)| *n == name) {
            Some((_, globs)) => globs.push(glob.into()),
            None => self.static_libs.push((name, vec![glob.into()])),
        }
        self
    }

    /// The generated file's name in `OUT_DIR` (default `kernels.rs`).
    pub fn out_file(mut self, name: impl Into<String>) -> Self {
        self.out_file = Some(name.into());
        self
    }

    /// The generated file's name in `OUT_DIR`.
    fn out_file_name(&self) -> &str {
        self.out_file.as_deref().unwrap_or("kernels.rs")
    }

    /// Every option set in `options` (over those set before).
    pub fn options(mut self, options: Options) -> Self {
        self.options = options.or(self.options);
        self
    }

    /// The kernel options set so far (paths as given, relative to the host crate); a value a
    /// setter could not parse is its error, as [`Builder::build`] would report it.
    pub fn kernel_options(&self) -> Result<Options> {
        if let Some((invalid_as, key, message)) = self.invalid.first() {
            let script =
                std::env::var_os("CARGO_MANIFEST_DIR").map(|d| PathBuf::from(d).join("build.rs")).unwrap_or_else(|| "build.rs".into());
            return Err(invalid_as(&Source::Builder(script), key, message.clone()));
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
        let reporter = BuildScript::new(embed::unit::verbose());
        if reporter.verbose {
            verbose::echo_commands();
        }
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
        let verbose = [embed::unit::VERBOSE_VAR];
        for var in tools::ENV_VARS.iter().chain(option_vars).chain(crate::cuda::ENV_VARS).chain(&verbose) {
            reporter.directive(format!("cargo:rerun-if-env-changed={var}"));
        }

        reporter.directive(format!("cargo:rerun-if-env-changed={}", prebuilt::WRITE_VAR));
        // Its `[package.metadata.ptx]` may set `prebuilt`, and archs and flags for `.cuda(..)` files.
        reporter.directive(format!("cargo:rerun-if-changed={}", manifest_dir.join("Cargo.toml").display()));

        let cuda_files = self.host_cuda(&manifest_dir, &out_dir, &source, reporter)?;
        // Nothing else to build: say so here, not as a missing launch method in the crate.
        if cuda_files.as_ref().is_some_and(|c| c.files.is_empty()) && self.kernel_crates.is_empty() && self.static_libs.is_empty() {
            let message = format!(
                "its globs ({}) match no file under {}{}: the Builder has no kernel to build",
                self.cuda.join(", "),
                manifest_dir.display(),
                did_you_mean(&manifest_dir, &self.cuda)
            );
            return Err(source.method_error("cuda", message));
        }
        // A prebuilt set of this package, when the policy and its key allow it: no tool runs.
        let front = options.clone().or(Options::from_env()?);
        let policy = match front.prebuilt {
            Some(p) => p,
            None => prebuilt::host_policy(&manifest_dir.join("Cargo.toml"))?.unwrap_or_default(),
        };
        let cuda_list: Vec<PathBuf> = cuda_files.as_ref().map(|c| c.files.clone()).unwrap_or_default();
        let package = std::env::var("CARGO_PKG_NAME").unwrap_or_default();
        let request = prebuilt::Request {
            package: package.clone(),
            manifest_dir: &manifest_dir,
            out_file: self.out_file_name(),
            kernel_crates: &self.kernel_crates,
            cuda_files: &cuda_list,
            options: &front,
        };
        // `cargo ptx package` builds this package from source and writes its set, or checks it.
        let mode = std::env::var(prebuilt::WRITE_VAR).ok().and_then(|v| prebuilt::write_request(&v, &package));
        let writing = match mode {
            Some(prebuilt::Mode::Write(announce)) => Some(announce),
            _ => None,
        };
        // A set holds PTX and cubins only: a Builder with static libraries builds from source.
        let can_use_set = self.static_libs.is_empty() && (!self.kernel_crates.is_empty() || !cuda_list.is_empty());
        let policy = match mode {
            Some(prebuilt::Mode::Check) if !self.static_libs.is_empty() => {
                return Err(Error::Prebuilt {
                    package,
                    set: prebuilt::set_dir(&manifest_dir, self.out_file_name()).join(prebuilt::MANIFEST),
                    message: "`cargo ptx package --check`: this Builder has static libraries (`.cuda_static_lib(..)`), so it always builds from source and uses no set".into(),
                    help: "leave this package out of `cargo ptx package --check`".into(),
                });
            }
            // A set that cannot be used fails the check, whatever the tools here.
            Some(prebuilt::Mode::Check) => Prebuilt::Always,
            _ => policy,
        };
        let mut passed_over = None;
        if writing.is_none() && can_use_set {
            match prebuilt::load(&request, policy, reporter)? {
                prebuilt::Use::Set(output, watch) => {
                    let module = self.embed(&output, &out_dir, reporter)?;
                    for p in watch {
                        reporter.directive(format!("cargo:rerun-if-changed={}", p.display()));
                    }
                    return Ok(Generated { module, output });
                }
                prebuilt::Use::Source(passed) => passed_over = passed,
            }
        }
        let built = self.build_from_source(options, &manifest_dir, &out_dir, &source, cuda_files, reporter).and_then(|(module, output)| {
            if let Some(announce) = writing {
                let set = prebuilt::write(&request, &output, Some(&out_dir))?;
                if announce == prebuilt::Announce::Warning {
                    reporter.warning(format!("ptx-build: wrote the prebuilt kernels of `{package}` to {}", set.display()));
                }
            }
            Ok(Generated { module, output })
        });
        match passed_over {
            Some(passed) => match built {
                Ok(generated) => {
                    for p in &passed.watch {
                        reporter.directive(format!("cargo:rerun-if-changed={}", p.display()));
                    }
                    Ok(generated)
                }
                Err(e) => Err(passed.explain(e)),
            },
            None => built,
        }
    }

    /// The build from source and its embed stage: the generated module and the build.
    fn build_from_source(
        &self,
        options: Options,
        manifest_dir: &Path,
        out_dir: &Path,
        source: &Source,
        cuda_files: Option<CudaFiles>,
        reporter: &BuildScript,
    ) -> Result<(PathBuf, BuildOutput)> {
        let mut opts = BuildOptions {
            paths: self.kernel_crates.iter().map(|p| manifest_dir.join(p)).collect(),
            options: options.resolve_paths(manifest_dir, source)?,
            source: source.clone(),
            cuda_files: cuda_files.into_iter().collect(),
            ..BuildOptions::default()
        };
        for (name, globs) in &self.static_libs {
            let files = host_files(manifest_dir, globs, &format!("cuda_static_lib(\"{name}\", "), true, source, reporter)?;
            if files.is_empty() {
                return Err(source.method_error(
                    "cuda_static_lib",
                    format!(
                        "`lib{name}.a` has no .cu file: its globs ({}) match nothing under {}{}",
                        globs.join(", "),
                        manifest_dir.display(),
                        did_you_mean(manifest_dir, globs)
                    ),
                ));
            }
            opts.cuda_files.push(CudaFiles {
                name: name.clone(),
                dir: manifest_dir.to_path_buf(),
                files,
                target_dir: Some(out_dir.join("ptx-target").join(format!("lib{name}"))),
                static_lib: Some(StaticLibSpec { name: name.clone(), dir: out_dir.to_path_buf() }),
                siblings: Vec::new(),
            });
        }
        // A `cuda-exclude` glob may name the files of one group only.
        let all: Vec<PathBuf> = opts.cuda_files.iter().flat_map(|g| g.files.iter().cloned()).collect();
        for group in &mut opts.cuda_files {
            group.siblings = all.iter().filter(|f| !group.files.contains(f)).cloned().collect();
        }
        // The embed stage's input: every module's kernel signatures.
        opts.signatures = true;
        if opts.paths.is_empty() && opts.cuda_files.is_empty() {
            return Err(Error::NoKernelCrate {
                searched: "the Builder (neither `.kernel_crate(..)`, `.cuda(..)` nor `.cuda_static_lib(..)` was given)".into(),
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

        let rerun: BTreeSet<PathBuf> = output.crates.iter().flat_map(|c| c.sources.iter().cloned()).collect();
        for lib in output.crates.iter().filter_map(|c| c.static_lib.as_ref()) {
            if reporter.verbose {
                eprintln!("{}", verbose::link_line(lib, &std::env::var("CARGO_PKG_NAME").unwrap_or_default()));
            }
            for d in lib.cargo_directives() {
                reporter.directive(d);
            }
        }
        let module = self.embed(&output, out_dir, reporter)?;
        for p in rerun.iter().filter(|p| !p.ends_with("Cargo.lock") || locks_before.contains(*p)) {
            reporter.directive(format!("cargo:rerun-if-changed={}", p.display()));
        }
        Ok((module, output))
    }
}

impl Builder {
    /// The embed stage over a build (from source or from a prebuilt set alike).
    fn embed(&self, output: &BuildOutput, out_dir: &Path, reporter: &BuildScript) -> Result<PathBuf> {
        let crates: Vec<CrateModules<'_>> = output
            .crates
            .iter()
            .filter(|c| c.static_lib.is_none())
            .map(|c| CrateModules {
                lib_name: &c.lib_name,
                artifacts: &c.artifacts,
                signatures: &c.signatures,
                untyped_kernels: c.untyped_kernels,
            })
            .collect();
        let manifest_dir = env_path("CARGO_MANIFEST_DIR")?;
        let host = embed::host_scope::HostNames::read(&manifest_dir);
        let manifest = std::fs::read_to_string(manifest_dir.join("Cargo.toml")).unwrap_or_default();
        let link = embed::linked::Target::of_build_for(&manifest);
        let written = embed::write_module(&crates, out_dir, self.out_file_name(), &host, link, reporter)?;
        // Modules of equal images (ggml-cuda's four .cu files with no kernel for sm_80) have
        // one object name, and rustc refuses a crate given one `-l` twice (`overriding linking
        // modifiers from command line is not supported`): each object is linked once per build
        // script, whichever of its Builders wrote it (its copies are the same bytes).
        static LINKED: std::sync::Mutex<BTreeSet<String>> = std::sync::Mutex::new(BTreeSet::new());
        for object in &written.objects {
            if LINKED.lock().unwrap_or_else(|e| e.into_inner()).insert(object.file_name.clone()) {
                for d in object.cargo_directives() {
                    reporter.directive(d);
                }
            }
        }
        // A kernel waits for a host type, or a typed method names one: defining or removing it
        // must rerun this script.
        for path in host.watched() {
            reporter.directive(format!("cargo:rerun-if-changed={}", path.display()));
        }
        Ok(written.path)
    }

    /// The host crate's own .cu files, from the `.cuda(..)` globs.
    fn host_cuda(&self, manifest_dir: &Path, out_dir: &Path, source: &Source, reporter: &BuildScript) -> Result<Option<CudaFiles>> {
        if self.cuda.is_empty() {
            return Ok(None);
        }
        // Its `[package.metadata.ptx]` applies to these files (archs, includes, defines): `run`
        // watches the manifest for every build.
        // Alone, nothing matching is the caller's error.
        let alone = self.kernel_crates.is_empty() && self.static_libs.is_empty();
        let files = host_files(manifest_dir, &self.cuda, "cuda(", alone, source, reporter)?;
        Ok(Some(CudaFiles {
            name: std::env::var("CARGO_PKG_NAME").unwrap_or_else(|_| "host".into()),
            dir: manifest_dir.to_path_buf(),
            files,
            // Beside the generated module: the host crate's target dir is locked by the outer cargo.
            // Per generated file: another Builder's files must not share its artifacts.
            target_dir: Some(out_dir.join("ptx-target").join(self.out_file_name())),
            static_lib: None,
            siblings: Vec::new(),
        }))
    }
}

/// The files of the host crate's `globs` (for the Builder call that starts `call`: `cuda(`,
/// `cuda_static_lib("moe", `), sorted. A glob that matches nothing is a warning, with a folder
/// of a near name where its own is missing (`csrc/kernel` -> `csrc/kernels`), unless nothing
/// matched and `alone` (the caller then stops with an error that says it). Each glob's folder is
/// watched for new files: where it does not exist, the nearest one above it below the package
/// root (a watch on a missing path, or on the root with its `target/`, would rerun the build
/// script on every build).
fn host_files(
    manifest_dir: &Path,
    globs: &[String],
    call: &str,
    alone: bool,
    source: &Source,
    reporter: &BuildScript,
) -> Result<Vec<PathBuf>> {
    let method = call.split('(').next().unwrap_or(call);
    let mut files = Vec::new();
    let mut empty = Vec::new();
    let mut unwatched: Vec<&String> = Vec::new();
    for g in globs {
        let matched = glob_files(manifest_dir, g).map_err(|message| source.method_error(method, message))?;
        // cargo scans a watched folder whole: the package root (or above) would hold `target/`
        // and rerun this script on every build. A glob of a folder that does not exist below
        // the root is then not watched; its warning says to touch build.rs once it does.
        let folder = manifest_dir.join(glob_folder(g));
        let watched =
            folder.ancestors().find(|d| d.exists()).filter(|d| folder.exists() || (d.starts_with(manifest_dir) && *d != manifest_dir));
        match watched {
            // `*.cu` at the package root: each of its entries but `target/` and hidden ones.
            Some(w) if w == manifest_dir => {
                for e in std::fs::read_dir(w).into_iter().flatten().flatten() {
                    let name = e.file_name().to_string_lossy().into_owned();
                    if !name.starts_with('.') && name != "target" {
                        reporter.directive(format!("cargo:rerun-if-changed={}", e.path().display()));
                    }
                }
            }
            Some(w) => reporter.directive(format!("cargo:rerun-if-changed={}", w.display())),
            None if !folder.exists() => unwatched.push(g),
            None => {}
        }
        if matched.is_empty() {
            empty.push(g);
        }
        files.extend(matched);
    }
    if !(alone && files.is_empty()) {
        for g in empty {
            let meant = did_you_mean(manifest_dir, std::slice::from_ref(g));
            let touch = if unwatched.contains(&g) { "; its folder does not exist: once it does, touch build.rs to rebuild" } else { "" };
            reporter.warning(format!("ptx-build: `.{call}\"{g}\")` matches no file under {}{meant}{touch}", manifest_dir.display()));
        }
    }
    files.sort();
    files.dedup();
    Ok(files)
}

/// ` (did you mean `csrc/kernels/*.cu`?)` for the first of `globs` whose folder is missing and
/// has a near name; else nothing.
fn did_you_mean(dir: &Path, globs: &[String]) -> String {
    // Only a glob that would match something is worth offering.
    globs
        .iter()
        .find_map(|g| {
            let folder = glob_folder(g);
            Some(g.replacen(&*folder.to_string_lossy(), &near_folder(dir, &folder)?, 1))
        })
        .filter(|m| glob_files(dir, m).is_ok_and(|f| !f.is_empty()))
        .map(|m| format!(" (did you mean `{m}`?)"))
        .unwrap_or_default()
}

/// The part of a glob before its first wildcard: the folder it searches.
fn glob_folder(glob: &str) -> PathBuf {
    Path::new(glob).components().take_while(|c| !c.as_os_str().to_string_lossy().contains(['*', '?', '['])).collect()
}

/// Where `dir.join(fixed)` does not exist: the same relative folder with its first missing part
/// replaced by a folder beside it whose name differs by one letter or in case (`csrc/kernel` ->
/// `csrc/kernels`).
fn near_folder(dir: &Path, fixed: &Path) -> Option<String> {
    let folder = dir.join(fixed);
    let missing = folder.ancestors().take_while(|d| !d.exists()).last()?;
    let (parent, name) = (missing.parent()?, missing.file_name()?.to_str()?);
    // One letter changed, added or removed, ignoring case (`kernel`, `Kernels`, `kernals`).
    let close = |other: &str| {
        let (a, b) = (name.to_ascii_lowercase(), other.to_ascii_lowercase());
        let (short, long) = if a.len() <= b.len() { (a.as_bytes(), b.as_bytes()) } else { (b.as_bytes(), a.as_bytes()) };
        match long.len() - short.len() {
            0 => short.iter().zip(long).filter(|(x, y)| x != y).count() <= 1,
            1 => (0..long.len()).any(|i| long[..i] == short[..i] && long[i + 1..] == short[i..]),
            _ => false,
        }
    };
    let entries = std::fs::read_dir(parent).ok()?.flatten().filter(|e| e.path().is_dir());
    let found = entries.filter_map(|e| e.file_name().into_string().ok()).find(|n| close(n))?;
    let near = parent.join(found).join(folder.strip_prefix(missing).ok()?);
    Some(near.strip_prefix(dir).ok()?.to_string_lossy().into_owned())
}

fn env_path(var: &'static str) -> Result<PathBuf> {
    std::env::var_os(var).map(PathBuf::from).ok_or(Error::NotInBuildScript { what: var })
}
