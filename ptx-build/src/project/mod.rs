//! Kernel crates: finding them with `cargo metadata` and resolving their [`Options`] from the
//! front end's layer over `[package.metadata.ptx]` over `[workspace.metadata.ptx]`.

mod build_rs;
pub use build_rs::{builder_cuda_files, builder_globs, BuilderGlobs, BuilderGroup};
pub mod cargo;

use std::path::{Path, PathBuf};

use crate::diag::Diagnostic;
use crate::error::{Error, Result};
use crate::options::{Config, Options, Source};
use crate::project::cargo::{metadata, Metadata, Package};

mod manifest_scan;

/// A package with `[package.metadata.ptx]`.
#[derive(Clone, Debug)]
pub struct KernelCrate {
    /// The package name.
    pub name: String,
    /// The lib target's crate name (`saxpy_kernels`): names the artifacts.
    pub lib_name: String,
    /// The lib target's root file (`src/lib.rs`), where kernel signatures are read.
    pub lib_src: Option<PathBuf>,
    /// Its Cargo.toml (for files outside a package: the first file).
    pub manifest_path: PathBuf,
    /// The package folder: paths in diagnostics are relative to it.
    pub dir: PathBuf,
    /// The root of its cargo workspace (rustc names sources relative to it).
    pub workspace_root: PathBuf,
    /// The target dir of the crate's workspace (artifacts go under `<it>/ptx/`).
    pub target_dir: PathBuf,
    /// Its options, every layer applied.
    pub config: Config,
    /// The .cu files to build (from `cuda-sources`, or a lone file given on the command line).
    pub cuda_sources: Vec<CudaSource>,
    /// Unknown keys and similar slips in the metadata.
    pub warnings: Vec<Diagnostic>,
    /// The table where this crate's archs are set: its own `[package.metadata.ptx]`, or for
    /// .cu files outside a kernel crate, the nearest package's table when that package is a
    /// kernel crate, else its workspace's `[workspace.metadata.ptx]` (a `[package.metadata.ptx]`
    /// would make a host package a kernel crate). `None`: no package around the files.
    /// Messages point there.
    pub options_table: Option<Source>,
    /// The metadata table whose `nvcc-flags` are in force; `None` where the front end set them
    /// (or nothing did). A list replaces a lower layer's whole, so a note that adds a flag
    /// names this layer.
    pub nvcc_flags_table: Option<Source>,
    /// Set when the .cu files make one static library (`Builder::cuda_static_lib`) instead of
    /// PTX modules.
    pub static_lib: Option<StaticLibSpec>,
    /// The workspace's manifest, whose `[workspace.metadata.ptx]` applies to the crate's .cu
    /// files besides the package's own: an input (`rerun-if-changed`), as cargo watches no other
    /// package's manifest by itself. `None` where it is the package's own.
    pub workspace_manifest: Option<PathBuf>,
}

/// A static library of CUDA C++ that launches its own kernels: `lib<name>.a` in `dir`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StaticLibSpec {
    /// The library's name, as `-l` takes it.
    pub name: String,
    /// Where `lib<name>.a` goes (a build script's `OUT_DIR`).
    pub dir: PathBuf,
}

/// One .cu file of a kernel crate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CudaSource {
    /// The file.
    pub path: PathBuf,
    /// Names its PTX module and artifacts (`saxpy` for `cuda/saxpy.cu`); a Rust identifier,
    /// unique in the crate.
    pub module: String,
    /// Its own archs, from the first `cuda-file-archs` glob that matches it.
    pub archs: Option<Vec<crate::arch::ArchRequest>>,
}

/// Finds the kernel crates to build.
///
/// Each of `paths` is a package folder, a workspace folder or a `Cargo.toml`; every kernel crate
/// at or below it is taken. With no paths, the workspace of `manifest_path` (or of the current
/// folder) is searched. `packages` (`-p NAME`) narrows the set. `front` is the front end's
/// layer of options (flags or Builder, over the environment), from `source`.
pub fn find_kernel_crates(
    manifest_path: Option<&Path>,
    paths: &[PathBuf],
    packages: &[String],
    front: &Options,
    source: &Source,
) -> Result<Vec<KernelCrate>> {
    let mut found: Vec<KernelCrate> = Vec::new();
    let mut searched = Vec::new();
    for p in paths {
        // A FIFO or device would block the first read of it forever.
        if let Ok(meta) = std::fs::metadata(p) {
            if !meta.is_file() && !meta.is_dir() {
                return Err(Error::io(
                    "build",
                    p,
                    std::io::Error::new(
                        std::io::ErrorKind::InvalidInput,
                        "not a file or folder (a FIFO, socket or device); pass a package folder, a Cargo.toml or a .cu file",
                    ),
                ));
            }
        }
    }
    let (cu_files, paths): (Vec<&PathBuf>, Vec<&PathBuf>) = paths.iter().partition(|p| p.extension().is_some_and(|e| e == "cu"));
    for f in cu_files {
        let k = CudaFiles::lone(f)?.into_crate(front, source)?;
        push_new(&mut found, k);
    }
    let scopes: Vec<(Option<PathBuf>, Option<PathBuf>)> = if paths.is_empty() && found.is_empty() {
        vec![(manifest_path.map(Path::to_path_buf), None)]
    } else {
        paths.iter().map(|p| scope_of(p)).collect::<Result<_>>()?
    };
    let mut skipped: Vec<Diagnostic> = Vec::new();
    let mut builders: Vec<String> = Vec::new();
    for (manifest, under) in scopes {
        // A folder outside any workspace has no metadata of its own: only what lies below it.
        let meta = match (&manifest, &under) {
            (None, Some(_)) => None,
            _ => Some(metadata(manifest.as_deref())?),
        };
        let Some(root) = under.clone().or_else(|| meta.as_ref().map(|m| m.workspace_root.clone())) else { continue };
        searched.push(root.display().to_string());
        // --no-deps: every package listed is a workspace member.
        for pkg in meta.iter().flat_map(|m| &m.packages) {
            let dir = pkg.manifest_path.parent().map(Path::to_path_buf).unwrap_or_default();
            if let Some(under) = &under {
                if !dir.starts_with(under) {
                    continue;
                }
            }
            builders.extend(Some(pkg.name.clone()).filter(|_| pkg.builds_kernels_in_build_rs()));
            if let Some(k) = kernel_crate(meta.as_ref().expect("listed from it"), pkg, front, source)? {
                push_new(&mut found, k);
            }
        }
        // Kernel crates are usually not members: they build for nvptx64 with a nightly, so a
        // host workspace excludes them (`cargo ptx new` does) or they stand in a workspace of
        // their own. cargo metadata does not list them; the folders do.
        let mut candidates = Vec::new();
        let target_dirs: Vec<PathBuf> = meta.iter().map(|m| m.target_directory.clone()).collect();
        manifests_below(&root, &target_dirs, WALK_DEPTH, &mut candidates);
        for m in candidates {
            if found.iter().any(|k| same_file(&k.manifest_path, &m)) {
                continue;
            }
            match metadata(Some(&m)) {
                Ok(meta) => {
                    if let Some(pkg) = meta.packages.iter().find(|p| same_file(&p.manifest_path, &m)) {
                        if let Some(k) = kernel_crate(&meta, pkg, front, source)? {
                            push_new(&mut found, k);
                        }
                    }
                }
                // Another project's broken manifest below the folder should not stop this
                // build; say why it was left out.
                Err(e) => skipped
                    .push(Diagnostic::warning(format!("skipped {}: {e}", m.display())).note(
                        "pass the kernel crates to build as PATHs (`cargo ptx build path/to/kernels`) to leave it out of the search",
                    )),
            }
        }
    }
    if let Some(first) = found.first_mut() {
        first.warnings.extend(skipped);
    }
    let searched = searched.join(", ");
    if found.is_empty() {
        return Err(Error::NoKernelCrate { searched, help: source.no_crate_help(&builders) });
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

/// How many folders deep the search for kernel crates goes below a PATH or workspace root.
const WALK_DEPTH: usize = 8;

fn push_new(found: &mut Vec<KernelCrate>, k: KernelCrate) {
    if !found.iter().any(|f| same_file(&f.manifest_path, &k.manifest_path)) {
        found.push(k);
    }
}

/// The same file, however each path spells it (cargo's paths are not always canonical).
fn same_file(a: &Path, b: &Path) -> bool {
    a == b || matches!((std::fs::canonicalize(a), std::fs::canonicalize(b)), (Ok(x), Ok(y)) if x == y)
}

/// The folders below `dir` that a search of the user's sources enters, sorted: not hidden ones,
/// not `target/`, nothing below a folder cargo marked as its own (CACHEDIR.TAG: a target dir of
/// another name), and no links (a link may loop). They hold copies and registries, not the
/// user's crates.
fn source_subdirs(dir: &Path) -> Vec<PathBuf> {
    if dir.join("CACHEDIR.TAG").is_file() {
        return Vec::new();
    }
    let entries = std::fs::read_dir(dir).into_iter().flatten().flatten();
    let mut dirs: Vec<PathBuf> = entries
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            !name.starts_with('.') && name != "target"
        })
        .map(|e| e.path())
        .collect();
    dirs.sort();
    dirs
}

/// The .cu files of a folder with no package in it (a Builder host's `csrc/kernels/`), for
/// `cargo ptx check`; `None` where the folder or one below it has a Cargo.toml (a package is
/// given by its folder) or holds no .cu file.
pub fn loose_cuda_files(dir: &Path) -> Option<Vec<PathBuf>> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> bool {
        if dir.join("Cargo.toml").is_file() {
            return false;
        }
        let entries = std::fs::read_dir(dir).into_iter().flatten().flatten().map(|e| e.path());
        let mut cu: Vec<PathBuf> = entries.filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "cu")).collect();
        cu.sort();
        out.extend(cu);
        source_subdirs(dir).iter().all(|d| walk(d, out))
    }
    let mut out = Vec::new();
    (dir.is_dir() && walk(dir, &mut out) && !out.is_empty()).then_some(out)
}

/// The Cargo.toml files at or below `dir` that may declare `[package.metadata.ptx]` (cargo
/// confirms), `depth` folders deep, in the folders [`source_subdirs`] enters and not in the
/// workspace's own target dirs.
fn manifests_below(dir: &Path, target_dirs: &[PathBuf], depth: usize, out: &mut Vec<PathBuf>) {
    let manifest = dir.join("Cargo.toml");
    if let Ok(text) = std::fs::read_to_string(&manifest) {
        if text.contains("metadata.ptx") || (text.contains("[package.metadata]") && text.contains("ptx")) {
            out.push(manifest);
        }
    }
    if depth == 0 {
        return;
    }
    for d in source_subdirs(dir).into_iter().filter(|p| !target_dirs.iter().any(|t| same_file(t, p))) {
        manifests_below(&d, target_dirs, depth - 1, out);
    }
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

/// A build script's option over its package's own table is legitimate, but two files of one
/// package disagreeing is worth a line each: which one wins. Not over a workspace's table (a
/// default the members share, which a member may override) nor where the value is the
/// environment's (`front` holds both layers; the Builder's wins where both set a key, but a key
/// the environment sets is not known to be the Builder's).
fn overridden(front: &Options, source: &Source, table: &Options, table_source: &Source, exempt: &[&str]) -> Vec<Diagnostic> {
    let Source::Builder(script) = source else { return Vec::new() };
    let env: Vec<&str> = Options::from_env().unwrap_or_default().set_values().into_iter().map(|(k, _)| k).collect();
    let line = |key: &str| format!("`{key}` of the Builder in {} overrides `{key}` in {table_source}", script.display());
    let note = "the Builder wins; remove one of the two to silence this";
    let keys = front.overrides(table).into_iter().filter(|k| !env.contains(k) && !exempt.contains(k));
    keys.map(|key| Diagnostic::warning(line(&key.replace('_', "-"))).note(note)).collect()
}

fn find_manifest_above(dir: &Path) -> Option<PathBuf> {
    dir.ancestors().map(|d| d.join("Cargo.toml")).find(|m| m.is_file())
}

fn kernel_crate(meta: &Metadata, pkg: &Package, front: &Options, source: &Source) -> Result<Option<KernelCrate>> {
    let Some(table) = pkg.metadata.get("ptx") else {
        return Ok(None);
    };
    let manifest_path = pkg.manifest_path.clone();
    let dir = manifest_path.parent().map(Path::to_path_buf).unwrap_or_default();
    let mut warnings = Vec::new();
    let pkg_source = Source::Package(manifest_path.clone());
    let (own, ws) = package_options(meta, Some(table), &manifest_path, &mut warnings)?;
    // A kernel crate's own `archs` are for building it alone (`cargo ptx build kernels`, as
    // `cargo ptx new` writes them beside build.rs's): the Builder's archs for the host build are
    // not a conflict to warn about. Every other key is.
    warnings.extend(overridden(front, source, &own, &pkg_source, &["archs"]));
    let pkg_options = own.or(ws);
    let config = front.clone().or(pkg_options).resolve();
    let lib = pkg.targets.iter().find(|t| t.is_lib());
    let lib_name = match lib {
        Some(t) => t.name.replace('-', "_"),
        None if config.rust => {
            return Err(pkg_source.error(
                "rust",
                "the package has no lib target to hold Rust kernels\n  help: add src/lib.rs with `#![no_std]` kernels, or set `rust = false` if the crate holds only CUDA C++".into(),
            ))
        }
        None => pkg.name.replace('-', "_"),
    };
    let lib_src = lib.map(|t| t.src_path.clone());
    let mut cuda_sources = cuda_sources(&dir, &config, (&pkg.name, &lib_name), &pkg_source, &mut warnings)?;
    apply_file_archs(&dir, &mut cuda_sources, &config, &pkg.name.to_string(), &mut warnings);
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
        options_table: Some(Source::Package(pkg.manifest_path.clone())),
        nvcc_flags_table: nvcc_flags_table(meta, Some(table), &pkg.manifest_path, front),
        static_lib: None,
        workspace_manifest: None,
    }))
}

/// The options of `[package.metadata.ptx]` (`table`) over those of `[workspace.metadata.ptx]`,
/// paths resolved against the folder of the table that set them.
/// Returned as the two layers, the package's own table's first.
fn package_options(
    meta: &Metadata,
    table: Option<&serde_json::Value>,
    manifest: &Path,
    warnings: &mut Vec<Diagnostic>,
) -> Result<(Options, Options)> {
    let ws_options = match meta.metadata.get("ptx") {
        Some(ws) => {
            let source = Source::Workspace(meta.workspace_root.join("Cargo.toml"));
            Options::from_metadata(ws, &source, warnings)?.resolve_paths(&meta.workspace_root, &source)?
        }
        None => Options::default(),
    };
    let Some(table) = table else { return Ok((Options::default(), ws_options)) };
    let source = Source::Package(manifest.to_path_buf());
    let dir = manifest.parent().unwrap_or(Path::new("."));
    Ok((Options::from_metadata(table, &source, warnings)?.resolve_paths(dir, &source)?, ws_options))
}

/// Which table's `nvcc-flags` apply under the front end's options (`front`): the package's
/// own (`table`), else its workspace's, else none.
fn nvcc_flags_table(meta: &Metadata, table: Option<&serde_json::Value>, manifest: &Path, front: &Options) -> Option<Source> {
    let sets = |t: &serde_json::Value| t.get("nvcc-flags").is_some();
    if front.nvcc_flags.is_some() {
        None
    } else if table.is_some_and(sets) {
        Some(Source::Package(manifest.to_path_buf()))
    } else if meta.metadata.get("ptx").is_some_and(sets) {
        Some(Source::Workspace(meta.workspace_root.join("Cargo.toml")))
    } else {
        None
    }
}

/// .cu files that are not part of a kernel crate: a lone file given as a PATH, or the
/// `Builder::cuda` files of a host crate.
#[derive(Clone, Debug)]
pub struct CudaFiles {
    /// Names the artifacts' folder (`<target>/ptx/<profile>/<name>/`).
    pub name: String,
    /// Paths in diagnostics are relative to it.
    pub dir: PathBuf,
    /// The .cu files.
    pub files: Vec<PathBuf>,
    /// Default: the target dir of the cargo workspace around `dir`, else `dir/target`.
    pub target_dir: Option<PathBuf>,
    /// Build them into this static library instead of PTX modules.
    pub static_lib: Option<StaticLibSpec>,
    /// The files of the Builder's other groups (`.cuda(..)`, each `.cuda_static_lib(..)`): a
    /// `cuda-exclude` glob that leaves out one of theirs is not one that matches nothing.
    pub siblings: Vec<PathBuf>,
}

impl CudaFiles {
    /// A lone .cu file given on the command line.
    pub fn lone(path: &Path) -> Result<CudaFiles> {
        let file = std::fs::canonicalize(path).map_err(|e| Error::io("find", path, e))?;
        let dir = file.parent().map(Path::to_path_buf).unwrap_or_default();
        let name = file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        Ok(CudaFiles { name, dir, files: vec![file], target_dir: None, static_lib: None, siblings: Vec::new() })
    }

    /// A kernel crate of these files alone, built with the front end's options (set in
    /// `front_source`: the command line, a build script's Builder).
    pub fn into_crate(self, front: &Options, front_source: &Source) -> Result<KernelCrate> {
        let around = find_manifest_above(&self.dir);
        // `cargo metadata` is a process start on the way to the first nvcc of every build-script
        // run (52-68 ms of it; BENCHMARKS.md): not asked where no manifest could hold options
        // and the Builder gave the target dir. What it would say then is known: no options, and
        // the workspace root that the help for missing ones names.
        let without_options = match (&around, &self.target_dir) {
            (Some(m), Some(_)) => manifest_scan::workspace_without_options(m),
            _ => None,
        };
        let meta = match without_options {
            Some(_) => None,
            None => around.as_deref().and_then(|m| metadata(Some(m)).ok()),
        };
        let target_dir = match self.target_dir {
            Some(t) => t,
            None => meta.as_ref().map(|m| m.target_directory.clone()).unwrap_or_else(|| self.dir.join("target")),
        };
        // The options of the package (else the workspace) the files are in, under the front
        // end's: `Builder::cuda` files and a lone file in a package are built as a kernel crate
        // there would build them (archs, `cuda-include`, `cuda-defines`, `nvcc-flags`, ...).
        let exclude_set_by_front = front.cuda_exclude.is_some();
        let mut front = front.clone();
        let mut warnings = Vec::new();
        let mut options_table = None;
        let mut nvcc_flags_from = None;
        if let (Some(m), Some(meta)) = (&around, &meta) {
            let package = meta.packages.iter().find(|p| same_file(&p.manifest_path, m));
            let own = package.and_then(|p| p.metadata.get("ptx"));
            let root = meta.workspace_root.join("Cargo.toml");
            // No table yet in a package that is its own root: its `[package.metadata.ptx]` is
            // where one goes.
            let is_package = package.is_some();
            let table_source = match (own, meta.metadata.get("ptx")) {
                (None, Some(_)) => Source::Workspace(root),
                (None, None) if !is_package || !same_file(&root, m) => Source::Workspace(root),
                _ => Source::Package(m.clone()),
            };
            nvcc_flags_from = nvcc_flags_table(meta, own, m, &front);
            let (own_options, ws) = package_options(meta, own, m, &mut warnings)?;
            if own.is_some() {
                warnings.extend(overridden(&front, front_source, &own_options, &table_source, &[]));
            }
            options_table = Some(table_source);
            front = front.or(own_options.or(ws));
        }
        let workspace_manifest = match (&without_options, &meta) {
            (Some(root), _) => Some(root.clone()),
            (None, Some(meta)) => Some(meta.workspace_root.join("Cargo.toml")),
            (None, None) => None,
        }
        .filter(|w| around.as_ref() != Some(w));
        if let Some(root) = without_options {
            options_table = Some(match &around {
                Some(m) if same_file(m, &root) => Source::Package(root),
                _ => Source::Workspace(root),
            });
        }
        let lib_name = identifier(&self.name);
        // The front end's globs win over the metadata's: an error about them names the front end.
        let source = match (&options_table, exclude_set_by_front) {
            (Some(table), false) => table.clone(),
            _ => front_source.clone(),
        };
        let config = Config { rust: false, ..front.resolve() };
        let mut files = self.files.clone();
        let unmatched = exclude(&self.dir, &mut files, &config.cuda_exclude, &source)?;
        for g in unmatched.into_iter().filter(|g| !self.siblings.iter().any(|f| matches_in(&self.dir, g, f))) {
            warnings.push(unmatched_exclude(&self.dir, g, &self.name));
        }
        if let (Some(lib), true) = (&self.static_lib, files.is_empty()) {
            return Err(source.error(
                "cuda-exclude",
                format!(
                    "`lib{}.a` has no .cu file left: `cuda-exclude` ({}) leaves out every one",
                    lib.name,
                    config.cuda_exclude.join(", ")
                ),
            ));
        }
        // No Rust module to clash with: each module is named after its file.
        let mut cuda_sources = name_modules(&self.dir, files, "")?;
        apply_file_archs(&self.dir, &mut cuda_sources, &config, &self.name, &mut warnings);
        let manifest_path = self.files.first().cloned().unwrap_or_else(|| self.dir.join(&self.name));
        Ok(KernelCrate {
            name: self.name,
            lib_name,
            lib_src: None,
            manifest_path,
            workspace_root: self.dir.clone(),
            target_dir,
            config,
            cuda_sources,
            dir: self.dir,
            warnings,
            options_table,
            nvcc_flags_table: nvcc_flags_from,
            static_lib: self.static_lib,
            workspace_manifest,
        })
    }
}

/// Whether `name` cannot be a Rust module's name: a keyword (strict or reserved, of any
/// edition; `self`, `crate`, `super` and `Self` cannot even be raw identifiers) or `_`.
fn is_keyword(name: &str) -> bool {
    const KEYWORDS: &[&str] = &[
        "_", "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "crate", "do", "dyn", "else", "enum",
        "extern", "false", "final", "fn", "for", "gen", "if", "impl", "in", "let", "loop", "macro", "match", "mod", "move", "mut",
        "override", "priv", "pub", "ref", "return", "self", "static", "struct", "super", "trait", "true", "try", "type", "typeof",
        "unsafe", "unsized", "use", "virtual", "where", "while", "yield",
    ];
    KEYWORDS.contains(&name)
}

/// `saxpy-v2` -> `saxpy_v2`, `2d` -> `_2d`: a name usable as a Rust module.
pub(crate) fn identifier(s: &str) -> String {
    let mut out: String = s.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '_' }).collect();
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    out
}

/// Expands `cuda-sources` (or the default `cuda/**/*.cu`), less `cuda-exclude`, and names each
/// file's module: its stem, with parent folders added where two stems (or the Rust crate's name)
/// clash.
/// `names`: the package's, for messages, and its lib's, for the modules.
fn cuda_sources(
    dir: &Path,
    config: &Config,
    names: (&str, &str),
    source: &Source,
    warnings: &mut Vec<Diagnostic>,
) -> Result<Vec<CudaSource>> {
    let (package, lib_name) = names;
    let sources = config.cuda_sources.as_deref();
    let explicit = sources.is_some();
    let globs = match sources {
        Some(g) => g.to_vec(),
        None if dir.join("cuda").is_dir() => vec!["cuda/**/*.cu".to_string()],
        None => return Ok(Vec::new()),
    };
    let mut files: Vec<PathBuf> = Vec::new();
    for g in &globs {
        let matched = glob_files(dir, g).map_err(|message| source.error("cuda-sources", message))?;
        if matched.is_empty() && explicit {
            let mut w = Diagnostic::warning(format!("`cuda-sources` glob `{g}` matches no file under {}", dir.display()))
                .note("globs are relative to the package folder, e.g. \"cuda/**/*.cu\"");
            if let Source::Package(m) = source {
                w = w.at(m, None, None);
            }
            warnings.push(w);
        }
        files.extend(matched);
    }
    files.sort();
    files.dedup();
    for g in exclude(dir, &mut files, &config.cuda_exclude, source)? {
        warnings.push(unmatched_exclude(dir, g, package));
    }
    name_modules(dir, files, lib_name)
}

/// Leaves out of `files` (below `dir`) those a `cuda-exclude` glob names; returns the globs that
/// named none of them. A bad glob is an error.
fn exclude<'g>(dir: &Path, files: &mut Vec<PathBuf>, globs: &'g [String], source: &Source) -> Result<Vec<&'g str>> {
    let mut unmatched = Vec::new();
    for g in globs {
        let glob = crate::options::file_glob(g).map_err(|message| source.error("cuda-exclude", message))?;
        let before = files.len();
        files.retain(|f| !glob.matches(f.strip_prefix(dir).unwrap_or(f)));
        if files.len() == before {
            unmatched.push(g.as_str());
        }
    }
    Ok(unmatched)
}

/// Whether file glob `glob` (checked) names `file`, a path below `dir`.
fn matches_in(dir: &Path, glob: &str, file: &Path) -> bool {
    crate::options::file_glob(glob).is_ok_and(|g| g.matches(file.strip_prefix(dir).unwrap_or(file)))
}

fn unmatched_exclude(dir: &Path, glob: &str, crate_name: &str) -> Diagnostic {
    Diagnostic::warning(format!("`cuda-exclude` glob `{glob}` matches no .cu file of `{crate_name}`; it is ignored"))
        .note(format!("globs are relative to {} (a glob without `/` matches file names anywhere)", dir.display()))
}

/// The files (and links, even dangling ones: reading them later names the file that cannot be
/// read) matching `pattern` relative to `dir`; a bad pattern is an error message.
pub(crate) fn glob_files(dir: &Path, pattern: &str) -> std::result::Result<Vec<PathBuf>, String> {
    let entries = glob::glob(&dir.join(pattern).to_string_lossy()).map_err(|e| format!("`{pattern}` is not a valid glob: {e}"))?;
    Ok(entries.flatten().filter(|p| p.is_file() || p.symlink_metadata().is_ok_and(|m| m.is_symlink())).collect())
}

/// Names each file's PTX module: its stem, with parent folders added where two stems (or the
/// Rust crate's name) clash.
///
/// Two files whose whole paths map to one name (`a-b.cu` and `a_b.cu`, `Foo.cu` and `foo.cu`)
/// are an error: their PTX and cubins would overwrite each other.
fn name_modules(dir: &Path, files: Vec<PathBuf>, lib_name: &str) -> Result<Vec<CudaSource>> {
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
                // A module of the generated file: neither the crate's name nor a Rust keyword.
                break if candidate == lib_name || is_keyword(&candidate) { format!("{candidate}_cu") } else { candidate };
            }
            take += 1;
        };
        if let Some(other) = out.iter().find(|o: &&CudaSource| o.module == name) {
            return Err(Error::ModuleClash {
                module: name,
                first: other.path.strip_prefix(dir).unwrap_or(&other.path).to_path_buf(),
                second: f.strip_prefix(dir).unwrap_or(f).to_path_buf(),
                dir: dir.to_path_buf(),
            });
        }
        out.push(CudaSource { path: f.clone(), module: name, archs: None });
    }
    Ok(out)
}

/// Gives each .cu file the archs of the first `cuda-file-archs` glob that matches its path
/// (relative to `dir`); a glob that matches none of the files is a warning naming it (a typo
/// would otherwise build the file for the crate's archs without a word).
fn apply_file_archs(dir: &Path, sources: &mut [CudaSource], config: &Config, crate_name: &str, warnings: &mut Vec<Diagnostic>) {
    for fa in &config.cuda_file_archs {
        let mut matched = false;
        for s in sources.iter_mut() {
            let rel = s.path.strip_prefix(dir).unwrap_or(&s.path);
            if fa.matches(rel) {
                matched = true;
                s.archs.get_or_insert_with(|| fa.archs.clone());
            }
        }
        if !matched {
            warnings.push(
                Diagnostic::warning(format!("`cuda-file-archs` glob `{}` matches no .cu file of `{crate_name}`; it is ignored", fa.glob))
                    .note(format!("globs are relative to {} (a glob without `/` matches file names anywhere)", dir.display())),
            );
        }
    }
}

impl KernelCrate {
    /// The package, as diagnostics name it for cargo's JSON messages.
    pub(crate) fn origin(&self) -> crate::diag::Origin {
        crate::diag::Origin {
            package: self.name.clone(),
            manifest_path: self.manifest_path.clone(),
            target: self.lib_name.clone(),
            src_path: self.lib_src.clone().unwrap_or_else(|| self.dir.join("src/lib.rs")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_of_cu_files_is_loose_unless_a_package_is_in_it() {
        let d = tempfile::tempdir().unwrap();
        for f in ["csrc/kernels/a.cu", "csrc/kernels/sub/b.cu", "csrc/kernels/target/c.cu", "csrc/kernels/.git/d.cu", "csrc/kernels/x.cuh"]
        {
            std::fs::create_dir_all(d.path().join(f).parent().unwrap()).unwrap();
            std::fs::write(d.path().join(f), "").unwrap();
        }
        let files = loose_cuda_files(&d.path().join("csrc/kernels")).unwrap();
        let names: Vec<String> = files.iter().map(|f| f.strip_prefix(d.path()).unwrap().display().to_string()).collect();
        assert_eq!(names, ["csrc/kernels/a.cu", "csrc/kernels/sub/b.cu"], "target and hidden folders are not walked");
        // A package below: given by its folder, not as loose files; nor a folder without .cu files.
        std::fs::write(d.path().join("csrc/kernels/sub/Cargo.toml"), "").unwrap();
        assert_eq!(loose_cuda_files(&d.path().join("csrc/kernels")), None);
        assert_eq!(loose_cuda_files(&d.path().join("csrc/kernels/target")).map(|f| f.len()), Some(1));
        assert_eq!(loose_cuda_files(&d.path().join("nowhere")), None);
    }

    fn modules(files: &[&str], lib_name: &str) -> Result<Vec<String>> {
        let dir = Path::new("/pkg");
        let files = files.iter().map(|f| dir.join(f)).collect();
        Ok(name_modules(dir, files, lib_name)?.into_iter().map(|s| s.module).collect())
    }

    #[test]
    fn files_named_after_rust_keywords_get_modules_the_generated_file_can_name() {
        let got = modules(&["cuda/self.cu", "cuda/match.cu", "cuda/crate.cu", "cuda/type.cu", "_.cu", "cuda/ok.cu"], "k").unwrap();
        assert_eq!(got, ["self_cu", "match_cu", "crate_cu", "type_cu", "__cu", "ok"]);
        assert_eq!(modules(&["cuda/Self.cu"], "k").unwrap(), ["self_cu"]);
        // Two files that make one name are still refused, naming both.
        let e = modules(&["Self.cu", "self.cu"], "k").unwrap_err().to_string();
        assert!(e.contains("Self.cu") && e.contains("self.cu"), "{e}");
        assert_eq!(modules(&["cuda/k.cu"], "k").unwrap(), ["cuda_k"], "the Rust crate's own module keeps its name");
        assert_eq!(modules(&["k.cu"], "k").unwrap(), ["k_cu"]);
    }

    #[test]
    fn cuda_exclude_leaves_files_out_and_names_a_glob_that_matches_none_or_is_bad() {
        let dir = tempfile::tempdir().unwrap();
        let dir = std::fs::canonicalize(dir.path()).unwrap();
        for f in ["a.cu", "b_dummy.cu", "sub/c_dummy.cu", "sub/d.cu"] {
            std::fs::create_dir_all(dir.join(f).parent().unwrap()).unwrap();
            std::fs::write(dir.join(f), "").unwrap();
        }
        let group = |files: &[&str], siblings: &[&str], lib: Option<&str>| CudaFiles {
            name: "host".into(),
            dir: dir.clone(),
            files: files.iter().map(|f| dir.join(f)).collect(),
            target_dir: Some(dir.join("target")),
            static_lib: lib.map(|n| StaticLibSpec { name: n.into(), dir: dir.join("out") }),
            siblings: siblings.iter().map(|f| dir.join(f)).collect(),
        };
        let excluding =
            |globs: &[&str]| Options { cuda_exclude: Some(globs.iter().map(|g| g.to_string()).collect()), ..Options::default() };

        // A glob without `/` names files anywhere; one with `/` is relative to the folder.
        let k = group(&["a.cu", "b_dummy.cu", "sub/c_dummy.cu", "sub/d.cu"], &[], None)
            .into_crate(&excluding(&["*_dummy.cu", "sub/d.cu", "nope_*.cu"]), &Source::CommandLine)
            .unwrap();
        let kept: Vec<&str> = k.cuda_sources.iter().map(|s| s.module.as_str()).collect();
        assert_eq!(kept, ["a"]);
        let warnings: Vec<String> = k.warnings.iter().map(|w| w.message.clone()).collect();
        assert_eq!(warnings, ["`cuda-exclude` glob `nope_*.cu` matches no .cu file of `host`; it is ignored"]);

        // A glob that leaves out another group's file (a static library's) is not unmatched here.
        let k = group(&["a.cu"], &["sub/d.cu"], None).into_crate(&excluding(&["sub/d.cu"]), &Source::CommandLine).unwrap();
        assert!(k.warnings.is_empty() && k.cuda_sources.len() == 1, "{:?}", k.warnings);

        // A static library left without a file is an error saying why, naming the Builder that
        // set the globs, also where a package around the files has a metadata table.
        let manifest = "[package]\nname = \"host\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[package.metadata.ptx]\narchs = [\"sm_80\"]\n";
        std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::write(dir.join("src/lib.rs"), "").unwrap();
        let script = Source::Builder(dir.join("build.rs"));
        let e = group(&["b_dummy.cu"], &[], Some("quant")).into_crate(&excluding(&["*_dummy.cu"]), &script).unwrap_err().to_string();
        assert!(e.contains(&format!("invalid `cuda-exclude` in the Builder in {}: ", dir.join("build.rs").display())), "{e}");
        assert!(e.contains("`libquant.a` has no .cu file left: `cuda-exclude` (*_dummy.cu) leaves out every one"), "{e}");
        // Globs from the package's table alone: the error names the table.
        std::fs::write(dir.join("Cargo.toml"), format!("{manifest}cuda-exclude = [\"b_*.cu\"]\n")).unwrap();
        let e = group(&["b_dummy.cu"], &[], Some("quant")).into_crate(&Options::default(), &script).unwrap_err().to_string();
        let table = format!("invalid `cuda-exclude` in [package.metadata.ptx] of {}: ", dir.join("Cargo.toml").display());
        assert!(e.contains(&table) && e.contains("(b_*.cu) leaves out every one"), "{e}");

        // A bad glob from a package's metadata names the key and the manifest.
        let mut files = vec![dir.join("a.cu")];
        let e = exclude(&dir, &mut files, &["a[".to_string()], &Source::Package("/k/Cargo.toml".into())).unwrap_err().to_string();
        assert!(e.contains("invalid `cuda-exclude` in [package.metadata.ptx] of /k/Cargo.toml: `a[` is not a valid glob"), "{e}");
    }
}
