//! `asm!` in Rust kernels, read with syn: `{N}`/`{name}` references against the operands,
//! `options(pure, nomem, readonly)` against what the template does, and the template rules of
//! [`super::template`].

use std::path::{Path, PathBuf};

use proc_macro2::{Delimiter, TokenTree};
use syn::visit::Visit;

use super::plural;
use super::template::{
    changing_register_read, destination, operand_refs, statements, unscoped_definitions, unterminated, writes_memory, written_either_way,
};
use crate::diag::Diagnostic;

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
    let kernel = sig.abi.as_ref().and_then(|a| a.name.as_ref()).is_some_and(|n| crate::rust::modules::is_kernel_abi(&n.value()))
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

    // CUDA's operand syntax carried over (`asm("mov.u32 %0, %%laneid;" : "=r"(x))`): PTX has no
    // register named `%0`, and rustc only says an operand is never used.
    let bytes = template.as_bytes();
    let in_comment = |o: usize| template[..o].rsplit('\n').next().is_some_and(|line| line.contains("//"));
    if let Some(off) = (0..bytes.len()).find(|&o| bytes[o] == b'%' && bytes.get(o + 1).is_some_and(u8::is_ascii_digit) && !in_comment(o)) {
        let n: String = template[off + 1..].chars().take_while(char::is_ascii_digit).collect();
        out.push(at(
            Diagnostic::warning(format!("`%{n}` is CUDA's operand syntax: Rust's asm! writes `{{{n}}}` or `{{name}}`"))
                .note("and a special register takes one `%`, not CUDA's `%%`: `\"mov.u32 {r}, %laneid;\"`"),
            (line_of(off), here.1),
        ));
    }

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

    for off in unterminated(&ptx) {
        out.push(at(
            Diagnostic::warning("a PTX instruction in this asm! does not end in `;`")
                .note("ptxas stops at the token after it with \"Parsing error ... syntax error\": end each instruction with `;` (`\"mov.u32 {r}, %laneid;\"`)"),
            pos_of(off.saturating_sub(1)),
        ));
    }
    if let Some(func) = inlinable {
        for (off, what) in unscoped_definitions(&ptx, &labels, 0) {
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
    for (i, s) in stmts.iter().enumerate().filter(|(_, s)| s.predicated && !writes_memory(s.mnemonic)) {
        for n in operand_refs(destination(s.operands)) {
            if written_either_way(&stmts, i, n, operand_refs) {
                continue;
            }
            // Positional operands come first, so an index counts them and then the named ones.
            if let Some(op) = operands.get(n).filter(|o| o.kind == "out" || o.kind == "lateout") {
                let shown = match &op.name {
                    Some(name) => format!("`{{{name}}}`"),
                    None => format!("operand {n}"),
                };
                out.push(at(
                    Diagnostic::warning(format!(
                        "{shown} is written only when the predicate holds (`{}`), but is declared `{}`",
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
    use super::super::one;
    use super::*;

    fn rs(src: &str) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        check_rust_file(Path::new("src/lib.rs"), &syn::parse_file(src).unwrap(), &mut out);
        out
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
    fn rust_cudas_operand_syntax_is_named_with_rusts() {
        let d = rs("fn lane() -> u32 { let r; unsafe { asm!(\"mov.u32 %0, %%laneid;\", out(reg32) r); } r }");
        one(&d, "`%0` is CUDA's operand syntax: Rust's asm! writes `{0}` or `{name}`");
        assert!(rs("fn lane() -> u32 { let r; unsafe { asm!(\"mov.u32 {0}, %laneid;\", out(reg32) r); } r }").is_empty());
        assert!(rs("fn lane() -> u32 { let r; unsafe { asm!(\"mov.u32 {0}, %laneid; // was %0\", out(reg32) r); } r }").is_empty());
    }

    #[test]
    fn rust_an_instruction_without_its_semicolon() {
        let d = rs("fn lane() -> u32 {\n    let r;\n    unsafe { asm!(\"mov.u32 {r}, %laneid\", r = out(reg32) r); }\n    r\n}");
        one(&d, "a PTX instruction in this asm! does not end in `;`");
        assert_eq!(d[0].line, Some(3), "{d:?}");
        // Two lines, the first without its `;`; and in front of a closing brace.
        let two = "fn f(x: u32) -> u32 { let y; unsafe { asm!(\"add.u32 {y}, {x}, 1\", \"add.u32 {y}, {y}, 1;\", x = in(reg32) x, y = out(reg32) y); } y }";
        one(&rs(two), "does not end in `;`");
        one(&rs("fn f() { unsafe { asm!(\"{{ .reg .u32 t; mov.u32 t, 1 }}\"); } }"), "does not end in `;`");
        // Any UTF-8 in the template: `ü` ends the instruction that lacks its `;`.
        one(&rs("fn f() { unsafe { asm!(\"mov.u32 %r1, 1; /* ü */ add.u32 %r1, %r1, 1 // ü\"); } }"), "does not end in `;`");
        // Operands that go on over lines, vectors in braces, labels and a last `}` are fine.
        for ok in [
            "fn f(p: u64) { unsafe { asm!(\"st.global.v2.u32 [{p}],\\n {{1, 2}};\", p = in(reg64) p); } }",
            "fn f() { unsafe { asm!(\"{{ .reg .pred p;\", \"L1: setp.eq.u32 p, 1, 1;\", \"@p bra L1;\", \"}}\"); } }",
            "fn f() { unsafe { asm!(\"bar.sync 0; // wait\"); } }",
            "fn f() { unsafe { asm!(\"bar.sync 0; /* a·b ü */\"); } }",
        ] {
            assert!(rs(ok).is_empty(), "{ok}: {:?}", rs(ok));
        }
    }

    #[test]
    fn rust_predicated_write_to_out() {
        let src = "#[inline(never)] fn cond(x: u32) -> u32 { let mut y = 0; unsafe { asm!(\"{{ .reg .pred p; setp.eq.u32 p, {x}, 34; @p mov.u32 {y}, 1; }}\", x = in(reg32) x, y = out(reg32) y); } y }";
        one(&rs(src), "`{y}` is written only when the predicate holds (`mov.u32`), but is declared `out`");
        assert!(rs(&src.replace("y = out(reg32) y", "y = inout(reg32) y")).is_empty());
    }
}
