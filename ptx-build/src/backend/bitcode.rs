//! LLVM bitcode as both back-end stages see it: the build profile, the kernels a module
//! defines, its undefined symbols, and linking a crate with its dependencies.
//!
//! [`crate::rust`] (which writes the bitcode) and [`crate::backend::link`] (which takes it to PTX per
//! arch) both need these; keeping them here lets each stage depend on this module instead of on
//! the other.

use std::path::{Path, PathBuf};

use crate::cache;
use crate::error::Result;
use crate::tools::process;
use crate::tools::Llvm;

pub use crate::options::Profile;

/// The names of the `extern "ptx-kernel"` functions a bitcode file defines, in file order.
pub fn kernel_names(llvm: &Llvm, bitcode: &Path) -> Result<Vec<String>> {
    let out = process::checked(
        "llvm-dis",
        || format!(" on {}", bitcode.display()),
        process::command(llvm.tool("llvm-dis")).arg(bitcode).arg("-o").arg("-"),
    )?;
    Ok(parse_kernel_names(&String::from_utf8_lossy(&out.stdout)))
}

fn parse_kernel_names(ir: &str) -> Vec<String> {
    ir.lines()
        .filter(|l| l.starts_with("define ") && l.contains(" ptx_kernel "))
        .filter_map(|l| {
            let at = l.find('@')? + 1;
            let rest = &l[at..];
            if let Some(quoted) = rest.strip_prefix('"') {
                quoted.split('"').next().map(String::from)
            } else {
                Some(rest.split('(').next()?.to_string())
            }
        })
        .collect()
}

/// Links the kernel crate's bitcode with what it uses of its dependencies (core included).
///
/// `--only-needed` pulls a dependency's function only when something linked so far calls it,
/// which keeps this step in milliseconds (all of `core` would take a second). A dependency can
/// need another that was linked before it, so the link repeats until no more symbols resolve.
pub fn crate_module(llvm: &Llvm, kernel_crate: &Path, deps: &[PathBuf], out: &Path) -> Result<()> {
    let scratch = cache::scratch_path(out);
    let mut current = kernel_crate.to_path_buf();
    let mut last_undefined: Option<Vec<String>> = None;
    for round in 0..6 {
        let mut cmd = process::command(llvm.tool("llvm-link"));
        cmd.arg(&current);
        if !deps.is_empty() {
            cmd.arg("--only-needed").args(deps);
        }
        let target = scratch.with_extension(format!("{round}.bc"));
        cmd.arg("-o").arg(&target);
        process::checked("llvm-link", || format!(" linking {}", kernel_crate.display()), &mut cmd)?;
        if current != kernel_crate {
            let _ = std::fs::remove_file(&current);
        }
        current = target;
        let undefined = undefined_symbols(llvm, &current)?;
        if undefined.is_empty() || last_undefined.as_ref() == Some(&undefined) {
            break;
        }
        last_undefined = Some(undefined);
    }
    // Crate ids in symbol names depend on where path dependencies lie (see `crate_ids`).
    let ctx = || format!(" on {}", kernel_crate.display());
    let ir = process::checked("llvm-dis", ctx, process::command(llvm.tool("llvm-dis")).arg(&current).arg("-o").arg("-"))?;
    let ir = String::from_utf8_lossy(&ir.stdout);
    let canonical = super::crate_ids::canonical_crate_ids(&ir);
    if canonical != ir {
        let text = scratch.with_extension("ll");
        cache::write_atomic(&text, canonical.as_bytes())?;
        let bc = scratch.with_extension("canonical.bc");
        process::checked("llvm-as", ctx, process::command(llvm.tool("llvm-as")).arg(&text).arg("-o").arg(&bc))?;
        let _ = std::fs::remove_file(&text);
        let _ = std::fs::remove_file(&current);
        current = bc;
    }
    cache::rename_into_place(&current, out)
}

/// Symbols a module uses and does not define (intrinsics excluded by llvm-nm).
pub fn undefined_symbols(llvm: &Llvm, bitcode: &Path) -> Result<Vec<String>> {
    let out = process::checked(
        "llvm-nm",
        || format!(" on {}", bitcode.display()),
        process::command(llvm.tool("llvm-nm")).arg("--undefined-only").arg("--format=just-symbols").arg(bitcode),
    )?;
    let mut v: Vec<String> = String::from_utf8_lossy(&out.stdout).lines().map(|l| l.trim().to_string()).filter(|l| !l.is_empty()).collect();
    v.sort();
    v.dedup();
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_kernels_in_ir() {
        let ir = "define ptx_kernel void @saxpy(i32 %n) #0 {\ndefine void @helper() {\ndefine ptx_kernel void @\"weird name\"() {\ndeclare ptx_kernel void @ext()\n";
        assert_eq!(parse_kernel_names(ir), vec!["saxpy".to_string(), "weird name".to_string()]);
    }
}
