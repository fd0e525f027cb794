//! The options of a kernel build, declared once.
//!
//! Every option is one entry of the list in `options_list!`: its doc, its serde and clap
//! attributes, its type and default, its `CARGO_PTX_*` variable (where it has one) and its
//! [`Builder`](crate::Builder) method. From that one entry come the field of [`Options`] (what
//! `[package.metadata.ptx]` and `[workspace.metadata.ptx]` deserialize into, with kebab-case
//! keys, and what `cargo ptx build` parses its flags into through clap, behind this crate's
//! `clap` feature), the metadata key, the variable's row in [`ENV_VARS`], the Builder method,
//! and the field of the resolved [`Config`]. So every option has one name, one meaning and one
//! default, whichever front end sets it, and adding one is one entry.
//!
//! Every field of [`Options`] is an `Option`: unset means "ask the layer below". The layers,
//! highest first: the command line or the Builder, then `CARGO_PTX_*` environment variables,
//! then the package's metadata, then the workspace's, then the defaults listed on each field.
//! An option without a default stays `None` in the [`Config`] when no layer sets it (`archs`:
//! the GPUs of this machine; `ptx-isa`: the lowest the arch allows).

mod source;
mod values;

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use crate::arch::ArchRequest;
use crate::diag::Diagnostic;
use crate::error::Result;

pub use source::Source;
use values::{archs_de, defines_de, file_archs_de, file_globs_de, from_str_de, FromEnv};
pub(crate) use values::{file_glob, parse_arch_list, parse_file_glob};
pub use values::{
    parse_arch_request, CudaStd, Define, FileArchs, Prebuilt, Profile, PtxIsa, SharedCacheSetting, UnrollThreshold, UntypedKernels,
};
#[cfg(feature = "clap")]
use values::{parse_cuda_std, parse_define, parse_file_archs, parse_ptx_isa, parse_shared_cache, parse_unroll_threshold};

/// Calls `$m!` with the list of every option. Each entry:
///
/// ```text
/// /// Docs (the field's, the flag's help and the Builder method's).
/// #[serde(..)] #[cfg_attr(feature = "clap", arg(..))]
/// key: Type [= default],            // no default: unset means "decided elsewhere"
///     [env "CARGO_PTX_VAR",]        // the variable that sets it, read with `FromEnv`
///     builder method(args) set|push|extend VALUE;
/// ```
///
/// `VALUE` is a `Result<_, String>` over the method's arguments: `set` stores it, `push` adds
/// one item to a list option, `extend` several; an `Err` is the option's error, reported by
/// `Builder::build` (a setter cannot fail).
macro_rules! options_list {
    ($m:ident) => {
        $m! {
            /// GPU archs: `sm_80`, `sm_90a`, `sm_100f`, `compute_80` (PTX only), comma lists, `all`,
            /// `native` [default: the GPUs of this machine].
            #[serde(deserialize_with = "archs_de", default)]
            #[cfg_attr(feature = "clap", arg(long = "arch", value_name = "ARCH", value_delimiter = ',', value_parser = parse_arch_request, help_heading = "Kernel options"))]
            archs: Vec<ArchRequest>,
                env "CARGO_PTX_ARCH",
                builder arch(arch: impl AsRef<str>) extend $crate::options::parse_arch_list(arch.as_ref());

            /// The kernels' profile: `release` (optimised, `default<O3>`) or `debug` (unoptimised, for
            /// stepping through) [default: release]. Artifacts go under `ptx/<profile>/`.
            #[cfg_attr(feature = "clap", arg(long, value_name = "PROFILE", value_enum, help_heading = "Kernel options"))]
            profile: Profile = Profile::Release,
                env "CARGO_PTX_PROFILE",
                builder profile(profile: $crate::options::Profile) set Ok(profile);

            /// The rustup toolchain for Rust kernels [default: nightly].
            #[cfg_attr(feature = "clap", arg(long, value_name = "NAME", help_heading = "Kernel options"))]
            toolchain: String = $crate::tools::DEFAULT_TOOLCHAIN.to_string(),
                env "CARGO_PTX_TOOLCHAIN",
                builder toolchain(name: impl Into<String>) set Ok(name.into());

            /// Features of the kernel crate to enable.
            #[cfg_attr(feature = "clap", arg(short = 'F', long, value_name = "FEATURES", value_delimiter = ',', help_heading = "Kernel options"))]
            features: Vec<String> = Vec::new(),
                builder feature(name: impl Into<String>) push Ok(name.into());

            /// Enable every feature of the kernel crate [default: false].
            #[cfg_attr(feature = "clap", arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true", help_heading = "Kernel options"))]
            all_features: bool = false,
                builder all_features(yes: bool) set Ok(yes);

            /// Do not enable the kernel crate's `default` feature [default: false].
            #[cfg_attr(feature = "clap", arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true", help_heading = "Kernel options"))]
            no_default_features: bool = false,
                builder no_default_features(yes: bool) set Ok(yes);

            /// Flush denormals to zero, in libdevice (`__CUDA_FTZ`) and nvcc (`-ftz=true`) [default: false].
            #[cfg_attr(feature = "clap", arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true", help_heading = "Kernel options"))]
            ftz: bool = false,
                builder ftz(yes: bool) set Ok(yes);

            /// Contract `a * b + c` into one fused multiply-add, as nvcc's `-fmad` (Rust: LLVM's
            /// `contract` flag on the crate's float operations, libdevice left alone as nvcc leaves it;
            /// CUDA C++: `nvcc -fmad=true|false`) [default: true, nvcc's default:
            /// the same source gives the same results and speed in both languages].
            #[cfg_attr(feature = "clap", arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true", help_heading = "Kernel options"))]
            fmad: bool = true,
                builder fmad(yes: bool) set Ok(yes);

            /// Loop-unrolling budget of `opt` for Rust kernels (`-unroll-threshold`, in IR
            /// instructions): loops with a constant trip count up to this size unroll completely
            /// [default: 1500, what nvcc's build unrolls; `300` is LLVM's own].
            #[serde(deserialize_with = "from_str_de", default)]
            #[cfg_attr(feature = "clap", arg(long, value_name = "N", value_parser = parse_unroll_threshold, help_heading = "Kernel options"))]
            unroll_threshold: UnrollThreshold,
                builder unroll_threshold(threshold: u32) set threshold.to_string().parse::<$crate::options::UnrollThreshold>();

            /// Pin the PTX ISA version of Rust kernels, e.g. `7.8` [default: the lowest the arch allows].
            #[serde(deserialize_with = "from_str_de", default)]
            #[cfg_attr(feature = "clap", arg(long, value_name = "X.Y", value_parser = parse_ptx_isa, help_heading = "Kernel options"))]
            ptx_isa: PtxIsa,
                builder ptx_isa(version: impl AsRef<str>) set version.as_ref().parse::<$crate::options::PtxIsa>();

            /// Whether the crate's lib target holds Rust kernels [default: true]; `false` for a crate of
            /// CUDA C++ alone.
            #[cfg_attr(feature = "clap", arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true", help_heading = "Kernel options"))]
            rust: bool = true,
                builder rust(yes: bool) set Ok(yes);

            /// CUDA C++ files, globs relative to the package [default: `cuda/**/*.cu` when `cuda/` exists].
            #[cfg_attr(feature = "clap", arg(long, value_name = "GLOB", help_heading = "CUDA C++ options"))]
            cuda_sources: Vec<String>,
                builder cuda_sources(glob: impl Into<String>) push Ok(glob.into());

            /// CUDA C++ files to leave out of what `cuda-sources`, `Builder::cuda` and
            /// `Builder::cuda_static_lib` match (cudaforge's `exclude`): globs relative to the
            /// package, where a glob without `/` matches file names anywhere (`*_dummy.cu`). A glob
            /// that matches no file is a warning.
            #[serde(deserialize_with = "file_globs_de", default)]
            #[cfg_attr(feature = "clap", arg(long, value_name = "GLOB", value_parser = parse_file_glob, help_heading = "CUDA C++ options"))]
            cuda_exclude: Vec<String> = Vec::new(),
                builder cuda_exclude(glob: impl AsRef<str>) push $crate::options::parse_file_glob(glob.as_ref());

            /// `-I` folders for nvcc, relative to the package (in metadata), to the current folder (on
            /// the command line) or to the host crate (in a Builder). `cargo ptx check` looks there for
            /// the headers whose inline PTX it checks.
            #[cfg_attr(feature = "clap", arg(short = 'I', long, visible_alias = "include", value_name = "DIR", help_heading = "CUDA C++ options"))]
            cuda_include: Vec<std::path::PathBuf> = Vec::new(),
                builder cuda_include(dir: impl Into<std::path::PathBuf>) push Ok(dir.into());

            /// Preprocessor definitions for nvcc: `NAME` or `NAME=VALUE` (metadata: a table,
            /// `{ TILE = 16, FAST = true }`).
            #[serde(deserialize_with = "defines_de", default)]
            #[cfg_attr(feature = "clap", arg(short = 'D', long, value_name = "NAME[=VALUE]", value_parser = parse_define, help_heading = "CUDA C++ options"))]
            cuda_defines: Vec<Define> = Vec::new(),
                builder cuda_define(name: impl AsRef<str>, value: Option<&str>) push $crate::options::Define::new(name.as_ref(), value.map(str::to_string));

            /// Extra nvcc flags, passed as they are (`--use_fast_math`).
            #[cfg_attr(feature = "clap", arg(long = "nvcc-flag", value_name = "FLAG", allow_hyphen_values = true, help_heading = "CUDA C++ options"))]
            nvcc_flags: Vec<String> = Vec::new(),
                builder nvcc_flag(flag: impl Into<String>) push Ok(flag.into());

            /// The C++ standard for nvcc's `-std` [default: c++17].
            #[serde(deserialize_with = "from_str_de", default)]
            #[cfg_attr(feature = "clap", arg(long, value_name = "STD", value_parser = parse_cuda_std, help_heading = "CUDA C++ options"))]
            cuda_std: CudaStd = CudaStd::default(),
                builder cuda_std(std: impl AsRef<str>) set std.as_ref().parse::<$crate::options::CudaStd>();

            /// CUDA C++ for cuda-gdb: nvcc `-G` (device debug info, optimisations off) instead of
            /// `-lineinfo` [default: false]. Independent of `profile`, which is about Rust kernels' LLVM
            /// pipeline and the artifact folder.
            #[cfg_attr(feature = "clap", arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true", help_heading = "CUDA C++ options"))]
            cuda_gdb: bool = false,
                builder cuda_gdb(yes: bool) set Ok(yes);

            /// CUDA libraries whose headers the .cu files include (`["cublas"]`): `cargo ptx setup`
            /// installs them, and a build without them stops before nvcc, naming the setup command.
            #[cfg_attr(feature = "clap", arg(long = "cuda-library", value_name = "NAME", value_delimiter = ',', help_heading = "CUDA C++ options"))]
            cuda_libraries: Vec<String> = Vec::new(),
                builder cuda_library(name: impl Into<String>) push Ok(name.into());

            /// The shared step cache: a folder, or `off` [default: `steps/` in the cargo-ptx cache
            /// folder]. Link, llc, ptxas and nvcc outputs land there keyed by content, tool versions and
            /// flags, so another checkout or target dir on the machine starts no tool for them.
            #[serde(deserialize_with = "from_str_de", default)]
            #[cfg_attr(feature = "clap", arg(long, value_name = "DIR|off", value_parser = parse_shared_cache, help_heading = "Cache options"))]
            shared_cache: SharedCacheSetting = SharedCacheSetting::Default,
                env "CARGO_PTX_CACHE_DIR",
                builder shared_cache(dir: Option<impl Into<std::path::PathBuf>>) set Ok(match dir {
                    Some(d) => $crate::options::SharedCacheSetting::Dir(d.into()),
                    None => $crate::options::SharedCacheSetting::Off,
                });

            /// A compiler launcher for nvcc and ptxas, e.g. `sccache` [default: none].
            #[cfg_attr(feature = "clap", arg(long, value_name = "PROGRAM", help_heading = "Cache options"))]
            launcher: String,
                env "CARGO_PTX_LAUNCHER",
                builder launcher(program: impl Into<String>) set Ok(program.into());

            /// Kernels a build script embeds without a typed launch method (a parameter with no host
            /// type, a template over a template): `warn` prints one line per module with their count and
            /// the file in `OUT_DIR` that lists each with its line and reason; `allow` accepts them
            /// silently [default: warn]. `CARGO_PTX_VERBOSE=1` prints the whole list.
            #[cfg_attr(feature = "clap", arg(long, value_name = "WARN|ALLOW", value_enum, help_heading = "Kernel options"))]
            untyped_kernels: UntypedKernels = UntypedKernels::Warn,
                env "CARGO_PTX_UNTYPED_KERNELS",
                builder untyped_kernels(what: $crate::options::UntypedKernels) set Ok(what);
            /// Per-file archs: the .cu files a glob matches (relative to the package; a glob without
            /// `/` matches file names anywhere) are built for these archs instead of `archs`, in PTX
            /// modules and static libraries alike (metadata: a table, `{ "cuda/moe/*.cu" = ["sm_80",
            /// "sm_90"] }`; command line and `CARGO_PTX_CUDA_FILE_ARCHS`: `GLOB=ARCH,ARCH`, items
            /// separated by `;` in the variable). A glob that matches no file is a warning.
            #[serde(deserialize_with = "file_archs_de", default)]
            #[cfg_attr(feature = "clap", arg(long = "cuda-file-archs", value_name = "GLOB=ARCHS", value_parser = parse_file_archs, help_heading = "CUDA C++ options"))]
            cuda_file_archs: Vec<FileArchs> = Vec::new(),
                env "CARGO_PTX_CUDA_FILE_ARCHS",
                builder cuda_file_archs(glob: impl AsRef<str>, archs: impl AsRef<str>) push $crate::options::FileArchs::new(glob.as_ref(), archs.as_ref());
            /// When a Builder embeds the prebuilt kernels its package ships (`prebuilt/`, written by
            /// `cargo ptx package`): `auto` uses them when their key (sources and options) matches and
            /// otherwise builds from source where the tools are, `always` never builds, `never` never
            /// reads them [default: auto].
            #[serde(deserialize_with = "from_str_de", default)]
            #[cfg_attr(feature = "clap", arg(long, value_name = "WHEN", value_enum, help_heading = "Kernel options"))]
            prebuilt: Prebuilt = Prebuilt::Auto,
                env "CARGO_PTX_PREBUILT",
                builder prebuilt(policy: $crate::options::Prebuilt) set Ok(policy);
        }
    };
}
pub(crate) use options_list;

/// The resolved type of an option: its own type when it has a default, else `Option` of it.
macro_rules! resolved_type {
    ($ty:ty) => { Option<$ty> };
    ($ty:ty, $default:expr) => { $ty };
}

/// The resolved value of an option that `$value` (an `Option`) holds.
macro_rules! resolved_value {
    ($value:expr) => {
        $value
    };
    ($value:expr, $default:expr) => {
        $value.unwrap_or_else(|| $default)
    };
}

/// What [`options_list!`] declares, as [`Options`], [`Config`] and [`ENV_VARS`].
macro_rules! define_options {
    ($(
        $(#[$($attr:tt)*])*
        $field:ident : $ty:ty $(= $default:expr)?,
            $(env $env:literal,)?
            builder $setter:ident ( $($arg:ident : $argty:ty),* ) $how:ident $value:expr;
    )*) => {
        /// How kernels are built: `[package.metadata.ptx]`, `cargo ptx build` flags and
        /// [`Builder`](crate::Builder) methods, one declaration (see the [module docs](self)).
        #[derive(Clone, Debug, Default, PartialEq, Deserialize)]
        #[cfg_attr(feature = "clap", derive(clap::Args))]
        #[serde(rename_all = "kebab-case", deny_unknown_fields)]
        #[non_exhaustive]
        pub struct Options {
            $( $(#[$($attr)*])* pub $field: Option<$ty>, )*
        }

        /// A kernel crate's options with every layer applied and the defaults filled in; an
        /// option without a default is `None` when no layer sets it.
        #[derive(Clone, Debug, PartialEq)]
        #[non_exhaustive]
        pub struct Config {
            $(
                #[doc = concat!("`", stringify!($field), "`, resolved (see [`Options::", stringify!($field), "`]).")]
                pub $field: resolved_type!($ty $(, $default)?),
            )*
        }

        /// The environment variables that set options, with the key each sets. Read by both
        /// front ends, below their own flags or methods and above the metadata.
        pub const ENV_VARS: &[(&str, &str)] = &[$( $(($env, stringify!($field)),)? )*];

        impl Options {
            /// The metadata keys, as [`Options`]' fields name them (`[package.metadata.ptx]`
            /// spells them with `-` for `_`).
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

            /// Each option set here, as `(key, value)` in declaration order (the value as `Debug`
            /// prints it): what a prebuilt set's key records.
            pub fn set_values(&self) -> Vec<(&'static str, String)> {
                let mut out = Vec::new();
                $( if let Some(v) = &self.$field { out.push((stringify!($field), format!("{v:?}"))); } )*
                out
            }

            /// The options with the defaults filled in.
            pub fn resolve(&self) -> Config {
                Config { $( $field: resolved_value!(self.$field.clone() $(, $default)?), )* }
            }

            /// The `CARGO_PTX_*` layer: a bad value is an error that names the variable.
            pub fn from_env() -> Result<Options> {
                Options::from_vars(|var| std::env::var(var).ok())
            }

            /// The layer of [`ENV_VARS`] as `get` reads them (an empty value is unset).
            pub fn from_vars(get: impl Fn(&str) -> Option<String>) -> Result<Options> {
                let mut o = Options::default();
                $($(
                    if let Some(value) = get($env).filter(|v| !v.trim().is_empty()) {
                        let parsed = <$ty as FromEnv>::from_env(&value).map_err(|m| Source::Env($env).error(stringify!($field), m))?;
                        o.$field = Some(parsed);
                    }
                )?)*
                Ok(o)
            }
        }
    };
}

options_list!(define_options);

impl Options {
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
        if let Some(unknown) =
            self.cuda_libraries.iter().flatten().find(|l| !crate::tools::CUDA_LIBRARIES.iter().any(|c| c.name == l.as_str()))
        {
            let known: Vec<&str> = crate::tools::CUDA_LIBRARIES.iter().map(|c| c.name).collect();
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

impl Default for Config {
    fn default() -> Self {
        Options::default().resolve()
    }
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
            "cuda-sources": ["k/*.cu"], "cuda-exclude": ["*_dummy.cu"], "cuda-include": ["include"], "cuda-defines": {"TILE": 16, "FAST": true, "OFF": false},
            "nvcc-flags": ["--use_fast_math"], "cuda-std": "c++20", "cuda-gdb": true, "shared-cache": "off", "launcher": "sccache",
            "cuda-libraries": ["cublas"], "untyped-kernels": "allow", "cuda-file-archs": {"cuda/moe/*.cu": ["sm_80", "sm_90"], "*_wmma.cu": "sm_80"},
            "prebuilt": "never"
        }));
        let set = o.unwrap();
        let o = set.resolve();
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(o.archs.clone().unwrap(), vec![ArchRequest::Arch(Arch::sm(80)), ArchRequest::Arch("sm_90a".parse().unwrap())]);
        assert_eq!(o.profile, Profile::Debug);
        assert_eq!(o.toolchain, "nightly-2026-05-19");
        assert!(o.ftz && !o.rust && o.cuda_gdb && o.no_default_features);
        assert_eq!(o.ptx_isa.unwrap().llvm_feature(), "ptx78");
        assert!(!o.fmad);
        assert_eq!(o.unroll_threshold, Some(UnrollThreshold(2000)));
        assert_eq!(o.cuda_std, CudaStd::Cxx20);
        assert_eq!(o.untyped_kernels, UntypedKernels::Allow);
        assert_eq!((o.shared_cache.dir(), o.launcher.as_deref()), (None, Some("sccache")));
        assert_eq!(
            o.cuda_defines,
            vec![Define { name: "FAST".into(), value: None }, Define { name: "TILE".into(), value: Some("16".into()) }]
        );
        let globs: Vec<&str> = o.cuda_file_archs.iter().map(|f| f.glob.as_str()).collect();
        assert_eq!(globs, ["*_wmma.cu", "cuda/moe/*.cu"], "in glob order");
        assert_eq!(o.cuda_file_archs[1].archs.len(), 2);
        assert_eq!(o.cuda_exclude, ["*_dummy.cu"]);
        // Every declared key was exercised above.
        let set = format!("{set:?}");
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
        assert!(msg(serde_json::json!({"archs": [""]})).contains("the list is empty"));
        let (skipped, _) = parse(serde_json::json!({"archs": ["sm_80", "", "sm_90,"]}));
        assert_eq!(skipped.unwrap().archs.unwrap().len(), 2, "empty items are skipped");
        assert!(msg(serde_json::json!({"ptx-isa": "seven"})).contains("not a PTX ISA version"));
        assert!(msg(serde_json::json!({"ftz": "yes"})).contains("invalid `ftz`"));
        assert!(msg(serde_json::json!({"cuda-std": "c++98"})).contains("not a standard nvcc knows"));
        assert!(msg(serde_json::json!({"cuda-defines": {"1X": 1}})).contains("not a valid macro name"));
        assert!(msg(serde_json::json!({"profile": "fast"})).contains("invalid `profile`"));
        let m = msg(serde_json::json!({"untyped-kernels": "deny"}));
        assert!(m.starts_with("invalid `untyped-kernels` in [package.metadata.ptx] of /k/Cargo.toml: "), "{m}");
        let m = msg(serde_json::json!({"prebuilt": "sometimes"}));
        assert!(
            m.starts_with("invalid `prebuilt` in [package.metadata.ptx] of /k/Cargo.toml: `sometimes` is not a prebuilt policy: use `auto`, `always` or `never`"),
            "{m}"
        );
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
        let m = msg(serde_json::json!({"cuda-file-archs": {"moe/*.cu": ["sm_8"]}}));
        assert!(
            m.starts_with("invalid `cuda-file-archs` in [package.metadata.ptx] of /k/Cargo.toml: `moe/*.cu`: invalid arch `sm_8`"),
            "{m}"
        );
        assert!(msg(serde_json::json!({"cuda-file-archs": {"moe/*.cu": []}})).contains("the arch list is empty"));
        assert!(msg(serde_json::json!({"cuda-file-archs": {"moe/[.cu": ["sm_80"]}})).contains("`moe/[.cu` is not a valid glob"));
        assert!(msg(serde_json::json!({"cuda-file-archs": ["sm_80"]})).contains("expected a table such as"));
    }

    #[test]
    fn file_archs_match_paths_and_bare_file_names() {
        let f: FileArchs = "cuda/moe/*.cu=sm_80,sm_90".parse().unwrap();
        assert!(f.matches(Path::new("cuda/moe/moe_wmma.cu")));
        assert!(!f.matches(Path::new("cuda/moe/deep/x.cu")), "`*` stays in one folder");
        assert!(!f.matches(Path::new("cuda/other.cu")));
        let bare: FileArchs = "*_wmma.cu=sm_80".parse().unwrap();
        assert!(bare.matches(Path::new("cuda/moe/moe_wmma.cu")), "a glob without `/` matches the file name");
        assert!("cuda/*.cu".parse::<FileArchs>().unwrap_err().contains("has no arch list"));
        let two = <Vec<FileArchs> as FromEnv>::from_env("a/*.cu=sm_80;b.cu=sm_90,sm_100").unwrap();
        assert_eq!((two.len(), two[1].archs.len()), (2, 2));
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
        assert!(o.resolve().ftz);
        assert_eq!(o.resolve().toolchain, "nightly-x");
        assert_eq!(Options::default().resolve().profile, Profile::Release);
    }
}
