//! GPU architectures: parsing `sm_80`, `sm_90a`, `sm_100f`, `compute_80`, lists, `all` and
//! `native`, and checking them against what the found tools support; the target triple. The
//! GPUs of this machine (`native`) are found in `tools::gpu`.

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};

/// The LLVM target Rust kernels are built for.
pub const TARGET: &str = "nvptx64-nvidia-cuda";

/// Compute capabilities NVIDIA has published, as `major * 10 + minor`.
/// Anything else is a typo (`sm_8`, `sm_999`), caught before a tool sees it.
/// Kepler's (30-37) are here though no CUDA 12 or 13 tool builds them: the tools' check then
/// says which CUDA did.
pub const KNOWN: &[u32] = &[30, 32, 35, 37, 50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 88, 89, 90, 100, 101, 103, 110, 120, 121];

/// Arch-specific (`a`, sm_90 and later) and family-specific (`f`, sm_100 and later) variants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Variant {
    /// Runs on this compute capability and the later ones (`sm_80`).
    Plain,
    /// Family-portable: runs on the same major, same or later minor (`sm_100f`).
    Family,
    /// Only the exact compute capability (`sm_90a`).
    Specific,
}

/// One target: real (`sm_XX`: PTX and a cubin) or virtual (`compute_XX`: PTX only, JIT at load).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Arch {
    /// `major * 10 + minor`, e.g. 80 or 100.
    pub capability: u32,
    /// Plain, family (`f`) or arch-specific (`a`).
    pub variant: Variant,
    /// `compute_XX`: PTX only.
    pub virtual_only: bool,
}

impl Arch {
    /// The plain real arch `sm_<capability>`.
    pub fn sm(capability: u32) -> Self {
        Arch { capability, variant: Variant::Plain, virtual_only: false }
    }

    /// The major compute capability: `9` of sm_90.
    pub fn major(&self) -> u32 {
        self.capability / 10
    }

    /// The minor compute capability: `0` of sm_90.
    pub fn minor(&self) -> u32 {
        self.capability % 10
    }

    fn suffix(&self) -> &'static str {
        match self.variant {
            Variant::Plain => "",
            Variant::Family => "f",
            Variant::Specific => "a",
        }
    }

    /// The name LLVM's `-mcpu` and ptxas's `-arch` take for code generation (`sm_90a`).
    pub fn sm_name(&self) -> String {
        format!("sm_{}{}", self.capability, self.suffix())
    }

    /// The virtual arch of the PTX (`compute_90a`).
    pub fn compute_name(&self) -> String {
        format!("compute_{}{}", self.capability, self.suffix())
    }

    /// Whether a cubin is made (`sm_XX`) or only PTX (`compute_XX`).
    pub fn makes_cubin(&self) -> bool {
        !self.virtual_only
    }
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.virtual_only {
            f.write_str(&self.compute_name())
        } else {
            f.write_str(&self.sm_name())
        }
    }
}

/// As its name (`sm_90a`): how artifacts name their arch in JSON.
impl serde::Serialize for Arch {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

const ARCH_HELP: &str = "write `sm_` or `compute_` and the compute capability without the dot, e.g. `sm_80` (A100), `sm_89` (L4, RTX 40xx), `sm_90` (H100/H200), `sm_90a`, `sm_100f`, `compute_80`; or `all`, or `native`";

impl FromStr for Arch {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        parse(s, true)
    }
}

/// `s` as an arch; with `hints`, an error says what a near miss most likely meant (the hints
/// parse respellings without hints of their own).
fn parse(s: &str, hints: bool) -> Result<Arch> {
    let invalid = |reason: String| Error::InvalidArch { arch: s.to_string(), reason, help: ARCH_HELP.to_string() };
    let (virtual_only, rest) = if let Some(rest) = s.strip_prefix("sm_") {
        (false, rest)
    } else if let Some(rest) = s.strip_prefix("compute_") {
        (true, rest)
    } else {
        let meant = respelled(s).filter(|_| hints).map(|a| format!(" (did you mean `{a}`?)")).unwrap_or_default();
        return Err(invalid(format!("an arch starts with `sm_` (a GPU) or `compute_` (PTX only, compiled by the driver){meant}")));
    };
    let prefix = if virtual_only { "compute" } else { "sm" };
    let (digits, variant) = match rest.strip_suffix('a') {
        Some(d) => (d, Variant::Specific),
        None => match rest.strip_suffix('f') {
            Some(d) => (d, Variant::Family),
            None => (rest, Variant::Plain),
        },
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        // `sm_8.0`, `sm_90A`, or two archs with a space where a comma goes.
        let parts: Vec<&str> = s.split_whitespace().collect();
        let meant = if !hints {
            String::new()
        } else if parts.len() > 1 && parts.iter().all(|p| parse(p, false).is_ok()) {
            format!(" (did you mean `{}`? archs are separated by commas)", parts.join(","))
        } else {
            respelled(s).map(|a| format!(" (did you mean `{a}`?)")).unwrap_or_default()
        };
        return Err(invalid(format!("`{digits}` is not a compute capability{meant}")));
    }
    if digits.len() < 2 {
        return Err(invalid(format!("the compute capability needs major and minor digits (`{digits}0`?)")));
    }
    let capability: u32 = digits.parse().map_err(|_| invalid(format!("`{digits}` is not a compute capability")))?;
    if !KNOWN.contains(&capability) {
        let near = nearest_known(capability);
        return Err(invalid(format!(
            "no NVIDIA GPU has compute capability {}.{}{}",
            capability / 10,
            capability % 10,
            near.map(|n| format!(" (did you mean `{prefix}_{n}`?)")).unwrap_or_default()
        )));
    }
    match variant {
        Variant::Specific if capability < 90 => {
            return Err(invalid("arch-specific `a` variants start at sm_90".into()));
        }
        Variant::Family if capability < 100 => {
            return Err(invalid("family `f` variants start at sm_100".into()));
        }
        _ => {}
    }
    Ok(Arch { capability, variant, virtual_only })
}

/// What a near miss (`80`, `sm80`, `SM_80`, `sm-8.0`, `compute80`) most likely means.
fn respelled(s: &str) -> Option<Arch> {
    let lower = s.trim().to_ascii_lowercase();
    let (prefix, rest) = match (lower.strip_prefix("compute"), lower.strip_prefix("sm")) {
        (Some(rest), _) => ("compute_", rest),
        (_, Some(rest)) => ("sm_", rest),
        _ => ("sm_", lower.as_str()),
    };
    let rest: String = rest.trim_start_matches(['_', '-', '.', ' ']).chars().filter(|c| *c != '.').collect();
    let arch = parse(&format!("{prefix}{rest}"), false).ok()?;
    (arch.to_string() != s).then_some(arch)
}

/// Which CUDA release dropped `arch`, for a tool of `release` that cannot build it, as the
/// start of a help text (`CUDA 13 dropped archs below sm_75: build those with a CUDA 12`).
pub(crate) fn dropped_by(arch: Arch, release: Option<(u32, u32)>) -> Option<&'static str> {
    match (arch.capability, release?.0) {
        (c, major) if c < 50 && major >= 12 => {
            Some("CUDA 12 dropped Kepler (sm_35, sm_37; CUDA 11 dropped sm_30): build those with a CUDA 11")
        }
        (c, major) if c < 75 && major >= 13 => Some("CUDA 13 dropped archs below sm_75: build those with a CUDA 12"),
        _ => None,
    }
}

fn nearest_known(capability: u32) -> Option<u32> {
    KNOWN.iter().copied().min_by_key(|k| k.abs_diff(capability)).filter(|k| k.abs_diff(capability) <= 10)
}

/// What the user asked for, before `all` and `native` are resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArchRequest {
    /// One named arch.
    Arch(Arch),
    /// Every arch the found tools support.
    All,
    /// The GPUs of this machine, through the driver.
    Native,
}

/// Parses one `--arch` value: a comma-separated list of archs, `all`, `native`.
pub fn parse_list(s: &str) -> Result<Vec<ArchRequest>> {
    let mut out = Vec::new();
    for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        out.push(match item {
            "all" => ArchRequest::All,
            "native" => ArchRequest::Native,
            other => ArchRequest::Arch(other.parse()?),
        });
    }
    if out.is_empty() {
        return Err(Error::InvalidArch { arch: s.to_string(), reason: "the list is empty".into(), help: ARCH_HELP.to_string() });
    }
    Ok(out)
}

/// The archs a set of tools can compile for: a name list as `llc -mcpu=help` and
/// `ptxas --help` print them.
#[derive(Clone, Debug, Default)]
pub struct Supported {
    /// `sm_XX[a|f]` names, sorted by capability.
    pub names: Vec<String>,
}

impl Supported {
    /// Whether the tools can compile for `arch`.
    pub fn contains(&self, arch: &Arch) -> bool {
        self.names.iter().any(|n| *n == arch.sm_name())
    }

    /// Every plain arch on the list that NVIDIA has published, from Maxwell on: LLVM still
    /// lists Kepler's, which no CUDA 12 or later ptxas assembles.
    pub fn all(&self) -> Vec<Arch> {
        let mut v: Vec<Arch> = self
            .names
            .iter()
            .filter_map(|n| n.parse::<Arch>().ok())
            .filter(|a| a.variant == Variant::Plain && a.capability >= 50)
            .collect();
        v.sort();
        v.dedup();
        v
    }

    /// The plain archs, as a comma list for messages.
    pub fn describe(&self) -> String {
        let plain: Vec<String> = self.all().iter().map(|a| a.to_string()).collect();
        plain.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_form() {
        assert_eq!("sm_80".parse::<Arch>().unwrap(), Arch::sm(80));
        assert_eq!("sm_90a".parse::<Arch>().unwrap().to_string(), "sm_90a");
        assert_eq!("sm_100f".parse::<Arch>().unwrap().variant, Variant::Family);
        let c: Arch = "compute_80".parse().unwrap();
        assert!(c.virtual_only && !c.makes_cubin());
        assert_eq!(c.sm_name(), "sm_80");
        assert_eq!(c.to_string(), "compute_80");
    }

    #[test]
    fn rejects_typos_with_a_reason() {
        let msg = |s: &str| s.parse::<Arch>().unwrap_err().to_string();
        assert!(msg("sm_8").contains("major and minor digits"), "{}", msg("sm_8"));
        assert!(msg("sm_999").contains("no NVIDIA GPU has compute capability 99.9"), "{}", msg("sm_999"));
        assert!(msg("ptx_80").contains("starts with `sm_`"), "{}", msg("ptx_80"));
        assert!(msg("sm_81").contains("did you mean `sm_80`"), "{}", msg("sm_81"));
        assert!(msg("sm_80a").contains("start at sm_90"));
        assert!(msg("sm_90f").contains("start at sm_100"));
        assert!(msg("sm_x0").contains("not a compute capability"));
        // A suggestion keeps the kind the user asked for.
        assert!(msg("compute_81").contains("did you mean `compute_80`"), "{}", msg("compute_81"));
        // Near misses of the spelling.
        for (typed, meant) in [
            ("80", "sm_80"),
            ("sm80", "sm_80"),
            ("SM_80", "sm_80"),
            ("sm-8.0", "sm_80"),
            ("compute90a", "compute_90a"),
            ("Compute_100f", "compute_100f"),
            ("sm_8.0", "sm_80"),
            ("sm_90A", "sm_90a"),
        ] {
            assert!(msg(typed).contains(&format!("(did you mean `{meant}`?)")), "{typed}: {}", msg(typed));
        }
        assert!(!msg("ptx_80").contains("did you mean"), "{}", msg("ptx_80"));
        assert!(msg("sm_80 sm_90").contains("(did you mean `sm_80,sm_90`? archs are separated by commas)"), "{}", msg("sm_80 sm_90"));
        // Kepler's GPUs exist: the tools' check says which CUDA dropped them.
        assert_eq!("sm_35".parse::<Arch>().unwrap(), Arch::sm(35));
        assert!(dropped_by(Arch::sm(35), Some((12, 4))).unwrap().starts_with("CUDA 12 dropped Kepler"));
        assert!(dropped_by(Arch::sm(70), Some((13, 0))).unwrap().starts_with("CUDA 13 dropped archs below sm_75"));
        assert_eq!(dropped_by(Arch::sm(70), Some((12, 8))), None);
    }

    #[test]
    fn lists_all_and_native() {
        let v = parse_list("sm_80, sm_90,all,native").unwrap();
        assert_eq!(v, vec![ArchRequest::Arch(Arch::sm(80)), ArchRequest::Arch(Arch::sm(90)), ArchRequest::All, ArchRequest::Native]);
        assert!(parse_list(",").is_err());
        // `all` of LLVM's list (which still has Kepler's) starts at what CUDA 12 and 13 build.
        let llvm = Supported { names: ["sm_20", "sm_35", "sm_50", "sm_90", "sm_90a"].map(String::from).to_vec() };
        assert_eq!(llvm.describe(), "sm_50, sm_90");
    }
}
