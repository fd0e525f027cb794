//! The host C++ compiler nvcc runs (`-ccbin`, as `cc` picks it: `CXX`, else `c++`). nvcc
//! preprocesses every .cu file with it, for PTX too, and compiles a static library's host code
//! with it. nvcc checks the compiler's version first (`crt/host_config.h`: nvcc 13.0 takes gcc up
//! to 15 and clang 3.3 to 20) and stops with `#error -- unsupported GNU version!` otherwise,
//! unless it is given `-allow-unsupported-compiler`.
//!
//! [`host_compiler`] asks nvcc as a build would: `nvcc -E` of an empty .cu file with the build's
//! `-ccbin` (0.1 s; nvcc includes that header before anything else), in the build's environment
//! (`NVCC_PREPEND_FLAGS`, `NVCC_APPEND_FLAGS`). A crate's own `nvcc-flags` are not known here.

use std::path::{Path, PathBuf};

use super::Nvcc;
use crate::error::{Error, Result};
use crate::tools::process;

/// The host compiler nvcc accepted.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct HostCompiler {
    /// Where it is.
    pub path: PathBuf,
    /// The variable that named it (`CXX`), or none: `cc`'s default.
    pub named_by: Option<String>,
    /// The first line of its `--version` (`g++ (Debian 12.2.0-14) 12.2.0`).
    pub version: Option<String>,
}

impl HostCompiler {
    /// Where it came from, in words: `CXX`, or `cc`'s default.
    pub fn origin(&self) -> String {
        origin(self.named_by.as_deref())
    }
}

fn origin(named_by: Option<&str>) -> String {
    match named_by {
        Some(var) => format!("named by {var}"),
        None => "the `cc` crate's default".into(),
    }
}

/// The variable `cc` takes the C++ compiler from, where one is set (`CXX_<target>`,
/// `CXX_<target_with_underscores>`, `HOST_CXX` or `TARGET_CXX`, `CXX`: its order).
fn naming_variable() -> Option<String> {
    let target = crate::tools::host_triple();
    let kind = if std::env::var("HOST").is_ok_and(|h| h != target) { "TARGET_CXX" } else { "HOST_CXX" };
    [format!("CXX_{target}"), format!("CXX_{}", target.replace('-', "_")), kind.to_string(), "CXX".to_string()]
        .into_iter()
        .find(|v| std::env::var_os(v).is_some_and(|x| !x.is_empty()))
}

/// The host compiler a build's nvcc runs, once nvcc accepted it; else what is wrong with it and
/// the fix: a compiler that is not there ([`Error::ToolMissing`]), or one nvcc refuses
/// ([`Error::HostCompiler`], offering another on PATH that nvcc takes, where there is one).
pub fn host_compiler(nvcc: &Nvcc) -> Result<HostCompiler> {
    let ccbin = nvcc.host_args().iter().find_map(|a| a.strip_prefix("-ccbin=")).map(PathBuf::from);
    let named_by = naming_variable();
    let given = match &ccbin {
        Some(p) => p.clone(),
        // `cc` named none: nvcc runs its own default, g++ from PATH.
        None => PathBuf::from("g++"),
    };
    let Some(path) = crate::tools::find_program(&given.to_string_lossy()) else {
        let help = match &named_by {
            Some(var) => format!("set {var} to an installed C++ compiler that nvcc {} supports, or unset it", nvcc.tool.version),
            None => "install a C++ compiler (`apt-get install g++`), or set CXX to one".into(),
        };
        return Err(Error::ToolMissing {
            what: format!("the host C++ compiler `{}`", given.display()),
            detail: format!(" ({}; nvcc runs it for every .cu file)", origin(named_by.as_deref())),
            help,
        });
    };
    let version = crate::tools::tool_output(&path, &["--version"]).and_then(|t| t.lines().next().map(|l| l.trim().to_string()));
    let found = HostCompiler { path, named_by, version };
    match refusal(nvcc, &format!("-ccbin={}", found.path.display()))? {
        None => Ok(found),
        Some(reason) => {
            let shown = match &found.version {
                Some(v) => format!("{} ({v}; {})", found.path.display(), found.origin()),
                None => format!("{} ({})", found.path.display(), found.origin()),
            };
            Err(Error::HostCompiler { nvcc: nvcc.tool.version.clone(), compiler: shown, reason, help: help(nvcc, &found.path) })
        }
    }
}

/// Why nvcc refuses the host compiler `ccbin` (`-ccbin=PATH`), or none when it takes it.
fn refusal(nvcc: &Nvcc, ccbin: &str) -> Result<Option<String>> {
    let mut cmd = process::command(&nvcc.tool.path);
    cmd.args(["-E", "-x", "cu", ccbin, "/dev/null", "-o", "/dev/null"]);
    let out = process::output("nvcc", &mut cmd)?;
    Ok((!out.status.success())
        .then(|| reason(&format!("{}{}", String::from_utf8_lossy(&out.stderr), String::from_utf8_lossy(&out.stdout)))))
}

/// nvcc's `#error` line without its advice (the fix says it), else what nvcc printed first.
fn reason(text: &str) -> String {
    if let Some(e) = text.lines().find_map(|l| l.split_once("#error -- ").map(|(_, r)| r)) {
        return e.split(" The nvcc flag").next().unwrap_or(e).trim().trim_end_matches('!').to_string();
    }
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).take(2).collect();
    if lines.is_empty() {
        return "nvcc failed and printed nothing".into();
    }
    lines.join("; ").replace("nvcc fatal   : ", "")
}

/// The fix for a refused compiler: another on PATH that nvcc takes (of the same family, newest
/// first), else the kind of compiler to install; or nvcc's own override.
fn help(nvcc: &Nvcc, refused: &Path) -> String {
    let same = |p: &Path| std::fs::canonicalize(p).ok() == std::fs::canonicalize(refused).ok();
    let name = refused.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let family = if name.contains("clang") { "clang++" } else { "g++" };
    let candidates = std::iter::once(family.to_string()).chain((6..=25).rev().map(|n| format!("{family}-{n}")));
    // A few nvcc runs at most (0.1 s each), and only where the build would fail anyway.
    let other = candidates
        .filter_map(|c| crate::tools::on_path(&c).map(|p| (c, p)))
        .filter(|(_, p)| !same(p))
        .take(4)
        .find(|(_, p)| refusal(nvcc, &format!("-ccbin={}", p.display())).is_ok_and(|r| r.is_none()));
    let over = "or pass nvcc `-allow-unsupported-compiler` (`nvcc-flags`, or NVCC_APPEND_FLAGS), at your own risk";
    match other {
        Some((c, p)) => format!(
            "build with {c} ({}), which nvcc {} accepts: `CXX={c} cargo build`, or `CXX = \"{c}\"` under [env] in .cargo/config.toml; {over}",
            p.display(),
            nvcc.tool.version
        ),
        None => format!("install a {family} that nvcc {} supports and set CXX to it (`CXX={family}-N cargo build`); {over}", nvcc.tool.version),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reason_is_nvccs_error_without_its_advice() {
        let text = "In file included from .../include/cuda_runtime.h:82,\n                 from <command-line>:\n.../include/crt/host_config.h:137:2: error: #error -- unsupported GNU version! gcc versions later than 15 are not supported! The nvcc flag '-allow-unsupported-compiler' can be used to override this version check; however, using an unsupported host compiler may cause compilation failure or incorrect run time execution. Use at your own risk.\n";
        assert_eq!(reason(text), "unsupported GNU version! gcc versions later than 15 are not supported");
        assert_eq!(
            reason("/no/such/g++: No such file or directory\nnvcc fatal   : Failed to preprocess host compiler properties.\n"),
            "/no/such/g++: No such file or directory; Failed to preprocess host compiler properties."
        );
        assert_eq!(reason(""), "nvcc failed and printed nothing");
    }
}
