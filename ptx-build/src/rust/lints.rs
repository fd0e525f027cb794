//! Source lints of Rust kernel crates that no compiler gives: mistakes that build and run wrong.
//!
//! A CUDA author's `__shared__ float tile[256]` is most naturally written `static mut TILE:
//! [f32; 256]`, which Rust puts in global memory: one copy for the whole grid, which every
//! block writes, so blocks race and the result is wrong with no error anywhere (rustc, LLVM and
//! ptxas accept it; the resource table shows 0 bytes of shared memory). A `static mut` array
//! used in a function that synchronises its block (`sync_threads`, core's `_syncthreads`) is
//! that mistake often enough to warn; one used without block barriers (a grid-wide counter) or
//! exported by name for the host (`#[no_mangle]`, `#[export_name]`) is left alone.
//!
//! Two kernels of one name in two modules are one PTX symbol: rustc says "symbol `scale` is
//! already defined" at one of them; the lint names both.
//!
//! A kernel written without `#[kernel]` builds to nothing: the function is not in the PTX, and
//! what the user sees is the host's "no method named `saxpy`" in another crate. A function that
//! reads the thread's position, takes parameters, returns nothing and is called from nowhere in
//! the crate is a kernel missing its attribute often enough to say so at the function.

use std::path::{Path, PathBuf};

use quote::ToTokens;
use syn::visit::Visit;

use crate::diag::Diagnostic;

/// What the lints collect over a crate's files, then judge at the end.
#[derive(Default)]
pub struct CrateLints {
    /// `static mut` arrays: file, line, column, name, the element type and length as written.
    static_arrays: Vec<(PathBuf, u32, u32, String, String)>,
    /// The names used in functions that synchronise their block.
    used_beside_barriers: std::collections::BTreeSet<String>,
    /// Kernels (`#[kernel]` or a kernel ABI), not behind a `cfg`: name, file, line, column.
    kernels: Vec<(String, PathBuf, u32, u32)>,
    /// Other functions that look like kernels (see the module's doc): name, file, line, column.
    kernel_like: Vec<(String, PathBuf, u32, u32)>,
    /// Every name used in an expression or a macro's tokens anywhere in the crate: a function
    /// named here is called (or taken as a pointer), so it is a helper.
    used: std::collections::BTreeSet<String>,
}

impl CrateLints {
    /// Reads one parsed file (`file` as diagnostics name it).
    pub fn read(&mut self, file: &Path, parsed: &syn::File) {
        let mut v = Visitor { file, lints: self, function: None, cfg_modules: 0 };
        v.visit_file(parsed);
    }

    /// The warnings, once every file is read.
    pub fn finish(self) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        for (i, (name, file, line, column)) in self.kernels.iter().enumerate() {
            let Some((_, other, other_line, _)) = self.kernels[..i].iter().find(|(n, ..)| n == name) else { continue };
            let place = if other == file { format!("line {other_line}") } else { format!("{}:{other_line}", other.display()) };
            out.push(
                Diagnostic::warning(format!("kernel `{name}` is defined twice: here and at {place}"))
                    .at(file, Some(*line), Some(*column))
                    .note("a kernel is a PTX symbol, named without its module path: rename one of them"),
            );
        }
        for (name, file, line, column) in self.kernel_like.iter().filter(|(n, ..)| !self.used.contains(n)) {
            out.push(
                Diagnostic::warning(format!(
                    "`{name}` reads the thread's position like a kernel but has no `#[kernel]`: it is not in the PTX, so the host has no launch method for it"
                ))
                .at(file, Some(*line), Some(*column))
                .note("add `#[kernel]` above it (`use ptx_device::prelude::*;` brings the attribute in); a helper that kernels call is left alone once one of them calls it, and `#[allow(dead_code)]` keeps one meant for other crates quiet"),
            );
        }
        out.extend(self.static_arrays.into_iter().filter(|(_, _, _, name, _)| self.used_beside_barriers.contains(name)).map(
            |(file, line, column, name, array)| {
                Diagnostic::warning(format!(
                    "`static mut {name}` is global memory: one copy for the whole grid, which every block reads and writes"
                ))
                .at(file, Some(line), Some(column))
                .note(format!(
                    "for memory of each block (CUDA's `__shared__`), use `let {} = ptx_device::shared_array!{array};` in the kernel",
                    name.to_lowercase()
                ))
            },
        ));
        out
    }
}

struct Visitor<'a> {
    file: &'a Path,
    lints: &'a mut CrateLints,
    /// Of the function being read: the names it uses, and whether it calls a block barrier.
    function: Option<(Vec<String>, bool)>,
    /// How many enclosing inline modules have a `cfg`.
    cfg_modules: usize,
}

/// ptx-device's block barrier and the core intrinsic it wraps.
const BARRIERS: &[&str] = &["sync_threads", "_syncthreads"];

/// Reads of the thread's place in the launch: ptx-device's and core's.
const POSITION: &[&str] = &[
    "thread_idx",
    "block_idx",
    "global_index",
    "global_index_2d",
    "grid_stride",
    "_thread_idx_x",
    "_thread_idx_y",
    "_thread_idx_z",
    "_block_idx_x",
    "_block_idx_y",
    "_block_idx_z",
];

impl<'ast> Visit<'ast> for Visitor<'_> {
    fn visit_item_static(&mut self, s: &'ast syn::ItemStatic) {
        let named = |a: &syn::Attribute| {
            let text = a.to_token_stream().to_string();
            text.contains("no_mangle") || text.contains("export_name")
        };
        if let (syn::StaticMutability::Mut(_), syn::Type::Array(a), false) = (&s.mutability, &*s.ty, s.attrs.iter().any(named)) {
            let start = s.ident.span().start();
            let array = format!("[{}; {}]", tokens(&a.elem), tokens(&a.len));
            self.lints.static_arrays.push((
                self.file.to_path_buf(),
                start.line as u32,
                start.column as u32 + 1,
                s.ident.to_string(),
                array,
            ));
        }
        syn::visit::visit_item_static(self, s);
    }

    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        // `#[kernel]`, `#[ptx_device::kernel]`, or under a `cfg_attr` (`#[cfg_attr(target_arch =
        // "nvptx64", kernel)]`).
        let cfg_attr_kernel = |a: &syn::Attribute| a.path().is_ident("cfg_attr") && idents(a.to_token_stream()).contains("kernel");
        let kernel = f.attrs.iter().any(|a| a.path().segments.last().is_some_and(|s| s.ident == "kernel") || cfg_attr_kernel(a))
            || f.sig.abi.as_ref().and_then(|a| a.name.as_ref()).is_some_and(|n| super::modules::is_kernel_abi(&n.value()));
        if kernel && self.cfg_modules == 0 && !f.attrs.iter().any(|a| a.path().is_ident("cfg")) {
            let start = f.sig.ident.span().start();
            self.lints.kernels.push((f.sig.ident.to_string(), self.file.to_path_buf(), start.line as u32, start.column as u32 + 1));
        }
        let outer = self.function.replace((Vec::new(), false));
        syn::visit::visit_item_fn(self, f);
        let Some((names, barrier)) = std::mem::replace(&mut self.function, outer) else { return };
        let positioned = names.iter().any(|n| POSITION.contains(&n.as_str()));
        let cfg = self.cfg_modules > 0 || f.attrs.iter().any(|a| a.path().is_ident("cfg"));
        // `#[allow(dead_code)]`: a device function kept for other crates, on purpose.
        let allowed = f.attrs.iter().any(|a| a.path().is_ident("allow") && a.to_token_stream().to_string().contains("dead_code"));
        if !kernel && !cfg && !allowed && positioned && !f.sig.inputs.is_empty() && matches!(f.sig.output, syn::ReturnType::Default) {
            let start = f.sig.ident.span().start();
            self.lints.kernel_like.push((f.sig.ident.to_string(), self.file.to_path_buf(), start.line as u32, start.column as u32 + 1));
        }
        if barrier {
            self.lints.used_beside_barriers.extend(names);
        }
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        // A macro's arguments are tokens to syn: a helper called inside `unroll!{..}` is called,
        // and `global_index()` inside `if_let!{..}` is the function's.
        let names = idents(m.tokens.clone());
        if let Some((function, _)) = &mut self.function {
            function.extend(names.iter().cloned());
        }
        self.lints.used.extend(names);
        syn::visit::visit_macro(self, m);
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        let cfg = usize::from(m.attrs.iter().any(|a| a.path().is_ident("cfg")));
        self.cfg_modules += cfg;
        syn::visit::visit_item_mod(self, m);
        self.cfg_modules -= cfg;
    }

    fn visit_expr_path(&mut self, p: &'ast syn::ExprPath) {
        if let Some(last) = p.path.segments.last() {
            self.lints.used.insert(last.ident.to_string());
        }
        if let (Some((names, barrier)), Some(last)) = (&mut self.function, p.path.segments.last()) {
            let name = last.ident.to_string();
            *barrier |= BARRIERS.contains(&name.as_str());
            names.push(name);
        }
        syn::visit::visit_expr_path(self, p);
    }
}

/// Every identifier of `tokens`, inside groups too.
fn idents(tokens: proc_macro2::TokenStream) -> std::collections::BTreeSet<String> {
    let mut out = std::collections::BTreeSet::new();
    for t in tokens {
        match t {
            proc_macro2::TokenTree::Ident(i) => {
                out.insert(i.to_string());
            }
            proc_macro2::TokenTree::Group(g) => out.extend(idents(g.stream())),
            _ => {}
        }
    }
    out
}

/// A type or expression as written, spaced as a reader writes it (`f32`, `256`, `TILE * 2`).
fn tokens(t: &impl quote::ToTokens) -> String {
    let text = t.to_token_stream().to_string();
    // `to_string` spaces every token; a path or a literal reads better without.
    text.replace(" :: ", "::")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lint(src: &str) -> Vec<Diagnostic> {
        let mut l = CrateLints::default();
        l.read(Path::new("src/lib.rs"), &syn::parse_file(src).unwrap());
        l.finish()
    }

    #[test]
    fn a_static_mut_array_beside_a_block_barrier_is_named_with_the_shared_array_to_use() {
        let src = "static mut TILE: [f32; 256] = [0.0; 256];\n#[kernel]\npub unsafe fn rev(x: *const f32, y: *mut f32) {\n    let t = thread_idx_x() as usize;\n    TILE[t] = *x.add(t);\n    sync_threads();\n    *y.add(t) = TILE[255 - t];\n}\n";
        let d = lint(src);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].location().unwrap(), "src/lib.rs:1:12");
        assert!(d[0].message.starts_with("`static mut TILE` is global memory: one copy for the whole grid"), "{}", d[0].message);
        assert_eq!(
            d[0].notes,
            ["for memory of each block (CUDA's `__shared__`), use `let tile = ptx_device::shared_array![f32; 256];` in the kernel"]
        );
        // The path of the barrier does not matter.
        assert_eq!(lint(&src.replace("sync_threads()", "ptx_device::sync::sync_threads()")).len(), 1);
    }

    #[test]
    fn a_kernel_name_in_two_modules_names_both_places() {
        let src = "mod a {\n    #[kernel]\n    pub unsafe fn scale(x: *mut f32) {}\n}\nmod b {\n    #[kernel]\n    pub unsafe fn scale(x: *mut f32) {}\n    #[cfg(feature = \"other\")]\n    #[kernel]\n    pub unsafe fn scale(x: *mut f32) {}\n}\n";
        let d = lint(src);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(
            (d[0].location().unwrap(), d[0].message.as_str()),
            ("src/lib.rs:7:19".into(), "kernel `scale` is defined twice: here and at line 3")
        );
        // Nor where a module is compiled only under a cfg (the other is the fallback).
        assert!(lint(&src.replace("mod b {", "#[cfg(not(feature = \"a\"))]\nmod b {")).is_empty());
        // Plain functions of one name in two modules are Rust's business.
        assert!(lint("mod a { pub fn f() {} }\nmod b { pub fn f() {} }\n").is_empty());
    }

    #[test]
    fn a_kernel_without_its_attribute_is_named_at_the_function() {
        let src = "use ptx_device::prelude::*;\npub unsafe fn saxpy(n: usize, a: f32, x: *const f32, y: *mut f32) {\n    let i = global_index();\n    if i < n { *y.add(i) += a * *x.add(i); }\n}\n#[kernel]\npub unsafe fn ok(y: *mut f32) { *y.add(global_index()) = 0.0; }\n";
        let d = lint(src);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].location().unwrap(), "src/lib.rs:2:15");
        assert_eq!(
            d[0].message,
            "`saxpy` reads the thread's position like a kernel but has no `#[kernel]`: it is not in the PTX, so the host has no launch method for it"
        );
        assert!(d[0].notes[0].starts_with("add `#[kernel]` above it"), "{:?}", d[0].notes);
        // core's registers and the raw kernel ABI count the same way.
        let raw = "pub unsafe fn k(y: *mut f32) { *y = core::arch::nvptx::_thread_idx_x() as f32; }\n#[no_mangle]\npub unsafe extern \"ptx-kernel\" fn r(y: *mut f32) { *y = core::arch::nvptx::_thread_idx_x() as f32; }\n";
        assert_eq!(lint(raw).len(), 1, "{:?}", lint(raw));
    }

    #[test]
    fn device_helpers_that_read_the_position_are_left_alone() {
        // Called by a kernel, directly or inside a macro's tokens; returning a value; taking
        // nothing; compiled only under a cfg.
        let called = "unsafe fn store(y: *mut f32, v: f32) { *y.add(global_index()) = v; }\n#[kernel]\npub unsafe fn k(y: *mut f32) { store(y, 1.0); }\n";
        assert!(lint(called).is_empty());
        let in_macro = "unsafe fn store(y: *mut f32, v: f32) { *y.add(global_index()) = v; }\n#[kernel]\npub unsafe fn k(y: *mut f32) { unroll!(4, |j| store(y, j as f32)); }\n";
        assert!(lint(in_macro).is_empty());
        assert!(lint("pub fn tid(stride: usize) -> usize { global_index() * stride }\n").is_empty());
        assert!(lint("pub fn mark() { let _ = thread_idx(); }\n").is_empty());
        assert!(lint("#[cfg(feature = \"x\")]\npub unsafe fn k(y: *mut f32) { *y.add(global_index()) = 0.0; }\n").is_empty());
        // A kernel under a `cfg_attr`, and a device function kept for other crates on purpose.
        assert!(lint("#[cfg_attr(target_arch = \"nvptx64\", kernel)]\npub unsafe fn k(y: *mut f32) { *y.add(global_index()) = 0.0; }\n")
            .is_empty());
        assert!(lint("#[allow(dead_code)]\npub unsafe fn write_lane(y: *mut u32) { *y = thread_idx().x; }\n").is_empty());
        // A function that never reads the position is not taken for a kernel.
        assert!(lint("pub unsafe fn fill(y: *mut f32) { *y = 0.0; }\n").is_empty());
    }

    #[test]
    fn a_grid_wide_array_without_block_barriers_and_immutable_statics_are_left_alone() {
        assert!(lint("static mut COUNTS: [u32; 4] = [0; 4];\npub unsafe fn k() { COUNTS[0] += 1; }\n").is_empty());
        assert!(lint("static TABLE: [f32; 4] = [0.0; 4];\nstatic mut N: u32 = 0;\npub unsafe fn k() { sync_threads(); }\n").is_empty());
        // Used only where no barrier is, or exported for the host to read by name.
        let apart =
            "static mut HIST: [u32; 4] = [0; 4];\npub unsafe fn count() { HIST[0] += 1; }\npub unsafe fn other() { sync_threads(); }\n";
        assert!(lint(apart).is_empty());
        for attr in ["#[no_mangle]", "#[unsafe(no_mangle)]", "#[export_name = \"hist\"]"] {
            let src = format!("{attr}\nstatic mut HIST: [u32; 4] = [0; 4];\npub unsafe fn k() {{ HIST[0] += 1; sync_threads(); }}\n");
            assert!(lint(&src).is_empty(), "{attr}");
        }
        // core's intrinsic is a barrier too.
        assert_eq!(lint("static mut T: [u32; 4] = [0; 4];\npub unsafe fn k() { T[0] = 1; core::arch::nvptx::_syncthreads(); }\n").len(), 1);
    }
}
