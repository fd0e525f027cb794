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
//! The C side is a small scanner rather than a C++ parser (no C++ parser crate handles CUDA's
//! dialect): it skips comments and literals, finds `asm`/`__asm__` statements, splits their
//! sections, and knows which function each one sits in. Rust sources are read with syn.

use std::path::{Path, PathBuf};

use proc_macro2::{Delimiter, TokenTree};
use syn::visit::Visit;

use crate::config::KernelCrate;
use crate::diag::{relative, Diagnostic};
use crate::error::{Error, Result};

/// The constraint letters of the reference: `.u16`, `.u32`, `.u64`, `.u128`, `.f32`, `.f64`,
/// immediate, and a compile-time constant string (`C`, C++17 templates).
const CONSTRAINT_LETTERS: &str = "hrlqfdnC";

/// Special registers whose value changes while a thread runs: reading one in an asm that the
/// compiler may delete, merge or move gives stale or wrong values.
fn is_changing_register(name: &str) -> bool {
    matches!(name, "clock" | "clock64" | "clock_hi" | "globaltimer" | "globaltimer_lo" | "globaltimer_hi" | "smid" | "warpid")
        || name.strip_prefix("pm").is_some_and(|n| {
            let n = n.strip_suffix("_64").unwrap_or(n);
            n.len() == 1 && n.as_bytes()[0].is_ascii_digit()
        })
}

/// Every special register of the PTX ISA (for the `%%` rule), without the `.x` suffix.
fn is_special_register(name: &str) -> bool {
    is_changing_register(name)
        || matches!(
            name,
            "tid"
                | "ntid"
                | "laneid"
                | "nwarpid"
                | "ctaid"
                | "nctaid"
                | "nsmid"
                | "gridid"
                | "is_explicit_cluster"
                | "clusterid"
                | "nclusterid"
                | "cluster_ctaid"
                | "cluster_nctaid"
                | "cluster_ctarank"
                | "cluster_nctarank"
                | "lanemask_eq"
                | "lanemask_le"
                | "lanemask_lt"
                | "lanemask_ge"
                | "lanemask_gt"
                | "total_smem_size"
                | "aggr_smem_size"
                | "dynamic_smem_size"
                | "current_graph_exec"
        )
        || name.strip_prefix("envreg").is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        || name.starts_with("reserved_smem_offset")
}

/// Instructions that write memory.
fn writes_memory(mnemonic: &str) -> bool {
    let op = mnemonic.split('.').next().unwrap_or_default();
    matches!(op, "st" | "atom" | "red" | "stmatrix" | "multimem") || mnemonic.starts_with("cp.async") || mnemonic.starts_with("cp.reduce")
}

/// One PTX statement of a template: its optional guard predicate, mnemonic and operand text.
struct Statement<'a> {
    /// Byte offset in the template.
    offset: usize,
    predicated: bool,
    mnemonic: &'a str,
    operands: &'a str,
}

/// Splits a PTX template into statements (`;`-separated, labels and braces noted).
fn statements(template: &str) -> (Vec<Statement<'_>>, Vec<(usize, usize)>) {
    let mut out = Vec::new();
    let mut labels = Vec::new(); // (offset, depth)
    let mut depth = 0usize;
    let bytes = template.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c == b'{' {
            depth += 1;
            i += 1;
            continue;
        }
        if c == b'}' {
            depth = depth.saturating_sub(1);
            i += 1;
            continue;
        }
        if c.is_ascii_whitespace() || c == b';' {
            i += 1;
            continue;
        }
        if template[i..].starts_with("//") {
            i = template[i..].find('\n').map_or(bytes.len(), |n| i + n);
            continue;
        }
        let end = template[i..].find([';', '{', '}']).map_or(bytes.len(), |n| i + n);
        let mut text = &template[i..end];
        let mut start = i;
        // Leading labels: `L1:`.
        loop {
            let t = text.trim_start();
            start += text.len() - t.len();
            text = t;
            let ident_len = text.bytes().take_while(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'$').count();
            if ident_len > 0 && text[ident_len..].trim_start().starts_with(':') && !text[ident_len..].trim_start().starts_with("::") {
                labels.push((start, depth));
                let colon = text.find(':').unwrap_or(0) + 1;
                start += colon;
                text = &text[colon..];
            } else {
                break;
            }
        }
        let t = text.trim_start();
        start += text.len() - t.len();
        text = t.trim_end();
        if !text.is_empty() {
            let (predicated, rest) = match text.strip_prefix('@') {
                Some(r) => {
                    let n = r.find(char::is_whitespace).unwrap_or(r.len());
                    (true, r[n..].trim_start())
                }
                None => (false, text),
            };
            let n = rest.find(char::is_whitespace).unwrap_or(rest.len());
            out.push(Statement { offset: start, predicated, mnemonic: &rest[..n], operands: rest[n..].trim() });
        }
        i = end;
    }
    (out, labels)
}

/// The destination of an instruction: its first operand (a `{..}` vector counts as one).
fn destination(operands: &str) -> &str {
    let mut depth = 0;
    for (i, c) in operands.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => return &operands[..i],
            _ => {}
        }
    }
    operands
}

// ---------------------------------------------------------------------------------------------
// CUDA C++
// ---------------------------------------------------------------------------------------------

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
    clobbers: Vec<String>,
    /// The enclosing function can be inlined (a `__device__` function that is not `__noinline__`).
    inlinable: Option<String>,
}

#[derive(Debug)]
struct COperand {
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

/// A scanner over C/C++ source that tracks line and column and skips comments.
struct Scanner<'a> {
    src: &'a [u8],
    i: usize,
    line: u32,
    col: u32,
}

impl<'a> Scanner<'a> {
    fn new(src: &'a str) -> Self {
        Scanner { src: src.as_bytes(), i: 0, line: 1, col: 1 }
    }

    fn peek(&self) -> Option<u8> {
        self.src.get(self.i).copied()
    }

    fn bump(&mut self) -> Option<u8> {
        let c = self.peek()?;
        self.i += 1;
        if c == b'\n' {
            self.line += 1;
            self.col = 1;
        } else if c & 0xC0 != 0x80 {
            self.col += 1;
        }
        Some(c)
    }

    fn starts_with(&self, s: &str) -> bool {
        self.src[self.i..].starts_with(s.as_bytes())
    }

    /// Skips whitespace, comments and line continuations.
    fn skip_trivia(&mut self) {
        loop {
            match self.peek() {
                Some(c) if c.is_ascii_whitespace() => {
                    self.bump();
                }
                Some(b'\\') if matches!(self.src.get(self.i + 1), Some(b'\n' | b'\r')) => {
                    self.bump();
                }
                Some(b'/') if self.starts_with("//") => {
                    while self.peek().is_some_and(|c| c != b'\n') {
                        self.bump();
                    }
                }
                Some(b'/') if self.starts_with("/*") => {
                    self.bump();
                    self.bump();
                    while self.peek().is_some() && !self.starts_with("*/") {
                        self.bump();
                    }
                    self.bump();
                    self.bump();
                }
                _ => return,
            }
        }
    }

    /// Reads a string literal at `"`; returns its value and each value byte's position.
    fn string(&mut self) -> (String, Vec<(u32, u32)>) {
        let mut value = Vec::new();
        let mut pos = Vec::new();
        self.bump(); // opening quote
        while let Some(c) = self.peek() {
            let at = (self.line, self.col);
            match c {
                b'"' => {
                    self.bump();
                    break;
                }
                b'\n' => break, // unterminated: the compiler will say so
                b'\\' => {
                    self.bump();
                    let e = self.bump().unwrap_or(b'\\');
                    let v = match e {
                        b'n' => b'\n',
                        b't' => b'\t',
                        b'r' => b'\r',
                        b'0' => 0,
                        other => other,
                    };
                    value.push(v);
                    pos.push(at);
                }
                _ => {
                    self.bump();
                    value.push(c);
                    pos.push(at);
                }
            }
        }
        (String::from_utf8_lossy(&value).into_owned(), pos)
    }

    fn skip_char_literal(&mut self) {
        self.bump();
        while let Some(c) = self.bump() {
            match c {
                b'\\' => {
                    self.bump();
                }
                b'\'' | b'\n' => break,
                _ => {}
            }
        }
    }

    fn ident(&mut self) -> &'a str {
        let start = self.i;
        while self.peek().is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_') {
            self.bump();
        }
        std::str::from_utf8(&self.src[start..self.i]).unwrap_or_default()
    }
}

/// Finds every `asm` statement of a CUDA C++ source.
fn scan_c(src: &str) -> Vec<CAsm> {
    let mut s = Scanner::new(src);
    let mut out = Vec::new();
    // For each open `{`, the text before it: a function header, `if (..)`, `namespace x`, ...
    let mut blocks: Vec<String> = Vec::new();
    // Tokens since the last `;`, `{` or `}`: the header of the next block.
    let mut header = String::new();
    while s.peek().is_some() {
        s.skip_trivia();
        let Some(c) = s.peek() else { break };
        match c {
            b'"' => {
                s.string();
                header.push_str("\"\"");
            }
            b'\'' => s.skip_char_literal(),
            b'#' if header.trim().is_empty() => {
                // A preprocessor line: scanned for asm like any code, but not a block header.
                s.bump();
            }
            b'{' => {
                s.bump();
                blocks.push(std::mem::take(&mut header));
            }
            b'}' => {
                s.bump();
                blocks.pop();
                header.clear();
            }
            b';' => {
                s.bump();
                header.clear();
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                let (line, column) = (s.line, s.col);
                let word = s.ident();
                if matches!(word, "asm" | "__asm__" | "__asm") {
                    if let Some(mut a) = asm_statement(&mut s, line, column) {
                        a.inlinable = enclosing_inlinable(&blocks);
                        out.push(a);
                        continue;
                    }
                }
                header.push(' ');
                header.push_str(word);
            }
            _ => {
                s.bump();
                header.push(c as char);
            }
        }
    }
    out
}

/// The name of the enclosing function when it is one that can be inlined at several call sites.
fn enclosing_inlinable(blocks: &[String]) -> Option<String> {
    for b in blocks.iter().rev() {
        let h = b.trim();
        let first = h.split(|c: char| !c.is_ascii_alphanumeric() && c != '_').find(|w| !w.is_empty()).unwrap_or_default();
        if matches!(first, "if" | "else" | "for" | "while" | "do" | "switch" | "try" | "catch") || !h.contains('(') {
            continue;
        }
        // The function header: `__device__ int cube (int x)`.
        let words: Vec<&str> = h.split(|c: char| !c.is_ascii_alphanumeric() && c != '_').filter(|w| !w.is_empty()).collect();
        if words.contains(&"__global__") || words.contains(&"__noinline__") {
            return None;
        }
        let name = h[..h.find('(').unwrap_or(h.len())]
            .rsplit(|c: char| !c.is_ascii_alphanumeric() && c != '_')
            .find(|w| !w.is_empty())
            .unwrap_or("the function")
            .to_string();
        return words.contains(&"__device__").then_some(name);
    }
    None
}

/// Parses `[volatile] ( template : outputs : inputs : clobbers )` after the `asm` keyword.
fn asm_statement(s: &mut Scanner<'_>, line: u32, column: u32) -> Option<CAsm> {
    let mut volatile = false;
    loop {
        s.skip_trivia();
        if s.peek().is_some_and(|c| c.is_ascii_alphabetic() || c == b'_') {
            let save = (s.i, s.line, s.col);
            let w = s.ident();
            match w {
                "volatile" | "__volatile__" | "__volatile" => volatile = true,
                "goto" | "inline" | "__inline" => {}
                _ => {
                    (s.i, s.line, s.col) = save;
                    return None;
                }
            }
        } else {
            break;
        }
    }
    if s.peek() != Some(b'(') {
        return None;
    }
    s.bump();
    let mut a = CAsm {
        line,
        column,
        volatile,
        template: String::new(),
        positions: Vec::new(),
        opaque_template: false,
        outputs: Vec::new(),
        inputs: Vec::new(),
        clobbers: Vec::new(),
        inlinable: None,
    };
    let mut section = 0;
    loop {
        s.skip_trivia();
        let Some(c) = s.peek() else { break };
        match c {
            b')' => {
                s.bump();
                break;
            }
            b':' => {
                s.bump();
                section += 1;
            }
            b',' => {
                s.bump();
            }
            b'"' => {
                let (cl, cc) = (s.line, s.col);
                let (value, pos) = s.string();
                match section {
                    0 => {
                        a.template.push_str(&value);
                        // One position per template byte (padded where lossy UTF-8 grew the text).
                        a.positions.extend(pos);
                        a.positions.resize(a.template.len(), (cl, cc));
                    }
                    1 | 2 => {
                        let op = COperand { constraint: value, line: cl, column: cc };
                        if section == 1 {
                            a.outputs.push(op);
                        } else {
                            a.inputs.push(op);
                        }
                        // The operand's expression: `( expr )`.
                        s.skip_trivia();
                        if s.peek() == Some(b'(') {
                            skip_balanced(s);
                        }
                    }
                    _ => a.clobbers.push(value),
                }
            }
            b'[' => {
                // A named operand `[name] "r"(x)`.
                while s.peek().is_some_and(|c| c != b']') {
                    s.bump();
                }
                s.bump();
            }
            b'(' => {
                if section == 0 {
                    a.opaque_template = true;
                }
                skip_balanced(s);
            }
            _ => {
                if section == 0 {
                    a.opaque_template = true;
                }
                if c.is_ascii_alphanumeric() || c == b'_' {
                    s.ident();
                } else {
                    s.bump();
                }
            }
        }
    }
    Some(a)
}

fn skip_balanced(s: &mut Scanner<'_>) {
    let mut depth = 0;
    while let Some(c) = s.peek() {
        match c {
            b'"' => {
                s.string();
                continue;
            }
            b'\'' => {
                s.skip_char_literal();
                continue;
            }
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    s.bump();
                    return;
                }
            }
            _ => {}
        }
        s.bump();
    }
}

/// Checks every `asm` statement of a CUDA C++ source. `file` is how diagnostics name it.
pub fn check_cuda(file: &Path, src: &str) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for a in scan_c(src) {
        check_c_asm(file, &a, &mut out);
    }
    out
}

/// Reads and checks a .cu file.
pub fn check_cuda_file(path: &Path, shown_as: &Path) -> Result<Vec<Diagnostic>> {
    let src = std::fs::read(path).map_err(|e| Error::io("read", path, e))?;
    Ok(check_cuda(shown_as, &String::from_utf8_lossy(&src)))
}

fn check_c_asm(file: &Path, a: &CAsm, out: &mut Vec<Diagnostic>) {
    let at = |d: Diagnostic, (line, col): (u32, u32)| d.at(file, Some(line), Some(col));

    // Constraints.
    for (i, op) in a.outputs.iter().chain(&a.inputs).enumerate() {
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
            if has_operands && n >= a.operand_count() {
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

    // Unscoped declarations and labels in an inlinable function.
    if let Some(func) = &a.inlinable {
        for (off, what) in unscoped_definitions(t, &labels) {
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
    for s in stmts.iter().filter(|s| s.predicated && !writes_memory(s.mnemonic)) {
        for n in operand_refs(destination(s.operands)) {
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

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// Register names the template declares (`.reg .pred p;`, `.reg .u32 %r<4>;`).
fn declared_registers(t: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (off, _) in t.match_indices(".reg") {
        let decl = &t[off + 4..];
        let decl = &decl[..decl.find(';').unwrap_or(decl.len())];
        for part in decl.split([',', ' ', '\t', '\n']).filter(|p| !p.is_empty() && !p.starts_with('.')) {
            let name = part.trim_start_matches('%');
            let name = name.split('<').next().unwrap_or(name);
            out.push(name.to_string());
        }
    }
    out
}

/// The first `.reg` declaration and the first label outside PTX's `{ }` scoping, as
/// (offset, what): each inlined copy of the asm would define them again.
fn unscoped_definitions(ptx: &str, labels: &[(usize, usize)]) -> Vec<(usize, &'static str)> {
    let reg = ptx.match_indices(".reg").map(|(off, _)| off).find(|off| brace_depth(ptx, *off) == 0);
    let label = labels.iter().find(|(_, depth)| *depth == 0).map(|(off, _)| *off);
    [(reg, "a `.reg` declaration"), (label, "a label")].into_iter().filter_map(|(off, what)| Some((off?, what))).collect()
}

fn brace_depth(t: &str, offset: usize) -> usize {
    let mut d = 0usize;
    for c in t[..offset].chars() {
        match c {
            '{' => d += 1,
            '}' => d = d.saturating_sub(1),
            _ => {}
        }
    }
    d
}

/// The first changing special register the template reads (`%%clock` or `%clock`).
fn changing_register_read(t: &str) -> Option<(usize, String)> {
    for (off, _) in t.match_indices('%') {
        let rest = t[off..].trim_start_matches('%');
        let word: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
        if is_changing_register(&word) {
            return Some((off, word));
        }
    }
    None
}

/// `%N` references in a piece of template.
fn operand_refs(text: &str) -> Vec<usize> {
    let mut out = Vec::new();
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && b.get(i + 1) == Some(&b'%') {
            i += 2;
            continue;
        }
        if b[i] == b'%' {
            let d: String = text[i + 1..].chars().take_while(char::is_ascii_digit).collect();
            if let Ok(n) = d.parse() {
                out.push(n);
            }
        }
        i += 1;
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Rust
// ---------------------------------------------------------------------------------------------

/// Checks every asm of a kernel crate: its .cu files, and the `asm!` of its Rust kernels
/// (following the module tree from the lib's root file). Returns the number of files read and
/// the diagnostics, paths relative to the package.
pub fn check_crate(k: &KernelCrate) -> Result<(usize, Vec<Diagnostic>)> {
    let mut files = 0;
    let mut out = Vec::new();
    for src in &k.cuda_sources {
        out.extend(check_cuda_file(&src.path, &relative(&src.path, &k.dir))?);
        files += 1;
    }
    if let (true, Some(lib)) = (k.config.rust, &k.lib_src) {
        for (path, file) in crate::signature::module_files(lib)? {
            check_rust_file(&relative(&path, &k.dir), &file, &mut out);
            files += 1;
        }
    }
    Ok((files, out))
}

/// Checks the `asm!` invocations of one parsed file.
pub fn check_rust_file(file: &Path, parsed: &syn::File, out: &mut Vec<Diagnostic>) {
    let mut v = RustVisitor { file: file.to_path_buf(), fns: Vec::new(), out };
    v.visit_file(parsed);
}

struct RustVisitor<'a> {
    file: PathBuf,
    /// Enclosing functions: (name, can be inlined at several sites).
    fns: Vec<(String, bool)>,
    out: &'a mut Vec<Diagnostic>,
}

fn fn_inlinable(attrs: &[syn::Attribute], sig: &syn::Signature) -> bool {
    let kernel = sig.abi.as_ref().and_then(|a| a.name.as_ref()).is_some_and(|n| n.value() == "ptx-kernel")
        || attrs.iter().any(|a| a.path().segments.last().is_some_and(|s| s.ident == "kernel"));
    let never = attrs
        .iter()
        .any(|a| a.path().is_ident("inline") && matches!(&a.meta, syn::Meta::List(l) if l.tokens.to_string().trim() == "never"));
    !kernel && !never
}

impl<'ast> Visit<'ast> for RustVisitor<'_> {
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        self.fns.push((f.sig.ident.to_string(), fn_inlinable(&f.attrs, &f.sig)));
        syn::visit::visit_item_fn(self, f);
        self.fns.pop();
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        self.fns.push((f.sig.ident.to_string(), fn_inlinable(&f.attrs, &f.sig)));
        syn::visit::visit_impl_item_fn(self, f);
        self.fns.pop();
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        if m.path.segments.last().is_some_and(|s| s.ident == "asm") {
            let inlinable = self.fns.last().filter(|(_, i)| *i).map(|(n, _)| n.clone());
            check_rust_asm(&self.file, m, inlinable.as_deref(), self.out);
        } else {
            // Macros such as `unsafe { core::arch::asm!(..) }` inside other macro calls: look
            // inside any token tree that parses as statements.
            if let Ok(block) = syn::parse2::<BlockBody>(m.tokens.clone()) {
                for s in &block.0 {
                    self.visit_stmt(s);
                }
            }
        }
    }
}

/// Statements inside a macro's braces, when they parse as such.
struct BlockBody(Vec<syn::Stmt>);

impl syn::parse::Parse for BlockBody {
    fn parse(input: syn::parse::ParseStream) -> syn::Result<Self> {
        Ok(BlockBody(syn::Block::parse_within(input)?))
    }
}

#[derive(Debug)]
struct RustOperand {
    name: Option<String>,
    /// `in`, `out`, `lateout`, `inout`, `inlateout`, `const`, `sym`.
    kind: String,
}

fn check_rust_asm(file: &Path, m: &syn::Macro, inlinable: Option<&str>, out: &mut Vec<Diagnostic>) {
    let start = syn::spanned::Spanned::span(&m.path).start();
    let here = (start.line as u32, start.column as u32 + 1);
    let at = |d: Diagnostic, (line, col): (u32, u32)| d.at(file, Some(line), Some(col));
    // Split the arguments at top-level commas.
    let mut args: Vec<Vec<TokenTree>> = vec![Vec::new()];
    for tt in m.tokens.clone() {
        match &tt {
            TokenTree::Punct(p) if p.as_char() == ',' => args.push(Vec::new()),
            _ => args.last_mut().expect("non-empty").push(tt),
        }
    }
    args.retain(|a| !a.is_empty());
    let mut template = String::new();
    let mut template_lines: Vec<(usize, u32)> = Vec::new(); // (offset, line)
    let mut opaque = false;
    let mut operands: Vec<RustOperand> = Vec::new();
    let mut options: Vec<String> = Vec::new();
    let mut in_template = true;
    for arg in &args {
        if in_template {
            if let [TokenTree::Literal(l)] = arg.as_slice() {
                if let Ok(s) = syn::parse_str::<syn::LitStr>(&l.to_string()) {
                    if !template.is_empty() {
                        template.push('\n'); // asm! joins template strings with newlines
                    }
                    template_lines.push((template.len(), l.span().start().line as u32));
                    template.push_str(&s.value());
                    continue;
                }
            }
            if let [TokenTree::Ident(_), TokenTree::Punct(p), TokenTree::Group(_)] = arg.as_slice() {
                if p.as_char() == '!' {
                    opaque = true; // concat!(..) and friends
                    continue;
                }
            }
            in_template = false;
        }
        let mut toks = arg.as_slice();
        let mut name = None;
        if let [TokenTree::Ident(n), TokenTree::Punct(p), rest @ ..] = toks {
            if p.as_char() == '=' && !rest.is_empty() {
                name = Some(n.to_string());
                toks = rest;
            }
        }
        if let Some(TokenTree::Ident(kw)) = toks.first() {
            let kw = kw.to_string();
            match kw.as_str() {
                "options" => {
                    if let Some(TokenTree::Group(g)) = toks.get(1) {
                        options.extend(g.stream().into_iter().filter_map(|t| match t {
                            TokenTree::Ident(i) => Some(i.to_string()),
                            _ => None,
                        }));
                    }
                }
                "in" | "out" | "lateout" | "inout" | "inlateout" | "const" | "sym" => {
                    // An explicit register (`in("r1")`) cannot be named in the template.
                    let explicit = matches!(toks.get(1), Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Parenthesis && g.stream().to_string().starts_with('"'));
                    if !explicit {
                        operands.push(RustOperand { name, kind: kw });
                    }
                }
                _ => {} // clobber_abi(..) and anything newer
            }
        }
    }
    if opaque {
        return;
    }
    let line_of = |off: usize| template_lines.iter().rev().find(|(o, _)| *o <= off).map_or(here.0, |(_, l)| *l);
    let positional = operands.iter().filter(|o| o.name.is_none()).count();

    // Operand references `{}`, `{N}`, `{name}`, with `{{`/`}}` as literal braces. The PTX text
    // (with literal braces) is rebuilt to apply the text rules.
    let mut ptx = String::new();
    let mut ptx_offsets = Vec::new(); // ptx byte -> template byte
    let mut implicit = 0usize;
    let mut refs: Vec<(usize, Option<usize>)> = Vec::new(); // (template offset, operand index)
    let b = template.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'{' if b.get(i + 1) == Some(&b'{') => {
                ptx.push('{');
                ptx_offsets.push(i);
                i += 2;
            }
            b'}' if b.get(i + 1) == Some(&b'}') => {
                ptx.push('}');
                ptx_offsets.push(i);
                i += 2;
            }
            b'{' => {
                let close = template[i..].find('}').map_or(b.len(), |n| i + n);
                let inner = &template[i + 1..close];
                let spec = inner.split(':').next().unwrap_or_default().trim();
                let index = if spec.is_empty() {
                    implicit += 1;
                    Some(implicit - 1)
                } else if let Ok(n) = spec.parse::<usize>() {
                    Some(n)
                } else {
                    operands.iter().position(|o| o.name.as_deref() == Some(spec))
                };
                match index {
                    Some(n) if (spec.is_empty() || spec.parse::<usize>().is_ok()) && n >= positional => {
                        out.push(at(
                            Diagnostic::error(format!("`{{{inner}}}` refers to operand {n}, but this asm! has {positional} positional operand{}", plural(positional)))
                                .note("positional operands are numbered from {0} in the order they are written; a literal brace in PTX is written `{{` or `}}`"),
                            (line_of(i), here.1),
                        ));
                    }
                    None => {
                        out.push(at(
                            Diagnostic::error(format!("`{{{inner}}}` names no operand of this asm!"))
                                .note("name an operand (`x = in(reg32) v`) or write PTX's scoping braces as `{{` and `}}`"),
                            (line_of(i), here.1),
                        ));
                    }
                    _ => {}
                }
                refs.push((i, index));
                // Stand in for the operand in the PTX text: `%<index>`.
                let stand_in = format!("%{}", index.unwrap_or(usize::MAX));
                for _ in 0..stand_in.len() {
                    ptx_offsets.push(i);
                }
                ptx.push_str(&stand_in);
                i = close + 1;
            }
            c => {
                ptx.push(c as char);
                ptx_offsets.push(i);
                i += 1;
            }
        }
    }
    let pos_of = |ptx_off: usize| (line_of(ptx_offsets.get(ptx_off).copied().unwrap_or(0)), here.1);
    let (stmts, labels) = statements(&ptx);

    if let Some(func) = inlinable {
        for (off, what) in unscoped_definitions(&ptx, &labels) {
            out.push(at(
                Diagnostic::warning(format!("{what} outside `{{{{ }}}}` in an asm! of `{func}`, a function that can be inlined more than once"))
                    .note("each inlined copy declares it again and ptxas fails with a duplicate definition: wrap the PTX in `{{` and `}}` (braces are doubled in asm! templates), or mark the function #[inline(never)]"),
                pos_of(off),
            ));
        }
    }
    if options.iter().any(|o| o == "pure") {
        if let Some((off, reg)) = changing_register_read(&ptx) {
            out.push(at(
                Diagnostic::warning(format!("asm! reads `%{reg}`, which changes while the thread runs, but has `options(pure)`"))
                    .note("a pure asm! may be deleted, merged or hoisted out of loops: drop `pure` (and `nomem`) so every read happens"),
                pos_of(off),
            ));
        }
    }
    if let Some(opt) = options.iter().find(|o| *o == "nomem" || *o == "readonly") {
        if let Some(s) = stmts.iter().find(|s| writes_memory(s.mnemonic)) {
            out.push(at(
                Diagnostic::warning(format!("asm! writes memory (`{}`) but has `options({opt})`", s.mnemonic))
                    .note("the compiler may reorder or drop memory accesses around it: remove `nomem`/`readonly`"),
                pos_of(s.offset),
            ));
        }
    }
    for s in stmts.iter().filter(|s| s.predicated && !writes_memory(s.mnemonic)) {
        for n in operand_refs(destination(s.operands)) {
            // Positional operands come first, so an index counts them and then the named ones.
            if let Some(op) = operands.get(n).filter(|o| o.kind == "out" || o.kind == "lateout") {
                out.push(at(
                    Diagnostic::warning(format!(
                        "operand {n} is written only when the predicate holds (`{}`), but is declared `{}`",
                        s.mnemonic, op.kind
                    ))
                    .note("with `out` the value it had before is lost when the predicate is false: declare it `inout(..)`"),
                    pos_of(s.offset),
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cu(src: &str) -> Vec<Diagnostic> {
        check_cuda(Path::new("k.cu"), src)
    }

    fn rs(src: &str) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        check_rust_file(Path::new("src/lib.rs"), &syn::parse_file(src).unwrap(), &mut out);
        out
    }

    fn one(d: &[Diagnostic], needle: &str) -> String {
        assert_eq!(d.len(), 1, "expected one diagnostic with `{needle}`, got {d:#?}");
        assert!(d[0].message.contains(needle), "{:#?}", d[0]);
        d[0].location().unwrap()
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
    }

    #[test]
    fn rust_operand_references() {
        let d = rs("fn f(x: u32) -> u32 { let y; unsafe { core::arch::asm!(\"add.u32 {0}, {1}, {2};\", out(reg32) y, in(reg32) x); } y }");
        one(&d, "`{2}` refers to operand 2, but this asm! has 2 positional operands");
        let d = rs("fn f(x: u32) { unsafe { asm!(\"mov.u32 {t}, {x};\", x = in(reg32) x, y = out(reg32) _); } }");
        one(&d, "`{t}` names no operand");
        assert!(rs("#[inline(never)] fn f(x: u32) -> u32 { let y; unsafe { asm!(\"{{ .reg .u32 t; mov.u32 t, {x}; mov.u32 {y}, t; }}\", x = in(reg32) x, y = out(reg32) y, options(pure, nomem, nostack)); } y }").is_empty());
    }

    #[test]
    fn rust_unscoped_reg_in_an_inlinable_fn() {
        let src = "#[inline] fn cube(x: u32) -> u32 { let y; unsafe { asm!(\".reg .u32 t1;\", \"mul.lo.u32 t1, {x}, {x};\", \"mul.lo.u32 {y}, t1, {x};\", x = in(reg32) x, y = out(reg32) y); } y }";
        one(&rs(src), "a `.reg` declaration outside `{{ }}` in an asm! of `cube`");
        assert!(rs(&src.replace("#[inline]", "#[inline(never)]")).is_empty());
        assert!(rs(&src.replace("\".reg .u32 t1;\",", "\"{{ .reg .u32 t1;\",").replace("t1, {x};\", x", "t1, {x}; }}\", x")).is_empty());
    }

    #[test]
    fn rust_pure_clock_and_nomem_store() {
        let d = rs("fn clock() -> u32 { let c; unsafe { asm!(\"mov.u32 {}, %clock;\", out(reg32) c, options(pure, nomem, nostack)); } c }");
        one(&d, "reads `%clock`, which changes while the thread runs, but has `options(pure)`");
        assert!(rs("fn clock() -> u32 { let c; unsafe { asm!(\"mov.u32 {}, %clock;\", out(reg32) c, options(nomem, nostack)); } c }")
            .is_empty());
        let d = rs("fn st(p: *mut u32) { unsafe { asm!(\"st.global.u32 [{}], 1;\", in(reg64) p, options(nostack, nomem)); } }");
        one(&d, "asm! writes memory (`st.global.u32`) but has `options(nomem)`");
        assert!(rs("fn st(p: *mut u32) { unsafe { asm!(\"st.global.u32 [{}], 1;\", in(reg64) p, options(nostack)); } }").is_empty());
    }

    #[test]
    fn rust_predicated_write_to_out() {
        let src = "#[inline(never)] fn cond(x: u32) -> u32 { let mut y = 0; unsafe { asm!(\"{{ .reg .pred p; setp.eq.u32 p, {x}, 34; @p mov.u32 {y}, 1; }}\", x = in(reg32) x, y = out(reg32) y); } y }";
        one(&rs(src), "written only when the predicate holds (`mov.u32`), but is declared `out`");
        assert!(rs(&src.replace("y = out(reg32) y", "y = inout(reg32) y")).is_empty());
    }
}
