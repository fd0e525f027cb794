//! Kernels: `saxpy` (y = a*x + y), `exp_kernel` (y = exp(x)), which calls NVIDIA's libdevice
//! (`__nv_expf`, through `ptx_device::math`), linked in by cargo-ptx for each arch, and `empty`,
//! for launch overhead.
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

/// `y[i] = exp(x[i])` for `i < n`, through libdevice.
///
/// # Safety
/// `x` and `y` point to at least `n` floats of device memory.
#[kernel]
pub unsafe fn exp_kernel(n: u32, x: *const f32, y: *mut f32) {
    let i = global_index();
    if i < n as usize {
        *y.add(i) = math::exp(*x.add(i));
    }
}

/// Does nothing: measures launch overhead.
#[kernel]
pub unsafe fn empty() {}
