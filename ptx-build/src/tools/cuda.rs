//! NVIDIA's tools (nvcc, ptxas) and libdevice, component by component, in the order the
//! module docs of [`crate::tools`] give, with the release of each and a warning when they mix.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use super::{on_path, parse_tool_version, process, setup_root, tool_output, tool_version};
use crate::arch::Supported;
use crate::error::Error;

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

pub(super) fn release_of(version: &str) -> Option<(u32, u32)> {
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

/// The path to start `nvcc` by: nvcc finds its install (`nvcc.profile`, the headers) from the
/// folder it was started from, not from where it really is, so a symlink elsewhere
/// (`/usr/local/bin/nvcc`) fails on `cuda_runtime.h`. Such a link is followed; a wrapper script,
/// or an nvcc with its profile beside it, is started as given.
fn nvcc_to_start(path: PathBuf) -> PathBuf {
    let beside = |p: &Path| p.parent().is_some_and(|d| d.join("nvcc.profile").is_file());
    if beside(&path) || !fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
        return path;
    }
    match fs::canonicalize(&path) {
        Ok(real) if beside(&real) => real,
        _ => path,
    }
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
                    Ok(version) if var == "NVCC" => Some(Tool { path: nvcc_to_start(path), version, source: var.into() }),
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

/// The install folders discovery looks in, in its order (`CUDA_PATH`, `CUDA_HOME`, `CUDA_ROOT`,
/// PATH's, `/usr/local/cuda`, `cargo ptx setup`'s): where a library of the toolkit (the CUDA
/// runtime) is looked for when the tool's own folder lacks it (an `NVCC` wrapper script).
pub fn install_roots() -> Vec<PathBuf> {
    candidate_roots().into_iter().map(|r| r.dir).collect()
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
    fn a_symlinked_nvcc_is_started_from_its_install() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("cuda/bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::write(bin.join("nvcc"), "").unwrap();
        std::fs::write(bin.join("nvcc.profile"), "").unwrap();
        std::fs::create_dir_all(dir.path().join("links")).unwrap();
        let link = dir.path().join("links/nvcc");
        std::os::unix::fs::symlink(bin.join("nvcc"), &link).unwrap();
        assert_eq!(nvcc_to_start(link.clone()), fs::canonicalize(bin.join("nvcc")).unwrap());
        // Started as given: the install's own nvcc, and a file that is not a link (a wrapper).
        assert_eq!(nvcc_to_start(bin.join("nvcc")), bin.join("nvcc"));
        std::fs::write(dir.path().join("links/wrapper"), "#!/bin/sh\n").unwrap();
        assert_eq!(nvcc_to_start(dir.path().join("links/wrapper")), dir.path().join("links/wrapper"));
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
