//! Types that kernels take by value and the host passes: defined once, here, in a `no_std`
//! crate both depend on, so they have one layout and one name on both sides.
#![no_std]

/// `y = scale * x + shift`, the parameter of the `affine` kernel.
#[derive(Clone, Copy, Debug, PartialEq, ptx_device_macros::DeviceRepr)]
#[repr(C)]
pub struct Affine {
    /// Multiplies each element.
    pub scale: f32,
    /// Added after scaling.
    pub shift: f32,
}

impl Affine {
    /// The map itself, the same code on the GPU and on the CPU (on the GPU, `fmad` fuses it into
    /// one multiply-add, as nvcc would).
    pub fn apply(&self, x: f32) -> f32 {
        self.scale * x + self.shift
    }
}
