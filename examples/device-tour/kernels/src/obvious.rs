//! The twins of `twins.rs` written the obvious way, as a Rust programmer new to ptx-device writes
//! them: the generic `atomic_add` on a shared array, `for` loops over small arrays by value,
//! fixed-trip loops without `unroll`, plain dereferences. The link stage's defaults are what must
//! make them as fast as their CUDA twins (`cuda/twins.cu`, `cuda/obvious.cu`), with no kernel
//! option set.

use ptx_device::prelude::*;

/// 256-bin histogram of the bytes of `words` (`n` words): per-block counts in shared memory,
/// then one global atomic per bin and block. Twin: `cu_histogram`.
#[kernel]
pub unsafe fn rs_histogram_obvious(n: u32, words: *const u32, hist: *mut u32) {
    let s = shared_array![u32; 256].cast::<u32>();
    let (t, step) = (thread_idx().x as usize, block_dim().x as usize);
    for b in (t..256).step_by(step) {
        *s.add(b) = 0;
    }
    sync_threads();
    let mut i = global_index();
    while i < n as usize {
        for byte in (*words.add(i)).to_le_bytes() {
            atomic_add(s.add(byte as usize), 1);
        }
        i += grid_stride();
    }
    sync_threads();
    for b in (t..256).step_by(step) {
        let count = *s.add(b);
        if count != 0 {
            atomic_add(hist.add(b), count);
        }
    }
}

/// Four words, loaded in one 16-byte access.
#[repr(C, align(16))]
#[derive(Clone, Copy)]
struct Words4([u32; 4]);

/// Blocks of at most this many threads for [`rs_histogram16_obvious`] (and `cu_histogram16`).
pub const HISTOGRAM16_MAX_THREADS: u32 = 256;

/// The histogram of [`rs_histogram_obvious`] over 16-byte loads (`n4` groups of four words,
/// `words` 16-aligned), each thread's four words and their bytes taken by value; at most 256
/// threads a block, four blocks an SM (CUDA's `__launch_bounds__(256, 4)`). Twin: `cu_histogram16`.
#[kernel(launch_bounds(256, 4))]
pub unsafe fn rs_histogram16_obvious(n4: u32, words: *const u32, hist: *mut u32) {
    let s = shared_array![u32; 256].cast::<u32>();
    let (t, step) = (thread_idx().x as usize, block_dim().x as usize);
    for b in (t..256).step_by(step) {
        *s.add(b) = 0;
    }
    sync_threads();
    let words = words.cast::<Words4>();
    for i in (global_index()..n4 as usize).step_by(grid_stride()) {
        let v = *words.add(i);
        for w in v.0 {
            for byte in w.to_le_bytes() {
                atomic_add(s.add(byte as usize), 1);
            }
        }
    }
    sync_threads();
    for b in (t..256).step_by(step) {
        let count = *s.add(b);
        if count != 0 {
            atomic_add(hist.add(b), count);
        }
    }
}

const BM: usize = 128;
const BN: usize = 128;
const BK: usize = 8;
const TM: usize = 8;
const TN: usize = 8;

/// `C = A * B` as `rs_sgemm` (the same tiles, loads and FMA order), with plain `for` loops over
/// the tile depth and the 8 x 8 block, and plain stores. Twin: `cu_sgemm`.
#[kernel]
pub unsafe fn rs_sgemm_obvious(n: u32, a: *const f32, b: *const f32, c: *mut f32) {
    let a_s = shared_array![f32x4; BK * BM / 4].cast::<f32>();
    let b_s = shared_array![f32x4; BK * BN / 4].cast::<f32>();
    let n = n as usize;
    let t = thread_idx().x as usize;
    let (tx, ty) = (t % 16, t / 16);
    let (m0, n0) = (block_idx().y as usize * BM, block_idx().x as usize * BN);
    let (a_row, a_col) = (t / 2, (t % 2) * 4);
    let (b_row, b_col) = (t / 32, (t % 32) * 4);
    let mut acc = [[0.0f32; TN]; TM];
    for k0 in (0..n).step_by(BK) {
        let av = ptx_device::vector::ld_global_nc(a.add((m0 + a_row) * n + k0 + a_col).cast::<f32x4>());
        *a_s.add(a_col * BM + a_row) = av.x;
        *a_s.add((a_col + 1) * BM + a_row) = av.y;
        *a_s.add((a_col + 2) * BM + a_row) = av.z;
        *a_s.add((a_col + 3) * BM + a_row) = av.w;
        let bv = ptx_device::vector::ld_global_nc(b.add((k0 + b_row) * n + n0 + b_col).cast::<f32x4>());
        *b_s.add(b_row * BN + b_col).cast::<f32x4>() = bv;
        sync_threads();
        for k in 0..BK {
            let a0 = *a_s.add(k * BM + ty * TM).cast::<f32x4>();
            let a1 = *a_s.add(k * BM + ty * TM + 4).cast::<f32x4>();
            let b0 = *b_s.add(k * BN + tx * TN).cast::<f32x4>();
            let b1 = *b_s.add(k * BN + tx * TN + 4).cast::<f32x4>();
            let ar = [a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w];
            let br = [b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w];
            for i in 0..TM {
                for j in 0..TN {
                    acc[i][j] += ar[i] * br[j];
                }
            }
        }
        sync_threads();
    }
    for (i, r) in acc.iter().enumerate() {
        let row = c.add((m0 + ty * TM + i) * n + n0 + tx * TN).cast::<f32x4>();
        *row = f32x4::new(r[0], r[1], r[2], r[3]);
        *row.add(1) = f32x4::new(r[4], r[5], r[6], r[7]);
    }
}

const TILE: usize = 32;
const ROWS: usize = 8;

/// `out = in^T` as `rs_transpose`, with `step_by` loops over the tile's rows. Twin:
/// `cu_transpose`.
#[kernel]
pub unsafe fn rs_transpose_obvious(n: u32, input: *const f32, out: *mut f32) {
    let tile = shared_array![f32; TILE * (TILE + 1)].cast::<f32>();
    let n = n as usize;
    let (tx, ty) = (thread_idx().x as usize, thread_idx().y as usize);
    let (bx, by) = (block_idx().x as usize, block_idx().y as usize);
    let (x, y) = (bx * TILE + tx, by * TILE + ty);
    for j in (0..TILE).step_by(ROWS) {
        *tile.add((ty + j) * (TILE + 1) + tx) = *input.add((y + j) * n + x);
    }
    sync_threads();
    let (x, y) = (by * TILE + tx, bx * TILE + ty);
    for j in (0..TILE).step_by(ROWS) {
        *out.add((y + j) * n + x) = *tile.add(tx * (TILE + 1) + ty + j);
    }
}

/// Taps of [`rs_conv5_obvious`] on each side.
pub const CONV_TAPS: usize = 5;

/// A 5 x 5 convolution of a `(w + 4)` x `(h + 4)` image into a `w` x `h` one (no padding):
/// one thread a pixel, a two-level loop over the taps. Twin: `cu_conv5`.
#[kernel]
pub unsafe fn rs_conv5_obvious(w: u32, h: u32, input: *const f32, weights: *const f32, out: *mut f32) {
    let (x, y) = global_index_2d();
    if x >= w as usize || y >= h as usize {
        return;
    }
    let pitch = w as usize + CONV_TAPS - 1;
    let mut acc = 0.0f32;
    for dy in 0..CONV_TAPS {
        for dx in 0..CONV_TAPS {
            acc += *weights.add(dy * CONV_TAPS + dx) * *input.add((y + dy) * pitch + x + dx);
        }
    }
    *out.add(y * w as usize + x) = acc;
}

/// Outputs and inputs of [`rs_dense16_obvious`]'s layer.
pub const DENSE_OUT: usize = 16;
pub const DENSE_IN: usize = 32;

/// A small dense layer applied to each of `batch` samples, one thread a sample:
/// `out[i][s] = sum_k w[i][k] * x[k][s]` (`w` 16 x 32 row-major, `x` 32 x `batch` and `out`
/// 16 x `batch` sample-minor, so a warp's loads are coalesced). A 32-step loop around a
/// 16-step one, sixteen accumulators: the loop shape nvcc unrolls by four, not fully. Twin:
/// `cu_dense16`.
#[kernel]
pub unsafe fn rs_dense16_obvious(batch: u32, w: *const f32, x: *const f32, out: *mut f32) {
    let s = global_index();
    let batch = batch as usize;
    if s >= batch {
        return;
    }
    let mut acc = [0.0f32; DENSE_OUT];
    for k in 0..DENSE_IN {
        let v = *x.add(k * batch + s);
        for (i, a) in acc.iter_mut().enumerate() {
            *a += *w.add(i * DENSE_IN + k) * v;
        }
    }
    for (i, a) in acc.iter().enumerate() {
        *out.add(i * batch + s) = *a;
    }
}

/// Words of [`rs_inc_dec`]'s output.
pub const INC_DEC_OUTS: usize = 4;

/// `atomicInc`/`atomicDec` as a CUDA programmer uses them, on global and shared counters that
/// wrap at 10 (`limit` = 9), by each of `n` threads: the global counters directly, the block's
/// through a shared pair added to `out[2..4]` once per block. `out` starts zeroed.
#[kernel]
pub unsafe fn rs_inc_dec(n: u32, limit: u32, out: *mut u32) {
    let s = shared_array![u32; 2].cast::<u32>();
    let t = thread_idx().x;
    if t == 0 {
        (*s, *s.add(1)) = (0, 0);
    }
    sync_threads();
    if (global_index() as u32) < n {
        atomic_inc(out, limit);
        atomic_dec(out.add(1), limit);
        atomic_inc(s, limit);
        atomic_dec(s.add(1), limit);
    }
    sync_threads();
    if t == 0 {
        atomic_add(out.add(2), *s);
        atomic_add(out.add(3), *s.add(1));
    }
}
