//! The value types of options, each parsed from text one way for every front end (`FromStr`
//! for flags, variables and Builder strings; the serde helpers below for metadata).

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use serde_json::Value;

use crate::arch::{self, ArchRequest};

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
            SharedCacheSetting::Default => crate::tools::home().map(|h| h.join("steps")),
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
pub(crate) fn parse_shared_cache(s: &str) -> std::result::Result<SharedCacheSetting, String> {
    s.parse()
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

/// What a build script says of kernels that get no typed launch method.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum UntypedKernels {
    /// One warning line per module: how many, and the file in `OUT_DIR` that lists them.
    #[default]
    Warn,
    /// Nothing: they are known and launched by name (the list is still written).
    Allow,
}

impl FromStr for UntypedKernels {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s.trim() {
            "warn" => Ok(UntypedKernels::Warn),
            "allow" => Ok(UntypedKernels::Allow),
            other => Err(format!("`{other}` is not a setting for untyped kernels: use `warn` or `allow`")),
        }
    }
}

/// When a Builder embeds the prebuilt kernels shipped in its package (`prebuilt/`, written by
/// `cargo ptx package`) instead of building them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Prebuilt {
    /// The set when its key (sources and options) matches; otherwise a build from source when
    /// the tools are here (one warning line says why), else an error.
    #[default]
    Auto,
    /// The set or an error: never a build from source.
    Always,
    /// Always a build from source; the set is not read.
    Never,
}

impl FromStr for Prebuilt {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s.trim() {
            "auto" => Ok(Prebuilt::Auto),
            "always" => Ok(Prebuilt::Always),
            "never" => Ok(Prebuilt::Never),
            other => Err(format!("`{other}` is not a prebuilt policy: use `auto`, `always` or `never`")),
        }
    }
}

impl fmt::Display for Prebuilt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Prebuilt::Auto => "auto",
            Prebuilt::Always => "always",
            Prebuilt::Never => "never",
        })
    }
}

impl FromEnv for Prebuilt {
    fn from_env(text: &str) -> std::result::Result<Self, String> {
        text.parse()
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
            // `-DNAME=3` or `NAME=3` given as the name: say which part is which.
            let bare = name.strip_prefix("-D").unwrap_or(name);
            let (bare_name, bare_value) = bare.split_once('=').map_or((bare, None), |(n, v)| (n, Some(v)));
            let apart = match bare_value {
                Some(v) if bare_name != name => format!(" (the name alone is `{bare_name}`, and `{v}` its value)"),
                None if bare_name != name => format!(" (the name alone is `{bare_name}`)"),
                _ => String::new(),
            };
            return Err(format!(
                "`{name}` is not a valid macro name: a C identifier starts with a letter or `_` and holds only letters, digits and `_`{apart}"
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
/// clap's message already says "invalid value 'sm80' for `'--arch <ARCH>'`": the reason follows
/// without saying it again.
pub fn parse_arch_request(s: &str) -> std::result::Result<ArchRequest, String> {
    let mut list = arch::parse_list(s).map_err(|e| match e {
        crate::Error::InvalidArch { reason, help, .. } => format!("{reason}\n  help: {help}"),
        other => other.to_string(),
    })?;
    if list.len() == 1 {
        Ok(list.remove(0))
    } else {
        Err(format!("`{s}` is a list: give one arch per item"))
    }
}

pub(crate) fn parse_arch_list(s: &str) -> std::result::Result<Vec<ArchRequest>, String> {
    arch::parse_list(s).map_err(|e| e.to_string())
}

#[cfg(feature = "clap")]
pub(crate) fn parse_ptx_isa(s: &str) -> std::result::Result<PtxIsa, String> {
    s.parse()
}

#[cfg(feature = "clap")]
pub(crate) fn parse_unroll_threshold(s: &str) -> std::result::Result<UnrollThreshold, String> {
    s.parse()
}

#[cfg(feature = "clap")]
pub(crate) fn parse_cuda_std(s: &str) -> std::result::Result<CudaStd, String> {
    s.parse()
}

#[cfg(feature = "clap")]
pub(crate) fn parse_define(s: &str) -> std::result::Result<Define, String> {
    s.parse()
}

/// `archs`: a list of strings, each an arch or a comma list of archs. A lone string is refused
/// with the list it should be: `archs = "sm_80"` looks like it works and hides a typo's shape.
pub(crate) fn archs_de<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Option<Vec<ArchRequest>>, D::Error> {
    let items = Vec::<String>::deserialize(d).map_err(|_| de::Error::custom("expected a list such as [\"sm_80\", \"sm_90\"]"))?;
    let mut out = Vec::new();
    // An empty item ("") is skipped, as in `--arch sm_80,,sm_90`; an empty list is refused.
    for item in items.iter().filter(|i| !i.trim().is_empty()) {
        out.extend(parse_arch_list(item).map_err(de::Error::custom)?);
    }
    Ok(Some(out))
}

/// A string parsed with `FromStr`; a number (`ptx-isa = 7.8`) is taken as its text.
pub(crate) fn from_str_de<'de, D: Deserializer<'de>, T: FromStr<Err = String>>(d: D) -> std::result::Result<Option<T>, D::Error> {
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
pub(crate) fn defines_de<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Option<Vec<Define>>, D::Error> {
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

/// A value that a `CARGO_PTX_*` variable can set, read from the variable's text as the command
/// line reads the flag.
pub(crate) trait FromEnv: Sized {
    fn from_env(text: &str) -> std::result::Result<Self, String>;
}

impl FromEnv for Vec<ArchRequest> {
    fn from_env(text: &str) -> std::result::Result<Self, String> {
        parse_arch_list(text)
    }
}

impl FromEnv for String {
    fn from_env(text: &str) -> std::result::Result<Self, String> {
        Ok(text.to_string())
    }
}

impl FromEnv for Profile {
    fn from_env(text: &str) -> std::result::Result<Self, String> {
        text.parse()
    }
}

impl FromEnv for UntypedKernels {
    fn from_env(text: &str) -> std::result::Result<Self, String> {
        text.parse()
    }
}

impl FromEnv for SharedCacheSetting {
    fn from_env(text: &str) -> std::result::Result<Self, String> {
        text.parse()
    }
}

/// One `cuda-file-archs` entry: the .cu files a glob matches are built for these archs instead
/// of the crate's (cudaforge's per-file override: a file that needs sm_80+ in a crate also built
/// for sm_75).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileArchs {
    /// Relative to the package folder (`cuda/moe/*.cu`); a glob without `/` matches file names
    /// in any folder (`*_wmma.cu`).
    pub glob: String,
    /// The archs those files are built for.
    pub archs: Vec<ArchRequest>,
}

impl FileArchs {
    /// Checks the glob and the list.
    pub fn new(glob: &str, archs: &str) -> std::result::Result<FileArchs, String> {
        let glob = glob.trim();
        if glob.is_empty() {
            return Err(format!("`={archs}` names no files: write `GLOB=ARCHS`, e.g. `cuda/moe/*.cu=sm_80,sm_90`"));
        }
        file_glob(glob)?;
        if archs.split(',').all(|a| a.trim().is_empty()) {
            return Err(format!("`{glob}`: the arch list is empty: name at least one arch, e.g. `{glob}=sm_80`"));
        }
        let archs = parse_arch_list(archs).map_err(|e| format!("`{glob}`: {e}"))?;
        Ok(FileArchs { glob: glob.to_string(), archs })
    }

    /// Whether `rel`, a path relative to the package folder, is one of the files.
    pub fn matches(&self, rel: &std::path::Path) -> bool {
        file_glob(&self.glob).is_ok_and(|g| g.matches(rel))
    }
}

/// A glob naming files of a package (`cuda-file-archs`, `cuda-exclude`): relative to the package
/// folder (`cuda/moe/*.cu`), or, without `/`, file names in any folder (`*_wmma.cu`).
pub(crate) struct FileGlob<'a> {
    glob: &'a str,
    pattern: glob::Pattern,
}

/// `glob` checked, as a [`FileGlob`]; a bad one is the error message.
pub(crate) fn file_glob(glob: &str) -> std::result::Result<FileGlob<'_>, String> {
    let pattern = glob::Pattern::new(glob).map_err(|e| format!("`{glob}` is not a valid glob: {e}"))?;
    Ok(FileGlob { glob, pattern })
}

impl FileGlob<'_> {
    /// Whether `rel`, a path relative to the package folder, is one of the files.
    pub(crate) fn matches(&self, rel: &std::path::Path) -> bool {
        let opts = glob::MatchOptions { require_literal_separator: true, ..glob::MatchOptions::new() };
        self.pattern.matches_path_with(rel, opts)
            || (!self.glob.contains('/') && rel.file_name().is_some_and(|n| self.pattern.matches_with(&n.to_string_lossy(), opts)))
    }
}

impl FromStr for FileArchs {
    type Err = String;

    /// `GLOB=ARCH,ARCH`, as the command line and `CARGO_PTX_CUDA_FILE_ARCHS` write it.
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s.rsplit_once('=') {
            Some((g, a)) => FileArchs::new(g, a),
            None => Err(format!("`{s}` has no arch list: write `GLOB=ARCHS`, e.g. `cuda/moe/*.cu=sm_80,sm_90`")),
        }
    }
}

#[cfg(feature = "clap")]
pub(crate) fn parse_file_archs(s: &str) -> std::result::Result<FileArchs, String> {
    s.parse()
}

/// A `cuda-exclude` glob, checked: what the command line, the Builder and metadata take.
pub(crate) fn parse_file_glob(s: &str) -> std::result::Result<String, String> {
    file_glob(s).map(|_| s.to_string())
}

/// `cuda-exclude`: a list of globs, each checked.
pub(crate) fn file_globs_de<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Option<Vec<String>>, D::Error> {
    let globs = Vec::<String>::deserialize(d).map_err(|_| de::Error::custom("expected a list of globs such as [\"*_dummy.cu\"]"))?;
    globs.iter().map(|g| parse_file_glob(g)).collect::<std::result::Result<_, _>>().map(Some).map_err(de::Error::custom)
}

/// `cuda-file-archs`: a table from glob to arch list, `{ "cuda/moe/*.cu" = ["sm_80", "sm_90"] }`,
/// in glob order.
pub(crate) fn file_archs_de<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Option<Vec<FileArchs>>, D::Error> {
    let table = serde_json::Map::<String, Value>::deserialize(d)
        .map_err(|_| de::Error::custom("expected a table such as { \"cuda/moe/*.cu\" = [\"sm_80\", \"sm_90\"] }"))?;
    let mut out = Vec::new();
    for (glob, v) in table {
        let items: Vec<String> = match v {
            Value::Array(items) => items.into_iter().map(|i| i.as_str().map(str::to_string)).collect::<Option<_>>(),
            Value::String(s) => Some(vec![s]),
            _ => None,
        }
        .ok_or_else(|| de::Error::custom(format!("`{glob}`: expected a list of archs such as [\"sm_80\", \"sm_90\"]")))?;
        out.push(FileArchs::new(&glob, &items.join(",")).map_err(de::Error::custom)?);
    }
    out.sort_by(|a, b| a.glob.cmp(&b.glob));
    Ok(Some(out))
}

/// `GLOB=ARCHS` items separated by `;` (a comma separates archs).
impl FromEnv for Vec<FileArchs> {
    fn from_env(text: &str) -> std::result::Result<Self, String> {
        text.split(';').filter(|s| !s.trim().is_empty()).map(str::parse).collect()
    }
}
