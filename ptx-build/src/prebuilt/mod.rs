//! Prebuilt kernel sets: a library ships its kernels built, so that whoever depends on it needs
//! neither a nightly nor the CUDA tools.
//!
//! `cargo ptx package` runs the library's build script with [`WRITE_VAR`] set: its Builder
//! builds from source as usual and then writes the set (`write`) to `prebuilt/<module>/` in the
//! package (`<module>`: the generated file's name without `.rs`): every PTX and cubin, and
//! `manifest.json` with what the embed stage needs to generate the same module without a tool
//! (each module's kernel signatures, host type paths included; the PTX files give the launch
//! bounds and struct layouts as they do in a source build), each file's hash, and the key.
//!
//! The key is a hash of every kernel source inside the package or a kernel crate (path and
//! content; tool headers and dependencies outside are the tools' part), of the Builder's
//! options with the `CARGO_PTX_*` variables over them (`archs` aside: requests are checked
//! against what the set ships), the kernel crates named and the `.cu` files the globs match. A
//! dependent's Builder (`load`) computes the same key without any tool and uses the set only
//! when it matches. The tool versions the set was built with are recorded, not keyed: no tool is
//! needed to use a set, and where tools are present a matching set is still used (the same
//! bytes for every user of the package); `prebuilt = "never"` builds with the local tools.
//!
//! Hashes are xxh3-128 as in the step cache: they catch edits and damage, not tampering
//! (crates.io checksums the whole package).

mod load;
mod write;

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::cache::Key;
use crate::embed::signature::KernelSig;
use crate::options::Options;

#[cfg(test)]
use load::load_with;
pub(crate) use load::{host_policy, load, Use};
pub(crate) use write::write;

/// The manifest format this ptx-build writes and reads; a newer one is refused by name.
/// 2: parameters of address buffers and empty tags, and each artifact's cooperative kernels.
pub const FORMAT: u32 = 2;

/// Set by `cargo ptx package` for the build it runs: `<package>:<nonce>:<mode>` (see
/// [`write_value`], [`check_value`]). The Builder of that package writes its prebuilt set after
/// building from source, or checks it (the nonce reruns the build script every time).
pub const WRITE_VAR: &str = "CARGO_PTX_PREBUILT_WRITE";

/// The `<mode>` of [`WRITE_VAR`] by which `cargo ptx package` says that it reports the set
/// itself: the build script then writes it without a warning (cargo shows a build script's
/// message only as a warning). Set by hand without it, the warning is the only word of the set.
const REPORTED_BY_CARGO_PTX: &str = "cargo-ptx-package";

/// The `<mode>` of `cargo ptx package --check`: the set is read as a dependent reads it, under
/// `always`, and not written.
const CHECK: &str = "check";

/// [`WRITE_VAR`]'s value from `cargo ptx package`, which reports the set itself.
pub fn write_value(package: &str, nonce: u128) -> String {
    format!("{package}:{nonce}:{REPORTED_BY_CARGO_PTX}")
}

/// [`WRITE_VAR`]'s value from `cargo ptx package --check`.
pub fn check_value(package: &str, nonce: u128) -> String {
    format!("{package}:{nonce}:{CHECK}")
}

/// What [`WRITE_VAR`]'s `value` asks of `package`'s build script: `None` when it names
/// another package.
pub(crate) fn write_request(value: &str, package: &str) -> Option<Mode> {
    let mut fields = value.split(':');
    if fields.next() != Some(package) {
        return None;
    }
    Some(match fields.nth(1) {
        Some(REPORTED_BY_CARGO_PTX) => Mode::Write(Announce::No),
        Some(CHECK) => Mode::Check,
        _ => Mode::Write(Announce::Warning),
    })
}

/// What `cargo ptx package` asks of the package's Builder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Build from source and write the set.
    Write(Announce),
    /// Use the set, or fail saying why it cannot be used: no tool, nothing written.
    Check,
}

/// Whether the build script announces a set it wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Announce {
    /// `cargo ptx package` reports it.
    No,
    /// A cargo warning: the only message a build script's success can carry.
    Warning,
}

/// The manifest's file name in a set's folder.
pub const MANIFEST: &str = "manifest.json";

/// The folder of the set for generated file `out_file` in the package at `manifest_dir`.
pub fn set_dir(manifest_dir: &Path, out_file: &str) -> PathBuf {
    let stem = out_file.strip_suffix(".rs").unwrap_or(out_file).replace(['/', '\\'], "_");
    manifest_dir.join("prebuilt").join(stem)
}

/// `manifest.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// [`FORMAT`] of the ptx-build that wrote it.
    pub format: u32,
    /// The package that ships the set.
    pub package: String,
    /// The ptx-build that wrote it.
    pub ptx_build: String,
    /// Hash of the sources and options (see the module docs).
    pub key: String,
    /// The options in the key, as `(key, value)`: a mismatch names the ones that differ.
    pub options: Vec<(String, String)>,
    /// The tools it was built with (`rustc`, `llvm`, `nvcc`, `ptxas`): a record, not keyed.
    pub tools: BTreeMap<String, String>,
    /// Every arch it ships, sorted.
    pub archs: Vec<String>,
    /// Every kernel source in the key.
    pub sources: Vec<SourceFile>,
    /// One per kernel crate (or group of .cu files), in build order.
    pub crates: Vec<CrateSet>,
}

/// A kernel source, relative to the package (`/`-separated; `..` for a kernel crate outside).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceFile {
    /// Relative to the package.
    pub path: String,
    /// Its content's hash.
    pub hash: String,
    /// Inside the package, so `cargo package` ships it: a packaged copy must have it. Sources of
    /// a kernel crate in a folder of its own (cargo leaves nested packages out) are checked
    /// where they exist.
    pub packaged: bool,
}

/// One kernel crate's part of the set.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CrateSet {
    /// The package name.
    pub name: String,
    /// The lib target's crate name.
    pub lib_name: String,
    /// Each module's kernel signatures; their files relative to the package.
    pub signatures: BTreeMap<String, Vec<KernelSig>>,
    /// Every PTX and cubin.
    pub artifacts: Vec<ArtifactFile>,
}

/// One PTX or cubin of the set.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArtifactFile {
    /// The PTX module.
    pub module: String,
    /// The module's source, relative to the package.
    pub source: Option<String>,
    /// `sm_90`, `compute_80`.
    pub arch: String,
    /// `ptx` or `cubin`.
    pub kind: String,
    /// Relative to the set's folder.
    pub file: String,
    /// Its content's hash.
    pub hash: String,
    /// The PTX entries.
    pub kernels: Vec<String>,
    /// Those that sync their grid (launched cooperatively).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cooperative: Vec<String>,
}

/// What decides the key besides the sources, as a Builder knows it without a tool.
pub(crate) struct Request<'a> {
    /// The package whose build script runs.
    pub package: String,
    pub manifest_dir: &'a Path,
    pub out_file: &'a str,
    /// Kernel crates as the Builder names them.
    pub kernel_crates: &'a [PathBuf],
    /// The host crate's .cu files the globs match.
    pub cuda_files: &'a [PathBuf],
    /// The Builder's options over the `CARGO_PTX_*` variables.
    pub options: &'a Options,
}

impl Request<'_> {
    /// The options in the key: what changes the bytes. `archs` is checked against the set
    /// instead; the policy, the cache and the launcher change nothing built.
    pub(crate) fn keyed_options(&self) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = self
            .options
            .set_values()
            .into_iter()
            .filter(|(k, _)| !matches!(*k, "archs" | "prebuilt" | "shared_cache" | "launcher"))
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        for k in self.kernel_crates {
            out.push(("kernel_crate".into(), slash(k)));
        }
        for f in self.cuda_files {
            out.push(("cuda".into(), relative_to(f, self.manifest_dir)));
        }
        out.push(("out_file".into(), self.out_file.to_string()));
        out
    }
}

/// The key of `sources` and `options`.
pub(crate) fn key(sources: &[SourceFile], options: &[(String, String)]) -> String {
    let mut k = Key::new(&format!("ptx-build prebuilt set {FORMAT}"));
    for s in sources {
        k.str(&s.path).str(&s.hash);
    }
    k.str("options");
    for (name, value) in options {
        k.str(name).str(value);
    }
    k.finish()
}

/// `path` relative to `base`, `/`-separated, with `..` where it lies outside.
pub(crate) fn relative_to(path: &Path, base: &Path) -> String {
    let p: Vec<Component> = path.components().collect();
    let b: Vec<Component> = base.components().collect();
    let common = p.iter().zip(&b).take_while(|(x, y)| x == y).count();
    if common == 0 {
        return slash(path);
    }
    let mut parts: Vec<String> = b[common..].iter().map(|_| "..".to_string()).collect();
    parts.extend(p[common..].iter().map(|c| c.as_os_str().to_string_lossy().into_owned()));
    parts.join("/")
}

fn slash(p: &Path) -> String {
    p.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect::<Vec<_>>().join("/").replace("//", "/")
}

/// A path of the manifest (relative, `/`-separated) under `base`.
pub(crate) fn under(base: &Path, rel: &str) -> PathBuf {
    let mut out = base.to_path_buf();
    for part in rel.split('/') {
        match part {
            ".." => {
                out.pop();
            }
            "" | "." => {}
            p => out.push(p),
        }
    }
    out
}

#[cfg(test)]
mod tests;
