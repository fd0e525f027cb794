//! Using a set in a Builder: read, checked file by file and key by key, with no tool.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{key, set_dir, under, Manifest, Request, FORMAT, MANIFEST};
use crate::arch::{Arch, ArchRequest, Variant};
use crate::cache;
use crate::diag::Diagnostic;
use crate::engine::{BuildOutput, CrateOutput};
use crate::error::{Error, Result};
use crate::options::{Options, Prebuilt, Source};
use crate::report::{Artifact, ArtifactKind, Event, KernelInfo, Reporter};
use crate::tools::{Cuda, Rust};

/// Why a set cannot be used.
struct Problem {
    message: String,
    help: String,
}

/// The set for `req` when `policy` and the set allow it: `Ok(None)` means "build from source"
/// (no set under `auto`, `never`, or a set that cannot be used while the tools are here, said
/// in one warning line); a set that cannot be used otherwise is an error naming the fix.
pub(crate) fn load(req: &Request<'_>, policy: Prebuilt, reporter: &dyn Reporter) -> Result<Option<(BuildOutput, Vec<PathBuf>)>> {
    load_with(req, policy, reporter, &tools_for_source_build)
}

/// [`load`], with the question "could a build from source run here" answered by `tools`.
pub(crate) fn load_with(
    req: &Request<'_>,
    policy: Prebuilt,
    reporter: &dyn Reporter,
    tools: &dyn Fn(&Request<'_>, &Path) -> std::result::Result<(), String>,
) -> Result<Option<(BuildOutput, Vec<PathBuf>)>> {
    if policy == Prebuilt::Never {
        return Ok(None);
    }
    let dir = set_dir(req.manifest_dir, req.out_file);
    let manifest_path = dir.join(MANIFEST);
    let fail = |p: Problem| Error::Prebuilt { package: req.package.clone(), set: manifest_path.clone(), message: p.message, help: p.help };
    if !manifest_path.is_file() {
        return match policy {
            Prebuilt::Always => Err(fail(Problem {
                message: "there is none (`prebuilt = \"always\"`)".into(),
                help: format!("run `cargo ptx package` in {} to build and write it", req.manifest_dir.display()),
            })),
            _ => Ok(None),
        };
    }
    match check(req, &dir, &manifest_path, reporter) {
        Ok(found) => Ok(Some(found)),
        Err(problem) if policy == Prebuilt::Auto => match tools(req, &manifest_path) {
            Ok(()) => {
                reporter.report(Event::Diagnostic(&Diagnostic::warning(format!(
                    "ptx-build: the prebuilt kernels of `{}` are not used ({}): building them from source",
                    req.package, problem.message
                ))));
                Ok(None)
            }
            Err(missing) => {
                Err(fail(Problem { message: format!("{}; building from source needs {missing}", problem.message), help: problem.help }))
            }
        },
        Err(problem) => Err(fail(problem)),
    }
}

/// Reads and checks the set: its format, its files' hashes, the sources' hashes, the key, the
/// archs asked for. Returns the build it stands for and the files to watch.
fn check(
    req: &Request<'_>,
    dir: &Path,
    manifest_path: &Path,
    reporter: &dyn Reporter,
) -> std::result::Result<(BuildOutput, Vec<PathBuf>), Problem> {
    let rebuild = "rerun `cargo ptx package` where the package is made, or build from source: `cargo ptx setup` once, then `CARGO_PTX_PREBUILT=never cargo build`";
    let damaged = |what: String| Problem { message: format!("the set is damaged: {what}"), help: rebuild.into() };
    let text = std::fs::read_to_string(manifest_path).map_err(|e| damaged(format!("{MANIFEST} cannot be read: {e}")))?;
    #[derive(serde::Deserialize)]
    struct Probe {
        format: u32,
        #[serde(default)]
        ptx_build: String,
    }
    let probe: Probe = serde_json::from_str(&text).map_err(|e| damaged(format!("{MANIFEST} is not a prebuilt manifest: {e}")))?;
    if probe.format > FORMAT {
        return Err(Problem {
            message: format!(
                "it was written by ptx-build {} in format {}, newer than this ptx-build {} reads (format {FORMAT})",
                probe.ptx_build,
                probe.format,
                env!("CARGO_PKG_VERSION")
            ),
            help: format!("update ptx-build in the build-dependencies (`cargo update -p ptx-build`, to {} or later)", probe.ptx_build),
        });
    }
    let m: Manifest = serde_json::from_str(&text).map_err(|e| damaged(format!("{MANIFEST} is not a prebuilt manifest: {e}")))?;
    let mut watch = vec![manifest_path.to_path_buf()];

    for a in m.crates.iter().flat_map(|c| &c.artifacts) {
        let file = under(dir, &a.file);
        match cache::file_hash(&file) {
            Some(h) if h == a.hash => {}
            Some(_) => return Err(damaged(format!("{} does not match the hash {MANIFEST} records", a.file))),
            None => return Err(damaged(format!("{} is missing", a.file))),
        }
    }

    let mut changed = Vec::new();
    for s in &m.sources {
        let file = under(req.manifest_dir, &s.path);
        match cache::file_hash(&file) {
            Some(h) if h == s.hash => watch.push(file),
            Some(_) => {
                changed.push(s.path.clone());
                watch.push(file);
            }
            None if s.packaged => return Err(damaged(format!("its source {} is missing from the package", s.path))),
            None => {}
        }
    }
    if !changed.is_empty() {
        let more = if changed.len() > 3 { format!(" and {} more", changed.len() - 3) } else { String::new() };
        return Err(Problem {
            message: format!(
                "the sources changed after packaging: {}{more}",
                changed.iter().take(3).cloned().collect::<Vec<_>>().join(", ")
            ),
            help: rebuild.into(),
        });
    }
    let options = req.keyed_options();
    if key(&m.sources, &options) != m.key {
        let recorded: BTreeMap<&str, &str> = m.options.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let now: BTreeMap<&str, &str> = options.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let mut diff: Vec<String> = Vec::new();
        for k in recorded.keys().chain(now.keys()).collect::<std::collections::BTreeSet<_>>() {
            if recorded.get(k) != now.get(k) {
                let show = |v: Option<&&str>| v.map_or("unset".to_string(), |v| v.to_string());
                diff.push(format!("`{k}` {} (packaged: {})", show(now.get(k)), show(recorded.get(k))));
            }
        }
        let what = if diff.is_empty() { "its key does not match its sources and options".to_string() } else { diff.join(", ") };
        return Err(Problem { message: format!("built with other options: {what}"), help: rebuild.into() });
    }
    serve_archs(req.options, &m, reporter)?;
    Ok((build_output(req, dir, &m), watch))
}

/// Each arch asked for is shipped, or a newer GPU that runs a shipped PTX (the driver compiles
/// it at load time, as it does for a build without that arch).
fn serve_archs(options: &Options, m: &Manifest, reporter: &dyn Reporter) -> std::result::Result<(), Problem> {
    let shipped: Vec<Arch> = m.archs.iter().filter_map(|a| a.parse().ok()).collect();
    for req in options.archs.iter().flatten() {
        let ArchRequest::Arch(want) = req else { continue };
        if shipped.contains(want)
            || (!want.virtual_only
                && shipped.iter().any(|s| s.virtual_only && s.capability == want.capability && s.variant == want.variant))
        {
            continue;
        }
        // PTX of a plain arch runs on any later GPU; `a` and `f` PTX only on their own.
        let jit = shipped.iter().filter(|s| s.variant == Variant::Plain && s.capability <= want.capability).max();
        match jit {
            Some(from) if want.variant == Variant::Plain => reporter.report(Event::Diagnostic(&Diagnostic::warning(format!(
                "ptx-build: `{}` ships no {want} kernels: the driver compiles its {from} PTX at load time",
                m.package
            )))),
            _ => {
                return Err(Problem {
                    message: format!("{want} was asked for, and the set ships {} only", m.archs.join(", ")),
                    help: format!(
                        "build from source for {want}: `cargo ptx setup` once, then `CARGO_PTX_PREBUILT=never cargo build`, or ask for a shipped arch"
                    ),
                })
            }
        }
    }
    Ok(())
}

/// The build the set stands for: artifacts in the set's folder, signatures with their files
/// back under the package, as a build from source hands them to the embed stage.
fn build_output(req: &Request<'_>, dir: &Path, m: &Manifest) -> BuildOutput {
    let mut out = BuildOutput::default();
    for c in &m.crates {
        let artifacts: Vec<Artifact> = c
            .artifacts
            .iter()
            .filter_map(|a| {
                Some(Artifact {
                    package: c.name.clone(),
                    module: a.module.clone(),
                    source: a.source.as_ref().map(|s| under(req.manifest_dir, s)),
                    arch: a.arch.parse().ok()?,
                    kind: if a.kind == "cubin" { ArtifactKind::Cubin } else { ArtifactKind::Ptx },
                    path: under(dir, &a.file),
                    kernels: a.kernels.iter().map(|k| KernelInfo::named(k)).collect(),
                    fresh: true,
                })
            })
            .collect();
        let mut archs: Vec<Arch> = artifacts.iter().map(|a| a.arch).collect();
        archs.sort();
        archs.dedup();
        let mut kernels: Vec<String> = Vec::new();
        for k in artifacts.iter().flat_map(|a| &a.kernels) {
            if !kernels.contains(&k.name) {
                kernels.push(k.name.clone());
            }
        }
        let signatures = c
            .signatures
            .iter()
            .map(|(module, sigs)| {
                let sigs = sigs.iter().cloned().map(|mut s| {
                    s.file = under(req.manifest_dir, &s.file.to_string_lossy());
                    s
                });
                (module.clone(), sigs.collect())
            })
            .collect();
        out.crates.push(CrateOutput {
            name: c.name.clone(),
            lib_name: c.lib_name.clone(),
            lib_src: None,
            manifest_path: req.manifest_dir.join("Cargo.toml"),
            archs,
            kernels,
            artifacts,
            sources: Vec::new(),
            signatures,
            // The dependent's own setting: the warning is about its build.
            untyped_kernels: req.options.untyped_kernels.unwrap_or_default(),
            static_lib: None,
        });
    }
    out
}

/// Whether a build from source could run here: the kernel crates and the tools their modules
/// need. `Err` names what is missing.
fn tools_for_source_build(req: &Request<'_>, manifest_path: &Path) -> std::result::Result<(), String> {
    let m: Option<Manifest> = std::fs::read_to_string(manifest_path).ok().and_then(|t| serde_json::from_str(&t).ok());
    for k in req.kernel_crates {
        let dir = req.manifest_dir.join(k);
        if !dir.join("Cargo.toml").is_file() {
            return Err(format!("the kernel crate {}, which the package does not ship", dir.display()));
        }
    }
    let artifacts = || m.iter().flat_map(|m| &m.crates).flat_map(|c| &c.artifacts);
    let cuda = !req.cuda_files.is_empty() || artifacts().any(|a| a.source.as_deref().is_some_and(|s| s.ends_with(".cu")));
    let rust = !req.kernel_crates.is_empty();
    if rust {
        let toolchain = req.options.clone().resolve().toolchain;
        let found = Rust::find(&toolchain).map_err(|e| format!("the `{toolchain}` toolchain ({})", first_line(&e.to_string())))?;
        found.require().map_err(|e| format!("the `{toolchain}` toolchain's LLVM tools ({})", first_line(&e.to_string())))?;
    }
    if cuda && Cuda::find().nvcc.is_none() {
        return Err("nvcc, which was not found".into());
    }
    Ok(())
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or_default()
}

/// The `prebuilt` policy of the host crate's own `[package.metadata.ptx]`: read from its
/// Cargo.toml line by line (no `cargo metadata`, which would cost a prebuilt build most of its
/// time). `cargo package` writes the table as `[package.metadata.ptx]` with one key a line.
pub(crate) fn host_policy(manifest: &Path) -> Result<Option<Prebuilt>> {
    let Ok(text) = std::fs::read_to_string(manifest) else { return Ok(None) };
    let mut section = String::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line.trim_matches(['[', ']']).replace([' ', '"'], "");
            continue;
        }
        let (k, v) = match line.split_once('=') {
            Some((k, v)) => (k.trim(), v.split('#').next().unwrap_or_default().trim()),
            None => continue,
        };
        let value = match (section.as_str(), k) {
            ("package.metadata.ptx", "prebuilt") => v,
            ("package.metadata", "ptx.prebuilt") | ("package", "metadata.ptx.prebuilt") => v,
            _ => continue,
        };
        let value = value.trim_matches(['"', '\'']);
        return value.parse().map(Some).map_err(|m| Source::Package(manifest.to_path_buf()).error("prebuilt", m));
    }
    Ok(None)
}
