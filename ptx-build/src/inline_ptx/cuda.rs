//! `asm()` statements in CUDA C++: found with [`crate::text::c_lex`], checked against NVIDIA's
//! constraint letters, `%N` references and the template rules of [`super::template`].

use std::path::Path;

use super::plural;
use super::qualifiers::Qualifiers;
use super::template::{
    changing_register_read, declared_registers, destination, is_special_register, operand_refs, statements, unscoped_definitions,
    unterminated, writes_memory, written_either_way,
};
use crate::diag::Diagnostic;
use crate::error::{Error, Result};
use crate::text::c_lex::{self, Kind, Token};

/// The constraint letters of the reference: `.u16`, `.u32`, `.u64`, `.u128`, `.f32`, `.f64`,
/// immediate, and a compile-time constant string (`C`, C++17 templates).
const CONSTRAINT_LETTERS: &str = "hrlqfdnC";

/// An `asm(...)` statement found in a .cu file.
#[derive(Debug)]
struct CAsm {
    line: u32,
    column: u32,
    volatile: bool,
    /// The concatenated template, and for each byte its source position.
    template: String,
    positions: Vec<(u32, u32)>,
    /// The template contained something besides string literals (a macro): skip text rules.
    opaque_template: bool,
    outputs: Vec<COperand>,
    inputs: Vec<COperand>,
    /// An operand section holds a macro that may stand for any number of operands: `%N` is
    /// not checked against the count.
    opaque_operands: bool,
    clobbers: Vec<String>,
    /// The enclosing function can be inlined (a `__device__` function that is not `__noinline__`).
    inlinable: Option<String>,
    /// PTX `{` that earlier asm statements of the same function opened and left open: sppark's
    /// `asm("{"); asm(".reg.pred %brw;"); ..; asm("}");` scopes its declarations across statements.
    scope: usize,
    /// A preprocessor line inside the statement (`#if` choosing the template, as CUTLASS's
    /// `cp.async` wrappers do): which text and operands the compiler sees is the preprocessor's
    /// choice, so nothing is checked.
    conditional: bool,
}

#[derive(Debug)]
struct COperand {
    /// Empty where a macro spells it (CUDA's `__LDG_PTR(ptr)`, `"l"` or `"r"` by platform).
    constraint: String,
    line: u32,
    column: u32,
}

impl CAsm {
    fn operand_count(&self) -> usize {
        self.outputs.len() + self.inputs.len()
    }

    fn operand(&self, n: usize) -> Option<&COperand> {
        self.outputs.iter().chain(&self.inputs).nth(n)
    }

    fn pos(&self, offset: usize) -> (u32, u32) {
        self.positions.get(offset).copied().unwrap_or((self.line, self.column))
    }
}

/// Finds every `asm` statement of a CUDA C++ source. `inherited` holds the qualifier macros
/// of the files read with it (its headers); its own are added.
fn scan_c(src: &str, inherited: &Qualifiers) -> Vec<CAsm> {
    let toks = c_lex::tokens(src);
    // AMD's asm under `#if defined(GGML_USE_HIP)`, dead code under `#if 0`: no PTX.
    let never_taken = super::preproc::never_taken(&toks);
    let mut quals = inherited.clone();
    quals.read(&toks, &never_taken);
    let quals = quals.resolve();
    let mut out = Vec::new();
    // For each open `{`, the text before it: a function header, `if (..)`, `namespace x`, ...
    let mut blocks: Vec<String> = Vec::new();
    // For each open `{`, the PTX `{` its asm statements left open (see `CAsm::scope`).
    let mut ptx_open: Vec<usize> = Vec::new();
    // Tokens since the last `;`, `{` or `}`: the header of the next block. A macro's body is
    // read like code (an asm in it is checked too), but a `#` that starts a header is left out
    // of it; other preprocessor lines (`#if`, `#include`, ...) are no code: a `#ifdef X` before
    // an `if (..) {` would make its block read as a function `ifdef X ..`, a host one.
    let mut header = String::new();
    // Where the `#define` being read ends: its body is no part of the code after it (a
    // `#define DS_D_INLINE __device__ ..` before a host function would make it read as device).
    let mut define_end = None;
    let mut i = 0;
    while let Some(t) = toks.get(i) {
        if define_end.is_some_and(|end| i >= end) {
            define_end = None;
            header.clear();
        }
        if super::preproc::starts_directive(&toks, i) {
            if toks.get(i + 1).is_some_and(|w| w.directive && w.text != "define") {
                i = super::preproc::directive_end(&toks, i);
                continue;
            }
            header.clear();
            define_end = Some(super::preproc::directive_end(&toks, i));
        }
        i += 1;
        match t.kind {
            Kind::Str => header.push_str("\"\""),
            Kind::Char => {}
            Kind::Punct(b'#') if header.trim().is_empty() => {}
            Kind::Punct(b'{') => {
                blocks.push(std::mem::take(&mut header));
                ptx_open.push(0);
            }
            Kind::Punct(b'}') => {
                blocks.pop();
                ptx_open.pop();
                header.clear();
            }
            Kind::Punct(b';') => header.clear(),
            Kind::Ident => {
                if matches!(t.text, "asm" | "__asm__" | "__asm") {
                    if let Some(mut a) = asm_statement(&toks, &mut i, t.line, t.col) {
                        a.inlinable = enclosing_inlinable(&blocks);
                        if let Some(open) = enclosing_function_at(&blocks).and_then(|f| ptx_open.get_mut(f)) {
                            a.scope = *open;
                            if !a.opaque_template && !a.conditional {
                                let net = a.template.matches('{').count() as isize - a.template.matches('}').count() as isize;
                                *open = open.saturating_add_signed(net);
                            }
                        }
                        // Host code's asm (`rdtsc`, `pause`) is x86's, not PTX.
                        if !in_host_function(&blocks) && !never_taken.contains(t.line) {
                            out.push(a);
                        }
                        continue;
                    }
                }
                header.push(' ');
                // `DS_D_INLINE` reads as the `__device__ __forceinline__` it stands for.
                header.push_str(quals.get(t.text).unwrap_or(t.text));
            }
            Kind::Number | Kind::Punct(_) => header.push_str(t.text),
        }
    }
    out
}

/// The innermost enclosing function's header (`__device__ int cube (int x)`) and its words,
/// past the blocks of `if`, `for`, ... and those without a parameter list (`namespace x`).
fn enclosing_function(blocks: &[String]) -> Option<(&str, Vec<&str>)> {
    let h = blocks[enclosing_function_at(blocks)?].trim();
    Some((h, function_words(h)?))
}

/// Where in `blocks` the innermost enclosing function's body opens.
fn enclosing_function_at(blocks: &[String]) -> Option<usize> {
    blocks.iter().rposition(|b| function_words(b.trim()).is_some())
}

/// The words of block header `h` when it is a function's.
fn function_words(h: &str) -> Option<Vec<&str>> {
    let words: Vec<&str> = h.split(|c: char| !c.is_ascii_alphanumeric() && c != '_').filter(|w| !w.is_empty()).collect();
    let control = matches!(words.first().copied(), Some("if" | "else" | "for" | "while" | "do" | "switch" | "try" | "catch"));
    (h.contains('(') && !control).then_some(words)
}

/// Whether the innermost enclosing function is host code: a header with neither `__device__`
/// nor `__global__` (`__host__ __device__` is device code too). An asm outside any function (a
/// macro's body) is read as PTX.
fn in_host_function(blocks: &[String]) -> bool {
    enclosing_function(blocks).is_some_and(|(_, words)| !words.contains(&"__device__") && !words.contains(&"__global__"))
}

/// The name of the enclosing function when it is one that can be inlined at several call sites.
fn enclosing_inlinable(blocks: &[String]) -> Option<String> {
    let (h, words) = enclosing_function(blocks)?;
    if words.contains(&"__global__") || words.contains(&"__noinline__") || !words.contains(&"__device__") {
        return None;
    }
    let name = h[..h.find('(').unwrap_or(h.len())].rsplit(|c: char| !c.is_ascii_alphanumeric() && c != '_').find(|w| !w.is_empty());
    Some(name.unwrap_or("the function").to_string())
}

/// Parses `[volatile] ( template : outputs : inputs : clobbers )` after the `asm` keyword;
/// `i` is the token after it, and is left after the statement (or after the qualifiers read,
/// when this is not an asm statement).
fn asm_statement(toks: &[Token<'_>], i: &mut usize, line: u32, column: u32) -> Option<CAsm> {
    let mut volatile = false;
    while let Some(t) = toks.get(*i).filter(|t| t.kind == Kind::Ident) {
        match t.text {
            "volatile" | "__volatile__" | "__volatile" => volatile = true,
            "goto" | "inline" | "__inline" => {}
            _ => return None,
        }
        *i += 1;
    }
    if !toks.get(*i).is_some_and(|t| t.is_punct(b'(')) {
        return None;
    }
    *i += 1;
    let mut a = CAsm {
        line,
        column,
        volatile,
        template: String::new(),
        positions: Vec::new(),
        opaque_template: false,
        outputs: Vec::new(),
        inputs: Vec::new(),
        opaque_operands: false,
        clobbers: Vec::new(),
        inlinable: None,
        scope: 0,
        conditional: false,
    };
    let mut section = 0;
    while let Some(t) = toks.get(*i) {
        *i += 1;
        match t.kind {
            Kind::Punct(b')') => break,
            Kind::Punct(b'#') => a.conditional = true,
            Kind::Punct(b':') => section += 1,
            Kind::Punct(b',') => {}
            Kind::Str => {
                let (value, pos) = c_lex::string_value(t);
                match section {
                    0 => {
                        a.template.push_str(&value);
                        // One position per template byte (padded where lossy UTF-8 grew the text).
                        a.positions.extend(pos);
                        a.positions.resize(a.template.len(), (t.line, t.col));
                    }
                    1 | 2 => {
                        let op = COperand { constraint: value, line: t.line, column: t.col };
                        if section == 1 {
                            a.outputs.push(op);
                        } else {
                            a.inputs.push(op);
                        }
                        // The operand's expression: `( expr )`.
                        if toks.get(*i).is_some_and(|t| t.is_punct(b'(')) {
                            skip_balanced(toks, i);
                        }
                    }
                    _ => a.clobbers.push(value),
                }
            }
            Kind::Punct(b'[') => {
                // A named operand `[name] "r"(x)`.
                while toks.get(*i).is_some_and(|t| !t.is_punct(b']')) {
                    *i += 1;
                }
                *i += 1;
            }
            Kind::Punct(b'(') => {
                if section == 0 {
                    a.opaque_template = true;
                }
                *i -= 1;
                skip_balanced(toks, i);
            }
            Kind::Ident if section == 1 || section == 2 => {
                // A macro for the constraint, then the operand's `(expr)`: one operand whose
                // letter the preprocessor picks. Without `(expr)`, any number of them.
                if toks.get(*i).is_some_and(|t| t.is_punct(b'(')) {
                    let op = COperand { constraint: String::new(), line: t.line, column: t.col };
                    if section == 1 { &mut a.outputs } else { &mut a.inputs }.push(op);
                    skip_balanced(toks, i);
                } else {
                    a.opaque_operands = true;
                }
            }
            _ => {
                if section == 0 {
                    a.opaque_template = true;
                }
            }
        }
    }
    Some(a)
}

/// Moves `i` from a `(` to just after its matching `)` (or to the end).
fn skip_balanced(toks: &[Token<'_>], i: &mut usize) {
    let mut depth = 0usize;
    while let Some(t) = toks.get(*i) {
        *i += 1;
        if t.is_punct(b'(') {
            depth += 1;
        } else if t.is_punct(b')') {
            depth -= 1;
            if depth == 0 {
                return;
            }
        }
    }
}
/// Checks every `asm` statement of a CUDA C++ source. `file` is how diagnostics name it.
pub fn check_cuda(file: &Path, src: &str) -> Vec<Diagnostic> {
    check_cuda_with(file, src, &Qualifiers::default())
}

/// [`check_cuda`] with the qualifier macros of the headers read with the source.
pub(super) fn check_cuda_with(file: &Path, src: &str, quals: &Qualifiers) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for a in scan_c(src, quals).iter().filter(|a| !a.conditional) {
        check_c_asm(file, a, &mut out);
    }
    out
}

/// Reads and checks a .cu file.
pub fn check_cuda_file(path: &Path, shown_as: &Path) -> Result<Vec<Diagnostic>> {
    check_cuda_file_with(path, shown_as, &Qualifiers::default())
}

/// [`check_cuda_file`] with the qualifier macros of the headers read with it.
pub(super) fn check_cuda_file_with(path: &Path, shown_as: &Path, quals: &Qualifiers) -> Result<Vec<Diagnostic>> {
    let src = std::fs::read(path).map_err(|e| Error::io("read", path, e))?;
    Ok(check_cuda_with(shown_as, &String::from_utf8_lossy(&src), quals))
}

fn check_c_asm(file: &Path, a: &CAsm, out: &mut Vec<Diagnostic>) {
    let at = |d: Diagnostic, (line, col): (u32, u32)| d.at(file, Some(line), Some(col));

    // Constraints.
    for (i, op) in a.outputs.iter().chain(&a.inputs).enumerate().filter(|(_, op)| !op.constraint.is_empty()) {
        let is_output = i < a.outputs.len();
        let mut letters = op.constraint.as_str();
        if is_output {
            match letters.strip_prefix(['=', '+']) {
                Some(rest) => letters = rest,
                None => out.push(at(
                    Diagnostic::error(format!("output operand %{i} has constraint \"{}\" without `=` or `+`", op.constraint))
                        .note("an output's constraint starts with `=` (written) or `+` (read and written), e.g. \"=r\""),
                    (op.line, op.column),
                )),
            }
        } else if letters.starts_with(['=', '+']) {
            out.push(at(
                Diagnostic::error(format!("input operand %{i} has constraint \"{}\": `=` and `+` belong to outputs", op.constraint))
                    .note("move it before the second `:` to make it an output, or drop the modifier"),
                (op.line, op.column),
            ));
            letters = &letters[1..];
        }
        let bad: Vec<char> = letters.chars().filter(|c| !CONSTRAINT_LETTERS.contains(*c)).collect();
        if !bad.is_empty() {
            out.push(at(
                Diagnostic::error(format!("operand %{i}: `{}` is not an inline-PTX constraint letter", bad.iter().collect::<String>()))
                    .note("use h (.u16), r (.u32), l (.u64), q (.u128), f (.f32), d (.f64), n (immediate) or C (constant string); there is none for 8-bit values: widen them to 16 or 32 bits"),
                (op.line, op.column),
            ));
        } else if letters.chars().count() > 1 {
            out.push(at(
                Diagnostic::error(format!("operand %{i} has two constraint letters (\"{}\"); an operand takes exactly one", op.constraint))
                    .note("pick the letter of the operand's PTX type, e.g. \"r\" for a 32-bit integer, \"f\" for a float"),
                (op.line, op.column),
            ));
        } else if letters.is_empty() {
            out.push(at(Diagnostic::error(format!("operand %{i} has no constraint letter")), (op.line, op.column)));
        }
    }
    if a.opaque_template {
        return;
    }
    let t = a.template.as_str();
    let has_operands = a.operand_count() > 0;
    let (stmts, labels) = statements(t);
    let declared = declared_registers(t);

    // Operand references, modifiers, and `%` before special registers.
    let bytes = t.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'%' {
            i += 1;
            continue;
        }
        if bytes.get(i + 1) == Some(&b'%') {
            i += 2;
            continue;
        }
        let rest = &t[i + 1..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 {
            let n: usize = rest[..digits].parse().unwrap_or(usize::MAX);
            if has_operands && !a.opaque_operands && n >= a.operand_count() {
                out.push(at(
                    Diagnostic::error(format!(
                        "`%{n}` refers to operand {n}, but this asm has {} operand{}",
                        a.operand_count(),
                        plural(a.operand_count())
                    ))
                    .note(format!(
                        "operands are numbered from %0: outputs first, then inputs (here %0..%{})",
                        a.operand_count().saturating_sub(1)
                    )),
                    a.pos(i),
                ));
            }
            i += 1 + digits;
            continue;
        }
        let word_len = rest.bytes().take_while(|b| b.is_ascii_alphanumeric() || *b == b'_').count();
        let word = &rest[..word_len];
        let letters = word.bytes().take_while(u8::is_ascii_alphabetic).count();
        let is_modifier = has_operands
            && letters >= 1
            && letters < word.len()
            && word[letters..].bytes().all(|b| b.is_ascii_digit())
            && !declared.iter().any(|d| d == word || d == &word[..letters]);
        if is_modifier {
            out.push(at(
                Diagnostic::error(format!("`%{word}`: operand modifiers (`%{}`) are not supported in inline PTX", &word[..letters]))
                    .note(format!("write the operand as `%{}`; a literal `%` is written `%%`", &word[letters..])),
                a.pos(i),
            ));
        } else if has_operands && is_special_register(word) {
            out.push(at(
                Diagnostic::warning(format!("special register `%{word}` should be written `%%{word}` in an asm with operands"))
                    .note("in an asm with operands, `%` starts an operand reference; `%%` is a literal `%`"),
                a.pos(i),
            ));
        }
        i += 1 + word_len.max(1);
    }

    for off in unterminated(t) {
        out.push(at(
            Diagnostic::warning("a PTX instruction in this asm does not end in `;`")
                .note("ptxas stops at the token after it with \"Parsing error ... syntax error\": end each instruction with `;` (`\"mov.u32 %0, %%laneid;\"`)"),
            a.pos(off.saturating_sub(1)),
        ));
    }

    // Unscoped declarations and labels in an inlinable function.
    if let Some(func) = &a.inlinable {
        for (off, what) in unscoped_definitions(t, &labels, a.scope) {
            out.push(at(
                Diagnostic::warning(format!("{what} outside `{{ }}` in an asm of `{func}`, a __device__ function that can be inlined more than once"))
                    .note("each inlined copy declares it again and ptxas fails with a duplicate definition: wrap the asm's PTX in `{` and `}`, as in \"{\\n\\t.reg .u32 t1;\\n\\t...}\""),
                a.pos(off),
            ));
        }
    }

    // Changing special registers without volatile.
    if !a.volatile {
        if let Some((off, reg)) = changing_register_read(t) {
            out.push(at(
                Diagnostic::warning(format!("asm reads `%{reg}`, which changes while the thread runs, but is not `volatile`"))
                    .note("the compiler may delete, merge or move an asm that is not volatile: write `asm volatile(...)`"),
                a.pos(off),
            ));
        }
    }

    // Memory writes without a "memory" clobber.
    if !a.clobbers.iter().any(|c| c.trim() == "memory") {
        if let Some(s) = stmts.iter().find(|s| writes_memory(s.mnemonic)) {
            out.push(at(
                Diagnostic::warning(format!("asm writes memory (`{}`) without a \"memory\" clobber", s.mnemonic)).note(
                    "the compiler may keep values in registers across it or reorder other accesses: add `: \"memory\"` after the inputs",
                ),
                a.pos(s.offset),
            ));
        }
    }

    // Predicated writes to `=` outputs.
    for (i, s) in stmts.iter().enumerate().filter(|(_, s)| s.predicated && !writes_memory(s.mnemonic)) {
        for n in operand_refs(destination(s.operands)) {
            if written_either_way(&stmts, i, n, operand_refs) {
                continue;
            }
            if let Some(op) = a.operand(n).filter(|op| op.constraint.starts_with('=')) {
                out.push(at(
                    Diagnostic::warning(format!(
                        "output %{n} is written only when the predicate holds (`{}`), but is declared \"{}\"",
                        s.mnemonic, op.constraint
                    ))
                    .note(format!(
                        "with `=` the compiler may drop the value it had before: declare it \"+{}\" so it is read and written",
                        &op.constraint[1..]
                    )),
                    a.pos(s.offset),
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::one;
    use super::*;

    fn cu(src: &str) -> Vec<Diagnostic> {
        check_cuda(Path::new("k.cu"), src)
    }

    /// The valid forms of NVIDIA's reference give no diagnostic.
    #[test]
    fn the_references_valid_forms_pass() {
        let src = r#"
#include <cuda_fp16.h>
__device__ int cube(int x) {
  int y;
  asm("{\n\t"                        // scoped temp register
      " .reg .u32 t1;\n\t"
      " mul.lo.u32 t1, %1, %1;\n\t"
      " mul.lo.u32 %0, t1, %1;\n\t"
      "}"
      : "=r"(y) : "r" (x));
  return y;
}
__device__ int cond(int x) {
  int y = 0;
  asm("{\n\t"
      " .reg .pred %p;\n\t"
      " setp.eq.s32 %p, %1, 34;\n\t"  // x == 34?
      " @%p mov.s32 %0, 1;\n\t"       // set y to 1 if true
      "}"
      : "+r"(y) : "r" (x));
  return y;
}
template <const char *op> __device__ void f(int *p) {
  asm volatile("st.global.u32 [%0], %1;" :: "l"(p), "n"(42) : "memory");
  asm volatile("%0" :: "C"(op));
}
__global__ void k(short *h, long long *l, float *f, double *d) {
  unsigned c;
  asm volatile("mov.u32 %0, %%clock;" : "=r"(c));
  asm("add.s16 %0, %0, 1;" : "+h"(*h));
  asm("add.s64 %0, %0, 1;" : "+l"(*l));
  asm("add.f32 %0, %0, 0f3F800000;" : "+f"(*f));
  asm("add.f64 %0, %0, %1;" : "+d"(*d) : "d"(1.0));
  asm("membar.gl;");
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(c));
  asm("mov.u32 %0, %%smid;" : "=r"(c)); // comment: "asm(" in a comment is ignored
  const char *s = "asm(\"%9\" : : )";
}
"#;
        let d = cu(src);
        let smid: Vec<_> = d.iter().filter(|d| d.message.contains("%smid")).collect();
        assert_eq!(smid.len(), 1, "{d:#?}");
        assert_eq!(d.len(), 1, "only the non-volatile %smid read: {d:#?}");
    }

    #[test]
    fn an_asm_whose_text_the_preprocessor_chooses_is_left_alone() {
        // CUTLASS's memory_sm80.h: `#if` picks one template of two inside the statement.
        let src = "__device__ void cp(unsigned s, const void *g, int n) {\n  asm volatile(\n#if PREFETCH\n    \"cp.async.ca.shared.global.L2::128B [%0], [%1], %2, %3;\\n\" ::\"r\"(s),\n#else\n    \"cp.async.ca.shared.global [%0], [%1], %2, %3;\\n\" ::\"r\"(s),\n#endif\n    \"l\"(g), \"n\"(16), \"r\"(n));\n}\n";
        assert!(cu(src).is_empty(), "{:?}", cu(src));
        // The same statement without the `#if` is read (and its mistakes named).
        let plain = "__device__ void cp(unsigned s, const void *g, int n) {\n  asm volatile(\"cp.async.ca.shared.global [%0], [%1], %2, %4;\\n\" ::\"r\"(s), \"l\"(g), \"n\"(16), \"r\"(n));\n}\n";
        let d = cu(plain);
        assert!(d.iter().any(|d| d.message == "`%4` refers to operand 4, but this asm has 4 operands"), "{d:?}");
    }

    #[test]
    fn host_functions_asm_is_not_ptx() {
        // x86 in a .cu file's host code: no PTX rule applies (its "=a" is no PTX constraint).
        let src = "static inline unsigned long long ticks() {\n  unsigned lo, hi;\n  asm volatile(\"rdtsc\" : \"=a\"(lo), \"=d\"(hi));\n  return lo;\n}\nvoid spin() { asm volatile(\"pause\"); }\n";
        assert!(cu(src).is_empty(), "{:?}", cu(src));
        // `__host__ __device__` is device code as well, and so is a kernel's body.
        let both = "__host__ __device__ void f() { asm volatile(\"membar.gl\"); }\n";
        assert_eq!(cu(both).len(), 1, "{:?}", cu(both));
        // Preprocessor lines before a block are no part of its header (ggml's `cp_async_cg_16`:
        // `#ifdef` and `#if` before `if (..) {` read as a host function `ifdef ..`).
        let guarded = "__device__ void f(unsigned *p) {\n#ifdef CP_ASYNC\n#if CUDART_VERSION >= 11040\n  if (p) {\n    asm volatile(\"st.global.u32 [%0], 1;\" :: \"l\"(p));\n  }\n#endif\n#endif\n}\n";
        assert_eq!(one(&cu(guarded), "without a \"memory\" clobber"), "k.cu:5:19");
        // AMD's asm for a HIP build of the same header is not PTX (ggml's `common.cuh`).
        let hip = "__device__ void mad(float &acc, int v) {\n#if defined(GGML_USE_HIP)\n  asm volatile(\"v_dot2_f32_f16 %0, %1, %1, %0\" : \"+v\"(acc) : \"v\"(v));\n#else\n  acc += v;\n#endif\n}\n";
        assert!(cu(hip).is_empty(), "{:?}", cu(hip));
    }

    /// A qualifier macro defined in the same file makes a device function (DeepSpeed's
    /// `DS_D_INLINE`); a `#define` is no part of the function header after it, so a host
    /// function after `#define ... __device__` stays host code.
    #[test]
    fn qualifier_macros_of_the_same_file_make_device_functions() {
        let src = "#define DS_HD_INLINE __host__ __device__ __forceinline__\n#define DS_D_INLINE __device__ __forceinline__\n\
                   DS_D_INLINE void store(float *p, float v) {\n  asm volatile(\"st.global.f32 [%0], %1;\" :: \"l\"(p), \"f\"(v));\n}\n\
                   #define DS_H_INLINE __host__ inline\n\
                   DS_H_INLINE unsigned long long ticks() {\n  unsigned lo, hi;\n  asm volatile(\"rdtsc\" : \"=a\"(lo), \"=d\"(hi));\n  return lo;\n}\n\
                   DS_HD_INLINE int lane() {\n#ifdef __CUDA_ARCH__\n  int l;\n  asm(\"mov.u32 %0, %laneid;\" : \"=r\"(l));\n  return l;\n#else\n  asm volatile(\"pause\");\n  return 0;\n#endif\n}\n";
        let d = cu(src);
        let at: Vec<(String, &str)> = d.iter().map(|d| (d.location().unwrap(), d.message.as_str())).collect();
        assert_eq!(
            at,
            [
                ("k.cu:4:17".to_string(), "asm writes memory (`st.global.f32`) without a \"memory\" clobber"),
                ("k.cu:15:20".to_string(), "special register `%laneid` should be written `%%laneid` in an asm with operands"),
            ],
            "the device functions' asm, not the host function's or the host branch's"
        );
        // A macro spelling something else is no qualifier: the function stays host code.
        let other = "#define N 256\n#define LOAD(p) __device__ p\nN; LOAD(int) void f() {\n  asm volatile(\"rdtsc\" : \"=a\"(x));\n}\n";
        assert!(cu(other).is_empty(), "{:?}", cu(other));
    }

    /// CUDA's `sm_32_intrinsics.hpp`: the pointer's constraint is a macro (`"l"` or `"r"` by
    /// platform); it is an operand all the same. A macro without `(expr)` may be several.
    #[test]
    fn a_constraint_spelt_by_a_macro_is_an_operand() {
        let src = "#define __LDG_PTR \"l\"\n__device__ int ldg(const int *ptr) { int ret; asm (\"ld.global.nc.s32 %0, [%1];\"  : \"=r\"(ret) : __LDG_PTR (ptr)); return ret; }\n";
        assert!(cu(src).is_empty(), "{:?}", cu(src));
        let beyond = src.replace("[%1]", "[%2]");
        one(&cu(&beyond), "`%2` refers to operand 2, but this asm has 2 operands");
        let many = "__device__ void f(int *p) { asm volatile(\"st.global.v2.u32 [%0], {%1, %2};\" :: OPERANDS : \"memory\"); }\n";
        assert!(cu(many).is_empty(), "{:?}", cu(many));
    }

    /// The async copies' bookkeeping writes no memory itself (CUDA's `cuda_pipeline_helpers.h`
    /// commits and waits without "memory"); the copy does.
    #[test]
    fn async_copy_bookkeeping_is_no_memory_write() {
        for t in [
            "cp.async.commit_group;",
            "cp.async.wait_group 0;",
            "cp.async.wait_all;",
            "cp.async.bulk.commit_group;",
            "cp.async.mbarrier.arrive.shared.b64 [%0];",
        ] {
            let src = format!("__device__ void f(unsigned long long *b) {{ asm volatile(\"{t}\" :: \"l\"(b)); }}\n");
            assert!(cu(&src).is_empty(), "{t}: {:?}", cu(&src));
        }
        let copy = "__device__ void f(unsigned s, const void *g) { asm volatile(\"cp.async.cg.shared.global [%0], [%1], 16;\" :: \"r\"(s), \"l\"(g)); }\n";
        one(&cu(copy), "asm writes memory (`cp.async.cg.shared.global`) without a \"memory\" clobber");
    }

    #[test]
    fn an_instruction_without_its_semicolon() {
        let d =
            cu("__global__ void k(unsigned *o) {\n  unsigned x;\n  asm volatile(\"mov.u32 %0, %%laneid\" : \"=r\"(x));\n  *o = x;\n}\n");
        assert_eq!(one(&d, "a PTX instruction in this asm does not end in `;`"), "k.cu:3:36");
        // Any UTF-8 in the template is read, not sliced through.
        assert!(cu(
            "__global__ void k(float *o) {\n  asm(\"mul.f32 %0, %1, %2; /* a·b */\" : \"=f\"(o[0]) : \"f\"(o[1]), \"f\"(o[2]));\n}\n"
        )
        .is_empty());
    }

    #[test]
    fn operand_beyond_the_operands() {
        let d = cu("__global__ void k(int *o, int j) {\n  int x;\n  asm(\"add.s32 %0, %1, %2;\" : \"=r\"(x) : \"r\"(j));\n}\n");
        assert_eq!(one(&d, "`%2` refers to operand 2, but this asm has 2 operands"), "k.cu:3:24");
        assert!(cu("__global__ void k(int j) {\n  int x;\n  asm(\"add.s32 %0, %1, %1;\" : \"=r\"(x) : \"r\"(j));\n}\n").is_empty());
    }

    #[test]
    fn constraint_letters() {
        let d = cu("__global__ void k(int j) {\n  int x;\n  asm(\"mov.u32 %0, %1;\" : \"=r\"(x) : \"rf\"(j));\n}\n");
        assert_eq!(one(&d, "two constraint letters (\"rf\")"), "k.cu:3:37");
        let d = cu("__global__ void k(char j) {\n  int x;\n  asm(\"mov.u32 %0, %1;\" : \"=r\"(x) : \"c\"(j));\n}\n");
        one(&d, "`c` is not an inline-PTX constraint letter");
        assert!(d[0].notes[0].contains("none for 8-bit values"));
        let d = cu("__global__ void k(int j) {\n  int x;\n  asm(\"mov.u32 %0, %1;\" : \"r\"(x) : \"r\"(j));\n}\n");
        one(&d, "without `=` or `+`");
        assert!(cu("__global__ void k(int j) {\n  int x;\n  asm(\"mov.u32 %0, %1;\" : \"=r\"(x) : \"r\"(j));\n}\n").is_empty());
    }

    #[test]
    fn operand_modifiers() {
        let d = cu("__global__ void k(int *o) {\n  int n;\n  asm(\"mov.u32 %0, %n1;\" : \"=r\"(n) : \"r\"(1));\n}\n");
        assert_eq!(one(&d, "`%n1`: operand modifiers (`%n`) are not supported"), "k.cu:3:20");
        // A register the asm declares is not a modifier.
        assert!(cu("__global__ void k(int x) {\n  int y;\n  asm(\"{ .reg .pred %p1; setp.eq.s32 %p1, %1, 3; selp.s32 %0, 1, 0, %p1; }\" : \"=r\"(y) : \"r\"(x));\n}\n").is_empty());
    }

    #[test]
    fn special_register_needs_double_percent() {
        let d = cu("__global__ void k() {\n  unsigned c;\n  asm volatile(\"mov.u32 %0, %laneid;\" : \"=r\"(c));\n}\n");
        one(&d, "`%laneid` should be written `%%laneid`");
        // Without operands `%` is literal.
        assert!(cu("__global__ void k() {\n  asm volatile(\"{ .reg .u32 r; mov.u32 r, %laneid; }\");\n}\n").is_empty());
    }

    #[test]
    fn unscoped_reg_in_an_inlinable_function() {
        let src = "__device__ int cube(int x) {\n  int y;\n  asm(\".reg .u32 t1;\\n\\t\"\n      \"mul.lo.u32 t1, %1, %1;\\n\\t\"\n      \"mul.lo.u32 %0, t1, %1;\" : \"=r\"(y) : \"r\"(x));\n  return y;\n}\n";
        assert_eq!(one(&cu(src), "a `.reg` declaration outside `{ }` in an asm of `cube`"), "k.cu:3:8");
        // In a kernel (not inlined) or a __noinline__ function it is fine.
        assert!(cu(&src.replace("__device__ int", "__global__ void")).is_empty());
        assert!(cu(&src.replace("__device__", "__device__ __noinline__")).is_empty());
        let label = "__device__ __forceinline__ void spin(int *p) {\n  if (p) {\n    asm volatile(\"L1: ld.volatile.global.u32 %0, [%1];\" : \"=r\"(*p) : \"l\"(p));\n  }\n}\n";
        one(&cu(label), "a label outside `{ }` in an asm of `spin`");
    }

    /// sppark's mont32_t (risc0's and SP1's field): the scope opens in an asm of its own, the
    /// predicate is declared in the next, used in the ones after, closed in the last. Once
    /// closed, a declaration is unscoped again, and a scope left open in one function does not
    /// reach the next.
    #[test]
    fn a_scope_opened_by_an_earlier_asm_of_the_function_holds_its_declarations() {
        let sppark = "struct m { unsigned val;
__device__ __forceinline__ m& operator-=(const m b) {
    asm(\"{\");
    asm(\".reg.pred %brw;\");
    asm(\"setp.lt.u32 %brw, %0, %1;\" :: \"r\"(val), \"r\"(b.val));
    asm(\"@%brw add.u32 %0, %0, 7;\" : \"+r\"(val));
    asm(\"}\");
    return *this;
} };
";
        assert!(cu(sppark).is_empty(), "{:?}", cu(sppark));
        let reopened = sppark.replace(
            "    return *this;",
            "    asm(\".reg.pred %again;\");
    return *this;",
        );
        assert_eq!(one(&cu(&reopened), "a `.reg` declaration outside `{ }` in an asm of `operator`"), "k.cu:8:10");
        let next = sppark.replace(
            "    asm(\"}\");
",
            "",
        ) + "__device__ __forceinline__ void f(int x) {
    asm(\".reg.pred %p;\");
}
";
        assert_eq!(one(&cu(&next), "a `.reg` declaration outside `{ }` in an asm of `f`"), "k.cu:10:10");
    }

    #[test]
    fn changing_register_without_volatile() {
        let d = cu("__global__ void k(unsigned long long *o) {\n  unsigned long long t;\n  asm(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t));\n  *o = t;\n}\n");
        one(&d, "reads `%globaltimer`, which changes while the thread runs, but is not `volatile`");
        assert!(cu("__global__ void k(unsigned long long *o) {\n  unsigned long long t;\n  asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t));\n}\n").is_empty());
    }

    #[test]
    fn memory_write_without_clobber() {
        let d = cu("__global__ void k(int *p) {\n  asm volatile(\"st.global.u32 [%0], 1;\" :: \"l\"(p));\n}\n");
        one(&d, "asm writes memory (`st.global.u32`) without a \"memory\" clobber");
        let d = cu("__global__ void k(int *p, int v) {\n  int old;\n  asm volatile(\"atom.global.add.u32 %0, [%1], %2;\" : \"=r\"(old) : \"l\"(p), \"r\"(v));\n}\n");
        one(&d, "(`atom.global.add.u32`)");
        assert!(
            cu("__global__ void k(int *p) {\n  asm volatile(\"red.global.add.u32 [%0], 1;\" :: \"l\"(p) : \"memory\");\n}\n").is_empty()
        );
    }

    #[test]
    fn predicated_write_to_an_equals_output() {
        let src = "__device__ __noinline__ int cond(int x) {\n  int y = 0;\n  asm(\"{\\n\\t.reg .pred p;\\n\\tsetp.eq.s32 p, %1, 34;\\n\\t@p mov.s32 %0, 1;\\n\\t}\" : \"=r\"(y) : \"r\"(x));\n  return y;\n}\n";
        one(&cu(src), "output %0 is written only when the predicate holds (`mov.s32`), but is declared \"=r\"");
        assert!(cu(&src.replace("\"=r\"(y)", "\"+r\"(y)")).is_empty());
        // Written either way: first unpredicated (DeepSpeed's `load_shared`), or under both guards.
        let set_first = src.replace("\\t@p mov", "\\tmov.s32 %0, 0;\\n\\t@p mov");
        assert!(cu(&set_first).is_empty(), "{set_first}");
        let both = src.replace("@p mov.s32 %0, 1;", "@p mov.s32 %0, 1;\\n\\t@!p mov.s32 %0, 2;");
        assert!(cu(&both).is_empty(), "{both}");
        // Set after the predicated write: the predicated value is lost, not the old one kept.
        let set_after = src.replace("@p mov.s32 %0, 1;", "@p mov.s32 %0, 1;\\n\\tadd.s32 %0, %0, 1;");
        one(&cu(&set_after), "output %0 is written only when the predicate holds");
    }
}
