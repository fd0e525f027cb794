//! `#[kernel]`: the exported `extern "ptx-kernel"` function, generic kernels' instances, and the
//! checks of what may cross from the host.

use proc_macro2::{Span, TokenStream};
use quote::{quote, ToTokens};
use syn::spanned::Spanned;

use crate::error;
use crate::kernel_attrs::KernelAttrs;

pub(crate) fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let args: KernelArgs = match syn::parse2(attr) {
        Ok(a) => a,
        Err(e) => return e.to_compile_error(),
    };
    let f: syn::ItemFn = match syn::parse2(item) {
        Ok(f) => f,
        Err(e) => return syn::Error::new(e.span(), "#[kernel] applies to a function: `pub unsafe fn name(..) { .. }`").to_compile_error(),
    };
    let mut errors = kernel_errors(&f);
    let instances = instances(&f, &args, &mut errors);
    if !errors.is_empty() {
        let mut out: TokenStream = errors.into_iter().map(|(span, message)| error(span, message)).collect();
        // The function stays, as a plain `unsafe fn`: dropped, its imports would be "unused"
        // and its callers "not found", errors about nothing the user did. A receiver cannot
        // stay on a free function.
        // Nor can a `_` type: rustc would add its own error about it.
        let kept = f.sig.inputs.iter().all(|a| match a {
            syn::FnArg::Receiver(_) => false,
            syn::FnArg::Typed(t) => !matches!(*t.ty, syn::Type::Infer(_)),
        });
        if kept {
            let mut plain = f;
            plain.sig.unsafety = Some(Default::default());
            plain.sig.abi = None;
            plain.sig.constness = None;
            plain.sig.asyncness = None;
            out.extend(quote! { #[allow(dead_code, unused_unsafe)] #plain });
        }
        return out;
    }
    if instances.is_empty() {
        let syn::ItemFn { attrs, vis, sig, block } = f;
        let name = &sig.ident;
        let inputs = &sig.inputs;
        // The attributes' marker, for each exported kernel (a generic kernel's instances).
        let marker = args.attrs.marker(&name.to_string());
        return quote! {
            ::ptx_device::__kernel! { [#(#attrs)*] [#vis] #name [#inputs] #block }
            #marker
        };
    }
    expand_generic(&f, &instances, &args.attrs)
}

/// A generic kernel: the function as written (an ordinary generic function the crate may call
/// too), and one exported kernel per instance whose body calls it with the instance's types.
fn expand_generic(f: &syn::ItemFn, instances: &[KernelInstance], attrs: &KernelAttrs) -> TokenStream {
    let name = &f.sig.ident;
    let vis = &f.vis;
    // Parameters by name: the wrappers forward them; patterns other than a name are refused
    // before this, `_` gets a name of its own.
    let names: Vec<syn::Ident> = f
        .sig
        .inputs
        .iter()
        .enumerate()
        .map(|(i, input)| match input {
            syn::FnArg::Typed(pt) => match &*pt.pat {
                syn::Pat::Ident(id) => id.ident.clone(),
                _ => syn::Ident::new(&format!("__arg{i}"), pt.pat.span()),
            },
            syn::FnArg::Receiver(r) => syn::Ident::new("__self", r.span()),
        })
        .collect();
    let mut out = f.to_token_stream();
    for inst in instances {
        let kernel = syn::Ident::new(&inst.ptx_name, name.span());
        let params = f.sig.inputs.iter().zip(&names).map(|(input, pname)| {
            let ty = match input {
                syn::FnArg::Typed(pt) => inst.substitute(&f.sig.generics, &pt.ty),
                syn::FnArg::Receiver(_) => syn::parse_quote!(()),
            };
            quote! { #pname: #ty }
        });
        let args = &inst.args;
        let doc = format!(" `{name}` for `{}`: the kernel exported as `{}`.", inst.text, inst.ptx_name);
        out.extend(attrs.marker(&inst.ptx_name));
        out.extend(quote! {
            ::ptx_device::__kernel! {
                [#[doc = #doc]] [#vis] #kernel [#(#params),*] {
                    // `unsafe` for editions where an unsafe call needs it in an unsafe fn too.
                    unsafe { #name::<#(#args),*>(#(#names),*) }
                }
            }
        });
    }
    out
}

/// What `#[kernel(..)]` takes: nothing, `instances(..)` for a generic kernel, and CUDA's
/// `__launch_bounds__`/`__maxnreg__`/`__cluster_dims__` as `launch_bounds(..)`,
/// `max_registers(..)` and `cluster_dims(..)`.
struct KernelArgs {
    instances: Option<InstanceList>,
    attrs: KernelAttrs,
}

/// `instances(f32, f64)` or `instances((f32, u32), (f64, u64))`.
struct InstanceList {
    span: Span,
    list: Vec<InstanceArgs>,
}

/// One entry of `instances(..)`: a type, or a parenthesized list of types, one per type
/// parameter. (A tuple is never a kernel type, so parentheses always mean a list.)
struct InstanceArgs {
    span: Span,
    types: Vec<syn::Type>,
}

const INSTANCES_HELP: &str =
    "as in `#[kernel(instances(f32, f64))]`, or for two type parameters `#[kernel(instances((f32, u32), (f64, u64)))]`";

const ARGS_HELP: &str = "#[kernel] takes `instances(..)` (the types a generic kernel is exported for), `launch_bounds(..)`, `max_registers(..)` and `cluster_dims(..)`";

impl syn::parse::Parse for KernelArgs {
    fn parse(input: syn::parse::ParseStream) -> syn::Result<Self> {
        let mut args = KernelArgs { instances: None, attrs: KernelAttrs::default() };
        while !input.is_empty() {
            let key: syn::Ident = input.parse().map_err(|e| syn::Error::new(e.span(), format!("{ARGS_HELP}, {INSTANCES_HELP}")))?;
            if key == "launch_bounds" {
                args.attrs.parse_launch_bounds(&key, input)?;
            } else if key == "max_registers" {
                args.attrs.parse_max_registers(&key, input)?;
            } else if key == "cluster_dims" {
                args.attrs.parse_cluster_dims(&key, input)?;
            } else if key == "instances" {
                if args.instances.is_some() {
                    return Err(syn::Error::new(key.span(), format!("#[kernel] takes one `instances(..)`, {INSTANCES_HELP}")));
                }
                let content;
                let paren = syn::parenthesized!(content in input);
                let list = syn::punctuated::Punctuated::<InstanceArgs, syn::Token![,]>::parse_terminated(&content)?;
                args.instances = Some(InstanceList {
                    span: key.span().join(paren.span.close()).unwrap_or(key.span()),
                    list: list.into_iter().collect(),
                });
            } else {
                return Err(syn::Error::new(key.span(), format!("{ARGS_HELP}, not `{key}`; {INSTANCES_HELP}")));
            }
            if !input.is_empty() {
                input
                    .parse::<syn::Token![,]>()
                    .map_err(|e| syn::Error::new(e.span(), format!("separate the arguments of #[kernel] with commas: {ARGS_HELP}")))?;
            }
        }
        Ok(args)
    }
}

impl syn::parse::Parse for InstanceArgs {
    fn parse(input: syn::parse::ParseStream) -> syn::Result<Self> {
        let not_a_type = |e: syn::Error| syn::Error::new(e.span(), format!("expected a type in `instances(..)`, {INSTANCES_HELP}"));
        if input.peek(syn::token::Paren) {
            let content;
            let paren = syn::parenthesized!(content in input);
            let types = syn::punctuated::Punctuated::<syn::Type, syn::Token![,]>::parse_terminated(&content).map_err(not_a_type)?;
            return Ok(InstanceArgs { span: paren.span.join(), types: types.into_iter().collect() });
        }
        let ty: syn::Type = input.parse().map_err(not_a_type)?;
        Ok(InstanceArgs { span: ty.span(), types: vec![ty] })
    }
}

/// One instance of a generic kernel, checked.
struct KernelInstance {
    args: Vec<syn::Type>,
    /// As written, for messages and docs (`f32`, `(f32, u32)`).
    text: String,
    /// The exported kernel's name: [`instance_name`].
    ptx_name: String,
}

impl KernelInstance {
    /// `ty` with the kernel's type parameters replaced by this instance's types.
    fn substitute(&self, generics: &syn::Generics, ty: &syn::Type) -> syn::Type {
        let params: Vec<&syn::Ident> = generics.type_params().map(|p| &p.ident).collect();
        let mut ty = ty.clone();
        syn::visit_mut::VisitMut::visit_type_mut(&mut Substitute { params: &params, args: &self.args }, &mut ty);
        ty
    }
}

struct Substitute<'a> {
    params: &'a [&'a syn::Ident],
    args: &'a [syn::Type],
}

impl syn::visit_mut::VisitMut for Substitute<'_> {
    fn visit_type_mut(&mut self, ty: &mut syn::Type) {
        if let syn::Type::Path(p) = ty {
            let first = p.path.segments.first().filter(|s| s.arguments.is_empty() && p.qself.is_none() && p.path.leading_colon.is_none());
            if let Some(i) = first.and_then(|s| self.params.iter().position(|t| **t == s.ident)) {
                let arg = self.args[i].clone();
                if p.path.segments.len() == 1 {
                    *ty = arg;
                } else {
                    // `T::Elem` -> `<f32>::Elem`.
                    let rest: Vec<_> = p.path.segments.iter().skip(1).cloned().collect();
                    *ty = syn::parse_quote!(<#arg>::#(#rest)::*);
                }
                return;
            }
        }
        syn::visit_mut::visit_type_mut(self, ty);
    }
}

/// The name a generic kernel's instance is exported under: `{kernel}_{arg}_{arg}..`, each type
/// argument written with every run of characters other than ASCII letters, digits and `_` made
/// one `_` (`f32` -> `f32`, `crate::Pair` -> `crate_Pair`, `[f32; 4]` -> `f32_4`). ptx-build
/// computes the same names to find the instances in the PTX: the table in
/// `instance_names.txt` is tested against both.
fn instance_name(kernel: &str, args: &[String]) -> String {
    let mut name = kernel.to_string();
    for arg in args {
        name.push('_');
        let mut last_sep = true;
        let start = name.len();
        for c in arg.chars() {
            if c.is_ascii_alphanumeric() || c == '_' {
                name.push(c);
                last_sep = false;
            } else if !last_sep {
                name.push('_');
                last_sep = true;
            }
        }
        if name.len() > start && name.ends_with('_') && last_sep {
            name.pop();
        }
    }
    name
}

/// The checked instances of a generic kernel (none for a plain one); what is wrong is added to
/// `errors` at its span.
fn instances(f: &syn::ItemFn, args: &KernelArgs, errors: &mut Vec<(Span, String)>) -> Vec<KernelInstance> {
    let sig = &f.sig;
    let name = &sig.ident;
    for p in &sig.generics.params {
        match p {
            syn::GenericParam::Lifetime(l) => errors.push((
                l.span(),
                format!("a kernel cannot be generic over a lifetime (`{}`): its parameters are device pointers and values that borrow nothing; remove it", l.lifetime),
            )),
            syn::GenericParam::Const(c) => errors.push((
                c.span(),
                format!("a kernel cannot take a const generic parameter (`{}`): pass the value as a kernel parameter, or stamp out one kernel per value with a macro", c.ident),
            )),
            syn::GenericParam::Type(_) => {}
        }
    }
    let params: Vec<String> = sig.generics.type_params().map(|p| p.ident.to_string()).collect();
    let example = |n: usize| {
        let ty = ["f32", "u32", "i32", "u64"];
        let inst = |k: usize| {
            if n == 1 {
                ty[k].to_string()
            } else {
                format!("({})", (0..n).map(|j| ty[(j + k) % 4]).collect::<Vec<_>>().join(", "))
            }
        };
        format!("#[kernel(instances({}, {}))]", inst(0), inst(1))
    };
    let Some(list) = &args.instances else {
        if !params.is_empty() {
            let named = instance_name(&name.to_string(), &vec!["f32".to_string(); params.len()]);
            errors.push((
                sig.generics.span(),
                format!("a generic kernel needs the types the host launches it with: write `{}` (each instance is exported as a kernel of its own, `{named}`, ..)", example(params.len())),
            ));
        } else if sig.generics.where_clause.is_some() {
            errors.push((
                sig.generics.where_clause.span(),
                "a kernel without type parameters cannot have a `where` clause: remove it".into(),
            ));
        }
        return Vec::new();
    };
    if params.is_empty() {
        errors.push((list.span, format!("`instances(..)` is for a generic kernel, and `{name}` has no type parameter: remove it, or write `pub unsafe fn {name}<T>(..)`")));
        return Vec::new();
    }
    if list.list.is_empty() {
        errors.push((list.span, format!("`instances()` lists no type: write at least one, {INSTANCES_HELP}")));
        return Vec::new();
    }
    let mut out: Vec<KernelInstance> = Vec::new();
    for inst in &list.list {
        let texts: Vec<String> = inst.types.iter().map(pretty).collect();
        let text = if texts.len() == 1 && params.len() == 1 { texts[0].clone() } else { format!("({})", texts.join(", ")) };
        if inst.types.len() != params.len() {
            let s = |n: usize| if n == 1 { "" } else { "s" };
            errors.push((
                inst.span,
                format!(
                    "instance `{text}` gives {} type{} for the {} type parameter{} of `{name}` (`{}`): write one type per parameter, {}",
                    inst.types.len(),
                    s(inst.types.len()),
                    params.len(),
                    s(params.len()),
                    params.join(", "),
                    if params.len() == 1 {
                        "as in `instances(f32, f64)`".to_string()
                    } else {
                        format!("as in `{}`", example(params.len()))
                    }
                ),
            ));
            continue;
        }
        let ptx_name = instance_name(&name.to_string(), &texts);
        if let Some(prev) = out.iter().find(|o| o.ptx_name == ptx_name) {
            let message = if prev.text == text {
                format!("instance `{text}` is listed twice: remove one")
            } else {
                format!("instances `{}` and `{text}` would both be exported as `{ptx_name}`: keep one", prev.text)
            };
            errors.push((inst.span, message));
            continue;
        }
        let k = KernelInstance { args: inst.types.clone(), text, ptx_name };
        // A type argument the host cannot pass where the kernel takes it by value
        // (`T = [f32; 4]` for `x: T`): reported at the instance, with the parameter.
        for input in &sig.inputs {
            let syn::FnArg::Typed(pt) = input else { continue };
            if param_error(&pt.ty).is_some() {
                continue; // reported once, at the parameter
            }
            if let Some((_, message)) = param_error(&k.substitute(&sig.generics, &pt.ty)) {
                errors.push((inst.span, format!("instance `{}`, parameter `{}`: {message}", k.text, pretty_pat(&pt.pat))));
            }
        }
        out.push(k);
    }
    out
}

fn pretty_pat(pat: &syn::Pat) -> String {
    pat.to_token_stream().to_string()
}

/// Every reason `f` cannot be a kernel, with the span to report it at (type parameters are
/// checked with the instances, in [`instances`]).
fn kernel_errors(f: &syn::ItemFn) -> Vec<(Span, String)> {
    let sig = &f.sig;
    let mut errors = Vec::new();
    let mut err = |span: Span, message: String| errors.push((span, message));
    let name = &sig.ident;
    if !matches!(f.vis, syn::Visibility::Public(_)) {
        err(sig.fn_token.span(), format!("a kernel must be `pub`: write `pub unsafe fn {name}`"));
    }
    if sig.unsafety.is_none() {
        err(
            sig.fn_token.span(),
            format!("a kernel must be `unsafe`: it trusts the pointers and sizes the host passes; write `pub unsafe fn {name}`"),
        );
    }
    if let Some(t) = &sig.asyncness {
        err(t.span(), "a kernel cannot be `async`".into());
    }
    if let Some(t) = &sig.constness {
        err(t.span(), "a kernel cannot be `const`".into());
    }
    if let Some(abi) = &sig.abi {
        err(abi.span(), "#[kernel] sets the ABI (`extern \"ptx-kernel\"`): remove this `extern`".into());
    }
    if let Some(v) = &sig.variadic {
        err(v.span(), "a kernel cannot be variadic".into());
    }
    if let syn::ReturnType::Type(_, ty) = &sig.output {
        if !is_unit(ty) {
            err(ty.span(), "a kernel returns nothing: write results through a `*mut T` parameter".into());
        }
    }
    for input in &sig.inputs {
        match input {
            syn::FnArg::Receiver(r) => err(r.span(), "a kernel is a free function: it cannot take `self`".into()),
            syn::FnArg::Typed(pt) => {
                if !matches!(*pt.pat, syn::Pat::Ident(_) | syn::Pat::Wild(_)) {
                    err(pt.pat.span(), "a kernel parameter is a plain name (`x: u32`), not a pattern".into());
                }
                if let Some((span, message)) = param_error(&pt.ty) {
                    err(span, message);
                }
            }
        }
    }
    errors
}

fn is_unit(ty: &syn::Type) -> bool {
    matches!(ty, syn::Type::Tuple(t) if t.elems.is_empty())
}

/// Why a parameter of type `ty` cannot cross from the host, if it cannot.
fn param_error(ty: &syn::Type) -> Option<(Span, String)> {
    let text = pretty(ty);
    let message = match ty {
        syn::Type::Ptr(p) => {
            // The pointee is device memory of any sized type; only pointer-to-pointer is
            // refused, since the host cannot hand a device array of device pointers typed.
            if matches!(*p.elem, syn::Type::Ptr(_)) {
                format!("`{text}`: a pointer to pointers cannot be passed typed; pass the device address as a `u64`")
            } else if let Some(why) = fat_pointee(&p.elem) {
                format!("`{text}`: {why}")
            } else {
                return None;
            }
        }
        syn::Type::Paren(p) => return param_error(&p.elem),
        syn::Type::Group(g) => return param_error(&g.elem),
        syn::Type::Reference(r) if is_str(&r.elem) => {
            format!("`{text}`: a string cannot cross to the GPU; pass a `*const u8` and a length")
        }
        syn::Type::Reference(_) => {
            format!("`{text}`: a kernel cannot take a reference (host memory is not device memory); take `*const T` or `*mut T`")
        }
        syn::Type::Slice(_) => format!("`{text}`: a slice cannot be a kernel parameter; take a `*const T` and a length"),
        syn::Type::Array(_) => {
            format!("`{text}`: an array cannot be passed by value; take a `*const T` to device memory, or wrap it in a `#[repr(C)]` struct")
        }
        syn::Type::Tuple(t) if t.elems.is_empty() => "`()` carries nothing: remove this parameter".into(),
        syn::Type::Tuple(_) => {
            format!("`{text}`: tuples have no stable layout; pass the fields as parameters or use a `#[repr(C)]` struct")
        }
        syn::Type::BareFn(_) => format!("`{text}`: host function pointers cannot be called on the GPU"),
        syn::Type::ImplTrait(_) => format!("`{text}`: `impl Trait` is generic; a kernel takes concrete types"),
        syn::Type::TraitObject(_) => format!("`{text}`: trait objects cannot cross to the GPU; take a concrete type"),
        syn::Type::Never(_) => "`!` cannot be a kernel parameter".into(),
        syn::Type::Infer(_) => "`_`: write the parameter's type".into(),
        syn::Type::Path(p) => {
            let last = p.path.segments.last()?;
            if !last.arguments.is_empty() || p.qself.is_some() {
                format!("`{text}`: generic types have no layout the host can match; use a primitive, a pointer or a `#[repr(C)]` struct")
            } else if last.ident == "str" {
                format!("`{text}`: a string cannot cross to the GPU; pass a `*const u8` and a length")
            } else if last.ident == "char" {
                "`char`: a kernel cannot take a `char` (the host side has no matching launch type); pass a `u32`".into()
            } else {
                return None;
            }
        }
        _ => format!("`{text}` cannot be a kernel parameter; use a primitive, a pointer, or a `#[repr(C)]` struct"),
    };
    Some((ty.span(), message))
}

/// A type as a person writes it (`&mut [f32]`, not `& mut [f32]`), for messages.
fn pretty(ty: &syn::Type) -> String {
    let tokens = ty.to_token_stream().to_string();
    let mut out = String::with_capacity(tokens.len());
    for (i, c) in tokens.char_indices() {
        let prev = out.chars().last();
        let next = tokens[i + 1..].chars().next();
        let drop = c == ' '
            && (matches!(next, Some(',' | ';' | ')' | ']' | '>' | ':' | '<' | '('))
                || matches!(prev, Some('(' | '[' | '<' | '&' | ':' | '*')));
        if !drop {
            out.push(c);
        }
    }
    // `*const T` and `dyn Tr` keep their space; `::` lost both.
    out.replace("*const", "*const ").replace("*mut", "*mut ").replace("*const  ", "*const ").replace("*mut  ", "*mut ")
}

/// Why a raw pointer to `elem` cannot be a kernel parameter, where it is a fat pointer: the
/// PTX parameter is the address and a length (or vtable), 16 bytes, which no typed launch passes.
fn fat_pointee(elem: &syn::Type) -> Option<&'static str> {
    match elem {
        syn::Type::Paren(p) => fat_pointee(&p.elem),
        syn::Type::Group(g) => fat_pointee(&g.elem),
        syn::Type::Slice(_) => {
            Some("a pointer to a slice is a fat pointer (address and length); take a `*const T` and the length as a parameter (`n: usize`)")
        }
        t if is_str(t) => {
            Some("a pointer to a `str` is a fat pointer (address and length); take a `*const u8` and the length as a parameter")
        }
        syn::Type::TraitObject(_) => Some("a pointer to a trait object carries a host vtable; take a pointer to a concrete type"),
        _ => None,
    }
}

fn is_str(ty: &syn::Type) -> bool {
    matches!(ty, syn::Type::Path(p) if p.path.is_ident("str"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expand(item: &str) -> String {
        super::expand(TokenStream::new(), item.parse().unwrap()).to_string()
    }

    /// The `compile_error!` messages of an expansion.
    fn errors(item: &str) -> Vec<String> {
        let out: TokenStream = expand(item).parse().unwrap();
        let mut messages = Vec::new();
        // The groups of `compile_error! { .. }` (the refused function follows them).
        let mut last_two = (String::new(), String::new());
        for t in out {
            let of_error = last_two.0 == "compile_error" && last_two.1 == "!";
            last_two = (std::mem::take(&mut last_two.1), t.to_string());
            if let (true, proc_macro2::TokenTree::Group(g)) = (of_error, &t) {
                for inner in g.stream() {
                    if let proc_macro2::TokenTree::Literal(l) = inner {
                        let s = l.to_string();
                        messages.push(s.trim_matches('"').replace("\\\"", "\""));
                    }
                }
            }
        }
        messages
    }

    #[track_caller]
    fn rejects(item: &str, needle: &str) {
        let e = errors(item);
        assert!(e.iter().any(|m| m.contains(needle)), "`{item}`: no error mentions {needle:?}: {e:?}");
        assert!(!expand(item).contains("__kernel"), "a refused kernel is not exported: {}", expand(item));
    }

    #[test]
    fn a_refused_kernel_stays_a_plain_function_so_its_imports_and_callers_resolve() {
        let out = expand("fn scale(x: &f32) -> f32 { helper(*x) }");
        assert!(out.contains("compile_error"), "{out}");
        assert!(out.contains("# [allow (dead_code , unused_unsafe)] unsafe fn scale (x : & f32) -> f32 { helper (* x) }"), "{out}");
        // A receiver cannot stay on a free function: only the error.
        assert!(!expand("pub unsafe fn f(&self) {}").contains("fn f"), "{}", expand("pub unsafe fn f(&self) {}"));
        assert!(!expand("pub unsafe fn f(x: _) {}").contains("fn f"), "{}", expand("pub unsafe fn f(x: _) {}"));
    }

    #[test]
    fn a_kernel_becomes_an_exported_ptx_kernel_through_ptx_device() {
        let out = expand("/// Doc.\n#[inline] pub unsafe fn saxpy(n: u32, a: f32, x: *const f32, y: *mut f32) { body(); }");
        assert!(errors("pub unsafe fn f(n: u32) {}").is_empty());
        assert!(out.starts_with(":: ptx_device :: __kernel !"), "{out}");
        assert!(
            out.contains("[# [doc = \" Doc.\"] # [inline]] [pub] saxpy [n : u32 , a : f32 , x : * const f32 , y : * mut f32]"),
            "{out}"
        );
        assert!(out.contains("body ()"), "{out}");
    }

    #[test]
    fn accepts_every_type_the_host_can_pass() {
        for ty in [
            "u8",
            "i8",
            "u16",
            "i16",
            "u32",
            "i32",
            "u64",
            "i64",
            "usize",
            "isize",
            "f32",
            "f64",
            "bool",
            "*const f32",
            "*mut u64",
            "*mut Pair",
            "Pair",
            "core::primitive::u32",
            "(u32)",
        ] {
            let item = format!("pub unsafe fn f(mut x: {ty}, _: u32) {{}}");
            assert!(errors(&item).is_empty(), "{ty}: {:?}", errors(&item));
        }
        assert!(errors("pub unsafe fn f() -> () {}").is_empty());
    }

    #[test]
    fn refuses_each_parameter_that_cannot_cross_to_the_host() {
        let cases = [
            ("&f32", "`&f32`: a kernel cannot take a reference"),
            ("&mut [f32]", "cannot take a reference"),
            ("&str", "`&str`: a string cannot cross to the GPU"),
            ("str", "a string cannot cross"),
            ("[f32]", "`[f32]`: a slice cannot be a kernel parameter"),
            ("[f32; 4]", "`[f32; 4]`: an array cannot be passed by value"),
            ("(u32, f32)", "`(u32, f32)`: tuples have no stable layout"),
            ("()", "`()` carries nothing"),
            ("fn(u32) -> u32", "host function pointers cannot be called on the GPU"),
            ("impl Copy", "`impl Copy`: `impl Trait` is generic"),
            ("dyn Copy", "trait objects cannot cross"),
            ("Option<u32>", "`Option<u32>`: generic types have no layout"),
            ("<T as Tr>::X", "generic types have no layout"),
            ("*const *mut f32", "a pointer to pointers cannot be passed typed"),
            ("*const [f32]", "`*const [f32]`: a pointer to a slice is a fat pointer (address and length); take a `*const T`"),
            ("*mut str", "`*mut str`: a pointer to a `str` is a fat pointer"),
            ("*const dyn Copy", "a pointer to a trait object carries a host vtable"),
            ("char", "`char`: a kernel cannot take a `char`"),
            ("!", "`!` cannot be a kernel parameter"),
            ("_", "write the parameter's type"),
        ];
        for (ty, message) in cases {
            rejects(&format!("pub unsafe fn f(n: u32, x: {ty}) {{}}"), message);
        }
    }

    #[test]
    fn refuses_signatures_that_are_not_kernels() {
        rejects("unsafe fn f() {}", "a kernel must be `pub`: write `pub unsafe fn f`");
        rejects("pub(crate) unsafe fn f() {}", "must be `pub`");
        rejects("pub fn f() {}", "a kernel must be `unsafe`");
        rejects("pub unsafe fn f(x: u32) where u32: Copy {}", "a kernel without type parameters cannot have a `where` clause");
        rejects("pub unsafe fn f() -> u32 { 0 }", "a kernel returns nothing");
        rejects("pub async unsafe fn f() {}", "cannot be `async`");
        rejects("pub const unsafe fn f() {}", "cannot be `const`");
        rejects("pub unsafe extern \"C\" fn f() {}", "#[kernel] sets the ABI");
        rejects("pub unsafe fn f(&self) {}", "cannot take `self`");
        rejects("pub unsafe fn f((a, b): (u32, u32)) {}", "a plain name");
        rejects("pub struct S;", "#[kernel] applies to a function");
        let e = super::expand("inline".parse().unwrap(), "pub unsafe fn f() {}".parse().unwrap()).to_string();
        assert!(e.contains("#[kernel] takes `instances(..)` (the types a generic kernel is exported for), `launch_bounds(..)`, `max_registers(..)` and `cluster_dims(..)`, not `inline`"), "{e}");
    }

    #[test]
    fn reports_every_problem_of_a_signature_at_once() {
        let e = errors("fn f(x: &u32, y: [u8; 2]) -> u32 { 0 }");
        assert_eq!(e.len(), 5, "{e:?}");
    }

    fn expand_with(attr: &str, item: &str) -> String {
        super::expand(attr.parse().unwrap(), item.parse().unwrap()).to_string()
    }

    /// The `compile_error!` messages of an expansion with arguments.
    fn errors_with(attr: &str, item: &str) -> Vec<String> {
        let out = expand_with(attr, item);
        out.split("compile_error ! {").skip(1).filter_map(|m| m.split('"').nth(1)).map(|m| m.replace("\\\"", "\"")).collect()
    }

    #[track_caller]
    fn rejects_with(attr: &str, item: &str, needle: &str) {
        let e = errors_with(attr, item);
        assert!(e.iter().any(|m| m.contains(needle)), "`#[kernel({attr})] {item}`: no error mentions {needle:?}: {e:?}");
        assert!(!expand_with(attr, item).contains("__kernel"), "a refused kernel is not emitted");
    }

    #[test]
    fn a_generic_kernel_exports_one_kernel_per_instance() {
        let out = expand_with(
            "instances(f32, f64)",
            "/// Adds.\npub unsafe fn add<T: Copy + core::ops::Add<Output = T>>(n: u32, x: *const T, mut y: *mut T, _: T) { body(); }",
        );
        // The generic function stays as written, for the crate to call too.
        assert!(out.starts_with("# [doc = \" Adds.\"] pub unsafe fn add < T : Copy + core :: ops :: Add < Output = T > > (n : u32 , x : * const T , mut y : * mut T , _ : T) { body () ; }"), "{out}");
        for (t, name) in [("f32", "add_f32"), ("f64", "add_f64")] {
            let kernel = format!(
                ":: ptx_device :: __kernel ! {{ [# [doc = \" `add` for `{t}`: the kernel exported as `{name}`.\"]] [pub] {name} [n : u32 , x : * const {t} , y : * mut {t} , __arg3 : {t}] {{ unsafe {{ add :: < {t} > (n , x , y , __arg3) }} }} }}"
            );
            assert!(out.contains(&kernel), "{kernel}\nnot in\n{out}");
        }
    }

    #[test]
    fn a_kernel_generic_over_two_types_names_its_instances_after_both() {
        let out =
            expand_with("instances((f32, u32), (f64, u64),)", "pub unsafe fn cast<A, B>(n: u32, x: *const A, y: *mut B) where A: Copy {}");
        assert!(errors_with("instances((f32, u32), (f64, u64),)", "pub unsafe fn cast<A, B>(n: u32, x: *const A, y: *mut B) {}").is_empty());
        assert!(
            out.contains("cast_f32_u32 [n : u32 , x : * const f32 , y : * mut u32] { unsafe { cast :: < f32 , u32 > (n , x , y) } }"),
            "{out}"
        );
        assert!(out.contains("cast_f64_u64 [n : u32 , x : * const f64 , y : * mut u64]"), "{out}");
        // Associated types of a parameter name the instance's type.
        let out = expand_with("instances(Pair)", "pub unsafe fn f<T: Tr>(x: *mut T::Elem) {}");
        assert!(out.contains("f_Pair [x : * mut < Pair > :: Elem]"), "{out}");
    }

    #[test]
    fn launch_bounds_and_cluster_dims_leave_a_marker_per_exported_kernel() {
        let out = expand_with("launch_bounds(384, 1), cluster_dims(2)", "pub unsafe fn k(n: u32) {}");
        assert!(out.contains("\".ptx.kernel:k:nvvm.maxntid=384;nvvm.minctasm=1;nvvm.cluster_dim=2,1,1\""), "{out}");
        let out = expand_with("instances(f32, f64), launch_bounds(128)", "pub unsafe fn g<T>(x: *mut T) {}");
        for name in ["g_f32", "g_f64"] {
            assert!(out.contains(&format!("\".ptx.kernel:{name}:nvvm.maxntid=128\"")), "{out}");
        }
        assert!(!expand("pub unsafe fn k(n: u32) {}").contains(".ptx.kernel:"));
        rejects_with("launch_bounds(4096)", "pub unsafe fn k() {}", "`launch_bounds(4096)`: a block has at most 1024 threads on every GPU");
        rejects_with("launch_bounds(64), launch_bounds(64)", "pub unsafe fn k() {}", "`launch_bounds` is given twice");
    }

    #[test]
    fn instance_names_follow_the_shared_table() {
        // ptx-build's signature reader tests its own naming against the same table.
        for line in include_str!("instance_names.txt").lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
            let (lhs, expected) = line.split_once(" => ").unwrap();
            let (kernel, args) = lhs.split_once(": ").unwrap();
            let args: Vec<String> = args.split(" | ").map(String::from).collect();
            assert_eq!(instance_name(kernel, &args), expected, "{line}");
            // What the macro exports for that instance, written as a user would.
            let attr = if args.len() == 1 { format!("instances({})", args[0]) } else { format!("instances(({}))", args.join(", ")) };
            let params: Vec<String> = (0..args.len()).map(|i| format!("T{i}")).collect();
            let item = format!("pub unsafe fn {kernel}<{}>(n: u32) {{}}", params.join(", "));
            assert!(expand_with(&attr, &item).contains(&format!(" {expected} [n")), "{line}: {}", expand_with(&attr, &item));
        }
    }

    #[test]
    fn refuses_generic_kernels_it_cannot_export() {
        let f = "pub unsafe fn add<T>(x: *mut T) {}";
        rejects_with("", f, "a generic kernel needs the types the host launches it with: write `#[kernel(instances(f32, u32))]` (each instance is exported as a kernel of its own, `add_f32`");
        rejects_with("", "pub unsafe fn c<A, B>(x: *mut A, y: *mut B) {}", "write `#[kernel(instances((f32, u32), (u32, i32)))]`");
        rejects_with(
            "instances(f32)",
            "pub unsafe fn f(x: *mut f32) {}",
            "`instances(..)` is for a generic kernel, and `f` has no type parameter",
        );
        rejects_with("instances()", f, "`instances()` lists no type: write at least one");
        rejects_with("instances((f32, u32))", f, "instance `(f32, u32)` gives 2 types for the 1 type parameter of `add` (`T`): write one type per parameter, as in `instances(f32, f64)`");
        rejects_with(
            "instances(f32)",
            "pub unsafe fn c<A, B>(x: *mut A, y: *mut B) {}",
            "instance `(f32)` gives 1 type for the 2 type parameters of `c` (`A, B`)",
        );
        rejects_with("instances(f32, f64, f32)", f, "instance `f32` is listed twice: remove one");
        rejects_with("instances(a::X, a_X)", f, "instances `a::X` and `a_X` would both be exported as `add_a_X`: keep one");
        rejects_with("instances(f32)", "pub unsafe fn f<'a, T>(x: *mut T) {}", "a kernel cannot be generic over a lifetime (`'a`)");
        rejects_with(
            "instances(f32)",
            "pub unsafe fn f<T, const N: usize>(x: *mut T) {}",
            "a kernel cannot take a const generic parameter (`N`)",
        );
        rejects_with(
            "instances([f32; 4])",
            "pub unsafe fn f<T>(x: T) {}",
            "instance `[f32; 4]`, parameter `x`: `[f32; 4]`: an array cannot be passed by value",
        );
        rejects_with("instances(1)", f, "expected a type in `instances(..)`");
        rejects_with("instances(f32) extra", f, "separate the arguments of #[kernel] with commas");
        rejects_with("instances(f32), instances(f64)", f, "#[kernel] takes one `instances(..)`");
        rejects_with("types(f32)", f, "#[kernel] takes `instances(..)`");
        // A parameter wrong for every instance is reported once, at the parameter.
        assert_eq!(errors_with("instances(f32, f64)", "pub unsafe fn f<T>(x: &T) {}").len(), 1);
    }

    #[test]
    fn launch_bounds_mark_the_exported_kernel_and_each_instance() {
        let out = expand_with("launch_bounds(256, 2), max_registers(64)", "pub unsafe fn k(n: u32) { body(); }");
        assert!(out.contains("\".ptx.kernel:k:nvvm.maxntid=256;nvvm.minctasm=2;nvvm.maxnreg=64\""), "{out}");
        let out = expand_with("instances(f32, f64), launch_bounds(128)", "pub unsafe fn add<T>(x: *mut T) {}");
        assert_eq!(out.matches(".ptx.kernel:add_f").count(), 2, "{out}");
        // The generic function itself is not a kernel: no marker for it.
        assert!(out.starts_with("pub unsafe fn add < T >") && !out.contains(".ptx.kernel:add:"), "{out}");
        assert!(!expand("pub unsafe fn k() {}").contains("link_section"));
    }

    #[test]
    fn bad_launch_bounds_are_errors_at_the_attribute() {
        let f = "pub unsafe fn k(n: u32) {}";
        rejects_with("launch_bounds(0)", f, "`launch_bounds(0)`: a block has at least 1 thread");
        rejects_with("launch_bounds(1025)", f, "`launch_bounds(1025)`: a block has at most 1024 threads on every GPU");
        assert!(errors_with("launch_bounds(256, 2), instances(f32)", "pub unsafe fn k<T>(x: *mut T) {}").is_empty());
        rejects_with("max_registers(300)", f, "`max_registers(300)`: a thread has from 1 to 255 registers");
        // On something that is not a kernel function.
        let e = expand_with("launch_bounds(256)", "pub struct S;");
        assert!(e.contains("#[kernel] applies to a function"), "{e}");
        let e = crate::kernel_attrs::standalone("256, 2".parse().unwrap()).to_string();
        assert!(e.contains("`#[launch_bounds]` is an argument of `#[kernel]`: write `#[kernel(launch_bounds(256, 2))]`"), "{e}");
    }
}
