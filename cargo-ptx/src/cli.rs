//! Argument parsing and dispatch: everything that finds tools, compiles or links lives in the
//! engine; this file turns flags into its options and its results into output.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};
use ptx_build::internals::tools as toolchain;
use ptx_build::options::{Options, Profile, Source};
use ptx_build::{BuildOptions, ManifestFlags};

use crate::output::{Format, Printer};
use crate::scaffold::{self, Dependencies, KernelLanguage, NewProject, Vcs};
use crate::{doctor, inspect, sanitize, setup};

/// Build GPU kernels written in Rust and CUDA C++ into PTX and cubins.
#[derive(Parser, Debug)]
#[command(name = "cargo-ptx", bin_name = "cargo ptx", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Coloring: auto, always, never (as cargo's; NO_COLOR turns `auto` off).
    #[arg(long, value_enum, global = true, value_name = "WHEN", env = "CARGO_TERM_COLOR", hide_env_values = true)]
    color: Option<ColorWhen>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum ColorWhen {
    Auto,
    Always,
    Never,
}

/// Colors on stderr and stdout as cargo decides them: `--color` (or CARGO_TERM_COLOR) first,
/// then NO_COLOR, then whether stderr is a terminal.
fn apply_color(when: Option<ColorWhen>) {
    use std::io::IsTerminal;
    let on = match when.unwrap_or(ColorWhen::Auto) {
        ColorWhen::Always => true,
        ColorWhen::Never => false,
        ColorWhen::Auto => std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) && std::io::stderr().is_terminal(),
    };
    console::set_colors_enabled(on);
    console::set_colors_enabled_stderr(on);
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Compile kernel crates to PTX (and cubins where ptxas is found) for each arch.
    Build(Box<BuildArgs>),
    /// Check inline PTX (`asm()` in .cu files, `asm!` in Rust kernels) against NVIDIA's rules, without compiling.
    Check(CheckArgs),
    /// Show every tool a build needs: found or missing, version, path, and the fix.
    Doctor(DoctorArgs),
    /// Install what is missing: the nightly's rust-src and llvm-tools, NVIDIA's ptxas/nvcc/libdevice.
    Setup(SetupArgs),
    /// One kernel's PTX or SASS with its source lines interleaved, and its resource usage (no GPU needed).
    Inspect(Box<InspectArgs>),
    /// Run a cargo command's programs under NVIDIA's compute-sanitizer; findings at the kernel's source line.
    Sanitize(SanitizeArgs),
    /// Create a GPU project (host crate, kernels, tests) in a new folder.
    New(NewArgs),
    /// Create a GPU project in an existing empty folder.
    Init(InitArgs),
    /// Show or clear the shared step cache (link, ptxas and nvcc outputs shared by every checkout).
    Cache(CacheArgs),
    /// Build a library's kernels and write them prebuilt into its package (`prebuilt/`), so that
    /// its dependents build with neither a nightly nor CUDA.
    Package(PackageArgs),
}

#[derive(Args, Debug)]
struct PackageArgs {
    /// The library's Cargo.toml [default: the package at or above the current folder].
    #[arg(long, value_name = "PATH")]
    manifest_path: Option<PathBuf>,
    /// The library, in a workspace.
    #[arg(short, long, value_name = "NAME")]
    package: Option<String>,
    /// Pass `--locked` to cargo.
    #[arg(long)]
    locked: bool,
    /// Pass `--offline` to cargo.
    #[arg(long)]
    offline: bool,
    /// Write nothing: fail unless the sets there match the sources and options (as a dependent
    /// would read them, with no tool): the gate for CI before `cargo publish`.
    #[arg(long)]
    check: bool,
}

#[derive(Args, Debug)]
struct CacheArgs {
    /// The cache folder [default: CARGO_PTX_CACHE_DIR, else `steps/` in the cargo-ptx cache folder].
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
    /// Remove every entry.
    #[arg(long, conflicts_with = "stats")]
    clear: bool,
    /// Print the folder, the entries, their size and the limit (the default).
    #[arg(long)]
    stats: bool,
}

#[derive(Args, Debug)]
struct NewArgs {
    /// The folder to create; its name is the package name unless --name says otherwise.
    #[arg(value_name = "PATH")]
    path: PathBuf,
    #[command(flatten)]
    project: ProjectArgs,
}

#[derive(Args, Debug)]
struct InitArgs {
    /// An existing empty folder.
    #[arg(value_name = "PATH", default_value = ".")]
    path: PathBuf,
    #[command(flatten)]
    project: ProjectArgs,
}

#[derive(Args, Debug)]
struct ProjectArgs {
    /// The package name [default: the folder's name].
    #[arg(long, value_name = "NAME")]
    name: Option<String>,
    /// The kernels to start with: a Rust kernel crate, CUDA C++ files, or both.
    #[arg(long, value_enum, default_value_t = Kernels::Rust, value_name = "LANG")]
    kernels: Kernels,
    /// GPU arch to build for (repeatable, comma lists) [default: sm_80,sm_90].
    #[arg(long = "arch", value_name = "ARCH")]
    archs: Vec<String>,
    /// Start a git repository (by default unless the folder is inside one already).
    #[arg(long, value_enum, value_name = "VCS")]
    vcs: Option<VcsArg>,
    /// Depend on ptx-build, ptx-runtime and ptx-device by path, from the cargo-ptx checkout at DIR
    /// (its root) [default: the checkout this cargo-ptx was built from while it exists, else the
    /// published crates at this cargo-ptx's version].
    #[arg(long, value_name = "DIR")]
    path_deps: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Kernels {
    Rust,
    Cuda,
    Both,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum VcsArg {
    Git,
    None,
}

#[derive(Args, Debug)]
struct BuildArgs {
    #[command(flatten)]
    select: Select,
    /// The same as `--profile release` (the default); kept for cargo's muscle memory.
    #[arg(short, long, conflicts_with = "profile", help_heading = "Kernel options")]
    release: bool,
    #[command(flatten)]
    options: Options,
    /// Folder for artifacts [default: the workspace's target dir]; they go to <DIR>/ptx/<profile>/<package>/<arch>/.
    #[arg(long, value_name = "DIR", help_heading = "Compilation Options")]
    target_dir: Option<PathBuf>,
    /// Parallel link, nvcc and ptxas jobs [default: the number of CPUs].
    #[arg(short, long, value_name = "N", help_heading = "Compilation Options")]
    jobs: Option<usize>,
    #[command(flatten)]
    manifest: ManifestArgs,
    #[command(flatten)]
    out: OutputArgs,
}

/// cargo's lock and network flags, for the nested cargo that builds Rust kernels.
#[derive(Args, Debug)]
struct ManifestArgs {
    /// Assert that Cargo.lock will remain unchanged.
    #[arg(long, help_heading = "Manifest Options")]
    locked: bool,
    /// Run without accessing the network.
    #[arg(long, help_heading = "Manifest Options")]
    offline: bool,
    /// Equivalent to specifying both --locked and --offline.
    #[arg(long, help_heading = "Manifest Options")]
    frozen: bool,
}

#[derive(Args, Debug)]
struct InspectArgs {
    #[command(flatten)]
    select: Select,
    /// The kernel, by its PTX name (`saxpy`, or the `extern "C"` name of a CUDA C++ kernel).
    #[arg(long, value_name = "NAME")]
    kernel: String,
    /// Print the PTX (the default).
    #[arg(long, conflicts_with = "sass")]
    ptx: bool,
    /// Print the SASS of the cubin (nvdisasm), instead of the PTX.
    #[arg(long)]
    sass: bool,
    #[command(flatten)]
    options: Options,
    /// Folder for artifacts [default: the workspace's target dir].
    #[arg(long, value_name = "DIR")]
    target_dir: Option<PathBuf>,
}

#[derive(Args, Debug)]
struct SanitizeArgs {
    /// The compute-sanitizer tool.
    #[arg(long, value_enum, default_value_t = SanitizeTool::Memcheck, value_name = "TOOL")]
    tool: SanitizeTool,
    /// `human` (findings at source lines) or `json` (one object per finding, then a summary).
    #[arg(long, value_enum, default_value_t = MessageFormat::Human, value_name = "FMT")]
    message_format: MessageFormat,
    /// Run this program as it is instead of building with cargo (repeatable); what follows `--`
    /// is then its arguments. For binaries built elsewhere, e.g. carried to a GPU machine.
    #[arg(long = "exe", value_name = "PATH")]
    exes: Vec<PathBuf>,
    /// The cargo command that builds and names the programs, and its arguments: `test --release`,
    /// `run --example bench`, `build --bins` (after `--`).
    #[arg(last = true, required_unless_present = "exes", value_name = "CARGO ARGS")]
    cargo: Vec<String>,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum SanitizeTool {
    Memcheck,
    Racecheck,
    Synccheck,
    Initcheck,
}

#[derive(Args, Debug)]
struct CheckArgs {
    #[command(flatten)]
    select: Select,
    #[command(flatten)]
    include: IncludeDirs,
    #[command(flatten)]
    out: OutputArgs,
}

/// `-I DIR` alone of the build options, as [`Options`] declares it (`cuda_include`): the folders
/// where `cargo ptx check` finds the headers whose inline PTX it checks; the other options
/// choose nothing it reads.
#[derive(Debug, Default)]
struct IncludeDirs(Vec<PathBuf>);

/// The id clap gives [`Options::cuda_include`]: its field's name.
const INCLUDE_ID: &str = "cuda_include";

impl clap::FromArgMatches for IncludeDirs {
    fn from_arg_matches(m: &clap::ArgMatches) -> Result<Self, clap::Error> {
        Ok(IncludeDirs(m.get_many::<PathBuf>(INCLUDE_ID).into_iter().flatten().cloned().collect()))
    }

    fn update_from_arg_matches(&mut self, m: &clap::ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

impl Args for IncludeDirs {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        let options = Options::augment_args(clap::Command::new("options"));
        // Present as long as `Options` has the field; a cli test parses `check -I`.
        let arg = options.get_arguments().find(|a| a.get_id() == INCLUDE_ID).cloned();
        match arg {
            Some(arg) => cmd.arg(arg),
            None => cmd,
        }
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

/// Which kernel crates (and .cu files) a command works on.
#[derive(Args, Debug)]
struct Select {
    /// Kernel crate or workspace folders, Cargo.toml files, or lone .cu files [default: the current workspace].
    #[arg(value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// Only this kernel crate (repeatable).
    #[arg(short = 'p', long = "package", value_name = "NAME", help_heading = "Package Selection")]
    packages: Vec<String>,
    /// Path to the Cargo.toml of the workspace to search.
    #[arg(long, value_name = "PATH", help_heading = "Manifest Options")]
    manifest_path: Option<PathBuf>,
}

#[derive(Args, Debug)]
struct OutputArgs {
    /// `human` (cargo-style lines) or `json` (one JSON object per line on stdout).
    #[arg(long, value_enum, default_value_t = MessageFormat::Human, value_name = "FMT")]
    message_format: MessageFormat,
    /// Print only errors and warnings.
    #[arg(short, long, conflicts_with = "verbose")]
    quiet: bool,
    /// Use verbose output: `-v` lists each artifact and each kernel's registers, spills, shared
    /// memory and stack per arch; `-vv` also each tool's command line.
    #[arg(short, long, alias = "resource-usage", action = clap::ArgAction::Count)]
    verbose: u8,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum MessageFormat {
    Human,
    Json,
}

#[derive(Args, Debug)]
struct DoctorArgs {
    /// The rustup toolchain for kernels [default: the one the project's kernel crates use, else nightly]
    #[arg(long, value_name = "NAME")]
    toolchain: Option<String>,
    /// `human` or `json` (one object with every check).
    #[arg(long, value_enum, default_value_t = MessageFormat::Human, value_name = "FMT")]
    message_format: MessageFormat,
}

#[derive(Args, Debug)]
struct SetupArgs {
    /// CUDA release of NVIDIA's compiler wheels (13.0, 13.1, 13.2).
    #[arg(long, default_value = setup::DEFAULT_CUDA, value_name = "VERSION")]
    cuda: String,
    /// The rustup toolchain for kernels [default: the one the project's kernel crates use, else nightly]
    #[arg(long, value_name = "NAME")]
    toolchain: Option<String>,
    /// Reinstall the CUDA wheels even if that release is installed.
    #[arg(long)]
    force: bool,
    /// Only the rustup part.
    #[arg(long, conflicts_with = "no_rust")]
    no_cuda: bool,
    /// Only the CUDA part.
    #[arg(long)]
    no_rust: bool,
    /// Extra tools to install, pinned: a compiler launcher, or a CUDA library's headers (put into
    /// the CUDA install's include folder, where every nvcc run finds them).
    #[arg(long, value_name = "TOOL", value_delimiter = ',', value_parser = with_values())]
    with: Vec<String>,
}

/// What `setup --with` takes, each with what it installs, from setup's own lists.
fn with_values() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(
        setup::with_names().into_iter().map(|(name, help)| clap::builder::PossibleValue::new(name).help(help)),
    )
}

/// `--arch sm_80,,sm_90` and `--arch sm_80,` as `--arch sm_80,sm_90` and `--arch sm_80`: clap
/// splits a list at each comma and would hand the arch parser an empty item, refused as an empty
/// list; metadata and `CARGO_PTX_ARCH` skip empty items the same way. Arguments after `--` (the
/// programs' own, for `sanitize`) are left alone.
fn tidy_arch_lists(args: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    let tidy = |list: &str| list.split(',').map(str::trim).filter(|i| !i.is_empty()).collect::<Vec<_>>().join(",");
    let mut out = Vec::with_capacity(args.len());
    let mut value_of_arch = false;
    let mut rest = false;
    for arg in args {
        let text = arg.to_str().map(str::to_string);
        out.push(match text {
            Some(t) if !rest && value_of_arch => tidy(&t).into(),
            Some(t) if !rest && t.starts_with("--arch=") => format!("--arch={}", tidy(&t["--arch=".len()..])).into(),
            Some(t) if t == "--" => {
                rest = true;
                arg
            }
            _ => arg,
        });
        value_of_arch = !rest && out.last().is_some_and(|a| a == "--arch");
    }
    out
}

/// Runs `cargo ptx` with these arguments (the program name first).
pub fn main(args: impl IntoIterator<Item = std::ffi::OsString>) -> ExitCode {
    // cargo runs `cargo-ptx ptx build ...`; a direct call is `cargo-ptx build ...`.
    let mut args: Vec<std::ffi::OsString> = args.into_iter().collect();
    if args.get(1).is_some_and(|a| a == "ptx") {
        args.remove(1);
    }
    let cli = Cli::parse_from(tidy_arch_lists(args));
    apply_color(cli.color);
    match cli.command {
        Command::Build(a) => build(*a),
        Command::Check(a) => check(a),
        Command::Inspect(a) => inspect_cmd(*a),
        Command::Sanitize(a) => sanitize_cmd(a),
        Command::Doctor(a) => doctor(a),
        Command::Setup(a) => setup_cmd(a),
        Command::Cache(a) => cache_cmd(a),
        Command::Package(a) => package_cmd(a),
        Command::New(a) => new_project(a.path, a.project, false),
        Command::Init(a) => new_project(a.path, a.project, true),
    }
}

fn format_of(f: MessageFormat) -> Format {
    match f {
        MessageFormat::Human => Format::Human,
        MessageFormat::Json => Format::Json,
    }
}

fn build(a: BuildArgs) -> ExitCode {
    let printer = Printer::new(format_of(a.out.message_format), a.out.quiet, a.out.verbose);
    let result = build_options(&a, printer.colors()).and_then(|opts| opts.run(&printer));
    printer.finish_build(result)
}

fn build_options(a: &BuildArgs, color: bool) -> ptx_build::Result<BuildOptions> {
    let mut options = a.options.clone();
    if a.release {
        options.profile = Some(Profile::Release);
    }
    // `-I dir` on the command line is relative to where the command runs.
    let cwd = std::env::current_dir().unwrap_or_default();
    let mut opts = BuildOptions::default();
    opts.manifest_path = a.select.manifest_path.clone();
    opts.paths = a.select.paths.clone();
    opts.packages = a.select.packages.clone();
    opts.options = options.resolve_paths(&cwd, &Source::CommandLine)?;
    opts.source = Source::CommandLine;
    opts.target_dir = a.target_dir.clone();
    opts.jobs = a.jobs;
    opts.color = color;
    opts.manifest_flags = ManifestFlags { locked: a.manifest.locked, offline: a.manifest.offline, frozen: a.manifest.frozen };
    Ok(opts)
}

fn inspect_cmd(a: InspectArgs) -> ExitCode {
    // Build progress goes to stderr; the listing alone to stdout, so it can be piped.
    let printer = Printer::new(Format::Human, true, 0);
    let archs_requested = a.options.archs.as_ref().is_some_and(|v| !v.is_empty());
    let cwd = std::env::current_dir().unwrap_or_default();
    let Select { paths, manifest_path, packages } = a.select;
    let options = match a.options.resolve_paths(&cwd, &Source::CommandLine) {
        Ok(o) => o,
        Err(e) => {
            printer.error(&e);
            return ExitCode::FAILURE;
        }
    };
    let mut build = BuildOptions::default();
    build.manifest_path = manifest_path;
    build.paths = paths;
    build.packages = packages;
    build.options = options;
    build.source = Source::CommandLine;
    build.target_dir = a.target_dir;
    build.color = printer.colors();
    let opts = inspect::InspectOptions {
        build,
        kernel: a.kernel,
        listing: if a.sass { inspect::Listing::Sass } else { inspect::Listing::Ptx },
        archs_requested,
    };
    match inspect::inspect(&opts, &printer) {
        Ok(text) => {
            use std::io::Write;
            let _ = std::io::stdout().lock().write_all(text.as_bytes());
            ExitCode::SUCCESS
        }
        Err(e) => {
            printer.error(&e);
            ExitCode::FAILURE
        }
    }
}

fn sanitize_cmd(a: SanitizeArgs) -> ExitCode {
    let format = format_of(a.message_format);
    let printer = Printer::new(format, false, 0);
    let tool = match a.tool {
        SanitizeTool::Memcheck => sanitize::Tool::Memcheck,
        SanitizeTool::Racecheck => sanitize::Tool::Racecheck,
        SanitizeTool::Synccheck => sanitize::Tool::Synccheck,
        SanitizeTool::Initcheck => sanitize::Tool::Initcheck,
    };
    let opts = sanitize::SanitizeOptions { tool, cargo_args: a.cargo, exes: a.exes };
    match sanitize::sanitize(&opts, &printer) {
        Ok(report) => printer.finish_sanitize(&report),
        Err(e) => {
            printer.error(&e);
            ExitCode::from(2)
        }
    }
}

fn check(a: CheckArgs) -> ExitCode {
    let printer = Printer::new(format_of(a.out.message_format), a.out.quiet, a.out.verbose);
    let Select { paths, manifest_path, packages } = a.select;
    let mut opts = BuildOptions::default();
    opts.manifest_path = manifest_path;
    opts.paths = paths;
    opts.packages = packages;
    opts.source = Source::CommandLine;
    if !a.include.0.is_empty() {
        // As `build -I`: relative to where the command runs, and a folder that is not there is an error.
        let cwd = std::env::current_dir().unwrap_or_default();
        let mut include = Options::default();
        include.cuda_include = Some(a.include.0);
        match include.resolve_paths(&cwd, &Source::CommandLine) {
            Ok(o) => opts.options = o,
            Err(e) => return printer.finish_check(Err(e)),
        }
    }
    printer.finish_check(opts.check(&printer))
}

fn doctor(a: DoctorArgs) -> ExitCode {
    let report = doctor::report(a.toolchain.as_deref());
    crate::output::print_doctor(&report, format_of(a.message_format));
    if report.ready {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn cache_cmd(a: CacheArgs) -> ExitCode {
    let printer = Printer::new(Format::Human, false, 0);
    let dir = match a.dir {
        Some(d) => Some(d),
        None => Options::from_env().map(|o| o.resolve().shared_cache.dir()).unwrap_or_else(|e| {
            printer.error(&e);
            None
        }),
    };
    let Some(dir) = dir else {
        printer.error(&ptx_build::Error::ToolMissing {
            what: "a shared cache folder".into(),
            detail: " (CARGO_PTX_CACHE_DIR is `off`, or no HOME to put one in)".into(),
            help: "pass `--dir DIR`, or set CARGO_PTX_CACHE_DIR to a folder".into(),
        });
        return ExitCode::FAILURE;
    };
    let cache = ptx_build::internals::cache::StepCache::new(dir);
    if a.clear {
        let before = cache.stats();
        if let Err(e) = cache.clear() {
            printer.error(&e);
            return ExitCode::FAILURE;
        }
        printer.status("Removed", &format!("{} entries, {} ({})", before.entries, mib(before.bytes), cache.root().display()));
        return ExitCode::SUCCESS;
    }
    let s = cache.stats();
    printer.status(
        "Cache",
        &format!(
            "{}: {} entries, {} of {} (oldest-used evicted past that; CARGO_PTX_CACHE_SIZE in MiB)",
            s.root.display(),
            s.entries,
            mib(s.bytes),
            mib(s.limit)
        ),
    );
    ExitCode::SUCCESS
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1u64 << 20) as f64)
}

fn package_cmd(a: PackageArgs) -> ExitCode {
    let printer = Printer::new(Format::Human, false, 0);
    let mut cargo_flags = Vec::new();
    if a.locked {
        cargo_flags.push("--locked".to_string());
    }
    if a.offline {
        cargo_flags.push("--offline".to_string());
    }
    let req = crate::package::PackageRequest { manifest_path: a.manifest_path, package: a.package, cargo_flags, check: a.check };
    match crate::package::package(&req) {
        Ok(sets) => {
            for s in &sets {
                let kernels: usize = s.manifest.crates.iter().flat_map(|c| c.signatures.values()).map(Vec::len).sum();
                let kib = |b: u64| format!("{:.1} KiB", b as f64 / 1024.0);
                let (verb, what) = if req.check {
                    ("Checked", format!("{} matches the sources and options", s.dir.display()))
                } else {
                    ("Packaged", format!("into {}", s.dir.display()))
                };
                printer.status(
                    verb,
                    &format!(
                        "`{}`: {kernels} kernels for {} {what} ({}: PTX {}, cubins {})",
                        s.manifest.package,
                        s.manifest.archs.join(", "),
                        kib(s.ptx_bytes + s.cubin_bytes),
                        kib(s.ptx_bytes),
                        kib(s.cubin_bytes)
                    ),
                );
                if let Some(w) = s.shipping_warning() {
                    printer.warning(&w);
                }
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            printer.error(&e);
            ExitCode::FAILURE
        }
    }
}

fn setup_cmd(a: SetupArgs) -> ExitCode {
    let printer = Printer::new(Format::Human, false, 0);
    let opts =
        setup::SetupOptions { cuda: a.cuda, toolchain: a.toolchain, force: a.force, no_cuda: a.no_cuda, no_rust: a.no_rust, with: a.with };
    match setup::setup(&opts, &printer) {
        Ok(report) => {
            for line in &report.actions {
                printer.status("Ready", line);
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            printer.error(&e);
            ExitCode::FAILURE
        }
    }
}

fn new_project(path: PathBuf, a: ProjectArgs, init: bool) -> ExitCode {
    let printer = Printer::new(Format::Human, false, 0);
    let project = NewProject {
        path,
        name: a.name,
        kernels: match a.kernels {
            Kernels::Rust => KernelLanguage::Rust,
            Kernels::Cuda => KernelLanguage::Cuda,
            Kernels::Both => KernelLanguage::Both,
        },
        archs: a.archs,
        vcs: match a.vcs {
            None => Vcs::Auto,
            Some(VcsArg::Git) => Vcs::Git,
            Some(VcsArg::None) => Vcs::None,
        },
        dependencies: match a.path_deps {
            Some(dir) => Dependencies::Path(dir),
            None => Dependencies::Auto,
        },
        init,
    };
    match scaffold::create(&project) {
        Ok(created) => {
            printer
                .status("Created", &format!("GPU project `{}` ({} kernels) at {}", created.name, project.kernels, created.dir.display()));
            if let Some(deps) = &created.dependencies_note {
                printer.status("Using", deps);
            }
            for note in &created.notes {
                printer.warning(note);
            }
            let cd = std::env::current_dir().ok().and_then(|cwd| created.dir.strip_prefix(cwd).ok().map(PathBuf::from));
            let cd = match cd.unwrap_or_else(|| created.dir.clone()) {
                rel if rel.as_os_str().is_empty() => String::new(),
                // Quoted for a shell when it has to be.
                p if p.to_string_lossy().contains(|c: char| c.is_whitespace() || "'\"$&;|<>()*?".contains(c)) => {
                    format!("cd '{}' && ", p.display())
                }
                p => format!("cd {} && ", p.display()),
            };
            let cuda = toolchain::Cuda::find();
            if cuda.ptxas.is_none() || cuda.libdevice.is_none() {
                printer.status("Next", "`cargo ptx setup` once on this machine: it installs the kernel toolchain");
            }
            printer.status("Next", &format!("{cd}cargo run --release   (`cargo test` runs without a GPU)"));
            ExitCode::SUCCESS
        }
        Err(e) => {
            printer.error(&e);
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests;
