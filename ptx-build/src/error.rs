//! The one error type of the engine. Every message says what failed, where, and how to fix it.

use std::fmt;
use std::path::PathBuf;

use crate::diag::Diagnostic;

/// Result alias used throughout `ptx-build`.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can stop a build, a setup or a report.
///
/// `Debug` prints the same text as `Display`: cargo shows the error a build script returns
/// through `Debug`, and users should read a diagnostic there, not a struct dump.
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An arch string that is not an NVIDIA GPU architecture.
    #[error("invalid arch `{arch}`: {reason}\n  help: {help}")]
    InvalidArch { arch: String, reason: String, help: String },

    /// An arch that exists but that a found tool cannot compile for.
    #[error("`{arch}` is not supported by {tool} {version} ({path})\n  help: {help}")]
    UnsupportedArch { arch: String, tool: &'static str, version: String, path: PathBuf, help: String },

    /// No arch on the command line, in the metadata, and no GPU to ask.
    #[error("no GPU arch chosen for {package}, and no GPU was found to build for (`native`): {why}\n  help: pass `--arch sm_80` (a list works: `--arch sm_80,sm_90`), or add `archs = [\"sm_80\"]` to [package.metadata.ptx] in {manifest}")]
    NoArch { package: String, manifest: PathBuf, why: String },

    /// `--arch native` where the driver reports no GPU.
    #[error("`--arch native` needs a GPU, and none was found: {why}\n  help: name the arch instead, e.g. `--arch sm_80`")]
    NoNativeGpu { why: String },

    /// No package with `[package.metadata.ptx]` where we looked.
    #[error("no kernel crate found in {searched}\n  a kernel crate is a package whose Cargo.toml has a [package.metadata.ptx] table\n  help: add `[package.metadata.ptx]` to the kernel package's Cargo.toml, or pass its folder: `cargo ptx build path/to/kernels`")]
    NoKernelCrate { searched: String },

    /// `-p NAME` named no kernel crate.
    #[error("package `{name}` is not a kernel crate of {searched} (kernel crates there: {available})\n  help: a kernel crate has a [package.metadata.ptx] table in its Cargo.toml")]
    NoSuchPackage { name: String, searched: String, available: String },

    /// `cargo metadata` failed on a manifest.
    #[error("could not read the cargo workspace at {manifest}: {message}")]
    Metadata { manifest: PathBuf, message: String },

    /// A bad value in `[package.metadata.ptx]` or `[workspace.metadata.ptx]`.
    #[error("{manifest}: invalid `{key}` in [{table}]: {message}")]
    Config { manifest: PathBuf, table: &'static str, key: String, message: String },

    /// A tool the build needs was not found.
    #[error("{what} not found{detail}\n  help: {help}")]
    ToolMissing { what: String, detail: String, help: String },

    /// A tool could not be started at all; `command` is its command line, quoted for display.
    #[error("could not run {tool} ({path}): {source}\n  command: {command}\n  help: {help}")]
    Spawn {
        tool: String,
        path: PathBuf,
        command: String,
        help: String,
        #[source]
        source: std::io::Error,
    },

    /// A tool ran and failed; `output` is what it printed, `command` its command line (quoted
    /// for display; empty where no single command failed).
    #[error("{tool} failed{context}:\n{output}{command}", command = command_note(command))]
    ToolFailed { tool: String, context: String, command: String, output: String },

    /// rustc rejected a kernel crate; its diagnostics were reported already.
    #[error("could not compile kernel crate `{package}` for nvptx64-nvidia-cuda ({errors} error{s} above){extra}", s = if *errors == 1 { "" } else { "s" })]
    RustCompile { package: String, errors: usize, extra: String },

    /// The kernels call `__nv_*` functions and no libdevice was found.
    #[error("kernel crate `{package}` calls {functions} from NVIDIA's libdevice, and no libdevice was found\n  help: run `cargo ptx setup` (installs NVIDIA's compiler wheels, libdevice included), or set LIBDEVICE=/path/to/libdevice.10.bc")]
    NoLibdevice { package: String, functions: String },

    /// The kernels call `__nv_*` names that libdevice does not define.
    #[error("kernel crate `{package}` calls {functions}, which libdevice ({libdevice}) does not define\n  help: check the spelling against the libdevice user's guide (e.g. `__nv_expf`, `__nv_sin`); every libdevice function starts with `__nv_`")]
    UnknownLibdevice { package: String, functions: String, libdevice: PathBuf },

    /// The kernels call functions that nothing defines.
    #[error("kernel crate `{package}` calls {functions}, which no linked crate defines (arch {arch})\n  help: a kernel can only call functions compiled into it: define them in the kernel crate or a `no_std` dependency")]
    Undefined { package: String, functions: String, arch: String },

    /// libdevice is not LLVM bitcode.
    #[error("libdevice at {path} is not LLVM bitcode (corrupt or truncated file)\n  help: reinstall it with `cargo ptx setup --force`, or point LIBDEVICE at a good libdevice.10.bc")]
    CorruptLibdevice { path: PathBuf },

    /// ptxas rejected the PTX; the diagnostics carry the source lines.
    #[error("ptxas rejected the PTX of `{package}` for {arch} ({count} error{s} above)", s = if *count == 1 { "" } else { "s" })]
    Ptxas { package: String, arch: String, count: usize, diagnostics: Vec<Diagnostic> },

    /// nvcc rejected a .cu file; the diagnostics carry the source lines.
    #[error("nvcc could not compile {file} for {arch} ({count} error{s} above)", file = file.display(), s = if *count == 1 { "" } else { "s" })]
    Nvcc { file: PathBuf, arch: String, count: usize, diagnostics: Vec<Diagnostic> },

    /// The inline-PTX checker found errors; the diagnostics were reported already.
    #[error("{count} inline-PTX error{s} in `{package}` (above)\n  help: the rules are NVIDIA's \"Inline PTX Assembly in CUDA\"; `cargo ptx check` runs the checker alone", s = if *count == 1 { "" } else { "s" })]
    InlinePtx { package: String, count: usize, diagnostics: Vec<Diagnostic> },

    /// A file-system operation failed.
    #[error("could not {action} {path}: {source}{help}", help = io_help(source))]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// A kernel signature that cannot be launched with typed arguments, or disagrees with its PTX.
    #[error("{file}:{line}: kernel `{kernel}`: {message}", file = file.display())]
    Signature { file: PathBuf, line: u32, kernel: String, message: String },

    /// Two kernels of one generated module share a name.
    #[error("kernel `{name}` is defined twice: in {first} and in {second}\n  help: rename one of them; a generated module has one method per kernel name")]
    DuplicateKernel { name: String, first: String, second: String },

    /// A build-script-only call outside a build script.
    #[error("{what} is not set: ptx_build::Builder runs inside a build script (build.rs), where cargo sets it\n  help: call it from build.rs, or use `cargo ptx build` on the command line")]
    NotInBuildScript { what: &'static str },
}

/// The command line under a tool's output: what to rerun by hand to see the failure again.
fn command_note(command: &str) -> String {
    if command.is_empty() {
        String::new()
    } else {
        format!("\n  command: {command}")
    }
}

fn io_help(e: &std::io::Error) -> &'static str {
    match e.kind() {
        std::io::ErrorKind::PermissionDenied => {
            "\n  help: choose a folder you can write to (`--target-dir DIR` or CARGO_TARGET_DIR), or fix its permissions"
        }
        std::io::ErrorKind::NotFound => "\n  help: check that the path exists",
        _ => "",
    }
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
