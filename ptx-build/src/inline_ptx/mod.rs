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
//! `{N}`/`{name}` references and options; `headers` finds the user's headers that .cu files
//! include (most projects keep their asm there), from nvcc's list of what it read in a build,
//! from the `#include` lines for `cargo ptx check`; `preproc` finds the `#if` branches no CUDA
//! build takes (`#if 0`, HIP's), whose asm is not PTX.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::diag::{relative, Diagnostic};
use crate::error::Result;
use crate::project::KernelCrate;

mod cuda;
mod headers;
mod preproc;
mod rust;
mod template;

pub use cuda::{check_cuda, check_cuda_file};
pub(crate) use headers::user_headers;
pub use rust::check_rust_file;

/// Which headers a check of a crate's sources reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Headers {
    /// Those the `#include` lines reach (`cargo ptx check`: no compiler runs).
    Included,
    /// None: a build checks those nvcc read, once it has run ([`check_headers`]).
    AfterCompile,
}

/// Checks every asm of a kernel crate: its .cu files and, with [`Headers::Included`], the
/// user's headers they include (each once; those in `seen` already, another crate's, are
/// left out and the rest added), and the `asm!` of its Rust kernels (following the module tree
/// from the lib's root file), with the Rust kernel lints ([`crate::rust::lints`]) over the same
/// parsed files. Returns the number of files read and the diagnostics, paths relative to the
/// package.
pub fn check_crate(k: &KernelCrate, headers: Headers, seen: &mut BTreeSet<PathBuf>) -> Result<(usize, Vec<Diagnostic>)> {
    let mut files = 0;
    let mut out = Vec::new();
    for src in &k.cuda_sources {
        out.extend(check_cuda_file(&src.path, &relative(&src.path, &k.dir))?);
        files += 1;
    }
    if headers == Headers::Included {
        let sources: Vec<PathBuf> = k.cuda_sources.iter().map(|s| s.path.clone()).collect();
        let found = headers::included_headers(&sources, &include_dirs(k), None);
        let found: Vec<PathBuf> = found.into_iter().filter(|h| seen.insert(h.clone())).collect();
        files += found.len();
        out.extend(headers::check_headers(&found, &k.dir));
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

/// The crate's include folders (`cuda-include`), absolute.
pub fn include_dirs(k: &KernelCrate) -> Vec<PathBuf> {
    k.config.cuda_include.iter().map(|d| crate::diag::joined(&k.dir, d)).collect()
}

/// Checks `headers` (absolute; see [`user_headers`]) once each, naming them relative to
/// `root` where they lie below it.
pub fn check_headers(headers: &[PathBuf], root: &Path) -> Vec<Diagnostic> {
    headers::check_headers(headers, root).into_iter().map(|d| d.rooted(root)).collect()
}

/// Checks .cu files that no package holds (a folder given to `cargo ptx check`) and the
/// headers they include, each once: quoted names from the including file's folder, else the one
/// header below `dir` (the folder given) with that path, as the build's `-I` would find it.
/// Returns the number of files read and the diagnostics, named as `dir` is.
pub fn check_loose(dir: &Path, files: &[PathBuf], seen: &mut BTreeSet<PathBuf>) -> Result<(usize, Vec<Diagnostic>)> {
    let mut out = Vec::new();
    for f in files {
        out.extend(check_cuda_file(f, f)?);
    }
    let index = headers::HeaderIndex::of(dir);
    let found = headers::included_headers(files, &[], Some(&index));
    let found: Vec<PathBuf> = found.into_iter().filter(|h| seen.insert(h.clone())).collect();
    out.extend(headers::check_headers(&found, Path::new("")));
    Ok((files.len() + found.len(), out))
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
