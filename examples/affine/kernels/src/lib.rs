//! `affine`: `y[i] = p.scale * x[i] + p.shift`, with `p` a struct passed by value. The host's
//! generated method takes `affine_shared::Affine`: the type is imported from the shared crate
//! here, and ptx-build names it through that crate in `kernels.rs`.
#![no_std]

use affine_shared::Affine;
use ptx_device::{index::global_index, kernel};

/// `y[i] = p.apply(x[i])` for `i < n`.
///
/// # Safety
/// `x` and `y` point to at least `n` floats of device memory.
#[kernel]
pub unsafe fn affine(n: u32, p: Affine, x: *const f32, y: *mut f32) {
    let i = global_index();
    if i < n as usize {
        *y.add(i) = p.apply(*x.add(i));
    }
}
