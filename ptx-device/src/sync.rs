//! Barriers and memory fences: `__syncthreads`, `__syncwarp`, `fence.acq_rel`.
//!
//! Barriers are `unsafe`: a barrier that some threads of the block (or of the mask) never
//! reach is undefined behaviour in PTX (a hang at best). Fences have no such precondition.

use core::arch::asm;

unsafe extern "C" {
    #[link_name = "llvm.nvvm.bar.warp.sync"]
    fn bar_warp_sync(mask: u32);
}

/// Waits until every thread of the block reaches this point, and makes their shared and global
/// memory writes before it visible to the block (`__syncthreads()`, `bar.sync 0`).
///
/// # Safety
/// Every thread of the block must call it the same number of times: not under a condition
/// that differs between threads.
#[inline(always)]
pub unsafe fn sync_threads() {
    core::arch::nvptx::_syncthreads()
}

/// Waits until the threads of `mask` (in this warp) reach this point (`__syncwarp(mask)`,
/// `bar.warp.sync`), ordering their memory accesses.
///
/// # Safety
/// The calling thread must be in `mask`, and every thread of `mask` must call it with the same
/// mask.
#[inline(always)]
pub unsafe fn sync_warp(mask: u32) {
    bar_warp_sync(mask)
}

macro_rules! fences {
    ($($(#[$doc:meta])* $name:ident = $ptx:literal;)*) => {$(
        $(#[$doc])*
        #[inline(always)]
        pub fn $name() {
            // SAFETY: a fence only orders this thread's memory accesses. No `nomem`: the
            // compiler must not move memory accesses across it either.
            unsafe { asm!($ptx, options(nostack, preserves_flags)) }
        }
    )*};
}

fences! {
    /// Orders this thread's memory accesses as seen by the threads of its block
    /// (`fence.acq_rel.cta`; stronger than what `__threadfence_block()` promises for
    /// acquire/release patterns, and as cheap).
    fence_acq_rel_cta = "fence.acq_rel.cta;";
    /// Orders this thread's memory accesses as seen by every thread of the GPU
    /// (`fence.acq_rel.gpu`, the fence of `__threadfence()`-style publication).
    fence_acq_rel_gpu = "fence.acq_rel.gpu;";
    /// Orders this thread's memory accesses as seen by the whole system: other GPUs and the
    /// host (`fence.acq_rel.sys`, as `__threadfence_system()`).
    fence_acq_rel_sys = "fence.acq_rel.sys;";
}

/// Ends the kernel with an error the host sees at its next synchronisation (CUDA's `__trap()`,
/// PTX `trap`): for a path that must not run, such as a kernel body on an arch it has no code
/// for.
#[inline(always)]
pub fn trap() -> ! {
    // SAFETY: `trap` aborts the kernel; nothing runs after it.
    unsafe { core::arch::nvptx::trap() }
}
