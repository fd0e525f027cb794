//! The sm_80 HGEMM: `mma.sync` m16n8k16, `ldmatrix`, and a 4-stage `cp.async` pipeline.
//!
//! A block of 256 threads (8 warps, 2 x 4) computes a 128 x 256 tile of C; each warp a 64 x 64
//! piece of it as 4 x 8 `mma.sync` tiles (128 f32 accumulators a thread). K advances 32 at a
//! time through 4 shared-memory stages loaded with 16-byte `cp.async.cg`; shared rows are padded
//! to 40 halves (80 bytes), so the 8 rows an `ldmatrix` phase reads fall in 8 different 16-byte
//! bank groups. The CUDA twin is `cu_mma_hgemm` in `cuda/gemm.cu`.

use ptx_device::half::{f16, f16x2};
use ptx_device::mem::{cp_async_16, cp_async_commit_group, cp_async_wait_group};
use ptx_device::mma::{ldmatrix_x4, mma_sync, FragA, FragB, FragC, M16N8K16};
use ptx_device::prelude::*;
use ptx_device::vector::u32x4;

/// Block tile rows.
pub const BM: usize = 128;
/// Block tile columns.
pub const BN: usize = 256;
/// K per stage.
pub const BK: usize = 32;
/// Pipeline depth.
pub const STAGES: usize = 4;
/// Shared row length in halves: `BK` plus 8 of padding.
pub const LDS: usize = BK + 8;
/// Dynamic shared memory a block needs: 122880 bytes.
pub const SMEM_BYTES: usize = STAGES * (BM + BN) * LDS * 2;

type Acc = FragC<f32, M16N8K16>;

/// `C = A * B^T` for `M % 128 == 0`, `N % 256 == 0`, `K % 32 == 0`; grid `(N / 256, M / 128)`,
/// 256 threads, [`SMEM_BYTES`] of dynamic shared memory.
#[kernel(launch_bounds(256))]
pub unsafe fn rs_mma_hgemm(_m: u32, n: u32, k: u32, a: *const f16, b: *const f16, c: *mut f16) {
    let (n, k) = (n as usize, k as usize);
    let smem = dynamic_shared::<f16>();
    let (s_a, s_b) = (smem, smem.add(STAGES * BM * LDS));
    let tid = thread_idx().x as usize;
    let (warp, lane) = (tid / 32, tid % 32);
    let (wm, wn) = (warp / 4, warp % 4);
    let (bm, bn) = (block_idx().y as usize * BM, block_idx().x as usize * BN);
    let (ga, gb) = (a.add(bm * k), b.add(bn * k));
    let k_tiles = k / BK;

    // One stage: A is 128 rows of 4 16-byte chunks (2 a thread), B 256 rows (4 a thread).
    let load = |stage: usize, kt: usize| {
        unroll::<2>(|i| {
            let ch = tid + i * 256;
            let (row, col) = (ch / 4, (ch % 4) * 8);
            cp_async_16(s_a.add((stage * BM + row) * LDS + col).cast::<u32x4>(), ga.add(row * k + kt * BK + col).cast::<u32x4>());
        });
        unroll::<4>(|i| {
            let ch = tid + i * 256;
            let (row, col) = (ch / 4, (ch % 4) * 8);
            cp_async_16(s_b.add((stage * BN + row) * LDS + col).cast::<u32x4>(), gb.add(row * k + kt * BK + col).cast::<u32x4>());
        });
    };

    let mut acc = [[Acc::splat(0.0); 8]; 4];
    unroll::<{ STAGES - 1 }>(|s| {
        if s < k_tiles {
            load(s, s);
        }
        cp_async_commit_group();
    });
    for kt in 0..k_tiles {
        cp_async_wait_group::<{ STAGES as u32 - 2 }>();
        sync_threads();
        // The stage computed last round is free for the tile STAGES - 1 ahead.
        let next = kt + STAGES - 1;
        if next < k_tiles {
            load(next % STAGES, next);
        }
        cp_async_commit_group();

        let stage = kt % STAGES;
        let (sa, sb) = (s_a.add(stage * BM * LDS), s_b.add(stage * BN * LDS));
        unroll::<{ BK / 16 }>(|kk| {
            let mut fa = [FragA::<f16, M16N8K16>::new([0; 4]); 4];
            unroll::<4>(|mi| {
                let row = wm * 64 + mi * 16 + lane % 16;
                fa[mi] = FragA::new(ldmatrix_x4(sa.add(row * LDS + kk * 16 + (lane / 16) * 8)));
            });
            let mut fb = [FragB::<f16, M16N8K16>::new([0; 2]); 8];
            unroll::<4>(|nj| {
                let row = wn * 64 + nj * 16 + lane % 8 + (lane / 16) * 8;
                let r = ldmatrix_x4(sb.add(row * LDS + kk * 16 + ((lane / 8) % 2) * 8));
                fb[2 * nj] = FragB::new([r[0], r[1]]);
                fb[2 * nj + 1] = FragB::new([r[2], r[3]]);
            });
            unroll::<4>(|mi| unroll::<8>(|ni| mma_sync(&fa[mi], &fb[ni], &mut acc[mi][ni])));
        });
    }

    // Each accumulator holds rows g and g + 8, columns 2t and 2t + 1 of its 16 x 8 tile.
    let (g, t) = (lane / 4, lane % 4);
    unroll::<4>(|mi| {
        unroll::<8>(|ni| {
            let row = bm + wm * 64 + mi * 16 + g;
            let col = bn + wn * 64 + ni * 8 + 2 * t;
            let x = acc[mi][ni].x;
            *c.add(row * n + col).cast::<f16x2>() = f16x2::from_f32s(x[0], x[1]);
            *c.add((row + 8) * n + col).cast::<f16x2>() = f16x2::from_f32s(x[2], x[3]);
        });
    });
}
