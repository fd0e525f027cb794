//! Loads the compiler cannot write on its own: `ld.global.nc` (CUDA's `__ldg`) and the
//! asynchronous global-to-shared copy `cp.async` (sm_80+, what `cuda::memcpy_async` uses).
//!
//! Both take generic addresses, as every Rust pointer is, and hand the asm state-space
//! addresses from [`global_addr`](crate::shared::global_addr) and
//! [`shared_addr`](crate::shared::shared_addr): conversions the link stage defines as LLVM
//! address-space casts, which fold into what LLVM already knows (a kernel parameter is global, a
//! shared array is shared), so the PTX has no `cvta` pair around the instruction.

use core::arch::asm;

mod sealed {
    pub trait Sealed {}
}

/// A type [`ld_global_nc`] loads: 8- to 64-bit integers and floats.
pub trait NcLoad: Copy + sealed::Sealed {
    #[doc(hidden)]
    unsafe fn ld_global_nc(address: *const Self) -> Self;
}

macro_rules! nc_loads {
    ($($t:ty: $ptx:literal, $reg:ident $(as $wide:ty)?;)*) => {$(
        impl sealed::Sealed for $t {}
        impl NcLoad for $t {
            #[inline(always)]
            unsafe fn ld_global_nc(address: *const Self) -> Self {
                // PTX has no 8-bit registers: a byte loads into a 16-bit one (`$wide`).
                let v: nc_loads!(@reg $t $(, $wide)?);
                asm!(
                    concat!("ld.global.nc.", $ptx, " {v}, [{a}];"),
                    v = out($reg) v, a = in(reg64) crate::shared::global_addr(address),
                    // `readonly`: reads memory, writes none; `pure`: two loads of the same
                    // address may be merged, as the data must not change during the kernel.
                    options(pure, readonly, nostack, preserves_flags),
                );
                v as $t
            }
        }
    )*};
    (@reg $t:ty) => { $t };
    (@reg $t:ty, $wide:ty) => { $wide };
}

nc_loads! {
    u8: "u8", reg16 as u16;
    i8: "s8", reg16 as i16;
    u16: "u16", reg16;
    i16: "s16", reg16;
    u32: "u32", reg32;
    i32: "s32", reg32;
    f32: "f32", reg32;
    u64: "u64", reg64;
    i64: "s64", reg64;
    f64: "f64", reg64;
}

/// Loads `*address` through the read-only (texture) data cache (`__ldg`, `ld.global.nc`).
///
/// # Safety
/// `address` points to a valid, aligned `T` in global memory that no thread writes while the
/// kernel runs.
#[inline(always)]
pub unsafe fn ld_global_nc<T: NcLoad>(address: *const T) -> T {
    T::ld_global_nc(address)
}

/// Starts copying one `T` (4, 8 or 16 bytes) from global memory at `src` to shared memory at
/// `dst` without passing through registers (`cp.async.ca.shared.global`; sm_80+). The copy is
/// complete for this thread after [`cp_async_wait_all`] (or [`cp_async_wait_group`]); other
/// threads see it after that and a barrier.
///
/// # Safety
/// `dst` points into shared memory and `src` into global memory, both aligned to
/// `size_of::<T>()`; neither is accessed until the wait.
#[cfg(any(target_feature = "sm_80", doc))]
#[inline(always)]
pub unsafe fn cp_async<T>(dst: *mut T, src: *const T) {
    const { assert!(matches!(core::mem::size_of::<T>(), 4 | 8 | 16), "cp.async copies 4, 8 or 16 bytes") };
    // The shared address comes from `shared_addr` (folded to the array's symbol by the link
    // stage: no `cvta` round trip), the global one from `global_addr`.
    asm!(
        "cp.async.ca.shared.global [{dst}], [{src}], {n};",
        dst = in(reg64) crate::shared::shared_addr(dst), src = in(reg64) crate::shared::global_addr(src), n = const core::mem::size_of::<T>(),
        options(nostack, preserves_flags),
    );
}

/// The 16-byte form of [`cp_async`] that bypasses L1 (`cp.async.cg.shared.global [dst], [src],
/// 16`; sm_80+): what CUDA's pipelined tile loads use for a `float4`/`uint4` a thread. `T` is 16
/// bytes, e.g. [`f32x4`](crate::vector::f32x4).
///
/// # Safety
/// As [`cp_async`]: `dst` in shared and `src` in global memory, both 16-aligned, untouched
/// until the wait.
#[cfg(any(target_feature = "sm_80", doc))]
#[inline(always)]
pub unsafe fn cp_async_16<T>(dst: *mut T, src: *const T) {
    const { assert!(core::mem::size_of::<T>() == 16, "cp.async.cg copies 16 bytes: use a 16-byte type such as f32x4") };
    asm!(
        "cp.async.cg.shared.global [{dst}], [{src}], 16;",
        dst = in(reg64) crate::shared::shared_addr(dst), src = in(reg64) crate::shared::global_addr(src),
        options(nostack, preserves_flags),
    );
}

/// Closes the group of [`cp_async`] copies this thread started (`cp.async.commit_group`).
#[cfg(any(target_feature = "sm_80", doc))]
#[inline(always)]
pub fn cp_async_commit_group() {
    // SAFETY: no operands.
    unsafe { asm!("cp.async.commit_group;", options(nostack, preserves_flags)) }
}

/// Waits until at most `N` committed groups of this thread's copies are still in flight
/// (`cp.async.wait_group N`).
#[cfg(any(target_feature = "sm_80", doc))]
#[inline(always)]
pub fn cp_async_wait_group<const N: u32>() {
    // SAFETY: no operands. It makes shared memory change: no `nomem`.
    unsafe { asm!("cp.async.wait_group {n};", n = const N, options(nostack, preserves_flags)) }
}

/// Waits until every copy this thread started has landed (`cp.async.wait_all`).
#[cfg(any(target_feature = "sm_80", doc))]
#[inline(always)]
pub fn cp_async_wait_all() {
    // SAFETY: no operands. It makes shared memory change: no `nomem`.
    unsafe { asm!("cp.async.wait_all;", options(nostack, preserves_flags)) }
}
