//! Crate ids in Rust's symbol names made the same in every checkout.
//!
//! cargo derives a crate's id from its package id, which holds the absolute path of a path
//! dependency outside the workspace (the ids of everything that depends on it follow): two
//! checkouts of a monorepo would name the same functions differently, in the PTX too (labels,
//! `.func` names), and share no link or ptxas step. Each crate name with one id in the module
//! gets an id derived from the name alone; a name with two ids (two versions of one crate) keeps
//! them.
//!
//! Each symbol is parsed and written again, for two reasons a text search for `Cs<id>_<name>`
//! failed on (about one monorepo build in 200, and more in code with generics): a v0 symbol
//! refers back to its own earlier parts by byte offset (`B<offset>_`) and ids have up to 11
//! base-62 digits (one 64-bit id in 20 has fewer), so an id replaced by one of another length
//! moves every later part, and the back-references must move with them; and an id can hold the
//! text `Cs` itself, which a search takes for a second crate root. rustc-demangle parses v0 names
//! but cannot write one, hence the small parser here (the grammar of the v0 RFC and rustc's
//! mangler, constants included).

use std::collections::BTreeMap;

/// `ir` with every crate id in its v0 symbols and compile-unit names made checkout-independent.
pub(crate) fn canonical_crate_ids(ir: &str) -> String {
    let syms: Vec<(usize, &str)> = symbols(ir).collect();
    let mut ids: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for &(_, sym) in &syms {
        for (id, name) in rewrite(sym, &|_, _| None).map(|r| r.roots).unwrap_or_default() {
            let v = ids.entry(name).or_default();
            if !v.contains(&id) {
                v.push(id);
            }
        }
    }
    let canonical: BTreeMap<&str, String> =
        ids.into_iter().filter_map(|(name, v)| matches!(v[..], [_]).then(|| (name, canonical_id(name)))).collect();
    let mut out = String::with_capacity(ir.len());
    let mut copied = 0;
    for (at, sym) in syms {
        if let Some(r) = rewrite(sym, &|name, _| canonical.get(name).map(String::as_str)) {
            out.push_str(&ir[copied..at]);
            out.push_str(&r.symbol);
            copied = at + sym.len();
        }
    }
    out.push_str(&ir[copied..]);
    canonical_unit_names(&out)
}

/// The compile units' names hold a hash of the crate id too:
/// `!DIFile(filename: "src/lib.rs/@/saxpy_kernels.72227d58e7f16d30-cgu.0", ...)`.
fn canonical_unit_names(ir: &str) -> String {
    let mut units: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (name, hash) in codegen_units(ir) {
        let v = units.entry(name.to_string()).or_default();
        if !v.iter().any(|h| h == hash) {
            v.push(hash.to_string());
        }
    }
    let mut out = ir.to_string();
    for (name, v) in units {
        let [hash] = &v[..] else { continue };
        let canonical = format!("{:016x}", xxhash_rust::xxh3::xxh3_64(name.as_bytes()));
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

/// An id derived from the crate name alone: a 63-bit hash in base 62, as rustc writes one (a
/// demangler reads it as a 64-bit number).
fn canonical_id(name: &str) -> String {
    encode62(xxhash_rust::xxh3::xxh3_64(name.as_bytes()) >> 1)
}

const DIGITS: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

/// `(offset, text)` of every word of `ir` that starts with `_R` (v0 symbols are made of
/// `[A-Za-z0-9_]`; a `.llvm.N` suffix after one is left alone), outside string constants:
/// the bytes of a `c"..."` are data whose length the constant's type fixes.
fn symbols(ir: &str) -> impl Iterator<Item = (usize, &str)> {
    let b = ir.as_bytes();
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    // The next `"` and `_R` at or after `i`, found by `str::find` (optimised in std even when
    // a build script's own code is not: half the time of a byte loop on 4 MB of IR there).
    let next = |i: usize, pat: &str| ir.get(i..).and_then(|rest| rest.find(pat)).map_or(b.len(), |x| i + x);
    let (mut i, mut quoted) = (0, false);
    let (mut quote, mut sym) = (next(0, "\""), next(0, "_R"));
    std::iter::from_fn(move || {
        loop {
            if quote < i {
                quote = next(i, "\"");
            }
            if sym < i {
                sym = next(i, "_R");
            }
            if quote == b.len() && sym == b.len() {
                return None;
            }
            if quote < sym {
                i = quote + 1;
                if quoted {
                    quoted = false;
                } else if quote > 0 && b[quote - 1] == b'c' && (quote < 2 || !word(b[quote - 2])) {
                    // A string constant `c"..."` (IR escapes a `"` inside as `\22`).
                    i = next(i, "\"") + 1;
                } else {
                    // A quoted name or a metadata string: names inside are names.
                    quoted = true;
                }
                continue;
            }
            let at = sym;
            i = at + b[at..].iter().take_while(|c| word(**c)).count().max(2);
            if at == 0 || !word(b[at - 1]) {
                return Some((at, &ir[at..i]));
            }
        }
    })
}

/// A symbol written again.
#[derive(Debug)]
struct Rewritten<'s> {
    symbol: String,
    /// `(id, crate name)` of each crate root, as the symbol had them.
    roots: Vec<(&'s str, &'s str)>,
}

/// `sym` with each crate root's id replaced where `new_id(name, id)` gives one, and its
/// back-references moved to match; `None` when `sym` is not a v0 symbol.
///
/// For NVPTX, LLVM names a second global of one name with digits and no dot (`thread_id1`,
/// when llvm-link brings in two internal copies): those digits are kept after the symbol.
/// A whole symbol followed by digits never parses (a path cannot start with a digit), so the
/// shortest run of digits that leaves a symbol is the suffix.
fn rewrite<'s>(sym: &'s str, new_id: &dyn Fn(&str, &str) -> Option<&'s str>) -> Option<Rewritten<'s>> {
    // LLVM's counters stay short; the cap keeps a long run of digits from costing a parse each.
    let digits = sym.bytes().rev().take_while(u8::is_ascii_digit).count().min(9);
    (0..=digits).find_map(|k| {
        let mut r = rewrite_whole(&sym[..sym.len() - k], new_id)?;
        r.symbol.push_str(&sym[sym.len() - k..]);
        Some(r)
    })
}

fn rewrite_whole<'s>(sym: &'s str, new_id: &dyn Fn(&str, &str) -> Option<&'s str>) -> Option<Rewritten<'s>> {
    let body = sym.strip_prefix("_R")?;
    let mut p = Parser {
        s: body.as_bytes(),
        text: body,
        at: 0,
        out: String::with_capacity(body.len()),
        starts: BTreeMap::new(),
        roots: Vec::new(),
        new_id,
        depth: 0,
    };
    if p.peek()?.is_ascii_digit() {
        p.decimal()?;
    }
    p.path()?;
    // The instantiating crate of a generic function's copy.
    if p.at < p.s.len() {
        p.path()?;
    }
    (p.at == p.s.len()).then(|| Rewritten { symbol: format!("_R{}", p.out), roots: p.roots })
}

/// Parses one v0 symbol (after `_R`) while writing it to `out`.
struct Parser<'s, 'f> {
    s: &'s [u8],
    text: &'s str,
    at: usize,
    out: String,
    /// Where each path, type and constant that a back-reference may name starts: its offset
    /// in `s`, then in `out`.
    starts: BTreeMap<usize, usize>,
    roots: Vec<(&'s str, &'s str)>,
    new_id: &'f dyn Fn(&str, &str) -> Option<&'s str>,
    depth: u32,
}

impl<'s> Parser<'s, '_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.at).copied()
    }

    /// The next byte, copied.
    fn next(&mut self) -> Option<u8> {
        let c = self.peek()?;
        self.at += 1;
        self.out.push(c as char);
        Some(c)
    }

    fn eat(&mut self, c: u8) -> bool {
        let hit = self.peek() == Some(c);
        if hit {
            self.next();
        }
        hit
    }

    /// A decimal number, copied: `0`, or digits that do not start with `0` (`00` is two
    /// empty names, as nested closures have).
    fn decimal(&mut self) -> Option<usize> {
        let digits = match self.peek()? {
            b'0' => 1,
            _ => self.s[self.at..].iter().take_while(|c| c.is_ascii_digit()).count(),
        };
        let n = self.text.get(self.at..self.at + digits)?.parse().ok()?;
        self.out.push_str(&self.text[self.at..self.at + digits]);
        self.at += digits;
        Some(n)
    }

    /// The digits of a base-62 number and its `_`, not copied.
    fn base62_raw(&mut self) -> Option<&'s str> {
        let digits = self.s[self.at..].iter().take_while(|c| c.is_ascii_alphanumeric()).count();
        (self.s.get(self.at + digits) == Some(&b'_')).then_some(())?;
        let raw = &self.text[self.at..self.at + digits];
        self.at += digits + 1;
        Some(raw)
    }

    /// A base-62 number (`s`, `L` and `G` operands), copied.
    fn base62(&mut self) -> Option<()> {
        let raw = self.base62_raw()?;
        self.out.push_str(raw);
        self.out.push('_');
        Some(())
    }

    /// Guards the recursion against a crafted name.
    fn nest<T>(&mut self, f: impl FnOnce(&mut Self) -> Option<T>) -> Option<T> {
        self.depth += 1;
        let r = if self.depth > 300 { None } else { f(self) };
        self.depth -= 1;
        r
    }

    fn mark(&mut self) {
        self.starts.insert(self.at, self.out.len());
    }

    /// `B<offset>_` (the `B` read), pointing at the same part in `out`: a part before it.
    fn backref(&mut self) -> Option<()> {
        let b_at = self.at - 1;
        let raw = self.base62_raw()?;
        let old = if raw.is_empty() { 0 } else { decode62(raw)?.checked_add(1)? };
        let old = usize::try_from(old).ok().filter(|o| *o < b_at)?;
        let new = *self.starts.get(&old)?;
        if new > 0 {
            self.out.push_str(&encode62(new as u64 - 1));
        }
        self.out.push('_');
        Some(())
    }

    /// `[u] <len> [_] <bytes>`, copied; returns the bytes.
    fn undisambiguated_ident(&mut self) -> Option<&'s str> {
        self.eat(b'u');
        let len = self.decimal()?;
        self.eat(b'_');
        let name = self.text.get(self.at..self.at.checked_add(len)?)?;
        self.out.push_str(name);
        self.at += len;
        Some(name)
    }

    fn ident(&mut self) -> Option<()> {
        if self.eat(b's') {
            self.base62()?;
        }
        self.undisambiguated_ident().map(drop)
    }

    /// `C [s<id>_] <name>`: the crate id replaced where `new_id` says.
    fn crate_root(&mut self) -> Option<()> {
        if !self.eat(b's') {
            return self.undisambiguated_ident().map(drop);
        }
        let id = self.base62_raw()?;
        // The name decides the id, which comes before it.
        let mark = self.out.len();
        let name = self.undisambiguated_ident()?;
        let name_text = self.out.split_off(mark);
        self.roots.push((id, name));
        self.out.push_str((self.new_id)(name, id).unwrap_or(id));
        self.out.push('_');
        self.out.push_str(&name_text);
        Some(())
    }

    fn path(&mut self) -> Option<()> {
        self.nest(|p| {
            p.mark();
            match p.next()? {
                b'C' => p.crate_root(),
                b'N' => {
                    p.next().filter(u8::is_ascii_alphabetic)?;
                    p.path()?;
                    p.ident()
                }
                b'M' => {
                    p.impl_path()?;
                    p.ty()
                }
                b'X' => {
                    p.impl_path()?;
                    p.ty()?;
                    p.path()
                }
                b'Y' => {
                    p.ty()?;
                    p.path()
                }
                b'I' => {
                    p.path()?;
                    while !p.eat(b'E') {
                        p.generic_arg()?;
                    }
                    Some(())
                }
                b'B' => p.backref(),
                _ => None,
            }
        })
    }

    fn impl_path(&mut self) -> Option<()> {
        if self.eat(b's') {
            self.base62()?;
        }
        self.path()
    }

    fn generic_arg(&mut self) -> Option<()> {
        if self.eat(b'L') {
            self.base62()
        } else if self.eat(b'K') {
            self.constant()
        } else {
            self.ty()
        }
    }

    fn lifetime(&mut self) -> Option<()> {
        self.eat(b'L').then_some(())?;
        self.base62()
    }

    fn ty(&mut self) -> Option<()> {
        self.nest(|p| {
            // `w`: a `#[splat]` argument of a `fn` type (unstable).
            if p.peek() == Some(b'w') {
                p.mark();
                p.next();
            }
            let c = p.peek()?;
            if BASIC_TYPES.contains(&c) {
                p.mark();
                p.next();
                return Some(());
            }
            if !b"RQPOASTFDWB".contains(&c) {
                return p.path();
            }
            p.mark();
            p.next();
            match c {
                b'R' | b'Q' => {
                    if p.peek() == Some(b'L') {
                        p.lifetime()?;
                    }
                    p.ty()
                }
                b'P' | b'O' | b'S' => p.ty(),
                b'A' => {
                    p.ty()?;
                    p.constant()
                }
                b'T' => {
                    while !p.eat(b'E') {
                        p.ty()?;
                    }
                    Some(())
                }
                b'F' => p.fn_sig(),
                b'D' => {
                    p.dyn_bounds()?;
                    p.lifetime()
                }
                // A pattern type: `u32 is 1..=9`.
                b'W' => {
                    p.ty()?;
                    p.pattern()
                }
                _ => p.backref(),
            }
        })
    }

    /// `R <const> <const>` (a range), `O <pattern>.. E` (alternatives), `N` (not null).
    fn pattern(&mut self) -> Option<()> {
        self.nest(|p| match p.next()? {
            b'R' => {
                p.constant()?;
                p.constant()
            }
            b'O' => {
                p.pattern()?;
                while !p.eat(b'E') {
                    p.pattern()?;
                }
                Some(())
            }
            b'N' => Some(()),
            _ => None,
        })
    }

    fn binder(&mut self) -> Option<()> {
        if self.eat(b'G') {
            self.base62()?;
        }
        Some(())
    }

    fn fn_sig(&mut self) -> Option<()> {
        self.binder()?;
        self.eat(b'U');
        if self.eat(b'K') && !self.eat(b'C') {
            self.undisambiguated_ident()?;
        }
        while !self.eat(b'E') {
            self.ty()?;
        }
        self.ty()
    }

    fn dyn_bounds(&mut self) -> Option<()> {
        self.binder()?;
        while !self.eat(b'E') {
            self.path()?;
            while self.eat(b'p') {
                self.undisambiguated_ident()?;
                if self.eat(b'K') {
                    self.constant()?;
                } else {
                    self.ty()?;
                }
            }
        }
        Some(())
    }

    /// `<hex digits> _`, copied.
    fn hex(&mut self) -> Option<()> {
        while self.peek()?.is_ascii_hexdigit() && !self.peek()?.is_ascii_uppercase() {
            self.next();
        }
        self.eat(b'_').then_some(())
    }

    fn constant(&mut self) -> Option<()> {
        self.nest(|p| {
            p.mark();
            match p.next()? {
                b'p' => Some(()),
                b'h' | b't' | b'm' | b'y' | b'o' | b'j' | b'b' | b'c' | b'e' => p.hex(),
                b'a' | b's' | b'l' | b'x' | b'n' | b'i' => {
                    p.eat(b'n');
                    p.hex()
                }
                // `Re<hex>_` is a `&str`: the `e...` is a constant of its own, which a
                // back-reference may name.
                b'R' | b'Q' => p.constant(),
                b'A' | b'T' => {
                    while !p.eat(b'E') {
                        p.constant()?;
                    }
                    Some(())
                }
                b'V' => {
                    p.path()?;
                    match p.next()? {
                        b'U' => Some(()),
                        b'T' => {
                            while !p.eat(b'E') {
                                p.constant()?;
                            }
                            Some(())
                        }
                        b'S' => {
                            while !p.eat(b'E') {
                                p.ident()?;
                                p.constant()?;
                            }
                            Some(())
                        }
                        _ => None,
                    }
                }
                b'B' => p.backref(),
                _ => None,
            }
        })
    }
}

/// The one-letter types: `a` i8 ... `z` `!`, `p` a placeholder, `v` C's `...`.
const BASIC_TYPES: &[u8] = b"abcdefhijlmnopstuvxyz";

fn decode62(digits: &str) -> Option<u64> {
    digits.bytes().try_fold(0u64, |n, c| {
        let d = DIGITS.iter().position(|&x| x == c)? as u64;
        n.checked_mul(62)?.checked_add(d)
    })
}

fn encode62(mut n: u64) -> String {
    let mut digits = Vec::new();
    loop {
        digits.push(DIGITS[(n % 62) as usize]);
        n /= 62;
        if n == 0 {
            break;
        }
    }
    digits.reverse();
    String::from_utf8(digits).unwrap_or_default()
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
        assert!(rustc_demangle::try_demangle(&a[a.find("_RNvCs").unwrap()..a.find("()").unwrap()]).is_ok(), "a v0 name: {a}");
        // Two versions of one crate keep their own ids.
        let two = "@_RNvCsAAAA_3dep1f @_RNvCsBBBB_3dep1f";
        assert_eq!(canonical_crate_ids(two), two);
    }

    /// Names rustc gave one instance in two checkouts (`-C metadata` differing): the path
    /// dependency's id has 11 digits in one and 10 in the other, which moves the
    /// back-reference after it (`BU_`, `BT_`).
    const TWO_CHECKOUTS: [&str; 2] = [
        "_RINvMNtCs1gArN5i96vB_8gpu_math6vectorINtB3_4Vec3fE3mapNCNvCs9028UmZQ3sl_12mono_kernels6kernel0EBU_",
        "_RINvMNtCs8XeGam0CbD_8gpu_math6vectorINtB3_4Vec3fE3mapNCNvCs9028UmZQ3sl_12mono_kernels6kernel0EBT_",
    ];

    /// What rustc-demangle reads in `sym`, without crate ids.
    fn demangled(sym: &str) -> String {
        format!("{:#}", rustc_demangle::try_demangle(sym).unwrap_or_else(|_| panic!("{sym} is a v0 name")))
    }

    #[test]
    fn a_shorter_id_moves_the_back_references_after_it() {
        let [a, b] = TWO_CHECKOUTS.map(canonical_crate_ids);
        assert_eq!(a, b, "both checkouts name the instance alike");
        assert_eq!(demangled(&a), demangled(TWO_CHECKOUTS[0]));
        assert_eq!(demangled(&a), "<gpu_math::vector::Vec3<f32>>::map::<mono_kernels::kernel::{closure#0}>");
    }

    /// What rustc (nightly 2026-05-19) named a crate's functions and instances: consts of
    /// structs, `&str` and integers, arrays, tuples, pointers, references, `fn` types with
    /// binders and ABIs, `dyn` with an associated type, trait impls and closures.
    const SAMPLES: [&str; 19] = [
        "_RINvCs9028UmZQ3sl_12mono_kernels1qKVNtB2_1QS1ah3_EEB2_",
        "_RINvCs9028UmZQ3sl_12mono_kernels1sKRe616263_EB2_",
        "_RINvCs9028UmZQ3sl_12mono_kernels4fillKj8_KVNtB2_5PointS1xl1_1yb1_EEB2_",
        "_RINvCs9028UmZQ3sl_12mono_kernels4sizeAtj4_EB2_",
        "_RINvCs9028UmZQ3sl_12mono_kernels4sizeDINtNtNtCs8NwYtU1Mohg_4core3ops8function2FnTsEEp6OutputtEL_EB2_",
        "_RINvCs9028UmZQ3sl_12mono_kernels4sizeDNtCs1gArN5i96vB_8gpu_math5ShapeNtNtCs8NwYtU1Mohg_4core6marker4SendEL_EB2_",
        "_RINvCs9028UmZQ3sl_12mono_kernels4sizeFG_RL0_hERL0_hEB2_",
        "_RINvCs9028UmZQ3sl_12mono_kernels4sizeFUKCnovEuEB2_",
        "_RINvCs9028UmZQ3sl_12mono_kernels4sizeFfEfEB2_",
        "_RINvCs9028UmZQ3sl_12mono_kernels4sizeINtNtCs1gArN5i96vB_8gpu_math6vector4Vec3IBA_dEEEB2_",
        "_RINvCs9028UmZQ3sl_12mono_kernels4sizeOeEB2_",
        "_RINvCs9028UmZQ3sl_12mono_kernels4sizeQShEB2_",
        "_RINvCs9028UmZQ3sl_12mono_kernels4sizeTbizEEB2_",
        "_RNCNvCs9028UmZQ3sl_12mono_kernels6kernels_0B3_",
        "_RNvMNtCs8NwYtU1Mohg_4core3stre3lenCs9028UmZQ3sl_12mono_kernels",
        "_RNvXCs9028UmZQ3sl_12mono_kernelsNtB2_2SqNtCs1gArN5i96vB_8gpu_math5Shape4area",
        "_RNvYNCNvCs9028UmZQ3sl_12mono_kernels6kernels_0INtNtNtCs8NwYtU1Mohg_4core3ops8function6FnOnceTfEE9call_onceB6_",
        // Closures in closures (examples/tensor-cores), each with an empty name: `0`.
        "_RINvNtCsiaUUwIuSTD9_10ptx_device6unroll6unrollKj8_NCNCNCNvNtCs8KB02gLOJWT_12mono_kernels5hgemm12rs_mma_hgemms0_0s0_00EBW_",
        "_RNCNCNvNtCs8KB02gLOJWT_12mono_kernels5hgemm12rs_mma_hgemms1_00B7_",
    ];

    #[test]
    fn every_kind_of_name_reads_the_same_after_a_rewrite() {
        for sym in SAMPLES {
            // Every id shorter: every later back-reference moves.
            let got = rewrite(sym, &|name, _| Some(if name == "core" { "1" } else { "x" })).unwrap_or_else(|| panic!("{sym} parses"));
            assert_eq!(demangled(&got.symbol), demangled(sym), "{sym} -> {}", got.symbol);
            assert!(got.roots.iter().any(|(_, name)| *name == "mono_kernels"), "{:?}", got.roots);
            // With no new id, the same bytes.
            assert_eq!(rewrite(sym, &|_, _| None).unwrap().symbol, sym);
        }
    }

    /// The samples as a checkout whose crates have the ids `gpu_math` and `mono_kernels`
    /// (`core`'s stays), as rustc would name them: valid v0 names, read alike.
    fn checkout(gpu_math: &str, mono_kernels: &str) -> String {
        let ids = |name: &str, _: &str| match name {
            "gpu_math" => Some(gpu_math),
            "mono_kernels" => Some(mono_kernels),
            _ => None,
        };
        let mut ir = String::new();
        for sym in SAMPLES.iter().chain(&TWO_CHECKOUTS[..1]) {
            let named = rewrite(sym, &ids).unwrap().symbol;
            assert_eq!(demangled(&named), demangled(sym));
            ir.push_str(&format!("call void @{named}()\n"));
        }
        ir
    }

    #[test]
    fn an_id_holding_cs_is_one_id() {
        // The text `Cs` inside an id is no crate root of its own (a scan for `Cs<id>_<name>`
        // took it for a second id of the crate and left the crate's ids as they were).
        let (a, b) = (checkout("9Nxgald2Sjs", "jDUBCs2QSLm"), checkout("bPUpqHmUxUj", "3sl"));
        assert_eq!(canonical_crate_ids(&a), canonical_crate_ids(&b));
        assert!(!canonical_crate_ids(&a).contains("jDUBCs2QSLm"));
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(64))]
        /// Whatever ids two checkouts got, their names agree after the rewrite.
        #[test]
        fn any_two_checkouts_agree(ids in proptest::array::uniform4(0u64..u64::MAX)) {
            let [g1, m1, g2, m2] = ids.map(encode62);
            proptest::prop_assert_eq!(canonical_crate_ids(&checkout(&g1, &m1)), canonical_crate_ids(&checkout(&g2, &m2)));
        }
    }

    #[test]
    fn a_second_copy_keeps_the_digits_llvm_gave_it() {
        let ir = "call void @_RNvNtCsiaUUwIuSTD9_10ptx_device5index9thread_id()\ncall void @_RNvNtCsiaUUwIuSTD9_10ptx_device5index9thread_id12()\n";
        let id = canonical_id("ptx_device");
        let want =
            format!("call void @_RNvNtCs{id}_10ptx_device5index9thread_id()\ncall void @_RNvNtCs{id}_10ptx_device5index9thread_id12()\n");
        assert_eq!(canonical_crate_ids(ir), want);
    }

    #[test]
    fn unstable_kinds_of_name_parse_too() {
        // rustc-demangle's own samples: a pattern type, a `#[splat]` argument, an associated
        // const in `dyn`, and a back-reference to the `str` inside a `&mut str` constant.
        for sym in [
            "_RINvCs9028UmZQ3sl_12mono_kernels4sizeWmRm1_m9_EB2_",
            "_RNvMNtCs5CcWRJzwAYz_4core6optionINtB2_6OptionFwTlEEuE6unwrapCsiksvdpJ6Jnj_14splat_mangling",
            "_RINvCs9028UmZQ3sl_12mono_kernels4sizeDNtB2_5Traitp1NKj0_EL_EB2_",
            "_RINvCsAAAA_3dep1fKQe61_KRBh_E",
        ] {
            let got = rewrite(sym, &|_, _| Some("x")).unwrap_or_else(|| panic!("{sym} parses"));
            assert_eq!(demangled(&got.symbol), demangled(sym), "{sym} -> {}", got.symbol);
        }
    }

    #[test]
    fn names_inside_string_constants_stay() {
        // A constant's bytes keep their length (its type says it); names in quoted names and
        // metadata strings are names.
        assert_rewrites(
            "@s = constant [17 x i8] c\"_RNvCsAAAA_3dep1f\"\n@\"x c\" = global i8 0\n!1 = !DISubprogram(linkageName: \"_RNvCsAAAA_3dep1f\")\ncall void @_RNvCsAAAA_3dep1f()\n",
            "@s = constant [17 x i8] c\"_RNvCsAAAA_3dep1f\"\n@\"x c\" = global i8 0\n!1 = !DISubprogram(linkageName: \"_RNvCs{dep}_3dep1f\")\ncall void @_RNvCs{dep}_3dep1f()\n",
        );
    }

    /// `ir` rewritten is `want`, where `{dep}` stands for crate `dep`'s canonical id.
    fn assert_rewrites(ir: &str, want: &str) {
        assert_eq!(canonical_crate_ids(ir), want.replace("{dep}", &canonical_id("dep")));
    }

    #[test]
    fn words_that_are_not_v0_names_stay() {
        assert_rewrites(
            "@_Rust_alloc @_RNvCsAAAA_3dep1f.llvm.123 %x_RNvCsAAAA_3dep1f \"_RNv\" @_RNvCsAAAA_3dep @_RNvCsAAAA_3dep1fZZ",
            "@_Rust_alloc @_RNvCs{dep}_3dep1f.llvm.123 %x_RNvCsAAAA_3dep1f \"_RNv\" @_RNvCsAAAA_3dep @_RNvCsAAAA_3dep1fZZ",
        );
        for bad in [
            // A back-reference past the symbol's start, to itself, or to a place no part starts at.
            "_RNvB9_1f",
            "_RINvCsAAAA_3dep1fEB1_",
            "_RNvNtCsAAAA_3dep",
            "_RINvB2_1fEB_",
            // Numbers past 64 bits, or whose sum with an offset is: no name, no panic.
            "_RC18446744073709551615_",
            "_RBlYGhA16ahyf_",
            "_RNvBlYGhA16ahyf_1f",
            "_RNvCsAAAA_3dep99999999999999999999999f",
        ] {
            assert!(rewrite(bad, &|_, _| Some("x")).is_none(), "{bad}");
        }
    }
}
