//! A tour of `ptx-device`: every helper in a Rust kernel, each kernel paired with a CUDA C++
//! kernel in `cuda/` doing the same (`rs_*` here, `cu_*` there), so that the tests compare
//! the two builds bit for bit and the benchmark times them side by side.
//!
//! `ops` holds the per-element integer and IEEE operations; `twins` the kernels where shared
//! memory, shared atomics, vector loads and unrolling decide the speed (saxpy on `f32x4`,
//! SGEMM, transpose, histogram) and one that runs every newer helper; `obvious` the same twins
//! written the obvious way (generic atomics, plain loops); this file the warp,
//! atomic, index, timing and memory kernels, and the reductions and softmax.
#![no_std]

mod obvious;
mod ops;
mod twins;

pub use obvious::*;
pub use ops::{F32_OPS, F64_OPS, INT_OPS};
use ptx_device::prelude::*;
use ptx_device::{mem, time};
pub use twins::*;

/// Output words per thread of [`rs_warp`].
pub const WARP_OUTS: usize = 18;

/// Warp operations with `w + 1` active lanes in warp `w` (launch one block of 1024 threads):
/// shuffle reductions, a scan, a broadcast, votes and matches, on `x[thread]`.
#[kernel]
pub unsafe fn rs_warp(x: *const u32, out: *mut u32) {
    let t = thread_idx().x;
    let (lane, active) = (lane_id(), t / warp_size() + 1);
    if lane >= active {
        return;
    }
    let mask = activemask();
    sync_warp(mask);
    let v = *x.add(t as usize);
    // Sums toward lane 0 with shfl.down: a lane takes its partner's value only when the partner
    // is active (an inactive lane's value is undefined).
    let (mut sum, mut fsum, mut dsum, mut lsum) = (v, v as f32, v as f64, v as u64 * 3);
    let mut max = v;
    let mut offset = 16;
    while offset > 0 {
        let (s, f, d, l) = (
            shfl_down_sync(mask, sum, offset),
            shfl_down_sync(mask, fsum, offset),
            shfl_down_sync(mask, dsum, offset),
            shfl_down_sync(mask, lsum, offset),
        );
        let m = shfl_xor_sync(mask, max, offset);
        if lane + offset < active {
            (sum, fsum, dsum, lsum) = (sum + s, fsum + f, dsum + d, lsum + l);
        }
        if lane ^ offset < active {
            max = max.max(m);
        }
        offset /= 2;
    }
    // Inclusive prefix sum with shfl.up.
    let mut scan = v;
    let mut offset = 1;
    while offset < 32 {
        let s = shfl_up_sync(mask, scan, offset);
        if lane >= offset {
            scan += s;
        }
        offset *= 2;
    }
    let words: [u32; WARP_OUTS] = [
        mask,
        sum,
        fsum.to_bits(),
        dsum.to_bits() as u32,
        (dsum.to_bits() >> 32) as u32,
        lsum as u32,
        (lsum >> 32) as u32,
        scan,
        max,
        shfl_sync(mask, v, active - 1),
        ballot_sync(mask, v & 1 == 1),
        all_sync(mask, v > 0) as u32,
        any_sync(mask, v > 1000) as u32,
        match_any_sync(mask, v % 3),
        match_all_sync(mask, 7u64),
        match_all_sync(mask, v as f32),
        lane | warp_size() << 8,
        shfl_sync(mask, v as i64 - 5000, (lane + 1) % active) as u32,
    ];
    let out = out.add(t as usize * WARP_OUTS);
    for (j, w) in words.into_iter().enumerate() {
        *out.add(j) = w;
    }
}

/// Words per block of [`rs_atomics`]'s shared-memory results.
pub const BLOCK_OUTS: usize = 7;

/// Every atomic, from every thread, on a few global addresses (and per block on shared ones):
/// contention by design. Results are order-independent, so the host checks them exactly.
#[kernel]
pub unsafe fn rs_atomics(
    n: u32,
    x: *const u32,
    g32: *mut u32,
    g64: *mut u64,
    gi: *mut i32,
    gl: *mut i64,
    gf: *mut f32,
    gd: *mut f64,
    per_block: *mut u32,
) {
    let (s32, sf, s64) = (shared_array![u32; 4].cast::<u32>(), shared_array![f32; 1].cast::<f32>(), shared_array![u64; 1].cast::<u64>());
    let t = thread_idx().x;
    if t == 0 {
        (*s32.add(0), *s32.add(1), *s32.add(2), *s32.add(3)) = (0, u32::MAX, 0, 0);
        (*sf, *s64) = (0.0, 0);
    }
    sync_threads();
    let i = global_index();
    if i < n as usize {
        let v = *x.add(i);
        atomic_add(g32, 1);
        atomic_min(g32.add(1), v);
        atomic_max(g32.add(2), v);
        atomic_and(g32.add(3), v | 0xf0f0_f0f0);
        atomic_or(g32.add(4), v & 0x0101_0101);
        atomic_xor(g32.add(5), v);
        atomic_exch(g32.add(6), i as u32);
        cas_loop(g32.add(7), |old| old + 1);

        let w = v as u64;
        atomic_add(g64, w * 0x1_0000_0001);
        atomic_min(g64.add(1), w << 20 | 5);
        atomic_max(g64.add(2), w << 20 | 5);
        atomic_and(g64.add(3), w << 32 | 0xffff_ffff);
        atomic_or(g64.add(4), (w & 0x0101) << 40);
        atomic_xor(g64.add(5), w * 3);
        atomic_exch(g64.add(6), i as u64);
        cas_loop(g64.add(7), |old| old + 2);

        let s = v as i32;
        atomic_add(gi, s);
        atomic_min(gi.add(1), s);
        atomic_max(gi.add(2), s);
        atomic_xor(gi.add(3), s);
        let l = v as i64 - (1 << 31);
        atomic_add(gl, l);
        atomic_min(gl.add(1), l);
        atomic_max(gl.add(2), l);
        atomic_exch(gl.add(3), l);

        atomic_add(gf, 1.0f32);
        atomic_add(gf.add(1), (v & 0xff) as f32);
        atomic_exch(gf.add(2), v as f32);
        cas_loop(gf.add(3), |old| old + 2.0);
        atomic_add(gd, v as f64);
        atomic_exch(gd.add(1), i as f64);

        atomic_add(s32, 1);
        atomic_min(s32.add(1), v);
        atomic_max(s32.add(2), v);
        cas_loop(s32.add(3), |old| old + 3);
        atomic_add(sf, 0.5f32);
        atomic_add(s64, w);
    }
    sync_threads();
    if t == 0 {
        let words = [*s32, *s32.add(1), *s32.add(2), *s32.add(3), (*sf).to_bits(), *s64 as u32, (*s64 >> 32) as u32];
        let out = per_block.add(block_idx().x as usize * BLOCK_OUTS);
        for (j, w) in words.into_iter().enumerate() {
            *out.add(j) = w;
        }
    }
}

/// `*p = f(*p)` atomically, with `atomic_cas` (compared by bits, so floats work too).
unsafe fn cas_loop<T: AtomicCas + PartialEq>(p: *mut T, f: impl Fn(T) -> T) {
    let mut old = p.read_volatile();
    loop {
        let seen = atomic_cas(p, old, f(old));
        if seen == old {
            return;
        }
        old = seen;
    }
}

/// Words per element of [`rs_index`].
pub const INDEX_OUTS: usize = 6;

/// What a thread of a 2-D launch knows about itself, for `w` x `h` elements.
#[kernel]
pub unsafe fn rs_index(w: u32, h: u32, out: *mut u32) {
    let (col, row) = global_index_2d();
    if col >= w as usize || row >= h as usize {
        return;
    }
    let (t, b, d, g) = (thread_idx(), block_idx(), block_dim(), grid_dim());
    let words = [
        col as u32,
        row as u32,
        t.x | t.y << 8 | t.z << 16,
        b.x | b.y << 16,
        d.x | d.y << 8 | d.z << 16,
        g.x | g.y << 16 | (grid_stride() as u32) << 24,
    ];
    let out = out.add((row * w as usize + col) * INDEX_OUTS);
    for (j, v) in words.into_iter().enumerate() {
        *out.add(j) = v;
    }
}

/// Reverses each block-sized tile of `x` into `y` through dynamic shared memory (one `f32` a
/// thread), loading it with `cp.async`, publishing with every fence on the way.
#[kernel]
pub unsafe fn rs_reverse_tiles(n: u32, x: *const f32, y: *mut f32) {
    let tile = dynamic_shared::<f32>();
    let (t, size) = (thread_idx().x as usize, block_dim().x as usize);
    let i = global_index();
    if i < n as usize {
        mem::cp_async(tile.add(t), x.add(i));
    }
    mem::cp_async_commit_group();
    mem::cp_async_wait_group::<0>();
    mem::cp_async_wait_all();
    fence_acq_rel_cta();
    fence_acq_rel_gpu();
    fence_acq_rel_sys();
    sync_threads();
    let base = i - t;
    let src = size - 1 - t;
    if i < n as usize && base + src < n as usize {
        *y.add(i) = *tile.add(src);
    }
}

/// Reads the three counters around a short spin: `[clock64 before, after, globaltimer
/// before, after, clock before, after]`.
#[kernel]
pub unsafe fn rs_timing(out: *mut u64) {
    let (c0, g0, k0) = (time::clock64(), time::globaltimer(), time::clock());
    while time::clock64() - c0 < 10_000 {}
    let (c1, g1, k1) = (time::clock64(), time::globaltimer(), time::clock());
    let words = [c0, c1, g0, g1, k0 as u64, k1 as u64];
    for (j, v) in words.into_iter().enumerate() {
        *out.add(j) = v;
    }
}

/// Threads a block of the benchmark kernels.
pub const BENCH_BLOCK: u32 = 256;

/// This thread's sum of `x` over a grid-stride loop, four loads in flight.
#[inline(always)]
unsafe fn grid_sum(n: usize, x: *const f32) -> f32 {
    let (stride, mut i) = (grid_stride(), global_index());
    let (mut a0, mut a1, mut a2, mut a3) = (0.0f32, 0.0f32, 0.0f32, 0.0f32);
    while i + 3 * stride < n {
        let p = x.add(i);
        a0 += *p;
        a1 += *p.add(stride);
        a2 += *p.add(2 * stride);
        a3 += *p.add(3 * stride);
        i += 4 * stride;
    }
    while i < n {
        a0 += *x.add(i);
        i += stride;
    }
    (a0 + a1) + (a2 + a3)
}

/// Per-block sums of `x` (256 threads): a grid-stride loop, then a tree in shared memory.
#[kernel]
pub unsafe fn rs_reduce_shared(n: u32, x: *const f32, partial: *mut f32) {
    let s = shared_array![f32; BENCH_BLOCK as usize].cast::<f32>();
    let t = thread_idx().x as usize;
    *s.add(t) = grid_sum(n as usize, x);
    sync_threads();
    let mut half = BENCH_BLOCK as usize / 2;
    while half > 0 {
        if t < half {
            *s.add(t) += *s.add(t + half);
        }
        sync_threads();
        half /= 2;
    }
    if t == 0 {
        *partial.add(block_idx().x as usize) = *s;
    }
}

#[inline(always)]
unsafe fn warp_sum(mut v: f32) -> f32 {
    for offset in [16, 8, 4, 2, 1] {
        v += shfl_xor_sync(FULL_MASK, v, offset);
    }
    v
}

#[inline(always)]
unsafe fn warp_max(mut v: f32) -> f32 {
    for offset in [16, 8, 4, 2, 1] {
        v = math::fmax(v, shfl_xor_sync(FULL_MASK, v, offset));
    }
    v
}

/// The block's `op`-reduction of `v` (every thread gets it): warp shuffles, one shared word
/// per warp, shuffles again.
#[inline(always)]
unsafe fn block_reduce(v: f32, identity: f32, op: unsafe fn(f32) -> f32) -> f32 {
    let s = shared_array![f32; 32].cast::<f32>();
    let (lane, warp) = (lane_id() as usize, thread_idx().x as usize / 32);
    let v = op(v);
    sync_threads(); // the previous reduction has read `s`
    if lane == 0 {
        *s.add(warp) = v;
    }
    sync_threads();
    let v = if lane < block_dim().x as usize / 32 { *s.add(lane) } else { identity };
    op(v)
}

/// Per-block sums of `x` (256 threads): a grid-stride loop, then warp shuffles.
#[kernel]
pub unsafe fn rs_reduce_warp(n: u32, x: *const f32, partial: *mut f32) {
    let v = block_reduce(grid_sum(n as usize, x), 0.0, warp_sum);
    if thread_idx().x == 0 {
        *partial.add(block_idx().x as usize) = v;
    }
}

/// Floats a row of [`rs_softmax`].
pub const SOFTMAX_COLS: usize = 2048;
/// Floats of a row each thread holds in registers.
const SOFTMAX_PER_THREAD: usize = SOFTMAX_COLS / BENCH_BLOCK as usize;

/// Softmax of each row of `x` (`rows` x [`SOFTMAX_COLS`], one block of 256 a row), the row
/// read once: each thread keeps its 8 values in registers through the max, the sum of
/// `exp(x - max)` and `exp(x - max) / sum`.
#[kernel]
pub unsafe fn rs_softmax(rows: u32, x: *const f32, y: *mut f32) {
    let row = block_idx().x as usize;
    if row >= rows as usize {
        return;
    }
    let (t, step) = (thread_idx().x as usize, BENCH_BLOCK as usize);
    let (x, y) = (x.add(row * SOFTMAX_COLS + t), y.add(row * SOFTMAX_COLS + t));
    let mut v = [0.0f32; SOFTMAX_PER_THREAD];
    for k in 0..SOFTMAX_PER_THREAD {
        v[k] = *x.add(k * step);
    }
    let mut m = f32::NEG_INFINITY;
    for k in 0..SOFTMAX_PER_THREAD {
        m = math::fmax(m, v[k]);
    }
    let m = block_reduce(m, f32::NEG_INFINITY, warp_max);
    let mut sum = 0.0f32;
    for k in 0..SOFTMAX_PER_THREAD {
        v[k] = math::exp(v[k] - m);
        sum += v[k];
    }
    let sum = block_reduce(sum, 0.0, warp_sum);
    for k in 0..SOFTMAX_PER_THREAD {
        *y.add(k * step) = v[k] / sum;
    }
}
