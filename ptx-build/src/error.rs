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
    InvalidArch {
        /// The arch as written.
        arch: String,
        /// Why it is not one.
        reason: String,
        /// How to fix it.
        help: String,
    },

    /// An arch that exists but that a found tool cannot compile for.
    #[error("`{arch}` is not supported by {tool} {version} ({path})\n  help: {help}")]
    UnsupportedArch {
        /// The arch as written.
        arch: String,
        /// The tool.
        tool: &'static str,
        /// Its version.
        version: String,
        /// Its path.
        path: PathBuf,
        /// How to fix it.
        help: String,
    },

    /// A `ptx-isa` the toolchain's LLVM cannot write.
    #[error("PTX ISA {isa} is not one LLVM {llvm_version} ({path}) can write\n  help: {help}")]
    UnsupportedPtxIsa {
        /// The version asked for.
        isa: String,
        /// The LLVM of the kernel crate's toolchain.
        llvm_version: String,
        /// Its llc.
        path: PathBuf,
        /// The versions it can write.
        help: String,
    },

    /// No arch on the command line, in the metadata, and no GPU to ask.
    #[error("no GPU arch chosen for {package}, and no GPU was found to build for (`native`): {why}\n  help: {help}")]
    NoArch {
        /// The kernel crate.
        package: String,
        /// Why no GPU could be asked.
        why: String,
        /// Where archs can be set, for the front end that started the build.
        help: String,
    },

    /// `--arch native` where the driver reports no GPU.
    #[error("`--arch native` needs a GPU, and none was found: {why}\n  help: name the arch instead, e.g. `--arch sm_80`")]
    NoNativeGpu {
        /// Why no GPU could be asked.
        why: String,
    },

    /// No package with `[package.metadata.ptx]` where we looked.
    #[error("no kernel crate found in {searched}\n  a kernel crate is a package whose Cargo.toml has a [package.metadata.ptx] table\n  help: {help}")]
    NoKernelCrate {
        /// Where we looked.
        searched: String,
        /// How to point the front end that started the build at one.
        help: String,
    },

    /// `-p NAME` named no kernel crate.
    #[error("package `{name}` is not a kernel crate of {searched} (kernel crates there: {available})\n  help: a kernel crate has a [package.metadata.ptx] table in its Cargo.toml")]
    NoSuchPackage {
        /// The `-p` name.
        name: String,
        /// Where we looked.
        searched: String,
        /// The kernel crates there.
        available: String,
    },

    /// `cargo metadata` failed on a manifest.
    #[error("could not read the cargo workspace at {manifest}: {message}")]
    Metadata {
        /// The manifest cargo was asked about.
        manifest: PathBuf,
        /// What is wrong.
        message: String,
    },

    /// A bad option value, from any front end: metadata, a flag, a Builder method or a
    /// `CARGO_PTX_*` variable (`source_name` says which).
    #[error("invalid `{key}` in {source_name}: {message}")]
    Option {
        /// The option, as metadata spells it.
        key: String,
        /// Where the value came from.
        source_name: String,
        /// What is wrong.
        message: String,
    },

    /// A tool the build needs was not found.
    #[error("{what} not found{detail}\n  help: {help}")]
    ToolMissing {
        /// What is missing.
        what: String,
        /// What needed it.
        detail: String,
        /// How to fix it.
        help: String,
    },

    /// nvcc refused the host C++ compiler it runs (`-ccbin`): a version it does not support.
    #[error("nvcc {nvcc} does not accept the host C++ compiler {compiler}: {reason}\n  help: {help}")]
    HostCompiler {
        /// nvcc's version.
        nvcc: String,
        /// The compiler: its path, version and where it came from.
        compiler: String,
        /// nvcc's reason.
        reason: String,
        /// How to fix it.
        help: String,
    },

    /// A tool could not be started at all; `command` is its command line, quoted for display.
    #[error("could not run {tool} ({path}): {source}\n  command: {command}\n  help: {help}")]
    Spawn {
        /// The tool.
        tool: String,
        /// The program path.
        path: PathBuf,
        /// The command line, quoted for display.
        command: String,
        /// How to fix it.
        help: String,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },

    /// A tool ran and failed; `output` is what it printed, `command` its command line (quoted
    /// for display; empty where no single command failed).
    #[error("{tool} failed{context}:\n{output}{command}", command = command_note(command))]
    ToolFailed {
        /// The tool.
        tool: String,
        /// What it was doing.
        context: String,
        /// The command line, quoted for display; empty where no single command failed.
        command: String,
        /// What it printed, indented.
        output: String,
    },

    /// rustc rejected a kernel crate; its diagnostics were reported already.
    #[error("could not compile kernel crate `{package}` for nvptx64-nvidia-cuda ({errors} error{s} above){extra}", s = if *errors == 1 { "" } else { "s" })]
    RustCompile {
        /// The kernel crate.
        package: String,
        /// How many errors rustc reported.
        errors: usize,
        /// More to know (empty when nothing).
        extra: String,
    },

    /// The kernels call `__nv_*` functions and no libdevice was found.
    #[error("kernel crate `{package}` calls {functions} from NVIDIA's libdevice, and no libdevice was found\n  help: run `cargo ptx setup` (installs NVIDIA's compiler wheels, libdevice included), or set LIBDEVICE=/path/to/libdevice.10.bc")]
    NoLibdevice {
        /// The kernel crate.
        package: String,
        /// The functions, as a list.
        functions: String,
    },

    /// The kernels call `__nv_*` names that libdevice does not define.
    #[error("kernel crate `{package}` calls {functions}, which libdevice ({libdevice}) does not define\n  help: check the spelling against the libdevice user's guide (e.g. `__nv_expf`, `__nv_sin`); every libdevice function starts with `__nv_`")]
    UnknownLibdevice {
        /// The kernel crate.
        package: String,
        /// The functions, as a list.
        functions: String,
        /// The libdevice file searched.
        libdevice: PathBuf,
    },

    /// The kernels call functions that nothing defines.
    #[error("kernel crate `{package}` calls {functions}, which no linked crate defines (arch {arch})\n  help: a kernel can only call functions compiled into it: define them in the kernel crate or a `no_std` dependency")]
    Undefined {
        /// The kernel crate.
        package: String,
        /// The functions, as a list.
        functions: String,
        /// The arch being linked.
        arch: String,
    },

    /// A `shared_array!` larger than the static shared memory a block may declare.
    #[error("{location}: this `shared_array!` of kernel crate `{package}` takes {bytes} bytes of shared memory, more than the {limit} bytes of static shared memory a block may declare ({arch})\n  help: shrink the array, or take the buffer from `ptx_device::shared::dynamic_shared()` and launch with `shared_mem_bytes` set (a typed launch raises the kernel's limit above 48 KiB itself; before a `launch_builder` launch, call `kernels.allow_dynamic_shared_memory(\"NAME\", bytes)`)")]
    SharedTooLarge {
        /// The kernel crate.
        package: String,
        /// `file:line:col` of the `shared_array!` call.
        location: String,
        /// The array's size.
        bytes: u64,
        /// The static shared memory limit.
        limit: u64,
        /// The arch being linked.
        arch: String,
    },

    /// The link stage met IR it does not know how to move into shared memory.
    #[error("kernel crate `{package}`: cannot place a shared array in shared memory: {message}\n  help: this is a bug in cargo-ptx or a rustc it does not know yet; please report it with the line above")]
    SharedRewrite {
        /// The kernel crate.
        package: String,
        /// What was not understood.
        message: String,
    },

    /// The link stage met a ptx-device helper or marker it does not know (an atomic, a launch
    /// bound).
    #[error("kernel crate `{package}`: {message}\n  help: the kernel crate's ptx-device is newer than this cargo-ptx, or the marker was written by hand; use the ptx-device of the same release")]
    LinkRewrite {
        /// The kernel crate.
        package: String,
        /// What was not understood.
        message: String,
    },

    /// libdevice is not LLVM bitcode.
    #[error("libdevice at {path} is not LLVM bitcode (corrupt or truncated file)\n  help: reinstall it with `cargo ptx setup --force`, or point LIBDEVICE at a good libdevice.10.bc")]
    CorruptLibdevice {
        /// The file.
        path: PathBuf,
    },

    /// ptxas rejected the PTX; the diagnostics carry the source lines.
    #[error("ptxas rejected the PTX of `{package}` for {arch} ({count} error{s} above)", s = if *count == 1 { "" } else { "s" })]
    Ptxas {
        /// The kernel crate.
        package: String,
        /// The arch being assembled.
        arch: String,
        /// How many.
        count: usize,
        /// The errors, each at its source line.
        diagnostics: Vec<Diagnostic>,
    },

    /// nvcc rejected a .cu file; the diagnostics carry the source lines.
    #[error("nvcc could not compile {file}{more} for {arch} ({count} error{s} above)", file = file.display(), s = if *count == 1 { "" } else { "s" }, more = match others { 0 => String::new(), 1 => " and 1 other file".to_string(), n => format!(" and {n} other files") })]
    Nvcc {
        /// The source file (the first that failed).
        file: PathBuf,
        /// How many other files failed.
        others: usize,
        /// The arch being compiled.
        arch: String,
        /// How many.
        count: usize,
        /// The errors, each at its source line.
        diagnostics: Vec<Diagnostic>,
    },

    /// The inline-PTX checker found errors; the diagnostics were reported already.
    #[error("{count} inline-PTX error{s} in `{package}` (above)\n  help: the rules are NVIDIA's \"Inline PTX Assembly in CUDA\"{alone}", s = if *count == 1 { "" } else { "s" }, alone = if *in_build { "; `cargo ptx check` runs the checker alone" } else { "" })]
    InlinePtx {
        /// The kernel crate.
        package: String,
        /// Found by a build (not by `cargo ptx check`, which needs no pointer to itself).
        in_build: bool,
        /// How many.
        count: usize,
        /// The errors, each at its source line.
        diagnostics: Vec<Diagnostic>,
    },

    /// A file-system operation failed.
    #[error("could not {action} {path}: {source}{help}", help = io_help(source))]
    Io {
        /// What was being done (`read`, `write`).
        action: &'static str,
        /// The file or folder.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },

    /// A Rust file of a kernel crate that syn cannot parse (what the checkers read).
    #[error("{}{}: the kernel crate's Rust does not parse: {message}\n  help: `cargo check` in the kernel crate shows rustc's error", file.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
    RustSyntax {
        /// The file.
        file: PathBuf,
        /// Where syn stopped, when it says.
        line: Option<u32>,
        /// What syn says.
        message: String,
    },

    /// A kernel signature that cannot be launched with typed arguments, or disagrees with its PTX.
    #[error("{file}:{line}: kernel `{kernel}`: {message}", file = file.display())]
    Signature {
        /// The source file.
        file: PathBuf,
        /// The 1-based line.
        line: u32,
        /// The kernel.
        kernel: String,
        /// What is wrong.
        message: String,
    },

    /// Two kernels of one generated module share a name.
    #[error("kernel `{name}` is defined twice: in {first} and in {second}\n  help: rename one of them; a generated module has one method per kernel name")]
    DuplicateKernel {
        /// The kernel name.
        name: String,
        /// The first definition.
        first: String,
        /// The second definition.
        second: String,
    },

    /// Two .cu files that map to one PTX module name.
    #[error("{first} and {second} (in {dir}) both make the PTX module `{module}`: their PTX and cubins would overwrite each other\n  help: rename one of the files; module names are the file paths with letters lowercased and other characters as `_`")]
    ModuleClash {
        /// The module name.
        module: String,
        /// One file, relative to `dir`.
        first: PathBuf,
        /// The other file, relative to `dir`.
        second: PathBuf,
        /// The package folder.
        dir: PathBuf,
    },

    /// A kernel whose name the link would resolve to something else.
    #[error("{location}: kernel `{name}` {reason}\n  help: rename the kernel")]
    ReservedKernelName {
        /// The kernel's name.
        name: String,
        /// `file:line` of its definition, or the crate.
        location: String,
        /// Whose name it takes and what would happen.
        reason: String,
    },

    /// A tool or file named by an environment variable that does not work.
    #[error("{var}={path} {problem}\n  help: {help}")]
    BadToolVariable {
        /// The variable.
        var: String,
        /// Its value.
        path: PathBuf,
        /// What is wrong with it.
        problem: String,
        /// How to fix it.
        help: String,
    },

    /// Two Builders of one build script put modules of one name into one generated file.
    #[error("two Builders put a module `{module}` into {file}: one built from {first}, one from {second}\n  help: give one of the Builders a file of its own, `.out_file(\"more_kernels.rs\")`, and `include!` that file too", file = file.display())]
    SharedGeneratedFile {
        /// The module's name in the generated file.
        module: String,
        /// The generated file.
        file: PathBuf,
        /// What the first Builder built it from.
        first: String,
        /// What the second did.
        second: String,
    },

    /// A tool found the disk full while writing into `path`.
    #[error("the disk is full: {what} could not write into {path}\n  help: free some space (`cargo clean`; `cargo ptx cache --clear` empties the step cache), or build into a target dir on a disk with room (`--target-dir DIR`, CARGO_TARGET_DIR)", path = path.display())]
    DiskFull {
        /// The folder being written.
        path: PathBuf,
        /// Who was writing.
        what: String,
    },

    /// A build-script-only call outside a build script.
    #[error("{what} is not set: ptx_build::Builder runs inside a build script (build.rs), where cargo sets it\n  help: call it from build.rs, or use `cargo ptx build` on the command line")]
    NotInBuildScript {
        /// The variable cargo sets in build scripts.
        what: &'static str,
    },

    /// A prebuilt kernel set (`prebuilt/`, from `cargo ptx package`) that cannot be used: damaged,
    /// stale, of a newer format, or missing an arch; never used silently.
    #[error("prebuilt kernels of `{package}` ({set}): {message}\n  help: {help}", set = set.display())]
    Prebuilt {
        /// The package that ships the set.
        package: String,
        /// The set's manifest.
        set: PathBuf,
        /// What is wrong.
        message: String,
        /// How to fix it.
        help: String,
    },

    /// A build from source that failed after a prebuilt set was passed over (`auto`): its own
    /// error, and a note on the set that could have spared it.
    #[error("{error}\n  note: built from source because the prebuilt kernels of `{package}` ({set}) are not used ({reason}); the fix where `{package}` is made: {fix}", set = set.display())]
    PrebuiltPassedOver {
        /// The build's error.
        error: Box<Error>,
        /// The package that ships the set.
        package: String,
        /// The set's manifest.
        set: PathBuf,
        /// Why it is not used.
        reason: String,
        /// What writes a set that can be used.
        fix: String,
    },
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
