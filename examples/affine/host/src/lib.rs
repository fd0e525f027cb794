//! The host side of examples/affine: the generated module, whose `affine` method takes the
//! shared crate's `Affine` by value.

pub use affine_shared::Affine;

pub mod kernels {
    ptx_runtime::include_kernels!();
}
