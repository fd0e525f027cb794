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
}

impl Diagnostic {
    /// A diagnostic with no location yet.
    pub fn new(level: Level, message: impl Into<String>) -> Self {
        Diagnostic { level, message: message.into(), file: None, line: None, column: None, notes: Vec::new(), rendered: None }
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

    /// `file:line:col`, as far as known.
    pub fn location(&self) -> Option<String> {
        let file = self.file.as_ref()?;
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
