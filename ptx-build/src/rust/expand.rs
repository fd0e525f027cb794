//! The crate after macro expansion (`cargo rustc --profile check -- -Zunpretty=expanded`): where
//! the signature stage reads kernels that `macro_rules!` stamp out, which the source reader
//! cannot see. Run only for a Builder, and only when such kernels exist.

use std::path::PathBuf;
use std::process::{Command, Stdio};

use super::{sysroot, Frontend, RustKernels};
use crate::backend::bitcode::Profile;
use crate::cache::{self, CachedStep, Key};
use crate::tools::process;

impl Frontend<'_> {
    /// The expanded crate, written to the work dir, for the module `rust` built; the error says
    /// why it could not be had (those kernels stay untyped). `missing` are the kernels the
    /// expansion must show. Cached like a step: a no-op build does not expand again.
    pub fn expand(&self, rust: &RustKernels, missing: &[String]) -> std::result::Result<PathBuf, String> {
        let path = self.work_dir.join("expanded.rs");
        let mut key = Key::new("rust-expand-v1");
        key.str(&self.key()).str(&rust.module_hash);
        for k in missing {
            key.str(k);
        }
        let step =
            CachedStep { stamp: self.work_dir.join("expanded.json"), key: key.finish(), shared: None, outputs: vec![("rs", path.clone())] };
        let done = step
            .run(
                |_: &Option<String>| true,
                || {
                    // Recorded too: a crate that cannot be expanded is not expanded again until it changes.
                    let result = self.run_expansion(missing);
                    cache::write_atomic(&path, result.as_deref().unwrap_or_default().as_bytes())?;
                    Ok(result.err())
                },
            )
            .map_err(|e| e.to_string())?;
        match done.meta {
            Some(why) => Err(why),
            None => Ok(path),
        }
    }

    fn run_expansion(&self, missing: &[String]) -> std::result::Result<String, String> {
        // The shared sysroot when there is one: with it the expansion checks no `core` of its
        // own (about 30 s on 2 cores).
        let use_sysroot = self.sysroot_dir().as_deref().and_then(sysroot::existing).is_some();
        let mut cmd = self.expand_command(use_sysroot);
        cmd.stdin(Stdio::null());
        let out = process::output("cargo", &mut cmd).map_err(|e| e.to_string())?;
        expansion(out.status.success(), &out.stdout, &out.stderr, missing)
    }

    fn expand_command(&self, use_sysroot: bool) -> Command {
        // No bitcode: check mode runs no codegen (`--emit=llvm-bc` would force it).
        let flags: Vec<String> =
            self.cargo_rustflags(use_sysroot).into_iter().filter(|f| !f.starts_with("--emit") && f != "-Ccodegen-units=1").collect();
        let mut cmd = self.cargo_rustc(&flags, false, use_sysroot);
        cmd.args(["--profile", "check"]);
        cmd.arg("--").arg("-Zunpretty=expanded");
        // The check profile has debug assertions on; a release build's `cfg(debug_assertions)` is off.
        if self.config.profile == Profile::Release {
            cmd.arg("-Cdebug-assertions=off");
        }
        cmd
    }
}

/// The expanded crate cargo printed, or why there is none: the last lines cargo printed when it
/// failed, or a kernel the text does not name (then it is not the crate that was built).
fn expansion(success: bool, stdout: &[u8], stderr: &[u8], missing: &[String]) -> std::result::Result<String, String> {
    if !success {
        let stderr = String::from_utf8_lossy(stderr);
        let lines: Vec<&str> =
            stderr.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with("Compiling") && !l.starts_with("Checking")).collect();
        let tail = lines[lines.len().saturating_sub(4)..].join(" / ");
        return Err(format!("`cargo rustc -- -Zunpretty=expanded` failed: {tail}"));
    }
    let text = String::from_utf8_lossy(stdout).into_owned();
    if let Some(k) = missing.iter().find(|k| !text.contains(k.as_str())) {
        return Err(format!("the expanded crate has no kernel `{k}`"));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_expansion_is_the_crate_that_was_built_or_a_reason() {
        let missing = vec!["neg_f32".to_string()];
        let text = "#[no_mangle]\npub unsafe extern \"ptx-kernel\" fn neg_f32() {}\n";
        assert_eq!(expansion(true, text.as_bytes(), b"", &missing).as_deref(), Ok(text));
        assert_eq!(expansion(true, b"fn other() {}", b"", &missing), Err("the expanded crate has no kernel `neg_f32`".to_string()));
        let stderr = b"   Compiling ptx-device-macros v0.1.0\n    Checking k v0.1.0\nerror: the option `Z` is only accepted on the nightly compiler\n\nerror: could not compile `k` (lib)\n";
        assert_eq!(
            expansion(false, b"", stderr, &missing),
            Err("`cargo rustc -- -Zunpretty=expanded` failed: error: the option `Z` is only accepted on the nightly compiler / error: could not compile `k` (lib)".to_string())
        );
    }
}
