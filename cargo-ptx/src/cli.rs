//! Argument parsing and dispatch: everything that finds tools, compiles or links lives in the
//! engine; this file turns flags into its options and its results into output.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};
use ptx_build::rust::Features;
use ptx_build::{arch, toolchain, BuildOptions};

use crate::output::{Format, Printer};
use crate::scaffold::{self, Dependencies, KernelLanguage, NewProject, Vcs};
use crate::{doctor, setup};

/// Build GPU kernels written in Rust and CUDA C++ into PTX and cubins.
#[derive(Parser, Debug)]
#[command(name = "cargo-ptx", bin_name = "cargo ptx", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Compile kernel crates to PTX (and cubins where ptxas is found) for each arch.
    Build(BuildArgs),
    /// Check inline PTX (`asm()` in .cu files, `asm!` in Rust kernels) against NVIDIA's rules, without compiling.
    Check(CheckArgs),
    /// Show every tool a build needs: found or missing, version, path, and the fix.
    Doctor(DoctorArgs),
    /// Install what is missing: the nightly's rust-src and llvm-tools, NVIDIA's ptxas/nvcc/libdevice.
    Setup(SetupArgs),
    /// Create a GPU project (host crate, kernels, tests) in a new folder.
    New(NewArgs),
    /// Create a GPU project in an existing empty folder.
    Init(InitArgs),
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
    /// (its root) [default: the published crates, at this cargo-ptx's version].
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
    /// GPU arch: sm_80, sm_90a, sm_100f, compute_80 (PTX only), comma lists, `all`, `native`.
    #[arg(long = "arch", value_name = "ARCH", env = "CARGO_PTX_ARCH")]
    archs: Vec<String>,
    /// Optimised kernels (`default<O3>`); artifacts under ptx/release.
    #[arg(short, long)]
    release: bool,
    /// Features of the kernel crate to enable (comma or space separated).
    #[arg(short = 'F', long, value_name = "FEATURES")]
    features: Vec<String>,
    /// Enable every feature of the kernel crate.
    #[arg(long)]
    all_features: bool,
    /// Do not enable the kernel crate's default feature.
    #[arg(long)]
    no_default_features: bool,
    /// Folder for artifacts [default: the workspace's target dir]; they go to <DIR>/ptx/<profile>/<package>/<arch>/.
    #[arg(long, value_name = "DIR")]
    target_dir: Option<PathBuf>,
    /// Pin the PTX ISA version (e.g. 7.8) [default: the lowest the arch allows].
    #[arg(long, value_name = "X.Y")]
    ptx_isa: Option<String>,
    /// The rustup toolchain for kernels [default: `toolchain` in [package.metadata.ptx], else nightly].
    #[arg(long, value_name = "NAME")]
    toolchain: Option<String>,
    /// Parallel link, nvcc and ptxas jobs [default: the number of CPUs].
    #[arg(short, long, value_name = "N")]
    jobs: Option<usize>,
    /// CUDA C++ with device debug info (`nvcc -G`: optimisations off, for cuda-gdb).
    #[arg(long)]
    device_debug: bool,
    #[command(flatten)]
    out: OutputArgs,
    /// Print each kernel's registers, spills, shared memory and stack per arch.
    #[arg(short, long, alias = "resource-usage")]
    verbose: bool,
}

#[derive(Args, Debug)]
struct CheckArgs {
    #[command(flatten)]
    select: Select,
    #[command(flatten)]
    out: OutputArgs,
}

/// Which kernel crates (and .cu files) a command works on.
#[derive(Args, Debug)]
struct Select {
    /// Kernel crate or workspace folders, Cargo.toml files, or lone .cu files [default: the current workspace].
    #[arg(value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// Path to the Cargo.toml of the workspace to search.
    #[arg(long, value_name = "PATH")]
    manifest_path: Option<PathBuf>,
    /// Only this kernel crate (repeatable).
    #[arg(short = 'p', long = "package", value_name = "NAME")]
    packages: Vec<String>,
}

#[derive(Args, Debug)]
struct OutputArgs {
    /// `human` (cargo-style lines) or `json` (one JSON object per line on stdout).
    #[arg(long, value_enum, default_value_t = MessageFormat::Human, value_name = "FMT")]
    message_format: MessageFormat,
    /// Print only errors and warnings.
    #[arg(short, long)]
    quiet: bool,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum MessageFormat {
    Human,
    Json,
}

#[derive(Args, Debug)]
struct DoctorArgs {
    /// The rustup toolchain for kernels.
    #[arg(long, default_value = toolchain::DEFAULT_TOOLCHAIN, value_name = "NAME")]
    toolchain: String,
    /// `human` or `json` (one object with every check).
    #[arg(long, value_enum, default_value_t = MessageFormat::Human, value_name = "FMT")]
    message_format: MessageFormat,
}

#[derive(Args, Debug)]
struct SetupArgs {
    /// CUDA release of NVIDIA's compiler wheels (13.0, 13.1, 13.2).
    #[arg(long, default_value = setup::DEFAULT_CUDA, value_name = "VERSION")]
    cuda: String,
    /// The rustup toolchain for kernels.
    #[arg(long, default_value = toolchain::DEFAULT_TOOLCHAIN, value_name = "NAME")]
    toolchain: String,
    /// Reinstall the CUDA wheels even if that release is installed.
    #[arg(long)]
    force: bool,
    /// Only the rustup part.
    #[arg(long, conflicts_with = "no_rust")]
    no_cuda: bool,
    /// Only the CUDA part.
    #[arg(long)]
    no_rust: bool,
}

/// Runs `cargo ptx` with these arguments (the program name first).
pub fn main(args: impl IntoIterator<Item = std::ffi::OsString>) -> ExitCode {
    // cargo runs `cargo-ptx ptx build ...`; a direct call is `cargo-ptx build ...`.
    let mut args: Vec<std::ffi::OsString> = args.into_iter().collect();
    if args.get(1).is_some_and(|a| a == "ptx") {
        args.remove(1);
    }
    let cli = Cli::parse_from(args);
    match cli.command {
        Command::Build(a) => build(a),
        Command::Check(a) => check(a),
        Command::Doctor(a) => doctor(a),
        Command::Setup(a) => setup_cmd(a),
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
    let printer = Printer::new(format_of(a.out.message_format), a.out.quiet, a.verbose);
    let result = build_options(&a, printer.colors()).and_then(|opts| opts.run(&printer));
    printer.finish_build(result)
}

fn build_options(a: &BuildArgs, color: bool) -> ptx_build::Result<BuildOptions> {
    let mut archs = Vec::new();
    for value in &a.archs {
        archs.extend(arch::parse_list(value)?);
    }
    let ptx_isa = match &a.ptx_isa {
        Some(s) => Some(s.parse().map_err(|message: String| ptx_build::Error::InvalidArch {
            arch: format!("--ptx-isa {s}"),
            reason: message,
            help: "e.g. `--ptx-isa 7.8`; `cargo ptx doctor` shows the tools' versions".into(),
        })?),
        None => None,
    };
    Ok(BuildOptions {
        manifest_path: a.select.manifest_path.clone(),
        paths: a.select.paths.clone(),
        packages: a.select.packages.clone(),
        archs,
        release: a.release,
        features: Features {
            features: a.features.iter().flat_map(|f| f.split([',', ' '])).filter(|f| !f.is_empty()).map(String::from).collect(),
            all_features: a.all_features,
            no_default_features: a.no_default_features,
        },
        target_dir: a.target_dir.clone(),
        ptx_isa,
        toolchain: a.toolchain.clone(),
        jobs: a.jobs,
        color,
        device_debug: a.device_debug,
        cuda_files: Vec::new(),
    })
}

fn check(a: CheckArgs) -> ExitCode {
    let printer = Printer::new(format_of(a.out.message_format), a.out.quiet, false);
    let Select { paths, manifest_path, packages } = a.select;
    let opts = BuildOptions { manifest_path, paths, packages, ..BuildOptions::default() };
    printer.finish_check(opts.check(&printer))
}

fn doctor(a: DoctorArgs) -> ExitCode {
    let report = doctor::report(&a.toolchain);
    crate::output::print_doctor(&report, format_of(a.message_format));
    if report.ready {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn setup_cmd(a: SetupArgs) -> ExitCode {
    let printer = Printer::new(Format::Human, false, false);
    let opts = setup::SetupOptions { cuda: a.cuda, toolchain: a.toolchain, force: a.force, no_cuda: a.no_cuda, no_rust: a.no_rust };
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
    let printer = Printer::new(Format::Human, false, false);
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
            None => Dependencies::Registry,
        },
        init,
    };
    match scaffold::create(&project) {
        Ok(created) => {
            printer
                .status("Created", &format!("GPU project `{}` ({} kernels) at {}", created.name, project.kernels, created.dir.display()));
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
