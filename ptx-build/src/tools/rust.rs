//! The rustup toolchain of Rust kernels: rustc, cargo, the sysroot with `rust-src`, and the
//! `llvm-tools` of the same LLVM that wrote the bitcode.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::{on_path, process, setup_help};
use crate::arch::Supported;
use crate::error::{Error, Result};

/// A rustup toolchain for kernels, with what it has and lacks.
#[derive(Clone, Debug)]
pub struct Rust {
    /// The rustup name (`nightly`, `nightly-2026-05-19`).
    pub toolchain: String,
    /// Its rustc.
    pub rustc: PathBuf,
    /// Its cargo.
    pub cargo: PathBuf,
    /// Its sysroot (`rustc --print sysroot`).
    pub sysroot: PathBuf,
    /// `rustc -V`, e.g. `rustc 1.97.0-nightly (1a2b3c4 2026-05-19)`.
    pub version: String,
    /// The LLVM version rustc reports (`22.1.0`).
    pub llvm_version: String,
    /// Its host triple.
    pub host: String,
    /// The `rust-src` component's library folder, when installed.
    pub rust_src: Option<PathBuf>,
    /// The `llvm-tools` component, when installed.
    pub llvm: Option<Llvm>,
}

impl Rust {
    /// The oldest compute capability this rustc builds nvptx64 code for: sm_70 from the 1.97
    /// nightlies of 2026-04-30 on (rust-lang/rust#152443 merged the day before; lower archs
    /// fail with "target cpu `sm_50` is known but unsupported"), none known before; read from
    /// `rustc -V` (`rustc 1.97.0-nightly (e50aa6fba 2026-05-19)`). A 1.97 without a date (a
    /// local build) counts as after.
    pub fn min_capability(&self) -> Option<u32> {
        let mut words = self.version.split_whitespace().skip(1);
        let mut numbers = words.next()?.split(['.', '-']).map(|n| n.parse::<u32>().ok());
        let (major, minor) = (numbers.next()??, numbers.next()??);
        let date = words.last().map(|d| d.trim_end_matches(')'));
        let after = match (major, minor) {
            (1, 97) => date.is_none_or(|d| d.len() != 10 || d >= "2026-04-30"),
            _ => (major, minor) > (1, 97),
        };
        after.then_some(70)
    }

    /// Finds `toolchain` through rustup and reads its version.
    pub fn find(toolchain: &str) -> Result<Rust> {
        let rustup = on_path("rustup").ok_or_else(|| Error::ToolMissing {
            what: "rustup".into(),
            detail: " (kernels are built with a rustup nightly)".into(),
            help: "install rustup from your package manager or rustup.rs, then run `cargo ptx setup`".into(),
        })?;
        let mut cmd = process::command(&rustup);
        cmd.args(["which", "--toolchain", toolchain, "rustc"]).env_remove("RUSTUP_TOOLCHAIN");
        let out = process::output("rustup", &mut cmd)?;
        if !out.status.success() {
            return Err(Error::ToolMissing {
                what: format!("the `{toolchain}` toolchain"),
                detail: format!(" ({})", String::from_utf8_lossy(&out.stderr).trim().trim_start_matches("error: ")),
                help: setup_help(toolchain),
            });
        }
        let rustc = PathBuf::from(process::stdout_text(&out).trim());
        let sysroot = rustc.parent().and_then(Path::parent).map(Path::to_path_buf).unwrap_or_default();
        let vv = process::checked("rustc", || format!(" (`{} -vV`)", rustc.display()), process::command(&rustc).arg("-vV"))?;
        let vv = process::stdout_text(&vv);
        let field = |k: &str| vv.lines().find_map(|l| l.strip_prefix(k)).map(|v| v.trim().to_string()).unwrap_or_default();
        let version = vv.lines().next().unwrap_or_default().trim().to_string();
        let host = field("host:");
        if !version.contains("nightly") && !version.contains("-dev") {
            return Err(Error::ToolMissing {
                what: format!("a nightly toolchain (`{toolchain}` is `{version}`)"),
                detail: "; kernels need `#![feature(abi_ptx)]`, which only a nightly accepts".into(),
                help: format!("set `toolchain = \"nightly\"` in [package.metadata.ptx], or {}", setup_help("nightly")),
            });
        }
        let rust_src = Some(sysroot.join("lib/rustlib/src/rust/library")).filter(|p| p.join("core/Cargo.toml").is_file());
        let llvm_bin = sysroot.join("lib/rustlib").join(&host).join("bin");
        let llvm = Llvm::TOOLS.iter().all(|t| llvm_bin.join(t).is_file()).then_some(Llvm { bin: llvm_bin });
        Ok(Rust {
            toolchain: toolchain.to_string(),
            cargo: sysroot.join("bin").join("cargo"),
            rustc,
            sysroot,
            version,
            llvm_version: field("LLVM version:"),
            host,
            rust_src,
            llvm,
        })
    }

    /// The pieces a Rust kernel build needs, or an error naming what is missing and the fix.
    pub fn require(&self) -> Result<&Llvm> {
        let mut missing = Vec::new();
        if self.rust_src.is_none() {
            missing.push("rust-src");
        }
        if self.llvm.is_none() {
            missing.push("llvm-tools");
        }
        match &self.llvm {
            Some(llvm) if missing.is_empty() => Ok(llvm),
            _ => Err(Error::ToolMissing {
                what: format!(
                    "the {} component{} of the `{}` toolchain",
                    missing.join(" and "),
                    if missing.len() > 1 { "s" } else { "" },
                    self.toolchain
                ),
                detail: " (rust-src builds `core` for nvptx64; llvm-tools links the bitcode with the same LLVM that wrote it)".into(),
                help: format!("run `cargo ptx setup`, or `rustup component add {} --toolchain {}`", missing.join(" "), self.toolchain),
            }),
        }
    }
}

/// The `llvm-tools` of a toolchain: the same LLVM that wrote its bitcode.
#[derive(Clone, Debug)]
pub struct Llvm {
    /// The folder of llvm-link, opt and llc.
    pub bin: PathBuf,
}

impl Llvm {
    const TOOLS: &'static [&'static str] = &["llvm-link", "opt", "llc", "llvm-nm", "llvm-dis"];

    /// The path of one LLVM tool (`llc`).
    pub fn tool(&self, name: &str) -> PathBuf {
        self.bin.join(format!("{name}{}", std::env::consts::EXE_SUFFIX))
    }

    /// The CPUs `llc` can generate code for (`sm_20` .. `sm_121f`).
    pub fn supported(&self) -> &'static Supported {
        static CACHE: OnceLock<Supported> = OnceLock::new();
        CACHE.get_or_init(|| {
            let out = process::probe(process::command(self.tool("llc")).args(["-march=nvptx64", "-mcpu=help"]));
            let text =
                out.map(|o| format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))).unwrap_or_default();
            let section = text.split("Available features").next().unwrap_or("");
            let names =
                section.lines().filter_map(|l| l.split_whitespace().next()).filter(|n| n.starts_with("sm_")).map(String::from).collect();
            Supported { names }
        })
    }

    /// The PTX ISA versions `llc` can write, as `ptxNN` feature names.
    pub fn ptx_versions(&self) -> Vec<String> {
        let out = process::probe(process::command(self.tool("llc")).args(["-march=nvptx64", "-mattr=help"]));
        let text = out.map(|o| format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))).unwrap_or_default();
        text.lines()
            .filter_map(|l| l.split_whitespace().next())
            .filter(|n| n.starts_with("ptx") && n[3..].chars().all(|c| c.is_ascii_digit()))
            .map(String::from)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rustc_1_97_builds_sm_70_and_newer() {
        let rust = |version: &str| Rust {
            toolchain: "nightly".into(),
            rustc: "rustc".into(),
            cargo: "cargo".into(),
            sysroot: "/s".into(),
            version: version.into(),
            llvm_version: "22.1.0".into(),
            host: "x86_64-unknown-linux-gnu".into(),
            rust_src: None,
            llvm: None,
        };
        assert_eq!(rust("rustc 1.97.0-nightly (e50aa6fba 2026-05-19)").min_capability(), Some(70));
        assert_eq!(rust("rustc 1.97.0-nightly (0123456 2026-04-20)").min_capability(), None, "before the change merged");
        assert_eq!(rust("rustc 1.97.0 (0123456 2026-06-25)").min_capability(), Some(70));
        assert_eq!(rust("rustc 1.100.0-nightly (0123456 2027-09-01)").min_capability(), Some(70));
        assert_eq!(rust("rustc 2.0.0").min_capability(), Some(70));
        assert_eq!(rust("rustc 1.96.0-nightly (0123456 2026-03-01)").min_capability(), None);
        assert_eq!(rust("garbage").min_capability(), None);
    }

    #[test]
    fn missing_components_name_setup_and_the_rustup_command() {
        let rust = Rust {
            toolchain: "nightly".into(),
            rustc: "/r/bin/rustc".into(),
            cargo: "/r/bin/cargo".into(),
            sysroot: "/r".into(),
            version: "rustc 1.97.0-nightly".into(),
            llvm_version: "22.1.4".into(),
            host: "x86_64-unknown-linux-gnu".into(),
            rust_src: None,
            llvm: None,
        };
        let msg = rust.require().unwrap_err().to_string();
        assert!(msg.starts_with("the rust-src and llvm-tools components of the `nightly` toolchain not found"), "{msg}");
        assert!(msg.contains("run `cargo ptx setup`, or `rustup component add rust-src llvm-tools --toolchain nightly`"), "{msg}");
        let rust = Rust { llvm: Some(Llvm { bin: "/r/lib/rustlib/x/bin".into() }), ..rust };
        let msg = rust.require().unwrap_err().to_string();
        assert!(msg.contains("the rust-src component of") && msg.contains("rustup component add rust-src --toolchain nightly"), "{msg}");
    }
}
