//! The Rust kernels of {{name}}. `#[kernel]` exports a function as a GPU entry point; the
//! host gets a typed launch method of the same name (`kernels::Kernels::saxpy`).
#![no_std]

use ptx_device::{index::global_index, kernel, math};

/// `y[i] = a * x[i] + y[i]` for `i < n`.
///
/// # Safety
/// `x` and `y` point to at least `n` floats of device memory.
#[kernel]
pub unsafe fn saxpy(n: u32, a: f32, x: *const f32, y: *mut f32) {
    let i = global_index();
    if i < n as usize {
        *y.add(i) = a * *x.add(i) + *y.add(i);
    }
}

/// `y[i] = ln(1 + e^x[i])` (softplus) for `i < n`, with NVIDIA's libdevice `expf` and `log1pf`.
///
/// # Safety
/// `x` and `y` point to at least `n` floats of device memory.
#[kernel]
pub unsafe fn softplus(n: u32, x: *const f32, y: *mut f32) {
    let i = global_index();
    if i < n as usize {
        *y.add(i) = math::log1p(math::exp(*x.add(i)));
    }
}
