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
use crate::embed::functions::FunctionMarker;
use crate::embed::signature::{KernelSig, Pack, ParamType};
use crate::error::{Error, Result};
use crate::report::ArtifactKind;
use instances::{instance_trait, instance_type_text, listed_instances, TraitNames};

/// One embedded image, a file under `OUT_DIR`.
#[derive(Clone, Debug)]
pub struct EmbeddedImage {
    pub arch: Arch,
    pub kind: ArtifactKind,
    /// Path relative to `OUT_DIR`, with `/` separators.
    pub file: String,
    /// `.version` of PTX images.
    pub ptx_isa: Option<String>,
    /// The symbol and length of its bytes in the unit's image object (see [`super::linked`]);
    /// `None`: embedded from `file` with `include_bytes!`.
    pub linked: Option<(String, usize)>,
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
    /// The device functions its kernel templates are instantiated with, each a marker type in
    /// the unit's module.
    pub functions: Vec<FunctionMarker>,
    /// The object its images are linked from, where they are not included.
    pub object: Option<super::linked::ImageObject>,
    /// PTX entries that some archs' images lack (the source leaves them out for those archs,
    /// `#if __CUDA_ARCH__ >= 800`), with the archs whose images have them.
    pub partial: Vec<(String, Vec<Arch>)>,
    /// PTX entries that sync their grid: launched cooperatively.
    pub cooperative: Vec<String>,
}

impl Unit {
    /// What the method's docs say of how it launches: which images have the kernel
    /// ([`Unit::arch_note`]) and whether it is launched cooperatively.
    fn launch_note(&self, k: &KernelSig) -> Option<String> {
        let cooperative = k.ptx_names().iter().any(|n| self.cooperative.iter().any(|c| c == n)).then_some(COOPERATIVE_NOTE);
        match (self.arch_note(k), cooperative) {
            (Some(archs), Some(c)) => Some(format!("{archs}{c}")),
            (archs, c) => archs.or(c.map(str::to_string)),
        }
    }

    /// The doc sentence of kernel `k`'s method where some images lack it (or some instances):
    /// the archs that have it, or for instances that differ, each instance's.
    fn arch_note(&self, k: &KernelSig) -> Option<String> {
        let archs_of = |name: &str| self.partial.iter().find(|(n, _)| n == name).map(|(_, a)| a.as_slice());
        let names = k.ptx_names();
        if names.iter().all(|n| archs_of(n).is_none()) {
            return None;
        }
        let images = |archs: &[Arch]| {
            let list: Vec<String> = archs.iter().map(Arch::to_string).collect();
            format!("the {} image{}", list.join(", "), if list.len() > 1 { "s" } else { "" })
        };
        let what = match (&k.generic, archs_of(names[0])) {
            // Every instance in the same images (or one kernel).
            (_, Some(first)) if names.iter().all(|n| archs_of(n) == Some(first)) => format!("It is only in {}", images(first)),
            (Some(g), _) => {
                // Instances grouped by the archs that have them, in the order they come.
                let mut groups: Vec<(&[Arch], Vec<String>)> = Vec::new();
                for i in &g.instances {
                    let Some(archs) = archs_of(&i.ptx_name) else { continue };
                    let shown = match g.const_params.is_empty() {
                        true => format!("`{}`", instance_type_text(&i.args)),
                        false => format!("`<{}>`", g.instance_args(i).join(", ").replace("self::", "")),
                    };
                    match groups.iter_mut().find(|(a, _)| *a == archs) {
                        Some((_, shown_here)) => shown_here.push(shown),
                        None => groups.push((archs, vec![shown])),
                    }
                }
                let parts: Vec<String> = groups
                    .iter()
                    .map(|(archs, shown)| {
                        format!("{} {} only in {}", shown.join(", "), if shown.len() == 1 { "is" } else { "are" }, images(archs))
                    })
                    .collect();
                format!("Of its instances, {}", parts.join("; "))
            }
            // Not generic: one PTX name, which the first arm took.
            (None, _) => return None,
        };
        Some(format!(
            " {what} (its source leaves it out for other archs): on a GPU that loads another image the launch returns `LaunchError::NotInImage`."
        ))
    }

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

/// A kernel in several .cu modules from one definition (a helper kernel of a shared header:
/// llm.c's C++ ones, dfdx's `extern "C"` `fill_with_*`) is one kernel per loaded module; its
/// methods get the module's name in front (`attention_permute`, `layernorm_permute`) instead of
/// clashing. C++ kernels are always taken so (their overloads differ by mangled name); an
/// `extern "C"` or Rust name defined at two places stays as written: that is the error
/// [`generate`] reports.
pub fn prefix_shared_names(units: &mut [Unit]) {
    let is_cxx = |k: &KernelSig| {
        k.ptx_name.is_some() || k.generic.as_ref().is_some_and(|g| g.instances.iter().all(|i| i.ptx_name.starts_with("_Z")))
    };
    // Per name: the units that have it (a name twice in one unit is not shared between
    // modules: that is the error `generate` reports), and whether all of them at one `file:line`.
    type Seen = (std::collections::BTreeSet<usize>, Option<(std::path::PathBuf, u32)>);
    let mut seen: std::collections::BTreeMap<String, Seen> = Default::default();
    for (i, k) in units.iter().enumerate().flat_map(|(i, u)| u.kernels.iter().map(move |k| (i, k))) {
        let at = (k.file.clone(), k.line);
        seen.entry(k.name.clone())
            .and_modify(|(units, place)| {
                units.insert(i);
                if place.as_ref() != Some(&at) {
                    *place = None;
                }
            })
            .or_insert(([i].into(), Some(at)));
    }
    let shared = |k: &KernelSig| matches!(&seen[&k.name], (units, place) if units.len() > 1 && (place.is_some() || is_cxx(k)));
    for u in units.iter_mut() {
        let unit = u.name.clone();
        for k in u.kernels.iter_mut().filter(|k| shared(k)) {
            k.doc.push(format!(" Defined in several .cu modules: this is the one of `{unit}`."));
            // The method is renamed, the PTX entry it launches is not.
            if k.ptx_name.is_none() && k.generic.is_none() {
                k.ptx_name = Some(k.name.clone());
            }
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
    let mut typed: Vec<(usize, &KernelSig, Option<String>)> = Vec::new();
    for u in units {
        for k in &u.kernels {
            typed.push((next_index, k, u.launch_note(k)));
            next_index += k.ptx_names().len();
        }
        next_index += u.untyped.len();
    }
    let trait_names = TraitNames::new(units.iter().flat_map(|u| u.kernels.iter()));
    let instance_traits = units.iter().flat_map(|u| u.kernels.iter()).filter_map(|k| instance_trait(k, &trait_names));
    // The host type of a by-value struct is only known to the host compiler: assert its layout
    // there, once per type and layout (dfdx passes one op struct to six kernels: one error, not six).
    let mut asserted = std::collections::HashSet::new();
    let size_checks: Vec<_> = units.iter().flat_map(|u| {
        u.struct_layouts.iter().filter_map(move |l| {
            let k = u.kernels.iter().find(|k| k.name == l.kernel)?;
            let p = k.params.get(l.param)?;
            let ParamType::ByValue { ty } = &p.ty else { return None };
            // A type parameter has one layout per instance; cudarc's own impls cover those.
            if k.generic.as_ref().is_some_and(|g| g.type_params.contains(ty)) {
                return None;
            }
            let key = (ty.clone(), l.size, l.align);
            let ty: syn::Type = syn::parse_str(ty).ok()?;
            let (size, align) = (l.size as usize, l.align as usize);
            let msg = format!(
                "`{}` (parameter `{}` of kernel `{}`) has another size or alignment on the host than in the PTX ({size} bytes, aligned to {align}): use the same #[repr(C)] type on both sides",
                quote!(#ty).to_string().replace(' ', ""),
                p.name,
                l.kernel
            );
            let check = quote! {
                const _: () = assert!(::core::mem::size_of::<#ty>() == #size && ::core::mem::align_of::<#ty>() == #align, #msg);
            };
            Some((key, check))
        })
    })
    .filter(|(key, _)| asserted.insert(key.clone()))
    .map(|(_, check)| check)
    .collect();
    let all_names: Vec<&str> =
        units.iter().flat_map(|u| u.kernels.iter().flat_map(|k| k.ptx_names()).chain(u.untyped.iter().map(String::as_str))).collect();
    let unit_modules = units.iter().map(|u| {
        let m = format_ident!("{}", u.name);
        quote! { ::ptx_runtime::EmbeddedModule { images: #m::IMAGES, functions: #m::FUNCTIONS, bounds: #m::BOUNDS, partial: #m::PARTIAL, cooperative: #m::COOPERATIVE } }
    });
    let any_generic = units.iter().flat_map(|u| u.kernels.iter()).any(|k| k.generic.is_some());
    let sealed = any_generic.then(|| {
        quote! {
            /// Seals the instance traits: only the generated impls exist, so a launch can only
            /// pick a function the PTX has.
            #[allow(dead_code)]
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
        use ::ptx_runtime::cudarc::driver::{CudaContext, CudaFunction, CudaStream, LaunchConfig, PushKernelArg};
        #[allow(unused_imports)]
        use ::ptx_runtime::{DeviceIn, DeviceInOut, Image, KernelSet, LaunchPlan, LoadError, Policy};
        use ::std::sync::Arc;

        /// Every kernel of this module, by name.
        #[allow(dead_code)]
        pub const KERNEL_NAMES: &[&str] = &[#(#all_names),*];

        /// Every embedded PTX module (a Rust kernel crate's, one per .cu file), with its images.
        #[allow(dead_code)]
        pub static MODULES: &[::ptx_runtime::EmbeddedModule] = &[#(#unit_modules),*];

        #(#unit_mods)*

        #(#size_checks)*

        #sealed

        #(#instance_traits)*

        /// The embedded kernels, loaded on one device, with one launch method each.
        #[derive(Debug, Clone)]
        #[allow(dead_code)]
        pub struct Kernels {
            /// Every module and kernel function (in [`KERNEL_NAMES`]'s order), with launch plans.
            _set: KernelSet,
        }

        // A binary that includes the module (`mod kernels { include_kernels!(); }` in main.rs)
        // uses some of it: the rest is not the user's dead code.
        #[allow(dead_code)]
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
                let _set = KernelSet::load(ctx, MODULES, policy)?;
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

            /// Lets kernel `name` (its PTX name) launch with `bytes` of dynamic shared memory a
            /// block, raising its limit where that is over 48 KiB: for [`Self::launch_builder`]
            /// launches (typed launches do it themselves). Fails, with the numbers, where the
            /// device has less.
            pub fn allow_dynamic_shared_memory(&self, name: &str, bytes: u32) -> Result<(), ::ptx_runtime::LaunchError> {
                self._set.allow_dynamic_shared_memory(name, bytes)
            }

            /// The image each PTX module was loaded from (`sm_90 cubin`, `sm_80 PTX`).
            pub fn images(&self) -> Vec<&'static Image> {
                self._set.images()
            }

            /// The occupancy-derived plan of kernel `name` (its PTX name, see [`KERNEL_NAMES`])
            /// for blocks with `dynamic_shared_bytes` of dynamic shared memory, within its launch
            /// bound: block size, blocks per SM, occupancy. Computed once, then cached; what a
            /// typed launch with `Grid::elements` or `Grid::resident` uses.
            pub fn plan_of(&self, name: &str, dynamic_shared_bytes: u32) -> Result<LaunchPlan, ::ptx_runtime::LaunchError> {
                self._set.plan(name, dynamic_shared_bytes)
            }

            /// The launch configuration a typed launch of kernel `name` with `grid` uses (for
            /// [`Self::launch_builder`] launches).
            pub fn config_of(&self, name: &str, grid: impl Into<::ptx_runtime::Grid>) -> Result<LaunchConfig, ::ptx_runtime::LaunchError> {
                self._set.config(name, grid)
            }
        }
    };
    let mut text = format!("// @generated by ptx-build: rewritten by every build; do not edit.\n\n{}", pretty(file)?);
    // Written as text, not quoted and printed like the rest: in a build script (compiled
    // without optimisation) syn's parse and prettyplease's print of 361 kernels' methods took
    // 0.5 s after the last nvcc run; the text takes 60 ms (BENCHMARKS.md, issue 25).
    text.push_str("\n// Methods carry the kernels' own names (`mul_mat_q4_K`).\n");
    // Type and const parameters carry the C++ template's names (`src_t`, `ncols`).
    text.push_str(
        "#[allow(clippy::too_many_arguments, non_snake_case, non_camel_case_types, non_upper_case_globals, dead_code)]\nimpl Kernels {\n",
    );
    let mut shapes = std::collections::BTreeSet::new();
    for (index, k, arch_note) in &typed {
        shapes.insert(method(*index, k, arch_note.as_deref(), &trait_names, &mut text));
    }
    text.push_str("}\n");
    for kinds in &shapes {
        text.push('\n');
        text.push_str(&launch::function(kinds));
    }
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

/// Methods of `Kernels` itself: a typed kernel of one of these names would collide with it
/// (a .cu file's is launched by name instead: `unit`; a Rust kernel's is refused here).
pub(crate) const RESERVED_METHODS: &[&str] =
    &["load", "load_ptx_only", "load_with", "images", "function", "launch_builder", "allow_dynamic_shared_memory", "plan_of", "config_of"];

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
    // Kernel names are C identifiers; a Rust keyword gets the raw form, except the few that
    // have none (`self`, `super`, `crate`, `Self`, `_`: C++ parameter names all), which get a `_`.
    syn::parse_str::<Ident>(name).unwrap_or_else(|_| match name {
        "self" | "Self" | "super" | "crate" | "_" => format_ident!("{name}_"),
        _ => Ident::new_raw(name, Span::call_site()),
    })
}

fn unit_module(u: &Unit) -> TokenStream {
    let m = format_ident!("{}", u.name);
    let mut consts = Vec::new();
    let mut externs = Vec::new();
    // Symbols declared so far: two equal images (`sm_80` and `compute_80` make the same PTX)
    // are one symbol, which a second declaration would define twice.
    let mut declared: Vec<&str> = Vec::new();
    let mut images = Vec::new();
    for img in &u.images {
        let arch_name = img.arch.to_string();
        let upper = arch_name.to_uppercase();
        let path = format!("/{}", img.file);
        // Linked: the symbol of the unit's image object (a PTX image is linked only where it is
        // UTF-8, `unit::unit` checks); included: the file in OUT_DIR.
        let (bytes, text) = match &img.linked {
            Some((symbol, len)) => {
                if !declared.contains(&symbol.as_str()) {
                    declared.push(symbol);
                    let doc = format!(" The bytes of `$OUT_DIR{path}`, linked from the module's image object.");
                    let symbol = format_ident!("{symbol}");
                    externs.push(quote! { #[doc = #doc] static #symbol: [u8; #len]; });
                }
                let symbol = format_ident!("{symbol}");
                (quote! { unsafe { &#symbol } }, quote! { unsafe { ::core::str::from_utf8_unchecked(&#symbol) } })
            }
            None => (quote! { include_bytes!(concat!(env!("OUT_DIR"), #path)) }, quote! { include_str!(concat!(env!("OUT_DIR"), #path)) }),
        };
        let (c, kind) = match img.kind {
            ArtifactKind::Ptx => {
                let c = format_ident!("PTX_{}", upper);
                consts.push(quote! { pub static #c: &str = #text; });
                (quote! { #c.as_bytes() }, quote! { ::ptx_runtime::ImageKind::Ptx })
            }
            ArtifactKind::Cubin => {
                let c = format_ident!("CUBIN_{}", upper);
                consts.push(quote! { pub static #c: &[u8] = #bytes; });
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
    let externs = if externs.is_empty() {
        quote!()
    } else {
        quote! { unsafe extern "C" { #(#externs)* } }
    };
    let names: Vec<&str> = u.kernels.iter().flat_map(|k| k.ptx_names()).collect();
    let functions: Vec<&str> = names.iter().copied().chain(u.untyped.iter().map(String::as_str)).collect();
    let bounds = functions.iter().map(|f| u.max_threads(f));
    let partial = u.partial.iter().map(|(name, _)| name.as_str());
    let cooperative = &u.cooperative;
    let doc = format!(" PTX and cubins of `{}`, for users who load or launch by hand.", u.name);
    let markers = u.functions.iter().map(|f| {
        let name: TokenStream = f.name.parse().unwrap_or_else(|_| quote!(function));
        let doc = format!(" The device function `{}`, as a template argument of this module's kernels.", f.function);
        quote! {
            #[doc = #doc]
            #[derive(Debug, Clone, Copy)]
            pub struct #name;
        }
    });
    quote! {
        #[doc = #doc]
        #[allow(non_snake_case, non_camel_case_types, dead_code)]
        pub mod #m {
            #externs
            #(#consts)*
            #(#markers)*
            /// Every embedded image, for [`ptx_runtime::load`].
            pub static IMAGES: &[::ptx_runtime::Image] = &[#(#images),*];
            /// The kernels of this module.
            pub const KERNELS: &[&str] = &[#(#names),*];
            /// Every function the module's `Kernels` loads, typed ones first, in the order of
            /// [`super::KERNEL_NAMES`].
            pub const FUNCTIONS: &[&str] = &[#(#functions),*];
            /// The launch bound (`.maxntid`) of each function, in `FUNCTIONS`' order; 0 for none.
            pub const BOUNDS: &[u32] = &[#(#bounds),*];
            /// The functions some images lack (the source leaves them out for those archs).
            pub const PARTIAL: &[&str] = &[#(#partial),*];
            /// The functions that sync their grid (cooperative groups): launched cooperatively.
            pub const COOPERATIVE: &[&str] = &[#(#cooperative),*];
        }
    }
}

/// A kernel's launch method, appended to `out` as Rust source; `index` is the place of its
/// (first) function in the `KernelSet`, which knows each function's launch bound; `arch_note`
/// says which images have it where some lack it. Returns the kinds of its parameters: the
/// [`launch`] function its body calls.
fn method(index: usize, k: &KernelSig, arch_note: Option<&str>, names: &TraitNames, out: &mut String) -> String {
    let f = ident(&k.name).to_string();
    // A generic kernel's method is generic too; the instance trait picks the function.
    let (generics, where_clause, pick) = match &k.generic {
        Some(g) if !g.const_params.is_empty() => {
            let (carrier, tr) = names.instance(&k.name);
            let mut generics = Vec::new();
            let mut args = Vec::new();
            for p in instances::spellings(g) {
                match p {
                    instances::Spelling::Type(id) => {
                        generics.push(format!("{id}: {DEVICE_REPR}"));
                        args.push(id.to_string());
                    }
                    instances::Spelling::Function(id) => {
                        generics.push(id.to_string());
                        args.push(id.to_string());
                    }
                    instances::Spelling::Const(id, ty) => {
                        generics.push(format!("const {id}: {ty}"));
                        // In braces: a bare name is read as a type first, and a module or
                        // type of that name in scope (a .cu module `norm` beside ggml's
                        // `template <bool norm>`) would be taken instead of the parameter.
                        args.push(format!("{{ {id} }}"));
                    }
                }
            }
            let ty = format!("{carrier}<{}>", args.join(", "));
            (generics, Some(format!("{ty}: {tr}")), format!("<{ty} as {tr}>::__instance(sealed::Token)"))
        }
        Some(g) => {
            let tr = names.types(&k.name);
            let tps: Vec<String> = g.type_params.iter().map(|t| ident(t).to_string()).collect();
            match tps.as_slice() {
                [t] => (vec![format!("{t}: {tr} + {DEVICE_REPR}")], None, format!("<{t} as {tr}>::__instance(sealed::Token)")),
                _ => {
                    let each: Vec<String> = tps.iter().map(|t| format!("{t}: {DEVICE_REPR}")).collect();
                    let tuple = format!("({})", tps.join(", "));
                    (each, Some(format!("{tuple}: {tr}")), format!("<{tuple} as {tr}>::__instance(sealed::Token)"))
                }
            }
        }
        None => (Vec::new(), None, String::new()),
    };
    // A generic kernel's entry is the kernel's first index plus the instance's (`0 + instance`
    // is clippy's `identity_op` in the user's crate).
    let (mut body, slot) = match k.generic {
        Some(_) if index == 0 => (vec![format!("let instance: usize = {pick};")], "instance".to_string()),
        Some(_) => (vec![format!("let instance = {pick};")], format!("{index}usize + instance")),
        None => (vec![], format!("{index}usize")),
    };
    // The kernel's own parameter names, but never one of the method's (a C kernel may well have
    // a parameter called `stream`), nor one twice: an unnamed parameter's `arg0` beside a named
    // `arg0`, `super` and `super_` (both `super_` in Rust) each get one more `_`.
    let mut taken: Vec<String> = RESERVED_NAMES.iter().map(|n| n.to_string()).collect();
    if let Some(g) = &k.generic {
        taken.extend(g.const_params.iter().map(|c| instances::const_param_ident(&c.name).to_string()));
    }
    // Paths in full: a user's type named `Grid` (a stencil's by-value struct) must stay theirs.
    let mut params = vec!["&self".to_string(), "stream: &CudaStream".into(), "grid: impl Into<::ptx_runtime::Grid>".into()];
    // A type parameter as its generic parameter is spelled (`Self_`, `r#type`): `Self` would be
    // `Kernels`, and `type` no type at all.
    let type_params = k.generic.as_ref().map_or(&[][..], |g| &g.type_params[..]);
    let rust_type = |t: &str| if type_params.iter().any(|p| p == t) { ident(t).to_string() } else { rust_type(t) };
    // The arguments go to the launch function of the parameters' kinds (see [`launch`]).
    let mut kinds = String::new();
    let mut passed = Vec::new();
    let mut arg_name = |name: &str| {
        let mut name = ident(name).to_string();
        if launch::is_reserved(&name) {
            name.push('_');
        }
        while taken.contains(&name) {
            name.push('_');
        }
        taken.push(name.clone());
        name
    };
    // A buffer is `&impl DeviceIn<T>` (`dispatch`), or `&dyn DeviceIn<T>` in a parameter
    // pack's array, so that one launch can mix buffers and views.
    let host_type = |ty: &ParamType, dispatch: &str| match ty {
        ParamType::Scalar(s) => s.rust_name().to_string(),
        ParamType::ByValue { ty } => rust_type(ty),
        ParamType::Pointer { mutable: false, elem } => format!("&{dispatch} DeviceIn<{}>", rust_type(elem)),
        ParamType::Pointer { mutable: true, elem } => format!("&mut {dispatch} DeviceInOut<{}>", rust_type(elem)),
        // `void *`: any buffer or view, of any element type, or a raw device address.
        ParamType::AnyPointer { mutable: false } => format!("&{dispatch} ::ptx_runtime::DeviceAnyIn"),
        ParamType::AnyPointer { mutable: true } => format!("&mut {dispatch} ::ptx_runtime::DeviceAnyInOut"),
        // `float **`: a buffer of the addresses, as cudarc gives them (`CUdeviceptr`).
        ParamType::Addresses { mutable: false, .. } => format!("&{dispatch} DeviceIn<u64>"),
        ParamType::Addresses { mutable: true, .. } => format!("&mut {dispatch} DeviceInOut<u64>"),
        // Never a parameter of the method (below): the launch passes it.
        ParamType::Tag { .. } => "()".into(),
    };
    // What the method's types no longer say: what a buffer of `u64` holds, which parameters
    // the launch passes itself.
    let mut notes = Vec::new();
    for p in &k.params {
        kinds.push(launch::kind(&p.ty));
        if let ParamType::Tag { written } = &p.ty {
            notes.push(format!(" The kernel's `{written}` is passed for you: an empty struct, whose value is its type."));
            continue;
        }
        let name = arg_name(&p.name);
        if let ParamType::Addresses { pointee, .. } = &p.ty {
            notes.push(format!(" `{name}`: device addresses (`u64`, as cudarc's `DevicePtr::device_ptr` gives them), each a `{pointee}`."));
        }
        params.push(format!("{name}: {}", host_type(&p.ty, "impl")));
        passed.push(name);
    }
    // A parameter pack's elements: one array of the pack's length (`src1s: [&dyn DeviceIn<T>;
    // src1_ptrs]`).
    if let Some((Pack { param, elem: Some(elem), .. }, len)) = k.generic.as_ref().and_then(|g| Some((g.pack.as_ref()?, g.pack_length()?))) {
        let name = arg_name(param);
        params.push(format!("{name}: [{}; {}]", host_type(elem, "dyn"), instances::const_param_ident(&len.name)));
        kinds.push(launch::kind(elem).to_ascii_uppercase());
        passed.push(name);
    }
    // One call resolves the grid for this kernel (its plan, its launch bound) and launches:
    // a `?` and the drop of cudarc's events in every method cost rustc more, and a
    // `<kernel>_config` and `<kernel>_plan` method beside each were two thirds of the module's
    // functions (BENCHMARKS.md, issue 25).
    let args: String = passed.iter().map(|p| format!(", {p}")).collect();
    body.push(format!("unsafe {{ {}(&self._set, {slot}, stream, grid.into(){args}) }}", launch::name(&kinds)));
    let doc = match &k.generic {
        Some(g) if !g.const_params.is_empty() => {
            let mut enums: Vec<String> = g
                .const_params
                .iter()
                .filter_map(|c| Some(format!(" `{}` is a `{}` by its integer value.", c.name, c.cxx_type.as_deref()?)))
                .collect();
            if let (Some(Pack { param, elem: Some(_), .. }), Some(len)) = (&g.pack, g.pack_length()) {
                enums.push(format!(" `{param}` holds the elements of parameter pack `{}`, as many as its length.", len.name));
            }
            format!(
                " Launches `{}` ({}:{}) with the template arguments it is instantiated with: {}.{}",
                k.name,
                crate::diag::from_package(&k.file).display(),
                k.line,
                listed_instances(g),
                enums.concat()
            )
        }
        Some(g) => format!(
            " Launches `{}` ({}:{}) for the types it is instantiated for: {}.",
            k.name,
            crate::diag::from_package(&k.file).display(),
            k.line,
            g.instances.iter().map(|i| format!("`{}`", instance_type_text(&i.args))).collect::<Vec<_>>().join(", ")
        ),
        None => format!(" Launches `{}` ({}:{}).", k.name, crate::diag::from_package(&k.file).display(), k.line),
    };
    // The kernel's own doc comment first (its summary stays the method's), then where it is
    // defined and how `grid` is read, then one `# Safety` section: the kernel's own where it has
    // one, with the launch's caveat at its end (before any section after it), else ours.
    let own: Vec<&str> = k.doc.iter().flat_map(|d| d.split('\n')).collect();
    let safety_at = own.iter().position(|l| l.trim() == "# Safety").unwrap_or(own.len());
    // The next heading: a `# ` line outside code fences (a doctest's hidden `# let n = 4;` is code).
    let mut fenced = false;
    let next_heading = own[safety_at..].iter().skip(1).position(|l| {
        fenced ^= l.trim_start().starts_with("```");
        !fenced && l.trim_start().starts_with("# ")
    });
    let safety_end = next_heading.map_or(own.len(), |n| safety_at + 1 + n);
    let (before, safety, after) = (&own[..safety_at], &own[safety_at..safety_end], &own[safety_end..]);
    let mut docs: Vec<&str> = without_trailing_blanks(before);
    if !docs.is_empty() {
        docs.push("");
    }
    docs.push(doc.as_str());
    if let Some(note) = arch_note {
        docs.extend(["", note]);
    }
    docs.extend(["", " `grid`: a `LaunchConfig`, or a `ptx_runtime::Grid` (`Grid::elements(n)`, `Grid::resident()`)"]);
    docs.extend([" that this kernel's occupancy-derived plan fills in.", ""]);
    if !notes.is_empty() {
        docs.extend(notes.iter().map(String::as_str));
        docs.push("");
    }
    if safety.is_empty() {
        docs.push(" # Safety");
    } else {
        docs.extend(without_trailing_blanks(safety));
        docs.push("");
    }
    docs.push(" Nothing checks the kernel's memory accesses: the launch configuration and the");
    docs.push(" buffers must match what the kernel reads and writes.");
    if !after.is_empty() {
        docs.push("");
        docs.extend(without_trailing_blanks(after));
    }
    let m = Method { docs, head: format!("pub unsafe fn {f}"), params, ret: "Result<(), ::ptx_runtime::LaunchError>", body };
    m.write(out, &generics, where_clause.as_deref());
    kinds
}

/// The docs of a kernel that syncs its grid.
const COOPERATIVE_NOTE: &str = " Launched cooperatively: the kernel syncs its whole grid (cooperative groups' `this_grid().sync()`), so every block must be resident at once; `Grid::resident()` is such a grid, and a larger one fails with `LaunchError::CooperativeTooLarge`.";

/// Names a launch method binds itself: a kernel's parameters and const parameters of these
/// names get a `_` after them.
const RESERVED_NAMES: &[&str] = &["stream", "grid", "instance"];

/// `lines` without the blank lines at its end.
fn without_trailing_blanks<'a>(lines: &[&'a str]) -> Vec<&'a str> {
    let end = lines.iter().rposition(|l| !l.trim().is_empty()).map_or(0, |i| i + 1);
    lines[..end].to_vec()
}

/// One method of `impl Kernels`, as text; `head` is `pub fn name`.
struct Method<'a> {
    docs: Vec<&'a str>,
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
        let Method { docs, head, params, ret, body } = self;
        for d in docs {
            let _ = writeln!(out, "    ///{d}");
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
    // Each spelling parsed once: syn, unoptimised in a build script, took 8 ms of the bench's
    // 1,800 parameters (a few dozen spellings) after the last nvcc run.
    thread_local! {
        static PARSED: std::cell::RefCell<std::collections::HashMap<String, bool>> = Default::default();
    }
    let is_type = PARSED.with(|p| *p.borrow_mut().entry(text.to_string()).or_insert_with(|| syn::parse_str::<syn::Type>(text).is_ok()));
    match is_type {
        true => text.to_string(),
        false => "()".to_string(),
    }
}

mod instances;
mod launch;
#[cfg(test)]
mod tests;
