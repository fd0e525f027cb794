//! The tensor memory accelerator (TMA, sm_90): one thread copies a whole box of a 1- to
//! 5-dimensional tensor between global and shared memory (`cp.async.bulk.tensor`), described by
//! a [`TensorMap`] the host encodes (`ptx_runtime::TensorMap::tiled_2d`, the driver's
//! `cuTensorMapEncodeTiled`). A load completes on an [`Mbarrier`] that expects its bytes.
//!
//! | PTX | ptx-device |
//! |---|---|
//! | `cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [dst], [map, {x, y}], [bar]` | [`tma_load_2d`] (1d..5d) |
//! | `cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [map, {x, y}], [src]` | [`tma_store_2d`] (1d..5d) |
//! | `cp.async.bulk.commit_group`, `cp.async.bulk.wait_group.read N` | [`bulk_commit_group`], [`bulk_wait_group_read`] |
//! | `prefetch.tensormap [map]` | [`prefetch_tensormap`] |
//!
//! Coordinates are elements, innermost dimension first, and may lie outside the tensor (those
//! elements read as zero). A kernel takes the map as `*const TensorMap` in global memory
//! (`CudaSlice<ptx_runtime::TensorMap>` on the host): Rust kernels cannot take a 64-byte aligned
//! struct by value.

use core::arch::asm;

use crate::barrier::Mbarrier;
use crate::shared::shared_addr;

/// CUDA's `CUtensorMap`: 128 opaque bytes, 64-byte aligned; the host's
/// `ptx_runtime::TensorMap` in typed launches.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
pub struct TensorMap {
    /// The driver's encoding.
    pub opaque: [u64; 16],
}

macro_rules! tma {
    ($($load:ident, $store:ident, $dim:literal, [$($c:ident),+], $coords:literal;)*) => {$(
        #[doc = concat!("Copies the box at `(", stringify!($($c),+), ")` of the ", $dim, "-dimensional tensor of `map` into shared memory at `dst`, completing on `bar` (whose phase must expect the box's bytes: [`mbarrier_arrive_expect_tx`](crate::barrier::mbarrier_arrive_expect_tx)).")]
        ///
        /// # Safety
        /// `map` points to a valid tensor map in global memory; `dst` is shared memory aligned
        /// to 128 bytes (1024 for a 128-byte swizzle) with room for the box; `bar` a barrier in
        /// shared memory. One thread issues it.
        #[inline(always)]
        pub unsafe fn $load<T>(dst: *mut T, map: *const TensorMap, $($c: i32),+, bar: *mut Mbarrier) {
            asm!(
                concat!("cp.async.bulk.tensor.", $dim, "d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [{dst}], [{map}, {{", $coords, "}}], [{bar}];"),
                dst = in(reg64) shared_addr(dst), map = in(reg64) map as u64, $($c = in(reg32) $c),+, bar = in(reg64) shared_addr(bar),
                options(nostack, preserves_flags),
            )
        }

        #[doc = concat!("Copies the box at `(", stringify!($($c),+), ")` from shared memory at `src` into the ", $dim, "-dimensional tensor of `map` (in the current bulk group: [`bulk_commit_group`]).")]
        ///
        /// # Safety
        /// As the load; `src` was written before a [`fence_proxy_async_shared`](crate::barrier::fence_proxy_async_shared).
        #[inline(always)]
        pub unsafe fn $store<T>(map: *const TensorMap, $($c: i32),+, src: *const T) {
            asm!(
                concat!("cp.async.bulk.tensor.", $dim, "d.global.shared::cta.tile.bulk_group [{map}, {{", $coords, "}}], [{src}];"),
                src = in(reg64) shared_addr(src), map = in(reg64) map as u64, $($c = in(reg32) $c),+,
                options(nostack, preserves_flags),
            )
        }
    )*};
}

tma! {
    tma_load_1d, tma_store_1d, "1", [x], "{x}";
    tma_load_2d, tma_store_2d, "2", [x, y], "{x}, {y}";
    tma_load_3d, tma_store_3d, "3", [x, y, z], "{x}, {y}, {z}";
    tma_load_4d, tma_store_4d, "4", [x, y, z, w], "{x}, {y}, {z}, {w}";
    tma_load_5d, tma_store_5d, "5", [x, y, z, w, v], "{x}, {y}, {z}, {w}, {v}";
}

/// Closes the group of bulk stores this thread issued (`cp.async.bulk.commit_group`).
#[inline(always)]
pub fn bulk_commit_group() {
    // SAFETY: no operands.
    unsafe { asm!("cp.async.bulk.commit_group;", options(nostack, preserves_flags)) }
}

/// Waits until at most `N` bulk groups of this thread still read their shared-memory source
/// (`cp.async.bulk.wait_group.read N`): the source may be reused afterwards.
#[inline(always)]
pub fn bulk_wait_group_read<const N: u32>() {
    // SAFETY: no operands; shared memory changes hands, so no `nomem`.
    unsafe { asm!("cp.async.bulk.wait_group.read {n};", n = const N, options(nostack, preserves_flags)) }
}

/// Waits until at most `N` bulk groups of this thread are incomplete (their writes to global
/// memory done: `cp.async.bulk.wait_group N`).
#[inline(always)]
pub fn bulk_wait_group<const N: u32>() {
    // SAFETY: as above.
    unsafe { asm!("cp.async.bulk.wait_group {n};", n = const N, options(nostack, preserves_flags)) }
}

/// Fetches the tensor map into the cache ahead of its first use (`prefetch.tensormap`).
///
/// # Safety
/// `map` points to a tensor map.
#[inline(always)]
pub unsafe fn prefetch_tensormap(map: *const TensorMap) {
    asm!("prefetch.tensormap [{m}];", m = in(reg64) map as u64, options(nostack, preserves_flags))
}
