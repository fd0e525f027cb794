//! The errors of what only the command line runs (`new`/`init`, `setup`); build errors are the
//! engine's [`ptx_build::Error`], carried unchanged.

use std::fmt;
use std::path::PathBuf;

/// Result alias of the CLI.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything `cargo ptx` can fail with. Like the engine's, `Debug` prints the message.
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The engine failed (a build, a check, tool discovery).
    #[error(transparent)]
    Build(#[from] ptx_build::Error),

    /// A package name cargo would refuse (`cargo ptx new`).
    #[error("invalid package name `{name}`: {reason}\n  help: {help}")]
    InvalidName { name: String, reason: String, help: String },

    /// `cargo ptx new` / `init` could not create the project; nothing was left behind.
    #[error("could not create a project at {path}: {message}\n  help: {help}", path = path.display())]
    Scaffold { path: PathBuf, message: String, help: String },

    /// `cargo ptx new` without `--path-deps` finds neither a checkout nor published crates: one line.
    #[error("{0}")]
    NoDependencies(String),

    /// `--path-deps DIR` is not a cargo-ptx checkout; `dir` is the folder as given.
    #[error("--path-deps {dir}: {message}\n  help: {help}", dir = dir.display())]
    PathDeps { dir: PathBuf, message: String, help: String },

    /// `cargo ptx package` could not write a prebuilt set.
    #[error("could not package prebuilt kernels: {message}\n  help: {help}")]
    Package { message: String, help: String },

    /// `cargo ptx package --check` found a set that cannot be used.
    #[error("prebuilt kernels check failed: {message}\n  help: {help}")]
    PackageCheck { message: String, help: String },

    /// `cargo ptx setup` could not finish.
    #[error("setup failed: {message}\n  help: {help}")]
    Setup { message: String, help: String },

    /// An NVIDIA tool a command runs is not installed (`nvdisasm`, `compute-sanitizer`).
    #[error("{message}\n  help: {help}")]
    MissingTool { tool: &'static str, message: String, help: String },

    /// `cargo ptx inspect --kernel NAME` names no kernel of the build.
    #[error("no kernel named `{name}` in {place}{suggestion}\n  help: {help}", suggestion = match suggestion { Some(s) => format!("; did you mean `{s}`?"), None => String::new() })]
    UnknownKernel { name: String, place: String, suggestion: Option<String>, help: String },

    /// `cargo ptx inspect` could not show what was asked.
    #[error("{message}\n  help: {help}")]
    Inspect { message: String, help: String },

    /// `cargo ptx sanitize` on a machine without the CUDA driver: one line, since it is the
    /// whole story.
    #[error("no CUDA driver here (libcuda.so.1 not found): compute-sanitizer runs programs on a GPU; run `cargo ptx sanitize` on a machine with an NVIDIA GPU and its driver")]
    NoDriver,

    /// `cargo ptx sanitize` could not run (no driver, a cargo build that failed, ...).
    #[error("{message}\n  help: {help}")]
    Sanitize { message: String, help: String },

    /// A file-system operation failed.
    #[error("could not {action} {path}: {source}", path = path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl Error {
    pub(crate) fn io(action: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io { action, path: path.into(), source }
    }
}
