//! `#[kernel(launch_bounds(MAX_THREADS, MIN_BLOCKS_PER_SM), max_registers(N))]`: CUDA's
//! `__launch_bounds__` and `__maxnreg__`.
//!
//! Rust cannot put LLVM function attributes on a function, so the kernel gets a marker instead:
//! its section, `.ptx.launch_bounds:maxntid=256,minctasm=2,maxnreg=64`, which the link stage
//! turns into the attributes LLVM's NVPTX backend reads (`"nvvm.maxntid"`, `"nvvm.minctasm"`,
//! `"nvvm.maxnreg"`), so the PTX has `.maxntid`, `.minnctapersm` and `.maxnreg` as nvcc's does.

use proc_macro2::Span;

/// The section prefix the link stage looks for (ptx-build's `launch_bounds_ir`).
pub(crate) const SECTION: &str = ".ptx.launch_bounds:";

/// The most threads a block has on every arch (sm_70 to sm_120).
const MAX_BLOCK: u64 = 1024;
/// The most registers a thread has (`.maxnreg` above it is meaningless).
const MAX_REGISTERS: u64 = 255;

const LAUNCH_BOUNDS_HELP: &str =
    "write `launch_bounds(MAX_THREADS)` or `launch_bounds(MAX_THREADS, MIN_BLOCKS_PER_SM)` with integer literals, as CUDA's `__launch_bounds__(256, 2)`";
const MAX_REGISTERS_HELP: &str = "write `max_registers(N)` with an integer literal from 1 to 255, as CUDA's `__maxnreg__(64)`";

/// What a kernel asks of ptxas and the launch.
#[derive(Default)]
pub(crate) struct Bounds {
    /// `.maxntid`: the most threads a block is launched with.
    pub max_threads: Option<u64>,
    /// `.minnctapersm`: the fewest blocks ptxas must fit on one SM (it caps registers to do so).
    pub min_blocks: Option<u64>,
    /// `.maxnreg`: the most registers a thread may use.
    pub max_registers: Option<u64>,
    /// Where `launch_bounds` was written, for a second one.
    launch_bounds_span: Option<Span>,
}

impl Bounds {
    /// The marker section for the kernel, `None` when nothing was asked.
    pub(crate) fn section(&self) -> Option<String> {
        let parts: Vec<String> = [("maxntid", self.max_threads), ("minctasm", self.min_blocks), ("maxnreg", self.max_registers)]
            .into_iter()
            .filter_map(|(key, v)| v.map(|v| format!("{key}={v}")))
            .collect();
        (!parts.is_empty()).then(|| format!("{SECTION}{}", parts.join(",")))
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

    fn parse(attr: &str) -> syn::Result<Bounds> {
        struct P(Bounds);
        impl syn::parse::Parse for P {
            fn parse(input: syn::parse::ParseStream) -> syn::Result<Self> {
                let mut b = Bounds::default();
                while !input.is_empty() {
                    let key: syn::Ident = input.parse()?;
                    if key == "launch_bounds" {
                        b.parse_launch_bounds(&key, input)?;
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
    fn bounds_become_one_section_marker() {
        assert_eq!(parse("launch_bounds(256, 2)").unwrap().section().unwrap(), ".ptx.launch_bounds:maxntid=256,minctasm=2");
        assert_eq!(parse("launch_bounds(1024)").unwrap().section().unwrap(), ".ptx.launch_bounds:maxntid=1024");
        assert_eq!(
            parse("launch_bounds(128, 4,), max_registers(64)").unwrap().section().unwrap(),
            ".ptx.launch_bounds:maxntid=128,minctasm=4,maxnreg=64"
        );
        assert_eq!(parse("max_registers(32)").unwrap().section().unwrap(), ".ptx.launch_bounds:maxnreg=32");
        assert!(parse("").unwrap().section().is_none());
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
    }
}
