//! A generic kernel's instance trait: implemented for exactly the instantiated types or
//! template arguments, so a launch method's turbofish compiles only for an instance the PTX has.

use std::collections::HashMap;

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

use super::{ident, RESERVED_NAMES};
use crate::embed::signature::{ConstType, Generic, GenericParam, KernelSig};

/// The names of the generic kernels' traits and marker types, at the generated module's top
/// level: the kernel's name in CamelCase (`add_rows` -> `AddRowsTypes`, `ssm_scan` ->
/// `SsmScanInstance`), or as written with a `_` after it (`addOne_Instance`) where two kernels'
/// CamelCase is one (`addOne` and `add_one`), whose items would be defined twice.
pub(super) struct TraitNames(HashMap<String, String>);

impl TraitNames {
    pub(super) fn new<'a>(kernels: impl Iterator<Item = &'a KernelSig>) -> Self {
        let camel = |kernel: &str| -> String {
            kernel
                .split('_')
                .filter(|w| !w.is_empty())
                .map(|w| {
                    let mut c = w.chars();
                    c.next().map(|f| f.to_ascii_uppercase().to_string() + c.as_str()).unwrap_or_default()
                })
                .collect()
        };
        let generic: Vec<(&str, String)> = kernels.filter(|k| k.generic.is_some()).map(|k| (k.name.as_str(), camel(&k.name))).collect();
        let mut count: HashMap<&str, usize> = HashMap::new();
        for (_, c) in &generic {
            *count.entry(c.as_str()).or_default() += 1;
        }
        let base = |(name, c): &(&str, String)| match count[c.as_str()] {
            1 => c.clone(),
            _ => format!("{name}_"),
        };
        TraitNames(generic.iter().map(|g| (g.0.to_string(), base(g))).collect())
    }

    /// A kernel generic over types only: its trait (`AddRowsTypes`).
    pub(super) fn types(&self, kernel: &str) -> Ident {
        format_ident!("{}Types", self.0[kernel])
    }

    /// A kernel with const parameters: its marker type and its trait (`SsmScanInstance`,
    /// `SsmScanInstances`).
    pub(super) fn instance(&self, kernel: &str) -> (Ident, Ident) {
        (format_ident!("{}Instance", self.0[kernel]), format_ident!("{}Instances", self.0[kernel]))
    }
}

/// For a generic kernel: a trait implemented for exactly the instantiated types (a tuple of them
/// for several type parameters), so `k.add::<i32>(..)` does not compile where the PTX has no
/// `int` instance. A kernel with const parameters gets a marker type of its parameters and the
/// trait implemented for each instantiated combination (`KInstance<f32, 128, true>`).
pub(super) fn instance_trait(k: &KernelSig, names: &TraitNames) -> Option<TokenStream> {
    let g = k.generic.as_ref()?;
    if !g.const_params.is_empty() {
        return Some(const_instance_trait(k, g, names));
    }
    let name = names.types(&k.name);
    let listed: Vec<String> = g.instances.iter().map(|i| instance_type_text(&i.args)).collect();
    let doc = format!(
        " The types kernel `{}` is instantiated for ({}); the type argument of [`Kernels::{}`].",
        k.name,
        listed.join(", "),
        k.name
    );
    let types = g.instances.iter().map(|inst| {
        let ty = instance_type(&inst.args);
        quote!(#ty)
    });
    Some(sealed_trait(&name, &doc, types))
}

/// A sealed trait `name` implemented for each of `types`, the `i`th answering `i`: the index of
/// its instance among the kernel's functions.
fn sealed_trait(name: &Ident, doc: &str, types: impl Iterator<Item = TokenStream>) -> TokenStream {
    let impls = types.enumerate().map(|(i, ty)| {
        quote! {
            impl #name for #ty {
                fn __instance(_: sealed::Token) -> usize { #i }
            }
        }
    });
    quote! {
        #[doc = #doc]
        // `addOne_Instances` where two kernels' CamelCase names are one (see `TraitNames`).
        #[allow(dead_code, non_camel_case_types)]
        pub trait #name {
            #[doc(hidden)]
            fn __instance(_: sealed::Token) -> usize;
        }
        #(#impls)*
    }
}

/// The marker type and trait of a kernel with const parameters (see [`instance_trait`]).
fn const_instance_trait(k: &KernelSig, g: &Generic, names: &TraitNames) -> TokenStream {
    let (carrier, name) = names.instance(&k.name);
    let spelled = spellings(g);
    let params = spelled.iter().map(|p| match p {
        Spelling::Type(id) | Spelling::Function(id) => quote!(#id),
        Spelling::Const(id, ty) => quote!(const #id: #ty),
    });
    // The struct's type parameters must be used: a phantom of them.
    let types: Vec<&Ident> = spelled
        .iter()
        .filter_map(|p| match p {
            Spelling::Type(id) | Spelling::Function(id) => Some(id),
            Spelling::Const(..) => None,
        })
        .collect();
    let body = match types.is_empty() {
        true => quote!(;),
        false => quote!((::core::marker::PhantomData<(#(#types,)*)>);),
    };
    let doc = format!(
        " The template arguments kernel `{}` is instantiated with ({}); the generic arguments of [`Kernels::{}`].",
        k.name,
        listed_instances(g),
        k.name
    );
    let types = g.instances.iter().map(|inst| {
        let args = g.instance_args(inst).into_iter().map(generic_arg);
        quote!(#carrier<#(#args),*>)
    });
    let sealed = sealed_trait(&name, &doc, types);
    let struct_doc = format!(" The template parameters of kernel `{}`, for [`{name}`]'s implementations.", k.name);
    quote! {
        #[doc = #struct_doc]
        #[allow(dead_code, non_upper_case_globals, non_camel_case_types)]
        #[derive(Debug)]
        pub struct #carrier<#(#params),*> #body
        #sealed
    }
}

/// How a generic kernel's parameter is spelt in the generated code: the marker type's and the
/// method's declarations, and the method's arguments to the marker type.
pub(super) enum Spelling {
    /// A type parameter (`T: DeviceRepr` in the method).
    Type(Ident),
    /// A device function: a type parameter taking its marker type, unbounded.
    Function(Ident),
    /// A value: `const N: i32`, passed on as `{ N }`.
    Const(Ident, Ident),
}

/// `g`'s parameters in source order, as the generated code spells them.
pub(super) fn spellings(g: &Generic) -> Vec<Spelling> {
    g.params()
        .into_iter()
        .map(|p| match p {
            GenericParam::Type(t) => Spelling::Type(ident(t)),
            GenericParam::Const(c) => match c.ty {
                ConstType::Function => Spelling::Function(const_param_ident(&c.name)),
                ConstType::Value(ty) => Spelling::Const(const_param_ident(&c.name), format_ident!("{}", ty.rust_name())),
                ConstType::PackLength => Spelling::Const(const_param_ident(&c.name), format_ident!("usize")),
            },
        })
        .collect()
}

/// A const parameter's name in the generated code: the C++ name, or with `_` after it where it
/// is one of the method's own names (a parameter of the method cannot shadow it).
pub(super) fn const_param_ident(name: &str) -> Ident {
    match RESERVED_NAMES.contains(&name) || super::launch::is_reserved(name) {
        true => format_ident!("{name}_"),
        false => ident(name),
    }
}

/// An instance argument as a generic argument: a type, or a literal (a negative one in braces).
fn generic_arg(arg: &str) -> TokenStream {
    let text = if arg.starts_with('-') { format!("{{ {arg} }}") } else { arg.to_string() };
    text.parse().unwrap_or_else(|_| quote!(()))
}

/// A generic kernel's instances for the docs, at most a dozen (ggml's have hundreds).
pub(super) fn listed_instances(g: &Generic) -> String {
    const SHOWN: usize = 12;
    let mut listed: Vec<String> =
        g.instances.iter().take(SHOWN).map(|i| format!("`<{}>`", g.instance_args(i).join(", ").replace("self::", ""))).collect();
    if g.instances.len() > SHOWN {
        listed.push(format!("and {} more", g.instances.len() - SHOWN));
    }
    listed.join(", ")
}

/// An instance's type arguments as one type: itself, or a tuple for several.
fn instance_type(args: &[String]) -> syn::Type {
    let tys: Vec<syn::Type> = args.iter().map(|a| syn::parse_str(a).unwrap_or_else(|_| syn::parse_quote!(()))).collect();
    match tys.as_slice() {
        [one] => one.clone(),
        _ => syn::parse_quote!((#(#tys),*)),
    }
}

pub(super) fn instance_type_text(args: &[String]) -> String {
    let ty = instance_type(args);
    quote!(#ty).to_string().replace(" :: ", "::").replace(":: ", "::").replace(" ,", ",")
}
