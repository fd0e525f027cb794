//! The generated module: every arch's PTX and cubin embedded with `include_str!`/
//! `include_bytes!`, a `Kernels` struct that loads the right one, and one typed, `unsafe`
//! launch method per kernel. The fixed part is built with quote and printed with prettyplease;
//! the per-kernel methods, most of the text, are written as text (see [`generate`]).
//!
//! Run-time logic (arch selection, load errors, argument traits) lives once in `ptx-runtime`;
//! the generated text only names data and calls it.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote};

use crate::arch::{Arch, Variant};
use crate::embed::signature::{KernelSig, ParamType};
use crate::error::{Error, Result};
use crate::report::ArtifactKind;

/// One embedded image, a file under `OUT_DIR`.
#[derive(Clone, Debug)]
pub struct EmbeddedImage {
    pub arch: Arch,
    pub kind: ArtifactKind,
    /// Path relative to `OUT_DIR`, with `/` separators.
    pub file: String,
    /// `.version` of PTX images.
    pub ptx_isa: Option<String>,
}

/// The kernels of one PTX module (a kernel crate) and its images.
#[derive(Clone, Debug)]
pub struct Unit {
    /// A Rust identifier: the crate name (`saxpy_kernels`).
    pub name: String,
    pub kernels: Vec<KernelSig>,
    pub images: Vec<EmbeddedImage>,
    /// What the PTX says of by-value struct parameters, asserted against the host types.
    pub struct_layouts: Vec<StructLayout>,
    /// PTX entries with no typed method (parameters that cannot be typed, C++ mangled names,
    /// kernels stamped out by macros): loaded all the same, reached through
    /// `Kernels::function(name)` and `Kernels::launch_builder(stream, name)`.
    pub untyped: Vec<String>,
    /// PTX entries with a launch bound (`.maxntid`): the entry and its most threads a block.
    pub launch_bounds: Vec<(String, u32)>,
}

impl Unit {
    /// The launch bound of PTX entry `name`, 0 for none.
    fn max_threads(&self, name: &str) -> u32 {
        self.launch_bounds.iter().find(|(n, _)| n == name).map_or(0, |(_, b)| *b)
    }
}

/// A by-value struct parameter as the PTX lays it out (`.param .align A .b8 name[SIZE]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StructLayout {
    pub kernel: String,
    /// The parameter's index.
    pub param: usize,
    pub size: u32,
    pub align: u32,
}

/// A C++ kernel defined in several .cu modules (a helper kernel from a shared header, as in
/// llm.c) is one kernel per loaded module; its methods get the module's name in front
/// (`attention_permute`, `layernorm_permute`) instead of clashing. `extern "C"` and Rust names
/// stay as written: two of those with one name are the error [`generate`] reports.
pub fn prefix_shared_cxx_names(units: &mut [Unit]) {
    let is_cxx = |k: &KernelSig| {
        k.ptx_name.is_some() || k.generic.as_ref().is_some_and(|g| g.instances.iter().all(|i| i.ptx_name.starts_with("_Z")))
    };
    let mut count: std::collections::BTreeMap<String, usize> = Default::default();
    for k in units.iter().flat_map(|u| &u.kernels) {
        *count.entry(k.name.clone()).or_default() += 1;
    }
    for u in units.iter_mut() {
        let unit = u.name.clone();
        for k in u.kernels.iter_mut().filter(|k| count[&k.name] > 1 && is_cxx(k)) {
            k.doc.push(format!(" Defined in several .cu modules: this is the one of `{unit}`."));
            k.name = format!("{unit}_{}", k.name);
        }
    }
}

/// Generates the module for `units`.
pub fn generate(units: &[Unit]) -> Result<String> {
    check_unique(units)?;
    let unit_mods = units.iter().map(unit_module);
    // Every function is loaded into one list (ptx-runtime's `KernelSet`, which does the loading
    // so that the host crate compiles none of it), in KERNEL_NAMES's order: a kernel's method reaches
    // its function (and its plan-cache slot) by that index, a generic kernel's instance by the
    // kernel's first index plus the instance's. One field per kernel instead made `load_with`
    // one struct literal with a `?` per kernel, whose drop paths grow with the square of the
    // kernel count: 22 s of LLVM for 361 kernels (BENCHMARKS.md, bindgen_cuda comparison).
    let mut next_index = 0;
    let mut typed: Vec<(usize, &KernelSig, Vec<u32>)> = Vec::new();
    for u in units {
        for k in &u.kernels {
            let bounds: Vec<u32> = k.ptx_names().iter().map(|n| u.max_threads(n)).collect();
            typed.push((next_index, k, bounds));
            next_index += k.ptx_names().len();
        }
        next_index += u.untyped.len();
    }
    let instance_traits = units.iter().flat_map(|u| u.kernels.iter()).filter_map(instance_trait);
    // The host type of a by-value struct is only known to the host compiler: assert its layout there.
    let size_checks = units.iter().flat_map(|u| {
        u.struct_layouts.iter().filter_map(move |l| {
            let k = u.kernels.iter().find(|k| k.name == l.kernel)?;
            let p = k.params.get(l.param)?;
            let ParamType::ByValue { ty } = &p.ty else { return None };
            // A type parameter has one layout per instance; cudarc's own impls cover those.
            if k.generic.as_ref().is_some_and(|g| g.type_params.contains(ty)) {
                return None;
            }
            let ty: syn::Type = syn::parse_str(ty).ok()?;
            let (size, align) = (l.size as usize, l.align as usize);
            let msg = format!(
                "`{}` (parameter `{}` of kernel `{}`) has another size or alignment on the host than in the PTX ({size} bytes, aligned to {align}): use the same #[repr(C)] type on both sides",
                quote!(#ty).to_string().replace(' ', ""),
                p.name,
                l.kernel
            );
            Some(quote! {
                const _: () = assert!(::core::mem::size_of::<#ty>() == #size && ::core::mem::align_of::<#ty>() == #align, #msg);
            })
        })
    });
    let all_names: Vec<&str> =
        units.iter().flat_map(|u| u.kernels.iter().flat_map(|k| k.ptx_names()).chain(u.untyped.iter().map(String::as_str))).collect();
    let unit_modules = units.iter().map(|u| {
        let m = format_ident!("{}", u.name);
        quote! { (#m::IMAGES, #m::FUNCTIONS) }
    });
    let any_generic = units.iter().flat_map(|u| u.kernels.iter()).any(|k| k.generic.is_some());
    let sealed = any_generic.then(|| {
        quote! {
            /// Seals the instance traits: only the generated impls exist, so a launch can only
            /// pick a function the PTX has.
            mod sealed {
                #[derive(Debug)]
                pub struct Token;
            }
        }
    });

    let file = quote! {
        #[allow(unused_imports)]
        use super::*;
        #[allow(unused_imports)]
        use ::ptx_runtime::cudarc::driver::{CudaContext, CudaFunction, CudaStream, DriverError, LaunchConfig, PushKernelArg};
        #[allow(unused_imports)]
        use ::ptx_runtime::{DeviceIn, DeviceInOut, Image, KernelSet, LaunchPlan, LoadError, Policy};
        use ::std::sync::Arc;

        /// Every kernel of this module, by name.
        pub const KERNEL_NAMES: &[&str] = &[#(#all_names),*];

        #(#unit_mods)*

        #(#size_checks)*

        #sealed

        #(#instance_traits)*

        /// The embedded kernels, loaded on one device, with one launch method each.
        #[derive(Debug, Clone)]
        pub struct Kernels {
            /// Every module and kernel function (in [`KERNEL_NAMES`]'s order), with launch plans.
            _set: KernelSet,
        }

        // Methods carry the kernels' own names (`mul_mat_q4_K`, and `mul_mat_q4_K_config`).
        #[allow(clippy::too_many_arguments, non_snake_case)]
        impl Kernels {
            /// Loads the embedded cubin that runs on the context's device (its exact arch first,
            /// then the same major at a lower minor), else JIT-compiles the best PTX. Every kernel
            /// is resolved here, so a missing one fails now, not at launch.
            pub fn load(ctx: &Arc<CudaContext>) -> Result<Self, LoadError> {
                Self::load_with(ctx, Policy::Best)
            }

            /// Loads PTX only (the driver's JIT path), even where a cubin would fit.
            pub fn load_ptx_only(ctx: &Arc<CudaContext>) -> Result<Self, LoadError> {
                Self::load_with(ctx, Policy::PtxOnly)
            }

            pub fn load_with(ctx: &Arc<CudaContext>, policy: Policy) -> Result<Self, LoadError> {
                let _set = KernelSet::load(ctx, &[#(#unit_modules),*], policy)?;
                Ok(Kernels { _set })
            }

            /// Any loaded kernel by its PTX name (see [`KERNEL_NAMES`]), typed or not.
            pub fn function(&self, name: &str) -> Option<&CudaFunction> {
                self._set.function(name)
            }

            /// cudarc's launch builder for any loaded kernel by PTX name: the way to launch
            /// kernels that have no typed method. Push the arguments in the kernel's order with
            /// `.arg(..)`, then `unsafe { .launch(cfg) }`.
            pub fn launch_builder<'a>(&'a self, stream: &'a CudaStream, name: &str) -> Option<::ptx_runtime::cudarc::driver::LaunchArgs<'a>> {
                self._set.launch_builder(stream, name)
            }

            /// The image each PTX module was loaded from (`sm_90 cubin`, `sm_80 PTX`).
            pub fn images(&self) -> Vec<&'static Image> {
                self._set.images()
            }
        }
    };
    let mut text = format!("// @generated by ptx-build: rewritten by every build; do not edit.\n\n{}", pretty(file)?);
    // Written as text, not quoted and printed like the rest: in a build script (compiled
    // without optimisation) syn's parse and prettyplease's print of 361 kernels' methods took
    // 0.5 s after the last nvcc run; the text takes 60 ms (BENCHMARKS.md, issue 25).
    text.push_str("\n// Methods carry the kernels' own names (`mul_mat_q4_K`, and `mul_mat_q4_K_config`).\n");
    text.push_str("#[allow(clippy::too_many_arguments, non_snake_case)]\nimpl Kernels {\n");
    for (index, k, bounds) in &typed {
        method(*index, k, bounds, &mut text);
    }
    text.push_str("}\n");
    Ok(text)
}

/// Rust source for `tokens`, as prettyplease prints it.
fn pretty(tokens: TokenStream) -> Result<String> {
    let parsed: syn::File = syn::parse2(tokens).map_err(|e| Error::ToolFailed {
        tool: "ptx-build codegen".into(),
        context: String::new(),
        command: String::new(),
        output: e.to_string(),
    })?;
    Ok(prettyplease::unparse(&parsed))
}

/// Methods generated next to each kernel's launch method.
const HELPER_SUFFIXES: &[&str] = &["_config", "_plan"];

/// Methods of `Kernels` itself: a typed kernel of one of these names would collide with it.
const RESERVED_METHODS: &[&str] = &["load", "load_ptx_only", "load_with", "images", "function", "launch_builder"];

fn check_unique(units: &[Unit]) -> Result<()> {
    let all: Vec<&KernelSig> = units.iter().flat_map(|u| u.kernels.iter()).collect();
    if let Some(k) = all.iter().find(|k| RESERVED_METHODS.contains(&k.name.as_str())) {
        return Err(Error::Signature {
            file: k.file.clone(),
            line: k.line,
            kernel: k.name.clone(),
            message: format!("`{}` is a method of the generated `Kernels` ({}); rename the kernel", k.name, RESERVED_METHODS.join(", ")),
        });
    }
    // By name, the first of each: candle's 1,400 kernels made a pairwise search 1.4 M string
    // comparisons and allocations in a build script.
    let mut by_name: std::collections::HashMap<&str, &KernelSig> = Default::default();
    for k in &all {
        by_name.entry(k.name.as_str()).or_insert(k);
    }
    // `saxpy_config` is a method of kernel `saxpy`: a kernel of that name would collide with it.
    for a in &all {
        for suffix in HELPER_SUFFIXES {
            if let Some(b) = by_name.get(format!("{}{suffix}", a.name).as_str()) {
                return Err(Error::DuplicateKernel {
                    name: format!("{} (the launch-configuration method `{}{suffix}` of kernel `{}`)", b.name, a.name, a.name),
                    first: format!("{}:{}", a.file.display(), a.line),
                    second: format!("{}:{}", b.file.display(), b.line),
                });
            }
        }
    }
    for b in &all {
        let a = by_name[b.name.as_str()];
        if !std::ptr::eq(a, *b) {
            return Err(Error::DuplicateKernel {
                name: a.name.clone(),
                first: format!("{}:{}", a.file.display(), a.line),
                second: format!("{}:{}", b.file.display(), b.line),
            });
        }
    }
    Ok(())
}

fn ident(name: &str) -> Ident {
    // Kernel names are C identifiers; a Rust keyword gets the raw form.
    syn::parse_str::<Ident>(name).unwrap_or_else(|_| Ident::new_raw(name, Span::call_site()))
}

fn unit_module(u: &Unit) -> TokenStream {
    let m = format_ident!("{}", u.name);
    let mut consts = Vec::new();
    let mut images = Vec::new();
    for img in &u.images {
        let arch_name = img.arch.to_string();
        let upper = arch_name.to_uppercase();
        let path = format!("/{}", img.file);
        let (c, kind) = match img.kind {
            ArtifactKind::Ptx => {
                let c = format_ident!("PTX_{}", upper);
                consts.push(quote! { pub static #c: &str = include_str!(concat!(env!("OUT_DIR"), #path)); });
                (quote! { #c.as_bytes() }, quote! { ::ptx_runtime::ImageKind::Ptx })
            }
            ArtifactKind::Cubin => {
                let c = format_ident!("CUBIN_{}", upper);
                consts.push(quote! { pub static #c: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), #path)); });
                (quote! { #c }, quote! { ::ptx_runtime::ImageKind::Cubin })
            }
        };
        let cap = img.arch.capability;
        let variant = match img.arch.variant {
            Variant::Plain => quote! { ::ptx_runtime::Variant::Plain },
            Variant::Family => quote! { ::ptx_runtime::Variant::Family },
            Variant::Specific => quote! { ::ptx_runtime::Variant::Specific },
        };
        let isa = match &img.ptx_isa {
            Some(v) => quote! { Some(#v) },
            None => quote! { None },
        };
        images.push(quote! {
            ::ptx_runtime::Image { arch: #arch_name, capability: #cap, variant: #variant, kind: #kind, ptx_isa: #isa, bytes: #c }
        });
    }
    let names: Vec<&str> = u.kernels.iter().flat_map(|k| k.ptx_names()).collect();
    let functions = names.iter().copied().chain(u.untyped.iter().map(String::as_str));
    let doc = format!("PTX and cubins of `{}`, for users who load or launch by hand.", u.name);
    quote! {
        #[doc = #doc]
        #[allow(non_snake_case)]
        pub mod #m {
            #(#consts)*
            /// Every embedded image, for [`ptx_runtime::load`].
            pub static IMAGES: &[::ptx_runtime::Image] = &[#(#images),*];
            /// The kernels of this module.
            pub const KERNELS: &[&str] = &[#(#names),*];
            /// Every function the module's `Kernels` loads, typed ones first, in the order of
            /// [`super::KERNEL_NAMES`].
            pub const FUNCTIONS: &[&str] = &[#(#functions),*];
        }
    }
}

/// The name of a generic kernel's instance trait: `add_rows` -> `AddRowsTypes`.
fn instance_trait_name(kernel: &str) -> Ident {
    let camel: String = kernel
        .split('_')
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut c = w.chars();
            c.next().map(|f| f.to_ascii_uppercase().to_string() + c.as_str()).unwrap_or_default()
        })
        .collect();
    format_ident!("{}Types", camel)
}

/// For a generic kernel: a trait implemented for exactly the instantiated types (a tuple of them
/// for several type parameters), so `k.add::<i32>(..)` does not compile where the PTX has no
/// `int` instance.
fn instance_trait(k: &KernelSig) -> Option<TokenStream> {
    let g = k.generic.as_ref()?;
    let name = instance_trait_name(&k.name);
    let listed: Vec<String> = g.instances.iter().map(|i| instance_type_text(&i.args)).collect();
    let doc =
        format!("The types kernel `{}` is instantiated for ({}); the type argument of [`Kernels::{}`].", k.name, listed.join(", "), k.name);
    let impls = g.instances.iter().enumerate().map(|(i, inst)| {
        let ty = instance_type(&inst.args);
        quote! {
            impl #name for #ty {
                fn __instance(_: sealed::Token) -> usize { #i }
            }
        }
    });
    Some(quote! {
        #[doc = #doc]
        pub trait #name {
            #[doc(hidden)]
            fn __instance(_: sealed::Token) -> usize;
        }
        #(#impls)*
    })
}

/// An instance's type arguments as one type: itself, or a tuple for several.
fn instance_type(args: &[String]) -> syn::Type {
    let tys: Vec<syn::Type> = args.iter().map(|a| syn::parse_str(a).unwrap_or_else(|_| syn::parse_quote!(()))).collect();
    match tys.as_slice() {
        [one] => one.clone(),
        _ => syn::parse_quote!((#(#tys),*)),
    }
}

fn instance_type_text(args: &[String]) -> String {
    let ty = instance_type(args);
    quote!(#ty).to_string().replace(" :: ", "::").replace(":: ", "::").replace(" ,", ",")
}

/// A kernel's launch method and its configuration helpers, appended to `out` as Rust source;
/// `bounds` holds each PTX entry's launch bound (0: none), in `ptx_names()` order.
fn method(index: usize, k: &KernelSig, bounds: &[u32], out: &mut String) {
    let f = ident(&k.name).to_string();
    let (config, plan) = (format!("{}_config", k.name), format!("{}_plan", k.name));
    // A generic kernel's methods are generic too; the instance trait picks the function.
    let (generics, where_clause, pick, turbofish) = match &k.generic {
        Some(g) => {
            let tr = instance_trait_name(&k.name);
            let tps: Vec<String> = g.type_params.iter().map(|t| ident(t).to_string()).collect();
            let turbofish = format!("::<{}>", tps.join(", "));
            match tps.as_slice() {
                [t] => (vec![format!("{t}: {tr} + {DEVICE_REPR}")], None, format!("<{t} as {tr}>::__instance(sealed::Token)"), turbofish),
                _ => {
                    let each: Vec<String> = tps.iter().map(|t| format!("{t}: {DEVICE_REPR}")).collect();
                    let tuple = format!("({})", tps.join(", "));
                    (each, Some(format!("{tuple}: {tr}")), format!("<{tuple} as {tr}>::__instance(sealed::Token)"), turbofish)
                }
            }
        }
        None => (Vec::new(), None, String::new(), String::new()),
    };
    // A generic kernel's entry is the kernel's first index plus the instance's.
    let (prelude, slot) = match k.generic {
        Some(_) => (vec![format!("let instance = {pick};")], format!("{index}usize + instance")),
        None => (vec![], format!("{index}usize")),
    };
    let function = format!("self._set.at({slot})");
    let bound_list = bounds.iter().map(|b| format!("{b}u32")).collect::<Vec<_>>().join(", ");
    // A launch bound: checked before the driver sees the launch, and the plan's block size
    // kept within it. Only a generic kernel has several entries (and `instance`).
    let (check, plan_call): (Vec<String>, Vec<String>) = match (bounds, &k.generic) {
        (_, _) if bounds.iter().all(|b| *b == 0) => (vec![], vec![format!("self._set.plan({slot}, dynamic_shared_bytes, u32::MAX)")]),
        ([bound], None) => (
            vec![format!("::ptx_runtime::check_launch_bounds({:?}, {bound}u32, &cfg)?;", k.ptx_names()[0])],
            vec![format!("self._set.plan({slot}, dynamic_shared_bytes, {bound}u32)")],
        ),
        _ => (
            vec![
                format!("const NAMES: &[&str] = &[{}];", k.ptx_names().iter().map(|n| format!("{n:?}")).collect::<Vec<_>>().join(", ")),
                format!("const BOUNDS: &[u32] = &[{bound_list}];"),
                "if BOUNDS[instance] != 0 {".into(),
                "    ::ptx_runtime::check_launch_bounds(NAMES[instance], BOUNDS[instance], &cfg)?;".into(),
                "}".into(),
            ],
            vec![
                format!("const BOUNDS: &[u32] = &[{bound_list}];"),
                "let bound = match BOUNDS[instance] { 0 => u32::MAX, b => b };".into(),
                format!("self._set.plan({slot}, dynamic_shared_bytes, bound)"),
            ],
        ),
    };
    let plan_call = [prelude.clone(), plan_call].concat();
    // A kernel that is not generic gets non-generic helpers: each is one call into ptx-runtime
    // (index, bound and all), so that 361 kernels cost rustc little (BENCHMARKS.md, issue 25).
    let (config_body, plan_body) = match (&k.generic, bounds) {
        (None, [bound]) => {
            let bound = if *bound == 0 { "u32::MAX".to_string() } else { format!("{bound}u32") };
            (
                vec![format!("self._set.config({index}usize, {bound}, n)")],
                vec![format!("self._set.plan({index}usize, dynamic_shared_bytes, {bound})")],
            )
        }
        _ => (vec![format!("self.{plan}{turbofish}(0)?.for_elements(n)")], plan_call),
    };
    let mut params = vec!["&self".to_string(), "stream: &CudaStream".into(), "cfg: LaunchConfig".into()];
    let mut body = [prelude, check].concat();
    body.push(format!("let mut args = stream.launch_builder({function});"));
    for p in &k.params {
        let name = ident(&p.name).to_string();
        let (param, push) = match &p.ty {
            ParamType::Scalar(s) => (format!("{name}: {}", s.rust_name()), format!("args.arg(&{name});")),
            ParamType::ByValue { ty } => (format!("{name}: {}", rust_type(ty)), format!("args.arg(&{name});")),
            ParamType::Pointer { mutable: false, elem } => {
                (format!("{name}: &impl DeviceIn<{}>", rust_type(elem)), format!("{name}.push_arg(&mut args);"))
            }
            ParamType::Pointer { mutable: true, elem } => {
                (format!("{name}: &mut impl DeviceInOut<{}>", rust_type(elem)), format!("{name}.push_arg(&mut args);"))
            }
            // `void *`: any buffer or view, of any element type, or a raw device address.
            ParamType::AnyPointer { mutable: false } => {
                (format!("{name}: &impl ::ptx_runtime::DeviceAnyIn"), format!("::ptx_runtime::DeviceAnyIn::push_arg({name}, &mut args);"))
            }
            ParamType::AnyPointer { mutable: true } => (
                format!("{name}: &mut impl ::ptx_runtime::DeviceAnyInOut"),
                format!("::ptx_runtime::DeviceAnyInOut::push_arg({name}, &mut args);"),
            ),
        };
        params.push(param);
        body.push(push);
    }
    // One call for cudarc's result: a `?` and the drop of its events in every method cost rustc
    // more (BENCHMARKS.md, issue 25).
    body.push("::ptx_runtime::launched(unsafe { args.launch(cfg) })".into());
    let doc = match &k.generic {
        Some(g) => format!(
            " Launches `{}` ({}:{}) for the types it is instantiated for: {}.",
            k.name,
            crate::diag::from_package(&k.file).display(),
            k.line,
            g.instances.iter().map(|i| format!("`{}`", instance_type_text(&i.args))).collect::<Vec<_>>().join(", ")
        ),
        None => format!(" Launches `{}` ({}:{}).", k.name, crate::diag::from_package(&k.file).display(), k.line),
    };
    // The kernel's own doc comment first, then where it is defined.
    let mut docs: Vec<&str> = k.doc.iter().flat_map(|d| d.split('\n')).collect();
    if !docs.is_empty() {
        docs.push("");
    }
    docs.extend([doc.as_str(), "", " # Safety", " Nothing checks the kernel's memory accesses: the launch configuration and the"]);
    docs.push(" buffers must match what the kernel reads and writes.");
    let wc = where_clause.as_deref();
    let this = "&self".to_string();
    // The helpers are `#[inline]`: rustc then compiles them where they are called instead of
    // into the host crate, called or not (361 kernels' helpers: rustc on the crate 1.99 -> 1.67 s,
    // BENCHMARKS.md, issue 25).
    let items = [
        Method { docs, inline: false, head: format!("pub unsafe fn {f}"), params, ret: "Result<(), ::ptx_runtime::LaunchError>", body },
        Method {
            docs: vec![
                " A launch configuration for `n` elements, one thread each: the block size that keeps",
                " the most threads resident on this device (computed once, then cached).",
            ],
            inline: true,
            head: format!("pub fn {config}"),
            params: vec![this.clone(), "n: usize".into()],
            ret: "Result<LaunchConfig, DriverError>",
            body: config_body,
        },
        Method {
            docs: vec![
                " The occupancy-derived plan for blocks with `dynamic_shared_bytes` of dynamic shared",
                " memory (it can lower how many fit on an SM): block size, blocks per SM, occupancy;",
                " `for_elements(n)` and `resident_grid()` make its launch configurations.",
            ],
            inline: true,
            head: format!("pub fn {plan}"),
            params: vec![this, "dynamic_shared_bytes: u32".into()],
            ret: "Result<LaunchPlan, DriverError>",
            body: plan_body,
        },
    ];
    for m in &items {
        m.write(out, &generics, wc);
    }
}

/// One method of `impl Kernels`, as text; `head` is `pub fn name`.
struct Method<'a> {
    docs: Vec<&'a str>,
    inline: bool,
    head: String,
    params: Vec<String>,
    ret: &'a str,
    body: Vec<String>,
}

const DEVICE_REPR: &str = "::ptx_runtime::cudarc::driver::DeviceRepr";

impl Method<'_> {
    /// Appends the method as rustfmt lays one out: its signature on one line where it fits in
    /// 100 columns, else a parameter a line (and a type parameter a line where those do not fit).
    fn write(&self, out: &mut String, generics: &[String], where_clause: Option<&str>) {
        use std::fmt::Write;
        let Method { docs, inline, head, params, ret, body } = self;
        for d in docs {
            let _ = writeln!(out, "    ///{d}");
        }
        if *inline {
            out.push_str("    #[inline]\n");
        }
        let generics_line = match generics {
            [] => String::new(),
            _ => format!("<{}>", generics.join(", ")),
        };
        let one_line = format!("    {head}{generics_line}({}) -> {ret} {{", params.join(", "));
        if where_clause.is_none() && one_line.len() <= 100 {
            out.push_str(&one_line);
        } else {
            if format!("    {head}{generics_line}(").len() <= 100 {
                let _ = writeln!(out, "    {head}{generics_line}(");
            } else {
                let _ = writeln!(out, "    {head}<");
                for g in generics {
                    let _ = writeln!(out, "        {g},");
                }
                out.push_str("    >(\n");
            }
            for p in params {
                let _ = writeln!(out, "        {p},");
            }
            let _ = write!(out, "    ) -> {ret}");
            match where_clause {
                Some(w) => {
                    let _ = write!(out, "\n    where\n        {w},\n    {{");
                }
                None => out.push_str(" {"),
            }
        }
        out.push('\n');
        for line in body {
            let _ = writeln!(out, "        {line}");
        }
        out.push_str("    }\n");
    }
}

/// A parameter's Rust type as the signature reader spelled it (no spaces), `()` where that is not a
/// type (as before: the kernel still launches by name).
fn rust_type(text: &str) -> String {
    match syn::parse_str::<syn::Type>(text) {
        Ok(_) => text.to_string(),
        Err(_) => "()".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::signature::{Generic, Instance, Param, Scalar};

    pub(crate) fn sample() -> Vec<Unit> {
        let sig = |name: &str, params: Vec<(&str, ParamType)>| KernelSig {
            name: name.into(),
            params: params.into_iter().map(|(n, ty)| Param { name: n.into(), ty }).collect(),
            file: "src/lib.rs".into(),
            line: 7,
            mangled: false,
            untyped: None,
            doc: vec![" `y = a * x + y` for `i < n`.".into()],
            generic: None,
            ptx_name: None,
        };
        vec![Unit {
            name: "saxpy_kernels".into(),
            kernels: vec![
                sig(
                    "saxpy",
                    vec![
                        ("n", ParamType::Scalar(Scalar::U32)),
                        ("a", ParamType::Scalar(Scalar::F32)),
                        ("x", ParamType::Pointer { mutable: false, elem: "f32".into() }),
                        ("y", ParamType::Pointer { mutable: true, elem: "f32".into() }),
                    ],
                ),
                sig("type", vec![("p", ParamType::ByValue { ty: "Pair".into() })]),
                KernelSig {
                    generic: Some(Generic {
                        type_params: vec!["T".into()],
                        instances: vec![
                            Instance { args: vec!["f32".into()], ptx_name: "_Z3addIfEvPT_PKS0_i".into() },
                            Instance { args: vec!["::ptx_runtime::half::f16".into()], ptx_name: "_Z3addI6__halfEvPT_PKS1_i".into() },
                        ],
                    }),
                    ..sig(
                        "add",
                        vec![
                            ("y", ParamType::Pointer { mutable: true, elem: "T".into() }),
                            ("x", ParamType::Pointer { mutable: false, elem: "T".into() }),
                            ("n", ParamType::Scalar(Scalar::I32)),
                        ],
                    )
                },
                KernelSig {
                    generic: Some(Generic {
                        type_params: vec!["T".into(), "U".into()],
                        instances: vec![Instance { args: vec!["f32".into(), "u32".into()], ptx_name: "cast_f32_u32".into() }],
                    }),
                    ..sig(
                        "cast",
                        vec![
                            ("x", ParamType::Pointer { mutable: false, elem: "T".into() }),
                            ("y", ParamType::Pointer { mutable: true, elem: "U".into() }),
                            ("fill", ParamType::ByValue { ty: "U".into() }),
                        ],
                    )
                },
            ],
            images: vec![
                EmbeddedImage {
                    arch: Arch::sm(80),
                    kind: ArtifactKind::Ptx,
                    file: "ptx-build/k/sm_80.ptx".into(),
                    ptx_isa: Some("7.0".into()),
                },
                EmbeddedImage { arch: Arch::sm(80), kind: ArtifactKind::Cubin, file: "ptx-build/k/sm_80.cubin".into(), ptx_isa: None },
            ],
            struct_layouts: vec![StructLayout { kernel: "type".into(), param: 0, size: 8, align: 4 }],
            untyped: vec!["_Z6gatherPPKfPf".into()],
            // `saxpy` with `launch_bounds(256)`, and one instance of a generic kernel with one.
            launch_bounds: vec![("saxpy".into(), 256), ("_Z3addI6__halfEvPT_PKS1_i".into(), 128)],
        }]
    }

    /// The whole generated module against its golden file
    /// (`src/snapshots/ptx_build__codegen__tests__saxpy_module.snap`). After an intended change,
    /// regenerate it with `INSTA_UPDATE=always cargo test -p ptx-build codegen` (or
    /// `cargo insta review`) and read the diff.
    #[test]
    fn generated_module_matches_the_golden_file() {
        insta::assert_snapshot!("saxpy_module", generate(&sample()).unwrap());
    }

    #[test]
    fn void_pointers_take_any_device_buffer() {
        let mut units = sample();
        let mut q = units[0].kernels[0].clone();
        q.name = "dequantize".into();
        q.params = vec![
            Param { name: "vx".into(), ty: ParamType::AnyPointer { mutable: false } },
            Param { name: "vy".into(), ty: ParamType::AnyPointer { mutable: true } },
        ];
        units[0].kernels.push(q);
        let code = generate(&units).unwrap().replace(char::is_whitespace, "");
        assert!(code.contains("vx:&impl::ptx_runtime::DeviceAnyIn,vy:&mutimpl::ptx_runtime::DeviceAnyInOut"), "{code}");
        assert!(
            code.contains("::ptx_runtime::DeviceAnyIn::push_arg(vx,&mutargs);::ptx_runtime::DeviceAnyInOut::push_arg(vy,&mutargs);"),
            "{code}"
        );
    }

    #[test]
    fn struct_checks_name_the_kernel_and_parameter() {
        let code = generate(&sample()).unwrap();
        assert!(
            code.contains(
                "parameter `p` of kernel `type`) has another size or alignment on the host than in the PTX (8 bytes, aligned to 4)"
            ),
            "{code}"
        );
    }

    #[test]
    fn a_name_defined_twice_names_both_places() {
        let mut units = sample();
        let mut other = units[0].clone();
        other.name = "other".into();
        other.kernels[0].file = "cuda/saxpy.cu".into();
        other.kernels[0].line = 3;
        units.push(other);
        let e = generate(&units).unwrap_err().to_string();
        assert!(e.contains("kernel `saxpy` is defined twice: in src/lib.rs:7 and in cuda/saxpy.cu:3"), "{e}");
    }

    #[test]
    fn a_kernel_named_like_a_config_method_is_refused() {
        let mut units = sample();
        let mut clash = units[0].kernels[0].clone();
        clash.name = "saxpy_config".into();
        clash.line = 20;
        units[0].kernels.push(clash);
        let e = generate(&units).unwrap_err().to_string();
        assert!(e.contains("saxpy_config (the launch-configuration method `saxpy_config` of kernel `saxpy`)"), "{e}");
        assert!(e.contains("src/lib.rs:7") && e.contains("src/lib.rs:20"), "{e}");
    }

    #[test]
    fn a_kernel_named_like_a_method_of_kernels_is_refused_at_its_line() {
        for name in ["function", "launch_builder", "load"] {
            let mut units = sample();
            units[0].kernels[0].name = name.into();
            let e = generate(&units).unwrap_err().to_string();
            assert!(e.contains(&format!("src/lib.rs:7: kernel `{name}`")) && e.contains("is a method of the generated `Kernels`"), "{e}");
            assert!(e.contains("rename the kernel"), "{e}");
        }
    }
}
