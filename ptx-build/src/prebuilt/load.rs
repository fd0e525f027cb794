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
    /// For whoever builds with it: the author's fix, or a build from source here.
    help: String,
    /// For the package's author: what writes a set that can be used.
    fix: String,
}

/// What a Builder does about its package's prebuilt set.
pub(crate) enum Use {
    /// Embed the set: the build it stands for, and the files to watch (the set's and sources).
    Set(BuildOutput, Vec<PathBuf>),
    /// Build from source; with the set it passed over, if there is one.
    Source(Option<PassedOver>),
}

/// A set not used (`auto`, with the tools here). A failing build from source names it: the
/// error is about the tools, while the usual fix is a set that can be used.
pub(crate) struct PassedOver {
    package: String,
    set: PathBuf,
    reason: String,
    fix: String,
    /// The set's files that exist (a missing one would rerun the build script every time):
    /// repackaging or repairing the set reruns the build script.
    pub watch: Vec<PathBuf>,
}

impl PassedOver {
    /// `error`, of the build from source, with a note on the set and the author's fix.
    pub(crate) fn explain(self, error: Error) -> Error {
        Error::PrebuiltPassedOver { error: Box::new(error), package: self.package, set: self.set, reason: self.reason, fix: self.fix }
    }
}

/// The set for `req` when `policy` and the set allow it, else a build from source (no set under
/// `auto`, `never`, or a set that cannot be used while the tools are here, said in one warning
/// line); a set that cannot be used otherwise is an error naming the fix.
pub(crate) fn load(req: &Request<'_>, policy: Prebuilt, reporter: &dyn Reporter) -> Result<Use> {
    load_with(req, policy, reporter, &tools_for_source_build)
}

/// [`load`], with the question "could a build from source run here" answered by `tools`.
pub(crate) fn load_with(
    req: &Request<'_>,
    policy: Prebuilt,
    reporter: &dyn Reporter,
    tools: &dyn Fn(&Request<'_>, &Path) -> std::result::Result<(), String>,
) -> Result<Use> {
    if policy == Prebuilt::Never {
        return Ok(Use::Source(None));
    }
    let dir = set_dir(req.manifest_dir, req.out_file);
    let manifest_path = dir.join(MANIFEST);
    let fail = |p: Problem| Error::Prebuilt { package: req.package.clone(), set: manifest_path.clone(), message: p.message, help: p.help };
    if !manifest_path.is_file() {
        return match policy {
            Prebuilt::Always => Err(fail(Problem {
                message: "there is none (`prebuilt = \"always\"`)".into(),
                help: format!("run `cargo ptx package -p {}` in {} to build and write it", req.package, req.manifest_dir.display()),
                fix: String::new(),
            })),
            _ => Ok(Use::Source(None)),
        };
    }
    match check(req, &dir, &manifest_path, reporter) {
        Ok((output, watch)) => Ok(Use::Set(output, watch)),
        Err(problem) if policy == Prebuilt::Auto => match tools(req, &manifest_path) {
            Ok(()) => {
                reporter.report(Event::Diagnostic(&Diagnostic::warning(format!(
                    "ptx-build: the prebuilt kernels of `{}` are not used ({}): building them from source; {} to update the set",
                    req.package, problem.message, problem.fix
                ))));
                let watch = std::iter::once(manifest_path.clone()).chain(set_files(&dir, &manifest_path)).filter(|p| p.is_file()).collect();
                Ok(Use::Source(Some(PassedOver {
                    package: req.package.clone(),
                    set: manifest_path.clone(),
                    reason: problem.message,
                    fix: problem.fix,
                    watch,
                })))
            }
            Err(missing) => Err(fail(Problem {
                message: format!("{}; building from source needs {missing}", problem.message),
                help: problem.help,
                fix: problem.fix,
            })),
        },
        Err(problem) => Err(fail(problem)),
    }
}

/// The PTX and cubins a readable manifest lists.
fn set_files(dir: &Path, manifest_path: &Path) -> Vec<PathBuf> {
    let m: Option<Manifest> = std::fs::read_to_string(manifest_path).ok().and_then(|t| serde_json::from_str(&t).ok());
    m.iter().flat_map(|m| &m.crates).flat_map(|c| &c.artifacts).map(|a| under(dir, &a.file)).collect()
}

/// Whether release `a` (`0.9.0`) is newer than `b`; `false` when either is not `X.Y.Z`.
// By hand, not with `semver`: every build script links ptx-build, and its link time is part of
// a cold build (BENCHMARKS.md, issue 25); the three numbers are all this message needs.
fn newer_release(a: &str, b: &str) -> bool {
    let parse = |v: &str| -> Option<Vec<u64>> {
        let core = v.split(['-', '+']).next()?;
        core.split('.').map(|n| n.parse().ok()).collect::<Option<Vec<u64>>>().filter(|v| v.len() == 3)
    };
    matches!((parse(a), parse(b)), (Some(a), Some(b)) if a > b)
}

/// Reads and checks the set: its format, its files' hashes, the sources' hashes, the key, the
/// archs asked for. Returns the build it stands for and the files to watch.
fn check(
    req: &Request<'_>,
    dir: &Path,
    manifest_path: &Path,
    reporter: &dyn Reporter,
) -> std::result::Result<(BuildOutput, Vec<PathBuf>), Problem> {
    let fix = format!("rerun `cargo ptx package -p {}`", req.package);
    let rebuild = format!(
        "{fix} where `{}` is made, or build from source here: `cargo ptx setup` once, then `CARGO_PTX_PREBUILT=never cargo build`",
        req.package
    );
    let problem = |message: String| Problem { message, help: rebuild.clone(), fix: fix.clone() };
    let damaged = |what: String| problem(format!("the set is damaged: {what}"));
    let text = std::fs::read_to_string(manifest_path).map_err(|e| damaged(format!("{MANIFEST} cannot be read: {e}")))?;
    #[derive(serde::Deserialize)]
    struct Probe {
        format: u32,
        #[serde(default)]
        ptx_build: String,
    }
    let probe: Probe = serde_json::from_str(&text).map_err(|e| damaged(format!("{MANIFEST} is not a prebuilt manifest: {e}")))?;
    if probe.format > FORMAT {
        let mine = env!("CARGO_PKG_VERSION");
        let writer = if probe.ptx_build.is_empty() { String::new() } else { format!(" (written by ptx-build {})", probe.ptx_build) };
        // Equal or older releases say nothing about which release reads the format.
        let to = if newer_release(&probe.ptx_build, mine) {
            format!("to {} or later", probe.ptx_build)
        } else {
            format!("to a release that reads format {}", probe.format)
        };
        return Err(Problem {
            message: format!("it is in manifest format {}{writer}, and this ptx-build ({mine}) reads format {FORMAT}", probe.format),
            help: format!("update ptx-build in the build-dependencies {to} (`cargo update -p ptx-build`)"),
            fix,
        });
    }
    let m: Manifest = serde_json::from_str(&text).map_err(|e| damaged(format!("{MANIFEST} is not a prebuilt manifest: {e}")))?;
    let mut watch = vec![manifest_path.to_path_buf()];

    // Every file of the set is watched: a later edit or removal is found by the next build.
    for a in m.crates.iter().flat_map(|c| &c.artifacts) {
        let file = under(dir, &a.file);
        match cache::file_hash(&file) {
            Some(h) if h == a.hash => watch.push(file),
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
        return Err(problem(format!(
            "the sources changed after packaging: {}{more}",
            changed.iter().take(3).cloned().collect::<Vec<_>>().join(", ")
        )));
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
        return Err(problem(format!("built with other options: {what}")));
    }
    serve_archs(req.options, &m, &fix, reporter)?;
    Ok((build_output(req, dir, &m), watch))
}

/// Each arch asked for is shipped, or a newer GPU that runs a shipped PTX (the driver compiles
/// it at load time, as it does for a build without that arch).
fn serve_archs(options: &Options, m: &Manifest, fix: &str, reporter: &dyn Reporter) -> std::result::Result<(), Problem> {
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
                    fix: format!("add {want} to the archs of `{}` and {fix}", m.package),
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
                    kernels: a
                        .kernels
                        .iter()
                        .map(|k| KernelInfo { cooperative: a.cooperative.contains(k), ..KernelInfo::named(k) })
                        .collect(),
                    fresh: true,
                    content_hash: None,
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
        let found = Rust::find(&toolchain).map_err(|e| missing_tool(&e))?;
        found.require().map_err(|e| missing_tool(&e))?;
    }
    if cuda && Cuda::find().nvcc.is_none() {
        return Err("nvcc, which was not found".into());
    }
    Ok(())
}

/// A tool error as the end of "building from source needs ...": what is missing, and why it is
/// needed, without the error's own help (the set's error has its own).
pub(super) fn missing_tool(e: &Error) -> String {
    match e {
        Error::ToolMissing { what, detail, .. } => {
            let were = if what.contains(" components ") { "were" } else { "was" };
            format!("{what}, which {were} not found{detail}")
        }
        other => other.to_string().lines().next().unwrap_or_default().to_string(),
    }
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
