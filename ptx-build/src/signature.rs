//! Kernel signatures from the sources, checked against the PTX.
//!
//! Rust kernels are read with syn through the crate's module tree (`mod x;` followed into
//! `x.rs` / `x/mod.rs`, `#[path]` honoured); CUDA C++ kernels are the `__global__` functions of
//! a .cu file (read with [`crate::c_lex`]: no C++ parser crate reads CUDA's dialect). Each parameter becomes the type a typed launch
//! method takes; [`check`] then compares count and sizes with the PTX `.entry` parameters, so a
//! source the PTX did not come from is caught at build time, not on the GPU.

use std::path::{Path, PathBuf};

use quote::ToTokens;

use crate::c_lex::{self, Kind};
use crate::error::{Error, Result};
use crate::ptx;

/// A primitive passed by value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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

#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Param {
    pub name: String,
    pub ty: ParamType,
}

/// A kernel as the source declares it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct KernelSig {
    pub name: String,
    pub params: Vec<Param>,
    pub file: PathBuf,
    pub line: u32,
    /// A C++ kernel without `extern "C"`: its PTX name is mangled (`_Z4fillPfi`).
    pub mangled: bool,
    /// Why its parameters cannot be typed (`parameter 0: `void *` has no element type`), for
    /// a C/C++ kernel that is embedded without a typed method; `params` is then empty.
    pub untyped: Option<String>,
    /// The kernel's doc comment, one entry per line (Rust `///`), for the generated method.
    pub doc: Vec<String>,
    /// A generic kernel: `name` is the method's name, each instance a PTX entry of its own, and
    /// parameter types name the type parameters (`Pointer { elem: "T" }`).
    pub generic: Option<Generic>,
    /// The PTX entry's name where it is not `name`: a C++ kernel's mangled name
    /// (`_ZN2ns5scaleEPdi` for method `scale`).
    pub ptx_name: Option<String>,
}

/// A kernel generic over types: a C++ template with explicit instantiations, or a Rust
/// `#[kernel]` function with its list of instances. It gets one launch method generic over
/// `type_params`, which compiles only for the instantiated types.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Generic {
    /// The type parameters as the source names them (`T`).
    pub type_params: Vec<String>,
    /// One per instantiation, in source order.
    pub instances: Vec<Instance>,
}

/// One instantiation of a [`Generic`] kernel.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Instance {
    /// The host types bound to the type parameters, in order, as Rust paths (`f32`,
    /// `::ptx_runtime::half::f16`).
    pub args: Vec<String>,
    /// The instance's PTX entry name (`_Z3addIfEvPT_PKS0_S3_i`, `add_f32`).
    pub ptx_name: String,
}

impl KernelSig {
    /// The PTX entries this kernel launches: its name, or one per instance of a generic kernel.
    pub fn ptx_names(&self) -> Vec<&str> {
        match &self.generic {
            Some(g) => g.instances.iter().map(|i| i.ptx_name.as_str()).collect(),
            None => vec![self.ptx_name.as_deref().unwrap_or(&self.name)],
        }
    }

    /// Each PTX entry's name and signature: a generic kernel's instances with their type
    /// arguments put in (named `add::<f32>` in messages), or the kernel itself.
    pub fn monomorphic(&self) -> Vec<(String, KernelSig)> {
        let Some(g) = &self.generic else { return vec![(self.ptx_names()[0].to_string(), self.clone())] };
        g.instances
            .iter()
            .map(|inst| {
                let bind = |ty: &str| g.type_params.iter().position(|t| t == ty).map(|i| inst.args[i].clone());
                let params = self
                    .params
                    .iter()
                    .map(|p| {
                        let ty = match &p.ty {
                            ParamType::Pointer { mutable, elem } => {
                                ParamType::Pointer { mutable: *mutable, elem: bind(elem).unwrap_or_else(|| elem.clone()) }
                            }
                            ParamType::ByValue { ty } => match bind(ty) {
                                Some(arg) => Scalar::from_name(&arg).map(ParamType::Scalar).unwrap_or(ParamType::ByValue { ty: arg }),
                                None => p.ty.clone(),
                            },
                            other => other.clone(),
                        };
                        Param { name: p.name.clone(), ty }
                    })
                    .collect();
                let name = format!("{}::<{}>", self.name, inst.args.join(", "));
                (inst.ptx_name.clone(), KernelSig { name, params, generic: None, ..self.clone() })
            })
            .collect()
    }
}

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

/// `extern "ptx-kernel"`, or `extern "gpu-kernel"` (feature `abi_gpu_kernel`, the ABI rustc's
/// std::offload uses; on nvptx64 it emits the same `.visible .entry`).
pub fn is_kernel_abi(abi: &str) -> bool {
    abi == "ptx-kernel" || abi == "gpu-kernel"
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
    Ok(Some(KernelSig { name, params, file: file.to_path_buf(), line, mangled: false, untyped: None, doc, generic, ptx_name: None }))
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
        out.push(Instance { args, ptx_name });
    }
    if out.is_empty() {
        return Err("`instances()` lists no type".into());
    }
    Ok(Some(Generic { type_params, instances: out }))
}

/// `instances(f32, f64)` or `instances((f32, u32), ..)`: each instance's types as written.
fn parse_instances(input: syn::parse::ParseStream) -> syn::Result<Vec<Vec<String>>> {
    let mut out = Vec::new();
    // `instances(..)` among the other arguments (`launch_bounds(..)`, `cluster_dims(..)`).
    while !input.is_empty() {
        let key: syn::Ident = input.parse()?;
        if key != "instances" && key != "launch_bounds" && key != "cluster_dims" {
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

/// The PTX name of a generic Rust kernel's instance, as ptx-device's `#[kernel]` exports it:
/// `{kernel}_{arg}_{arg}..`, each type with every run of characters other than ASCII letters,
/// digits and `_` made one `_`. The two implementations are tested against one table,
/// `ptx-device-macros/src/instance_names.txt` (a proc-macro crate cannot export a function).
pub fn instance_name(kernel: &str, args: &[String]) -> String {
    let mut name = kernel.to_string();
    for arg in args {
        name.push('_');
        let start = name.len();
        let mut last_sep = true;
        for c in arg.chars() {
            if c.is_ascii_alphanumeric() || c == '_' {
                name.push(c);
                last_sep = false;
            } else if !last_sep {
                name.push('_');
                last_sep = true;
            }
        }
        if name.len() > start && last_sep && name.ends_with('_') {
            name.pop();
        }
    }
    name
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

/// A token of C++ source as signatures need it: preprocessor lines, numbers and character
/// literals are dropped; string literals are kept (raw) for `extern "C"`.
#[derive(Clone, Copy, Debug, PartialEq)]
enum CTok<'a> {
    Ident(&'a str),
    Str(&'a str),
    Punct(char),
}

fn c_tokens(src: &str) -> Vec<(CTok<'_>, u32)> {
    let toks: Vec<(CTok<'_>, u32)> = c_lex::tokens(src)
        .into_iter()
        .filter(|t| !t.directive)
        .filter_map(|t| {
            let tok = match t.kind {
                Kind::Ident => CTok::Ident(t.text),
                Kind::Str => CTok::Str(t.literal_body()),
                Kind::Punct(c) => CTok::Punct(c as char),
                Kind::Number | Kind::Char => return None,
            };
            Some((tok, t.line))
        })
        .collect();
    // The preprocessor spells `__global__` as `__attribute__((global))`.
    const GLOBAL: [CTok<'static>; 6] =
        [CTok::Ident("__attribute__"), CTok::Punct('('), CTok::Punct('('), CTok::Ident("global"), CTok::Punct(')'), CTok::Punct(')')];
    let mut out = Vec::with_capacity(toks.len());
    let mut i = 0;
    while i < toks.len() {
        if toks.len() - i >= GLOBAL.len() && toks[i..i + GLOBAL.len()].iter().map(|t| t.0).eq(GLOBAL) {
            out.push((CTok::Ident("__global__"), toks[i].1));
            i += GLOBAL.len();
        } else if matches!(toks[i].0, CTok::Ident(w) if KERNEL_ATTRIBUTES.contains(&w))
            && toks.get(i + 1).is_some_and(|t| t.0 == CTok::Punct('('))
        {
            // `__launch_bounds__(256, 1)` between `void` and the name: not part of the signature.
            let mut depth = 0;
            i += 1;
            while i < toks.len() {
                match toks[i].0 {
                    CTok::Punct('(') => depth += 1,
                    CTok::Punct(')') => depth -= 1,
                    _ => {}
                }
                i += 1;
                if depth == 0 {
                    break;
                }
            }
        } else {
            out.push(toks[i]);
            i += 1;
        }
    }
    out
}

/// Kernel attributes CUDA code writes between the return type and the name
/// (`__global__ void __launch_bounds__(256) k(..)`), and what nvcc's preprocessor makes of them.
const KERNEL_ATTRIBUTES: &[&str] = &["__launch_bounds__", "__cluster_dims__", "__maxnreg__", "__attribute__"];

/// The launch type of a C type as text (`float const*`, `unsigned int`): how demangled C++
/// names are read.
pub(crate) fn c_type(text: &str) -> std::result::Result<ParamType, String> {
    let toks: Vec<CTok<'_>> = c_tokens(text).into_iter().map(|(t, _)| t).collect();
    if toks.is_empty() {
        return Err(format!("`{text}` is not a type"));
    }
    c_param(&toks, 0).map(|(_, ty)| ty)
}

/// The parameter names of the `template <...>` whose `<` is at `open`: `typename T`, `class U`
/// and non-type parameters (`int N`) alike, in order.
fn template_params(toks: &[(CTok<'_>, u32)], open: usize) -> Vec<String> {
    let mut names = Vec::new();
    // `in_default`: after `=` (`typename T = float`), where identifiers are not names.
    let (mut depth, mut last_ident, mut in_default) = (0i32, None, false);
    for (t, _) in &toks[open..] {
        match t {
            CTok::Punct('<') | CTok::Punct('(') => depth += 1,
            CTok::Punct('>') | CTok::Punct(')') => {
                depth -= 1;
                if depth == 0 {
                    names.extend(last_ident.take());
                    break;
                }
            }
            CTok::Punct(',') if depth == 1 => {
                names.extend(last_ident.take());
                in_default = false;
            }
            CTok::Punct('=') if depth == 1 => {
                names.extend(last_ident.take());
                in_default = true;
            }
            CTok::Ident(w) if depth == 1 && !in_default => last_ident = Some(w.to_string()),
            _ => {}
        }
    }
    names
}

/// Every `__global__` function of a .cu file, in source order (a declaration and its
/// definition count once).
pub fn cuda_kernels(cu: &Path) -> Result<Vec<KernelSig>> {
    let bytes = std::fs::read(cu).map_err(|e| Error::io("read", cu, e))?;
    cuda_kernels_in(cu, &String::from_utf8_lossy(&bytes))
}

/// The kernels of C++ source `src`. Linear in its length: files that stamp out hundreds of
/// kernels with macros (candle's) are common, and each token is looked at a bounded number of
/// times (the declaration's prefix is summarised as the scan passes, never rescanned).
pub(crate) fn cuda_kernels_in(file: &Path, src: &str) -> Result<Vec<KernelSig>> {
    let toks = c_tokens(src);
    let ident = |i: usize| match toks.get(i) {
        Some((CTok::Ident(s), _)) => Some(*s),
        _ => None,
    };
    let punct = |i: usize, c: char| matches!(toks.get(i), Some((CTok::Punct(p), _)) if *p == c);
    let mut out: Vec<KernelSig> = Vec::new();
    let mut seen_names = std::collections::HashSet::new();
    // For each open brace: does it open an `extern "C" {` block?
    let mut blocks: Vec<bool> = Vec::new();
    let mut extern_c_blocks = 0usize;
    let mut decl_start = 0;
    // The last `template` and the last `extern "C"` (index of `extern`) before `summarised`.
    let (mut last_template, mut last_extern_c, mut summarised) = (None, None, 0usize);
    let mut i = 0;
    while i < toks.len() {
        match &toks[i].0 {
            CTok::Punct('{') => {
                let extern_c = i >= 2 && ident(i - 2) == Some("extern") && toks[i - 1].0 == CTok::Str("C");
                blocks.push(extern_c);
                extern_c_blocks += usize::from(extern_c);
                decl_start = i + 1;
            }
            CTok::Punct('}') => {
                extern_c_blocks -= usize::from(blocks.pop().unwrap_or(false));
                decl_start = i + 1;
            }
            CTok::Punct(';') => decl_start = i + 1,
            CTok::Ident("__global__") => {
                // The declaration so far (`extern "C"`, `template <..>`) is toks[decl_start..i].
                while summarised < i {
                    match toks[summarised].0 {
                        CTok::Ident("template") => last_template = Some(summarised),
                        CTok::Ident("extern") if summarised + 1 < i && toks[summarised + 1].0 == CTok::Str("C") => {
                            last_extern_c = Some(summarised)
                        }
                        _ => {}
                    }
                    summarised += 1;
                }
                let templated = last_template.is_some_and(|t| t >= decl_start);
                let extern_c = extern_c_blocks > 0 || last_extern_c.is_some_and(|e| e >= decl_start);
                // The name: the identifier before the first `(` at this level.
                let mut j = i + 1;
                while j < toks.len() && !punct(j, '(') && !punct(j, ';') && !punct(j, '{') {
                    j += 1;
                }
                let Some(name) = ident(j.wrapping_sub(1)).filter(|_| punct(j, '(')) else {
                    i = j;
                    continue;
                };
                let name = name.to_string();
                let line = toks[j - 1].1;
                // Parameters up to the matching `)`.
                let mut depth = 0;
                let mut k = j;
                let mut params: Vec<Vec<CTok>> = vec![Vec::new()];
                while k < toks.len() {
                    match &toks[k].0 {
                        CTok::Punct('(') => {
                            depth += 1;
                            if depth == 1 {
                                k += 1;
                                continue;
                            }
                        }
                        CTok::Punct(')') => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        CTok::Punct(',') if depth == 1 => {
                            params.push(Vec::new());
                            k += 1;
                            continue;
                        }
                        _ => {}
                    }
                    params.last_mut().expect("non-empty").push(toks[k].0);
                    k += 1;
                }
                let params: Vec<Vec<CTok>> = params.into_iter().filter(|p| !p.is_empty() && *p != [CTok::Ident("void")]).collect();
                let mut sig = KernelSig {
                    name: name.clone(),
                    params: Vec::new(),
                    file: file.to_path_buf(),
                    line,
                    mangled: !extern_c || templated,
                    untyped: None,
                    doc: Vec::new(),
                    generic: None,
                    ptx_name: None,
                };
                // A parameter that cannot be typed leaves the kernel untyped, not the build
                // refused: it is embedded and launched through cudarc's builder.
                for (n, p) in params.iter().enumerate() {
                    match c_param(p, n) {
                        Ok((pname, ty)) => sig.params.push(Param { name: pname, ty }),
                        Err(message) => {
                            sig.params.clear();
                            sig.untyped = Some(message);
                            break;
                        }
                    }
                }
                if templated {
                    let params = last_template.map(|t| template_params(&toks, t + 1)).unwrap_or_default();
                    sig.generic = Some(Generic { type_params: params, instances: Vec::new() });
                }
                // A declaration and its definition count once; C++ overloads (same name, other
                // parameters) are kernels of their own.
                if seen_names.insert((name, format!("{:?}{:?}", sig.params, sig.untyped))) {
                    out.push(sig);
                }
                i = k;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    Ok(out)
}

/// The preprocessor's line markers (`# 12 "cuda/k.cu" 2`) of a translation unit: (line in
/// `text` of the first line the marker describes, file, its line number there, whether it is a
/// system header).
fn line_markers(text: &str) -> Vec<(u32, &str, u32, bool)> {
    let mut markers = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let Some(rest) = line.strip_prefix("# ") else { continue };
        let Some((number, rest)) = rest.split_once(' ') else { continue };
        let (Ok(number), Some(rest)) = (number.parse::<u32>(), rest.strip_prefix('"')) else { continue };
        let Some((file, flags)) = rest.split_once('"') else { continue };
        markers.push((i as u32 + 2, file, number, flags.split_whitespace().any(|f| f == "3")));
    }
    markers
}

/// The files a translation unit was read from, as its line markers name them, in order of
/// first appearance: what `-MMD` would list (system headers and `<built-in>` left out).
pub(crate) fn user_files(text: &str) -> Vec<PathBuf> {
    let mut seen = std::collections::HashSet::new();
    line_markers(text)
        .into_iter()
        .filter(|(_, file, _, system)| !system && !file.starts_with('<'))
        .filter(|(_, file, _, _)| seen.insert(*file))
        .map(|(_, file, _, _)| PathBuf::from(file))
        .collect()
}

/// The kernels of a preprocessed translation unit (`nvcc -E`), at the file and line the
/// preprocessor's line markers (`# 12 "cuda/k.cu"`) give: for a kernel a macro stamped out, the
/// line of the macro's use. Files are relative to `dir` (where nvcc ran); kernels of system
/// headers are left out.
pub fn cuda_kernels_preprocessed(text: &str, dir: &Path) -> Result<Vec<KernelSig>> {
    let markers = line_markers(text);
    let mut out = Vec::new();
    for mut sig in cuda_kernels_in(Path::new(""), text)? {
        let at = markers.partition_point(|m| m.0 <= sig.line);
        let Some(&(start, file, number, system)) = at.checked_sub(1).map(|i| &markers[i]) else { continue };
        if system {
            continue;
        }
        sig.file = dir.join(file);
        sig.line = number + (sig.line - start);
        out.push(sig);
    }
    Ok(out)
}

/// The Rust type of a C scalar type, spelled as its words (`unsigned long long`).
fn c_scalar(words: &[&str]) -> Option<ParamType> {
    let words: Vec<&str> = words.iter().copied().filter(|w| !matches!(*w, "const" | "volatile" | "struct" | "signed")).collect();
    let unsigned = words.contains(&"unsigned");
    let rest: Vec<&str> = words.iter().copied().filter(|w| *w != "unsigned" && *w != "int").collect();
    let has_int = words.contains(&"int");
    let scalar = |s| Some(ParamType::Scalar(s));
    let by_value = |t: &str| Some(ParamType::ByValue { ty: t.to_string() });
    match (unsigned, rest.as_slice()) {
        (false, []) if has_int => scalar(Scalar::I32),
        (true, []) => scalar(Scalar::U32),
        (false, ["long", "long"]) | (false, ["long"]) => scalar(Scalar::I64),
        (true, ["long", "long"]) | (true, ["long"]) => scalar(Scalar::U64),
        (false, ["short"]) => scalar(Scalar::I16),
        (true, ["short"]) => scalar(Scalar::U16),
        (false, ["char"]) => scalar(Scalar::I8),
        (true, ["char"]) => scalar(Scalar::U8),
        (false, ["bool"]) => scalar(Scalar::Bool),
        (false, ["float"]) => scalar(Scalar::F32),
        (false, ["double"]) => scalar(Scalar::F64),
        (false, ["size_t"]) => scalar(Scalar::Usize),
        (false, ["ptrdiff_t"]) => scalar(Scalar::Isize),
        (false, ["int8_t"]) => scalar(Scalar::I8),
        (false, ["uint8_t"]) => scalar(Scalar::U8),
        (false, ["int16_t"]) => scalar(Scalar::I16),
        (false, ["uint16_t"]) => scalar(Scalar::U16),
        (false, ["int32_t"]) => scalar(Scalar::I32),
        (false, ["uint32_t"]) => scalar(Scalar::U32),
        (false, ["int64_t"]) => scalar(Scalar::I64),
        (false, ["uint64_t"]) => scalar(Scalar::U64),
        (false, ["__half"]) | (false, ["half"]) => by_value("::ptx_runtime::half::f16"),
        (false, ["__nv_bfloat16"]) | (false, ["nv_bfloat16"]) => by_value("::ptx_runtime::half::bf16"),
        (false, ["__half2"]) | (false, ["half2"]) => by_value("::ptx_runtime::cuda_types::Half2"),
        (false, ["__nv_bfloat162"]) | (false, ["nv_bfloat162"]) => by_value("::ptx_runtime::cuda_types::Bf16x2"),
        (false, ["__nv_fp8_e4m3"]) => by_value("::ptx_runtime::cuda_types::Fp8E4M3"),
        (false, ["__nv_fp8_e5m2"]) => by_value("::ptx_runtime::cuda_types::Fp8E5M2"),
        // TMA's tensor map (`const CUtensorMap *`, or `__grid_constant__ const CUtensorMap`).
        (false, ["CUtensorMap"]) | (false, ["CUtensorMap_st"]) => by_value("::ptx_runtime::TensorMap"),
        _ => None,
    }
}

const C_TYPE_WORDS: &[&str] =
    &["const", "volatile", "unsigned", "signed", "int", "long", "short", "char", "bool", "float", "double", "void", "struct"];

/// One C parameter (`const float *__restrict__ x`) as a name and a launch type.
fn c_param(toks: &[CTok<'_>], index: usize) -> std::result::Result<(String, ParamType), String> {
    let text = toks
        .iter()
        .map(|t| match t {
            CTok::Ident(s) => s.to_string(),
            CTok::Str(s) => format!("\"{s}\""),
            CTok::Punct(c) => c.to_string(),
        })
        .collect::<Vec<_>>()
        .join(" ");
    let toks: Vec<&CTok> =
        toks.iter().filter(|t| !matches!(t, CTok::Ident(w) if w.starts_with("__restrict") || *w == "restrict")).collect();
    if toks.iter().any(|t| matches!(t, CTok::Punct('&'))) {
        return Err(format!("parameter `{text}`: a kernel cannot take a reference; take a pointer to device memory"));
    }
    if toks.iter().any(|t| matches!(t, CTok::Punct('[') | CTok::Punct('<') | CTok::Punct(':'))) {
        return Err(format!("parameter `{text}`: arrays, templates and qualified types cannot be launched with typed arguments; use a pointer, a scalar or a plain struct"));
    }
    let stars = toks.iter().filter(|t| matches!(t, CTok::Punct('*'))).count();
    let first_star = toks.iter().position(|t| matches!(t, CTok::Punct('*'))).unwrap_or(toks.len());
    let idents: Vec<&str> = toks
        .iter()
        .filter_map(|t| match t {
            CTok::Ident(s) => Some(*s),
            _ => None,
        })
        .collect();
    // The last identifier is the name when something stands before it that is not a type word
    // (`int n`, `float *x`, `Pair p`), else the parameter is unnamed (`int`, `float *`).
    let last_is_name = match toks.last() {
        Some(CTok::Ident(w)) => stars > 0 && toks.len() - 1 > first_star || (idents.len() >= 2 && !C_TYPE_WORDS.contains(w)),
        _ => false,
    };
    let (name, type_words): (String, Vec<&str>) = if last_is_name {
        (idents[idents.len() - 1].to_string(), idents[..idents.len() - 1].to_vec())
    } else {
        (format!("arg{index}"), idents.clone())
    };
    let before_star: Vec<&str> = toks[..first_star]
        .iter()
        .filter_map(|t| match t {
            CTok::Ident(s) => Some(*s),
            _ => None,
        })
        .collect();
    let base: Vec<&str> = type_words.iter().copied().filter(|w| before_star.contains(w)).collect();
    let base_ty = || -> std::result::Result<String, String> {
        if base.contains(&"void") {
            return Err(format!(
                "parameter `{text}`: `void *` has no element type for a typed launch; use the element's type (e.g. `float *`)"
            ));
        }
        match c_scalar(&base) {
            Some(ParamType::Scalar(s)) => Ok(s.rust_name().to_string()),
            Some(ParamType::ByValue { ty }) => Ok(ty),
            _ => {
                let words: Vec<&str> = base.iter().copied().filter(|w| !matches!(*w, "const" | "volatile" | "struct")).collect();
                match words.as_slice() {
                    [one] if !C_TYPE_WORDS.contains(one) => Ok(one.to_string()),
                    _ => Err(format!("parameter `{text}`: `{}` has no Rust equivalent here; use a fixed-size type such as int, unsigned, long long, float or a struct", words.join(" "))),
                }
            }
        }
    };
    let ty = match stars {
        0 => match c_scalar(&base) {
            Some(t) => t,
            None => ParamType::ByValue { ty: base_ty()? },
        },
        1 => ParamType::Pointer { mutable: !before_star.contains(&"const"), elem: base_ty()? },
        _ => {
            return Err(format!(
                "parameter `{text}`: pointers to pointers cannot be launched with typed arguments; pass a `u64` device address instead"
            ))
        }
    };
    Ok((name, ty))
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
        // Scalars and pointers are naturally aligned on both sides; a by-value struct's size and
        // alignment are asserted in the generated code, where its host type is known.
        if e.align != expected {
            return Err(err(format!(
                "parameter `{}` is aligned to {} bytes in the source and to {} bytes in the PTX (`.align {}`)",
                p.name, expected, e.align, e.align
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
    fn kernels_of_a_preprocessed_unit_are_at_the_line_of_the_macro_use() {
        // What `nvcc -E` makes of it: line markers, `__attribute__((global))`, a system header.
        let ii = "# 1 \"cuda/k.cu\"\n# 1 \"/usr/include/stdint.h\" 1 3 4\nextern \"C\" __attribute__((global)) void sys(int *p) {}\n# 2 \"cuda/k.cu\" 2\n\n\nextern \"C\" __attribute__((global)) void a(const float *x, float *y) {}\nextern \"C\" __attribute__((global)) void b(const double *x, double *y) {}\n";
        let sigs = cuda_kernels_preprocessed(ii, Path::new("/pkg")).unwrap();
        let at: Vec<(String, String, u32)> = sigs.iter().map(|s| (s.name.clone(), s.file.display().to_string(), s.line)).collect();
        assert_eq!(at, [("a".to_string(), "/pkg/cuda/k.cu".to_string(), 4), ("b".to_string(), "/pkg/cuda/k.cu".to_string(), 5)]);
        assert_eq!(sigs[1].params[0].ty, ParamType::Pointer { mutable: false, elem: "f64".into() });
        // The files it was read from, as `-MMD` lists them.
        assert_eq!(user_files(ii), [PathBuf::from("cuda/k.cu")]);
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
    fn ptx_device_half_types_and_tensor_maps_are_the_hosts() {
        let src = "use ptx_device::half::{f16, bf16};\n#[kernel(launch_bounds(256), instances(f16, f32))]\npub unsafe fn g<T>(x: *const T) {}\n#[kernel(cluster_dims(2))]\npub unsafe fn k(a: f16, b: *const bf16, c: *mut ptx_device::half::f16x2, d: bf16x2, t: *const TensorMap, e: *mut my::f16) {}\n";
        let k = rust_kernels_in_text(Path::new("lib.rs"), src).unwrap();
        let g = k[0].generic.as_ref().unwrap();
        assert_eq!(g.instances[0].args, ["::ptx_runtime::half::f16"]);
        assert_eq!(g.instances[0].ptx_name, "g_f16");
        let tys: Vec<&ParamType> = k[1].params.iter().map(|p| &p.ty).collect();
        assert_eq!(
            tys,
            [
                &ParamType::ByValue { ty: "::ptx_runtime::half::f16".into() },
                &ParamType::Pointer { mutable: false, elem: "::ptx_runtime::half::bf16".into() },
                &ParamType::Pointer { mutable: true, elem: "::ptx_runtime::cuda_types::Half2".into() },
                &ParamType::ByValue { ty: "::ptx_runtime::cuda_types::Bf16x2".into() },
                &ParamType::Pointer { mutable: false, elem: "::ptx_runtime::TensorMap".into() },
                // Another crate's `f16` is that crate's.
                &ParamType::Pointer { mutable: true, elem: "my::f16".into() },
            ]
        );
        let c = cuda_kernels_in(Path::new("t.cu"), "extern \"C\" __global__ void tma(const CUtensorMap* a) {}").unwrap();
        assert_eq!(c[0].params[0].ty, ParamType::Pointer { mutable: false, elem: "::ptx_runtime::TensorMap".into() });
        // Launch bounds and cluster dims between the return type and the name (CUTLASS, llm.c).
        let src = "extern \"C\" __global__ void __launch_bounds__(384, 1) __cluster_dims__(2, 1, 1) k(int n) {}\nextern \"C\" __attribute__((global)) void __attribute__((launch_bounds(256))) pp(float *x) {}";
        let c = cuda_kernels_in(Path::new("t.cu"), src).unwrap();
        assert_eq!(c.iter().map(|k| (k.name.as_str(), k.params.len())).collect::<Vec<_>>(), [("k", 1), ("pp", 1)]);
    }

    #[test]
    fn a_generic_kernel_is_one_signature_with_its_instances() {
        let src = "use ptx_device::kernel;\n/// Adds.\n#[kernel(instances(f32, f64))]\npub unsafe fn add<T: Copy + core::ops::Add<Output = T>>(n: u32, x: *const T, y: *mut T, s: T) {}\n#[ptx_device::kernel(instances((f32, u32), (crate::Pair, *const u8),))]\npub unsafe fn cast<A, B>(x: *const A, y: *mut B) where A: Copy {}\n#[kernel]\npub unsafe fn plain(x: *mut f32) {}\n";
        let k = rust_kernels_in_text(Path::new("lib.rs"), src).unwrap();
        assert_eq!(k.iter().map(|k| (k.name.as_str(), k.line)).collect::<Vec<_>>(), [("add", 4), ("cast", 6), ("plain", 8)]);
        let inst =
            |args: &[&str], ptx_name: &str| Instance { args: args.iter().map(|a| a.to_string()).collect(), ptx_name: ptx_name.into() };
        assert_eq!(
            k[0].generic,
            Some(Generic { type_params: vec!["T".into()], instances: vec![inst(&["f32"], "add_f32"), inst(&["f64"], "add_f64")] })
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
                instances: vec![inst(&["f32", "u32"], "cast_f32_u32"), inst(&["crate::Pair", "*const u8"], "cast_crate_Pair_const_u8")]
            })
        );
        assert_eq!(k[2].generic, None);
    }

    #[test]
    fn instance_names_are_the_ones_the_kernel_macro_exports() {
        // The macro crate tests its own naming against this table (a proc-macro crate cannot
        // export a function ptx-build could call).
        let table = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../ptx-device-macros/src/instance_names.txt"))
            .expect("the shared naming table");
        let mut rows = 0;
        for line in table.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
            let (lhs, expected) = line.split_once(" => ").unwrap();
            let (kernel, args) = lhs.split_once(": ").unwrap();
            let args: Vec<String> = args.split(" | ").map(String::from).collect();
            assert_eq!(instance_name(kernel, &args), expected, "{line}");
            // Through the reader, from the attribute as a user writes it.
            let list = if args.len() == 1 { args[0].clone() } else { format!("({})", args.join(", ")) };
            let params: Vec<String> = (0..args.len()).map(|i| format!("T{i}")).collect();
            let src = format!("#[kernel(instances({list}))]\npub unsafe fn {kernel}<{}>(n: u32) {{}}\n", params.join(", "));
            let k = rust_kernels_in_text(Path::new("lib.rs"), &src).unwrap();
            assert_eq!(k[0].generic.as_ref().unwrap().instances[0].ptx_name, expected, "{line}");
            rows += 1;
        }
        assert!(rows >= 5);
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

    #[test]
    fn cuda_vendor_types_map_to_ptx_runtime_host_types() {
        let src = "extern \"C\" __global__ void v(__nv_fp8_e4m3 a, __nv_fp8_e5m2 b, __half2 h, __nv_bfloat162 g, const __half2 *hs, __nv_fp8_e4m3 *out) {}";
        let k = cuda_kernels_in(Path::new("k.cu"), src).unwrap();
        assert_eq!(k[0].untyped, None);
        let tys: Vec<String> = k[0]
            .params
            .iter()
            .map(|p| match &p.ty {
                ParamType::ByValue { ty } => ty.clone(),
                ParamType::Pointer { mutable, elem } => format!("{}{elem}", if *mutable { "*mut " } else { "*const " }),
                ParamType::Scalar(s) => s.rust_name().into(),
            })
            .collect();
        assert_eq!(
            tys,
            [
                "::ptx_runtime::cuda_types::Fp8E4M3",
                "::ptx_runtime::cuda_types::Fp8E5M2",
                "::ptx_runtime::cuda_types::Half2",
                "::ptx_runtime::cuda_types::Bf16x2",
                "*const ::ptx_runtime::cuda_types::Half2",
                "*mut ::ptx_runtime::cuda_types::Fp8E4M3"
            ]
        );
    }

    #[test]
    fn reads_extern_c_global_functions() {
        let src = r#"#include "common.cuh"
#define N 4 /* a comment with __global__ f(int) */
extern "C" __global__ void saxpy(int n, float a, const float *__restrict__ x, float *y) {}
extern "C" {
__global__ void halves(const __half *in, __nv_bfloat16 *out, size_t n, unsigned m, long long k, unsigned long long u) {}
__global__ void by_value(Pair p, const Pair *ps, unsigned int) ;
}
__global__ void cpp_kernel(float *x) {}
template <typename T> __global__ void tmpl(T *x) {}
"#;
        let k = cuda_kernels_in(Path::new("cuda/k.cu"), src).unwrap();
        let names: Vec<&str> = k.iter().map(|k| k.name.as_str()).collect();
        assert_eq!(names, ["saxpy", "halves", "by_value", "cpp_kernel", "tmpl"]);
        assert_eq!(k[0].line, 3);
        assert_eq!(
            k[0].params.iter().map(|p| (p.name.as_str(), p.ty.clone())).collect::<Vec<_>>(),
            vec![
                ("n", ParamType::Scalar(Scalar::I32)),
                ("a", ParamType::Scalar(Scalar::F32)),
                ("x", ParamType::Pointer { mutable: false, elem: "f32".into() }),
                ("y", ParamType::Pointer { mutable: true, elem: "f32".into() }),
            ]
        );
        assert_eq!(
            k[1].params.iter().map(|p| p.ty.clone()).collect::<Vec<_>>(),
            vec![
                ParamType::Pointer { mutable: false, elem: "::ptx_runtime::half::f16".into() },
                ParamType::Pointer { mutable: true, elem: "::ptx_runtime::half::bf16".into() },
                ParamType::Scalar(Scalar::Usize),
                ParamType::Scalar(Scalar::U32),
                ParamType::Scalar(Scalar::I64),
                ParamType::Scalar(Scalar::U64),
            ]
        );
        assert_eq!(k[2].params[0].ty, ParamType::ByValue { ty: "Pair".into() });
        assert_eq!(k[2].params[1].ty, ParamType::Pointer { mutable: false, elem: "Pair".into() });
        assert_eq!((k[2].params[2].name.as_str(), &k[2].params[2].ty), ("arg2", &ParamType::Scalar(Scalar::U32)));
        assert!(!k[0].mangled && !k[1].mangled && !k[2].mangled);
        assert!(k[3].mangled && k[4].mangled, "no extern \"C\": the PTX name is mangled");
    }

    /// Linear in the input: 50,000 declarations without `;` (1.6 MB, one declaration that
    /// never ends) read in well under a second. The quadratic reader took 25 s for 5,000, so it
    /// would need about 40 minutes here: a regression shows as a test that hangs.
    #[test]
    fn many_kernels_without_semicolons_read_in_linear_time() {
        let n = 50_000;
        let src: String = (0..n).map(|i| format!("extern \"C\" __global__ void f{i}()\n")).collect();
        let k = cuda_kernels_in(Path::new("big.cu"), &src).unwrap();
        assert_eq!(k.len(), n);
        assert_eq!((k[n - 1].name.as_str(), k[n - 1].line, k[n - 1].mangled), ("f49999", n as u32, false));
        // The same name again and again: one kernel.
        let same = "extern \"C\" __global__ void f()\n".repeat(n);
        assert_eq!(cuda_kernels_in(Path::new("same.cu"), &same).unwrap().len(), 1);
    }

    #[test]
    fn c_parameters_without_a_launch_type_leave_the_kernel_untyped_with_the_reason() {
        let untyped = |src: &str| {
            let k = cuda_kernels_in(Path::new("cuda/k.cu"), src).unwrap();
            assert!(k[0].params.is_empty());
            k[0].untyped.clone().expect("untyped")
        };
        assert!(untyped("extern \"C\" __global__ void k(\n float **pp) {}\n").contains("pointers to pointers"));
        assert!(untyped("extern \"C\" __global__ void k(void *p) {}").contains("`void *` has no element type"));
        assert!(untyped("extern \"C\" __global__ void k(int n, long double x) {}").contains("`long double` has no Rust equivalent"));
        // The other kernels of the file keep their types.
        let k =
            cuda_kernels_in(Path::new("k.cu"), "extern \"C\" __global__ void a(void *p) {}\nextern \"C\" __global__ void b(float *x) {}")
                .unwrap();
        assert_eq!((k[0].untyped.is_some(), k[1].untyped.is_none(), k[1].params.len()), (true, true, 1));
    }

    #[test]
    fn a_signature_that_disagrees_with_the_ptx_is_caught() {
        let sig = KernelSig {
            name: "k".into(),
            params: vec![Param { name: "n".into(), ty: ParamType::Scalar(Scalar::U64) }],
            file: "src/lib.rs".into(),
            line: 3,
            untyped: None,
            mangled: false,
            doc: Vec::new(),
            generic: None,
            ptx_name: None,
        };
        let m = ptx::Module::parse(".visible .entry k(\n.param .u32 k_param_0\n)\n{\nret;\n}\n");
        let e = check(&sig, m.entry("k")).unwrap_err().to_string();
        assert!(e.contains("kernel `k`") && e.contains("parameter `n` is 8 bytes in the source and 4 bytes in the PTX"), "{e}");
        let m = ptx::Module::parse(".visible .entry k(\n.param .u64 k_param_0,\n.param .u64 k_param_1\n)\n{\nret;\n}\n");
        assert!(check(&sig, m.entry("k")).unwrap_err().to_string().contains("the source has 1 parameters, the PTX entry 2"));
        assert!(check(&sig, None).unwrap_err().to_string().contains("no `.entry` of that name"));
        let m = ptx::Module::parse(".visible .entry k(\n.param .align 4 .b8 k_param_0[8]\n)\n{\nret;\n}\n");
        let e = check(&sig, m.entry("k")).unwrap_err().to_string();
        assert!(e.contains("parameter `n` is aligned to 8 bytes in the source and to 4 bytes in the PTX"), "{e}");
        let m = ptx::Module::parse(".visible .entry k(\n.param .u64 k_param_0\n)\n{\nret;\n}\n");
        assert!(check(&sig, m.entry("k")).is_ok());
        let m = ptx::Module::parse(".visible .entry k(\n.param .u64 .ptr .align 1 k_param_0\n)\n{\nret;\n}\n");
        assert!(check(&sig, m.entry("k")).is_ok(), "`.ptr .align` is the pointee's alignment");
    }
}
