//! `cargo ptx package`: build a library's kernels from source and write its prebuilt set, so
//! that the crates depending on it need neither a nightly nor the CUDA tools.
//!
//! The library's own build script knows what it builds (its Builder's kernel crates, `.cu`
//! globs and options), so this command does not guess: it runs `cargo build --lib` of the
//! package with `CARGO_PTX_PREBUILT_WRITE` naming it, and that Builder builds from source and
//! writes `prebuilt/<module>/` (the format lives in ptx-build's `prebuilt` stage). Then it
//! reports each set's size and checks that `cargo package` ships it.
//!
//! `--check` runs the same build with the Builder asked to read the set as a dependent would
//! (under `always`, no tool): it fails when the set is stale or damaged, and writes nothing.

use std::path::{Path, PathBuf};
use std::process::Command;

use ptx_build::internals::prebuilt::{check_value, write_value, Manifest, MANIFEST, WRITE_VAR};
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
    /// Check the sets against the sources instead of writing them.
    pub check: bool,
}

/// The set manifests the build script of package `id` watched, from cargo's
/// `build-script-executed` message: the script's output beside its `out_dir` holds its
/// `rerun-if-changed` lines.
fn sets_read(json: &str, id: &cargo_metadata::PackageId) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for message in cargo_metadata::Message::parse_stream(json.as_bytes()).flatten() {
        let cargo_metadata::Message::BuildScriptExecuted(script) = message else { continue };
        if script.package_id != *id {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(script.out_dir.with_file_name("output")) else { continue };
        for l in text.lines() {
            let watched = l.strip_prefix("cargo:rerun-if-changed=").or_else(|| l.strip_prefix("cargo::rerun-if-changed="));
            out.extend(watched.filter(|p| p.ends_with(MANIFEST)).map(PathBuf::from));
        }
    }
    out
}

/// Whether two paths name one file (the script's may be spelt another way).
fn same_file(a: &Path, b: &Path) -> bool {
    a == b || matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
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

/// Builds the package's kernels from source and writes its prebuilt sets; with `check`, checks
/// the sets there are instead.
pub fn package(req: &PackageRequest) -> Result<Vec<SetSummary>> {
    let (name, manifest, id) = find_package(req)?;
    let dir = manifest.parent().unwrap_or(Path::new(".")).to_path_buf();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let nonce = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or_default();
    let started = std::time::SystemTime::now();
    let mut build = Command::new(&cargo);
    build.args(["build", "--lib", "--manifest-path"]).arg(&manifest).args(["-p", &name]).args(&req.cargo_flags);
    if req.check {
        build.env(WRITE_VAR, check_value(&name, nonce));
    } else {
        // Tells the build script that this command reports the set (see `write_value`).
        build.env(WRITE_VAR, write_value(&name, nonce)).env("CARGO_PTX_PREBUILT", "never");
    }
    let could_not_run = |e: std::io::Error| Error::Package {
        message: format!("could not run cargo: {e}"),
        help: "run `cargo ptx package` from a cargo subcommand, or put cargo on PATH".into(),
    };
    // A check names the sets the Builder read: those its build script watches (cargo's JSON
    // says where that script's output is; its diagnostics still go to the terminal).
    let (status, read) = if req.check {
        build.arg("--message-format=json-render-diagnostics").stdout(std::process::Stdio::piped());
        let child = build.spawn().map_err(could_not_run)?;
        let out = child.wait_with_output().map_err(could_not_run)?;
        (out.status, Some(sets_read(&String::from_utf8_lossy(&out.stdout), &id)))
    } else {
        (build.status().map_err(could_not_run)?, None)
    };
    if !status.success() && req.check {
        return Err(Error::PackageCheck {
            message: format!("the prebuilt kernels of `{name}` cannot be used, or its build failed (above)"),
            help: format!("fix what the error above names; `cargo ptx package -p {name}` rewrites a stale or damaged set"),
        });
    }
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
        // A check writes nothing: the sets it reports are those the build read.
        let fresh = match &read {
            Some(read) => read.iter().any(|r| same_file(r, &path)),
            None => std::fs::metadata(&path).and_then(|m| m.modified()).is_ok_and(|t| t >= started),
        };
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
    if sets.is_empty() && req.check {
        return Err(Error::PackageCheck {
            message: format!("`{name}` has no prebuilt set in {}", dir.join("prebuilt").display()),
            help: format!("run `cargo ptx package -p {name}` to write it"),
        });
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

impl SetSummary {
    /// The warning when `cargo package` would leave the set out.
    pub fn shipping_warning(&self) -> Option<String> {
        if self.shipped {
            return None;
        }
        let folder = self.dir.file_name().unwrap_or_default().to_string_lossy();
        Some(format!(
            "`cargo package` leaves {} out: check `include`/`exclude` in Cargo.toml and .gitignore; an `exclude` pattern without a leading `/` matches at any depth (`\"{folder}\"` matches prebuilt/{folder}/ too): anchor it to the package root, `\"/{folder}\"`",
            self.dir.display()
        ))
    }
}

/// A package `cargo ptx package` can write a set for: a library (`cargo build --lib` builds it)
/// with a build script (where its Builder runs).
fn packageable(p: &cargo_metadata::Package) -> Result<()> {
    let lib = p.targets.iter().any(|t| t.is_lib() || t.is_rlib() || t.is_dylib() || t.is_cdylib() || t.is_staticlib() || t.is_proc_macro());
    let (what, help) = if !lib {
        (
            "has no library target",
            "a binary builds its kernels itself with `cargo build`; to ship kernels prebuilt, run `cargo ptx package -p NAME` on the library that builds them".to_string(),
        )
    } else if !p.targets.iter().any(|t| t.is_custom_build()) {
        (
            "has no build script",
            format!(
                "give `{}` a build.rs that runs `ptx_build::Builder`, or run `cargo ptx package -p NAME` on the library that has one",
                p.name
            ),
        )
    } else {
        return Ok(());
    };
    Err(Error::Package {
        message: format!("`{}` {what}: a prebuilt set is for a library crate whose build.rs runs ptx-build's `Builder`", p.name),
        help,
    })
}

/// The package's name and manifest: `-p`, else the manifest's own package.
fn find_package(req: &PackageRequest) -> Result<(String, PathBuf, cargo_metadata::PackageId)> {
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
        Some(p) => {
            packageable(p)?;
            Ok((p.name.to_string(), p.manifest_path.clone().into_std_path_buf(), p.id.clone()))
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A package `name` in a temp folder with `files`; `cargo ptx package` run on it.
    fn package_of(files: &[(&str, &str)]) -> String {
        let tmp = tempfile::tempdir().unwrap();
        let toml = "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n";
        for (path, text) in [("Cargo.toml", toml)].iter().chain(files) {
            let p = tmp.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        let req = PackageRequest { manifest_path: Some(tmp.path().join("Cargo.toml")), ..PackageRequest::default() };
        package(&req).map(|s| format!("{s:?}")).unwrap_err().to_string()
    }

    #[test]
    fn a_binary_or_a_library_without_a_build_script_is_refused_before_building() {
        let e = package_of(&[("src/main.rs", "fn main() {}\n"), ("build.rs", "fn main() {}\n")]);
        assert_eq!(
            e,
            "could not package prebuilt kernels: `app` has no library target: a prebuilt set is for a library crate whose build.rs runs ptx-build's `Builder`\n  help: a binary builds its kernels itself with `cargo build`; to ship kernels prebuilt, run `cargo ptx package -p NAME` on the library that builds them"
        );
        let e = package_of(&[("src/lib.rs", "")]);
        assert!(e.contains("`app` has no build script: a prebuilt set is for a library crate"), "{e}");
        assert!(e.contains("help: give `app` a build.rs that runs `ptx_build::Builder`"), "{e}");
    }

    #[test]
    fn a_set_cargo_package_leaves_out_names_the_anchored_pattern() {
        let manifest = Manifest {
            format: 1,
            package: "gpulib".into(),
            ptx_build: "0.1.0".into(),
            key: String::new(),
            options: Vec::new(),
            tools: Default::default(),
            archs: Vec::new(),
            sources: Vec::new(),
            crates: Vec::new(),
        };
        let mut s = SetSummary { dir: PathBuf::from("/w/gpulib/prebuilt/kernels"), manifest, ptx_bytes: 0, cubin_bytes: 0, shipped: true };
        assert_eq!(s.shipping_warning(), None);
        s.shipped = false;
        assert_eq!(
            s.shipping_warning().unwrap(),
            "`cargo package` leaves /w/gpulib/prebuilt/kernels out: check `include`/`exclude` in Cargo.toml and .gitignore; an `exclude` pattern without a leading `/` matches at any depth (`\"kernels\"` matches prebuilt/kernels/ too): anchor it to the package root, `\"/kernels\"`"
        );
    }
}
