//! `#[derive(DeviceRepr)]`: a `#[repr(C)]` struct of `Copy` fields, passed to kernels by value.

use proc_macro2::TokenStream;
use quote::quote;
use syn::spanned::Spanned;

use crate::error;

pub(crate) fn expand(input: TokenStream) -> TokenStream {
    let item: syn::DeriveInput = match syn::parse2(input) {
        Ok(i) => i,
        Err(e) => return e.to_compile_error(),
    };
    let name = &item.ident;
    let syn::Data::Struct(data) = &item.data else {
        return error(name.span(), format!("#[derive(DeviceRepr)] applies to structs: `{name}` crosses to a kernel as bytes, and an enum's or union's meaning there is not checked; pass a struct or an integer"));
    };
    if !item.generics.params.is_empty() {
        return error(item.generics.span(), format!("#[derive(DeviceRepr)]: `{name}` has generic parameters; a kernel parameter has one layout: use a concrete struct (one per instantiation)"));
    }
    let repr_c = item.attrs.iter().filter(|a| a.path().is_ident("repr")).any(|a| {
        let mut c = false;
        let _ = a.parse_nested_meta(|m| {
            c |= m.path.is_ident("C") || m.path.is_ident("transparent");
            // `align(16)`, `packed(2)`: consume the arguments.
            if m.input.peek(syn::token::Paren) {
                let _content;
                syn::parenthesized!(_content in m.input);
            }
            Ok(())
        });
        c
    });
    if !repr_c {
        return error(
            name.span(),
            format!("#[derive(DeviceRepr)]: `{name}` needs `#[repr(C)]`: the kernel and the host are compiled separately, and only C's layout is the same in both; add `#[repr(C)]` above `struct {name}`"),
        );
    }
    // One bound per field, spanned at the field's type, so a non-Copy field is reported there.
    let copy_checks = data.fields.iter().map(|f| {
        let ty = &f.ty;
        quote::quote_spanned! { ty.span() => __ptx_assert_copy::<#ty>(); }
    });
    quote! {
        const _: () = {
            fn __ptx_assert_copy<T: ::core::marker::Copy>() {}
            #[allow(dead_code)]
            fn __ptx_fields_are_copy() { #(#copy_checks)* }
        };
        // SAFETY: `#[repr(C)]` and `Copy` fields (checked above): the bytes mean the same on the
        // device, and ptx-build asserts the PTX parameter's size and alignment match.
        #[cfg(not(target_arch = "nvptx64"))]
        unsafe impl ::ptx_runtime::cudarc::driver::DeviceRepr for #name {}
    }
}

#[cfg(test)]
mod tests {
    use super::expand;

    #[test]
    fn a_repr_c_struct_gets_the_host_impl_and_field_checks() {
        let out = expand("#[repr(C)] pub struct Affine { pub scale: f32, pub shift: f32 }".parse().unwrap()).to_string();
        assert!(out.contains("unsafe impl :: ptx_runtime :: cudarc :: driver :: DeviceRepr for Affine"), "{out}");
        assert!(out.contains("# [cfg (not (target_arch = \"nvptx64\"))]"), "{out}");
        assert!(out.contains("__ptx_assert_copy :: < f32 >"), "{out}");
        let aligned = expand("#[repr(C, align(16))] struct A { x: f64 }".parse().unwrap()).to_string();
        assert!(aligned.contains("DeviceRepr for A"), "{aligned}");
    }

    #[test]
    fn what_cannot_cross_is_refused_with_the_fix() {
        let e = expand("pub struct Affine { pub scale: f32 }".parse().unwrap()).to_string();
        assert!(
            e.contains("compile_error") && e.contains("needs `#[repr(C)]`") && e.contains("add `#[repr(C)]` above `struct Affine`"),
            "{e}"
        );
        let e = expand("#[repr(u8)] enum E { A }".parse().unwrap()).to_string();
        assert!(e.contains("applies to structs"), "{e}");
        let e = expand("#[repr(C)] struct S<T> { x: T }".parse().unwrap()).to_string();
        assert!(e.contains("generic parameters"), "{e}");
    }
}
