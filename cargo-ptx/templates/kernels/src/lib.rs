//! The Rust kernels of {{name}}. `#[kernel]` exports a function as a GPU entry point; the
//! host gets a typed launch method of the same name (`kernels::Kernels::saxpy`).
#![no_std]

use {{crate}}_shared::Affine;
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

/// `y[i] = p.scale * x[i] + p.shift` for `i < n`. `p` is a struct passed by value: it comes
/// from `../shared`, which the host depends on too, so `Kernels::affine` takes the same type.
///
/// # Safety
/// `x` and `y` point to at least `n` floats of device memory.
#[kernel]
pub unsafe fn affine(n: u32, p: Affine, x: *const f32, y: *mut f32) {
    let i = global_index();
    if i < n as usize {
        *y.add(i) = p.scale * *x.add(i) + p.shift;
    }
}
