//! The sm_90a HGEMM: TMA loads into a 4-stage shared-memory ring, `wgmma.mma_async`
//! m64n256k16 from shared-memory descriptors, warp specialization.
//!
//! A block of 384 threads is three warpgroups. Warpgroup 0 is the producer: it gives up
//! registers (`setmaxnreg.dec` 40) and one of its threads issues the TMA copies of each
//! 128 x 64 A tile and 256 x 64 B tile (128-byte swizzle, what the descriptors name) into the
//! next free stage, completing on that stage's `full` barrier. Warpgroups 1 and 2 are consumers
//! (`setmaxnreg.inc` 232): each multiplies its 64 rows of A by the 256 rows of B, 4 `wgmma`s of
//! K = 16 a stage into 128 f32 accumulators a thread, then frees the stage on its `empty`
//! barrier. The CUDA twin is `cu_wgmma_hgemm` in `cuda/gemm.cu`.
//!
//! The kernel is compiled into every image of the crate, but its body only into sm_90a's:
//! elsewhere [`arch::has_wgmma`] is false at link time and the kernel traps.

use ptx_device::arch;
use ptx_device::barrier::{fence_mbarrier_init, mbarrier_arrive, mbarrier_arrive_expect_tx, mbarrier_init, mbarrier_wait_parity, Mbarrier};
use ptx_device::half::{f16, f16x2};
use ptx_device::prelude::*;
use ptx_device::tma::{tma_load_2d, TensorMap};
use ptx_device::wgmma::{self, Accumulator, MatrixDescriptor, Swizzle, M64N256K16};

/// Block tile rows (two consumer warpgroups of 64).
pub const BM: usize = 128;
/// Block tile columns: one m64n256 `wgmma` per consumer.
pub const BN: usize = 256;
/// K per stage: one 128-byte swizzle row of f16.
pub const BK: usize = 64;
/// Pipeline depth.
pub const STAGES: usize = 4;
/// Dynamic shared memory: the stages (196608 bytes), 1024 to align them, and the barriers.
pub const SMEM_BYTES: usize = STAGES * (BM + BN) * BK * 2 + 1024 + 2 * STAGES * 8;
/// Threads a block: a producer and two consumer warpgroups.
pub const THREADS: usize = 384;

/// `C = A * B^T` for `M % 128 == 0`, `N % 256 == 0`, `K % 64 == 0`, through TMA maps of A
/// (box 64 x 128) and B (box 64 x 256), both f16 with 128-byte swizzle; grid
/// `(N / 256, M / 128)`, 384 threads, [`SMEM_BYTES`] of dynamic shared memory.
#[kernel(launch_bounds(384, 1))]
pub unsafe fn rs_wgmma_hgemm(_m: u32, n: u32, k: u32, map_a: *const TensorMap, map_b: *const TensorMap, c: *mut f16) {
    if !arch::has_wgmma() {
        trap();
    }
    let n = n as usize;
    // 128-byte swizzled tiles must start on 1024-byte boundaries.
    let raw = dynamic_shared::<u8>();
    let base = raw.add((1024 - (ptx_device::shared::shared_addr(raw) as usize & 1023)) & 1023);
    let s_a = base.cast::<f16>();
    let s_b = s_a.add(STAGES * BM * BK);
    let full = s_b.add(STAGES * BN * BK).cast::<Mbarrier>();
    let empty = full.add(STAGES);

    let tid = thread_idx().x as usize;
    let (wg, t) = (tid / 128, tid % 128);
    let (bm, bn) = (block_idx().y as usize * BM, block_idx().x as usize * BN);
    let k_tiles = k as usize / BK;

    if tid == 0 {
        for s in 0..STAGES {
            mbarrier_init(full.add(s), 1);
            // One arrival from each warp of the two consumers.
            mbarrier_init(empty.add(s), 8);
        }
        fence_mbarrier_init();
    }
    sync_threads();

    if wg == 0 {
        wgmma::setmaxnreg_dec::<40>();
        if t == 0 {
            for kt in 0..k_tiles {
                let s = kt % STAGES;
                if kt >= STAGES {
                    mbarrier_wait_parity(empty.add(s), ((kt / STAGES) as u32 + 1) & 1);
                }
                mbarrier_arrive_expect_tx(full.add(s), ((BM + BN) * BK * 2) as u32);
                tma_load_2d(s_a.add(s * BM * BK), map_a, (kt * BK) as i32, bm as i32, full.add(s));
                tma_load_2d(s_b.add(s * BN * BK), map_b, (kt * BK) as i32, bn as i32, full.add(s));
            }
        }
    } else {
        wgmma::setmaxnreg_inc::<232>();
        let consumer = wg - 1;
        let mut acc = Accumulator::<M64N256K16>::zero();
        for kt in 0..k_tiles {
            let s = kt % STAGES;
            mbarrier_wait_parity(full.add(s), (kt / STAGES) as u32 & 1);
            let a = MatrixDescriptor::new(s_a.add((s * BM + consumer * 64) * BK), 16, 1024, Swizzle::B128);
            let b = MatrixDescriptor::new(s_b.add(s * BN * BK), 16, 1024, Swizzle::B128);
            wgmma::fence();
            unroll::<{ BK / 16 }>(|kk| {
                // The next 16 columns of K are 32 bytes further, under the swizzle too.
                wgmma::mma_async::<f16, _>(&mut acc, a.add_bytes(kk as u32 * 32), b.add_bytes(kk as u32 * 32), true);
            });
            wgmma::commit_group();
            wgmma::wait_group::<0, _>(&mut acc);
            if t % 32 == 0 {
                mbarrier_arrive(empty.add(s));
            }
        }
        // Thread t holds rows 16w + t/4 (+8) and columns 8j + 2(t % 4) (+1), j = 0..32.
        let (w, l) = (t / 32, t % 32);
        let row = bm + consumer * 64 + w * 16 + l / 4;
        unroll::<32>(|j| {
            let col = bn + j * 8 + 2 * (l % 4);
            let x = &acc.x;
            *c.add(row * n + col).cast::<f16x2>() = f16x2::from_f32s(x[4 * j], x[4 * j + 1]);
            *c.add((row + 8) * n + col).cast::<f16x2>() = f16x2::from_f32s(x[4 * j + 2], x[4 * j + 3]);
        });
    }
}
