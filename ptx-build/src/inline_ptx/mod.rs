//! The inline-PTX checker: NVIDIA's rules for `asm()` in CUDA C++ and `asm!` in Rust kernels,
//! checked at the source line before any compiler runs.
//!
//! Neither nvcc nor rustc parses the PTX inside an asm template: a wrong operand number, an
//! unscoped `.reg` in a function inlined twice or a missing `volatile` shows up late (as a
//! ptxas error about a PTX line the user never saw) or never (as a wrong answer). The rules
//! follow the "Inline PTX Assembly in CUDA" reference:
//!
//! | rule | CUDA `asm()` | Rust `asm!` | level |
//! |---|---|---|---|
//! | operand reference beyond the operands | `%N` | `{N}`, `{name}` | error |
//! | constraint letter outside `h r l q f d n C`, or two letters | yes | (rustc checks) | error |
//! | operand modifier (`%n1`) | yes | (rustc checks) | error |
//! | special register written `%clock` in an asm with operands | yes | - | warning |
//! | `.reg` or label outside `{ }` in a function that can be inlined | yes | yes | warning |
//! | changing special register (`%clock`, `%smid`..) read without `volatile` / with `pure` | yes | yes | warning |
//! | memory written (`st.`, `atom.`, `red.`) without `"memory"` / with `nomem`, `readonly` | yes | yes | warning |
//! | output written under a predicate declared `=` / `out` instead of `+` / `inout` | yes | yes | warning |
//!
//! The modules follow the seams: `template` holds the rules on PTX template text that both
//! languages share (statements, labels, registers, memory writes); `cuda` finds `asm()`
//! statements in C++ through [`crate::text::c_lex`] (no C++ parser crate handles CUDA's dialect) and
//! checks their constraints and `%N` references; `rust` reads `asm!` with syn and checks its
//! `{N}`/`{name}` references and options.

use crate::diag::{relative, Diagnostic};
use crate::error::Result;
use crate::project::KernelCrate;

mod cuda;
mod rust;
mod template;

pub use cuda::{check_cuda, check_cuda_file};
pub use rust::check_rust_file;

/// Checks every asm of a kernel crate: its .cu files, and the `asm!` of its Rust kernels
/// (following the module tree from the lib's root file), with the Rust kernel lints
/// ([`crate::rust::lints`]) over the same parsed files. Returns the number of files read and
/// the diagnostics, paths relative to the package.
pub fn check_crate(k: &KernelCrate) -> Result<(usize, Vec<Diagnostic>)> {
    let mut files = 0;
    let mut out = Vec::new();
    for src in &k.cuda_sources {
        out.extend(check_cuda_file(&src.path, &relative(&src.path, &k.dir))?);
        files += 1;
    }
    if let (true, Some(lib)) = (k.config.rust, &k.lib_src) {
        // The kernel lints read the same parsed files.
        let mut lints = crate::rust::lints::CrateLints::default();
        for (path, file) in crate::rust::modules::module_files(lib)? {
            let shown = relative(&path, &k.dir);
            check_rust_file(&shown, &file, &mut out);
            lints.read(&shown, &file);
            files += 1;
        }
        out.extend(lints.finish());
    }
    let out = out.into_iter().map(|d| d.rooted(&k.dir)).collect();
    Ok((files, out))
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// The location of the one diagnostic of `d`, which must contain `needle`.
#[cfg(test)]
fn one(d: &[Diagnostic], needle: &str) -> String {
    assert_eq!(d.len(), 1, "expected one diagnostic with `{needle}`, got {d:#?}");
    assert!(d[0].message.contains(needle), "{:#?}", d[0]);
    d[0].location().unwrap()
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    /// The crate-level entry point reads both languages and names files relative to the package.
    #[test]
    fn check_rust_and_cuda_sources_are_both_reached() {
        let rs = syn::parse_file("fn f(x: u32) { unsafe { asm!(\"mov.u32 {t}, {x};\", x = in(reg32) x); } }").unwrap();
        let mut out =
            check_cuda(Path::new("k.cu"), "__global__ void k(int *p) {\n  asm volatile(\"st.global.u32 [%0], 1;\" :: \"l\"(p));\n}\n");
        check_rust_file(Path::new("src/lib.rs"), &rs, &mut out);
        let at: Vec<String> = out.iter().map(|d| d.location().unwrap()).collect();
        assert_eq!(at, ["k.cu:2:17", "src/lib.rs:1:25"]);
    }
}
