//! Kernel crates: finding them with `cargo metadata` and reading `[package.metadata.ptx]`
//! (over `[workspace.metadata.ptx]` defaults).
//!
//! ```toml
//! [package.metadata.ptx]
//! archs = ["sm_80", "sm_90"]   # default: --arch, else `native`
//! toolchain = "nightly"        # the rustup toolchain for kernels
//! ftz = false                  # flush denormals to zero (libdevice's __CUDA_FTZ)
//! ptx-isa = "7.8"              # pin the PTX ISA version (default: the lowest the arch allows)
//! rust = true                  # the lib target holds Rust kernels
//! cuda-sources = ["cuda/**/*.cu"]  # CUDA C++ kernels (default: this glob when `cuda/` exists)
//! cuda-include = ["include"]   # -I folders, relative to the package
//! cuda-defines = { TILE = 16, USE_FAST = true }   # -D NAME=VALUE (true: -D NAME)
//! nvcc-flags = ["--use_fast_math"]
//! cuda-std = "c++17"           # nvcc's -std
//! ```

use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::arch::{self, ArchRequest};
use crate::cargo_json::{metadata, Metadata, Package};
use crate::diag::Diagnostic;
use crate::error::{Error, Result};

/// A package with `[package.metadata.ptx]`.
#[derive(Clone, Debug)]
pub struct KernelCrate {
    /// The package name.
    pub name: String,
    /// The lib target's crate name (`saxpy_kernels`): names the artifacts.
    pub lib_name: String,
    /// The lib target's root file (`src/lib.rs`), where kernel signatures are read.
    pub lib_src: Option<PathBuf>,
    pub manifest_path: PathBuf,
    pub dir: PathBuf,
    pub workspace_root: PathBuf,
    /// The target dir of the crate's workspace (artifacts go under `<it>/ptx/`).
    pub target_dir: PathBuf,
    pub config: PtxConfig,
    /// The .cu files to build (from `cuda-sources`, or a lone file given on the command line).
    pub cuda_sources: Vec<CudaSource>,
    /// Unknown keys and similar slips in the metadata.
    pub warnings: Vec<Diagnostic>,
}

/// The `[package.metadata.ptx]` table, merged over `[workspace.metadata.ptx]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PtxConfig {
    pub rust: bool,
    pub archs: Option<Vec<ArchRequest>>,
    pub toolchain: Option<String>,
    pub ftz: bool,
    pub ptx_isa: Option<PtxIsa>,
    pub cuda: CudaConfig,
}

impl Default for PtxConfig {
    fn default() -> Self {
        PtxConfig { rust: true, archs: None, toolchain: None, ftz: false, ptx_isa: None, cuda: CudaConfig::default() }
    }
}

/// How CUDA C++ sources are found and compiled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CudaConfig {
    /// Globs relative to the package; `None`: `cuda/**/*.cu` when `cuda/` exists.
    pub sources: Option<Vec<String>>,
    /// `-I` folders, relative to the package.
    pub include: Vec<String>,
    /// `-D NAME[=VALUE]`, in name order.
    pub defines: Vec<(String, Option<String>)>,
    pub flags: Vec<String>,
    /// nvcc's `-std`.
    pub std: String,
}

impl Default for CudaConfig {
    fn default() -> Self {
        CudaConfig { sources: None, include: Vec::new(), defines: Vec::new(), flags: Vec::new(), std: "c++17".into() }
    }
}

/// One .cu file of a kernel crate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CudaSource {
    pub path: PathBuf,
    /// Names its PTX module and artifacts (`saxpy` for `cuda/saxpy.cu`); a Rust identifier,
    /// unique in the crate.
    pub module: String,
}

/// A PTX ISA version such as `7.8`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PtxIsa {
    pub major: u32,
    pub minor: u32,
}

impl PtxIsa {
    /// LLVM's feature name: `ptx78`.
    pub fn llvm_feature(&self) -> String {
        format!("ptx{}{}", self.major, self.minor)
    }
}

impl fmt::Display for PtxIsa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

impl std::str::FromStr for PtxIsa {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let bad = || format!("`{s}` is not a PTX ISA version: write MAJOR.MINOR, e.g. `7.8` or `8.0`");
        let (major, minor) = s.trim().split_once('.').ok_or_else(bad)?;
        let major: u32 = major.parse().map_err(|_| bad())?;
        let minor: u32 = minor.parse().map_err(|_| bad())?;
        if !(1..=20).contains(&major) || minor > 9 {
            return Err(bad());
        }
        Ok(PtxIsa { major, minor })
    }
}

const KNOWN_KEYS: &[&str] =
    &["rust", "archs", "toolchain", "ftz", "ptx-isa", "cuda-sources", "cuda-include", "cuda-defines", "nvcc-flags", "cuda-std"];

/// Finds the kernel crates to build.
///
/// Each of `paths` is a package folder, a workspace folder or a `Cargo.toml`; every kernel crate
/// at or below it is taken. With no paths, the workspace of `manifest_path` (or of the current
/// folder) is searched. `packages` (`-p NAME`) narrows the set.
pub fn find_kernel_crates(manifest_path: Option<&Path>, paths: &[PathBuf], packages: &[String]) -> Result<Vec<KernelCrate>> {
    let mut found: Vec<KernelCrate> = Vec::new();
    let mut searched = Vec::new();
    let (cu_files, paths): (Vec<&PathBuf>, Vec<&PathBuf>) = paths.iter().partition(|p| p.extension().is_some_and(|e| e == "cu"));
    for f in cu_files {
        let k = CudaFiles::lone(f)?.into_crate()?;
        if !found.iter().any(|x| x.manifest_path == k.manifest_path) {
            found.push(k);
        }
    }
    let scopes: Vec<(Option<PathBuf>, Option<PathBuf>)> = if paths.is_empty() && found.is_empty() {
        vec![(manifest_path.map(Path::to_path_buf), None)]
    } else {
        paths.iter().map(|p| scope_of(p)).collect::<Result<_>>()?
    };
    for (manifest, under) in scopes {
        let meta = metadata(manifest.as_deref())?;
        searched.push(under.clone().unwrap_or_else(|| meta.workspace_root.clone()).display().to_string());
        // --no-deps: every package listed is a workspace member.
        for pkg in &meta.packages {
            let dir = pkg.manifest_path.parent().map(Path::to_path_buf).unwrap_or_default();
            if let Some(under) = &under {
                if !dir.starts_with(under) {
                    continue;
                }
            }
            if let Some(k) = kernel_crate(&meta, pkg)? {
                if !found.iter().any(|f| f.manifest_path == k.manifest_path) {
                    found.push(k);
                }
            }
        }
    }
    let searched = searched.join(", ");
    if found.is_empty() {
        return Err(Error::NoKernelCrate { searched });
    }
    if !packages.is_empty() {
        for name in packages {
            if !found.iter().any(|k| &k.name == name) {
                let available = found.iter().map(|k| format!("`{}`", k.name)).collect::<Vec<_>>().join(", ");
                return Err(Error::NoSuchPackage { name: name.clone(), searched, available });
            }
        }
        found.retain(|k| packages.contains(&k.name));
    }
    Ok(found)
}

/// A PATH argument as (manifest to ask cargo about, folder to keep packages under).
fn scope_of(path: &Path) -> Result<(Option<PathBuf>, Option<PathBuf>)> {
    let canonical = std::fs::canonicalize(path).map_err(|e| Error::io("find", path, e))?;
    if canonical.is_file() {
        if canonical.file_name().is_some_and(|n| n == "Cargo.toml") {
            let dir = canonical.parent().map(Path::to_path_buf);
            return Ok((Some(canonical), dir));
        }
        return Err(Error::Metadata {
            manifest: canonical,
            message: "this is a file, not a package folder or Cargo.toml\n  help: pass the folder of a kernel crate (a package with [package.metadata.ptx])".into(),
        });
    }
    // A folder: its own Cargo.toml if it has one, else the nearest workspace around it
    // (cargo finds that from the folder itself).
    let manifest = canonical.join("Cargo.toml");
    if manifest.is_file() {
        Ok((Some(manifest), Some(canonical)))
    } else {
        Ok((find_manifest_above(&canonical), Some(canonical)))
    }
}

fn find_manifest_above(dir: &Path) -> Option<PathBuf> {
    dir.ancestors().map(|d| d.join("Cargo.toml")).find(|m| m.is_file())
}

fn kernel_crate(meta: &Metadata, pkg: &Package) -> Result<Option<KernelCrate>> {
    let Some(table) = pkg.metadata.get("ptx") else {
        return Ok(None);
    };
    let manifest_path = pkg.manifest_path.clone();
    let mut warnings = Vec::new();
    let mut config = PtxConfig::default();
    if let Some(ws) = meta.metadata.get("ptx") {
        let ws_manifest = meta.workspace_root.join("Cargo.toml");
        apply(&mut config, ws, &ws_manifest, "workspace.metadata.ptx", &mut warnings)?;
    }
    apply(&mut config, table, &manifest_path, "package.metadata.ptx", &mut warnings)?;
    let lib = pkg.targets.iter().find(|t| t.is_lib());
    let lib_name = match lib {
        Some(t) => t.name.replace('-', "_"),
        None if config.rust => {
            return Err(Error::Config {
                manifest: manifest_path,
                table: "package.metadata.ptx",
                key: "rust".into(),
                message: "the package has no lib target to hold Rust kernels\n  help: add src/lib.rs with `#![no_std]` kernels, or set `rust = false` if the crate holds only CUDA C++".into(),
            })
        }
        None => pkg.name.replace('-', "_"),
    };
    let lib_src = lib.map(|t| t.src_path.clone());
    let dir = manifest_path.parent().map(Path::to_path_buf).unwrap_or_default();
    let cuda_sources = cuda_sources(&dir, &config.cuda, &lib_name, &manifest_path, &mut warnings)?;
    Ok(Some(KernelCrate {
        name: pkg.name.to_string(),
        lib_name,
        lib_src,
        dir,
        cuda_sources,
        manifest_path,
        workspace_root: meta.workspace_root.clone(),
        target_dir: meta.target_directory.clone(),
        config,
        warnings,
    }))
}

/// .cu files that are not part of a kernel crate: a lone file given as a PATH, or the
/// `Builder::cuda` files of a host crate.
#[derive(Clone, Debug)]
pub struct CudaFiles {
    /// Names the artifacts' folder (`<target>/ptx/<profile>/<name>/`).
    pub name: String,
    /// Paths in diagnostics are relative to it.
    pub dir: PathBuf,
    pub files: Vec<PathBuf>,
    /// Default: the target dir of the cargo workspace around `dir`, else `dir/target`.
    pub target_dir: Option<PathBuf>,
    pub config: CudaConfig,
}

impl CudaFiles {
    /// A lone .cu file given on the command line.
    pub fn lone(path: &Path) -> Result<CudaFiles> {
        let file = std::fs::canonicalize(path).map_err(|e| Error::io("find", path, e))?;
        let dir = file.parent().map(Path::to_path_buf).unwrap_or_default();
        let name = file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        Ok(CudaFiles { name, dir, files: vec![file], target_dir: None, config: CudaConfig::default() })
    }

    /// A kernel crate of these files alone.
    pub fn into_crate(self) -> Result<KernelCrate> {
        let target_dir = match self.target_dir {
            Some(t) => t,
            None => find_manifest_above(&self.dir)
                .and_then(|m| metadata(Some(&m)).ok())
                .map(|m| m.target_directory)
                .unwrap_or_else(|| self.dir.join("target")),
        };
        let lib_name = identifier(&self.name);
        // No Rust module to clash with: each module is named after its file.
        let cuda_sources = name_modules(&self.dir, self.files.clone(), "");
        let manifest_path = self.files.first().cloned().unwrap_or_else(|| self.dir.join(&self.name));
        Ok(KernelCrate {
            name: self.name,
            lib_name,
            lib_src: None,
            manifest_path,
            workspace_root: self.dir.clone(),
            target_dir,
            config: PtxConfig { rust: false, cuda: self.config, ..PtxConfig::default() },
            cuda_sources,
            dir: self.dir,
            warnings: Vec::new(),
        })
    }
}

/// `saxpy-v2` -> `saxpy_v2`, `2d` -> `_2d`: a name usable as a Rust module.
pub(crate) fn identifier(s: &str) -> String {
    let mut out: String = s.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '_' }).collect();
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    out
}

/// Expands `cuda-sources` (or the default `cuda/**/*.cu`) and names each file's module: its
/// stem, with parent folders added where two stems (or the Rust crate's name) clash.
fn cuda_sources(dir: &Path, cfg: &CudaConfig, lib_name: &str, manifest: &Path, warnings: &mut Vec<Diagnostic>) -> Result<Vec<CudaSource>> {
    let explicit = cfg.sources.is_some();
    let globs = match &cfg.sources {
        Some(g) => g.clone(),
        None if dir.join("cuda").is_dir() => vec!["cuda/**/*.cu".to_string()],
        None => return Ok(Vec::new()),
    };
    let mut files: Vec<PathBuf> = Vec::new();
    for g in &globs {
        let matched = glob_files(dir, g).map_err(|message| Error::Config {
            manifest: manifest.to_path_buf(),
            table: "package.metadata.ptx",
            key: "cuda-sources".into(),
            message,
        })?;
        if matched.is_empty() && explicit {
            warnings.push(
                Diagnostic::warning(format!("`cuda-sources` glob `{g}` matches no file under {}", dir.display()))
                    .at(manifest, None, None)
                    .note("globs are relative to the package folder, e.g. \"cuda/**/*.cu\""),
            );
        }
        files.extend(matched);
    }
    files.sort();
    files.dedup();
    Ok(name_modules(dir, files, lib_name))
}

/// The files (and links, even dangling ones: reading them later names the file that cannot be
/// read) matching `pattern` relative to `dir`; a bad pattern is an error message.
pub(crate) fn glob_files(dir: &Path, pattern: &str) -> std::result::Result<Vec<PathBuf>, String> {
    let entries = glob::glob(&dir.join(pattern).to_string_lossy()).map_err(|e| format!("`{pattern}` is not a valid glob: {e}"))?;
    Ok(entries.flatten().filter(|p| p.is_file() || p.symlink_metadata().is_ok_and(|m| m.is_symlink())).collect())
}

/// Names each file's PTX module: its stem, with parent folders added where two stems (or the
/// Rust crate's name) clash.
fn name_modules(dir: &Path, files: Vec<PathBuf>, lib_name: &str) -> Vec<CudaSource> {
    let rel: Vec<Vec<String>> = files
        .iter()
        .map(|f| {
            let r = f.strip_prefix(dir).unwrap_or(f).with_extension("");
            r.components().map(|c| identifier(&c.as_os_str().to_string_lossy())).collect()
        })
        .collect();
    let mut out = Vec::new();
    for (i, f) in files.iter().enumerate() {
        // The shortest tail of the path that no other file (nor the Rust crate) shares.
        let mut take = 1;
        let name = loop {
            let tail = |parts: &[String], n: usize| parts[parts.len().saturating_sub(n)..].join("_");
            let candidate = tail(&rel[i], take);
            let clash = candidate == lib_name || rel.iter().enumerate().any(|(j, r)| j != i && tail(r, take) == candidate);
            if !clash || take >= rel[i].len() {
                break if candidate == lib_name { format!("{candidate}_cu") } else { candidate };
            }
            take += 1;
        };
        out.push(CudaSource { path: f.clone(), module: name });
    }
    out
}

fn apply(config: &mut PtxConfig, table: &Value, manifest: &Path, name: &'static str, warnings: &mut Vec<Diagnostic>) -> Result<()> {
    let err = |key: &str, message: String| Error::Config { manifest: manifest.to_path_buf(), table: name, key: key.to_string(), message };
    let Some(table) = table.as_object() else {
        return Err(err("ptx", "expected a table, e.g. `[package.metadata.ptx]` with `archs = [\"sm_80\"]`".into()));
    };
    for (key, value) in table {
        match key.as_str() {
            "rust" => config.rust = value.as_bool().ok_or_else(|| err(key, format!("expected true or false, found {value}")))?,
            "ftz" => config.ftz = value.as_bool().ok_or_else(|| err(key, format!("expected true or false, found {value}")))?,
            "toolchain" => {
                let tc = value
                    .as_str()
                    .filter(|s| !s.trim().is_empty())
                    .ok_or_else(|| err(key, format!("expected a rustup toolchain name such as \"nightly\", found {value}")))?;
                config.toolchain = Some(tc.to_string());
            }
            "ptx-isa" => {
                let s = value.as_str().map(str::to_string).unwrap_or_else(|| value.to_string());
                config.ptx_isa = Some(s.parse().map_err(|m| err(key, m))?);
            }
            "archs" => {
                let items: Vec<&str> = match value {
                    Value::String(s) => vec![s.as_str()],
                    Value::Array(a) => a
                        .iter()
                        .map(|v| v.as_str().ok_or_else(|| err(key, format!("expected arch names such as \"sm_80\", found {v}"))))
                        .collect::<Result<_>>()?,
                    other => return Err(err(key, format!("expected a list such as [\"sm_80\", \"sm_90\"], found {other}"))),
                };
                let mut archs = Vec::new();
                for item in items {
                    archs.extend(arch::parse_list(item).map_err(|e| err(key, e.to_string()))?);
                }
                config.archs = Some(archs);
            }
            "cuda-sources" | "cuda-include" | "nvcc-flags" => {
                let items: Vec<String> = match value {
                    Value::String(s) => vec![s.clone()],
                    Value::Array(a) => a
                        .iter()
                        .map(|v| v.as_str().map(str::to_string).ok_or_else(|| err(key, format!("expected strings, found {v}"))))
                        .collect::<Result<_>>()?,
                    other => return Err(err(key, format!("expected a list of strings, found {other}"))),
                };
                match key.as_str() {
                    "cuda-sources" => config.cuda.sources = Some(items),
                    "cuda-include" => config.cuda.include = items,
                    _ => config.cuda.flags = items,
                }
            }
            "cuda-std" => {
                let std = value.as_str().ok_or_else(|| err(key, format!("expected a C++ standard such as \"c++17\", found {value}")))?;
                if !matches!(std, "c++03" | "c++11" | "c++14" | "c++17" | "c++20") {
                    return Err(err(key, format!("`{std}` is not a standard nvcc knows: use c++11, c++14, c++17 or c++20")));
                }
                config.cuda.std = std.to_string();
            }
            "cuda-defines" => {
                let Some(table) = value.as_object() else {
                    return Err(err(key, format!("expected a table such as {{ TILE = 16, USE_FAST = true }}, found {value}")));
                };
                let mut defines = Vec::new();
                for (name, v) in table {
                    let valid = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
                    if !valid {
                        return Err(err(
                            key,
                            format!("`{name}` is not a valid macro name: a C identifier starts with a letter or `_` and holds only letters, digits and `_`"),
                        ));
                    }
                    let value = match v {
                        Value::Bool(true) => None,
                        Value::Bool(false) => continue,
                        Value::String(s) => Some(s.clone()),
                        Value::Number(n) => Some(n.to_string()),
                        other => return Err(err(key, format!("`{name}`: expected a string, a number or true, found {other}"))),
                    };
                    defines.push((name.clone(), value));
                }
                config.cuda.defines = defines;
            }
            other => {
                let hint =
                    KNOWN_KEYS.iter().find(|k| strsim_close(k, other)).map(|k| format!(" (did you mean `{k}`?)")).unwrap_or_default();
                warnings.push(
                    Diagnostic::warning(format!("unknown key `{other}` in [{name}]{hint}; it is ignored"))
                        .at(manifest, None, None)
                        .note(format!("known keys: {}", KNOWN_KEYS.join(", "))),
                );
            }
        }
    }
    Ok(())
}

/// Close enough to be a typo: one edit apart, or one is a prefix of the other.
fn strsim_close(a: &str, b: &str) -> bool {
    if a.starts_with(b) || b.starts_with(a) {
        return true;
    }
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            cur.push((prev[j] + usize::from(ca != cb)).min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()] <= 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arch::Arch;

    fn parse(toml_json: serde_json::Value) -> (Result<PtxConfig>, Vec<Diagnostic>) {
        let mut c = PtxConfig::default();
        let mut w = Vec::new();
        let r = apply(&mut c, &toml_json, Path::new("/k/Cargo.toml"), "package.metadata.ptx", &mut w).map(|_| c);
        (r, w)
    }

    #[test]
    fn reads_every_key() {
        let (c, w) = parse(
            serde_json::json!({"archs": ["sm_80", "sm_90a"], "toolchain": "nightly-2026-05-19", "ftz": true, "ptx-isa": "7.8", "rust": true}),
        );
        let c = c.unwrap();
        assert!(w.is_empty());
        assert_eq!(c.archs, Some(vec![ArchRequest::Arch(Arch::sm(80)), ArchRequest::Arch("sm_90a".parse().unwrap())]));
        assert_eq!(c.toolchain.as_deref(), Some("nightly-2026-05-19"));
        assert!(c.ftz);
        assert_eq!(c.ptx_isa.unwrap().llvm_feature(), "ptx78");
    }

    #[test]
    fn bad_values_name_the_manifest_and_key() {
        let msg = parse(serde_json::json!({"archs": ["sm_8"]})).0.unwrap_err().to_string();
        assert!(msg.starts_with("/k/Cargo.toml: invalid `archs` in [package.metadata.ptx]"), "{msg}");
        assert!(msg.contains("major and minor digits"), "{msg}");
        let msg = parse(serde_json::json!({"ptx-isa": "seven"})).0.unwrap_err().to_string();
        assert!(msg.contains("not a PTX ISA version"), "{msg}");
        let msg = parse(serde_json::json!({"ftz": "yes"})).0.unwrap_err().to_string();
        assert!(msg.contains("expected true or false"), "{msg}");
    }

    #[test]
    fn unknown_keys_warn_with_a_suggestion() {
        let (c, w) = parse(serde_json::json!({"arch": ["sm_80"]}));
        assert!(c.is_ok());
        assert_eq!(w.len(), 1);
        assert!(w[0].message.contains("unknown key `arch`") && w[0].message.contains("did you mean `archs`?"), "{}", w[0].message);
    }
}
