//! `shared_array![T; N]`: a static in the shared state space, placed by the link stage.

use proc_macro2::TokenStream;
use quote::quote;

/// `T; N` of `shared_array![T; N]`.
struct ArrayType {
    elem: syn::Type,
    len: syn::Expr,
}

impl syn::parse::Parse for ArrayType {
    fn parse(input: syn::parse::ParseStream) -> syn::Result<Self> {
        let elem = input.parse()?;
        input.parse::<syn::Token![;]>()?;
        let len = input.parse()?;
        Ok(ArrayType { elem, len })
    }
}

pub(crate) fn expand(input: TokenStream) -> TokenStream {
    let ArrayType { elem, len } = match syn::parse2(input) {
        Ok(a) => a,
        Err(e) => return syn::Error::new(e.span(), "expected `shared_array![T; N]`, as in `shared_array![f32; 256]`").to_compile_error(),
    };
    // Spanned at the call site, so that `line!()`/`column!()` in `__shared_array!` (the section
    // naming the array for the link stage's errors) give the `shared_array!` call itself.
    quote! {
        ::ptx_device::__shared_array!([#elem; #len])
    }
}

#[cfg(test)]
mod tests {
    use super::expand;

    #[test]
    fn shared_arrays_expand_to_a_marked_static() {
        // Each expansion is its own `static` item (declared in its own block), so two call
        // sites are two arrays; the static's section, which names the call site, is written by
        // `__shared_array!` so that `line!()` sees the outermost macro call.
        let a = expand("f32; 256".parse().unwrap()).to_string();
        assert_eq!(a, ":: ptx_device :: __shared_array ! ([f32 ; 256])");
        let e = expand("f32, 256".parse().unwrap()).to_string();
        assert!(e.contains("expected `shared_array![T; N]`"), "{e}");
    }
}
