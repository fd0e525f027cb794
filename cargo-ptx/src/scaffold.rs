//! `cargo ptx new` / `cargo ptx init`: a GPU project that builds, tests and runs on the first try.
//!
//! The project's files are this package's `templates/` folder, embedded at compile time
//! so an installed `cargo ptx` works anywhere. They are rendered into a scratch folder next to
//! the destination, `git init` runs there, and only then is the folder renamed into place: a
//! failure at any step leaves nothing behind.
//!
//! Templates use `{{name}}` placeholders and `{{#flag}}..{{/flag}}` sections (a tag alone on its
//! line takes the line with it): a dozen lines here, where a template engine would bring a
//! language of its own for five flags.

use std::collections::BTreeMap;
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use ptx_build::arch;
use ptx_build::internals::tools::process;

use crate::error::{Error, Result};

/// Which kernels the project starts with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelLanguage {
    /// A Rust kernel crate in `kernels/`.
    Rust,
    /// CUDA C++ files in `cuda/`.
    Cuda,
    /// Both, in one generated module.
    Both,
}

impl KernelLanguage {
    fn rust(self) -> bool {
        self != KernelLanguage::Cuda
    }

    fn cuda(self) -> bool {
        self != KernelLanguage::Rust
    }
}

impl fmt::Display for KernelLanguage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            KernelLanguage::Rust => "Rust",
            KernelLanguage::Cuda => "CUDA C++",
            KernelLanguage::Both => "Rust and CUDA C++",
        })
    }
}

/// Whether to start a git repository.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Vcs {
    /// `git init`, unless the folder is already inside a git work tree.
    Auto,
    /// `git init`, even inside another repository.
    Git,
    None,
}

/// Where the project's `ptx-build`, `ptx-runtime` and `ptx-device` dependencies come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Dependencies {
    /// Decided by [`resolve_dependencies`]: the checkout this cargo-ptx was built from while it
    /// exists, else the registry once the crates are published there.
    Auto,
    /// From the registry, at the version of this cargo-ptx: an installed binary has no
    /// checkout to point at, and a project must not depend on where its tool was built.
    Registry,
    /// By path, from the root of a cargo-ptx checkout (`--path-deps DIR`).
    Path(PathBuf),
}

/// What to create.
#[derive(Clone, Debug)]
pub struct NewProject {
    /// The project's folder: created (`new`), or an existing empty one (`init`).
    pub path: PathBuf,
    /// The package name; default: the folder's name.
    pub name: Option<String>,
    pub kernels: KernelLanguage,
    /// Arch lists as `--arch` takes them; default `sm_80,sm_90`.
    pub archs: Vec<String>,
    pub vcs: Vcs,
    pub dependencies: Dependencies,
    /// `cargo ptx init`: fill an existing empty folder instead of creating one.
    pub init: bool,
}

/// What [`create`] made.
#[derive(Clone, Debug)]
pub struct Created {
    pub dir: PathBuf,
    pub name: String,
    /// Files written, relative to `dir`.
    pub files: Vec<PathBuf>,
    /// Whether `git init` ran.
    pub git: bool,
    /// Things the user should know (git not found, ...).
    pub notes: Vec<String>,
    /// Where our crates come from, when `new` chose it (path deps to the checkout it was built from).
    pub dependencies_note: Option<String>,
}

/// The archs a project gets without `--arch`: Ampere's cubin also runs on Ada (sm_89), and
/// Hopper's PTX is compiled by the driver for Blackwell.
pub const DEFAULT_ARCHS: &str = "sm_80,sm_90";

/// One file of `templates/`: where it goes, and for which projects.
struct Template {
    path: &'static str,
    text: &'static str,
    when: fn(KernelLanguage) -> bool,
}

macro_rules! template {
    ($src:literal => $dest:literal, $when:expr) => {
        Template { path: $dest, text: include_str!(concat!("../templates/", $src)), when: $when }
    };
}

fn always(_: KernelLanguage) -> bool {
    true
}

/// `Cargo.toml`s are stored as `.tmpl` so cargo never takes a template for a package, and
/// `.gitignore`, `.cargo/config.toml` and `rust-toolchain.toml` under other names so they do
/// not apply to this repository (cargo and rustup read them from any folder below them).
const TEMPLATES: &[Template] = &[
    template!("Cargo.toml.tmpl" => "Cargo.toml", always),
    template!("gitignore" => ".gitignore", always),
    template!("README.md" => "README.md", always),
    template!("build.rs" => "build.rs", always),
    template!("src/lib.rs" => "src/lib.rs", always),
    template!("src/main.rs" => "src/main.rs", always),
    template!("tests/embedded.rs" => "tests/embedded.rs", always),
    template!("tests/gpu.rs" => "tests/gpu.rs", always),
    template!("kernels/Cargo.toml.tmpl" => "kernels/Cargo.toml", KernelLanguage::rust),
    template!("kernels/src/lib.rs" => "kernels/src/lib.rs", KernelLanguage::rust),
    // For `cargo check`, clippy and rust-analyzer inside kernels/: the nightly and the GPU target.
    template!("kernels/rust-toolchain.toml.tmpl" => "kernels/rust-toolchain.toml", KernelLanguage::rust),
    template!("kernels/cargo-config.toml" => "kernels/.cargo/config.toml", KernelLanguage::rust),
    // The structs Rust kernels take by value, one crate for the kernels and the host.
    template!("shared/Cargo.toml.tmpl" => "shared/Cargo.toml", KernelLanguage::rust),
    template!("shared/src/lib.rs" => "shared/src/lib.rs", KernelLanguage::rust),
    template!("cuda/sigmoid.cu" => "cuda/sigmoid.cu", KernelLanguage::cuda),
];

/// Creates the project.
pub fn create(p: &NewProject) -> Result<Created> {
    let dir = absolute(&p.path)?;
    let name = match &p.name {
        Some(n) => n.clone(),
        None => dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
    };
    validate_name(&name).map_err(|reason| Error::InvalidName {
        name: name.clone(),
        reason,
        help: if p.name.is_some() {
            "choose another --name".into()
        } else {
            "pass `--name NAME` to name the package apart from its folder".into()
        },
    })?;
    let archs = archs(&p.archs)?;
    check_destination(&dir, p.init)?;
    let (dependencies, dependencies_note) = match &p.dependencies {
        Dependencies::Auto => resolve_dependencies(&|| checkout_built_from(), &registry_has_our_crates)?,
        given => (given.clone(), None),
    };
    let vars = variables(&name, &archs, &dependencies)?;

    let parent = dir.parent().ok_or_else(|| scaffold_error(&dir, "a project cannot be the root folder", "name a folder below it"))?;
    let made_parents = create_parents(parent)?;
    let result = stage_and_move(p, &dir, parent, &name, &vars).map(|c| Created { dependencies_note, ..c });
    if result.is_err() {
        if let Some(top) = made_parents {
            let _ = fs::remove_dir_all(top);
        }
    }
    result
}

fn stage_and_move(p: &NewProject, dir: &Path, parent: &Path, name: &str, vars: &BTreeMap<&'static str, String>) -> Result<Created> {
    let scratch = tempfile::Builder::new()
        .prefix(&format!(".{name}-"))
        .tempdir_in(parent)
        .map_err(|e| scaffold_error(dir, &format!("cannot write in {}: {e}", parent.display()), "choose a folder you can write to"))?;
    let mut files = Vec::new();
    for t in TEMPLATES.iter().filter(|t| (t.when)(p.kernels)) {
        let text = render(t.text, vars, p.kernels)
            .map_err(|m| scaffold_error(dir, &format!("template {}: {m}", t.path), "this is a bug in cargo-ptx: please report it"))?;
        // The scratch folder is private until the rename below: plain writes are enough.
        let dest = scratch.path().join(t.path);
        if let Some(parent) = dest.parent() {
            fs::create_dir_all(parent).map_err(|e| Error::io("create directory", parent, e))?;
        }
        fs::write(&dest, text).map_err(|e| Error::io("write", &dest, e))?;
        files.push(PathBuf::from(t.path));
    }

    let mut notes = Vec::new();
    let git = match p.vcs {
        Vcs::None => false,
        Vcs::Auto if inside_git_work_tree(parent) => false,
        Vcs::Auto | Vcs::Git => git_init(scratch.path(), &mut notes),
    };

    if p.init {
        move_entries(scratch.path(), dir)?;
    } else {
        // An empty folder may stand where the project goes: rename cannot replace it everywhere.
        if dir.is_dir() {
            fs::remove_dir(dir).map_err(|e| Error::io("replace the empty folder", dir, e))?;
        }
        let staged = scratch.keep();
        if let Err(e) = fs::rename(&staged, dir) {
            let _ = fs::remove_dir_all(&staged);
            return Err(Error::io("move the new project into", dir, e));
        }
    }
    Ok(Created { dir: dir.to_path_buf(), name: name.to_string(), files, git, notes, dependencies_note: None })
}

/// Cargo's rules for a package name, and ours: the project depends on our crates and on a
/// `<name>-kernels` crate, so those names are taken.
pub fn validate_name(name: &str) -> std::result::Result<(), String> {
    const KEYWORDS: &[&str] = &[
        "Self", "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "crate", "do", "dyn", "else", "enum",
        "extern", "false", "final", "fn", "for", "gen", "if", "impl", "in", "let", "loop", "macro", "match", "mod", "move", "mut",
        "override", "priv", "pub", "ref", "return", "self", "static", "struct", "super", "trait", "true", "try", "type", "typeof",
        "unsafe", "unsized", "use", "virtual", "where", "while", "yield",
    ];
    const BUILT_IN: &[&str] = &["core", "std", "alloc", "proc_macro", "proc-macro", "test"];
    const CARGO_DIRS: &[&str] = &["deps", "examples", "build", "incremental"];
    const OURS: &[&str] = &["ptx-build", "ptx-runtime", "ptx-device", "ptx-device-macros", "cudarc"];
    let Some(first) = name.chars().next() else {
        return Err("the name is empty".into());
    };
    if let Some(bad) = name.chars().find(|c| !(c.is_alphanumeric() || *c == '-' || *c == '_')) {
        return Err(format!("`{bad}` is not allowed in a package name (letters, digits, `-` and `_` are)"));
    }
    if first.is_numeric() {
        return Err("a package name cannot start with a digit".into());
    }
    if first == '-' {
        return Err("a package name cannot start with `-`".into());
    }
    if KEYWORDS.contains(&name) {
        return Err(format!("`{name}` is a Rust keyword"));
    }
    if BUILT_IN.contains(&name) {
        return Err(format!("`{name}` is the name of Rust's built-in `{}` crate", name.replace('-', "_")));
    }
    if CARGO_DIRS.contains(&name) {
        return Err(format!("`{name}` is a folder name cargo uses in its target dir"));
    }
    let lower = name.to_ascii_lowercase();
    let windows = ["con", "prn", "aux", "nul"].contains(&lower.as_str())
        || ((lower.starts_with("com") || lower.starts_with("lpt")) && lower.len() == 4 && lower.as_bytes()[3].is_ascii_digit());
    if windows {
        return Err(format!("`{name}` is a reserved file name on Windows"));
    }
    if OURS.contains(&name) || name.ends_with("-kernels") || name.ends_with("_kernels") {
        return Err(format!(
            "`{name}` would clash with a crate the project depends on (ptx-build, ptx-runtime, ptx-device, `<name>-kernels`)"
        ));
    }
    Ok(())
}

/// `{{name}}` substitution and `{{#flag}}..{{/flag}}` sections.
fn render(text: &str, vars: &BTreeMap<&'static str, String>, lang: KernelLanguage) -> std::result::Result<String, String> {
    let flags = [
        ("rust", lang.rust()),
        ("cuda", lang.cuda()),
        ("both", lang == KernelLanguage::Both),
        ("rust_only", lang == KernelLanguage::Rust),
        ("cuda_only", lang == KernelLanguage::Cuda),
    ];
    // A section tag alone on its line goes with its line.
    let mut text: String = text
        .split_inclusive('\n')
        .map(|line| {
            let t = line.trim();
            let lone_tag = (t.starts_with("{{#") || t.starts_with("{{/")) && t.ends_with("}}") && t.matches("{{").count() == 1;
            if lone_tag {
                t
            } else {
                line
            }
        })
        .collect();
    for (flag, on) in flags {
        let (open, close) = (format!("{{{{#{flag}}}}}"), format!("{{{{/{flag}}}}}"));
        while let Some(start) = text.find(&open) {
            let end = text[start..].find(&close).map(|e| start + e).ok_or_else(|| format!("`{open}` is not closed"))?;
            let inner = text[start + open.len()..end].to_string();
            text.replace_range(start..end + close.len(), if on { &inner } else { "" });
        }
    }
    for (name, value) in vars {
        text = text.replace(&format!("{{{{{name}}}}}"), value);
    }
    match text.find("{{") {
        Some(at) => Err(format!("unknown placeholder `{}`", text[at..].lines().next().unwrap_or_default())),
        None => Ok(text),
    }
}

fn variables(name: &str, archs: &[String], deps: &Dependencies) -> Result<BTreeMap<&'static str, String>> {
    let snake = name.replace('-', "_");
    let (ptx_build, ptx_runtime, ptx_device) = match deps {
        Dependencies::Registry => {
            // The crates are released together with cargo-ptx, in one version: this binary's.
            let v = format!("\"{}\"", env!("CARGO_PKG_VERSION"));
            (v.clone(), v.clone(), v)
        }
        Dependencies::Path(p) => checkout_paths(p)?,
        Dependencies::Auto => unreachable!("resolved by `create`"),
    };
    Ok(BTreeMap::from([
        ("name", name.to_string()),
        ("crate", snake.clone()),
        ("kernels_name", format!("{name}-kernels")),
        ("kernels_crate", format!("{snake}_kernels")),
        ("archs", archs.join(",")),
        ("toolchain", ptx_build::internals::tools::DEFAULT_TOOLCHAIN.to_string()),
        ("archs_toml", format!("[{}]", archs.iter().map(|a| format!("\"{a}\"")).collect::<Vec<_>>().join(", "))),
        ("ptx_build", ptx_build),
        ("ptx_runtime_harness", with_features(&ptx_runtime, "harness")),
        ("ptx_runtime", ptx_runtime),
        ("ptx_device", ptx_device),
    ]))
}

/// A dependency spec (`"0.1.0"` or `{ path = "..." }`) with a feature turned on.
fn with_features(spec: &str, feature: &str) -> String {
    match spec.strip_suffix(" }") {
        Some(table) => format!("{table}, features = [\"{feature}\"] }}"),
        None => format!("{{ version = {spec}, features = [\"{feature}\"] }}"),
    }
}

/// Whether crates.io has our crates at this version, as far as one can tell.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Published {
    Yes,
    No,
    /// The registry could not be asked (offline): why.
    Unknown(String),
}

/// `CARGO_PTX_CRATES_PUBLISHED=yes|no` answers for the registry (tests, offline machines);
/// otherwise `cargo info ptx-runtime@VERSION`, run outside any workspace so that a local
/// package of that name does not answer instead.
pub fn registry_has_our_crates() -> Published {
    match std::env::var("CARGO_PTX_CRATES_PUBLISHED").as_deref() {
        Ok("yes" | "1" | "true") => return Published::Yes,
        Ok("no" | "0" | "false") => return Published::No,
        _ => {}
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let spec = format!("ptx-runtime@{}", env!("CARGO_PKG_VERSION"));
    let mut cmd = Command::new(cargo);
    cmd.args(["info", "--quiet", "--registry", "crates-io", &spec]).current_dir(std::env::temp_dir());
    match process::output("cargo", &mut cmd) {
        Ok(out) if out.status.success() => Published::Yes,
        Ok(out) if String::from_utf8_lossy(&out.stderr).contains("could not find") => Published::No,
        Ok(out) => {
            Published::Unknown(process::combined(&out).lines().find(|l| !l.trim().is_empty()).unwrap_or_default().trim().to_string())
        }
        Err(e) => Published::Unknown(e.to_string()),
    }
}

/// The checkout this binary was built from (`cargo install --path cargo-ptx`, or cargo's copy of
/// a git source), while it still holds our crates; `CARGO_PTX_CHECKOUT` names another (empty:
/// none). A binary installed from crates.io was built in the registry's source folder, which
/// has no `ptx-build/` beside it.
pub fn checkout_built_from() -> Option<PathBuf> {
    let dir = match std::env::var_os("CARGO_PTX_CHECKOUT") {
        Some(d) if d.is_empty() => return None,
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).parent()?.to_path_buf(),
    };
    let ours = ["ptx-build", "ptx-runtime", "ptx-device"].iter().all(|k| dir.join(k).join("Cargo.toml").is_file());
    ours.then(|| fs::canonicalize(&dir).unwrap_or(dir))
}

/// Where a new project's dependencies on our crates come from when `--path-deps` is not given:
/// the checkout this cargo-ptx was built from while it exists (what it was built with, whether or
/// not that version is published), else the registry when it has them. With neither, one
/// line naming `--path-deps`: a project that cannot resolve its dependencies is not written.
pub fn resolve_dependencies(
    checkout: &dyn Fn() -> Option<PathBuf>,
    published: &dyn Fn() -> Published,
) -> Result<(Dependencies, Option<String>)> {
    let version = env!("CARGO_PKG_VERSION");
    if let Some(dir) = checkout() {
        let note = format!(
            "ptx-build, ptx-runtime and ptx-device by path from {}, the checkout this cargo-ptx was built from \
             (`--path-deps DIR` picks another checkout)",
            dir.display()
        );
        return Ok((Dependencies::Path(dir), Some(note)));
    }
    match published() {
        Published::Yes => Ok((Dependencies::Registry, None)),
        Published::No => Err(Error::NoDependencies(format!(
            "ptx-build, ptx-runtime and ptx-device {version} are not on crates.io and the checkout this cargo-ptx was built from is gone: \
             pass `--path-deps DIR` with the root of a cargo-ptx checkout"
        ))),
        Published::Unknown(why) => Ok((
            Dependencies::Registry,
            Some(format!(
                "the published ptx-build, ptx-runtime and ptx-device {version}: crates.io could not be asked whether it has them ({why}); \
                 `--path-deps DIR` depends on a checkout instead"
            )),
        )),
    }
}

/// `{ path = "..." }` for each of our crates in the checkout at `given` (`--path-deps`).
fn checkout_paths(given: &Path) -> Result<(String, String, String)> {
    let not_a_checkout = |message: String| {
        // Given the crate folder instead of the root (`--path-deps checkout/ptx-build`): say so.
        let parent = fs::canonicalize(given).ok().and_then(|g| g.parent().map(Path::to_path_buf));
        let help = match parent.filter(|p| p.join("ptx-build/Cargo.toml").is_file() && p.join("ptx-runtime/Cargo.toml").is_file()) {
            Some(root) => format!("pass the checkout's root instead: `--path-deps {}`", root.display()),
            None => format!(
                "pass the root of a cargo-ptx checkout (the folder with ptx-build/, ptx-runtime/ and ptx-device/), \
                 or leave out --path-deps to depend on the published crates (version {}) where crates.io has them",
                env!("CARGO_PKG_VERSION")
            ),
        };
        Error::PathDeps { dir: given.to_path_buf(), message, help }
    };
    let root = fs::canonicalize(given).map_err(|e| not_a_checkout(format!("the folder cannot be read: {e}")))?;
    let spec = |krate: &str| {
        let dir = root.join(krate);
        if !dir.join("Cargo.toml").is_file() {
            return Err(not_a_checkout(format!("it is not a cargo-ptx checkout: it has no {krate}/Cargo.toml")));
        }
        // A JSON string is a valid TOML basic string: quotes, backslashes and control characters escaped.
        let path = serde_json::to_string(&dir.to_string_lossy()).unwrap_or_default();
        Ok(format!("{{ path = {path} }}"))
    };
    Ok((spec("ptx-build")?, spec("ptx-runtime")?, spec("ptx-device")?))
}

fn archs(given: &[String]) -> Result<Vec<String>> {
    let joined = if given.is_empty() { DEFAULT_ARCHS.to_string() } else { given.join(",") };
    arch::parse_list(&joined)?; // refuses `sm_81` and friends now, not at the first build
    let mut out: Vec<String> = Vec::new();
    for a in joined.split(',').map(str::trim).filter(|a| !a.is_empty()) {
        if !out.iter().any(|o| o == a) {
            out.push(a.to_string());
        }
    }
    Ok(out)
}

fn check_destination(dir: &Path, init: bool) -> Result<()> {
    match fs::read_dir(dir) {
        Ok(mut entries) => {
            if entries.next().is_some() {
                let help = if init {
                    "run `cargo ptx init` in an empty folder, or `cargo ptx new NAME` to make one"
                } else {
                    "choose a new folder name, or empty this one"
                };
                return Err(scaffold_error(dir, "the folder is not empty", help));
            }
            Ok(())
        }
        Err(_) if dir.is_file() => Err(scaffold_error(dir, "a file of that name exists", "choose another name")),
        Err(_) if init => Err(scaffold_error(dir, "the folder does not exist", "create it first, or use `cargo ptx new PATH`")),
        Err(_) => Ok(()),
    }
}

/// Creates missing parents; returns the topmost one created, to remove on failure.
fn create_parents(parent: &Path) -> Result<Option<PathBuf>> {
    let top = parent.ancestors().take_while(|a| !a.exists()).last().map(Path::to_path_buf);
    if top.is_some() {
        fs::create_dir_all(parent)
            .map_err(|e| scaffold_error(parent, &format!("cannot create the folder: {e}"), "choose a folder you can write to"))?;
    }
    Ok(top)
}

/// `init`: the folder exists (perhaps as the shell's working folder): move entries into it.
fn move_entries(from: &Path, to: &Path) -> Result<()> {
    let entries: Vec<PathBuf> =
        fs::read_dir(from).map_err(|e| Error::io("read", from, e))?.filter_map(|e| e.ok().map(|e| e.path())).collect();
    let mut moved = Vec::new();
    for src in entries {
        let dest = to.join(src.file_name().unwrap_or_default());
        if let Err(e) = fs::rename(&src, &dest) {
            for m in moved {
                let _ = fs::remove_dir_all(&m).or_else(|_| fs::remove_file(&m));
            }
            return Err(Error::io("move the new project into", to, e));
        }
        moved.push(dest);
    }
    Ok(())
}

fn inside_git_work_tree(dir: &Path) -> bool {
    dir.ancestors().any(|d| d.join(".git").exists())
}

fn git_init(dir: &Path, notes: &mut Vec<String>) -> bool {
    match process::output("git", Command::new("git").args(["init", "--quiet"]).current_dir(dir)) {
        Ok(out) if out.status.success() => true,
        Ok(out) => {
            notes.push(format!("`git init` failed, the project has no repository:\n{}", process::combined(&out)));
            false
        }
        Err(_) => {
            notes.push("git was not found: the project has no repository (`--vcs none` skips this step)".into());
            false
        }
    }
}

fn absolute(path: &Path) -> Result<PathBuf> {
    let abs = std::path::absolute(path).map_err(|e| Error::io("resolve", path, e))?;
    // `cargo ptx init .` names the project after the folder, not after `.`.
    Ok(abs.components().collect())
}

fn scaffold_error(path: &Path, message: &str, help: &str) -> Error {
    Error::Scaffold { path: path.to_path_buf(), message: message.to_string(), help: help.to_string() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_cargos_rules() {
        for ok in ["gpu-demo", "saxpy_2", "a", "ñandú"] {
            assert_eq!(validate_name(ok), Ok(()), "{ok}");
        }
        let cases = [
            ("", "empty"),
            ("2fast", "cannot start with a digit"),
            ("my project", "` ` is not allowed"),
            ("a.b", "`.` is not allowed"),
            ("-x", "cannot start with `-`"),
            ("fn", "Rust keyword"),
            ("core", "built-in `core` crate"),
            ("proc-macro", "built-in `proc_macro` crate"),
            ("deps", "target dir"),
            ("nul", "Windows"),
            ("COM1", "Windows"),
            ("ptx-runtime", "clash"),
            ("foo-kernels", "clash"),
        ];
        for (bad, why) in cases {
            let e = validate_name(bad).unwrap_err();
            assert!(e.contains(why), "{bad:?}: {e}");
        }
    }

    #[test]
    fn renders_sections_and_placeholders() {
        let vars = BTreeMap::from([("name", "demo".to_string())]);
        let t = "a {{name}}\n{{#rust}}\nrust line\n{{/rust}}\n{{#cuda}}\ncuda line\n{{/cuda}}\nx{{#both}} both{{/both}}{{#cuda}} inline{{/cuda}}.\n";
        assert_eq!(render(t, &vars, KernelLanguage::Rust).unwrap(), "a demo\nrust line\nx.\n");
        assert_eq!(render(t, &vars, KernelLanguage::Cuda).unwrap(), "a demo\ncuda line\nx inline.\n");
        assert_eq!(render(t, &vars, KernelLanguage::Both).unwrap(), "a demo\nrust line\ncuda line\nx both inline.\n");
        assert!(render("{{nope}}", &vars, KernelLanguage::Rust).unwrap_err().contains("unknown placeholder `{{nope}}`"));
        assert!(render("{{#rust}}open", &vars, KernelLanguage::Rust).unwrap_err().contains("not closed"));
    }

    #[test]
    fn every_template_renders_for_every_flavour() {
        let vars = variables("demo-app", &["sm_80".into()], &Dependencies::Registry).unwrap();
        for lang in [KernelLanguage::Rust, KernelLanguage::Cuda, KernelLanguage::Both] {
            for t in TEMPLATES.iter().filter(|t| (t.when)(lang)) {
                let text = render(t.text, &vars, lang).unwrap_or_else(|e| panic!("{}: {e}", t.path));
                assert!(!text.contains("{{") && !text.contains("}}"), "{} ({lang}) keeps a placeholder:\n{text}", t.path);
            }
        }
    }

    /// tests/gpu.rs runs on ptx-runtime's harness: the manifest turns the feature on for the tests,
    /// from the registry or from a checkout alike.
    #[test]
    fn the_gpu_tests_get_ptx_runtimes_harness_feature() {
        let manifest = TEMPLATES.iter().find(|t| t.path == "Cargo.toml").expect("the host manifest");
        let checkout = tempfile::tempdir().unwrap();
        for krate in ["ptx-build", "ptx-runtime", "ptx-device"] {
            fs::create_dir_all(checkout.path().join(krate)).unwrap();
            fs::write(checkout.path().join(krate).join("Cargo.toml"), "").unwrap();
        }
        for deps in [Dependencies::Registry, Dependencies::Path(checkout.path().to_path_buf())] {
            let vars = variables("demo-app", &["sm_80".into()], &deps).unwrap();
            let text = render(manifest.text, &vars, KernelLanguage::Both).unwrap();
            let toml: toml::Table = text.parse().unwrap_or_else(|e| panic!("{e}:\n{text}"));
            let runtime = |section: &str| toml[section]["ptx-runtime"].clone();
            let dev = runtime("dev-dependencies");
            assert_eq!(dev["features"].as_array().unwrap(), &[toml::Value::from("harness")], "{text}");
            match deps {
                Dependencies::Registry => {
                    assert_eq!(runtime("dependencies").as_str(), Some(env!("CARGO_PKG_VERSION")));
                    assert_eq!(dev["version"].as_str(), Some(env!("CARGO_PKG_VERSION")));
                }
                Dependencies::Path(_) | Dependencies::Auto => assert_eq!(dev["path"], runtime("dependencies")["path"]),
            }
            assert!(toml["test"][0]["harness"].as_bool() == Some(false), "{text}");
        }
    }

    #[test]
    fn dependencies_come_from_the_checkout_then_the_registry_else_one_line_naming_path_deps() {
        let version = env!("CARGO_PKG_VERSION");
        let never = || -> Published { panic!("the registry is not asked while the checkout exists") };
        let (deps, note) = resolve_dependencies(&|| Some(PathBuf::from("/src/cargo-ptx")), &never).unwrap();
        assert_eq!(deps, Dependencies::Path(PathBuf::from("/src/cargo-ptx")));
        let note = note.unwrap();
        assert!(note.contains("by path from /src/cargo-ptx") && note.contains("--path-deps DIR"), "{note}");

        let (deps, note) = resolve_dependencies(&|| None, &|| Published::Yes).unwrap();
        assert_eq!((deps, note), (Dependencies::Registry, None));

        let e = resolve_dependencies(&|| None, &|| Published::No).unwrap_err().to_string();
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(e.contains(&format!("{version} are not on crates.io")) && e.contains("pass `--path-deps DIR`"), "{e}");

        let (deps, note) = resolve_dependencies(&|| None, &|| Published::Unknown("network down".into())).unwrap();
        assert_eq!(deps, Dependencies::Registry);
        assert!(note.unwrap().contains("could not be asked whether it has them (network down)"));
    }

    #[test]
    fn the_checkout_this_binary_was_built_from_is_found() {
        // The binary under test is built from this checkout.
        let here = fs::canonicalize(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).unwrap();
        if std::env::var_os("CARGO_PTX_CHECKOUT").is_none() {
            assert_eq!(checkout_built_from(), Some(here), "the checkout this crate is built in");
        }
    }

    #[test]
    fn bad_archs_are_refused_before_anything_is_written() {
        let e = archs(&["sm_80,sm_81".into()]).unwrap_err().to_string();
        assert!(e.contains("sm_81"), "{e}");
        assert_eq!(archs(&[]).unwrap(), ["sm_80", "sm_90"]);
        assert_eq!(archs(&["sm_90".into(), "sm_80,sm_90".into()]).unwrap(), ["sm_90", "sm_80"]);
    }
}
