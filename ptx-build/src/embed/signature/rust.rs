//! Rust kernels: `#[no_mangle] extern "ptx-kernel"` functions and ptx-device's `#[kernel]`
//! functions, read with syn through the crate's module tree ([`crate::rust::modules`]), or from
//! rustc's expansion of the crate for kernels that `macro_rules!` stamp out.

use std::path::{Path, PathBuf};

use quote::ToTokens;

use super::{instance_name, Generic, Instance, KernelSig, Param, ParamType, Scalar};
use crate::error::{Error, Result};
use crate::rust::modules::{is_kernel_abi, module_files};

/// Every `extern "ptx-kernel"` function exported with `#[no_mangle]`, and every function marked
/// with ptx-device's `#[kernel]` (or `#[ptx_device::kernel]`), in the crate rooted at `lib_rs`.
pub fn rust_kernels(lib_rs: &Path) -> Result<Vec<KernelSig>> {
    let mut out = Vec::new();
    for (file, parsed) in module_files(lib_rs)? {
        kernels_in(&parsed.items, &file, &mut out)?;
    }
    Ok(out)
}

/// The kernels of one Rust file's text (no `mod x;` followed): the fuzzing entry point.
pub(crate) fn rust_kernels_in_text(file: &Path, src: &str) -> Result<Vec<KernelSig>> {
    let parsed = syn::parse_file(src).map_err(|e| Error::Signature {
        file: file.to_path_buf(),
        line: e.span().start().line as u32,
        kernel: String::new(),
        message: format!("cannot parse: {e}"),
    })?;
    let mut out = Vec::new();
    kernels_in(&parsed.items, file, &mut out)?;
    Ok(out)
}

/// The kernels of the crate rooted at `lib_rs` read from rustc's expansion of it
/// (`-Zunpretty=expanded`, in `expanded`): those the source reader finds (`source`, kept as they
/// are), then those only the expansion shows (kernels stamped out by `macro_rules!`), each
/// placed at the macro call that names it, else at the crate root.
pub fn rust_kernels_expanded(lib_rs: &Path, source: Vec<KernelSig>, expanded: &Path) -> Result<Vec<KernelSig>> {
    let text = std::fs::read_to_string(expanded).map_err(|e| Error::io("read", expanded, e))?;
    let parsed = syn::parse_file(&text).map_err(|e| Error::Signature {
        file: expanded.to_path_buf(),
        line: e.span().start().line as u32,
        kernel: String::new(),
        message: format!("cannot parse: {e}"),
    })?;
    // One kernel whose parameters cannot be typed stays untyped (with the reason) instead of
    // failing the others: the source reader refuses such a kernel, but it cannot see these.
    fn walk(items: &[syn::Item], file: &Path, out: &mut Vec<KernelSig>) {
        for item in items {
            match item {
                syn::Item::Fn(f) => match kernel_of(f, file) {
                    Ok(Some(k)) => out.push(k),
                    Ok(None) => {}
                    Err(e) => {
                        let message = match e {
                            Error::Signature { message, .. } => message,
                            other => other.to_string(),
                        };
                        out.push(KernelSig {
                            name: f.sig.ident.to_string(),
                            params: Vec::new(),
                            file: file.to_path_buf(),
                            line: 0,
                            mangled: false,
                            untyped: Some(message),
                            doc: Vec::new(),
                            generic: None,
                            ptx_name: None,
                            namespace: String::new(),
                        });
                    }
                },
                syn::Item::Mod(syn::ItemMod { content: Some((_, inner)), .. }) => walk(inner, file, out),
                _ => {}
            }
        }
    }
    let mut found = Vec::new();
    walk(&parsed.items, expanded, &mut found);
    let files = module_files(lib_rs)?;
    let mut out = source;
    for mut k in found {
        if out.iter().any(|s| s.ptx_names().contains(&k.name.as_str())) {
            continue;
        }
        let (file, line) = files
            .iter()
            .find_map(|(file, parsed)| macro_call_naming(&parsed.items, &k.name).map(|line| (file.clone(), line)))
            .unwrap_or_else(|| (lib_rs.to_path_buf(), 1));
        k.file = file;
        k.line = line;
        out.push(k);
    }
    Ok(out)
}

/// The line of the first item-position macro call (`unary!(neg_f32, f32);`) whose arguments
/// name `ident`, in `items` and their inline modules.
fn macro_call_naming(items: &[syn::Item], ident: &str) -> Option<u32> {
    fn names(tokens: proc_macro2::TokenStream, ident: &str) -> bool {
        tokens.into_iter().any(|t| match t {
            proc_macro2::TokenTree::Ident(i) => i == ident,
            proc_macro2::TokenTree::Group(g) => names(g.stream(), ident),
            _ => false,
        })
    }
    items.iter().find_map(|item| match item {
        syn::Item::Macro(m) if names(m.mac.tokens.clone(), ident) => Some(syn::spanned::Spanned::span(&m.mac.path).start().line as u32),
        syn::Item::Mod(syn::ItemMod { content: Some((_, inner)), .. }) => macro_call_naming(inner, ident),
        _ => None,
    })
}

/// `extern "ptx-kernel"` functions without `#[no_mangle]`, as (name, file, line): rustc exports
/// them, if at all, under a mangled name no host would load.
pub fn unexported_rust_kernels(lib_rs: &Path) -> Result<Vec<(String, PathBuf, u32)>> {
    fn walk(items: &[syn::Item], file: &Path, out: &mut Vec<(String, PathBuf, u32)>) {
        for item in items {
            match item {
                syn::Item::Fn(f) if is_ptx_kernel_abi(f) && !has_no_mangle(f) && !is_kernel_attribute(f) => {
                    out.push((f.sig.ident.to_string(), file.to_path_buf(), f.sig.ident.span().start().line as u32));
                }
                syn::Item::Mod(syn::ItemMod { content: Some((_, inner)), .. }) => walk(inner, file, out),
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    for (file, parsed) in module_files(lib_rs)? {
        walk(&parsed.items, &file, &mut out);
    }
    Ok(out)
}

fn is_ptx_kernel_abi(f: &syn::ItemFn) -> bool {
    f.sig.abi.as_ref().and_then(|a| a.name.as_ref()).is_some_and(|n| is_kernel_abi(&n.value()))
}

fn has_no_mangle(f: &syn::ItemFn) -> bool {
    f.attrs.iter().any(|a| {
        a.path().is_ident("no_mangle") || (a.path().is_ident("unsafe") && a.meta.to_token_stream().to_string().contains("no_mangle"))
    })
}

fn kernels_in(items: &[syn::Item], file: &Path, out: &mut Vec<KernelSig>) -> Result<()> {
    for item in items {
        match item {
            syn::Item::Fn(f) => {
                if let Some(sig) = kernel_of(f, file)? {
                    out.push(sig);
                }
            }
            syn::Item::Mod(syn::ItemMod { content: Some((_, inner)), .. }) => kernels_in(inner, file, out)?,
            _ => {}
        }
    }
    Ok(())
}

fn kernel_of(f: &syn::ItemFn, file: &Path) -> Result<Option<KernelSig>> {
    if !(is_ptx_kernel_abi(f) && has_no_mangle(f) || is_kernel_attribute(f)) {
        return Ok(None);
    }
    let name = f.sig.ident.to_string();
    let line = f.sig.ident.span().start().line as u32;
    let mut params = Vec::new();
    for (i, input) in f.sig.inputs.iter().enumerate() {
        let syn::FnArg::Typed(pt) = input else { continue };
        let pname = match &*pt.pat {
            syn::Pat::Ident(id) => id.ident.to_string(),
            _ => format!("arg{i}"),
        };
        let pline = pt.ty_span_line();
        let ty = param_type(&pt.ty).map_err(|message| Error::Signature {
            file: file.to_path_buf(),
            line: pline,
            kernel: name.clone(),
            message: format!("parameter `{pname}`: {message}"),
        })?;
        params.push(Param { name: pname, ty });
    }
    let doc = f
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(syn::MetaNameValue { value: syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }), .. }) => {
                Some(s.value())
            }
            _ => None,
        })
        .collect();
    let generic =
        generic_of(f, &name).map_err(|message| Error::Signature { file: file.to_path_buf(), line, kernel: name.clone(), message })?;
    Ok(Some(KernelSig {
        name,
        params,
        file: file.to_path_buf(),
        line,
        mangled: false,
        untyped: None,
        doc,
        generic,
        ptx_name: None,
        namespace: String::new(),
    }))
}

/// `#[kernel]` or `#[ptx_device::kernel]` (ptx-device's attribute, which exports the function
/// as `#[no_mangle] extern "ptx-kernel"`; it refuses what is not `pub unsafe fn`), with or
/// without arguments (`#[kernel(instances(f32, f64))]`).
fn is_kernel_attribute(f: &syn::ItemFn) -> bool {
    kernel_attribute(f).is_some()
}

fn kernel_attribute(f: &syn::ItemFn) -> Option<&syn::Attribute> {
    f.attrs.iter().find(|a| {
        let segments: Vec<String> = a.path().segments.iter().map(|s| s.ident.to_string()).collect();
        matches!(a.meta, syn::Meta::Path(_) | syn::Meta::List(_))
            && matches!(segments.iter().map(String::as_str).collect::<Vec<_>>()[..], ["kernel"] | ["ptx_device", "kernel"])
    })
}

/// The type parameters and instances of a generic `#[kernel(instances(..))]` function, as
/// ptx-device's macro exports them (it has refused, at compile time, what it cannot export).
fn generic_of(f: &syn::ItemFn, name: &str) -> std::result::Result<Option<Generic>, String> {
    let type_params: Vec<String> = f.sig.generics.type_params().map(|p| p.ident.to_string()).collect();
    let Some(attr) = kernel_attribute(f).filter(|_| !type_params.is_empty()) else { return Ok(None) };
    if f.sig.generics.params.len() != type_params.len() {
        return Err("a kernel can only be generic over types (lifetime and const parameters cannot be exported)".into());
    }
    let syn::Meta::List(list) = &attr.meta else {
        return Err("a generic kernel needs its instances: `#[kernel(instances(f32, f64))]`".into());
    };
    let instances = list.parse_args_with(parse_instances).map_err(|e| format!("cannot read `#[kernel({})]`: {e}", list.tokens))?;
    let mut out: Vec<Instance> = Vec::new();
    for types in instances {
        if types.len() != type_params.len() {
            return Err(format!(
                "instance `({})` gives {} types for the {} type parameters `{}`",
                types.join(", "),
                types.len(),
                type_params.len(),
                type_params.join(", ")
            ));
        }
        let ptx_name = instance_name(name, &types);
        if out.iter().any(|i| i.ptx_name == ptx_name) {
            return Err(format!("two instances are exported as `{ptx_name}`"));
        }
        let args = types.into_iter().map(|t| device_type(&t).map(str::to_string).unwrap_or(t)).collect();
        out.push(Instance { args, values: Vec::new(), ptx_name });
    }
    if out.is_empty() {
        return Err("`instances()` lists no type".into());
    }
    Ok(Some(Generic { type_params, const_params: Vec::new(), instances: out, pack: None }))
}

/// `instances(f32, f64)` or `instances((f32, u32), ..)`: each instance's types as written.
fn parse_instances(input: syn::parse::ParseStream) -> syn::Result<Vec<Vec<String>>> {
    let mut out = Vec::new();
    // `instances(..)` among the other arguments of `#[kernel]` (`launch_bounds(..)`, ...).
    while !input.is_empty() {
        let key: syn::Ident = input.parse()?;
        if !["instances", "launch_bounds", "max_registers", "cluster_dims"].contains(&key.to_string().as_str()) {
            return Err(syn::Error::new(key.span(), "expected `instances(..)`"));
        }
        let content;
        syn::parenthesized!(content in input);
        if !input.is_empty() {
            input.parse::<syn::Token![,]>()?;
        }
        if key != "instances" {
            let _: proc_macro2::TokenStream = content.parse()?;
            continue;
        }
        while !content.is_empty() {
            // Parentheses always mean a list of types (a tuple is never a kernel type), as in the macro.
            let types: Vec<String> = if content.peek(syn::token::Paren) {
                let inner;
                syn::parenthesized!(inner in content);
                let types = syn::punctuated::Punctuated::<syn::Type, syn::Token![,]>::parse_terminated(&inner)?;
                types.iter().map(type_text).collect()
            } else {
                vec![type_text(&content.parse::<syn::Type>()?)]
            };
            out.push(types);
            if !content.is_empty() {
                content.parse::<syn::Token![,]>()?;
            }
        }
    }
    Ok(out)
}

/// A type as written, without the token printer's spaces except between two words
/// (`*const u8`, `crate::Pair`, `[f32;4]`).
fn type_text(ty: &syn::Type) -> String {
    let tokens = ty.to_token_stream().to_string();
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    let mut out = String::with_capacity(tokens.len());
    for (i, c) in tokens.char_indices() {
        if c == ' ' && !(word(out.chars().last()) && word(tokens[i + 1..].chars().next())) {
            continue;
        }
        out.push(c);
    }
    out
}

trait SpanLine {
    fn ty_span_line(&self) -> u32;
}

impl SpanLine for syn::PatType {
    fn ty_span_line(&self) -> u32 {
        syn::spanned::Spanned::span(&self.ty).start().line as u32
    }
}

/// ptx-device's types whose host twin lives in ptx-runtime, by the name a kernel writes
/// (alone, or under `ptx_device::`).
const DEVICE_TYPES: &[(&str, &str)] = &[
    ("f16", "::ptx_runtime::half::f16"),
    ("bf16", "::ptx_runtime::half::bf16"),
    ("f16x2", "::ptx_runtime::cuda_types::Half2"),
    ("bf16x2", "::ptx_runtime::cuda_types::Bf16x2"),
    ("TensorMap", "::ptx_runtime::TensorMap"),
];

/// The host type of a ptx-device type written `text` (`f16`, `ptx_device::half::f16`).
fn device_type(text: &str) -> Option<&'static str> {
    let last = text.rsplit("::").next()?;
    let single = !text.contains("::") || text.starts_with("ptx_device::") || text.starts_with("::ptx_device::");
    DEVICE_TYPES.iter().find(|(d, _)| *d == last && single).map(|(_, h)| *h)
}

fn param_type(ty: &syn::Type) -> std::result::Result<ParamType, String> {
    let text = ty.to_token_stream().to_string().replace(' ', "");
    if let Some(host) = device_type(&text) {
        return Ok(ParamType::ByValue { ty: host.to_string() });
    }
    match ty {
        syn::Type::Ptr(p) => {
            let elem = p.elem.to_token_stream().to_string().replace(' ', "");
            let elem = device_type(&elem).map(str::to_string).unwrap_or(elem);
            // `*const *mut f32`: a buffer of device addresses, as C's `float *const *`.
            if matches!(*p.elem, syn::Type::Ptr(_)) {
                let mut pointee = String::new();
                let mut t = &*p.elem;
                while let syn::Type::Ptr(inner) = t {
                    pointee.push_str(if matches!(inner.mutability, syn::PointerMutability::Mut(_)) { "*mut " } else { "*const " });
                    t = &inner.elem;
                }
                while let syn::Type::Paren(syn::TypeParen { elem, .. }) | syn::Type::Group(syn::TypeGroup { elem, .. }) = t {
                    t = elem;
                }
                let fat = matches!(t, syn::Type::Slice(_) | syn::Type::TraitObject(_))
                    || matches!(t, syn::Type::Path(e) if e.path.is_ident("str"));
                if fat {
                    let outer = if matches!(p.mutability, syn::PointerMutability::Mut(_)) { "*mut " } else { "*const " };
                    return Err(format!(
                        "`{outer}{pointee}{}`: its elements are fat pointers (an address and a length or vtable each), which no buffer of device addresses holds; take `*const *const T` and pass the lengths apart",
                        type_text(t)
                    ));
                }
                pointee.push_str(&type_text(t));
                return Ok(ParamType::Addresses { mutable: matches!(p.mutability, syn::PointerMutability::Mut(_)), pointee });
            }
            // A fat pointer: 16 bytes of address and length (or vtable) that no typed launch passes.
            let text = type_text(ty).replacen("const[", "const [", 1).replacen("mut[", "mut [", 1).replacen("const(", "const (", 1);
            let mut pointee = &*p.elem;
            while let syn::Type::Paren(syn::TypeParen { elem, .. }) | syn::Type::Group(syn::TypeGroup { elem, .. }) = pointee {
                pointee = elem; // `*const (dyn Tr)`
            }
            match pointee {
                syn::Type::Slice(_) => {
                    return Err(format!("`{text}`: a pointer to a slice is a fat pointer (address and length); take a `*const T` and the length as a parameter (`n: usize`)"));
                }
                syn::Type::Path(e) if e.path.is_ident("str") => {
                    return Err(format!("`{text}`: a pointer to a `str` is a fat pointer (address and length); take a `*const u8` and the length as a parameter"));
                }
                syn::Type::TraitObject(_) => {
                    return Err(format!("`{text}`: a pointer to a trait object carries a host vtable; take a pointer to a concrete type"));
                }
                _ => {}
            }
            // `*const c_void`: device memory of any element type, as C's `const void *`.
            if matches!(elem.trim_start_matches("::"), "c_void" | "core::ffi::c_void" | "std::ffi::c_void" | "libc::c_void") {
                return Ok(ParamType::AnyPointer { mutable: matches!(p.mutability, syn::PointerMutability::Mut(_)) });
            }
            Ok(ParamType::Pointer { mutable: matches!(p.mutability, syn::PointerMutability::Mut(_)), elem })
        }
        syn::Type::Path(p) if p.qself.is_none() => {
            let last = p.path.segments.last().map(|s| s.ident.to_string()).unwrap_or_default();
            if let Some(s) =
                Scalar::from_name(&last).filter(|_| p.path.segments.len() == 1 || text.starts_with("core::") || text.starts_with("std::"))
            {
                return Ok(ParamType::Scalar(s));
            }
            if p.path.segments.iter().any(|s| !s.arguments.is_empty()) {
                return Err(format!("`{text}`: generic types cannot cross to the host; use a `#[repr(C)]` struct"));
            }
            Ok(ParamType::ByValue { ty: text })
        }
        syn::Type::Reference(_) => Err(format!("`{text}`: a kernel cannot take a reference; take `*const T` or `*mut T` (device memory)")),
        syn::Type::Slice(_) | syn::Type::Array(_) => {
            Err(format!("`{text}`: slices and arrays cannot be kernel parameters; take a pointer and a length"))
        }
        _ => Err(format!("`{text}` cannot be a kernel parameter; use a primitive, a pointer, or a `#[repr(C)]` struct")),
    }
}

#[cfg(test)]
mod tests {

    use super::*;

    fn crate_with(files: &[(&str, &str)]) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        for (p, text) in files {
            let p = d.path().join(p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        d
    }

    #[test]
    fn gpu_kernel_abi_functions_are_kernels_too() {
        let src = "#![feature(abi_gpu_kernel)]\n#[no_mangle]\npub unsafe extern \"gpu-kernel\" fn offload(n: u32, y: *mut f32) {}\nextern \"gpu-kernel\" fn hidden() {}\n";
        let k = rust_kernels_in_text(Path::new("lib.rs"), src).unwrap();
        assert_eq!(k.iter().map(|k| (k.name.as_str(), k.line)).collect::<Vec<_>>(), [("offload", 3)]);
        assert_eq!(k[0].params[1].ty, ParamType::Pointer { mutable: true, elem: "f32".into() });
        let d = crate_with(&[("src/lib.rs", src)]);
        let unexported = unexported_rust_kernels(&d.path().join("src/lib.rs")).unwrap();
        assert_eq!(unexported.iter().map(|u| u.0.as_str()).collect::<Vec<_>>(), ["hidden"]);
    }

    #[test]
    fn fat_pointers_are_refused_with_the_thin_pointer_and_length_to_take() {
        for (ty, why) in [
            ("*const [f32]", "a pointer to a slice is a fat pointer (address and length); take a `*const T`"),
            ("*mut str", "a pointer to a `str` is a fat pointer"),
            ("*const dyn Copy", "a pointer to a trait object carries a host vtable"),
            ("*const (dyn Copy)", "a pointer to a trait object carries a host vtable"),
            ("*const *const [f32]", "its elements are fat pointers (an address and a length or vtable each)"),
            ("*mut *const str", "its elements are fat pointers"),
            ("*const *mut dyn Copy", "its elements are fat pointers"),
        ] {
            let src = format!("#[no_mangle]\npub unsafe extern \"ptx-kernel\" fn k(n: u32, xs: {ty}) {{}}\n");
            let e = rust_kernels_in_text(Path::new("lib.rs"), &src).unwrap_err().to_string();
            assert!(e.contains("parameter `xs`") && e.contains(&format!("`{ty}`: {why}")), "{e}");
        }
    }

    #[test]
    fn c_void_pointers_take_any_device_buffer() {
        let src = "use core::ffi::c_void;\n#[no_mangle]\npub unsafe extern \"ptx-kernel\" fn q(x: *const c_void, y: *mut core::ffi::c_void, z: *const ::std::ffi::c_void, p: *const *mut c_void) {}\n";
        let k = rust_kernels_in_text(Path::new("lib.rs"), src).unwrap();
        let tys: Vec<&ParamType> = k[0].params.iter().map(|p| &p.ty).collect();
        assert_eq!(
            tys,
            [
                &ParamType::AnyPointer { mutable: false },
                &ParamType::AnyPointer { mutable: true },
                &ParamType::AnyPointer { mutable: false },
                // A buffer of device addresses, as C's `void *const *`.
                &ParamType::Addresses { mutable: false, pointee: "*mut c_void".into() }
            ]
        );
        let k = rust_kernels_in_text(Path::new("lib.rs"), &src.replace("*const *mut c_void", "*mut *const *const f32")).unwrap();
        assert_eq!(k[0].params[3].ty, ParamType::Addresses { mutable: true, pointee: "*const *const f32".into() });
    }

    #[test]
    fn reads_kernels_through_the_module_tree() {
        let d = crate_with(&[
            ("src/lib.rs", "#![no_std]\nmod a;\nmod b { #[no_mangle] pub unsafe extern \"ptx-kernel\" fn inline_mod(p: Pair) {} }\n#[no_mangle]\npub unsafe extern \"ptx-kernel\" fn saxpy(n: u32, a: f32, x: *const f32, y: *mut f32) {}\npub fn helper(x: u32) {}\n"),
            ("src/a.rs", "mod deep;\n#[unsafe(no_mangle)]\npub unsafe extern \"ptx-kernel\" fn in_a(n: i64) {}\n"),
            ("src/a/deep.rs", "#[no_mangle]\npub unsafe extern \"ptx-kernel\" fn deep(x: *mut u8) {}\nextern \"ptx-kernel\" fn not_exported() {}\n"),
        ]);
        let k = rust_kernels(&d.path().join("src/lib.rs")).unwrap();
        let names: Vec<&str> = k.iter().map(|k| k.name.as_str()).collect();
        assert_eq!(names, ["inline_mod", "saxpy", "in_a", "deep"], "root file first, then each module file");
        let saxpy = k.iter().find(|k| k.name == "saxpy").unwrap();
        assert_eq!(saxpy.line, 5, "the line of `fn saxpy`");
        assert_eq!(
            saxpy.params.iter().map(|p| p.ty.clone()).collect::<Vec<_>>(),
            vec![
                ParamType::Scalar(Scalar::U32),
                ParamType::Scalar(Scalar::F32),
                ParamType::Pointer { mutable: false, elem: "f32".into() },
                ParamType::Pointer { mutable: true, elem: "f32".into() }
            ]
        );
        assert_eq!(k.iter().find(|k| k.name == "inline_mod").unwrap().params[0].ty, ParamType::ByValue { ty: "Pair".into() });
    }

    #[test]
    fn reads_kernels_written_with_the_kernel_attribute() {
        let d = crate_with(&[(
            "src/lib.rs",
            "use ptx_device::kernel;\n#[kernel]\npub unsafe fn scale(n: u32, x: *mut f32) {}\n/// Doc.\n#[ptx_device::kernel]\npub unsafe fn fill(x: *mut u64, v: u64) {}\n#[inline]\npub unsafe fn helper(x: u32) {}\n#[other::kernel]\npub unsafe fn not_ours() {}\n",
        )]);
        let k = rust_kernels(&d.path().join("src/lib.rs")).unwrap();
        let names: Vec<&str> = k.iter().map(|k| k.name.as_str()).collect();
        assert_eq!(names, ["scale", "fill"]);
        assert_eq!(k[0].line, 3);
        assert_eq!(k[1].params[1].ty, ParamType::Scalar(Scalar::U64));
        assert_eq!(k[0].params[1].ty, ParamType::Pointer { mutable: true, elem: "f32".into() });
    }

    #[test]
    fn a_generic_kernel_is_one_signature_with_its_instances() {
        let src = "use ptx_device::kernel;\n/// Adds.\n#[kernel(instances(f32, f64))]\npub unsafe fn add<T: Copy + core::ops::Add<Output = T>>(n: u32, x: *const T, y: *mut T, s: T) {}\n#[ptx_device::kernel(instances((f32, u32), (crate::Pair, *const u8),))]\npub unsafe fn cast<A, B>(x: *const A, y: *mut B) where A: Copy {}\n#[kernel]\npub unsafe fn plain(x: *mut f32) {}\n";
        let k = rust_kernels_in_text(Path::new("lib.rs"), src).unwrap();
        assert_eq!(k.iter().map(|k| (k.name.as_str(), k.line)).collect::<Vec<_>>(), [("add", 4), ("cast", 6), ("plain", 8)]);
        let inst = |args: &[&str], ptx_name: &str| Instance {
            args: args.iter().map(|a| a.to_string()).collect(),
            values: Vec::new(),
            ptx_name: ptx_name.into(),
        };
        assert_eq!(
            k[0].generic,
            Some(Generic {
                type_params: vec!["T".into()],
                const_params: Vec::new(),
                instances: vec![inst(&["f32"], "add_f32"), inst(&["f64"], "add_f64")],
                pack: None,
            })
        );
        assert_eq!(
            k[0].params.iter().map(|p| p.ty.clone()).collect::<Vec<_>>(),
            [
                ParamType::Scalar(Scalar::U32),
                ParamType::Pointer { mutable: false, elem: "T".into() },
                ParamType::Pointer { mutable: true, elem: "T".into() },
                ParamType::ByValue { ty: "T".into() }
            ]
        );
        assert_eq!(k[0].doc, [" Adds."]);
        assert_eq!(
            k[1].generic,
            Some(Generic {
                type_params: vec!["A".into(), "B".into()],
                const_params: Vec::new(),
                instances: vec![inst(&["f32", "u32"], "cast_f32_u32"), inst(&["crate::Pair", "*const u8"], "cast_crate_Pair_const_u8")],
                pack: None,
            })
        );
        assert_eq!(k[2].generic, None);
    }

    #[test]
    fn generic_kernels_the_macro_would_refuse_are_errors_at_their_line() {
        let e = |attr: &str, generics: &str| {
            let src = format!("\n#[kernel{attr}]\npub unsafe fn k{generics}(n: u32) {{}}\n");
            rust_kernels_in_text(Path::new("lib.rs"), &src).unwrap_err().to_string()
        };
        let m = e("", "<T>");
        assert!(
            m.contains("lib.rs:3")
                && m.contains("kernel `k`")
                && m.contains("a generic kernel needs its instances: `#[kernel(instances(f32, f64))]`"),
            "{m}"
        );
        assert!(e("(instances(f32))", "<'a, T>").contains("a kernel can only be generic over types"));
        assert!(e("(instances((f32, u32)))", "<T>").contains("instance `(f32, u32)` gives 2 types for the 1 type parameters `T`"));
        assert!(e("(instances(f32, f32))", "<T>").contains("two instances are exported as `k_f32`"));
        assert!(e("(instances())", "<T>").contains("`instances()` lists no type"));
        assert!(e("(types(f32))", "<T>").contains("cannot read `#[kernel(types (f32))]`: expected `instances(..)`"));
        assert!(e("(instances(1))", "<T>").contains("cannot read `#[kernel(instances (1))]`"));
    }

    /// What `cargo rustc -- -Zunpretty=expanded` printed for a crate with a generic kernel and
    /// two kernels stamped out by `macro_rules!` (nightly 2026-05-19), trimmed.
    const EXPANDED: &str = "#![feature(prelude_import)]\n#![no_std]\nextern crate core;\n#[prelude_import]\nuse core::prelude::rust_2021::*;\nuse ptx_device::{index::global_index, kernel};\n#[doc = \" Adds.\"]\npub unsafe fn add<T: Copy +\n    core::ops::Add<Output = T>>(n: u32, x: *const T, y: *mut T) {\n    let i = global_index();\n}\n#[doc = \" `add` for `f32`: the kernel exported as `add_f32`.\"]\n#[no_mangle]\npub unsafe extern \"ptx-kernel\" fn add_f32(n: u32, x: *const f32,\n    y: *mut f32) {\n    unsafe { add::<f32>(n, x, y) }\n}\nmacro_rules! unary {\n    ($name:ident, $t:ty) =>\n    {\n        /// Negates.\n        #[kernel] pub unsafe fn $name(n: u32, x: *const $t, y: *mut $t)\n        { if n > 0 { *y = -*x; } }\n    };\n}\n#[doc = \" Negates.\"]\n#[no_mangle]\npub unsafe extern \"ptx-kernel\" fn neg_f32(n: u32, x: *const f32,\n    y: *mut f32) {\n    if n > 0 { *y = -*x; }\n}\nmod m {\n    #[no_mangle]\n    pub unsafe extern \"ptx-kernel\" fn neg_f64(n: u32, x: *const f64,\n        y: *mut f64) {}\n    #[no_mangle]\n    pub unsafe extern \"ptx-kernel\" fn pasted_u8(x: *mut u8) {}\n}\n#[no_mangle]\npub unsafe extern \"ptx-kernel\" fn sum_slice(xs: &[f32]) {}\n";

    #[test]
    fn kernels_stamped_out_by_macros_are_read_from_the_expanded_crate_at_their_macro_call() {
        let d = crate_with(&[
            (
                "src/lib.rs",
                "#![no_std]\nuse ptx_device::{index::global_index, kernel};\n/// Adds.\n#[kernel(instances(f32))]\npub unsafe fn add<T: Copy>(n: u32, x: *const T, y: *mut T) {}\nmacro_rules! unary {\n    ($name:ident, $t:ty) => { #[kernel] pub unsafe fn $name(n: u32, x: *const $t, y: *mut $t) {} };\n}\nunary!(neg_f32, f32);\nmod m;\n",
            ),
            ("src/m.rs", "\n\nunary!(neg_f64, f64);\nstamp_by_paste!(u8);\nslices!(sum_slice);\n"),
            ("expanded.rs", EXPANDED),
        ]);
        let lib = d.path().join("src/lib.rs");
        let source = rust_kernels(&lib).unwrap();
        assert_eq!(source.len(), 1, "the source reader sees `add` only");
        let k = rust_kernels_expanded(&lib, source, &d.path().join("expanded.rs")).unwrap();
        let at = |k: &KernelSig| (k.name.clone(), k.file.strip_prefix(d.path()).unwrap().display().to_string(), k.line);
        assert_eq!(
            k.iter().map(at).collect::<Vec<_>>(),
            [
                ("add".into(), "src/lib.rs".into(), 5),
                ("neg_f32".into(), "src/lib.rs".into(), 9),
                ("neg_f64".into(), "src/m.rs".into(), 3),
                // A name no macro call spells out (`paste!`): the crate root.
                ("pasted_u8".into(), "src/lib.rs".into(), 1),
                ("sum_slice".into(), "src/m.rs".into(), 5),
            ]
        );
        // A kernel the host cannot call typed stays untyped, with the reason; the others are typed.
        assert!(k[3].untyped.is_none());
        assert_eq!(
            k[4].untyped.as_deref(),
            Some("parameter `xs`: `&[f32]`: a kernel cannot take a reference; take `*const T` or `*mut T` (device memory)")
        );
        assert!(k[0].generic.is_some(), "the generic kernel is read from the source, its instances not again");
        assert_eq!(
            k[2].params.iter().map(|p| (p.name.as_str(), p.ty.clone())).collect::<Vec<_>>(),
            [
                ("n", ParamType::Scalar(Scalar::U32)),
                ("x", ParamType::Pointer { mutable: false, elem: "f64".into() }),
                ("y", ParamType::Pointer { mutable: true, elem: "f64".into() })
            ]
        );
        assert_eq!(k[1].doc, [" Negates."]);
        // An expansion syn cannot read is an error naming the file (the engine warns and falls
        // back to untyped kernels).
        std::fs::write(d.path().join("bad.rs"), "fn broken( {").unwrap();
        let e = rust_kernels_expanded(&lib, Vec::new(), &d.path().join("bad.rs")).unwrap_err().to_string();
        assert!(e.contains("bad.rs:1") && e.contains("cannot parse"), "{e}");
    }

    #[test]
    fn unsupported_parameters_name_kernel_parameter_and_line() {
        let d = crate_with(&[("src/lib.rs", "#[no_mangle]\npub unsafe extern \"ptx-kernel\" fn k(\n    n: u32,\n    xs: &[f32],\n) {}\n")]);
        let e = rust_kernels(&d.path().join("src/lib.rs")).unwrap_err().to_string();
        assert!(
            e.contains("src/lib.rs:4")
                && e.contains("kernel `k`")
                && e.contains("parameter `xs`")
                && e.contains("a kernel cannot take a reference"),
            "{e}"
        );
    }
}
