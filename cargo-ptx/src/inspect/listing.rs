//! A kernel's PTX or SASS with each line-table entry replaced by the source line it names.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Source files read once each, for the interleaved lines.
#[derive(Default)]
pub(super) struct Sources {
    files: HashMap<PathBuf, Option<Vec<String>>>,
    /// Folders a relative `.file` path may start from: the module's source file's folder and
    /// its parents (the build names Rust sources relative to the workspace and .cu files
    /// relative to the package, for reproducible artifacts).
    pub(super) roots: Vec<PathBuf>,
    /// The kernel crate's folder: files below it are the user's own, the lines a listing and
    /// the panic places name where code was inlined into them from a library.
    pub(super) package: Option<PathBuf>,
}

impl Sources {
    /// A `.file` path as a file here: relative ones from the roots (`../../ptx-device/src/lib.rs`,
    /// a path dependency outside the workspace, without the `..`).
    pub(super) fn resolve(&self, path: &str) -> Option<PathBuf> {
        if Path::new(path).is_relative() {
            self.roots.iter().map(|r| lexical(&r.join(path))).find(|p| p.is_file())
        } else {
            Some(PathBuf::from(path)).filter(|p| p.is_file())
        }
    }

    /// Whether `path` (as a `.file` spells it) is a file of the kernel crate.
    pub(super) fn is_user(&self, path: &str) -> bool {
        self.resolve(path).zip(self.package.as_deref()).is_some_and(|(p, dir)| p.starts_with(dir))
    }

    /// `path` as read here (a relative `.file` resolved from the roots), and as shown.
    pub(super) fn located(&self, path: &str) -> (String, String) {
        let resolved = self.resolve(path).filter(|_| Path::new(path).is_relative()).map(|p| p.to_string_lossy().into_owned());
        let path = resolved.unwrap_or_else(|| path.to_string());
        let shown = display_path(&path);
        (path, shown)
    }

    /// `// src/lib.rs:16  let i = ...` for a line the listing came from (the text when the file
    /// is readable here).
    pub(super) fn annotation(&mut self, path: &str, line: u32) -> String {
        let (path, shown) = self.located(path);
        match self.line_text(&path, line) {
            Some(text) if !text.is_empty() => format!("// {shown}:{line}  {text}"),
            _ => format!("// {shown}:{line}"),
        }
    }

    /// The lines of the file at `path` as read here, trimmed; each file read once.
    fn lines(&mut self, path: &str) -> Option<&[String]> {
        let lines = self
            .files
            .entry(PathBuf::from(path))
            .or_insert_with(|| std::fs::read_to_string(path).ok().map(|t| t.lines().map(|l| l.trim().to_string()).collect()));
        lines.as_deref()
    }

    /// Line `line` (1-based) of the file at `path` as read here, trimmed.
    fn line_text(&mut self, path: &str, line: u32) -> Option<String> {
        self.lines(path)?.get(line.checked_sub(1)? as usize).cloned()
    }

    /// For a line of ptx-device's `#[kernel]` wrapper (`.. extern "ptx-kernel" fn $name ..` in
    /// a library, where rustc puts a Rust kernel's first line table entry: its signature's
    /// tokens are the macro's), the kernel's own `fn` in the kernel crate, `#[kernel]` above
    /// it: `fn saxpy` for `saxpy`, `fn axpy` for its instance `axpy_f32`. `None` for any other
    /// line, or where no such `fn` is found (a kernel stamped out by the crate's own macro).
    pub(super) fn kernel_definition(&mut self, path: &str, line: u32, kernel: &str) -> Option<(String, u32)> {
        if self.is_user(path) {
            return None;
        }
        let (read, _) = self.located(path);
        if !self.line_text(&read, line)?.contains("extern \"ptx-kernel\"") {
            return None;
        }
        let mut files = Vec::new();
        rust_files(&self.package.clone()?.join("src"), &mut files);
        files.sort();
        // The kernel's name, then without its last `_part` (a generic kernel's instance suffix).
        let mut name = kernel;
        loop {
            for file in &files {
                let file = file.to_string_lossy().into_owned();
                if let Some(at) = self.lines(&file).and_then(|lines| kernel_fn_line(lines, name)) {
                    return Some((file, at));
                }
            }
            name = name.rsplit_once('_')?.0;
        }
    }
}

/// The `.rs` files below `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The 1-based line of `fn name` (a whole word) in `lines` with a `#[kernel` attribute among
/// the attributes and doc comments right above it.
fn kernel_fn_line(lines: &[String], name: &str) -> Option<u32> {
    let is_fn = |l: &str| {
        l.split_whitespace()
            .collect::<Vec<_>>()
            .windows(2)
            .any(|w| w[0] == "fn" && w[1].strip_prefix(name).is_some_and(|rest| rest.is_empty() || rest.starts_with(['(', '<'])))
    };
    let found = lines.iter().enumerate().filter(|(_, l)| !l.starts_with("//") && is_fn(l)).find(|(i, _)| {
        lines[..*i]
            .iter()
            .rev()
            .take_while(|l| l.starts_with('#') || l.starts_with("///") || l.is_empty())
            .any(|l| l.starts_with("#[kernel"))
    });
    found.map(|(i, _)| i as u32 + 1)
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
pub(super) fn ptx_listing(ptx: &str, name: &str, sources: &mut Sources) -> Option<String> {
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
            let wrapper = user.is_none().then(|| sources.kernel_definition(&own_path, own_line, name)).flatten();
            let (shown_path, shown_line) = user.clone().or(wrapper).unwrap_or_else(|| (own_path.clone(), own_line));
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
pub(super) fn sass_listing(sass: &str, name: &str, sources: &mut Sources) -> Option<String> {
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
            let path = unescape(path);
            let (path, line) = sources.kernel_definition(&path, line, name).unwrap_or((path, line));
            let _ = writeln!(out, "\t{}", sources.annotation(&path, line));
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

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// A kernel crate `kernels` in `dir` with `lib_rs` as its `src/lib.rs`.
    fn kernel_package(dir: &Path, lib_rs: &str) -> PathBuf {
        let pkg = dir.join("kernels");
        write(&pkg.join("Cargo.toml"), "[package]\n");
        write(&pkg.join("src/lib.rs"), lib_rs);
        pkg
    }

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
        let pkg = kernel_package(dir.path(), "\n\nlet i = global_index();\nif i < n {\n");
        write(&dir.path().join("ptx-device/src/index.rs"), "pub fn global_index() -> usize {\n  ctaid() * ntid() + tid()\n}\n");
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
    fn the_kernel_wrappers_line_in_ptx_device_is_shown_as_the_kernels_own_fn() {
        let dir = tempfile::tempdir().unwrap();
        // A helper named like the kernel's prefix, and the kernels in a submodule.
        let pkg = kernel_package(dir.path(), "pub mod ops;\nfn axpy_helper() {}\nfn axpy() {}\n");
        let ops = "use ptx_device::kernel;\n\n/// y = a*x + y.\n///\n/// # Safety\n#[kernel]\npub unsafe fn saxpy(n: u32, y: *mut f32) {\n    *y = 1.0;\n}\n\n\
                   #[kernel(instances(f32, f64))]\n#[launch_bounds(256)]\npub unsafe fn axpy<T: Copy>(n: u32, y: *mut T) {}\n";
        write(&pkg.join("src/ops/mod.rs"), ops);
        let wrapper = dir.path().join("ptx-device/src/lib.rs");
        write(&wrapper, "macro_rules! __kernel {\n    ($name:ident) => {\n        $($vis)* unsafe extern \"ptx-kernel\" fn $name($($params)*) $body\n    };\n}\n");
        let ptx = |k: &str| {
            format!(".visible .entry {k}()\n{{\n$L__func_begin0:\n\t.loc 2 3 0\n\tld.param.b32 %r1, [p];\n\t.loc 1 8 5\n\tst.f32 [%rd1], %f1;\n}}\n\t.file 1 \"src/ops/mod.rs\"\n\t.file 2 \"../ptx-device/src/lib.rs\"\n")
        };
        let mut sources = Sources { roots: vec![pkg.clone()], package: Some(pkg.clone()), ..Sources::default() };
        let notes = |text: String| -> Vec<String> {
            text.lines().filter(|l| l.trim_start().starts_with("//")).map(|l| l.trim().to_string()).collect()
        };
        let saxpy = notes(ptx_listing(&ptx("saxpy"), "saxpy", &mut sources).unwrap());
        assert!(saxpy[0].ends_with("src/ops/mod.rs:7  pub unsafe fn saxpy(n: u32, y: *mut f32) {"), "{saxpy:?}");
        assert!(saxpy[1].ends_with("src/ops/mod.rs:8  *y = 1.0;"), "{saxpy:?}");
        // A generic kernel's instance: its generic `fn` under `#[kernel(..)]`, not lib.rs's plain `fn axpy`.
        let axpy = notes(ptx_listing(&ptx("axpy_f32"), "axpy_f32", &mut sources).unwrap());
        assert!(axpy[0].ends_with("src/ops/mod.rs:13  pub unsafe fn axpy<T: Copy>(n: u32, y: *mut T) {}"), "{axpy:?}");
        // No `#[kernel] fn` of that name (stamped out by the crate's own macro): the line stays.
        let other = notes(ptx_listing(&ptx("scale_f32"), "scale_f32", &mut sources).unwrap());
        assert!(other[0].contains("ptx-device/src/lib.rs:3  $($vis)* unsafe extern \"ptx-kernel\""), "{other:?}");
        // Another library line is never moved.
        assert_eq!(sources.kernel_definition(&wrapper.to_string_lossy(), 1, "saxpy"), None);
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
