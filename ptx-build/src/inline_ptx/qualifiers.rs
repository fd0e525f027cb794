//! Function qualifiers spelt by a macro: DeepSpeed's `#define DS_D_INLINE __device__
//! __forceinline__`, CUTLASS's `CUTLASS_DEVICE` (`__forceinline__ __device__`) and
//! `CUTLASS_HOST_DEVICE`. Without them a `DS_D_INLINE float f(..) { asm(..) }` reads as a host
//! function, whose asm is skipped: a missed finding.
//!
//! Only object-like macros whose body is made of qualifiers (`__device__`, `static`, `inline`,
//! `__attribute__((..))`, other such macros) are followed; anything else (`#define N 256`,
//! `#define LOAD(p) ..`) is no qualifier and stays unexpanded. A definition inside a branch no
//! CUDA device pass takes (`#ifndef __CUDA_ARCH__`, HIP's: [`super::preproc`]) does not count;
//! of the definitions the device pass may take, the words of all of them count (CUTLASS's
//! `#else` branch with `inline` is never taken once `__CUDACC__` is known, but a macro the
//! build may define leaves both branches open).

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::preproc::{directive_end, never_taken, starts_directive, NeverTaken};
use crate::text::c_lex::{self, Kind, Token};

/// The words a qualifier macro may expand to, and which of them the checker reads.
const KEYWORDS: &[&str] = &[
    "__device__",
    "__global__",
    "__host__",
    "__forceinline__",
    "__noinline__",
    "__inline__",
    "__inline",
    "inline",
    "static",
    "extern",
    "constexpr",
];

/// Qualifier-like words that take a parenthesized argument, which is skipped.
const WITH_ARGS: &[&str] = &["__attribute__", "__declspec", "__launch_bounds__", "__maxnreg__"];

/// How deep a macro naming a macro is followed (a cycle ends there).
const DEPTH: usize = 16;

/// The object-like macros of the files read, as their bodies' words; one name may have several
/// definitions (`#if` branches).
#[derive(Clone, Debug, Default)]
pub(super) struct Qualifiers {
    defs: BTreeMap<String, Vec<Vec<String>>>,
}

impl Qualifiers {
    /// The macros of `files` (read together: a .cu file and the headers it includes); a file
    /// that cannot be read is skipped, as [`super::headers::check_headers`] skips it.
    pub fn of_files<'a>(files: impl IntoIterator<Item = &'a PathBuf>) -> Qualifiers {
        let mut q = Qualifiers::default();
        for f in files {
            if let Ok(bytes) = std::fs::read(f) {
                let src = String::from_utf8_lossy(&bytes);
                let toks = c_lex::tokens(&src);
                q.read(&toks, &never_taken(&toks));
            }
        }
        q
    }

    /// Adds the qualifier-like `#define`s of one source, those in `never` left out.
    pub fn read(&mut self, toks: &[Token<'_>], never: &NeverTaken) {
        let mut i = 0;
        while i < toks.len() {
            if !starts_directive(toks, i) {
                i += 1;
                continue;
            }
            let end = directive_end(toks, i);
            if let (Some(d), Some(name)) = (toks.get(i + 1), toks.get(i + 2)) {
                let object_like = !toks.get(i + 3).is_some_and(|p| {
                    i + 3 < end && p.is_punct(b'(') && p.line == name.line && p.col == name.col + name.text.chars().count() as u32
                });
                if d.text == "define" && name.kind == Kind::Ident && i + 2 < end && object_like && !never.contains(d.line) {
                    if let Some(words) = body_words(&toks[i + 3..end]) {
                        self.defs.entry(name.text.to_string()).or_default().push(words);
                    }
                }
            }
            i = end;
        }
    }

    /// Each qualifier macro's expansion into [`KEYWORDS`], macros naming macros followed.
    pub fn resolve(&self) -> Expansions {
        let mut known = Known::default();
        let mut out = BTreeMap::new();
        for name in self.defs.keys() {
            if let (Some(words), _) = self.expand(name, DEPTH, &mut known) {
                out.insert(name.clone(), words.join(" "));
            }
        }
        Expansions(out)
    }

    /// The keywords `name` expands to; `None` where no definition of it is qualifier-like. The
    /// flag says the answer was cut short at `depth` (a chain deeper than that): it holds for
    /// that depth only. Each macro is expanded once (once per depth where it was cut): walked
    /// anew at every use, macros whose several definitions (`#if` branches) name other such
    /// macros took time exponential in the depth, and risc0's CUDA kernels (nvtx3's headers)
    /// never finished their build script.
    fn expand<'a>(&'a self, name: &'a str, depth: usize, known: &mut Known<'a>) -> (Option<Vec<&'static str>>, bool) {
        if let Some(words) = known.whole.get(name) {
            return (words.clone(), false);
        }
        if let Some(words) = known.cut.get(&(name, depth)) {
            return (words.clone(), true);
        }
        let Some(defs) = self.defs.get(name) else { return (None, false) };
        if depth == 0 {
            return (None, true);
        }
        // While it expands, a cycle back to it is no qualifier (as the preprocessor leaves a
        // macro's own name in its expansion unexpanded).
        known.whole.insert(name, None);
        let (mut out, mut any, mut cut): (Vec<&'static str>, _, _) = (Vec::new(), false, false);
        'defs: for body in defs {
            let mut words = Vec::new();
            for w in body {
                match KEYWORDS.iter().find(|k| *k == w) {
                    Some(k) => words.push(*k),
                    None => match self.expand(w, depth - 1, known) {
                        (Some(inner), c) => {
                            cut |= c;
                            words.extend(inner)
                        }
                        (None, c) => {
                            cut |= c;
                            continue 'defs;
                        }
                    },
                }
            }
            any = true;
            for w in words {
                if !out.contains(&w) {
                    out.push(w);
                }
            }
        }
        let words = any.then_some(out);
        if cut {
            known.whole.remove(name);
            known.cut.insert((name, depth), words.clone());
        } else {
            known.whole.insert(name, words.clone());
        }
        (words, cut)
    }
}

/// Macros expanded so far: their keywords, or `None` for no qualifier; by name, and by name and
/// depth where a chain deeper than the depth left cut the answer short.
#[derive(Default)]
struct Known<'a> {
    whole: BTreeMap<&'a str, Option<Vec<&'static str>>>,
    cut: BTreeMap<(&'a str, usize), Option<Vec<&'static str>>>,
}

/// A macro body's identifiers, when it is qualifier-like: identifiers only, and
/// `__attribute__((..))`-like groups (skipped). `None` for anything else, and for an empty body
/// (an include guard's `#define X_H`, a host build's empty `#define CUTLASS_DEVICE`).
fn body_words(body: &[Token<'_>]) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut i = 0;
    while let Some(t) = body.get(i) {
        i += 1;
        if t.kind != Kind::Ident {
            return None;
        }
        if WITH_ARGS.contains(&t.text) {
            if !body.get(i).is_some_and(|p| p.is_punct(b'(')) {
                return None;
            }
            let mut depth = 0i32;
            while let Some(p) = body.get(i) {
                i += 1;
                depth += p.is_punct(b'(') as i32 - p.is_punct(b')') as i32;
                if depth == 0 {
                    break;
                }
            }
            continue;
        }
        words.push(t.text.to_string());
    }
    (!words.is_empty()).then_some(words)
}

/// Resolved qualifier macros: name -> the keywords it stands for, space-separated.
#[derive(Debug, Default)]
pub(super) struct Expansions(BTreeMap<String, String>);

impl Expansions {
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expansions(src: &str) -> Expansions {
        let toks = c_lex::tokens(src);
        let mut q = Qualifiers::default();
        q.read(&toks, &never_taken(&toks));
        q.resolve()
    }

    /// CUTLASS's helper_macros.hpp: the CUDA branch's words, not the host build's `inline`;
    /// macros naming macros; what is no qualifier stays unexpanded.
    #[test]
    fn qualifier_macros_expand_and_other_macros_do_not() {
        let src = "#pragma once\n#define CUTLASS_HELPER_MACROS_H\n\
                   #if defined(__CUDACC__) || defined(_NVHPC_CUDA)\n#define CUTLASS_HOST_DEVICE __forceinline__ __device__ __host__\n#define CUTLASS_DEVICE __forceinline__ __device__\n\
                   #elif defined(__CUDACC_RTC__)\n#define CUTLASS_HOST_DEVICE __forceinline__ __device__\n#define CUTLASS_DEVICE __forceinline__ __device__\n\
                   #else\n#define CUTLASS_HOST_DEVICE inline\n#define CUTLASS_DEVICE inline\n#endif\n\
                   #define CUTLASS_GLOBAL __global__ static\n#define DEV_ALIAS CUTLASS_DEVICE\n\
                   #define ALWAYS __device__ __attribute__((always_inline))\n\
                   #define LOOP LOOP\n#define N 256\n#define DEV_FLOAT __device__ float\n#define CALL(x) __device__ x\n#define UNKNOWN __device__ SOMETHING\n\
                   #ifndef __CUDA_ARCH__\n#define HOST_PASS_ONLY __device__\n#endif\n";
        let e = expansions(src);
        assert_eq!(e.get("CUTLASS_HOST_DEVICE"), Some("__forceinline__ __device__ __host__"));
        assert_eq!(e.get("CUTLASS_DEVICE"), Some("__forceinline__ __device__"));
        assert_eq!(e.get("CUTLASS_GLOBAL"), Some("__global__ static"));
        assert_eq!(e.get("DEV_ALIAS"), Some("__forceinline__ __device__"));
        assert_eq!(e.get("ALWAYS"), Some("__device__"));
        for no in ["CUTLASS_HELPER_MACROS_H", "LOOP", "N", "DEV_FLOAT", "CALL", "UNKNOWN", "HOST_PASS_ONLY"] {
            assert_eq!(e.get(no), None, "{no}");
        }
    }

    /// Macros naming macros, each with several definitions: 16 levels of 4 names, 2 definitions
    /// each, was 8^16 expansions walked anew at every use (a build script that never ended on
    /// risc0's kernels); expanded once each, it is instant. A cycle is no qualifier, and a ring of
    /// macros naming each other ends as soon as it comes back; a chain deeper than the depth
    /// followed is cut short once per depth, not once per path.
    #[test]
    fn macros_of_many_definitions_naming_each_other_expand_once_each() {
        let mut src = String::from("#define Q0 __device__\n");
        for level in 1..16 {
            for def in ["#if A", "#else"] {
                src += &format!("{def}\n#define Q{level} Q{p} Q{p} Q{p} Q{p} inline\n", p = level - 1);
            }
            src += "#endif\n";
        }
        src += "#define CYC_A CYC_B __device__\n#define CYC_B CYC_A\n#define OUTER __host__ DEV\n#define DEV __device__\n";
        // A ring of macros naming each other four times, twice defined: every walk is a cycle.
        for i in 0..12 {
            for def in ["#if A", "#else"] {
                src += &format!("{def}\n#define R{i} R{n} R{n} R{n} R{n}\n", n = (i + 1) % 12);
            }
            src += "#endif\n";
        }
        // A chain deeper than the 16 levels followed, met from its top first: cut short, once
        // for each depth, and its lower part is expanded all the same.
        src += "#define D39 __device__\n";
        for level in 0..39 {
            for def in ["#if A", "#else"] {
                src += &format!("{def}\n#define D{level:02} D{n:02} D{n:02} D{n:02} D{n:02}\n", n = level + 1);
            }
            src += "#endif\n";
        }
        let e = expansions(&src);
        assert_eq!(e.get("Q15"), Some("__device__ inline"));
        assert_eq!((e.get("D00"), e.get("D30")), (None, Some("__device__")));
        assert_eq!((e.get("CYC_A"), e.get("CYC_B")), (None, None));
        assert_eq!(e.get("OUTER"), Some("__host__ __device__"));
        assert_eq!(e.get("R0"), None);
    }
}
