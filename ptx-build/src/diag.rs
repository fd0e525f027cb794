//! Diagnostics: what the compilers said, tied to a source location when one is known.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// `dir` as a string with a trailing separator: the prefix that paths below it start with
/// (for remapping and for making paths in PTX and flags relative).
pub(crate) fn dir_prefix(dir: &Path) -> String {
    let mut s = dir.to_string_lossy().into_owned();
    if !s.ends_with(std::path::MAIN_SEPARATOR) {
        s.push(std::path::MAIN_SEPARATOR);
    }
    s
}

/// `file` relative to `root` where it lies below it (diagnostics name files as the user sees
/// them from the package folder), else unchanged.
pub(crate) fn relative(file: &Path, root: &Path) -> PathBuf {
    file.strip_prefix(root).map(Path::to_path_buf).unwrap_or_else(|_| file.to_path_buf())
}

/// `file` joined to `root`, with `..` taken out (`/ws/kernels` + `../ptx-device/src/lib.rs` ->
/// `/ws/ptx-device/src/lib.rs`): PTX and rustc name files outside the kernel workspace that way
/// (`rust::checkout_remaps`), and messages should name the real file.
pub(crate) fn joined(root: &Path, file: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in root.join(file).components() {
        match c {
            Component::ParentDir => match out.components().next_back() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                // Above the root is the root.
                Some(Component::RootDir | Component::Prefix(_)) => {}
                _ => out.push(".."),
            },
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// `file` as the generated module's doc comments name it: relative to the package whose build
/// script runs (`CARGO_MANIFEST_DIR`), with `..` where it lies outside (`kernels/src/lib.rs`,
/// `../kernels/src/lib.rs`), so the generated file holds no path of this checkout.
pub(crate) fn from_package(file: &Path) -> PathBuf {
    match std::env::var_os("CARGO_MANIFEST_DIR") {
        Some(dir) if file.is_absolute() => path_from(file, Path::new(&dir)),
        _ => file.to_path_buf(),
    }
}

/// `file` relative to `base` (both absolute), climbing with `..` as far as needed.
pub(crate) fn path_from(file: &Path, base: &Path) -> PathBuf {
    let (file, base) = (joined(file, Path::new("")), joined(base, Path::new("")));
    let common = file.components().zip(base.components()).take_while(|(a, b)| a == b).count();
    let mut out = PathBuf::new();
    for _ in base.components().skip(common) {
        out.push("..");
    }
    out.extend(file.components().skip(common));
    out
}

/// How serious a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// Stops the build.
    Error,
    /// Reported; the build goes on.
    Warning,
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Level::Error => "error",
            Level::Warning => "warning",
        })
    }
}

/// One message from a compiler, the linker or the engine, with the source line when known.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Diagnostic {
    /// Error or warning.
    pub level: Level,
    /// The one-line message.
    pub message: String,
    /// The source file, when known.
    pub file: Option<PathBuf>,
    /// The 1-based line in `file`.
    pub line: Option<u32>,
    /// The 1-based column in `line`.
    pub column: Option<u32>,
    /// Extra lines: the offending PTX instruction, where an inlined call came from, a fix.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The compiler's own rendering (rustc's), printed unchanged in human output.
    #[serde(skip)]
    pub rendered: Option<String>,
    /// The folder a relative `file` (and the paths in `rendered`) is relative to: the kernel
    /// crate's workspace for rustc, its package for nvcc. A build script has no other way to
    /// name the file from where cargo was started, so it shows `root.join(file)`.
    #[serde(skip)]
    pub root: Option<PathBuf>,
    /// The kernel crate the diagnostic is about (the engine adds it), for cargo's JSON
    /// `compiler-message`, which names a package and target.
    #[serde(skip)]
    pub origin: Option<Origin>,
    /// The compiler's own JSON (rustc's `message` object), forwarded in `compiler-message`s.
    #[serde(skip)]
    pub compiler_json: Option<serde_json::Value>,
}

/// The package a diagnostic belongs to, as cargo's JSON messages name it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Origin {
    /// The package name.
    pub package: String,
    /// Its `Cargo.toml`.
    pub manifest_path: PathBuf,
    /// The lib target's crate name.
    pub target: String,
    /// The lib target's root file.
    pub src_path: PathBuf,
}

impl Origin {
    /// cargo's package ID spec of a path package, `path+file:///dir#name` (the version is not
    /// known here; a spec without one is valid).
    pub fn package_id(&self) -> String {
        format!("path+file://{}#{}", self.manifest_path.parent().unwrap_or(Path::new("/")).display(), self.package)
    }

    /// The `target` object of cargo's JSON messages: the kernel crate's lib target.
    pub fn target_json(&self) -> serde_json::Value {
        serde_json::json!({"kind": ["lib"], "crate_types": ["rlib"], "name": self.target, "src_path": self.src_path,
                           "edition": "2021", "doc": true, "doctest": false, "test": false})
    }
}

impl Diagnostic {
    /// A diagnostic with no location yet.
    pub fn new(level: Level, message: impl Into<String>) -> Self {
        Diagnostic {
            level,
            message: message.into(),
            file: None,
            line: None,
            column: None,
            notes: Vec::new(),
            rendered: None,
            root: None,
            origin: None,
            compiler_json: None,
        }
    }

    /// A warning with no location yet.
    pub fn warning(message: impl Into<String>) -> Self {
        Self::new(Level::Warning, message)
    }

    /// An error with no location yet.
    pub fn error(message: impl Into<String>) -> Self {
        Self::new(Level::Error, message)
    }

    /// Where it points.
    pub fn at(mut self, file: impl Into<PathBuf>, line: Option<u32>, column: Option<u32>) -> Self {
        self.file = Some(file.into());
        self.line = line;
        self.column = column;
        self
    }

    /// Adds a `note:` line (how to fix, what else to know).
    pub fn note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }

    /// Records the folder `file` is relative to (kept where one was recorded before).
    pub fn rooted(mut self, root: &Path) -> Self {
        self.root.get_or_insert_with(|| root.to_path_buf());
        self
    }

    /// `file` joined to `root`: absolute where the root is known.
    pub fn full_path(&self) -> Option<PathBuf> {
        let file = self.file.as_ref()?;
        Some(match &self.root {
            Some(root) => joined(root, file),
            None => file.clone(),
        })
    }

    /// `file:line:col`, as far as known.
    pub fn location(&self) -> Option<String> {
        self.location_with(self.file.clone()?)
    }

    /// [`Diagnostic::location`] with the file named as a user in `cwd` would write it: relative
    /// where it lies below `cwd`, else absolute (the CLI's human output).
    pub fn location_from(&self, cwd: &Path) -> Option<String> {
        self.location_with(from_dir(&self.full_path()?, cwd))
    }

    /// rustc's own rendering with its `-->`/`:::` paths named from `cwd`.
    pub fn rendered_from(&self, cwd: &Path) -> Option<String> {
        let rendered = self.rendered.as_ref()?;
        let root = self.root.as_deref();
        Some(
            rendered
                .trim_end()
                .lines()
                .map(|l| map_location_line(l, |p| root.map(|r| from_dir(&joined(r, p), cwd))))
                .collect::<Vec<_>>()
                .join("\n"),
        )
    }

    fn location_with(&self, file: PathBuf) -> Option<String> {
        let mut s = file.display().to_string();
        if let Some(line) = self.line {
            s.push_str(&format!(":{line}"));
            if let Some(col) = self.column.filter(|c| *c > 0) {
                s.push_str(&format!(":{col}"));
            }
        }
        Some(s)
    }
}

/// The human form, in rustc's layout: `error: message` then `  --> file:line:col`.
impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(rendered) = &self.rendered {
            return f.write_str(rendered.trim_end());
        }
        write!(f, "{}: {}", self.level, self.message)?;
        if let Some(loc) = self.location() {
            write!(f, "\n  --> {loc}")?;
        }
        for note in &self.notes {
            write!(f, "\n   = {note}")?;
        }
        Ok(())
    }
}

impl Diagnostic {
    /// The full text with every path absolute (`root` joined), the source line and a caret
    /// under the column: what a build script prints, where the reader cannot know which folder
    /// a relative path starts from. rustc's own rendering is kept, its `-->`/`:::` paths made
    /// absolute.
    pub fn render_absolute(&self) -> String {
        if let Some(rendered) = &self.rendered {
            let root = self.root.as_deref();
            return rendered.trim_end().lines().map(|l| map_location_line(l, |p| root.map(|r| r.join(p)))).collect::<Vec<_>>().join("\n");
        }
        // rustc's layout: the gutter as wide as the line number.
        let pad = " ".repeat(self.line.map_or(1, |l| l.to_string().len()));
        let mut s = format!("{}: {}", self.level, self.message);
        let mut shown_source = false;
        if let Some(file) = self.full_path() {
            s.push_str(&format!("\n{pad}--> {}", file.display()));
            if let Some(line) = self.line {
                s.push_str(&format!(":{line}"));
                if let Some(col) = self.column.filter(|c| *c > 0) {
                    s.push_str(&format!(":{col}"));
                }
                if let Some(snippet) = snippet(&file, line, self.column) {
                    s.push_str(&snippet);
                    shown_source = true;
                }
            }
        }
        for note in &self.notes {
            // ptxas adds the source text as a note for the CLI; the snippet shows it already.
            if shown_source && note.starts_with("source: ") {
                continue;
            }
            s.push_str(&format!("\n{pad} = {note}"));
        }
        s
    }

    /// The source line under the location and a caret at the column, as rustc shows them
    /// (`  |\n6 |     code\n  |     ^`, each line starting with a newline); `None` where the file
    /// or line cannot be read.
    pub fn source_snippet(&self) -> Option<String> {
        snippet(&self.full_path()?, self.line?, self.column)
    }

    /// [`Diagnostic::render_absolute`] without the leading `error: `/`warning: `: cargo puts
    /// its own `warning: pkg@ver: ` before each `cargo:warning` line.
    pub fn render_absolute_unprefixed(&self) -> String {
        let text = self.render_absolute();
        let prefix = format!("{}: ", self.level);
        match text.strip_prefix(&prefix) {
            Some(rest) => rest.to_string(),
            // rustc's `warning[E0000]: msg`: `msg [E0000]`, the code kept, the level dropped.
            None => match text.strip_prefix(&self.level.to_string()).and_then(|r| r.strip_prefix('[')).and_then(|r| r.split_once("]: ")) {
                Some((code, rest)) => match rest.split_once('\n') {
                    Some((first, more)) => format!("{first} [{code}]\n{more}"),
                    None => format!("{rest} [{code}]"),
                },
                None => text,
            },
        }
    }
}

/// `   |\n 6 |     code\n   |     ^`: the source line under a location, the caret at `column`
/// (1-based, in characters) or under the line's first character when no column is known.
fn snippet(file: &Path, line: u32, column: Option<u32>) -> Option<String> {
    let text = std::fs::read_to_string(file).ok()?;
    let src = text.lines().nth(line.checked_sub(1)? as usize)?.trim_end();
    if src.trim().is_empty() {
        return None;
    }
    let number = line.to_string();
    let pad = " ".repeat(number.len());
    let first = src.chars().take_while(|c| c.is_whitespace()).count();
    let (caret_at, label) = match column.filter(|c| *c > 0) {
        Some(c) if c as usize <= src.chars().count() + 1 => (c as usize - 1, String::new()),
        // nvcc counts columns in a macro's expanded text (candle's and dfdx's stamped kernels
        // give `:18:639` for a 59-character line): point at the line, say why.
        Some(c) => (first, format!(" column {c} is in the expansion of a macro used on this line")),
        None => (first, String::new()),
    };
    // Tabs stay tabs so the caret lines up however the terminal shows them.
    let lead: String = src.chars().take(caret_at).map(|c| if c == '\t' { '\t' } else { ' ' }).collect();
    Some(format!("\n{pad} |\n{number} | {src}\n{pad} | {lead}^{label}"))
}

/// How a note showing a macro's expansion at a diagnostic's place starts (nvcc's diagnostics).
pub(crate) const IN_MACRO_EXPANSION: &str = "nvcc points into the expansion of a macro used on this line";

/// Diagnostics with one message (and the same notes) at several places as one: the first,
/// with a note naming the other places. Macro-stamped kernels and headers that many files
/// include repeat a warning (or a missing-header error) per use: dfdx's kernels gave 121
/// warnings and, without an include folder, 44 copies of one error. The expansion shown at
/// each use differs by the macro's arguments only: the first stands for the rest.
pub(crate) fn group_repeats(diagnostics: Vec<Diagnostic>) -> Vec<Diagnostic> {
    const LISTED: usize = 5;
    let mut groups: Vec<(Diagnostic, Vec<String>)> = Vec::new();
    for d in diagnostics {
        let place = match (&d.file, d.line) {
            (Some(f), Some(l)) => format!("{}:{l}", f.display()),
            (Some(f), None) => f.display().to_string(),
            _ => String::new(),
        };
        match groups.iter_mut().find(|(g, _)| {
            g.file.is_some() && d.file.is_some() && g.level == d.level && g.message == d.message && grouped_notes(g).eq(grouped_notes(&d))
        }) {
            // Two columns of one line (a macro's two kernels) are one place.
            Some((g, places)) => {
                let seen = (g.file == d.file && g.line == d.line) || places.contains(&place);
                if !seen {
                    places.push(place);
                }
            }
            None => groups.push((d, Vec::new())),
        }
    }
    groups
        .into_iter()
        .map(|(mut d, places)| {
            if !places.is_empty() {
                let shown = places.iter().take(LISTED).cloned().collect::<Vec<_>>().join(", ");
                let more = places.len().saturating_sub(LISTED);
                let more = if more > 0 { format!(", and {more} more") } else { String::new() };
                d.notes.push(format!("the same at {shown}{more}"));
            }
            d
        })
        .collect()
}

/// The notes that must be equal for two diagnostics to be one.
fn grouped_notes(d: &Diagnostic) -> impl Iterator<Item = &String> {
    d.notes.iter().filter(|n| !n.starts_with(IN_MACRO_EXPANSION))
}

/// `path` as a user in `cwd` writes it: relative below `cwd`, else as it is.
fn from_dir(path: &Path, cwd: &Path) -> PathBuf {
    path.strip_prefix(cwd).map(Path::to_path_buf).unwrap_or_else(|_| path.to_path_buf())
}

/// A rustc `  --> src/lib.rs:6:14` or `  ::: src/x.rs:1:1` line with its relative path replaced
/// by `map` (unchanged where `map` gives `None`).
fn map_location_line(line: &str, map: impl Fn(&Path) -> Option<PathBuf>) -> String {
    let trimmed = line.trim_start();
    let indent = &line[..line.len() - trimmed.len()];
    for arrow in ["--> ", "::: "] {
        if let Some(rest) = trimmed.strip_prefix(arrow) {
            // `path:line:col`: the path is what comes before the last two `:` fields.
            let mut parts = rest.rsplitn(3, ':');
            let (col, ln, path) = (parts.next(), parts.next(), parts.next());
            if let (Some(col), Some(ln), Some(path)) = (col, ln, path) {
                if ln.parse::<u32>().is_ok() && col.trim().parse::<u32>().is_ok() && Path::new(path).is_relative() {
                    if let Some(mapped) = map(Path::new(path)) {
                        return format!("{indent}{arrow}{}:{ln}:{col}", mapped.display());
                    }
                }
            }
        }
    }
    line.to_string()
}

impl Diagnostic {
    /// The diagnostic as cargo's `--message-format json` line (`"reason": "compiler-message"`),
    /// which editors and CI annotators read: rustc's own JSON where it came from rustc, else
    /// one built from the location (one primary span with the source line), the notes as
    /// `note` children and [`Diagnostic::render_absolute`] as `rendered`. File names are
    /// absolute: the kernel crate is not the workspace a tool reading the stream knows.
    pub fn compiler_message(&self) -> serde_json::Value {
        use serde_json::json;
        let message = match &self.compiler_json {
            Some(raw) => {
                let mut m = raw.clone();
                absolutize_spans(&mut m, self.root.as_deref());
                if let Some(r) = m.get("rendered").and_then(|r| r.as_str()) {
                    let root = self.root.as_deref();
                    let fixed: Vec<String> = r.lines().map(|l| map_location_line(l, |p| root.map(|r| r.join(p)))).collect();
                    m["rendered"] = json!(fixed.join("\n") + "\n");
                }
                m
            }
            None => {
                let children: Vec<serde_json::Value> = self
                    .notes
                    .iter()
                    .map(|n| json!({"message": n, "code": null, "level": "note", "spans": [], "children": [], "rendered": null}))
                    .collect();
                json!({
                    "$message_type": "diagnostic",
                    "message": self.message,
                    "code": null,
                    "level": self.level,
                    "spans": self.span().into_iter().collect::<Vec<_>>(),
                    "children": children,
                    "rendered": self.render_absolute() + "\n",
                })
            }
        };
        let (package_id, manifest_path, target) = match &self.origin {
            Some(o) => (o.package_id(), o.manifest_path.display().to_string(), o.target_json()),
            None => (
                String::new(),
                String::new(),
                json!({"kind": [], "crate_types": [], "name": "", "src_path": "", "edition": "2021", "doc": false, "doctest": false, "test": false}),
            ),
        };
        json!({"reason": "compiler-message", "package_id": package_id, "manifest_path": manifest_path, "target": target, "message": message})
    }

    /// rustc's JSON span for the location: byte offsets and the source line read from the file.
    fn span(&self) -> Option<serde_json::Value> {
        let file = self.full_path()?;
        let line = self.line.filter(|l| *l > 0)?;
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        let line_start_byte: usize = text.split_inclusive('\n').take(line as usize - 1).map(str::len).sum();
        let src = text.lines().nth(line as usize - 1).unwrap_or_default();
        let col = self.column.filter(|c| *c > 0).unwrap_or_else(|| src.chars().take_while(|c| c.is_whitespace()).count() as u32 + 1);
        let byte_col: usize = src.chars().take(col as usize - 1).map(char::len_utf8).sum();
        let start = line_start_byte + byte_col;
        let end = start + src[byte_col.min(src.len())..].chars().next().map_or(0, char::len_utf8);
        Some(serde_json::json!({
            "file_name": file.display().to_string(),
            "byte_start": start,
            "byte_end": end,
            "line_start": line,
            "line_end": line,
            "column_start": col,
            "column_end": col + 1,
            "is_primary": true,
            "text": [{"text": src, "highlight_start": col, "highlight_end": col + 1}],
            "label": null,
            "suggested_replacement": null,
            "suggestion_applicability": null,
            "expansion": null,
        }))
    }
}

/// Every `file_name` of rustc's JSON (spans, children, macro expansions) joined to `root`.
fn absolutize_spans(v: &mut serde_json::Value, root: Option<&Path>) {
    let Some(root) = root else { return };
    match v {
        serde_json::Value::Object(map) => {
            if let Some(serde_json::Value::String(f)) = map.get_mut("file_name") {
                if Path::new(f.as_str()).is_relative() && !f.starts_with('<') {
                    *f = root.join(&*f).display().to_string();
                }
            }
            for (_, child) in map.iter_mut() {
                absolutize_spans(child, Some(root));
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(|i| absolutize_spans(i, Some(root))),
        _ => {}
    }
}

#[cfg(test)]
mod diag_tests {
    use super::*;

    fn temp_source() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/lib.rs"), "fn a() {}\n\tlet x = y + 1;\n").unwrap();
        let root = dir.path().to_path_buf();
        (dir, root)
    }

    #[test]
    fn diag_renders_an_absolute_path_the_source_line_and_a_caret() {
        let (_dir, root) = temp_source();
        let d = Diagnostic::error("ptxas: bad")
            .at("src/lib.rs", Some(2), Some(10))
            .note("source: let x = y + 1;")
            .note("for sm_80, sm_90")
            .rooted(&root);
        let text = d.render_absolute();
        let expected = format!(
            "error: ptxas: bad\n --> {}:2:10\n  |\n2 | \tlet x = y + 1;\n  | \t        ^\n  = for sm_80, sm_90",
            root.join("src/lib.rs").display()
        );
        assert_eq!(text, expected);
        assert!(d.render_absolute_unprefixed().starts_with("ptxas: bad\n"));
    }

    #[test]
    fn diag_with_a_column_past_the_line_points_at_the_line_and_says_it_is_a_macro_expansion() {
        let (_dir, root) = temp_source();
        let text = Diagnostic::warning("variable \"y\" was declared but never referenced")
            .at("src/lib.rs", Some(2), Some(639))
            .rooted(&root)
            .render_absolute();
        assert!(text.ends_with("2 | \tlet x = y + 1;\n  | \t^ column 639 is in the expansion of a macro used on this line"), "{text}");
        // Just past the end (a missing `;`) is still a column of the line.
        let text = Diagnostic::error("expected a \";\"").at("src/lib.rs", Some(2), Some(16)).rooted(&root).render_absolute();
        assert!(text.ends_with("2 | \tlet x = y + 1;\n  | \t              ^"), "{text}");
    }

    #[test]
    fn one_message_at_many_places_is_one_diagnostic_naming_them() {
        let at = |f: &str, l| Diagnostic::warning("variable \"y\" was declared but never referenced").at(f, Some(l), Some(5));
        let mut ds: Vec<Diagnostic> = (1..=8).map(|l| at("cuda/relu.cu", l)).collect();
        ds.push(Diagnostic::warning("another").at("cuda/relu.cu", Some(2), None));
        ds.push(at("cuda/tanh.cu", 4).note("for sm_80, sm_90"));
        // The first place again at another column adds no place.
        ds.push(Diagnostic::warning("variable \"y\" was declared but never referenced").at("cuda/relu.cu", Some(1), Some(70)));
        let g = group_repeats(ds);
        assert_eq!(g.len(), 3, "{g:?}");
        assert_eq!(g[0].line, Some(1));
        assert_eq!(g[0].notes, ["the same at cuda/relu.cu:2, cuda/relu.cu:3, cuda/relu.cu:4, cuda/relu.cu:5, cuda/relu.cu:6, and 2 more"]);
        // Another message, or other notes (other archs), is another diagnostic.
        assert!(g[1].notes.is_empty() && g[2].notes == ["for sm_80, sm_90"], "{g:?}");
        // Each use of a macro shows its own expansion: still one diagnostic, the first's shown.
        let used = |name: &str, l| at("cuda/relu.cu", l).note(format!("{IN_MACRO_EXPANSION}: `void {name}(float *x) {{ float y; }}`"));
        let g = group_repeats(vec![used("relu_a", 2), used("relu_b", 3)]);
        assert_eq!(g.len(), 1, "{g:?}");
        assert!(g[0].notes[0].contains("relu_a") && g[0].notes[1] == "the same at cuda/relu.cu:3", "{g:?}");
    }

    #[test]
    fn diag_without_a_column_puts_the_caret_under_the_first_character() {
        let (_dir, root) = temp_source();
        let text = Diagnostic::warning("w").at("src/lib.rs", Some(2), None).rooted(&root).render_absolute();
        assert!(text.ends_with("2 | \tlet x = y + 1;\n  | \t^"), "{text}");
    }

    #[test]
    fn diag_rustc_rendering_gets_absolute_paths_and_keeps_its_code() {
        let mut d = Diagnostic::error("cannot find value").at("src/lib.rs", Some(6), Some(14)).rooted(Path::new("/k"));
        d.rendered = Some("error[E0425]: cannot find value\n --> src/lib.rs:6:14\n  |\n  ::: /abs/other.rs:1:2\n".into());
        assert_eq!(d.render_absolute(), "error[E0425]: cannot find value\n --> /k/src/lib.rs:6:14\n  |\n  ::: /abs/other.rs:1:2");
        assert!(d.render_absolute_unprefixed().starts_with("cannot find value [E0425]\n --> /k/src/lib.rs:6:14"));
    }

    #[test]
    fn diag_compiler_message_is_cargos_shape_with_a_span_at_the_line() {
        let (_dir, root) = temp_source();
        let mut d = Diagnostic::error("ptxas: bad").at("src/lib.rs", Some(2), Some(6)).note("for sm_80, sm_90").rooted(&root);
        d.origin = Some(Origin {
            package: "k".into(),
            manifest_path: root.join("Cargo.toml"),
            target: "k".into(),
            src_path: root.join("src/lib.rs"),
        });
        let m = d.compiler_message();
        assert_eq!(m["reason"], "compiler-message");
        assert_eq!(m["manifest_path"], root.join("Cargo.toml").display().to_string());
        let span = &m["message"]["spans"][0];
        assert_eq!(span["file_name"], root.join("src/lib.rs").display().to_string());
        // Line 2 starts at byte 10; column 6 is `x`, after a tab and `let `.
        assert_eq!((span["line_start"].as_u64(), span["column_start"].as_u64(), span["byte_start"].as_u64()), (Some(2), Some(6), Some(15)));
        assert_eq!(span["text"][0]["text"], "\tlet x = y + 1;");
        assert_eq!(m["message"]["children"][0]["message"], "for sm_80, sm_90");
        assert_eq!(m["message"]["level"], "error");
    }

    #[test]
    fn diag_compiler_message_forwards_rustcs_json_with_absolute_files() {
        let mut d = Diagnostic::error("x").at("src/lib.rs", Some(1), Some(1)).rooted(Path::new("/k"));
        d.compiler_json = Some(serde_json::json!({"message": "x", "level": "error", "code": {"code": "E0425", "explanation": null},
            "spans": [{"file_name": "src/lib.rs", "expansion": {"span": {"file_name": "/abs/m.rs"}}}],
            "children": [{"spans": [{"file_name": "src/a.rs"}]}], "rendered": "error: x\n --> src/lib.rs:1:1\n"}));
        let m = d.compiler_message()["message"].clone();
        assert_eq!(m["spans"][0]["file_name"], "/k/src/lib.rs");
        assert_eq!(m["spans"][0]["expansion"]["span"]["file_name"], "/abs/m.rs");
        assert_eq!(m["children"][0]["spans"][0]["file_name"], "/k/src/a.rs");
        assert_eq!(m["code"]["code"], "E0425");
        assert_eq!(m["rendered"], "error: x\n --> /k/src/lib.rs:1:1\n");
    }

    #[test]
    fn paths_outside_a_folder_are_named_with_dot_dot_and_resolved_to_the_real_file() {
        let ws = Path::new("/home/me/mono/examples/saxpy");
        assert_eq!(joined(ws, Path::new("../../ptx-device/src/lib.rs")), Path::new("/home/me/mono/ptx-device/src/lib.rs"));
        assert_eq!(joined(ws, Path::new("./src/lib.rs")), Path::new("/home/me/mono/examples/saxpy/src/lib.rs"));
        assert_eq!(joined(Path::new("/a"), Path::new("../../x")), Path::new("/x"), "no folder above the root");
        let file = Path::new("/home/me/mono/kernels/src/lib.rs");
        assert_eq!(path_from(file, Path::new("/home/me/mono/host")), Path::new("../kernels/src/lib.rs"));
        assert_eq!(path_from(file, Path::new("/home/me/mono")), Path::new("kernels/src/lib.rs"));
        // The generated module's doc comments: from the package whose build script runs
        // (`cargo test` sets CARGO_MANIFEST_DIR as cargo does for a build script).
        let here = Path::new(env!("CARGO_MANIFEST_DIR"));
        assert_eq!(from_package(&here.join("src/lib.rs")), Path::new("src/lib.rs"));
        assert_eq!(from_package(&here.join("../examples/saxpy/src/lib.rs")), Path::new("../examples/saxpy/src/lib.rs"));
        assert_eq!(from_package(Path::new("src/lib.rs")), Path::new("src/lib.rs"));
        // rustc's rendering of an error in a path dependency outside the workspace.
        let d = Diagnostic::error("x").at("../../ptx-device/src/lib.rs", Some(3), Some(1)).rooted(ws);
        assert_eq!(d.location_from(Path::new("/home/me/mono")).unwrap(), "ptx-device/src/lib.rs:3:1");
    }
}
