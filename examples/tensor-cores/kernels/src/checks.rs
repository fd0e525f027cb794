//! Small kernels that check each helper against the CPU: fragment layouts through the
//! documented coordinates, `ldmatrix`/`stmatrix`, `cp.async` of each width, half-precision
//! arithmetic, TMA with `mbarrier`, clusters with distributed shared memory, and the arch
//! queries.

use ptx_device::arch;
use ptx_device::barrier::*;
use ptx_device::cluster::*;
use ptx_device::half::{bf16, bf16x2, f16, f16x2};
use ptx_device::mem::{cp_async, cp_async_16, cp_async_commit_group, cp_async_wait_all, cp_async_wait_group};
use ptx_device::mma::*;
use ptx_device::prelude::*;
use ptx_device::tma::*;
use ptx_device::vector::{u32x2, u32x4};

/// Shared arrays that `ldmatrix`, `cp.async` and TMA may address: rows 16-byte aligned, TMA
/// boxes 128-byte aligned.
#[repr(C, align(128))]
pub struct Aligned<T>(pub T);

/// One warp: `C (16 x 8, f32) = A (16 x 16, row-major) * B (16 x 8, row-major k x n)` with each
/// fragment filled element by element from [`Mma::a_coord`] / [`Mma::b_coord`] and written back
/// by [`Mma::c_coord`]: a wrong table or register order shows as a wrong product.
#[kernel(instances(f16, bf16))]
pub unsafe fn mma_16x8x16<E: Mma<M16N8K16, Acc = f32> + Copy>(a: *const u16, b: *const u16, c: *mut f32) {
    let lane = lane_id();
    let mut fa = FragA::<E, M16N8K16>::new([0; 4]);
    let mut fb = FragB::<E, M16N8K16>::new([0; 2]);
    unroll::<8>(|e| {
        let (r, col) = E::a_coord(lane, e as u32);
        fa.regs[e / 2] |= (*a.add(r as usize * 16 + col as usize) as u32) << (16 * (e % 2));
    });
    unroll::<4>(|e| {
        let (kk, nn) = E::b_coord(lane, e as u32);
        fb.regs[e / 2] |= (*b.add(kk as usize * 8 + nn as usize) as u32) << (16 * (e % 2));
    });
    let mut fc = FragC::<f32, M16N8K16>::splat(0.5);
    mma_sync(&fa, &fb, &mut fc);
    unroll::<4>(|i| {
        let (r, col) = E::c_coord(lane, i as u32);
        *c.add(r as usize * 8 + col as usize) = fc.x[i];
    });
}

/// The TF32 shape: `C (16 x 8) = A (16 x 8) * B (8 x 8) + 0.5`, inputs rounded by
/// [`Tf32::from_f32`].
#[kernel]
pub unsafe fn mma_tf32(a: *const f32, b: *const f32, c: *mut f32) {
    let lane = lane_id();
    let mut fa = FragA::<Tf32, M16N8K8>::new([0; 4]);
    let mut fb = FragB::<Tf32, M16N8K8>::new([0; 2]);
    unroll::<4>(|e| {
        let (r, col) = Tf32::a_coord(lane, e as u32);
        fa.regs[e] = Tf32::from_f32(*a.add(r as usize * 8 + col as usize)).0;
    });
    unroll::<2>(|e| {
        let (kk, nn) = Tf32::b_coord(lane, e as u32);
        fb.regs[e] = Tf32::from_f32(*b.add(kk as usize * 8 + nn as usize)).0;
    });
    let mut fc = FragC::<f32, M16N8K8>::splat(0.5);
    mma_sync(&fa, &fb, &mut fc);
    unroll::<4>(|i| {
        let (r, col) = Tf32::c_coord(lane, i as u32);
        *c.add(r as usize * 8 + col as usize) = fc.x[i];
    });
}

/// The 8-bit shapes: `C (16 x 8, i32) = A (16 x 32) * B (32 x 8) + 7`.
#[kernel(instances(i8, u8))]
pub unsafe fn mma_16x8x32<E: Mma<M16N8K32, Acc = i32> + Copy>(a: *const u8, b: *const u8, c: *mut i32) {
    let lane = lane_id();
    let mut fa = FragA::<E, M16N8K32>::new([0; 4]);
    let mut fb = FragB::<E, M16N8K32>::new([0; 2]);
    unroll::<16>(|e| {
        let (r, col) = E::a_coord(lane, e as u32);
        fa.regs[e / 4] |= (*a.add(r as usize * 32 + col as usize) as u32) << (8 * (e % 4));
    });
    unroll::<8>(|e| {
        let (kk, nn) = E::b_coord(lane, e as u32);
        fb.regs[e / 4] |= (*b.add(kk as usize * 8 + nn as usize) as u32) << (8 * (e % 4));
    });
    let mut fc = FragC::<i32, M16N8K32>::splat(7);
    mma_sync(&fa, &fb, &mut fc);
    unroll::<4>(|i| {
        let (r, col) = E::c_coord(lane, i as u32);
        *c.add(r as usize * 8 + col as usize) = fc.x[i];
    });
}

/// One warp loads a 16 x 16 `u16` matrix into shared memory and writes, per lane, what each
/// `ldmatrix` form returns (x1, x2, x4 and their `.trans`: 14 words a lane, lane-major), then
/// stores the x4 registers back with `stmatrix` (plain and `.trans`, sm_90) into `back` (2 x 256).
#[kernel]
pub unsafe fn ldmatrix_forms(m: *const u16, regs: *mut u32, back: *mut u16) {
    let lane = lane_id() as usize;
    let s = shared_array![Aligned<[u16; 256]>; 1].cast::<u16>();
    let t = shared_array![Aligned<[u16; 512]>; 1].cast::<u16>();
    unroll::<8>(|i| *s.add(lane * 8 + i) = *m.add(lane * 8 + i));
    sync_warp(FULL_MASK);
    // Lane l points at row l % 16, columns 8 * (l / 16): the four 8 x 8 quadrants in x4 order.
    let row = s.add((lane % 16) * 16 + (lane / 16) * 8);
    let out = regs.add(lane * 14);
    let x1 = ldmatrix_x1(row);
    let x2 = ldmatrix_x2(row);
    let x4 = ldmatrix_x4(row);
    let x1t = ldmatrix_x1_trans(row);
    let x2t = ldmatrix_x2_trans(row);
    let x4t = ldmatrix_x4_trans(row);
    let words = [x1[0], x2[0], x2[1], x4[0], x4[1], x4[2], x4[3], x1t[0], x2t[0], x2t[1], x4t[0], x4t[1], x4t[2], x4t[3]];
    unroll::<14>(|i| *out.add(i) = words[i]);
    if arch::has_sm90() {
        stmatrix_x4(t.add((lane % 16) * 16 + (lane / 16) * 8), x4);
        stmatrix_x4_trans(t.add(256 + (lane % 16) * 16 + (lane / 16) * 8), x4);
        sync_warp(FULL_MASK);
        unroll::<16>(|i| *back.add(lane * 16 + i) = *t.add(lane * 16 + i));
    }
}

/// Each thread copies 4, 8 and 16 bytes with `cp.async.ca` and 16 with `.cg` into shared
/// memory in three commit groups, waits for them group by group, and copies them out.
#[kernel]
pub unsafe fn cp_async_widths(src: *const u32, dst: *mut u32) {
    let tid = thread_idx().x as usize;
    // 4 + 8 + 16 + 16 bytes a thread, each width in its own region.
    let s = shared_array![Aligned<[u32; 1024 * 3]>; 1].cast::<u32>();
    let (s4, s8, s16, s16g) = (s.add(tid), s.add(256 + tid * 2), s.add(768 + tid * 4), s.add(1792 + tid * 4));
    cp_async(s4, src.add(tid));
    cp_async_commit_group();
    cp_async(s8.cast::<u32x2>(), src.add(256 + tid * 2).cast::<u32x2>());
    cp_async_commit_group();
    cp_async(s16.cast::<u32x4>(), src.add(768 + tid * 4).cast::<u32x4>());
    cp_async_16(s16g.cast::<u32x4>(), src.add(1792 + tid * 4).cast::<u32x4>());
    cp_async_commit_group();
    cp_async_wait_group::<2>();
    *dst.add(tid) = *s4;
    cp_async_wait_group::<1>();
    unroll::<2>(|i| *dst.add(256 + tid * 2 + i) = *s8.add(i));
    cp_async_wait_all();
    unroll::<4>(|i| *dst.add(768 + tid * 4 + i) = *s16.add(i));
    unroll::<4>(|i| *dst.add(1792 + tid * 4 + i) = *s16g.add(i));
}

/// Half-precision arithmetic, one input pair (and addend) a thread: 16 results a thread, as
/// bits (see the host test for the order).
#[kernel]
pub unsafe fn half_ops(n: u32, x: *const f32, y: *const f32, z: *const f32, out: *mut u16) {
    let i = global_index();
    if i >= n as usize {
        return;
    }
    let (xf, yf, zf) = (*x.add(i), *y.add(i), *z.add(i));
    let (a, b, c) = (f16::from_f32(xf), f16::from_f32(yf), f16::from_f32(zf));
    let (p, q, r) = (bf16::from_f32(xf), bf16::from_f32(yf), bf16::from_f32(zf));
    let h2 = f16x2::from_f32s(xf, yf) * f16x2::new(b, a) + f16x2::new(c, c);
    let b2 = bf16x2::from_f32s(xf, yf).fma(bf16x2::new(q, p), bf16x2::new(r, r));
    let o = out.add(i * 16);
    let vals = [
        a.to_bits(),
        (a + b).to_bits(),
        (a - b).to_bits(),
        (a * b).to_bits(),
        a.fma(b, c).to_bits(),
        a.min(b).to_bits(),
        (-a).abs().to_bits(),
        p.to_bits(),
        (p + q).to_bits(),
        (p - q).to_bits(),
        (p * q).to_bits(),
        p.fma(q, r).to_bits(),
        h2.x.to_bits(),
        h2.y.to_bits(),
        b2.x.to_bits(),
        b2.y.to_bits(),
    ];
    unroll::<16>(|j| *o.add(j) = vals[j]);
}

/// One block: a TMA load of the box at `(x, y)` of `src` into shared memory (completing on an
/// `mbarrier` that expects its bytes), then a TMA store of it to the same box of `dst`. The box
/// is 32 x 16 `f32`.
#[kernel]
pub unsafe fn tma_roundtrip(src: *const TensorMap, dst: *const TensorMap, x: i32, y: i32, phase_out: *mut u32) {
    let tile = shared_array![Aligned<[f32; 512]>; 1].cast::<f32>();
    let bar = shared_array![Mbarrier; 1].cast::<Mbarrier>();
    if !arch::has_sm90() {
        trap();
    }
    if thread_idx().x == 0 {
        prefetch_tensormap(src);
        mbarrier_init(bar, 1);
        fence_mbarrier_init();
        mbarrier_arrive_expect_tx(bar, 512 * 4);
        tma_load_2d(tile, src, x, y, bar);
    }
    sync_threads();
    // Phase 0 completes once the bytes landed; phase 1 has not.
    mbarrier_wait_parity(bar, 0);
    if thread_idx().x == 0 {
        *phase_out = mbarrier_try_wait_parity(bar, 1) as u32;
        tma_store_2d(dst, x, y, tile);
        bulk_commit_group();
        bulk_wait_group::<0>();
    }
}

/// Clusters of 2 blocks (`cluster_dims(2)`): each block writes its rank into its shared memory,
/// the cluster syncs, and each reads its partner's through distributed shared memory (both the
/// generic `map_shared_rank` and the `.shared::cluster` form); 4 words a block, 32 threads.
#[kernel(cluster_dims(2, 1, 1))]
pub unsafe fn cluster_exchange(out: *mut u32) {
    let s = shared_array![u32; 2].cast::<u32>();
    if !arch::has_sm90() {
        trap();
    }
    let rank = cluster_ctarank();
    if thread_idx().x == 0 {
        *s = 100 + rank;
        *s.add(1) = block_idx().x;
    }
    cluster_sync();
    if thread_idx().x == 0 {
        let other = rank ^ 1;
        let o = out.add(block_idx().x as usize * 4);
        *o = *map_shared_rank(s, other);
        *o.add(1) = ld_shared_cluster_u32(map_shared_rank_addr(s.add(1), other));
        *o.add(2) = cluster_nctarank();
    }
    // Every lane of the warp takes part in the election; the lowest (lane 0) wins.
    if thread_idx().x < 32 && elect_one_sync() {
        *out.add(block_idx().x as usize * 4 + 3) = 10 * rank + lane_id();
    }
    cluster_sync();
}

/// What the arch queries answer in the image that runs: 3 words.
#[kernel(launch_bounds(64))]
pub unsafe fn arch_answers(out: *mut u32) {
    *out = arch::cuda_arch();
    *out.add(1) = arch::arch_specific();
    *out.add(2) = arch::family_specific();
}
