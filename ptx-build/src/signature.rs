//! Kernel signatures from the sources, checked against the PTX.
//!
//! Rust kernels are read with syn through the crate's module tree (`mod x;` followed into
//! `x.rs` / `x/mod.rs`, `#[path]` honoured). Each parameter becomes the type a typed launch
//! method takes; [`check`] then compares count and sizes with the PTX `.entry` parameters, so a
//! source the PTX did not come from is caught at build time, not on the GPU.

use std::path::{Path, PathBuf};

use quote::ToTokens;

use crate::error::{Error, Result};
use crate::ptx;

/// A primitive passed by value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scalar {
    Bool,
    U8,
    I8,
    U16,
    I16,
    U32,
    I32,
    U64,
    I64,
    Usize,
    Isize,
    F32,
    F64,
}

impl Scalar {
    fn from_name(name: &str) -> Option<Scalar> {
        Some(match name {
            "bool" => Scalar::Bool,
            "u8" => Scalar::U8,
            "i8" => Scalar::I8,
            "u16" => Scalar::U16,
            "i16" => Scalar::I16,
            "u32" => Scalar::U32,
            "i32" => Scalar::I32,
            "u64" => Scalar::U64,
            "i64" => Scalar::I64,
            "usize" => Scalar::Usize,
            "isize" => Scalar::Isize,
            "f32" => Scalar::F32,
            "f64" => Scalar::F64,
            _ => return None,
        })
    }

    /// The Rust spelling on the host side.
    pub fn rust_name(&self) -> &'static str {
        match self {
            Scalar::Bool => "bool",
            Scalar::U8 => "u8",
            Scalar::I8 => "i8",
            Scalar::U16 => "u16",
            Scalar::I16 => "i16",
            Scalar::U32 => "u32",
            Scalar::I32 => "i32",
            Scalar::U64 => "u64",
            Scalar::I64 => "i64",
            Scalar::Usize => "usize",
            Scalar::Isize => "isize",
            Scalar::F32 => "f32",
            Scalar::F64 => "f64",
        }
    }

    /// Size in bytes on nvptx64 (and on 64-bit hosts).
    pub fn size(&self) -> u32 {
        match self {
            Scalar::Bool | Scalar::U8 | Scalar::I8 => 1,
            Scalar::U16 | Scalar::I16 => 2,
            Scalar::U32 | Scalar::I32 | Scalar::F32 => 4,
            _ => 8,
        }
    }
}

/// How a parameter crosses from the host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParamType {
    Scalar(Scalar),
    /// Device memory; `elem` is the pointee as written (`f32`, `Pair`).
    Pointer {
        mutable: bool,
        elem: String,
    },
    /// A `#[repr(C)]` type by value, named as written; the host must have it in scope and
    /// implement cudarc's `DeviceRepr` for it.
    ByValue {
        ty: String,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    pub name: String,
    pub ty: ParamType,
}

/// A kernel as the source declares it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelSig {
    pub name: String,
    pub params: Vec<Param>,
    pub file: PathBuf,
    pub line: u32,
}

/// Every `extern "ptx-kernel"` function exported with `#[no_mangle]` in the crate rooted at `lib_rs`.
pub fn rust_kernels(lib_rs: &Path) -> Result<Vec<KernelSig>> {
    let mut out = Vec::new();
    for (file, parsed) in module_files(lib_rs)? {
        kernels_in(&parsed.items, &file, &mut out)?;
    }
    Ok(out)
}

/// Where `mod child;` of the module in `file` looks: beside `lib.rs`/`mod.rs`, else in a folder
/// named after the file.
fn module_dir(file: &Path, is_root: bool) -> PathBuf {
    let parent = file.parent().unwrap_or(Path::new(".")).to_path_buf();
    let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
    if is_root || stem == "mod" || stem == "lib" || stem == "main" {
        parent
    } else {
        parent.join(stem)
    }
}

/// Every file of the crate rooted at `lib_rs`, parsed: `mod x;` followed into `x.rs` /
/// `x/mod.rs` (or its `#[path]`), in source order.
pub fn module_files(lib_rs: &Path) -> Result<Vec<(PathBuf, syn::File)>> {
    let mut out = Vec::new();
    walk_file(lib_rs, &module_dir(lib_rs, true), &mut out)?;
    Ok(out)
}

fn walk_file(file: &Path, dir: &Path, out: &mut Vec<(PathBuf, syn::File)>) -> Result<()> {
    let text = std::fs::read_to_string(file).map_err(|e| Error::io("read", file, e))?;
    let parsed = syn::parse_file(&text).map_err(|e| {
        let start = e.span().start();
        Error::Signature { file: file.to_path_buf(), line: start.line as u32, kernel: String::new(), message: format!("cannot parse: {e}") }
    })?;
    let children = child_files(&parsed.items, file, dir);
    out.push((file.to_path_buf(), parsed));
    for (child, child_dir) in children {
        walk_file(&child, &child_dir, out)?;
    }
    Ok(())
}

/// The files of the out-of-line modules declared in `items` (inline modules searched too).
fn child_files(items: &[syn::Item], file: &Path, dir: &Path) -> Vec<(PathBuf, PathBuf)> {
    let mut out = Vec::new();
    for item in items {
        let syn::Item::Mod(m) = item else { continue };
        let name = m.ident.to_string();
        let path_attr = m.attrs.iter().find(|a| a.path().is_ident("path")).and_then(|a| match &a.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        });
        match &m.content {
            Some((_, inner)) => out.extend(child_files(inner, file, &dir.join(&name))),
            None => {
                let candidates = match &path_attr {
                    Some(p) => vec![file.parent().unwrap_or(Path::new(".")).join(p)],
                    None => vec![dir.join(format!("{name}.rs")), dir.join(&name).join("mod.rs")],
                };
                if let Some(child) = candidates.into_iter().find(|c| c.is_file()) {
                    let child_dir = module_dir(&child, false);
                    out.push((child, child_dir));
                }
            }
        }
    }
    out
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
    let is_ptx_kernel = f.sig.abi.as_ref().and_then(|a| a.name.as_ref()).is_some_and(|n| n.value() == "ptx-kernel");
    let no_mangle = f.attrs.iter().any(|a| {
        a.path().is_ident("no_mangle") || (a.path().is_ident("unsafe") && a.meta.to_token_stream().to_string().contains("no_mangle"))
    });
    if !is_ptx_kernel || !no_mangle {
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
    Ok(Some(KernelSig { name, params, file: file.to_path_buf(), line }))
}

trait SpanLine {
    fn ty_span_line(&self) -> u32;
}

impl SpanLine for syn::PatType {
    fn ty_span_line(&self) -> u32 {
        syn::spanned::Spanned::span(&self.ty).start().line as u32
    }
}

fn param_type(ty: &syn::Type) -> std::result::Result<ParamType, String> {
    let text = ty.to_token_stream().to_string().replace(' ', "");
    match ty {
        syn::Type::Ptr(p) => {
            let elem = p.elem.to_token_stream().to_string().replace(' ', "");
            if matches!(*p.elem, syn::Type::Ptr(_)) {
                return Err(format!(
                    "`{text}`: pointers to pointers cannot be launched with typed arguments; pass a `u64` device address instead"
                ));
            }
            Ok(ParamType::Pointer { mutable: p.mutability.is_some(), elem })
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

/// Compares a kernel's source signature with its PTX entry: count and per-parameter size.
/// Sizes of by-value structs are checked by the generated code (`size_of` against the PTX).
pub fn check(sig: &KernelSig, entry: Option<&ptx::Entry>) -> Result<()> {
    let err = |message: String| Error::Signature { file: sig.file.clone(), line: sig.line, kernel: sig.name.clone(), message };
    let Some(entry) = entry else {
        return Err(err("the source declares this kernel, but the PTX has no `.entry` of that name (is it behind a `cfg`?)".into()));
    };
    if entry.params.len() != sig.params.len() {
        return Err(err(format!("the source has {} parameters, the PTX entry {}", sig.params.len(), entry.params.len())));
    }
    for (p, e) in sig.params.iter().zip(&entry.params) {
        let expected = match &p.ty {
            ParamType::Scalar(s) => s.size(),
            ParamType::Pointer { .. } => 8,
            ParamType::ByValue { .. } => continue,
        };
        if e.size != expected {
            return Err(err(format!(
                "parameter `{}` is {} bytes in the source and {} bytes in the PTX (`{}`)",
                p.name, expected, e.size, e.ty
            )));
        }
    }
    Ok(())
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

    #[test]
    fn a_signature_that_disagrees_with_the_ptx_is_caught() {
        let sig = KernelSig {
            name: "k".into(),
            params: vec![Param { name: "n".into(), ty: ParamType::Scalar(Scalar::U64) }],
            file: "src/lib.rs".into(),
            line: 3,
        };
        let m = ptx::Module::parse(".visible .entry k(\n.param .u32 k_param_0\n)\n{\nret;\n}\n");
        let e = check(&sig, m.entry("k")).unwrap_err().to_string();
        assert!(e.contains("kernel `k`") && e.contains("parameter `n` is 8 bytes in the source and 4 bytes in the PTX"), "{e}");
        let m = ptx::Module::parse(".visible .entry k(\n.param .u64 k_param_0,\n.param .u64 k_param_1\n)\n{\nret;\n}\n");
        assert!(check(&sig, m.entry("k")).unwrap_err().to_string().contains("the source has 1 parameters, the PTX entry 2"));
        assert!(check(&sig, None).unwrap_err().to_string().contains("no `.entry` of that name"));
        let m = ptx::Module::parse(".visible .entry k(\n.param .u64 k_param_0\n)\n{\nret;\n}\n");
        assert!(check(&sig, m.entry("k")).is_ok());
    }
}
