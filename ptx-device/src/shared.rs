//! Shared memory: the fast per-block scratch of CUDA's `__shared__`.
//!
//! Rust has no address-space qualifier for statics, so a shared array is declared in PTX
//! (`.shared .align A .b8 name[N];`, through `global_asm!`) and its generic address taken with
//! `cvta.shared`. Loads and stores through it are generic ones that ptxas resolves to shared
//! memory. [`shared_array!`](crate::shared_array) gives each use site a fixed-size array;
//! [`dynamic_shared`] is the one `extern __shared__` array whose size the launch sets.

use core::arch::{asm, global_asm};

// The launch's dynamic shared memory (`shared_mem_bytes`), aligned for any element type.
global_asm!(".extern .shared .align 16 .b8 __ptx_device_dynamic_shared[];");

/// The block's dynamic shared memory, as CUDA's `extern __shared__ T buf[];`: as many bytes as
/// the launch's `shared_mem_bytes`, aligned to 16, shared by the threads of the block.
///
/// Every call returns the same address. Reading past `shared_mem_bytes` is undefined behaviour.
#[inline(always)]
pub fn dynamic_shared<T>() -> *mut T {
    let p: *mut T;
    // SAFETY: only computes an address; `pure`: the same every time, so it may be merged.
    unsafe { asm!("cvta.shared.u64 {p}, __ptx_device_dynamic_shared;", p = out(reg64) p, options(pure, nomem, nostack, preserves_flags)) };
    p
}

/// What `shared_array!` expands to: the PTX declaration and its address. The `asm` tokens are
/// written here, so the kernel crate needs no `#![feature(asm_experimental_arch)]`.
#[doc(hidden)]
#[macro_export]
#[allow_internal_unstable(asm_experimental_arch)]
macro_rules! __shared_array {
    ($symbol:literal, $array:ty) => {{
        ::core::arch::global_asm!(
            ::core::concat!(".shared .align {align} .b8 ", $symbol, "[{size}];"),
            align = const ::core::mem::align_of::<$array>(),
            size = const ::core::mem::size_of::<$array>(),
        );
        let p: *mut $array;
        // SAFETY: only computes the address of the array declared above.
        unsafe {
            ::core::arch::asm!(
                ::core::concat!("cvta.shared.u64 {p}, ", $symbol, ";"),
                p = out(reg64) p,
                options(pure, nomem, nostack, preserves_flags),
            )
        };
        p
    }};
}
