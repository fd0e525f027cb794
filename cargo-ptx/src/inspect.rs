//! `cargo ptx inspect --kernel NAME`: one kernel's PTX or SASS with the source lines it came
//! from, and its resource usage. No GPU is needed: the build writes the PTX and the cubin, and
//! `nvdisasm` reads the cubin's line table (`.loc` in PTX, `.debug_line` in the cubin; both come
//! from the line info every build emits: Rust debug line tables, nvcc `-lineinfo`).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use ptx_build::arch::{Arch, Variant};
use ptx_build::internals::tools::process;
use ptx_build::{Artifact, ArtifactKind, BuildOptions, BuildOutput, KernelInfo, Reporter};

use crate::error::{Error, Result};
use crate::tools::CudaTool;

/// Which listing to print.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Listing {
    Ptx,
    Sass,
}

/// What to inspect.
#[derive(Clone, Debug)]
pub struct InspectOptions {
    pub build: BuildOptions,
    pub kernel: String,
    pub listing: Listing,
    /// Archs named with `--arch`: each is printed; none means the highest arch the build made.
    pub archs_requested: bool,
}

/// Builds (or finds fresh) the kernels and returns the listing of `opts.kernel`.
pub fn inspect(opts: &InspectOptions, reporter: &dyn Reporter) -> Result<String> {
    let out = opts.build.run(reporter)?;
    render(&out, opts)
}

/// The listing for a finished build.
pub fn render(out: &BuildOutput, opts: &InspectOptions) -> Result<String> {
    let name = opts.kernel.as_str();
    let wanted = match opts.listing {
        Listing::Ptx => ArtifactKind::Ptx,
        Listing::Sass => ArtifactKind::Cubin,
    };
    let all: Vec<&Artifact> = out.crates.iter().flat_map(|c| c.artifacts.iter()).collect();
    let with_kernel: Vec<&Artifact> = all.iter().copied().filter(|a| a.kernels.iter().any(|k| k.name == name)).collect();
    if with_kernel.is_empty() {
        let project = (opts.build.paths.is_empty() && opts.build.cuda_files.is_empty()).then_some(opts.build.manifest_path.as_deref());
        return Err(unknown_kernel(name, out, project));
    }
    let mut chosen: Vec<&Artifact> = with_kernel.iter().copied().filter(|a| a.kind == wanted).collect();
    if chosen.is_empty() {
        let mut archs: Vec<ptx_build::Arch> = with_kernel.iter().map(|a| a.arch).collect();
        archs.sort();
        archs.dedup();
        let archs: Vec<String> = archs.iter().map(|a| a.to_string()).collect();
        return Err(Error::Inspect {
            message: format!("no cubin of kernel `{name}` to disassemble: the build made PTX only (archs: {})", archs.join(", ")),
            help: "name a real GPU arch (`--arch sm_90`; `compute_XX` is PTX only) and make sure ptxas is found (`cargo ptx doctor`)"
                .into(),
        });
    }
    // Highest arch first; without --arch only that one is shown.
    chosen.sort_by_key(|a| std::cmp::Reverse(arch_key(&a.arch)));
    if !opts.archs_requested {
        chosen.truncate(1);
    }
    let mut text = String::new();
    let mut sources = Sources::default();
    for a in chosen {
        let resources = with_kernel.iter().find(|c| c.kind == ArtifactKind::Cubin && c.arch == a.arch && c.module == a.module);
        let info = resources.and_then(|c| c.kernels.iter().find(|k| k.name == name));
        let _ = writeln!(
            text,
            "// kernel `{name}`, {} {} of module `{}` ({})",
            a.arch,
            if wanted == ArtifactKind::Ptx { "PTX" } else { "SASS" },
            a.module,
            a.path.display()
        );
        let _ = writeln!(text, "// resources: {}", describe_resources(info));
        sources.roots =
            a.source.as_deref().and_then(Path::parent).map(|d| d.ancestors().map(Path::to_path_buf).collect()).unwrap_or_default();
        // The kernel crate's own files: the package folder of the module's source.
        sources.package = a.source.as_deref().and_then(|s| s.ancestors().find(|d| d.join("Cargo.toml").is_file())).map(Path::to_path_buf);
        // Where it can panic, from the PTX of the same module (a cubin's SASS has the calls too,
        // but the PTX names them and their lines without a tool).
        let ptx_of =
            with_kernel.iter().find(|c| c.kind == ArtifactKind::Ptx && c.arch.capability == a.arch.capability && c.module == a.module);
        if let Some(ptx) = ptx_of.and_then(|p| std::fs::read_to_string(&p.path).ok()) {
            let sites = panic_sites(&ptx, name, &|path: &str| sources.is_user(path));
            if !sites.is_empty() {
                let _ = writeln!(
                    text,
                    "// can panic at {} place{}; a panic on the GPU traps, and the launch fails with no message:",
                    sites.len(),
                    if sites.len() == 1 { "" } else { "s" }
                );
                for (place, kind) in &sites {
                    let at = match place {
                        Some((path, line)) => sources.annotation(path, *line).trim_start_matches("// ").to_string(),
                        None => "a place the compiler merged from several (no source line)".into(),
                    };
                    let _ = writeln!(text, "//   {kind}: {at}");
                }
                let _ = writeln!(
                    text,
                    "//   (a check the compiler can see, or `get_unchecked` where an index is known good, takes a bounds check out)"
                );
            }
        }
        let body = match opts.listing {
            Listing::Ptx => {
                let ptx = std::fs::read_to_string(&a.path).map_err(|e| Error::io("read", &a.path, e))?;
                ptx_listing(&ptx, name, &mut sources).ok_or_else(|| Error::Inspect {
                    message: format!("`.entry {name}` not found in {}", a.path.display()),
                    help: "rebuild (`cargo ptx build`): the file does not match the build's kernel list".into(),
                })?
            }
            Listing::Sass => {
                let nvdisasm = CudaTool::Nvdisasm.find()?;
                let mut cmd = process::command(&nvdisasm);
                cmd.args(["--print-line-info", "--print-code"]).arg(&a.path);
                let out = process::checked("nvdisasm", || format!(" for `{name}` ({})", a.arch), &mut cmd)?;
                let sass = process::stdout_text(&out);
                sass_listing(&sass, name, &mut sources).ok_or_else(|| Error::Inspect {
                    message: format!("nvdisasm printed no code section for `{name}` from {}", a.path.display()),
                    help: format!("run `{} --print-code {}` to see what it holds", nvdisasm.display(), a.path.display()),
                })?
            }
        };
        text.push_str(&body);
        text.push('\n');
    }
    Ok(text)
}

/// A source place: the `.file` path as written and a line; `None` where the compiler gave the
/// code no line (`.loc N 0`: blocks merged from several places).
type Place = Option<(String, u32)>;

/// Where kernel `name` of `ptx` can panic: Rust's bounds checks, `unwrap`s, overflow checks and
/// `panic!`s are calls into core's panic functions, which ptx-device's handler ends in `trap`.
/// Each call's place and the panic's kind, following calls into the module's own functions
/// (not into core's); each place and kind once. A place is the innermost frame of the call's
/// inline chain (ptx-build's line table) in a file `is_user` accepts (the kernel crate's): an
/// `unwrap` inlined from core into a generic kernel inlined into ptx-device's `#[kernel]`
/// wrapper is named at the kernel's line.
fn panic_sites(ptx: &str, name: &str, is_user: &dyn Fn(&str) -> bool) -> Vec<(Place, &'static str)> {
    let module = ptx_build::internals::ptx::Module::parse(ptx);
    let place_of = |line: usize| -> Place {
        let (own, inlined) = module.source_of(line)?;
        let chain: Vec<(String, u32)> =
            std::iter::once(own).chain(inlined).filter(|p| p.line != 0).map(|p| (p.file.to_string_lossy().into_owned(), p.line)).collect();
        chain.iter().find(|(p, _)| is_user(p)).or(chain.last()).cloned()
    };
    // Each function's calls: (callee, the place of the call).
    let mut calls: HashMap<String, Vec<(String, Place)>> = HashMap::new();
    let mut current: Option<String> = None;
    let mut depth = 0i32;
    for (i, l) in ptx.lines().enumerate() {
        let code = l.split("//").next().unwrap_or_default().trim();
        if depth == 0 && !code.starts_with(".extern") && !code.ends_with(';') {
            if let Some(f) = crate::sanitize::sources::function_name(code) {
                current = Some(f);
            }
        }
        if let (Some(f), Some(callee)) = (&current, callee(code)) {
            calls.entry(f.clone()).or_default().push((callee.to_string(), place_of(i + 1)));
        }
        depth += code.matches('{').count() as i32 - code.matches('}').count() as i32;
    }
    let mut sites: Vec<(Place, &'static str)> = Vec::new();
    let mut seen = vec![name.to_string()];
    let mut stack = vec![name.to_string()];
    while let Some(f) = stack.pop() {
        for (callee, at) in calls.get(&f).into_iter().flatten() {
            match panic_kind(callee) {
                Some(kind) if !sites.iter().any(|s| s.0 == *at && s.1 == kind) => sites.push((at.clone(), kind)),
                Some(_) => {}
                // The module's own functions; core's and alloc's are not the user's code.
                None if calls.contains_key(callee) && !seen.contains(callee) && !is_library(callee) => {
                    seen.push(callee.clone());
                    stack.push(callee.clone());
                }
                None => {}
            }
        }
    }
    // In the order of the source, as a reader goes through it.
    sites.sort();
    sites
}

/// A symbol of Rust's own libraries (`core::`, `alloc::`, `std::`) that holds none of the
/// user's code: a generic one (`drop_in_place::<UserType>`, an iterator adapter's closure) may
/// hold the kernel's own panics, and is followed.
fn is_library(symbol: &str) -> bool {
    rustc_demangle::try_demangle(symbol).is_ok_and(|d| {
        let path = format!("{d:#}");
        ["core::", "alloc::", "std::"].iter().any(|l| path.starts_with(l)) && !path.contains('<') && !path.contains("{closure")
    })
}

/// The callee of a `call` instruction: `call.uni f, (..);`, `call.uni (retval0), f, (..);`.
fn callee(code: &str) -> Option<&str> {
    let rest = code.strip_prefix("call")?;
    let rest = rest.trim_start_matches(|c: char| c == '.' || c.is_ascii_alphanumeric()).trim_start();
    let rest = if rest.starts_with('(') { rest[rest.find(')')? + 1..].trim_start().trim_start_matches(',').trim_start() } else { rest };
    let name = rest.split(|c: char| c == ',' || c == ';' || c == '(' || c.is_whitespace()).next()?;
    (!name.is_empty()).then_some(name)
}

/// What a panic function of core reports, by its demangled path.
fn panic_kind(symbol: &str) -> Option<&'static str> {
    let path = format!("{:#}", rustc_demangle::try_demangle(symbol).ok()?);
    let last = path.rsplit("::").next().unwrap_or_default();
    if !path.starts_with("core::") {
        return None;
    }
    Some(match last {
        "panic_bounds_check" => "index out of bounds",
        "unwrap_failed" => "`unwrap()` on `None` or `Err`",
        "expect_failed" => "`expect()` on `None` or `Err`",
        l if l.contains("by_zero") => "division by zero",
        l if l.ends_with("_overflow") => "arithmetic overflow",
        l if l.starts_with("slice_") && l.ends_with("_fail") => "slice range out of bounds",
        _ if path.starts_with("core::panicking::") => "a panic",
        // `len_mismatch_fail`, `panic_already_borrowed`, ...: core's other ways to panic.
        l if l.contains("panic") || l.ends_with("_fail") || l.ends_with("_failed") => "a panic",
        _ => return None,
    })
}

/// `sm_90a` > `sm_90` > `compute_90` > `sm_89`.
/// Newer first; of one capability, the variants before the plain arch and a cubin arch before
/// PTX alone.
fn arch_key(arch: &Arch) -> (u32, bool, bool) {
    (arch.capability, arch.variant != Variant::Plain, arch.makes_cubin())
}

fn describe_resources(info: Option<&KernelInfo>) -> String {
    match info {
        Some(KernelInfo {
            registers: Some(r),
            spill_stores: Some(ss),
            spill_loads: Some(sl),
            shared_bytes: Some(sh),
            stack_bytes: Some(st),
            ..
        }) => format!("{r} registers, {ss} B spill stores, {sl} B spill loads, {sh} B static shared memory, {st} B stack (ptxas)"),
        _ => "unknown: no cubin for this arch (ptxas not found, or a compute_XX arch)".into(),
    }
}

/// `project`: the workspace searched (its manifest, or the current folder's), when no PATH was
/// given.
fn unknown_kernel(name: &str, out: &BuildOutput, project: Option<Option<&Path>>) -> Error {
    let mut names: Vec<&str> =
        out.crates.iter().flat_map(|c| c.artifacts.iter()).flat_map(|a| a.kernels.iter().map(|k| k.name.as_str())).collect();
    names.sort();
    names.dedup();
    let packages: Vec<&str> = out.crates.iter().map(|c| c.name.as_str()).collect();
    let place = match packages.as_slice() {
        [] => "the build (it found no kernel crate)".to_string(),
        [one] => format!("`{one}`"),
        many => format!("{} packages ({})", many.len(), many.join(", ")),
    };
    let suggestion = closest(name, &names).map(str::to_string);
    let help = match (project.and_then(|m| builder_file_defining(name, m)), names.is_empty()) {
        // A kernel of a .cu file that a host's build.rs builds: not a kernel crate's.
        (Some(file), _) => format!(
            "`{name}` is in {}, which a build.rs builds: `cargo ptx inspect {0} --kernel {name} --arch sm_80` shows it",
            file.display()
        ),
        (None, true) => "point inspect at a kernel crate (`cargo ptx inspect PATH --kernel NAME`)".to_string(),
        (None, false) => format!("the kernels are: {}", names.join(", ")),
    };
    Error::UnknownKernel { name: name.to_string(), place, suggestion, help }
}

/// The `cuda/` file of a build.rs host in the workspace of `manifest` whose text has a kernel
/// `name`: a file with `__global__` in which the name is followed by `(` (relative to the
/// current folder).
fn builder_file_defining(name: &str, manifest: Option<&Path>) -> Option<PathBuf> {
    let cwd = std::env::current_dir().ok()?;
    let groups = ptx_build::internals::project::builder_cuda_files(manifest);
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let names = |text: &str| {
        text.contains("__global__")
            && text
                .match_indices(name)
                .any(|(at, _)| !text[..at].ends_with(is_word) && text[at + name.len()..].trim_start().starts_with('('))
    };
    let file = groups.into_iter().flat_map(|g| g.files).find(|f| std::fs::read_to_string(f).is_ok_and(|t| names(&t)))?;
    Some(file.strip_prefix(&cwd).map(Path::to_path_buf).unwrap_or(file))
}

/// The name within a third of its length in edits (at least 1), or one that contains it.
fn closest<'a>(name: &str, names: &[&'a str]) -> Option<&'a str> {
    let best = names.iter().map(|n| (edit_distance(name, n), *n)).min()?;
    let limit = (name.chars().count() / 3).max(1);
    if best.0 <= limit {
        return Some(best.1);
    }
    names.iter().copied().find(|n| n.contains(name) || name.contains(n))
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for j in 0..b.len() {
            let cur = row[j + 1];
            row[j + 1] = (prev + (ca != b[j]) as usize).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// Source files read once each, for the interleaved lines.
#[derive(Default)]
struct Sources {
    files: HashMap<PathBuf, Option<Vec<String>>>,
    /// Folders a relative `.file` path may start from: the module's source file's folder and
    /// its parents (the build names Rust sources relative to the workspace and .cu files
    /// relative to the package, for reproducible artifacts).
    roots: Vec<PathBuf>,
    /// The kernel crate's folder: files below it are the user's own, the lines a listing and
    /// the panic places name where code was inlined into them from a library.
    package: Option<PathBuf>,
}

impl Sources {
    /// A `.file` path as a file here: relative ones from the roots (`../../ptx-device/src/lib.rs`,
    /// a path dependency outside the workspace, without the `..`).
    fn resolve(&self, path: &str) -> Option<PathBuf> {
        if Path::new(path).is_relative() {
            self.roots.iter().map(|r| lexical(&r.join(path))).find(|p| p.is_file())
        } else {
            Some(PathBuf::from(path)).filter(|p| p.is_file())
        }
    }

    /// Whether `path` (as a `.file` spells it) is a file of the kernel crate.
    fn is_user(&self, path: &str) -> bool {
        self.resolve(path).zip(self.package.as_deref()).is_some_and(|(p, dir)| p.starts_with(dir))
    }

    /// `path` as read here (a relative `.file` resolved from the roots), and as shown.
    fn located(&self, path: &str) -> (String, String) {
        let resolved = self.resolve(path).filter(|_| Path::new(path).is_relative()).map(|p| p.to_string_lossy().into_owned());
        let path = resolved.unwrap_or_else(|| path.to_string());
        let shown = display_path(&path);
        (path, shown)
    }

    /// `// src/lib.rs:16  let i = ...` for a line the listing came from (the text when the file
    /// is readable here).
    fn annotation(&mut self, path: &str, line: u32) -> String {
        let (path, shown) = self.located(path);
        let lines = self
            .files
            .entry(PathBuf::from(&path))
            .or_insert_with(|| std::fs::read_to_string(&path).ok().map(|t| t.lines().map(|l| l.trim().to_string()).collect()));
        match lines.as_ref().and_then(|l| l.get(line.checked_sub(1)? as usize)) {
            Some(text) if !text.is_empty() => format!("// {shown}:{line}  {text}"),
            _ => format!("// {shown}:{line}"),
        }
    }
}

/// `path` with `.` and `..` taken out without asking the file system.
pub(crate) fn lexical(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir if matches!(out.components().next_back(), Some(Component::Normal(_))) => {
                out.pop();
            }
            Component::ParentDir if out.has_root() => {}
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Relative to the current folder when below it; the Rust standard library's sources shortened
/// to `core/...`.
fn display_path(path: &str) -> String {
    let p = Path::new(path);
    if let Some(rel) = std::env::current_dir().ok().and_then(|cwd| p.strip_prefix(cwd).ok().map(Path::to_path_buf)) {
        return rel.display().to_string();
    }
    if let Some(i) = path.find("/lib/rustlib/src/rust/library/") {
        let rest = &path[i + "/lib/rustlib/src/rust/library/".len()..];
        // `core/src/../../stdarch/crates/core_arch/...` reads better without the `..`.
        return match rest.find("/../../") {
            Some(j) => rest[j + "/../../".len()..].to_string(),
            None => rest.to_string(),
        };
    }
    path.to_string()
}

/// The `.entry name` function of `ptx`, its `.loc` lines replaced by the source lines they name.
/// Code inlined from a library into the kernel crate (ptx-device's `thread::index_1d`, core's
/// `add`) is shown at the kernel crate's line it was inlined into, the library's line after it:
/// the user's own line is what they can change.
fn ptx_listing(ptx: &str, name: &str, sources: &mut Sources) -> Option<String> {
    let module = ptx_build::internals::ptx::Module::parse(ptx);
    let lines: Vec<&str> = ptx.lines().collect();
    let start = lines.iter().position(|l| entry_name(l) == Some(name))?;
    let mut out = String::new();
    let mut depth = 0i32;
    let mut opened = false;
    let mut last = None;
    for (i, l) in lines.iter().enumerate().skip(start) {
        let code = l.split("//").next().unwrap_or_default();
        let trimmed = l.trim_start();
        if trimmed.starts_with(".loc") {
            let Some((own, inlined)) = module.source_of(i + 1) else { continue };
            let path = |p: &ptx_build::internals::ptx::SourcePos| p.file.to_string_lossy().into_owned();
            let (own_path, own_line) = (path(&own), own.line);
            // Line 0 is the compiler's "no line".
            if own_line == 0 {
                continue;
            }
            let user = if sources.is_user(&own_path) {
                None
            } else {
                inlined.iter().find(|p| p.line != 0 && sources.is_user(&path(p))).map(|p| (path(p), p.line))
            };
            let (shown_path, shown_line) = user.clone().unwrap_or_else(|| (own_path.clone(), own_line));
            // Repeats of the last line shown add nothing.
            if last.as_ref() == Some(&(shown_path.clone(), shown_line)) {
                continue;
            }
            let mut note = sources.annotation(&shown_path, shown_line);
            if user.is_some() {
                let _ = write!(note, "   [inlined: {}:{own_line}]", sources.located(&own_path).1);
            }
            let _ = writeln!(out, "\t{note}");
            last = Some((shown_path, shown_line));
            continue;
        }
        out.push_str(l);
        out.push('\n');
        for c in code.chars() {
            match c {
                '{' => {
                    depth += 1;
                    opened = true;
                }
                '}' => depth -= 1,
                _ => {}
            }
        }
        if opened && depth <= 0 {
            return Some(out);
        }
    }
    opened.then_some(out)
}

/// A path as PTX and nvdisasm quote it: bytes outside ASCII (and `"`, `\\`) as C escapes, `\303\261` for `ñ`.
pub(crate) fn unescape(quoted: &str) -> String {
    let b = quoted.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 1 < b.len() {
            let octal: Vec<u8> = b[i + 1..].iter().take(3).take_while(|c| (b'0'..=b'7').contains(c)).copied().collect();
            if !octal.is_empty() {
                out.push(octal.iter().fold(0u32, |v, d| v * 8 + (d - b'0') as u32) as u8);
                i += 1 + octal.len();
                continue;
            }
            out.push(b[i + 1]);
            i += 2;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `name` of `.visible .entry name(` / `.entry name (`, whatever the indentation.
fn entry_name(line: &str) -> Option<&str> {
    let code = line.split("//").next()?.trim();
    let rest = code.split(".entry").nth(1)?;
    if !code.starts_with(".entry") && !code.starts_with(".visible") && !code.starts_with(".weak") {
        return None;
    }
    let name = rest.trim_start().split(|c: char| c == '(' || c.is_whitespace()).next()?;
    (!name.is_empty()).then_some(name)
}

/// The code section of `name` from `nvdisasm --print-line-info --print-code`, its
/// `//## File "...", line N` comments turned into source lines and mangled names of callees
/// demangled.
fn sass_listing(sass: &str, name: &str, sources: &mut Sources) -> Option<String> {
    let header = format!(".text.{name} ");
    let mut out = String::new();
    let mut inside = false;
    for l in sass.lines() {
        if l.starts_with("//---------------------") {
            if inside {
                break;
            }
            inside = l.contains(&header) || l.trim_end().ends_with(&format!(".text.{name}"));
            continue;
        }
        if !inside {
            continue;
        }
        let t = l.trim_start();
        if let Some(rest) = t.strip_prefix("//## File \"") {
            let (path, tail) = rest.split_once("\", line ")?;
            let line: u32 = tail.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()?;
            let _ = writeln!(out, "\t{}", sources.annotation(&unescape(path), line));
            continue;
        }
        out.push_str(&demangle_words(l));
        out.push('\n');
    }
    (!out.is_empty()).then_some(out)
}

/// Rust (`_ZN...E`, `_R...`) and C++ (`_Z...`) symbols in a line, demangled: SASS names the
/// device functions it calls by their mangled names.
pub(crate) fn demangle_words(line: &str) -> String {
    if !line.contains("_Z") && !line.contains("_R") {
        return line.to_string();
    }
    let mut out = String::with_capacity(line.len());
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        if word.starts_with("_Z") || word.starts_with("_R") {
            if let Ok(d) = rustc_demangle::try_demangle(word) {
                let _ = write!(out, "{d:#}");
            } else if let Some(d) = cpp_demangle::Symbol::new(word.as_bytes()).ok().and_then(|s| s.demangle().ok()) {
                out.push_str(&d);
            } else {
                out.push_str(word);
            }
        } else {
            out.push_str(word);
        }
        word.clear();
    };
    for c in line.chars() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '$' || c == '.' {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const PTX: &str = r#"
.version 7.8
.target sm_90
	// .globl	first
.visible .entry first(
	.param .u32 first_param_0
)
{
	.loc	1 3 0
	ret;
}
	// .globl	second
.visible .entry second(
	.param .u64 second_param_0
)
{
	.reg .b32 	%r<3>;
	.loc	1 7 5                           // src/lib.rs:7:5
	mov.u32 	%r1, %tid.x;
	.loc	1 7 5
	.loc	1 0 5
	{ // inline asm
	add.u32 %r2, %r1, 1;
	}
	.loc	1 9 1
	ret;
}
	.file	1 "/nonexistent/src/lib.rs"
"#;

    const PANICS: &str = r#"
.extern .func _RNvNtCs7vYgPcSQIf6_4core9panicking9panic_fmt();
.func  (.param .b32 func_retval0) _RNvCs1d9bxl4us7O_13saxpy_kernels6helper(
	.param .b64 p0
)
{
	.loc	4 80 5                          // src/lib.rs:80:5
	{ // callseq 2, 0
	call.uni _RNvNtNtCs7vYgPcSQIf6_4core9panicking11panic_const23panic_const_div_by_zero, ();
	} // callseq 2
}
.visible .entry unw(
	.param .u64 .ptr .align 1 unw_param_0
)
{
	.loc	4 91 5                          // src/lib.rs:91:5
	call.uni (retval0), _RNvCs1d9bxl4us7O_13saxpy_kernels6helper, (param0, param1);
	call.uni (retval0), _RNvCs1d9bxl4us7O_13saxpy_kernels6helper, (param0, param1);
	.loc	10 1013 21                      // src/option.rs:1013:21 @[ src/index.rs:4:2 @[ src/lib.rs:92:41 ] ]
	{ // callseq 7, 0
	call.uni _RNvNtCs7vYgPcSQIf6_4core6option13unwrap_failed, ();
	} // callseq 7
	.loc	4 0 0
	call.uni _RNvNtCs7vYgPcSQIf6_4core9panicking18panic_bounds_check, ();
	.loc	4 93 1                          // src/lib.rs:93:1
	call.uni _RNvNtCs7vYgPcSQIf6_4core9panicking18panic_bounds_check, ();
	call.uni _RNvNtCs7vYgPcSQIf6_4core9panicking18panic_bounds_check, ();
	call.uni _RNvCs1d9bxl4us7O_13saxpy_kernels12not_a_panic, ();
}
.visible .entry clean(
	.param .u64 .ptr .align 1 clean_param_0
)
{
	.loc	4 99 5                          // src/lib.rs:99:5
	ret;
}
	.file	1 "../../ptx-device/src/index.rs"
	.file	4 "src/lib.rs"
	.file	10 "/rust-sysroot/lib/rustlib/src/rust/library/core/src/option.rs"
"#;

    #[test]
    fn panic_sites_are_the_kernels_own_lines_with_their_kind() {
        let user = |p: &str| p == "src/lib.rs";
        let at = |path: &str, line: u32| Some((path.to_string(), line));
        assert_eq!(
            panic_sites(PANICS, "unw", &user),
            [
                // A `.loc N 0`: counted, with no line.
                (None, "index out of bounds"),
                // Inside a helper the kernel calls, at the helper's line, once for two calls.
                (at("src/lib.rs", 80), "division by zero"),
                // The unwrap inlined from core (through ptx-device): the kernel's line.
                (at("src/lib.rs", 92), "`unwrap()` on `None` or `Err`"),
                // A place and kind is listed once.
                (at("src/lib.rs", 93), "index out of bounds"),
            ]
        );
        assert!(panic_sites(PANICS, "clean", &user).is_empty());
        assert!(panic_sites(PANICS, "missing", &user).is_empty());
        assert_eq!(panic_kind("_RNvNtCs7vYgPcSQIf6_4core9panicking9panic_fmt"), Some("a panic"));
        assert_eq!(panic_kind("_RNvNtNtCs7vYgPcSQIf6_4core9panicking11panic_const24panic_const_add_overflow"), Some("arithmetic overflow"));
        assert_eq!(panic_kind("_RNvCs1d9bxl4us7O_13saxpy_kernels6helper"), None);
    }

    #[test]
    fn a_generic_kernels_panics_are_at_its_body_not_the_kernel_wrapper() {
        // `#[kernel(instances(..))]`: the exported kernel is ptx-device's `__kernel!` wrapper
        // (its lib.rs:126), which inlines the generic body (the user's lib.rs:44). Both files
        // are `src/lib.rs` to LLVM's comment; the `.loc`s say which is which.
        let ptx = ".visible .entry add_f32(\n)\n{\n\t.loc\t2 126 0\n\t.loc\t4 44 8 // src/lib.rs:44:8 @[ src/lib.rs:126:48 ]\n\tcall.uni _RNvNtCs7vYgPcSQIf6_4core9panicking18panic_bounds_check, ();\n\t.loc\t10 1013 21 // src/option.rs:1013:21 @[ src/lib.rs:45:3 @[ src/lib.rs:126:48 ] ]\n\tcall.uni _RNvNtCs7vYgPcSQIf6_4core6option13unwrap_failed, ();\n}\n\t.file\t2 \"../../ptx-device/src/lib.rs\"\n\t.file\t4 \"src/lib.rs\"\n\t.file\t10 \"/rust-sysroot/lib/rustlib/src/rust/library/core/src/option.rs\"\n";
        let sites = panic_sites(ptx, "add_f32", &|p: &str| p == "src/lib.rs");
        let lines: Vec<(Option<u32>, &str)> = sites.iter().map(|(p, k)| (p.as_ref().map(|p| p.1), *k)).collect();
        assert_eq!(lines, [(Some(44), "index out of bounds"), (Some(45), "`unwrap()` on `None` or `Err`")]);
        // Where both `src/lib.rs` have a `.loc` at the frame's line, the kernel crate's is named.
        let both = ptx.replacen("\t.loc\t2 126 0\n", "\t.loc\t2 126 0\n\t.loc\t2 45 1\n\t.loc\t4 45 3\n", 1);
        let sites = panic_sites(&both, "add_f32", &|p: &str| p == "src/lib.rs");
        assert_eq!(sites[1].0, Some(("src/lib.rs".to_string(), 45)), "{sites:?}");
    }

    #[test]
    fn ptx_listing_is_one_entry_with_its_source_lines() {
        let text = ptx_listing(PTX, "second", &mut Sources::default()).unwrap();
        assert!(text.starts_with(".visible .entry second("), "{text}");
        assert!(!text.contains("first"), "{text}");
        assert!(text.contains("// /nonexistent/src/lib.rs:7\n\tmov.u32"), "{text}");
        assert_eq!(text.matches("lib.rs:7").count(), 1, "a repeated line is shown once: {text}");
        assert!(!text.contains("lib.rs:0") && !text.contains(".loc"), "{text}");
        assert!(text.contains("add.u32") && text.trim_end().ends_with('}') && text.contains("lib.rs:9"), "{text}");
        assert!(ptx_listing(PTX, "third", &mut Sources::default()).is_none());
    }

    #[test]
    fn source_text_is_interleaved_when_the_file_is_here() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("k.cu");
        std::fs::write(&file, "int a;\n  y[i] = a * x[i];\n").unwrap();
        let ptx = format!(".visible .entry k()\n{{\n\t.loc 1 2 3\n\tret;\n}}\n\t.file 1 \"{}\"\n", file.display());
        let text = ptx_listing(&ptx, "k", &mut Sources::default()).unwrap();
        assert!(text.contains("k.cu:2  y[i] = a * x[i];"), "{text}");
    }

    #[test]
    fn code_inlined_from_a_library_is_shown_at_the_kernels_own_line() {
        let dir = tempfile::tempdir().unwrap();
        let pkg = dir.path().join("kernels");
        std::fs::create_dir_all(pkg.join("src")).unwrap();
        std::fs::write(pkg.join("Cargo.toml"), "[package]\n").unwrap();
        std::fs::write(pkg.join("src/lib.rs"), "\n\nlet i = global_index();\nif i < n {\n").unwrap();
        let dep = dir.path().join("ptx-device/src/index.rs");
        std::fs::create_dir_all(dep.parent().unwrap()).unwrap();
        std::fs::write(&dep, "pub fn global_index() -> usize {\n  ctaid() * ntid() + tid()\n}\n").unwrap();
        // Two instructions of the library's line 2 inlined into the kernel's line 3, then the
        // kernel's line 4 itself.
        let ptx = ".visible .entry k()\n{\n\t.loc 2 2 5 // src/index.rs:2:5 @[ src/lib.rs:3:9 ]\n\tmov.u32 %r1, %ctaid.x;\n\t.loc 2 2 12 // src/index.rs:2:12 @[ src/lib.rs:3:9 ]\n\tmov.u32 %r2, %ntid.x;\n\t.loc 1 4 1\n\tsetp.ge.u32 %p1, %r1, %r2;\n}\n\t.file 1 \"src/lib.rs\"\n\t.file 2 \"../ptx-device/src/index.rs\"\n";
        let mut sources = Sources { roots: vec![pkg.clone()], package: Some(pkg.clone()), ..Sources::default() };
        let text = ptx_listing(ptx, "k", &mut sources).unwrap();
        let notes: Vec<&str> = text.lines().filter(|l| l.trim_start().starts_with("//")).map(|l| l.trim()).collect();
        assert_eq!(notes.len(), 2, "one note for the inlined line, however many instructions: {text}");
        assert!(notes[0].contains("src/lib.rs:3  let i = global_index();") && notes[0].ends_with("index.rs:2]"), "{text}");
        assert!(notes[0].contains("[inlined: "), "{text}");
        assert!(notes[1].contains("src/lib.rs:4  if i < n {") && !notes[1].contains("inlined"), "{text}");
        // Without the kernel crate's folder known, each line is the innermost frame's, as before.
        let plain = ptx_listing(ptx, "k", &mut Sources { roots: vec![pkg.clone()], ..Sources::default() }).unwrap();
        assert!(plain.contains("index.rs:2  ctaid() * ntid() + tid()") && !plain.contains("inlined"), "{plain}");
    }

    #[test]
    fn sass_section_of_one_kernel_with_lines_and_demangled_calls() {
        let sass = "\t.target sm_90\n//--------------------- .text.other   --------\n  /*0000*/ EXIT ;\n\
//--------------------- .text.k   --------------------------\n\t.section .text.k\nk:\n\
\t//## File \"/nonexistent/a.rs\", line 12\n        /*0000*/ CALL.REL.NOINC `(_ZN7kernels6helper17h0123456789abcdefE) ;\n\
        /*0010*/ CALL.REL.NOINC `(_Z6squaref) ;\n\
//--------------------- .nv.shared   ----\n";
        let text = sass_listing(sass, "k", &mut Sources::default()).unwrap();
        assert!(text.contains("// /nonexistent/a.rs:12"), "{text}");
        assert!(text.contains("`(kernels::helper)"), "{text}");
        assert!(text.contains("`(square(float))"), "{text}");
        assert!(!text.contains("other") && !text.contains("nv.shared"), "{text}");
        assert!(sass_listing(sass, "missing", &mut Sources::default()).is_none());
    }

    #[test]
    fn quoted_paths_are_unescaped() {
        assert_eq!(unescape(r"/tmp/kernels \303\261/a.cu"), "/tmp/kernels ñ/a.cu");
        assert_eq!(unescape(r#"a\"b\\c"#), r#"a"b\c"#);
    }

    #[test]
    fn suggestions_are_close_names() {
        assert_eq!(closest("saxpi", &["saxpy", "exp_kernel", "empty"]), Some("saxpy"));
        assert_eq!(closest("exp", &["saxpy", "exp_kernel", "empty"]), Some("exp_kernel"));
        assert_eq!(closest("reduce", &["saxpy", "exp_kernel"]), None);
    }

    #[test]
    fn highest_arch_first() {
        let mut v: Vec<Arch> = ["sm_80", "compute_90", "sm_90", "sm_90a", "sm_89"].iter().map(|a| a.parse().unwrap()).collect();
        v.sort_by_key(|a| std::cmp::Reverse(arch_key(a)));
        assert_eq!(v.iter().map(Arch::to_string).collect::<Vec<_>>(), ["sm_90a", "sm_90", "compute_90", "sm_89", "sm_80"]);
    }

    /// A path dependency outside the kernel workspace, as the PTX names it
    /// (`../ptx-device/src/lib.rs`): annotated with the real file's line, named without `..`.
    #[test]
    fn a_dot_dot_path_is_read_from_the_real_file() {
        let dir = tempfile::tempdir().unwrap();
        let dep = dir.path().join("ptx-device/src/lib.rs");
        std::fs::create_dir_all(dep.parent().unwrap()).unwrap();
        std::fs::create_dir_all(dir.path().join("kernels/src")).unwrap();
        std::fs::write(&dep, "//\npub fn thread_id() -> u32 { 0 }\n").unwrap();
        let mut sources = Sources { roots: vec![dir.path().join("kernels/src"), dir.path().join("kernels")], ..Default::default() };
        let line = sources.annotation("../ptx-device/src/lib.rs", 2);
        assert!(line.ends_with(":2  pub fn thread_id() -> u32 { 0 }"), "{line}");
        assert!(!line.contains(".."), "{line}");
    }
}
