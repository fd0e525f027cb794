//! `#[kernel(launch_bounds(..), cluster_dims(..))]`: CUDA's `__launch_bounds__` and
//! `__cluster_dims__`.
//!
//! Rust cannot put an LLVM attribute on a function, so the macro writes a marker next to the
//! kernel: a `#[used]` byte in the section `.ptx.kernel:NAME:ATTRS`, where `ATTRS` are the LLVM
//! function attributes of the NVPTX back end (`nvvm.maxntid=384;nvvm.minctasm=1`). cargo-ptx's
//! link stage removes the byte and puts the attributes on the kernel, and `llc` writes the PTX
//! directives (`.maxntid 384, 1, 1`, `.minnctapersm 1`, `.reqnctapercluster 2, 1, 1`).

use proc_macro2::{Span, TokenStream};
use quote::quote;

/// The section prefix the link stage looks for (ptx-build's `kernel_ir::SECTION`).
pub(crate) const SECTION: &str = ".ptx.kernel:";

/// `launch_bounds` and `cluster_dims`, checked.
#[derive(Default)]
pub(crate) struct LaunchAttrs {
    /// `launch_bounds(max_threads, min_blocks)`: the most threads a block is launched with, and
    /// the fewest blocks that must fit on one SM.
    pub max_threads: Option<(u32, Option<u32>)>,
    /// `cluster_dims(x, y, z)`: blocks of a cluster, fixed at compile time.
    pub cluster: Option<[u32; 3]>,
}

impl LaunchAttrs {
    /// The LLVM attributes, `;`-separated (empty when there are none).
    pub(crate) fn llvm(&self) -> String {
        let mut v = Vec::new();
        if let Some((threads, min_blocks)) = self.max_threads {
            v.push(format!("nvvm.maxntid={threads}"));
            if let Some(b) = min_blocks {
                v.push(format!("nvvm.minctasm={b}"));
            }
        }
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
}

const HELP: &str =
    "as in `#[kernel(launch_bounds(384, 1))]` (at most 384 threads a block, at least 1 block per SM) or `#[kernel(cluster_dims(2, 1, 1))]`";

/// Parses the numbers of `launch_bounds(..)` or `cluster_dims(..)`.
pub(crate) fn parse(key: &syn::Ident, input: syn::parse::ParseStream, attrs: &mut LaunchAttrs) -> syn::Result<()> {
    let content;
    let paren = syn::parenthesized!(content in input);
    let nums = syn::punctuated::Punctuated::<syn::LitInt, syn::Token![,]>::parse_terminated(&content)
        .map_err(|e| syn::Error::new(e.span(), format!("`{key}(..)` takes integer literals, {HELP}")))?;
    let values = nums.iter().map(|n| n.base10_parse::<u32>()).collect::<syn::Result<Vec<u32>>>()?;
    let span = paren.span.join();
    if key == "launch_bounds" {
        if attrs.max_threads.is_some() {
            return Err(syn::Error::new(key.span(), "`launch_bounds` is given twice: keep one"));
        }
        let (threads, blocks) = match values[..] {
            [t] => (t, None),
            [t, b] => (t, Some(b)),
            _ => {
                return Err(syn::Error::new(
                    span,
                    format!("`launch_bounds` takes the most threads of a block and, optionally, the fewest blocks per SM, {HELP}"),
                ))
            }
        };
        if !(1..=1024).contains(&threads) {
            return Err(syn::Error::new(span, format!("a block has 1 to 1024 threads, not {threads}")));
        }
        if blocks == Some(0) {
            return Err(syn::Error::new(span, "the fewest blocks per SM is at least 1"));
        }
        attrs.max_threads = Some((threads, blocks));
    } else {
        if attrs.cluster.is_some() {
            return Err(syn::Error::new(key.span(), "`cluster_dims` is given twice: keep one"));
        }
        if values.is_empty() || values.len() > 3 || values.contains(&0) {
            return Err(syn::Error::new(span, format!("`cluster_dims` takes one to three sizes of at least 1, {HELP}")));
        }
        let dim = |i: usize| values.get(i).copied().unwrap_or(1);
        let blocks = dim(0) * dim(1) * dim(2);
        // 8 is the portable limit (16 with an opt-in the launch would have to make).
        if blocks > 8 {
            return Err(syn::Error::new(span, format!("a cluster of {blocks} blocks is over the portable limit of 8")));
        }
        attrs.cluster = Some([dim(0), dim(1), dim(2)]);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(key: &str, args: &str) -> syn::Result<LaunchAttrs> {
        struct P(LaunchAttrs);
        impl syn::parse::Parse for P {
            fn parse(input: syn::parse::ParseStream) -> syn::Result<Self> {
                let key: syn::Ident = input.parse()?;
                let mut a = LaunchAttrs::default();
                parse(&key, input, &mut a)?;
                Ok(P(a))
            }
        }
        syn::parse_str::<P>(&format!("{key}({args})")).map(|p| p.0)
    }

    #[test]
    fn writes_the_nvptx_attributes() {
        assert_eq!(parsed("launch_bounds", "384, 1").unwrap().llvm(), "nvvm.maxntid=384;nvvm.minctasm=1");
        assert_eq!(parsed("launch_bounds", "256").unwrap().llvm(), "nvvm.maxntid=256");
        assert_eq!(parsed("cluster_dims", "2").unwrap().llvm(), "nvvm.cluster_dim=2,1,1");
        let m = parsed("cluster_dims", "2, 2").unwrap().marker("k").to_string();
        assert!(m.contains("\".ptx.kernel:k:nvvm.cluster_dim=2,2,1\"") && m.contains("static __PTX_KERNEL_ATTRS_k : u8 = 0"), "{m}");
        assert!(LaunchAttrs::default().marker("k").is_empty());
    }

    #[test]
    fn refuses_bounds_no_gpu_has() {
        let e = |k: &str, a: &str| parsed(k, a).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e("launch_bounds", "2048").contains("1 to 1024 threads, not 2048"));
        assert!(e("launch_bounds", "").contains("the most threads of a block"));
        assert!(e("launch_bounds", "128, 0").contains("at least 1"));
        assert!(e("launch_bounds", "x").contains("integer literals"));
        assert!(e("cluster_dims", "4, 4").contains("16 blocks is over the portable limit of 8"));
        assert!(e("cluster_dims", "0").contains("at least 1"));
    }
}
