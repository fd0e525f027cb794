//! The `#if` branches that no CUDA build takes: `#if 0`, and those only another GPU's compiler
//! takes (HIP's, ROCm's, MUSA's). Headers shared with those ports hold their asm there
//! (ggml-cuda's `common.cuh` has AMD's `v_dot2_f32_f16` with `"v"` constraints under
//! `#if defined(GGML_USE_HIP)`): it is not PTX, and checking it as PTX gives errors.
//!
//! A condition is read in three values: a platform macro of another GPU (see [`foreign`]) is not
//! defined, a number is its value, and anything else is unknown (a comparison, a macro the build
//! may define). A branch is never taken when its condition is false, or an earlier branch of its
//! `#if` is true; a macro `#define`d only inside such branches counts as not defined
//! (ggml's `V_DOT2_F32_F16_AVAILABLE`, defined under a HIP condition, then tested alone).

use std::collections::BTreeSet;

use crate::text::c_lex::{Kind, Token};

/// Lines inside branches no CUDA build takes, as `(first, last)` ranges (inclusive), in order.
#[derive(Debug, Default)]
pub(super) struct NeverTaken(Vec<(u32, u32)>);

impl NeverTaken {
    pub fn contains(&self, line: u32) -> bool {
        self.0.iter().any(|&(a, b)| a <= line && line <= b)
    }
}

/// Whether a macro name belongs to another GPU's toolchain (`GGML_USE_HIP`,
/// `__HIP_PLATFORM_AMD__`, `USE_ROCM`, `__gfx906__`, `RDNA3`, `GGML_USE_MUSA`): one of its
/// `_`-separated words names it.
fn foreign(name: &str) -> bool {
    name.split('_').filter(|w| !w.is_empty()).any(|w| {
        let w = w.to_ascii_uppercase();
        let family = |prefix: &str| w.strip_prefix(prefix).is_some_and(|rest| rest.chars().all(|c| c.is_ascii_alphanumeric()));
        matches!(w.as_str(), "HIP" | "HIPCC" | "ROCM" | "AMDGCN" | "AMDGPU" | "MUSA" | "MUSART")
            || (family("GFX") && w.len() > 3 && w.as_bytes()[3].is_ascii_digit())
            || family("RDNA")
            || family("CDNA")
    })
}

/// Whether `toks[i]` is the `#` that starts a preprocessor line.
pub(super) fn starts_directive(toks: &[Token<'_>], i: usize) -> bool {
    let t = &toks[i];
    t.directive && t.is_punct(b'#') && (i == 0 || toks[i - 1].line != t.line || !toks[i - 1].directive)
}

/// The index after the last token of the directive that starts at `toks[i]` (continuation
/// lines included): the next directive's `#`, or code.
pub(super) fn directive_end(toks: &[Token<'_>], i: usize) -> usize {
    (i + 1..toks.len()).find(|&j| !toks[j].directive || starts_directive(toks, j)).unwrap_or(toks.len())
}

/// One `#if` group being read: whether some branch so far is surely taken, and whether the
/// current one is never taken.
struct Group {
    some_true: bool,
    dead: bool,
}

/// The never-taken branches of a source's tokens.
pub(super) fn never_taken(toks: &[Token<'_>]) -> NeverTaken {
    let mut stack: Vec<Group> = Vec::new();
    // Macros defined only in never-taken branches, and those defined elsewhere.
    let (mut dead_defs, mut live_defs) = (BTreeSet::new(), BTreeSet::new());
    let mut ranges = Vec::new();
    let mut dead_since: Option<u32> = None;
    let mut i = 0;
    while i < toks.len() {
        let t = &toks[i];
        if !starts_directive(toks, i) {
            i += 1;
            continue;
        }
        let end = directive_end(toks, i);
        let words = &toks[i + 1..end];
        let name = words.first().filter(|w| w.kind == Kind::Ident).map_or("", |w| w.text);
        let cond = words.get(1..).unwrap_or_default();
        let was_dead = stack.iter().any(|g| g.dead);
        let known = |n: &str| {
            if DEVICE_PASS.contains(&n) {
                Some(true)
            } else {
                (foreign(n) || (dead_defs.contains(n) && !live_defs.contains(n))).then_some(false)
            }
        };
        match name {
            "if" | "ifdef" | "ifndef" => {
                let v = match name {
                    "if" => Eval { toks: cond, at: 0, known: &known }.or(),
                    _ => {
                        let defined = cond.first().and_then(|c| known(c.text));
                        if name == "ifdef" {
                            defined
                        } else {
                            defined.map(|d| !d)
                        }
                    }
                };
                stack.push(Group { some_true: v == Some(true), dead: v == Some(false) });
            }
            "elif" => {
                let v = Eval { toks: cond, at: 0, known: &known }.or();
                if let Some(g) = stack.last_mut() {
                    g.dead = g.some_true || v == Some(false);
                    g.some_true |= v == Some(true);
                }
            }
            "else" => {
                if let Some(g) = stack.last_mut() {
                    g.dead = g.some_true;
                }
            }
            "endif" => {
                stack.pop();
            }
            "define" => {
                if let Some(m) = cond.first() {
                    if was_dead { &mut dead_defs } else { &mut live_defs }.insert(m.text.to_string());
                }
            }
            _ => {}
        }
        let dead = stack.iter().any(|g| g.dead);
        match (dead_since, dead) {
            (None, true) => dead_since = Some(t.line),
            (Some(from), false) => {
                ranges.push((from, t.line.saturating_sub(1)));
                dead_since = None;
            }
            _ => {}
        }
        i = end;
    }
    if let Some(from) = dead_since {
        ranges.push((from, u32::MAX));
    }
    NeverTaken(ranges)
}

/// Macros nvcc defines when it compiles device code, where inline PTX is read: a branch under
/// `#ifndef __CUDA_ARCH__` (or the `#else` of `#ifdef __CUDA_ARCH__`) is host code, whose asm
/// is the host's (`rdtsc`), not PTX.
const DEVICE_PASS: &[&str] = &["__CUDA_ARCH__", "__CUDACC__", "__NVCC__"];

/// A `#if` condition in three values (`None`: unknown). `known` says whether a macro is
/// defined, where that is known.
struct Eval<'a, 't, F: Fn(&str) -> Option<bool>> {
    toks: &'a [Token<'t>],
    at: usize,
    known: &'a F,
}

impl<F: Fn(&str) -> Option<bool>> Eval<'_, '_, F> {
    fn punct(&self, k: usize, c: u8) -> bool {
        self.toks.get(self.at + k).is_some_and(|t| t.is_punct(c))
    }

    fn or(&mut self) -> Option<bool> {
        let mut v = self.and();
        while self.punct(0, b'|') && self.punct(1, b'|') {
            self.at += 2;
            let r = self.and();
            v = match (v, r) {
                (Some(true), _) | (_, Some(true)) => Some(true),
                (Some(false), Some(false)) => Some(false),
                _ => None,
            };
        }
        v
    }

    fn and(&mut self) -> Option<bool> {
        let mut v = self.unary();
        while self.punct(0, b'&') && self.punct(1, b'&') {
            self.at += 2;
            let r = self.unary();
            v = match (v, r) {
                (Some(false), _) | (_, Some(false)) => Some(false),
                (Some(true), Some(true)) => Some(true),
                _ => None,
            };
        }
        v
    }

    fn unary(&mut self) -> Option<bool> {
        if self.punct(0, b'!') && !self.punct(1, b'=') {
            self.at += 1;
            return self.unary().map(|v| !v);
        }
        let mut v = self.primary();
        // A comparison or arithmetic (`CUDART_VERSION < 12000`, `__CUDA_ARCH__ >= 800`): unknown.
        while let Some(t) = self.toks.get(self.at) {
            let logical = (self.punct(0, b'&') && self.punct(1, b'&')) || (self.punct(0, b'|') && self.punct(1, b'|'));
            if logical || t.is_punct(b')') || !matches!(t.kind, Kind::Punct(_)) {
                break;
            }
            self.at += 1;
            if !matches!(self.toks.get(self.at).map(|t| t.kind), Some(Kind::Punct(b'=' | b'<' | b'>' | b'&' | b'|')) | None) {
                self.unary();
            }
            v = None;
        }
        v
    }

    fn primary(&mut self) -> Option<bool> {
        let t = self.toks.get(self.at)?;
        self.at += 1;
        match t.kind {
            Kind::Punct(b'(') => {
                let v = self.or();
                if self.punct(0, b')') {
                    self.at += 1;
                }
                v
            }
            Kind::Ident if t.text == "defined" => {
                let paren = self.punct(0, b'(');
                self.at += paren as usize;
                let name = self.toks.get(self.at).map_or("", |n| n.text);
                self.at += 1;
                if paren && self.punct(0, b')') {
                    self.at += 1;
                }
                (self.known)(name)
            }
            Kind::Ident => {
                // A function-like macro's call: its arguments are skipped.
                if self.punct(0, b'(') {
                    let mut depth = 0;
                    while let Some(a) = self.toks.get(self.at) {
                        self.at += 1;
                        depth += a.is_punct(b'(') as i32 - a.is_punct(b')') as i32;
                        if depth == 0 {
                            break;
                        }
                    }
                    return None;
                }
                // An undefined macro is 0; of the defined ones, only the arch's value is known
                // (nonzero).
                match (self.known)(t.text) {
                    Some(false) => Some(false),
                    Some(true) if t.text == "__CUDA_ARCH__" => Some(true),
                    _ => None,
                }
            }
            Kind::Number => {
                let digits = t.text.trim_end_matches(['u', 'U', 'l', 'L']);
                let value = match digits.strip_prefix("0x").or_else(|| digits.strip_prefix("0X")) {
                    Some(hex) => u64::from_str_radix(hex, 16).ok(),
                    None => digits.parse::<u64>().ok(),
                };
                value.map(|v| v != 0)
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::c_lex;

    fn dead_lines(src: &str) -> Vec<u32> {
        let toks = c_lex::tokens(src);
        let n = never_taken(&toks);
        (1..=src.lines().count() as u32).filter(|&l| n.contains(l)).collect()
    }

    #[test]
    fn platform_and_zero_branches_are_never_taken() {
        assert!(foreign("GGML_USE_HIP") && foreign("__HIP_PLATFORM_AMD__") && foreign("USE_ROCM") && foreign("__gfx906__"));
        assert!(foreign("RDNA3") && foreign("CDNA") && foreign("GGML_USE_MUSA") && foreign("MUSART_VERSION"));
        assert!(!foreign("CUDART_VERSION") && !foreign("__CUDA_ARCH__") && !foreign("PTX_AVAILABLE") && !foreign("SHIP_IT"));
        assert!(!foreign("GFX") && !foreign("__gfx_x"));

        let src = "#if defined(GGML_USE_HIP)\nhip\n#elif __CUDA_ARCH__ >= 800\nnew\n#else\nold\n#endif\n\
                   #ifndef GGML_USE_HIP\ncuda\n#else\nhip\n#endif\n\
                   #if 0\nzero\n#endif\n\
                   #if (defined(CUDART_VERSION) && CUDART_VERSION < 11000) || defined(GGML_USE_HIP)\nboth\n#endif\n\
                   #if defined(GGML_USE_HIP) && (defined(RDNA2) || defined(CDNA))\n#define V_DOT2\n#endif\n\
                   #ifdef V_DOT2\nhip\n#else\ncuda\n#endif\n\
                   #if !defined(X) && !defined(USE_ROCM)\ncuda\n#else\nmaybe\n#endif\n";
        // 1-7: the HIP branch; 8-12: the `#else` of `#ifndef`; 13-15: `#if 0`; 16-18 taken;
        // 19-21: V_DOT2 defined under HIP only; 22-26: tested alone; 27-31: unknown.
        assert_eq!(dead_lines(src), [1, 2, 10, 11, 13, 14, 19, 20, 22, 23]);
    }

    /// A `__host__ __device__` helper's host branch (x86's `rdtsc`) is not device code.
    #[test]
    fn host_branches_of_device_code_are_never_taken() {
        let src = "#ifdef __CUDA_ARCH__\ndevice\n#else\nhost\n#endif\n\
                   #if !defined(__CUDA_ARCH__)\nhost\n#endif\n\
                   #ifndef __CUDACC__\nplain\n#endif\n\
                   #if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800\nold\n#else\nnew\n#endif\n\
                   #if __CUDA_ARCH__\narch\n#else\nhost\n#endif\n";
        // 3-4: `#else` of `#ifdef __CUDA_ARCH__`; 6-7; 9-10; 12-15: unknown; 17-19: the `#else`.
        assert_eq!(dead_lines(src), [3, 4, 6, 7, 9, 10, 19, 20]);
    }

    #[test]
    fn a_macro_defined_for_cuda_too_is_not_foreign() {
        let src = "#ifdef GGML_USE_HIP\n#define FAST 1\n#else\n#define FAST 1\n#endif\n#ifdef FAST\nused\n#endif\n";
        assert!(dead_lines(src).iter().all(|&l| l < 5), "{:?}", dead_lines(src));
    }
}
