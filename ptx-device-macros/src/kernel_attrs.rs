//! `#[kernel(launch_bounds(MAX_THREADS, MIN_BLOCKS_PER_SM), max_registers(N), cluster_dims(X, Y, Z))]`:
//! CUDA's `__launch_bounds__`, `__maxnreg__` and `__cluster_dims__`.
//!
//! Rust cannot put an LLVM attribute on a function, so the macro writes a marker next to the
//! kernel: a `#[used]` byte in the section `.ptx.kernel:NAME:ATTRS`, where `ATTRS` are the LLVM
//! function attributes of the NVPTX back end (`nvvm.maxntid=384;nvvm.minctasm=1`). cargo-ptx's
//! link stage (ptx-build's `backend::kernel_ir`) removes the byte and puts the attributes on the
//! kernel, and `llc` writes the PTX directives as nvcc does (`.maxntid 384, 1, 1`,
//! `.minnctapersm 1`, `.maxnreg 64`, `.reqnctapercluster 2, 1, 1`).

use proc_macro2::{Span, TokenStream};
use quote::quote;

/// The section prefix the link stage looks for (ptx-build's `kernel_ir::SECTION`).
pub(crate) const SECTION: &str = ".ptx.kernel:";

/// The most threads a block has on every arch (sm_70 to sm_120).
const MAX_BLOCK: u64 = 1024;
/// The most registers a thread has (`.maxnreg` above it is meaningless).
const MAX_REGISTERS: u64 = 255;

const LAUNCH_BOUNDS_HELP: &str =
    "write `launch_bounds(MAX_THREADS)` or `launch_bounds(MAX_THREADS, MIN_BLOCKS_PER_SM)` with integer literals, as CUDA's `__launch_bounds__(256, 2)`";
const MAX_REGISTERS_HELP: &str = "write `max_registers(N)` with an integer literal from 1 to 255, as CUDA's `__maxnreg__(64)`";
const CLUSTER_HELP: &str =
    "write `cluster_dims(X)`, `cluster_dims(X, Y)` or `cluster_dims(X, Y, Z)` with integer literals, as CUDA's `__cluster_dims__(2, 1, 1)`";
/// The most blocks of a portable cluster (16 needs an opt-in the launch would have to make).
const MAX_CLUSTER: u64 = 8;

/// What a kernel asks of ptxas and the launch.
#[derive(Default)]
pub(crate) struct KernelAttrs {
    /// `.maxntid`: the most threads a block is launched with.
    pub max_threads: Option<u64>,
    /// `.minnctapersm`: the fewest blocks ptxas must fit on one SM (it caps registers to do so).
    pub min_blocks: Option<u64>,
    /// `.maxnreg`: the most registers a thread may use.
    pub max_registers: Option<u64>,
    /// `.reqnctapercluster`: the blocks of a cluster, fixed at compile time.
    pub cluster: Option<[u64; 3]>,
    /// Where `launch_bounds` was written, for a second one.
    launch_bounds_span: Option<Span>,
}

impl KernelAttrs {
    /// The LLVM attributes, `;`-separated (empty when there are none).
    pub(crate) fn llvm(&self) -> String {
        let mut v: Vec<String> =
            [("nvvm.maxntid", self.max_threads), ("nvvm.minctasm", self.min_blocks), ("nvvm.maxnreg", self.max_registers)]
                .into_iter()
                .filter_map(|(key, v)| v.map(|v| format!("{key}={v}")))
                .collect();
        if let Some([x, y, z]) = self.cluster {
            v.push(format!("nvvm.cluster_dim={x},{y},{z}"));
        }
        v.join(";")
    }

    /// The marker for the kernel exported as `name` (nothing without attributes).
    pub(crate) fn marker(&self, name: &str) -> TokenStream {
        let attrs = self.llvm();
        if attrs.is_empty() {
            return TokenStream::new();
        }
        let section = format!("{SECTION}{name}:{attrs}");
        let ident = syn::Ident::new(&format!("__PTX_KERNEL_ATTRS_{name}"), Span::call_site());
        quote! {
            #[used]
            #[doc(hidden)]
            #[allow(non_upper_case_globals)]
            #[link_section = #section]
            static #ident: u8 = 0;
        }
    }

    /// `launch_bounds(..)` after its key: the parenthesized numbers.
    pub(crate) fn parse_launch_bounds(&mut self, key: &syn::Ident, input: syn::parse::ParseStream) -> syn::Result<()> {
        if self.launch_bounds_span.is_some() {
            return Err(syn::Error::new(key.span(), "`launch_bounds` is given twice: keep one"));
        }
        self.launch_bounds_span = Some(key.span());
        let content;
        let paren = syn::parenthesized!(content in input);
        let numbers = numbers(&content, LAUNCH_BOUNDS_HELP)?;
        let threads = match numbers.as_slice() {
            [] => return Err(syn::Error::new(paren.span.join(), format!("`launch_bounds()` needs the most threads a block: {LAUNCH_BOUNDS_HELP}"))),
            [t] | [t, _] => t,
            [_, _, third, ..] => {
                return Err(syn::Error::new(
                    third.1,
                    format!("`launch_bounds` takes two numbers at most (CUDA's third, the most blocks per cluster, has no Rust form): {LAUNCH_BOUNDS_HELP}"),
                ))
            }
        };
        if threads.0 == 0 || threads.0 > MAX_BLOCK {
            let why = if threads.0 == 0 { "a block has at least 1 thread" } else { "a block has at most 1024 threads on every GPU" };
            return Err(syn::Error::new(
                threads.1,
                format!(
                    "`launch_bounds({})`: {why}; give the most threads a block of this kernel is launched with, from 1 to 1024",
                    threads.0
                ),
            ));
        }
        self.max_threads = Some(threads.0);
        if let Some(&(blocks, span)) = numbers.get(1) {
            if blocks == 0 {
                return Err(syn::Error::new(
                    span,
                    format!("`launch_bounds({}, 0)`: the fewest blocks per SM is at least 1; leave it out to let ptxas choose", threads.0),
                ));
            }
            self.min_blocks = Some(blocks);
        }
        Ok(())
    }

    /// `max_registers(..)` after its key.
    pub(crate) fn parse_max_registers(&mut self, key: &syn::Ident, input: syn::parse::ParseStream) -> syn::Result<()> {
        if self.max_registers.is_some() {
            return Err(syn::Error::new(key.span(), "`max_registers` is given twice: keep one"));
        }
        let content;
        let paren = syn::parenthesized!(content in input);
        match numbers(&content, MAX_REGISTERS_HELP)?.as_slice() {
            [(n, span)] if *n == 0 || *n > MAX_REGISTERS => {
                Err(syn::Error::new(*span, format!("`max_registers({n})`: a thread has from 1 to 255 registers; {MAX_REGISTERS_HELP}")))
            }
            [(n, _)] => {
                self.max_registers = Some(*n);
                Ok(())
            }
            _ => Err(syn::Error::new(paren.span.join(), format!("`max_registers` takes one number: {MAX_REGISTERS_HELP}"))),
        }
    }
    /// `cluster_dims(..)` after its key.
    pub(crate) fn parse_cluster_dims(&mut self, key: &syn::Ident, input: syn::parse::ParseStream) -> syn::Result<()> {
        if self.cluster.is_some() {
            return Err(syn::Error::new(key.span(), "`cluster_dims` is given twice: keep one"));
        }
        let content;
        let paren = syn::parenthesized!(content in input);
        let numbers = numbers(&content, CLUSTER_HELP)?;
        if numbers.is_empty() || numbers.len() > 3 {
            return Err(syn::Error::new(paren.span.join(), format!("`cluster_dims` takes one to three sizes: {CLUSTER_HELP}")));
        }
        if let Some((_, span)) = numbers.iter().find(|(n, _)| *n == 0) {
            return Err(syn::Error::new(*span, format!("a cluster's size is at least 1 in every dimension: {CLUSTER_HELP}")));
        }
        let dim = |i: usize| numbers.get(i).map_or(1, |n| n.0);
        let blocks = dim(0) * dim(1) * dim(2);
        if blocks > MAX_CLUSTER {
            return Err(syn::Error::new(
                paren.span.join(),
                format!("a cluster of {blocks} blocks is over the portable limit of {MAX_CLUSTER}"),
            ));
        }
        self.cluster = Some([dim(0), dim(1), dim(2)]);
        Ok(())
    }
}

/// A comma-separated list of integer literals, each with its span.
fn numbers(content: syn::parse::ParseStream, help: &str) -> syn::Result<Vec<(u64, Span)>> {
    let list = syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated(content)?;
    list.iter()
        .map(|e| match e {
            syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(i), .. }) => {
                i.base10_parse::<u64>().map(|n| (n, i.span())).map_err(|_| syn::Error::new(i.span(), format!("`{i}` is too large: {help}")))
            }
            other => Err(syn::Error::new(
                syn::spanned::Spanned::span(other),
                format!("expected an integer literal (ptxas reads the number, so it cannot be a constant's name): {help}"),
            )),
        })
        .collect()
}

/// `#[launch_bounds(..)]` as an attribute of its own, CUDA's spelling: always an error at the
/// attribute that names the form `#[kernel]` takes.
pub(crate) fn standalone(attr: proc_macro2::TokenStream) -> proc_macro2::TokenStream {
    let args = attr.to_string().replace(" ,", ",");
    crate::error(
        Span::call_site(),
        format!("`#[launch_bounds]` is an argument of `#[kernel]`: write `#[kernel(launch_bounds({args}))]` on a `pub unsafe fn` kernel"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(attr: &str) -> syn::Result<KernelAttrs> {
        struct P(KernelAttrs);
        impl syn::parse::Parse for P {
            fn parse(input: syn::parse::ParseStream) -> syn::Result<Self> {
                let mut b = KernelAttrs::default();
                while !input.is_empty() {
                    let key: syn::Ident = input.parse()?;
                    if key == "launch_bounds" {
                        b.parse_launch_bounds(&key, input)?;
                    } else if key == "cluster_dims" {
                        b.parse_cluster_dims(&key, input)?;
                    } else {
                        b.parse_max_registers(&key, input)?;
                    }
                    let _ = input.parse::<Option<syn::Token![,]>>()?;
                }
                Ok(P(b))
            }
        }
        syn::parse_str::<P>(attr).map(|p| p.0)
    }

    #[test]
    fn attributes_become_one_marker_per_kernel() {
        assert_eq!(parse("launch_bounds(256, 2)").unwrap().llvm(), "nvvm.maxntid=256;nvvm.minctasm=2");
        assert_eq!(parse("launch_bounds(1024)").unwrap().llvm(), "nvvm.maxntid=1024");
        assert_eq!(parse("launch_bounds(128, 4,), max_registers(64)").unwrap().llvm(), "nvvm.maxntid=128;nvvm.minctasm=4;nvvm.maxnreg=64");
        assert_eq!(parse("max_registers(32)").unwrap().llvm(), "nvvm.maxnreg=32");
        assert_eq!(parse("cluster_dims(2)").unwrap().llvm(), "nvvm.cluster_dim=2,1,1");
        let m = parse("cluster_dims(2, 2)").unwrap().marker("k").to_string();
        assert!(m.contains("\".ptx.kernel:k:nvvm.cluster_dim=2,2,1\"") && m.contains("static __PTX_KERNEL_ATTRS_k : u8 = 0"), "{m}");
        assert!(parse("").unwrap().marker("k").is_empty());
    }

    #[track_caller]
    fn refused(attr: &str, needle: &str) {
        match parse(attr) {
            Ok(_) => panic!("`{attr}` was accepted"),
            Err(e) => assert!(e.to_string().contains(needle), "`{attr}`: {e}"),
        }
    }

    #[test]
    fn bad_bounds_are_refused_with_the_fix() {
        refused("launch_bounds(0)", "`launch_bounds(0)`: a block has at least 1 thread; give the most threads a block of this kernel is launched with, from 1 to 1024");
        refused("launch_bounds(2048, 1)", "`launch_bounds(2048)`: a block has at most 1024 threads on every GPU");
        refused("launch_bounds(256, 0)", "`launch_bounds(256, 0)`: the fewest blocks per SM is at least 1");
        refused("launch_bounds()", "`launch_bounds()` needs the most threads a block");
        refused("launch_bounds(256, 2, 1)", "two numbers at most");
        refused("launch_bounds(THREADS)", "expected an integer literal");
        refused("launch_bounds(99999999999999999999999)", "is too large");
        refused("launch_bounds(256), launch_bounds(128)", "`launch_bounds` is given twice");
        refused("max_registers(0)", "`max_registers(0)`: a thread has from 1 to 255 registers");
        refused("max_registers(256)", "`max_registers(256)`");
        refused("max_registers(32, 2)", "`max_registers` takes one number");
        refused("max_registers(32), max_registers(40)", "`max_registers` is given twice");
        refused("cluster_dims(4, 4)", "a cluster of 16 blocks is over the portable limit of 8");
        refused("cluster_dims(0)", "a cluster's size is at least 1");
        refused("cluster_dims()", "takes one to three sizes");
        refused("cluster_dims(2), cluster_dims(2)", "`cluster_dims` is given twice");
    }
}
