//! Kernels: `saxpy` (y = a*x + y), `exp_kernel` (y = exp(x)), which calls NVIDIA's libdevice
//! (`__nv_expf`), linked in by cargo-ptx for each arch, and `empty`, for launch overhead.
#![no_std]
#![feature(abi_ptx, stdarch_nvptx)]

use core::arch::nvptx::{_block_dim_x, _block_idx_x, _thread_idx_x};

extern "C" {
    /// libdevice's single-precision `exp`.
    fn __nv_expf(x: f32) -> f32;
}

/// The global index of this thread in a 1-D launch.
#[inline(always)]
fn global_index() -> usize {
    unsafe { (_block_idx_x() * _block_dim_x() + _thread_idx_x()) as usize }
}

/// `y[i] = a * x[i] + y[i]` for `i < n`.
///
/// # Safety
/// `x` and `y` point to at least `n` floats of device memory.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn saxpy(n: u32, a: f32, x: *const f32, y: *mut f32) {
    let i = global_index();
    if i < n as usize {
        *y.add(i) = a * *x.add(i) + *y.add(i);
    }
}

/// `y[i] = exp(x[i])` for `i < n`, through libdevice.
///
/// # Safety
/// `x` and `y` point to at least `n` floats of device memory.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn exp_kernel(n: u32, x: *const f32, y: *mut f32) {
    let i = global_index();
    if i < n as usize {
        *y.add(i) = __nv_expf(*x.add(i));
    }
}

/// Does nothing: measures launch overhead.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn empty() {}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    unsafe { core::arch::nvptx::trap() }
}
