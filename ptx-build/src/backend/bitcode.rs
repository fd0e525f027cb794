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
    // Crate ids in symbol names depend on where path dependencies lie (below).
    let ctx = || format!(" on {}", kernel_crate.display());
    let ir = process::checked("llvm-dis", ctx, process::command(llvm.tool("llvm-dis")).arg(&current).arg("-o").arg("-"))?;
    let ir = String::from_utf8_lossy(&ir.stdout);
    let canonical = canonical_crate_ids(&ir);
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

/// `ir` with the crate ids of Rust's (v0) symbol names (`Cs9Nxgald2Sjs_13saxpy_kernels`) made
/// the same in every checkout.
///
/// cargo derives a crate's id from its package id, which holds the absolute path of a path
/// dependency outside the workspace (the ids of everything that depends on it follow): two
/// checkouts of a monorepo would name the same functions differently, in the PTX too (labels,
/// `.func` names), and share no link or ptxas step. Each crate name with one id in the module
/// gets an id derived from the name alone; a name with two ids (two versions of one crate) keeps
/// them. The new id has 11 digits, the most a 64-bit id has (most have 11): the rename is the
/// same everywhere in the module, so linking is unchanged, but where the old id was shorter, a
/// v0 back-reference after it in a symbol is off by the difference, which only a demangler
/// of internal names would notice (nothing here demangles Rust names).
pub(crate) fn canonical_crate_ids(ir: &str) -> String {
    use std::collections::BTreeMap;
    let roots = crate_roots(ir);
    let mut ids: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (id, name) in &roots {
        let v = ids.entry(name).or_default();
        if !v.contains(id) {
            v.push(id);
        }
    }
    let mut out = ir.to_string();
    for (name, v) in ids {
        let [id] = v[..] else { continue };
        let canonical = canonical_id(name, 11);
        if canonical != id {
            let len = name.len();
            let sep = if name.starts_with(|c: char| c.is_ascii_digit() || c == '_') { "_" } else { "" };
            out = out.replace(&format!("Cs{id}_{len}{sep}{name}"), &format!("Cs{canonical}_{len}{sep}{name}"));
        }
    }
    // The compile units' names hold a hash of the crate id too:
    // `!DIFile(filename: "src/lib.rs/@/saxpy_kernels.72227d58e7f16d30-cgu.0", ...)`.
    let mut units: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (name, hash) in codegen_units(&out) {
        let v = units.entry(name.to_string()).or_default();
        if !v.iter().any(|h| h == hash) {
            v.push(hash.to_string());
        }
    }
    for (name, v) in units {
        let [hash] = &v[..] else { continue };
        let canonical: String = canonical_id(&name, 16).bytes().map(|b| char::from(b"0123456789abcdef"[(b % 16) as usize])).collect();
        out = out.replace(&format!("/@/{name}.{hash}-cgu."), &format!("/@/{name}.{canonical}-cgu."));
    }
    out
}

/// `(crate name, hash)` of every compile unit name `/@/<name>.<hex>-cgu.` in `ir`.
fn codegen_units(ir: &str) -> Vec<(&str, &str)> {
    let mut out = Vec::new();
    for piece in ir.split("/@/").skip(1) {
        let Some((unit, _)) = piece.split_once("-cgu.") else { continue };
        let Some((name, hash)) = unit.rsplit_once('.') else { continue };
        let ok_name = !name.is_empty() && name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_');
        if ok_name && !hash.is_empty() && hash.bytes().all(|c| c.is_ascii_hexdigit()) {
            out.push((name, hash));
        }
    }
    out
}

/// `(id, crate name)` of every v0 crate root `Cs<base-62 id>_<len><name>` in `ir`.
fn crate_roots(ir: &str) -> Vec<(&str, &str)> {
    let b = ir.as_bytes();
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = ir[from..].find("Cs").map(|i| from + i) {
        from = at + 2;
        let id_start = at + 2;
        let id_end = id_start + b[id_start..].iter().take_while(|c| c.is_ascii_alphanumeric()).count();
        if id_end == id_start || b.get(id_end) != Some(&b'_') {
            continue;
        }
        let len_start = id_end + 1;
        let len_end = len_start + b[len_start..].iter().take_while(|c| c.is_ascii_digit()).count();
        let Some(len) = ir[len_start..len_end].parse::<usize>().ok().filter(|l| *l > 0) else { continue };
        let name_start = if b.get(len_end) == Some(&b'_') { len_end + 1 } else { len_end };
        let Some(name) = ir.get(name_start..name_start + len) else { continue };
        if name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_') {
            out.push((&ir[id_start..id_end], name));
        }
    }
    out
}

/// A base-62 id of `len` digits derived from the crate name.
fn canonical_id(name: &str, len: usize) -> String {
    const DIGITS: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    let mut out = String::with_capacity(len);
    let mut round = 0u64;
    while out.len() < len {
        let mut h = xxhash_rust::xxh3::xxh3_64(format!("{name}#{round}").as_bytes());
        for _ in 0..10 {
            if out.len() == len {
                break;
            }
            out.push(DIGITS[(h % 62) as usize] as char);
            h /= 62;
        }
        round += 1;
    }
    out
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
    fn crate_ids_are_the_same_in_every_checkout() {
        // Two checkouts: the kernel crate's and ptx_device's ids differ, `core`'s does not.
        let ir = |k: &str, d: &str| {
            format!("define void @_RNvCs{k}_13saxpy_kernels4axpy() {{\n  call void @_RNvNtCs{d}_10ptx_device5index9thread_id()\n  call void @_RNvNtCs5Lp6ahQ3Xrg_4core3ptr5write()\n  br label %_RINvCs{k}_13saxpy_kernels4axpyfEB2_.exit\n}}\n")
        };
        let ir = |k: &str, d: &str| {
            let cgu = if k.starts_with('9') { "72227d58e7f16d30" } else { "d7d16fc973e90bc3" };
            format!("{}!2 = !DIFile(filename: \"src/lib.rs/@/saxpy_kernels.{cgu}-cgu.0\", directory: \"\")\n", ir(k, d))
        };
        let (a, b) = (canonical_crate_ids(&ir("9Nxgald2Sjs", "abcDEF12345")), canonical_crate_ids(&ir("iwNh0cDzfBT", "zzzYYY00000")));
        assert_eq!(a, b);
        assert!(!a.contains("9Nxgald2Sjs") && a.contains("_13saxpy_kernels4axpyfEB2_.exit"), "{a}");
        assert_eq!(a.len(), ir("9Nxgald2Sjs", "abcDEF12345").len(), "ids of 11 digits keep their length");
        // A shorter id (about one crate in 20) gets 11 digits too, so checkouts agree.
        assert_eq!(canonical_crate_ids(&ir("Nxgald2Sjs", "bcDEF12345")), a);
        // Two versions of one crate keep their own ids.
        let two = "@_RNvCsAAAA_3dep1f @_RNvCsBBBB_3dep1f";
        assert_eq!(canonical_crate_ids(two), two);
    }

    #[test]
    fn finds_kernels_in_ir() {
        let ir = "define ptx_kernel void @saxpy(i32 %n) #0 {\ndefine void @helper() {\ndefine ptx_kernel void @\"weird name\"() {\ndeclare ptx_kernel void @ext()\n";
        assert_eq!(parse_kernel_names(ir), vec!["saxpy".to_string(), "weird name".to_string()]);
    }
}
