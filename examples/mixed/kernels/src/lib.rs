//! The Rust half: `scale_add` (y = a*x + b), compiled by the nightly for nvptx64.
#![no_std]

use ptx_device::{index::global_index, kernel};

/// `y[i] = a * x[i] + b` for `i < n`.
///
/// # Safety
/// `x` and `y` point to at least `n` floats of device memory.
#[kernel]
pub unsafe fn scale_add(n: u32, a: f32, b: f32, x: *const f32, y: *mut f32) {
    let i = global_index();
    if i < n as usize {
        *y.add(i) = a * *x.add(i) + b;
    }
}
