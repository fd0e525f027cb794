//! The options of a kernel build, declared once.
//!
//! One struct, [`Options`], is what `[package.metadata.ptx]` and `[workspace.metadata.ptx]`
//! deserialize into (kebab-case keys), what `cargo ptx build` parses its flags into (clap, behind
//! this crate's `clap` feature), and what [`Builder`](crate::Builder)'s methods set. So every
//! option has one name, one meaning and one default, whichever front end sets it.
//!
//! Every field is an `Option`: unset means "ask the layer below". The layers, highest first:
//! the command line or the Builder, then `CARGO_PTX_*` environment variables, then the package's
//! metadata, then the workspace's, then the defaults listed on each field.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use serde_json::Value;

use crate::arch::{self, ArchRequest};
use crate::diag::Diagnostic;
use crate::error::{Error, Result};

/// Declares [`Options`] from one list: each field's doc, attributes, type and default.
///
/// It generates the struct (every field optional), [`Options::or`] (layering), the list of
/// metadata keys, and one accessor per field that applies the default.
macro_rules! options {
    ($( $(#[$attr:meta])* $field:ident : $ty:ty = $default:expr; )*) => {
        /// How kernels are built: `[package.metadata.ptx]`, `cargo ptx build` flags and
        /// [`Builder`](crate::Builder) methods, one declaration (see the [module docs](self)).
        #[derive(Clone, Debug, Default, PartialEq, Deserialize)]
        #[cfg_attr(feature = "clap", derive(clap::Args))]
        #[serde(rename_all = "kebab-case", deny_unknown_fields)]
        #[non_exhaustive]
        pub struct Options {
            $( $(#[$attr])* pub $field: Option<$ty>, )*
        }

        impl Options {
            /// The metadata keys, as `[package.metadata.ptx]` spells them.
            pub const KEYS: &'static [&'static str] = &[$( stringify!($field) ),*];

            /// These options over `lower`: a value set here wins.
            pub fn or(self, lower: Options) -> Options {
                Options { $( $field: self.$field.or(lower.$field), )* }
            }

            /// The keys set both here and in `lower`, to different values: where this layer
            /// overrides the other.
            pub fn overrides(&self, lower: &Options) -> Vec<&'static str> {
                let mut out = Vec::new();
                $(
                    if self.$field.is_some() && lower.$field.is_some() && self.$field != lower.$field {
                        out.push(stringify!($field));
                    }
                )*
                out
            }

            $(
                #[doc = concat!("`", stringify!($field), "` as set, else its default.")]
                pub fn $field(&self) -> $ty {
                    self.$field.clone().unwrap_or_else(|| $default)
                }
            )*
        }
    };
}

options! {
    /// GPU archs: `sm_80`, `sm_90a`, `sm_100f`, `compute_80` (PTX only), comma lists, `all`,
    /// `native` [default: the GPUs of this machine].
    #[serde(deserialize_with = "archs_de", default)]
    #[cfg_attr(feature = "clap", arg(long = "arch", value_name = "ARCH", value_delimiter = ',', value_parser = parse_arch_request, help_heading = "Kernel options"))]
    archs: Vec<ArchRequest> = Vec::new();

    /// The kernels' profile: `release` (optimised, `default<O3>`) or `debug` (unoptimised, for
    /// stepping through) [default: release]. Artifacts go under `ptx/<profile>/`.
    #[cfg_attr(feature = "clap", arg(long, value_name = "PROFILE", value_enum, help_heading = "Kernel options"))]
    profile: Profile = Profile::Release;

    /// The rustup toolchain for Rust kernels [default: nightly].
    #[cfg_attr(feature = "clap", arg(long, value_name = "NAME", help_heading = "Kernel options"))]
    toolchain: String = crate::toolchain::DEFAULT_TOOLCHAIN.to_string();

    /// Features of the kernel crate to enable.
    #[cfg_attr(feature = "clap", arg(short = 'F', long, value_name = "FEATURES", value_delimiter = ',', help_heading = "Kernel options"))]
    features: Vec<String> = Vec::new();

    /// Enable every feature of the kernel crate [default: false].
    #[cfg_attr(feature = "clap", arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true", help_heading = "Kernel options"))]
    all_features: bool = false;

    /// Do not enable the kernel crate's `default` feature [default: false].
    #[cfg_attr(feature = "clap", arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true", help_heading = "Kernel options"))]
    no_default_features: bool = false;

    /// Flush denormals to zero, in libdevice (`__CUDA_FTZ`) and nvcc (`-ftz=true`) [default: false].
    #[cfg_attr(feature = "clap", arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true", help_heading = "Kernel options"))]
    ftz: bool = false;

    /// Contract `a * b + c` into one fused multiply-add, as nvcc's `-fmad` (Rust: LLVM's
    /// `contract` flag on the crate's float operations, libdevice left alone as nvcc leaves it;
    /// CUDA C++: `nvcc -fmad=true|false`) [default: true, nvcc's default:
    /// the same source gives the same results and speed in both languages].
    #[cfg_attr(feature = "clap", arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true", help_heading = "Kernel options"))]
    fmad: bool = true;

    /// Loop-unrolling budget of `opt` for Rust kernels (`-unroll-threshold`, in IR
    /// instructions): loops with a constant trip count up to this size unroll completely
    /// [default: 1500, what nvcc's build unrolls; `300` is LLVM's own].
    #[serde(deserialize_with = "from_str_de", default)]
    #[cfg_attr(feature = "clap", arg(long, value_name = "N", value_parser = parse_unroll_threshold, help_heading = "Kernel options"))]
    unroll_threshold: UnrollThreshold = UnrollThreshold::default();

    /// Pin the PTX ISA version of Rust kernels, e.g. `7.8` [default: the lowest the arch allows].
    #[serde(deserialize_with = "from_str_de", default)]
    #[cfg_attr(feature = "clap", arg(long, value_name = "X.Y", value_parser = parse_ptx_isa, help_heading = "Kernel options"))]
    ptx_isa: PtxIsa = PtxIsa::default();

    /// Whether the crate's lib target holds Rust kernels [default: true]; `false` for a crate of
    /// CUDA C++ alone.
    #[cfg_attr(feature = "clap", arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true", help_heading = "Kernel options"))]
    rust: bool = true;

    /// CUDA C++ files, globs relative to the package [default: `cuda/**/*.cu` when `cuda/` exists].
    #[cfg_attr(feature = "clap", arg(long, value_name = "GLOB", help_heading = "CUDA C++ options"))]
    cuda_sources: Vec<String> = Vec::new();

    /// `-I` folders for nvcc, relative to the package (in metadata), to the current folder (on
    /// the command line) or to the host crate (in a Builder).
    #[cfg_attr(feature = "clap", arg(short = 'I', long, value_name = "DIR", help_heading = "CUDA C++ options"))]
    cuda_include: Vec<PathBuf> = Vec::new();

    /// Preprocessor definitions for nvcc: `NAME` or `NAME=VALUE` (metadata: a table,
    /// `{ TILE = 16, FAST = true }`).
    #[serde(deserialize_with = "defines_de", default)]
    #[cfg_attr(feature = "clap", arg(short = 'D', long, value_name = "NAME[=VALUE]", value_parser = parse_define, help_heading = "CUDA C++ options"))]
    cuda_defines: Vec<Define> = Vec::new();

    /// Extra nvcc flags, passed as they are (`--use_fast_math`).
    #[cfg_attr(feature = "clap", arg(long = "nvcc-flag", value_name = "FLAG", allow_hyphen_values = true, help_heading = "CUDA C++ options"))]
    nvcc_flags: Vec<String> = Vec::new();

    /// The C++ standard for nvcc's `-std` [default: c++17].
    #[serde(deserialize_with = "from_str_de", default)]
    #[cfg_attr(feature = "clap", arg(long, value_name = "STD", value_parser = parse_cuda_std, help_heading = "CUDA C++ options"))]
    cuda_std: CudaStd = CudaStd::default();

    /// CUDA C++ for cuda-gdb: nvcc `-G` (device debug info, optimisations off) instead of
    /// `-lineinfo` [default: false]. Independent of `profile`, which is about Rust kernels' LLVM
    /// pipeline and the artifact folder.
    #[cfg_attr(feature = "clap", arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true", help_heading = "CUDA C++ options"))]
    cuda_gdb: bool = false;

    /// CUDA libraries whose headers the .cu files include (`["cublas"]`): `cargo ptx setup`
    /// installs them, and a build without them stops before nvcc, naming the setup command.
    #[cfg_attr(feature = "clap", arg(long = "cuda-library", value_name = "NAME", value_delimiter = ',', help_heading = "CUDA C++ options"))]
    cuda_libraries: Vec<String> = Vec::new();

    /// The shared step cache: a folder, or `off` [default: `steps/` in the cargo-ptx cache
    /// folder]. Link, llc, ptxas and nvcc outputs land there keyed by content, tool versions and
    /// flags, so another checkout or target dir on the machine starts no tool for them.
    #[serde(deserialize_with = "from_str_de", default)]
    #[cfg_attr(feature = "clap", arg(long, value_name = "DIR|off", value_parser = parse_shared_cache, help_heading = "Cache options"))]
    shared_cache: SharedCacheSetting = SharedCacheSetting::Default;

    /// A compiler launcher for nvcc and ptxas, e.g. `sccache` [default: none].
    #[cfg_attr(feature = "clap", arg(long, value_name = "PROGRAM", help_heading = "Cache options"))]
    launcher: String = String::new();
}

/// Where the shared step cache lives.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum SharedCacheSetting {
    /// `steps/` in the cargo-ptx cache folder (`CARGO_PTX_HOME`, `XDG_CACHE_HOME/cargo-ptx`,
    /// `~/.cache/cargo-ptx`).
    #[default]
    Default,
    /// No shared cache: steps are cached in the target dir only.
    Off,
    /// This folder.
    Dir(PathBuf),
}

impl SharedCacheSetting {
    /// The folder, or `None` when off or when no cache folder can be found.
    pub fn dir(&self) -> Option<PathBuf> {
        match self {
            SharedCacheSetting::Default => crate::toolchain::home().map(|h| h.join("steps")),
            SharedCacheSetting::Off => None,
            SharedCacheSetting::Dir(d) => Some(d.clone()),
        }
    }
}

impl FromStr for SharedCacheSetting {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s.trim() {
            "" => Err("expected a folder or `off`".into()),
            "off" | "false" | "none" => Ok(SharedCacheSetting::Off),
            dir => Ok(SharedCacheSetting::Dir(PathBuf::from(dir))),
        }
    }
}

#[cfg(feature = "clap")]
fn parse_shared_cache(s: &str) -> std::result::Result<SharedCacheSetting, String> {
    s.parse()
}

/// The environment variables that set options, with the key each sets. Read by both front
/// ends, below their own flags or methods and above the metadata.
pub const ENV_VARS: &[(&str, &str)] = &[
    ("CARGO_PTX_ARCH", "archs"),
    ("CARGO_PTX_PROFILE", "profile"),
    ("CARGO_PTX_TOOLCHAIN", "toolchain"),
    ("CARGO_PTX_CACHE_DIR", "shared_cache"),
    ("CARGO_PTX_LAUNCHER", "launcher"),
];

impl Options {
    /// The `CARGO_PTX_*` layer: a bad value is an error that names the variable.
    pub fn from_env() -> Result<Options> {
        let mut o = Options::default();
        for (var, key) in ENV_VARS {
            let Ok(value) = std::env::var(var) else { continue };
            if value.trim().is_empty() {
                continue;
            }
            let source = Source::Env(var);
            let parsed = match *key {
                "archs" => Options { archs: Some(parse_arch_list(&value).map_err(|m| source.error(key, m))?), ..Options::default() },
                "profile" => Options { profile: Some(value.parse().map_err(|m| source.error(key, m))?), ..Options::default() },
                "shared_cache" => Options { shared_cache: Some(value.parse().map_err(|m| source.error(key, m))?), ..Options::default() },
                "launcher" => Options { launcher: Some(value), ..Options::default() },
                _ => Options { toolchain: Some(value), ..Options::default() },
            };
            o = o.or(parsed);
        }
        Ok(o)
    }

    /// Reads a `[package.metadata.ptx]` or `[workspace.metadata.ptx]` table (as `cargo metadata`
    /// prints it). Unknown keys are warnings with a did-you-mean hint; bad values are errors
    /// naming the manifest and the key.
    pub fn from_metadata(table: &Value, source: &Source, warnings: &mut Vec<Diagnostic>) -> Result<Options> {
        let Some(table) = table.as_object() else {
            return Err(source.error("ptx", "expected a table, e.g. `[package.metadata.ptx]` with `archs = [\"sm_80\"]`".into()));
        };
        let mut out = Options::default();
        for (key, value) in table {
            let field = key.replace('-', "_");
            if !Options::KEYS.contains(&field.as_str()) || key.contains('_') {
                let hint = Options::KEYS
                    .iter()
                    .map(|k| k.replace('_', "-"))
                    .find(|k| strsim_close(k, key))
                    .map(|k| format!(" (did you mean `{k}`?)"))
                    .unwrap_or_default();
                let known: Vec<String> = Options::KEYS.iter().map(|k| k.replace('_', "-")).collect();
                let mut w = Diagnostic::warning(format!("unknown key `{key}` in {source}{hint}; it is ignored"))
                    .note(format!("known keys: {}", known.join(", ")));
                if let Source::Package(m) | Source::Workspace(m) = source {
                    w = w.at(m, None, None);
                }
                warnings.push(w);
                continue;
            }
            // One key at a time, so the error names it.
            let mut one = serde_json::Map::new();
            one.insert(key.clone(), value.clone());
            let parsed: Options = serde_json::from_value(Value::Object(one)).map_err(|e| source.error(key, e.to_string()))?;
            out = out.or(parsed);
        }
        out.check(source)?;
        Ok(out)
    }

    /// Value checks no type can express.
    pub fn check(&self, source: &Source) -> Result<()> {
        if let Some(unknown) = self.cuda_libraries.iter().flatten().find(|l| !crate::toolchain::CUDA_LIBRARIES.iter().any(|(n, _)| n == l))
        {
            let known: Vec<&str> = crate::toolchain::CUDA_LIBRARIES.iter().map(|(n, _)| *n).collect();
            return Err(source
                .error("cuda-libraries", format!("`{unknown}` is not a CUDA library setup can install (known: {})", known.join(", "))));
        }
        if self.archs.as_ref().is_some_and(Vec::is_empty) {
            return Err(source.error(
                "archs",
                "the list is empty: name at least one arch, e.g. [\"sm_80\"], or remove the key to build for this machine's GPUs".into(),
            ));
        }
        // Every front end parses through `FromStr`, which checks the range; this catches a
        // value built in code (`Options { unroll_threshold: Some(..) }`).
        if let Some(Err(m)) = self.unroll_threshold.map(|t| t.to_string().parse::<UnrollThreshold>()) {
            return Err(source.error("unroll_threshold", m));
        }
        Ok(())
    }

    /// Relative `cuda-include` folders made absolute against `base` (each front end's own
    /// folder); a folder that does not exist is an error (nvcc would accept it silently and then
    /// miss the headers).
    pub fn resolve_paths(mut self, base: &Path, source: &Source) -> Result<Options> {
        if let Some(SharedCacheSetting::Dir(d)) = &mut self.shared_cache {
            if d.is_relative() {
                *d = base.join(&*d);
            }
        }
        if let Some(inc) = &mut self.cuda_include {
            for p in inc.iter_mut() {
                let written = p.clone();
                if p.is_relative() {
                    *p = base.join(&*p);
                }
                if !p.is_dir() {
                    let what = if p.exists() { "is not a folder" } else { "does not exist" };
                    let relative =
                        if written.is_relative() { format!(" (relative paths start at {})", base.display()) } else { String::new() };
                    return Err(source.error("cuda-include", format!("`{}` {what}{relative}", written.display())));
                }
            }
        }
        Ok(self)
    }
}

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

    /// How to name a kernel crate, for the front end that started the build.
    pub(crate) fn no_crate_help(&self) -> String {
        let table = "add `[package.metadata.ptx]` to the kernel package's Cargo.toml";
        match self {
            Source::Builder(script) => {
                format!("{table}, and give its folder to `.kernel_crate(\"path/to/kernels\")` on the Builder in {}", script.display())
            }
            _ => format!("{table}, or pass its folder: `cargo ptx build path/to/kernels`"),
        }
    }

    /// `invalid `key` in <source>: message`, the one shape every front end's bad value gets.
    pub(crate) fn error(&self, key: &str, message: String) -> Error {
        Error::Option { key: key.replace('_', "-"), source_name: self.to_string(), message }
    }
}

/// Debug or release, as cargo names them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    /// Unoptimised kernels (`default<O0>`, `llc -O0`): for stepping through, slow to run.
    Debug,
    /// Optimised kernels (`default<O3>`).
    #[default]
    Release,
}

impl Profile {
    /// The folder name under `<target-dir>/ptx/`.
    pub fn dir_name(&self) -> &'static str {
        match self {
            Profile::Debug => "debug",
            Profile::Release => "release",
        }
    }
}

impl FromStr for Profile {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s.trim() {
            "release" => Ok(Profile::Release),
            "debug" | "dev" => Ok(Profile::Debug),
            other => Err(format!("`{other}` is not a kernel profile: use `release` or `debug`")),
        }
    }
}

/// A PTX ISA version such as `7.8`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PtxIsa {
    /// `7` of `7.8`.
    pub major: u32,
    /// `8` of `7.8`.
    pub minor: u32,
}

impl PtxIsa {
    /// LLVM's feature name: `ptx78`.
    pub fn llvm_feature(&self) -> String {
        format!("ptx{}{}", self.major, self.minor)
    }
}

impl fmt::Display for PtxIsa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

impl FromStr for PtxIsa {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let bad = || format!("`{s}` is not a PTX ISA version: write MAJOR.MINOR, e.g. `7.8` or `8.0`");
        let (major, minor) = s.trim().split_once('.').ok_or_else(bad)?;
        let major: u32 = major.parse().map_err(|_| bad())?;
        let minor: u32 = minor.parse().map_err(|_| bad())?;
        if !(1..=20).contains(&major) || minor > 9 {
            return Err(bad());
        }
        Ok(PtxIsa { major, minor })
    }
}

/// `opt`'s `-unroll-threshold`: how large (in IR instructions) a loop body may grow by unrolling.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct UnrollThreshold(pub u32);

impl UnrollThreshold {
    /// Beyond this, unrolling only bloats the PTX (and ptxas's time): a typo rather than a choice.
    pub const MAX: u32 = 100_000;
}

impl fmt::Display for UnrollThreshold {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl FromStr for UnrollThreshold {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s.trim().parse::<u32>() {
            Ok(n) if n <= Self::MAX => Ok(UnrollThreshold(n)),
            _ => Err(format!(
                "`{s}` is not an unroll threshold: write a whole number of IR instructions from 0 (no unrolling) to {}, e.g. `2000`",
                Self::MAX
            )),
        }
    }
}

/// A C++ standard nvcc accepts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CudaStd {
    /// `c++03`.
    Cxx03,
    /// `c++11`.
    Cxx11,
    /// `c++14`.
    Cxx14,
    /// `c++17`, nvcc's own default since CUDA 11.
    #[default]
    Cxx17,
    /// `c++20`.
    Cxx20,
}

impl CudaStd {
    /// As nvcc's `-std` takes it.
    pub fn as_str(&self) -> &'static str {
        match self {
            CudaStd::Cxx03 => "c++03",
            CudaStd::Cxx11 => "c++11",
            CudaStd::Cxx14 => "c++14",
            CudaStd::Cxx17 => "c++17",
            CudaStd::Cxx20 => "c++20",
        }
    }
}

impl FromStr for CudaStd {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, String> {
        Ok(match s.trim() {
            "c++03" => CudaStd::Cxx03,
            "c++11" => CudaStd::Cxx11,
            "c++14" => CudaStd::Cxx14,
            "c++17" => CudaStd::Cxx17,
            "c++20" => CudaStd::Cxx20,
            other => return Err(format!("`{other}` is not a standard nvcc knows: use c++11, c++14, c++17 or c++20")),
        })
    }
}

/// One preprocessor definition: `-D NAME` or `-D NAME=VALUE`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Define {
    /// A C identifier.
    pub name: String,
    /// `None` for `-D NAME`.
    pub value: Option<String>,
}

impl Define {
    /// Checks the name; `value` as given.
    pub fn new(name: &str, value: Option<String>) -> std::result::Result<Define, String> {
        let valid =
            name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(format!(
                "`{name}` is not a valid macro name: a C identifier starts with a letter or `_` and holds only letters, digits and `_`"
            ));
        }
        Ok(Define { name: name.to_string(), value })
    }
}

impl FromStr for Define {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s.split_once('=') {
            Some((n, v)) => Define::new(n.trim(), Some(v.to_string())),
            None => Define::new(s.trim(), None),
        }
    }
}

/// One `--arch` item (`sm_80`, `all`, `native`), as clap parses it after splitting at commas.
pub fn parse_arch_request(s: &str) -> std::result::Result<ArchRequest, String> {
    let mut list = parse_arch_list(s)?;
    if list.len() == 1 {
        Ok(list.remove(0))
    } else {
        Err(format!("`{s}` is a list: give one arch per item"))
    }
}

fn parse_arch_list(s: &str) -> std::result::Result<Vec<ArchRequest>, String> {
    arch::parse_list(s).map_err(|e| e.to_string())
}

#[cfg(feature = "clap")]
fn parse_ptx_isa(s: &str) -> std::result::Result<PtxIsa, String> {
    s.parse()
}

#[cfg(feature = "clap")]
fn parse_unroll_threshold(s: &str) -> std::result::Result<UnrollThreshold, String> {
    s.parse()
}

#[cfg(feature = "clap")]
fn parse_cuda_std(s: &str) -> std::result::Result<CudaStd, String> {
    s.parse()
}

#[cfg(feature = "clap")]
fn parse_define(s: &str) -> std::result::Result<Define, String> {
    s.parse()
}

/// `archs`: a list of strings, each an arch or a comma list of archs. A lone string is refused
/// with the list it should be: `archs = "sm_80"` looks like it works and hides a typo's shape.
fn archs_de<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Option<Vec<ArchRequest>>, D::Error> {
    let items = Vec::<String>::deserialize(d).map_err(|_| de::Error::custom("expected a list such as [\"sm_80\", \"sm_90\"]"))?;
    let mut out = Vec::new();
    for item in items {
        out.extend(parse_arch_list(&item).map_err(de::Error::custom)?);
    }
    Ok(Some(out))
}

/// A string parsed with `FromStr`; a number (`ptx-isa = 7.8`) is taken as its text.
fn from_str_de<'de, D: Deserializer<'de>, T: FromStr<Err = String>>(d: D) -> std::result::Result<Option<T>, D::Error> {
    struct V<T>(std::marker::PhantomData<T>);
    impl<T: FromStr<Err = String>> Visitor<'_> for V<T> {
        type Value = T;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a string")
        }
        fn visit_str<E: de::Error>(self, s: &str) -> std::result::Result<T, E> {
            s.parse().map_err(E::custom)
        }
        fn visit_f64<E: de::Error>(self, n: f64) -> std::result::Result<T, E> {
            self.visit_str(&n.to_string())
        }
        fn visit_u64<E: de::Error>(self, n: u64) -> std::result::Result<T, E> {
            self.visit_str(&n.to_string())
        }
        fn visit_i64<E: de::Error>(self, n: i64) -> std::result::Result<T, E> {
            self.visit_str(&n.to_string())
        }
    }
    d.deserialize_any(V(std::marker::PhantomData)).map(Some)
}

/// `cuda-defines`: `{ TILE = 16, FAST = true, OFF = false }` (false leaves a name undefined).
fn defines_de<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Option<Vec<Define>>, D::Error> {
    let table = serde_json::Map::<String, Value>::deserialize(d)
        .map_err(|_| de::Error::custom("expected a table such as { TILE = 16, USE_FAST = true }"))?;
    let mut out = Vec::new();
    for (name, v) in table {
        let value = match v {
            Value::Bool(true) => None,
            Value::Bool(false) => continue,
            Value::String(s) => Some(s),
            Value::Number(n) => Some(n.to_string()),
            other => return Err(de::Error::custom(format!("`{name}`: expected a string, a number or true, found {other}"))),
        };
        out.push(Define::new(&name, value).map_err(de::Error::custom)?);
    }
    Ok(Some(out))
}

/// Close enough to be a typo: one edit apart, or one is a prefix of the other.
fn strsim_close(a: &str, b: &str) -> bool {
    if a.starts_with(b) || b.starts_with(a) {
        return true;
    }
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            cur.push((prev[j] + usize::from(ca != cb)).min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()] <= 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arch::Arch;

    fn parse(json: Value) -> (Result<Options>, Vec<Diagnostic>) {
        let mut w = Vec::new();
        let r = Options::from_metadata(&json, &Source::Package("/k/Cargo.toml".into()), &mut w);
        (r, w)
    }

    #[test]
    fn reads_every_key() {
        let (o, w) = parse(serde_json::json!({
            "archs": ["sm_80", "sm_90a"], "profile": "debug", "toolchain": "nightly-2026-05-19", "features": ["fast"],
            "all-features": false, "no-default-features": true, "ftz": true, "fmad": false, "unroll-threshold": 2000, "ptx-isa": "7.8", "rust": false,
            "cuda-sources": ["k/*.cu"], "cuda-include": ["include"], "cuda-defines": {"TILE": 16, "FAST": true, "OFF": false},
            "nvcc-flags": ["--use_fast_math"], "cuda-std": "c++20", "cuda-gdb": true, "shared-cache": "off", "launcher": "sccache",
            "cuda-libraries": ["cublas"]
        }));
        let o = o.unwrap();
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(o.archs(), vec![ArchRequest::Arch(Arch::sm(80)), ArchRequest::Arch("sm_90a".parse().unwrap())]);
        assert_eq!(o.profile(), Profile::Debug);
        assert_eq!(o.toolchain(), "nightly-2026-05-19");
        assert!(o.ftz() && !o.rust() && o.cuda_gdb() && o.no_default_features());
        assert_eq!(o.ptx_isa.unwrap().llvm_feature(), "ptx78");
        assert!(!o.fmad());
        assert_eq!(o.unroll_threshold(), UnrollThreshold(2000));
        assert_eq!(o.cuda_std(), CudaStd::Cxx20);
        assert_eq!((o.shared_cache().dir(), o.launcher().as_str()), (None, "sccache"));
        assert_eq!(
            o.cuda_defines(),
            vec![Define { name: "FAST".into(), value: None }, Define { name: "TILE".into(), value: Some("16".into()) }]
        );
        // Every declared key was exercised above.
        let set = format!("{o:?}");
        assert!(!set.contains(": None, ") && !set.ends_with(": None }"), "a key is not covered by this test: {set}");
    }

    #[test]
    fn bad_values_name_the_source_and_key() {
        let msg = |j| parse(j).0.unwrap_err().to_string();
        let m = msg(serde_json::json!({"archs": ["sm_8"]}));
        assert!(m.starts_with("invalid `archs` in [package.metadata.ptx] of /k/Cargo.toml: invalid arch `sm_8`"), "{m}");
        let m = msg(serde_json::json!({"archs": "sm_80"}));
        assert!(m.contains("expected a list such as [\"sm_80\", \"sm_90\"]"), "{m}");
        assert!(msg(serde_json::json!({"archs": []})).contains("the list is empty"));
        assert!(msg(serde_json::json!({"ptx-isa": "seven"})).contains("not a PTX ISA version"));
        assert!(msg(serde_json::json!({"ftz": "yes"})).contains("invalid `ftz`"));
        assert!(msg(serde_json::json!({"cuda-std": "c++98"})).contains("not a standard nvcc knows"));
        assert!(msg(serde_json::json!({"cuda-defines": {"1X": 1}})).contains("not a valid macro name"));
        assert!(msg(serde_json::json!({"profile": "fast"})).contains("invalid `profile`"));
        let m = msg(serde_json::json!({"fmad": "fast"}));
        assert!(m.starts_with("invalid `fmad` in [package.metadata.ptx] of /k/Cargo.toml: "), "{m}");
        let m = msg(serde_json::json!({"unroll-threshold": "lots"}));
        assert!(
            m.starts_with("invalid `unroll-threshold` in [package.metadata.ptx] of /k/Cargo.toml: `lots` is not an unroll threshold"),
            "{m}"
        );
        assert!(m.contains("e.g. `2000`"), "{m}");
        assert!(msg(serde_json::json!({"unroll-threshold": 1_000_000})).contains("from 0 (no unrolling) to 100000"));
        assert!(msg(serde_json::json!({"unroll-threshold": -1})).contains("not an unroll threshold"));
    }

    #[test]
    fn unknown_keys_warn_with_a_suggestion() {
        let (o, w) = parse(serde_json::json!({"arch": ["sm_80"], "cuda_std": "c++17"}));
        assert!(o.is_ok());
        assert_eq!(w.len(), 2);
        assert!(w[0].message.contains("unknown key `arch`") && w[0].message.contains("did you mean `archs`?"), "{}", w[0].message);
        assert!(w[1].message.contains("did you mean `cuda-std`?"), "{}", w[1].message);
    }

    #[test]
    fn layers_and_overrides() {
        let top = Options { ftz: Some(true), ..Options::default() };
        let low = Options { ftz: Some(false), toolchain: Some("nightly-x".into()), ..Options::default() };
        assert_eq!(top.overrides(&low), vec!["ftz"]);
        let o = top.or(low);
        assert!(o.ftz());
        assert_eq!(o.toolchain(), "nightly-x");
        assert_eq!(Options::default().profile(), Profile::Release);
    }
}
