//! Where a layer of options came from, and what each front end tells its user to change.

use std::fmt;
use std::path::PathBuf;

use crate::error::Error;

/// Where a layer of options came from, for messages.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Source {
    /// `cargo ptx build` flags.
    #[default]
    CommandLine,
    /// [`Builder`](crate::Builder) methods in the build script at this path.
    Builder(PathBuf),
    /// A `CARGO_PTX_*` variable.
    Env(&'static str),
    /// `[package.metadata.ptx]` of this manifest.
    Package(PathBuf),
    /// `[workspace.metadata.ptx]` of this manifest.
    Workspace(PathBuf),
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::CommandLine => f.write_str("the command line"),
            Source::Builder(p) => write!(f, "the Builder in {}", p.display()),
            Source::Env(v) => write!(f, "the environment variable {v}"),
            Source::Package(m) => write!(f, "[package.metadata.ptx] of {}", m.display()),
            Source::Workspace(m) => write!(f, "[workspace.metadata.ptx] of {}", m.display()),
        }
    }
}

impl Source {
    /// Where to set archs, said for the front end that started the build: flags on the command
    /// line, Builder methods in a build script.
    pub(crate) fn no_arch_help(&self, table: Option<&Source>) -> String {
        let metadata = match table {
            Some(t) => format!("add `archs = [\"sm_80\"]` to {t}"),
            // Files outside any package: only the front end can say.
            None => "put the files in a package whose Cargo.toml has `archs = [\"sm_80\"]` in [package.metadata.ptx]".to_string(),
        };
        match self {
            Source::Builder(script) => format!("call `.arch(\"sm_80\")` on the Builder in {}, or {metadata}", script.display()),
            _ => format!("pass `--arch sm_80` (a list works: `--arch sm_80,sm_90`), or {metadata}"),
        }
    }

    /// Where to add an include folder nvcc did not search, said for the front end that started
    /// the build; `table` is the metadata table that applies to the files, `lone` whether they
    /// are files given on the command line rather than a kernel crate's.
    pub(crate) fn include_help(&self, table: Option<&Source>, lone: bool) -> String {
        let metadata = match table {
            Some(t) => format!("`cuda-include = [\"DIR\"]` in {t} (relative to that file's folder)"),
            None => "`cuda-include` in the [package.metadata.ptx] of a package around the files".to_string(),
        };
        match self {
            Source::Builder(script) => {
                format!("add the header's folder with `.cuda_include(\"DIR\")` on the Builder in {}, or {metadata}", script.display())
            }
            _ if lone => format!("pass `-I DIR` to `cargo ptx build`, or set {metadata}"),
            _ => format!("add the header's folder as {metadata}"),
        }
    }

    /// How to pass `flag` to every nvcc run, for the front end that started the build (a
    /// warning's `-diag-suppress` note). `table`: the metadata table whose `nvcc-flags` are in
    /// force, which a flag of the front end's would replace whole; the flag goes there.
    pub(crate) fn nvcc_flag_help(&self, table: Option<&Source>, flag: &str) -> String {
        match (self, table) {
            (_, Some(t)) => format!("`{flag}` added to `nvcc-flags` in {t}"),
            // The script's name alone: the note follows a warning that already names the package.
            (Source::Builder(script), None) => {
                format!("`.nvcc_flag(\"{flag}\")` in {}", script.file_name().map_or(script.as_os_str(), |n| n).to_string_lossy())
            }
            (_, None) => format!("`--nvcc-flag={flag}`"),
        }
    }

    /// How to give the front end that started the build a kernel crate. `builders` are the packages found that build
    /// their kernels in build.rs: metadata added to one of those would make it a Rust kernel
    /// crate and build its host code for the GPU.
    pub(crate) fn no_crate_help(&self, builders: &[String]) -> String {
        if let (Source::CommandLine, [first, ..]) = (self, builders) {
            let names = builders.iter().map(|b| format!("`{b}`")).collect::<Vec<_>>().join(", ");
            let one = if builders.len() == 1 { "builds its" } else { "build their" };
            return format!(
                "{names} {one} kernels in build.rs (ptx-build's Builder): `cargo build -p {first}` builds them, with nvcc's errors; `cargo ptx build path/to/file.cu --arch sm_80` compiles one .cu file alone, and `cargo ptx check path/to/cu-folder` checks a folder of them; a Rust kernel crate is a package of its own with `[package.metadata.ptx]`"
            );
        }
        let table = "add `[package.metadata.ptx]` to the kernel package's Cargo.toml";
        match self {
            Source::Builder(script) => {
                format!("{table}, and give its folder to `.kernel_crate(\"path/to/kernels\")` on the Builder in {}", script.display())
            }
            _ => format!("{table}, or pass its folder: `cargo ptx build path/to/kernels`"),
        }
    }

    /// `invalid `.method(..)` in the Builder in build.rs: message`: a Builder call that is not an
    /// option of every front end (`cuda`, `cuda_static_lib`), named as it is written.
    pub(crate) fn method_error(&self, method: &str, message: String) -> Error {
        Error::Option { key: format!(".{method}(..)"), source_name: self.to_string(), message }
    }

    /// `invalid `key` in <source>: message`, the one shape every front end's bad value gets.
    pub(crate) fn error(&self, key: &str, message: String) -> Error {
        Error::Option { key: key.replace('_', "-"), source_name: self.to_string(), message }
    }
}
