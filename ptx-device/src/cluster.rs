//! Thread block clusters and distributed shared memory (sm_90): the blocks of a cluster run at
//! once on neighbouring SMs, can wait for each other, and read and write each other's shared
//! memory. A kernel gets its cluster shape from `#[kernel(cluster_dims(2, 1, 1))]` (CUDA's
//! `__cluster_dims__`) and launches like any other, its grid a multiple of the cluster.
//!
//! | CUDA (`cooperative_groups::this_cluster()`) | ptx-device |
//! |---|---|
//! | `cluster.block_rank()`, `cluster.num_blocks()` | [`cluster_ctarank`], [`cluster_nctarank`] |
//! | `cluster.sync()` | [`cluster_sync`] (`barrier.cluster.arrive` + `wait`) |
//! | `cluster.map_shared_rank(p, rank)` | [`map_shared_rank`]: a generic pointer into block `rank`'s shared memory |
//! | `mapa.shared::cluster.u32` + `ld/st.shared::cluster` | [`map_shared_rank_addr`], [`ld_shared_cluster_u32`], [`st_shared_cluster_u32`] |
//! | `elect.sync` | [`elect_one_sync`] |

use core::arch::asm;

// LLVM's intrinsics, which are `convergent`: rustc's `asm!` is not, and LLVM duplicated a cluster
// barrier written as asm into both arms of an `if thread_idx().x == 0`, which deadlocked.
unsafe extern "C" {
    #[link_name = "llvm.nvvm.barrier.cluster.arrive"]
    fn barrier_cluster_arrive();
    #[link_name = "llvm.nvvm.barrier.cluster.wait"]
    fn barrier_cluster_wait();
}

macro_rules! sreg {
    ($($(#[$doc:meta])* $name:ident = $reg:literal;)*) => {$(
        $(#[$doc])*
        #[inline(always)]
        pub fn $name() -> u32 {
            let r: u32;
            // SAFETY: reads a special register that does not change during the kernel.
            unsafe { asm!(concat!("mov.u32 {r}, ", $reg, ";"), r = out(reg32) r, options(pure, nomem, nostack, preserves_flags)) };
            r
        }
    )*};
}

sreg! {
    /// This block's rank in its cluster (`%cluster_ctarank`).
    cluster_ctarank = "%cluster_ctarank";
    /// Blocks in the cluster (`%cluster_nctarank`).
    cluster_nctarank = "%cluster_nctarank";
    /// This block's x index in its cluster (`%cluster_ctaid.x`).
    cluster_ctaid_x = "%cluster_ctaid.x";
    /// The cluster's x size in blocks (`%cluster_nctaid.x`).
    cluster_nctaid_x = "%cluster_nctaid.x";
    /// The cluster's x index in the grid (`%clusterid.x`).
    cluster_id_x = "%clusterid.x";
}

/// Waits until every thread of every block of the cluster gets here; shared-memory writes
/// before it are visible to the cluster after it (`barrier.cluster.arrive` +
/// `barrier.cluster.wait`, release and acquire).
///
/// # Safety
/// Every thread of the cluster calls it the same number of times.
#[inline(always)]
pub unsafe fn cluster_sync() {
    barrier_cluster_arrive();
    barrier_cluster_wait();
}

/// The first half of [`cluster_sync`], so that independent work can run before the wait.
///
/// # Safety
/// As [`cluster_sync`]; every thread later calls [`cluster_wait`].
#[inline(always)]
pub unsafe fn cluster_arrive() {
    barrier_cluster_arrive()
}

/// The second half of [`cluster_sync`].
///
/// # Safety
/// As [`cluster_sync`].
#[inline(always)]
pub unsafe fn cluster_wait() {
    barrier_cluster_wait()
}

/// The same place as `p` (a pointer into this block's shared memory) in the shared memory of
/// block `rank` of the cluster, as a generic pointer: ordinary loads and stores through it reach
/// the other block's shared memory (`mapa.u64`).
///
/// # Safety
/// `p` points into shared memory, `rank` is below [`cluster_nctarank`], and the other block is
/// running (between two [`cluster_sync`]s).
#[inline(always)]
pub unsafe fn map_shared_rank<T>(p: *mut T, rank: u32) -> *mut T {
    let r: u64;
    asm!("mapa.u64 {r}, {p}, {rank};", r = out(reg64) r, p = in(reg64) p as u64, rank = in(reg32) rank, options(pure, nomem, nostack, preserves_flags));
    r as *mut T
}

/// As [`map_shared_rank`], as a `.shared::cluster` address for [`ld_shared_cluster_u32`] and
/// TMA multicast (`mapa.shared::cluster.u32`).
///
/// # Safety
/// As [`map_shared_rank`].
#[inline(always)]
pub unsafe fn map_shared_rank_addr<T>(p: *const T, rank: u32) -> u32 {
    let r: u32;
    let a = crate::shared::shared_addr(p) as u32;
    asm!("mapa.shared::cluster.u32 {r}, {a}, {rank};", r = out(reg32) r, a = in(reg32) a, rank = in(reg32) rank, options(pure, nomem, nostack, preserves_flags));
    r
}

/// Loads a `u32` from a `.shared::cluster` address.
///
/// # Safety
/// `addr` comes from [`map_shared_rank_addr`] and the block it names is running.
#[inline(always)]
pub unsafe fn ld_shared_cluster_u32(addr: u32) -> u32 {
    let v: u32;
    asm!("ld.shared::cluster.u32 {v}, [{a}];", v = out(reg32) v, a = in(reg32) addr, options(readonly, nostack, preserves_flags));
    v
}

/// Stores a `u32` to a `.shared::cluster` address.
///
/// # Safety
/// As [`ld_shared_cluster_u32`].
#[inline(always)]
pub unsafe fn st_shared_cluster_u32(addr: u32, v: u32) {
    asm!("st.shared::cluster.u32 [{a}], {v};", a = in(reg32) addr, v = in(reg32) v, options(nostack, preserves_flags))
}

/// True in one lane of the warp (the lowest active one), false in the others (`elect.sync`,
/// sm_90): the thread that issues a warp's TMA copies.
///
/// # Safety
/// Every lane of the warp calls it together.
#[inline(always)]
pub unsafe fn elect_one_sync() -> bool {
    let e: u32;
    asm!(
        "{{ .reg .pred p; elect.sync _|p, 0xffffffff; selp.u32 {e}, 1, 0, p; }}",
        e = out(reg32) e, options(nostack, preserves_flags),
    );
    e != 0
}
