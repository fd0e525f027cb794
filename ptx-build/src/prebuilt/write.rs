//! Writing a set after a build from source (`cargo ptx package`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{key, relative_to, set_dir, ArtifactFile, CrateSet, Manifest, Request, SourceFile, FORMAT, MANIFEST};
use crate::cache;
use crate::engine::BuildOutput;
use crate::error::{Error, Result};
use crate::report::ArtifactKind;
use crate::tools::{Cuda, Rust};

/// Writes the set of `output` for `req` (into a scratch folder, then renamed over the old set);
/// returns its manifest's path.
pub(crate) fn write(req: &Request<'_>, output: &BuildOutput, target_dir: Option<&Path>) -> Result<PathBuf> {
    let dir = set_dir(req.manifest_dir, req.out_file);
    let parent = dir.parent().unwrap_or(req.manifest_dir);
    let scratch = parent.join(format!(".{}.partial", dir.file_name().unwrap_or_default().to_string_lossy()));
    let _ = std::fs::remove_dir_all(&scratch);
    cache::create_dir_all(&scratch)?;

    let kernel_dirs: Vec<PathBuf> = output
        .crates
        .iter()
        .filter_map(|c| c.manifest_path.parent().map(Path::to_path_buf))
        .filter(|d| d.join("Cargo.toml").is_file())
        .collect();
    let mut sources: BTreeMap<String, SourceFile> = BTreeMap::new();
    let mut crates = Vec::new();
    let mut archs: Vec<String> = Vec::new();
    let mut has_rust = false;
    let mut has_cuda = false;
    for c in &output.crates {
        for s in &c.sources {
            if !in_key(s, req.manifest_dir, &kernel_dirs, target_dir) {
                continue;
            }
            let rel = relative_to(s, req.manifest_dir);
            let hash = cache::file_hash(s).ok_or_else(|| Error::io("read", s, std::io::ErrorKind::NotFound.into()))?;
            sources.insert(rel.clone(), SourceFile { path: rel, hash, packaged: packaged(s, req.manifest_dir, target_dir) });
        }
        let mut artifacts = Vec::new();
        for a in &c.artifacts {
            let ext = match a.kind {
                ArtifactKind::Ptx => "ptx",
                ArtifactKind::Cubin => "cubin",
            };
            let rel = format!("{}/{}/{}.{ext}", c.lib_name, a.module, a.arch);
            let bytes = std::fs::read(&a.path).map_err(|e| Error::io("read", &a.path, e))?;
            cache::write_atomic(&super::under(&scratch, &rel), &bytes)?;
            let is_cuda = a.source.as_ref().is_some_and(|s| s.extension().is_some_and(|e| e == "cu"));
            has_cuda |= is_cuda;
            has_rust |= !is_cuda;
            archs.push(a.arch.to_string());
            artifacts.push(ArtifactFile {
                module: a.module.clone(),
                source: a.source.as_ref().map(|s| relative_to(s, req.manifest_dir)),
                arch: a.arch.to_string(),
                kind: ext.to_string(),
                file: rel,
                hash: cache::bytes_hash(&bytes),
                kernels: a.kernels.iter().map(|k| k.name.clone()).collect(),
                cooperative: a.kernels.iter().filter(|k| k.cooperative).map(|k| k.name.clone()).collect(),
            });
        }
        let signatures = c
            .signatures
            .iter()
            .map(|(module, sigs)| {
                let sigs = sigs.iter().cloned().map(|mut s| {
                    s.file = PathBuf::from(relative_to(&s.file, req.manifest_dir));
                    s
                });
                (module.clone(), sigs.collect())
            })
            .collect();
        crates.push(CrateSet { name: c.name.clone(), lib_name: c.lib_name.clone(), signatures, artifacts });
    }
    archs.sort();
    archs.dedup();
    let sources: Vec<SourceFile> = sources.into_values().collect();
    let options = req.keyed_options();
    let manifest = Manifest {
        format: FORMAT,
        package: req.package.clone(),
        ptx_build: env!("CARGO_PKG_VERSION").to_string(),
        key: key(&sources, &options),
        options,
        tools: tool_versions(req, has_rust, has_cuda),
        archs,
        sources,
        crates,
    };
    let json = serde_json::to_string_pretty(&manifest).map_err(|e| Error::io("write", scratch.join(MANIFEST), std::io::Error::other(e)))?;
    cache::write_atomic(&scratch.join(MANIFEST), format!("{json}\n").as_bytes())?;
    if dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(|e| Error::io("replace", &dir, e))?;
    }
    std::fs::rename(&scratch, &dir).map_err(|e| Error::io("move the prebuilt set into", &dir, e))?;
    Ok(dir.join(MANIFEST))
}

/// A source the key covers: in the package or in a kernel crate, not in a target dir. Tool
/// headers and dependencies' sources are the tools' part (recorded by version).
fn in_key(s: &Path, manifest_dir: &Path, kernel_dirs: &[PathBuf], target_dir: Option<&Path>) -> bool {
    let in_target = s.components().any(|c| c.as_os_str() == "target") || target_dir.is_some_and(|t| s.starts_with(t));
    !in_target && (s.starts_with(manifest_dir) || kernel_dirs.iter().any(|d| s.starts_with(d)))
}

/// Whether `cargo package` ships `s`: inside the package and not inside a nested package
/// (a folder with a Cargo.toml of its own, which cargo leaves out).
fn packaged(s: &Path, manifest_dir: &Path, target_dir: Option<&Path>) -> bool {
    if !s.starts_with(manifest_dir) || target_dir.is_some_and(|t| s.starts_with(t)) {
        return false;
    }
    let nested = s.ancestors().skip(1).take_while(|a| *a != manifest_dir).any(|a| a.join("Cargo.toml").is_file());
    !nested
}

/// The versions of the tools that built the set, for the record.
fn tool_versions(req: &Request<'_>, rust: bool, cuda: bool) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    if rust {
        let toolchain = req.options.clone().resolve().toolchain;
        if let Ok(r) = Rust::find(&toolchain) {
            out.insert("rustc".into(), r.version.clone());
            out.insert("llvm".into(), r.llvm_version.clone());
        }
    }
    let found = Cuda::find();
    if let Some(p) = &found.ptxas {
        out.insert("ptxas".into(), p.version.clone());
    }
    if cuda {
        if let Some(n) = &found.nvcc {
            out.insert("nvcc".into(), n.version.clone());
        }
    }
    out
}
