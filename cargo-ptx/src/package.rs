//! `cargo ptx package`: build a library's kernels from source and write its prebuilt set, so
//! that the crates depending on it need neither a nightly nor the CUDA tools.
//!
//! The library's own build script knows what it builds (its Builder's kernel crates, `.cu`
//! globs and options), so this command does not guess: it runs `cargo build --lib` of the
//! package with `CARGO_PTX_PREBUILT_WRITE` naming it, and that Builder builds from source and
//! writes `prebuilt/<module>/` (the format lives in ptx-build's `prebuilt` stage). Then it
//! reports each set's size and checks that `cargo package` ships it.

use std::path::{Path, PathBuf};
use std::process::Command;

use ptx_build::internals::prebuilt::{Manifest, MANIFEST, WRITE_VAR};
use ptx_build::internals::tools::process;

use crate::error::{Error, Result};

/// What to package.
#[derive(Clone, Debug, Default)]
pub struct PackageRequest {
    /// The package's Cargo.toml [default: the one at or above the current folder].
    pub manifest_path: Option<PathBuf>,
    /// `-p NAME` in a workspace.
    pub package: Option<String>,
    /// cargo's `--locked`/`--offline`/`--frozen`, passed through.
    pub cargo_flags: Vec<String>,
}

/// One set written.
#[derive(Clone, Debug)]
pub struct SetSummary {
    /// Its folder.
    pub dir: PathBuf,
    pub manifest: Manifest,
    /// Bytes of PTX and of cubins.
    pub ptx_bytes: u64,
    pub cubin_bytes: u64,
    /// Whether `cargo package --list` lists its manifest.
    pub shipped: bool,
}

/// Builds the package's kernels from source and writes its prebuilt sets.
pub fn package(req: &PackageRequest) -> Result<Vec<SetSummary>> {
    let (name, manifest) = find_package(req)?;
    let dir = manifest.parent().unwrap_or(Path::new(".")).to_path_buf();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let nonce = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or_default();
    let started = std::time::SystemTime::now();
    let mut build = Command::new(&cargo);
    build
        .args(["build", "--lib", "--manifest-path"])
        .arg(&manifest)
        .args(["-p", &name])
        .args(&req.cargo_flags)
        .env(WRITE_VAR, format!("{name}:{nonce}"))
        .env("CARGO_PTX_PREBUILT", "never");
    let status = build.status().map_err(|e| Error::Package {
        message: format!("could not run cargo: {e}"),
        help: "run `cargo ptx package` from a cargo subcommand, or put cargo on PATH".into(),
    })?;
    if !status.success() {
        return Err(Error::Package {
            message: format!("the build of `{name}` failed (above), so no prebuilt set was written"),
            help: "fix the build (`cargo build` shows the same errors), then rerun `cargo ptx package`".into(),
        });
    }
    let listed = cargo_package_list(&cargo, &manifest, &name, &req.cargo_flags);
    let mut sets = Vec::new();
    for entry in std::fs::read_dir(dir.join("prebuilt")).into_iter().flatten().flatten() {
        let set = entry.path();
        let path = set.join(MANIFEST);
        let fresh = std::fs::metadata(&path).and_then(|m| m.modified()).is_ok_and(|t| t >= started);
        if !fresh {
            continue;
        }
        let text = std::fs::read_to_string(&path).map_err(|e| Error::io("read", &path, e))?;
        let manifest: Manifest = serde_json::from_str(&text).map_err(|e| Error::Package {
            message: format!("{}: {e}", path.display()),
            help: "this is a bug in cargo-ptx: please report it".into(),
        })?;
        let (mut ptx_bytes, mut cubin_bytes) = (0, 0);
        for a in manifest.crates.iter().flat_map(|c| &c.artifacts) {
            let len = std::fs::metadata(set.join(&a.file)).map(|m| m.len()).unwrap_or_default();
            if a.kind == "cubin" {
                cubin_bytes += len;
            } else {
                ptx_bytes += len;
            }
        }
        let rel = format!("{}/{MANIFEST}", set.strip_prefix(&dir).unwrap_or(&set).display());
        let shipped = listed.as_ref().is_none_or(|l| l.contains(&rel));
        sets.push(SetSummary { dir: set, manifest, ptx_bytes, cubin_bytes, shipped });
    }
    if sets.is_empty() {
        return Err(Error::Package {
            message: format!("the build of `{name}` wrote no prebuilt set: its build.rs runs no `ptx_build::Builder`"),
            help: "run `cargo ptx package` in the library whose build.rs builds the kernels".into(),
        });
    }
    sets.sort_by(|a, b| a.dir.cmp(&b.dir));
    Ok(sets)
}

/// The package's name and manifest: `-p`, else the manifest's own package.
fn find_package(req: &PackageRequest) -> Result<(String, PathBuf)> {
    let mut cmd = cargo_metadata::MetadataCommand::new();
    cmd.no_deps();
    if let Some(m) = &req.manifest_path {
        cmd.manifest_path(m);
    }
    let meta = cmd.exec().map_err(|e| Error::Package {
        message: format!("cargo metadata failed: {}", e.to_string().lines().next().unwrap_or_default()),
        help: "run it in a package, or pass `--manifest-path PATH/Cargo.toml`".into(),
    })?;
    let here = match &req.manifest_path {
        Some(m) => std::fs::canonicalize(m).unwrap_or_else(|_| m.clone()),
        None => std::env::current_dir().unwrap_or_default(),
    };
    let found = meta.packages.iter().find(|p| match &req.package {
        Some(n) => p.name.as_str() == n,
        None => here.starts_with(p.manifest_path.parent().map(|d| d.as_std_path()).unwrap_or(Path::new("/"))),
    });
    match found {
        Some(p) => Ok((p.name.to_string(), p.manifest_path.clone().into_std_path_buf())),
        None => Err(Error::Package {
            message: match &req.package {
                Some(n) => format!("no package named `{n}` in the workspace"),
                None => "the current folder is not in a package of the workspace".into(),
            },
            help: format!("name one with `-p`: {}", meta.packages.iter().map(|p| p.name.to_string()).collect::<Vec<_>>().join(", ")),
        }),
    }
}

/// The files `cargo package` would ship, or `None` when it cannot tell.
fn cargo_package_list(cargo: &std::ffi::OsStr, manifest: &Path, name: &str, flags: &[String]) -> Option<Vec<String>> {
    let mut cmd = Command::new(cargo);
    cmd.args(["package", "--list", "--allow-dirty", "--manifest-path"]).arg(manifest).args(["-p", name]).args(flags);
    let out = process::output("cargo", &mut cmd).ok().filter(|o| o.status.success())?;
    Some(String::from_utf8_lossy(&out.stdout).lines().map(str::to_string).collect())
}
