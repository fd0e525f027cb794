//! fastblur's Rust kernel, compiled by the nightly for nvptx64 when the library is packaged.
#![no_std]

use ptx_device::{index::global_index, kernel};

/// `out[i] = min(pixels[i] * gain, 1)` for `i < n`.
///
/// # Safety
/// `pixels` and `out` point to at least `n` floats of device memory.
#[kernel]
pub unsafe fn brighten(n: u32, gain: f32, pixels: *const f32, out: *mut f32) {
    let i = global_index();
    if i < n as usize {
        *out.add(i) = (*pixels.add(i) * gain).min(1.0);
    }
}
