//! Finding and versioning every tool a build needs, in one place and one report.
//!
//! Rust kernels need a rustup nightly with `rust-src` (for `-Zbuild-std=core`) and `llvm-tools`
//! (llvm-link, opt, llc of the same LLVM that compiled the bitcode). CUDA pieces are looked up
//! component by component, in this order:
//!
//! 1. the variables naming one file: `PTXAS`, `NVCC`, `LIBDEVICE`;
//! 2. the variables naming a toolkit root: `CUDA_PATH`, `CUDA_HOME`, `CUDA_ROOT`;
//! 3. `PATH`, then `/usr/local/cuda`;
//! 4. the copy `cargo ptx setup` installed under the cargo-ptx home.
//!
//! A variable naming one file wins over a root because it is the more specific request.

pub mod gpu;
pub mod process;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::arch::Supported;
use crate::error::{Error, Result};

/// Every environment variable tool discovery reads (a build script reruns when one changes).
pub const ENV_VARS: &[&str] = &[
    "PTXAS",
    "NVCC",
    "LIBDEVICE",
    "CUDA_PATH",
    "CUDA_HOME",
    "CUDA_ROOT",
    "PATH",
    "CARGO_PTX_HOME",
    "XDG_CACHE_HOME",
    "HOME",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
];

/// The rustup toolchain kernels use unless the crate or the command line says otherwise.
pub const DEFAULT_TOOLCHAIN: &str = "nightly";

/// The host's target triple: `TARGET` inside a build script, else what `rustc -vV` says.
pub fn host_triple() -> String {
    if let Ok(t) = std::env::var("TARGET") {
        return t;
    }
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    process::probe(process::command(rustc).arg("-vV"))
        .ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).lines().find_map(|l| l.strip_prefix("host: ").map(str::to_string)))
        .unwrap_or_else(|| "x86_64-unknown-linux-gnu".to_string())
}

/// Where `cargo ptx setup` installs, and other per-user state of cargo-ptx.
pub fn home() -> Option<PathBuf> {
    if let Some(h) = std::env::var_os("CARGO_PTX_HOME").filter(|h| !h.is_empty()) {
        return Some(PathBuf::from(h));
    }
    if let Some(x) = std::env::var_os("XDG_CACHE_HOME").filter(|h| !h.is_empty()) {
        return Some(PathBuf::from(x).join("cargo-ptx"));
    }
    std::env::var_os("HOME").filter(|h| !h.is_empty()).map(|h| PathBuf::from(h).join(".cache").join("cargo-ptx"))
}

fn setup_help(toolchain: &str) -> String {
    format!("run `cargo ptx setup`, or `rustup toolchain install {toolchain} --profile minimal --component rust-src,llvm-tools`")
}

// ---------------------------------------------------------------------------------------------
// Rust

/// A rustup toolchain for kernels, with what it has and lacks.
#[derive(Clone, Debug)]
pub struct Rust {
    /// The rustup name (`nightly`, `nightly-2026-05-19`).
    pub toolchain: String,
    /// Its rustc.
    pub rustc: PathBuf,
    /// Its cargo.
    pub cargo: PathBuf,
    /// Its sysroot (`rustc --print sysroot`).
    pub sysroot: PathBuf,
    /// `rustc -V`, e.g. `rustc 1.97.0-nightly (1a2b3c4 2026-05-19)`.
    pub version: String,
    /// The LLVM version rustc reports (`22.1.0`).
    pub llvm_version: String,
    /// Its host triple.
    pub host: String,
    /// The `rust-src` component's library folder, when installed.
    pub rust_src: Option<PathBuf>,
    /// The `llvm-tools` component, when installed.
    pub llvm: Option<Llvm>,
}

impl Rust {
    /// Finds `toolchain` through rustup and reads its version.
    pub fn find(toolchain: &str) -> Result<Rust> {
        let rustup = on_path("rustup").ok_or_else(|| Error::ToolMissing {
            what: "rustup".into(),
            detail: " (kernels are built with a rustup nightly)".into(),
            help: "install rustup from your package manager or rustup.rs, then run `cargo ptx setup`".into(),
        })?;
        let mut cmd = process::command(&rustup);
        cmd.args(["which", "--toolchain", toolchain, "rustc"]).env_remove("RUSTUP_TOOLCHAIN");
        let out = process::output("rustup", &mut cmd)?;
        if !out.status.success() {
            return Err(Error::ToolMissing {
                what: format!("the `{toolchain}` toolchain"),
                detail: format!(" ({})", String::from_utf8_lossy(&out.stderr).trim().trim_start_matches("error: ")),
                help: setup_help(toolchain),
            });
        }
        let rustc = PathBuf::from(process::stdout_text(&out).trim());
        let sysroot = rustc.parent().and_then(Path::parent).map(Path::to_path_buf).unwrap_or_default();
        let vv = process::checked("rustc", || format!(" (`{} -vV`)", rustc.display()), process::command(&rustc).arg("-vV"))?;
        let vv = process::stdout_text(&vv);
        let field = |k: &str| vv.lines().find_map(|l| l.strip_prefix(k)).map(|v| v.trim().to_string()).unwrap_or_default();
        let version = vv.lines().next().unwrap_or_default().trim().to_string();
        let host = field("host:");
        if !version.contains("nightly") && !version.contains("-dev") {
            return Err(Error::ToolMissing {
                what: format!("a nightly toolchain (`{toolchain}` is `{version}`)"),
                detail: "; kernels need `#![feature(abi_ptx)]`, which only a nightly accepts".into(),
                help: format!("set `toolchain = \"nightly\"` in [package.metadata.ptx], or {}", setup_help("nightly")),
            });
        }
        let rust_src = Some(sysroot.join("lib/rustlib/src/rust/library")).filter(|p| p.join("core/Cargo.toml").is_file());
        let llvm_bin = sysroot.join("lib/rustlib").join(&host).join("bin");
        let llvm = Llvm::TOOLS.iter().all(|t| llvm_bin.join(t).is_file()).then_some(Llvm { bin: llvm_bin });
        Ok(Rust {
            toolchain: toolchain.to_string(),
            cargo: sysroot.join("bin").join("cargo"),
            rustc,
            sysroot,
            version,
            llvm_version: field("LLVM version:"),
            host,
            rust_src,
            llvm,
        })
    }

    /// The pieces a Rust kernel build needs, or an error naming what is missing and the fix.
    pub fn require(&self) -> Result<&Llvm> {
        let mut missing = Vec::new();
        if self.rust_src.is_none() {
            missing.push("rust-src");
        }
        if self.llvm.is_none() {
            missing.push("llvm-tools");
        }
        match &self.llvm {
            Some(llvm) if missing.is_empty() => Ok(llvm),
            _ => Err(Error::ToolMissing {
                what: format!(
                    "the {} component{} of the `{}` toolchain",
                    missing.join(" and "),
                    if missing.len() > 1 { "s" } else { "" },
                    self.toolchain
                ),
                detail: " (rust-src builds `core` for nvptx64; llvm-tools links the bitcode with the same LLVM that wrote it)".into(),
                help: format!("run `cargo ptx setup`, or `rustup component add {} --toolchain {}`", missing.join(" "), self.toolchain),
            }),
        }
    }
}

/// The `llvm-tools` of a toolchain: the same LLVM that wrote its bitcode.
#[derive(Clone, Debug)]
pub struct Llvm {
    /// The folder of llvm-link, opt and llc.
    pub bin: PathBuf,
}

impl Llvm {
    const TOOLS: &'static [&'static str] = &["llvm-link", "opt", "llc", "llvm-nm", "llvm-dis"];

    /// The path of one LLVM tool (`llc`).
    pub fn tool(&self, name: &str) -> PathBuf {
        self.bin.join(format!("{name}{}", std::env::consts::EXE_SUFFIX))
    }

    /// The CPUs `llc` can generate code for (`sm_20` .. `sm_121f`).
    pub fn supported(&self) -> &'static Supported {
        static CACHE: OnceLock<Supported> = OnceLock::new();
        CACHE.get_or_init(|| {
            let out = process::probe(process::command(self.tool("llc")).args(["-march=nvptx64", "-mcpu=help"]));
            let text =
                out.map(|o| format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))).unwrap_or_default();
            let section = text.split("Available features").next().unwrap_or("");
            let names =
                section.lines().filter_map(|l| l.split_whitespace().next()).filter(|n| n.starts_with("sm_")).map(String::from).collect();
            Supported { names }
        })
    }

    /// The PTX ISA versions `llc` can write, as `ptxNN` feature names.
    pub fn ptx_versions(&self) -> Vec<String> {
        let out = process::probe(process::command(self.tool("llc")).args(["-march=nvptx64", "-mattr=help"]));
        let text = out.map(|o| format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))).unwrap_or_default();
        text.lines()
            .filter_map(|l| l.split_whitespace().next())
            .filter(|n| n.starts_with("ptx") && n[3..].chars().all(|c| c.is_ascii_digit()))
            .map(String::from)
            .collect()
    }
}

// ---------------------------------------------------------------------------------------------
// CUDA

/// A CUDA tool and where it came from.
#[derive(Clone, Debug)]
pub struct Tool {
    /// Where it was found.
    pub path: PathBuf,
    /// `13.0.88`, read from the tool itself.
    pub version: String,
    /// Which rule found it: `PTXAS`, `CUDA_PATH`, `PATH`, `/usr/local/cuda`, `cargo ptx setup`.
    pub source: String,
}

impl Tool {
    /// `(major, minor)` of the release, e.g. `(13, 0)`.
    pub fn release(&self) -> Option<(u32, u32)> {
        release_of(&self.version)
    }
}

fn release_of(version: &str) -> Option<(u32, u32)> {
    let mut it = version.split('.');
    Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
}

/// NVIDIA's libdevice bitcode.
#[derive(Clone, Debug)]
pub struct Libdevice {
    /// Where it was found.
    pub path: PathBuf,
    /// How it was found (`LIBDEVICE`, `CUDA_PATH`, `cargo ptx setup`, ...).
    pub source: String,
    /// The file starts with LLVM's bitcode magic.
    pub valid: bool,
}

/// What was found of a CUDA toolkit.
#[derive(Clone, Debug, Default)]
pub struct Cuda {
    /// ptxas, for cubins.
    pub ptxas: Option<Tool>,
    /// nvcc, for .cu files.
    pub nvcc: Option<Tool>,
    /// libdevice.10.bc, for `__nv_*` math.
    pub libdevice: Option<Libdevice>,
    /// Versions of the pieces of the install, by component (`nvcc`, `nvvm`, `crt`, `runtime`).
    pub components: BTreeMap<String, String>,
    /// Set when the pieces come from different releases (e.g. nvvm 13.5 with ptxas 13.0).
    pub mixed: Option<String>,
    /// Tools named by `PTXAS`, `NVCC` or `LIBDEVICE` that do not work.
    pub rejected: Vec<Rejected>,
}

/// A `PTXAS`, `NVCC` or `LIBDEVICE` value that names nothing usable.
#[derive(Clone, Debug)]
pub struct Rejected {
    /// The variable.
    pub var: &'static str,
    /// Its value.
    pub path: PathBuf,
    /// What is wrong (`does not exist`, `failed: ...`).
    pub problem: String,
    /// How to fix it.
    pub help: String,
}

impl Rejected {
    /// The error a build that needs the tool stops with.
    pub fn to_error(&self) -> Error {
        Error::BadToolVariable { var: self.var.into(), path: self.path.clone(), problem: self.problem.clone(), help: self.help.clone() }
    }
}

/// The version of a tool a variable names, or what is wrong with it.
fn explicit_tool(path: &Path) -> std::result::Result<String, String> {
    let meta =
        fs::metadata(path)
            .map_err(|e| if e.kind() == std::io::ErrorKind::NotFound { "does not exist".to_string() } else { e.to_string() })?;
    if !meta.is_file() {
        return Err(if meta.is_dir() { "is a folder, not a program".into() } else { "is not a regular file".into() });
    }
    // The usual case answers from the per-binary cache; only a failing tool is run again, to
    // say why.
    if let Some(v) = tool_version(path) {
        return Ok(v);
    }
    let out = process::probe(process::command(path).arg("--version")).map_err(|e| format!("could not be started: {e}"))?;
    let printed = process::combined(&out);
    if !out.status.success() {
        let detail = if printed.trim().is_empty() { String::new() } else { format!(":\n{}", printed.trim_end()) };
        return Err(format!("failed: `{} --version` exited with {}{detail}", path.display(), out.status));
    }
    parse_tool_version(&String::from_utf8_lossy(&out.stdout))
        .ok_or_else(|| format!("is not an NVIDIA CUDA tool: `{} --version` printed no `release X.Y, VX.Y.Z` line", path.display()))
}

struct Root {
    dir: PathBuf,
    source: String,
}

impl Cuda {
    /// Looks for every CUDA component (see the module docs for the order).
    pub fn find() -> Cuda {
        let roots = candidate_roots();
        let var_file = |var: &str| std::env::var_os(var).filter(|v| !v.is_empty()).map(PathBuf::from);

        let in_roots = |rel: &str| roots.iter().map(|r| (r.dir.join(rel), r.source.clone())).find(|(p, _)| p.is_file());
        let mut rejected = Vec::new();
        // A variable is the user's explicit choice: when it names something that does not work,
        // that is an error to report, never a reason to fall back to another install.
        let mut tool = |var: &'static str, rel: &str| -> Option<Tool> {
            match var_file(var) {
                Some(path) => match explicit_tool(&path) {
                    Ok(version) => Some(Tool { path, version, source: var.into() }),
                    Err(problem) => {
                        let help = format!(
                            "point {var} at a working {} (e.g. <CUDA>/{rel}), or unset it to use `cargo ptx setup`'s",
                            rel.trim_start_matches("bin/")
                        );
                        rejected.push(Rejected { var, path, problem, help });
                        None
                    }
                },
                None => in_roots(rel).and_then(|(p, s)| tool_version(&p).map(|v| Tool { path: p, version: v, source: s })),
            }
        };
        let ptxas = tool("PTXAS", "bin/ptxas");
        let nvcc = tool("NVCC", "bin/nvcc");
        let libdevice = match var_file("LIBDEVICE") {
            Some(path) if !path.is_file() => {
                let (problem, help) = if path.is_dir() {
                    (
                        "is a folder, not a file".to_string(),
                        format!("LIBDEVICE names the file itself: {}", path.join("libdevice.10.bc").display()),
                    )
                } else if path.exists() {
                    ("is not a regular file".to_string(), "point LIBDEVICE at <CUDA>/nvvm/libdevice/libdevice.10.bc".to_string())
                } else {
                    ("does not exist".to_string(), "point LIBDEVICE at <CUDA>/nvvm/libdevice/libdevice.10.bc, or unset it".to_string())
                };
                rejected.push(Rejected { var: "LIBDEVICE", path, problem, help });
                None
            }
            Some(path) => Some(("LIBDEVICE".to_string(), path)),
            None => in_roots("nvvm/libdevice/libdevice.10.bc").map(|(p, s)| (s, p)),
        }
        .map(|(source, path)| {
            let valid = is_bitcode(&path);
            Libdevice { path, source, valid }
        });

        let mut cuda = Cuda { ptxas, nvcc, libdevice, rejected, ..Cuda::default() };
        let root_of = |t: &Path| t.parent().and_then(Path::parent).map(Path::to_path_buf);
        if let Some(root) = cuda.ptxas.as_ref().and_then(|t| root_of(&t.path)).or_else(|| cuda.nvcc.as_ref().and_then(|t| root_of(&t.path)))
        {
            cuda.components = component_versions(&root);
        }
        cuda.mixed = cuda.find_mix();
        cuda
    }

    fn find_mix(&self) -> Option<String> {
        let mut releases: Vec<(String, String)> = Vec::new();
        if let Some(p) = &self.ptxas {
            releases.push(("ptxas".into(), p.version.clone()));
        }
        if let Some(n) = &self.nvcc {
            releases.push(("nvcc".into(), n.version.clone()));
        }
        releases.extend(self.components.iter().map(|(k, v)| (k.clone(), v.clone())));
        let first = releases.first()?;
        let base = release_of(&first.1)?;
        let odd: Vec<String> = releases.iter().filter(|(_, v)| release_of(v) != Some(base)).map(|(k, v)| format!("{k} {v}")).collect();
        if odd.is_empty() {
            return None;
        }
        Some(format!(
            "{} {} is mixed with {}: NVIDIA's compilers of one release must be used together (a newer nvvm writes PTX that an older ptxas rejects with `Unsupported .version`); reinstall one release: `cargo ptx setup --cuda {}.{} --force`",
            first.0,
            first.1,
            odd.join(", "),
            base.0,
            base.1
        ))
    }

    /// Supported archs of the found ptxas, from its `--help`.
    pub fn ptxas_supported(&self) -> Option<Supported> {
        let ptxas = self.ptxas.as_ref()?;
        let text = tool_output(&ptxas.path, &["--help"])?;
        let section = text.split("--gpu-name").nth(1)?.split("Default value").next()?;
        let allowed = section.split("Allowed values for this option:").nth(1)?;
        let names = allowed
            .split(',')
            .map(|n| n.trim().trim_matches(|c: char| c == '\'' || c == '.' || c.is_whitespace()).to_string())
            .filter(|n| n.starts_with("sm_"))
            .collect();
        Some(Supported { names })
    }
}

/// CUDA libraries `cargo ptx setup --with NAME` can put into the CUDA install (name, a header
/// that shows they are there), and `cuda-libraries` can name.
pub const CUDA_LIBRARIES: &[(&str, &str)] = &[("cublas", "cublas_v2.h"), ("cudnn", "cudnn.h")];

/// A program named by an option (`launcher`): a path as written, else on PATH, else one
/// `cargo ptx setup --with NAME` installed.
pub fn find_program(name: &str) -> Option<PathBuf> {
    let as_path = Path::new(name);
    if as_path.components().count() > 1 {
        return Some(as_path.to_path_buf()).filter(|p| p.is_file());
    }
    on_path(name).or_else(|| installed_tool(name))
}

/// A tool `cargo ptx setup --with NAME` installed: `<cargo-ptx home>/tools/NAME/bin/NAME`.
pub fn installed_tool(name: &str) -> Option<PathBuf> {
    Some(home()?.join("tools").join(name).join("bin").join(name)).filter(|p| p.is_file())
}

/// The first executable file named `name` in `PATH`, as a shell would find it.
///
/// Written here rather than with the `which` crate: a PATH walk is a few lines, and every
/// package in ptx-build's tree slows each no-op build of a host crate (see `cache`).
pub fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(name)).find(|p| is_executable(p))
}

#[cfg(unix)]
fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(p: &Path) -> bool {
    p.is_file()
}

fn candidate_roots() -> Vec<Root> {
    let mut roots = Vec::new();
    for var in ["CUDA_PATH", "CUDA_HOME", "CUDA_ROOT"] {
        if let Some(v) = std::env::var_os(var).filter(|v| !v.is_empty()) {
            roots.push(Root { dir: PathBuf::from(v), source: var.into() });
        }
    }
    for tool in ["ptxas", "nvcc"] {
        if let Some(p) = on_path(tool) {
            let p = fs::canonicalize(&p).unwrap_or(p);
            if let Some(root) = p.parent().and_then(Path::parent) {
                roots.push(Root { dir: root.to_path_buf(), source: "PATH".into() });
            }
        }
    }
    roots.push(Root { dir: PathBuf::from("/usr/local/cuda"), source: "/usr/local/cuda".into() });
    if let Some(dir) = setup_root() {
        roots.push(Root { dir, source: "cargo ptx setup".into() });
    }
    roots
}

/// The newest CUDA release `cargo ptx setup` installed: `<home>/cuda/<version>/nvidia/cu<major>`.
pub fn setup_root() -> Option<PathBuf> {
    let base = home()?.join("cuda");
    let mut installs: Vec<(Vec<u32>, PathBuf)> = fs::read_dir(&base)
        .ok()?
        .filter_map(|e| e.ok())
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let key: Vec<u32> = name.split('.').filter_map(|p| p.parse().ok()).collect();
            let nvidia = e.path().join("nvidia");
            let cu = fs::read_dir(&nvidia).ok()?.filter_map(|d| d.ok()).map(|d| d.path()).find(|p| p.join("bin").is_dir())?;
            Some((key, cu))
        })
        .collect();
    installs.sort();
    installs.pop().map(|(_, p)| p)
}

/// `ptxas --version` / `nvcc --version` end with `Cuda compilation tools, release 13.0, V13.0.88`.
fn tool_version(path: &Path) -> Option<String> {
    parse_tool_version(&tool_output(path, &["--version"])?)
}

/// What `path args` prints on stdout when it succeeds, remembered per binary (path, size and
/// modification time, as cargo remembers `rustc -vV`), so a no-op build starts no CUDA tool.
pub(crate) fn tool_output(path: &Path, args: &[&str]) -> Option<String> {
    let meta = fs::metadata(path).ok()?;
    let modified = meta.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()).map(|d| d.as_nanos()).unwrap_or(0);
    let key = crate::cache::Key::new("tool-output-v1")
        .str(&path.to_string_lossy())
        .str(&args.join("\u{1f}"))
        .str(&format!("{}:{modified}", meta.len()))
        .finish();
    let file = home().map(|h| h.join("tool-cache").join(&key[..32]));
    if let Some(text) = file.as_ref().and_then(|f| fs::read_to_string(f).ok()) {
        return Some(text);
    }
    let out = process::probe(process::command(path).args(args)).ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    if let Some(f) = &file {
        // A cache that cannot be written only costs the next build one more run.
        let _ = crate::cache::write_atomic(f, text.as_bytes());
    }
    Some(text)
}

pub(crate) fn parse_tool_version(text: &str) -> Option<String> {
    text.lines().find_map(|l| l.split(", V").nth(1)).map(|v| v.trim().to_string())
}

/// Versions of the pieces of a CUDA install: pip's dist-info folders next to a wheel install,
/// or the toolkit's `version.json`.
fn component_versions(root: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    if let Some(site) = root.parent().and_then(Path::parent) {
        if let Ok(entries) = fs::read_dir(site) {
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                let Some(stem) = name.strip_suffix(".dist-info") else {
                    continue;
                };
                let Some((pkg, version)) = stem.rsplit_once('-') else {
                    continue;
                };
                let component = match pkg {
                    "nvidia_cuda_nvcc" => "nvcc",
                    "nvidia_nvvm" => "nvvm",
                    "nvidia_cuda_crt" => "crt",
                    "nvidia_cuda_runtime" => "runtime",
                    _ => continue,
                };
                out.insert(component.to_string(), version.to_string());
            }
        }
    }
    if let Ok(text) = fs::read_to_string(root.join("version.json")) {
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) {
            for (key, component) in [("cuda_nvcc", "nvcc"), ("libnvvm", "nvvm"), ("cuda_crt", "crt"), ("cuda_cudart", "runtime")] {
                if let Some(ver) = v.get(key).and_then(|c| c.get("version")).and_then(|s| s.as_str()) {
                    out.entry(component.to_string()).or_insert_with(|| ver.to_string());
                }
            }
        }
    }
    out
}

/// LLVM bitcode starts with `BC 0xC0DE`, or with the wrapper magic `0x0B17C0DE`.
fn is_bitcode(path: &Path) -> bool {
    use std::io::Read;
    // Opening a FIFO would block until someone writes to it.
    if !fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return false;
    }
    let mut magic = [0u8; 4];
    fs::File::open(path).and_then(|mut f| f.read_exact(&mut magic)).is_ok()
        && (magic == *b"BC\xC0\xDE" || magic == [0xDE, 0xC0, 0x17, 0x0B])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_executables_on_path_only() {
        assert!(on_path("sh").is_some_and(|p| p.is_absolute()), "sh is on every PATH");
        assert_eq!(on_path("no-such-tool-for-cargo-ptx"), None);
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("data");
        fs::write(&plain, "not a program").unwrap();
        assert!(!is_executable(&plain), "a file without the x bit is not a tool");
        assert!(!is_executable(dir.path()), "nor is a folder");
    }

    #[test]
    fn reads_versions_from_tool_banners() {
        let banner = "ptxas: NVIDIA (R) Ptx optimizing assembler\nCuda compilation tools, release 13.0, V13.0.88\nBuild cuda_13.0.r13.0/compiler.36424714_0\n";
        assert_eq!(parse_tool_version(banner).as_deref(), Some("13.0.88"));
        assert_eq!(release_of("13.0.88"), Some((13, 0)));
    }

    #[test]
    fn reports_a_mixed_install() {
        let mut cuda =
            Cuda { ptxas: Some(Tool { path: "/x/bin/ptxas".into(), version: "13.0.88".into(), source: "PATH".into() }), ..Cuda::default() };
        cuda.components.insert("nvvm".into(), "13.5.37".into());
        let mix = cuda.find_mix().unwrap();
        assert!(mix.contains("ptxas 13.0.88 is mixed with nvvm 13.5.37"), "{mix}");
        assert!(mix.contains("cargo ptx setup --cuda 13.0 --force"), "{mix}");
        cuda.components.insert("nvvm".into(), "13.0.88".into());
        assert!(cuda.find_mix().is_none());
    }

    #[test]
    fn missing_components_name_setup_and_the_rustup_command() {
        let rust = Rust {
            toolchain: "nightly".into(),
            rustc: "/r/bin/rustc".into(),
            cargo: "/r/bin/cargo".into(),
            sysroot: "/r".into(),
            version: "rustc 1.97.0-nightly".into(),
            llvm_version: "22.1.4".into(),
            host: "x86_64-unknown-linux-gnu".into(),
            rust_src: None,
            llvm: None,
        };
        let msg = rust.require().unwrap_err().to_string();
        assert!(msg.starts_with("the rust-src and llvm-tools components of the `nightly` toolchain not found"), "{msg}");
        assert!(msg.contains("run `cargo ptx setup`, or `rustup component add rust-src llvm-tools --toolchain nightly`"), "{msg}");
        let rust = Rust { llvm: Some(Llvm { bin: "/r/lib/rustlib/x/bin".into() }), ..rust };
        let msg = rust.require().unwrap_err().to_string();
        assert!(msg.contains("the rust-src component of") && msg.contains("rustup component add rust-src --toolchain nightly"), "{msg}");
    }

    #[test]
    fn checks_the_bitcode_magic() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("good.bc");
        let bad = dir.path().join("bad.bc");
        fs::write(&good, b"BC\xC0\xDEmore").unwrap();
        fs::write(&bad, b"<html>").unwrap();
        assert!(is_bitcode(&good));
        assert!(!is_bitcode(&bad));
    }
}
