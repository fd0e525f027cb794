//! The Rust half: `scale_add` (y = a*x + b), compiled by the nightly for nvptx64.
#![no_std]
#![feature(abi_ptx, stdarch_nvptx)]

use core::arch::nvptx::{_block_dim_x, _block_idx_x, _thread_idx_x};

/// `y[i] = a * x[i] + b` for `i < n`.
///
/// # Safety
/// `x` and `y` point to at least `n` floats of device memory.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn scale_add(n: u32, a: f32, b: f32, x: *const f32, y: *mut f32) {
    let i = (_block_idx_x() * _block_dim_x() + _thread_idx_x()) as usize;
    if i < n as usize {
        *y.add(i) = a * *x.add(i) + b;
    }
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    loop {}
}
