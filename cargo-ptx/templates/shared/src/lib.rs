//! Types that the kernels of {{name}} take by value and the host passes. They are defined once,
//! in this `no_std` crate that both `kernels/` (built for the GPU) and the host depend on, so a
//! struct has one layout and one name on both sides: the generated `Kernels::affine` takes this
//! crate's `Affine`, and checks at compile time that its size and alignment match the kernel's.
#![no_std]

/// The parameter of the `affine` kernel: `y = scale * x + shift`.
///
/// A struct a kernel takes by value is `#[repr(C)]` (the GPU and the host compile this crate
/// separately, and only C's layout is the same in both) and `Copy`; `#[derive(DeviceRepr)]`
/// checks both, and on the host lets a launch pass it.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(not(target_arch = "nvptx64"), derive(ptx_runtime::DeviceRepr))]
#[repr(C)]
pub struct Affine {
    /// Multiplies each element.
    pub scale: f32,
    /// Added after scaling.
    pub shift: f32,
}
