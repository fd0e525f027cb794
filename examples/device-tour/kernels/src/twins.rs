//! The Rust side of `cuda/twins.cu`: four kernels whose speed depends on shared memory in the
//! shared state space, shared atomics, vector loads and unrolled loops. Each is the same
//! algorithm as its CUDA twin, written with ptx-device (`rs_*` here, `cu_*` there).

use ptx_device::prelude::*;
use ptx_device::vector::{self, f32x2, f32x4, f64x2, u32x2};

/// `y = a * x + y` on `f32x4`s, grid-stride (`n4`: the number of `f32x4`s; `x`, `y` 16-aligned).
#[kernel]
pub unsafe fn rs_saxpy4(n4: u32, a: f32, x: *const f32, y: *mut f32) {
    let (x, y) = (x.cast::<f32x4>(), y.cast::<f32x4>());
    let (stride, mut i) = (grid_stride(), global_index());
    while i < n4 as usize {
        let xv = vector::ld_global_nc(x.add(i));
        let yv = vector::ld_global(y.add(i));
        vector::st_global(y.add(i), f32x4::new(a * xv.x + yv.x, a * xv.y + yv.y, a * xv.z + yv.z, a * xv.w + yv.w));
        i += stride;
    }
}

const BM: usize = 128;
const BN: usize = 128;
const BK: usize = 8;
const TM: usize = 8;
const TN: usize = 8;

/// `C = A * B`, all `n` x `n` row-major, `n` a multiple of 128: 256 threads a block compute a
/// 128 x 128 tile of C, each thread an 8 x 8 block in registers; A and B pass through shared
/// tiles of depth 8 (A's transposed, so a thread reads its 8 rows as two `f32x4`s).
#[kernel]
pub unsafe fn rs_sgemm(n: u32, a: *const f32, b: *const f32, c: *mut f32) {
    let a_s = shared_array![f32x4; BK * BM / 4].cast::<f32>();
    let b_s = shared_array![f32x4; BK * BN / 4].cast::<f32>();
    let n = n as usize;
    let t = thread_idx().x as usize;
    let (tx, ty) = (t % 16, t / 16);
    let (m0, n0) = (block_idx().y as usize * BM, block_idx().x as usize * BN);
    let (a_row, a_col) = (t / 2, (t % 2) * 4);
    let (b_row, b_col) = (t / 32, (t % 32) * 4);
    let mut acc = [[0.0f32; TN]; TM];
    let mut k0 = 0;
    while k0 < n {
        let av = vector::ld_global_nc(a.add((m0 + a_row) * n + k0 + a_col).cast::<f32x4>());
        *a_s.add(a_col * BM + a_row) = av.x;
        *a_s.add((a_col + 1) * BM + a_row) = av.y;
        *a_s.add((a_col + 2) * BM + a_row) = av.z;
        *a_s.add((a_col + 3) * BM + a_row) = av.w;
        let bv = vector::ld_global_nc(b.add((k0 + b_row) * n + n0 + b_col).cast::<f32x4>());
        *b_s.add(b_row * BN + b_col).cast::<f32x4>() = bv;
        sync_threads();
        unroll::<BK>(|k| {
            let a0 = *a_s.add(k * BM + ty * TM).cast::<f32x4>();
            let a1 = *a_s.add(k * BM + ty * TM + 4).cast::<f32x4>();
            let b0 = *b_s.add(k * BN + tx * TN).cast::<f32x4>();
            let b1 = *b_s.add(k * BN + tx * TN + 4).cast::<f32x4>();
            let ar = [a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w];
            let br = [b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w];
            unroll::<TM>(|i| unroll::<TN>(|j| acc[i][j] += ar[i] * br[j]));
        });
        sync_threads();
        k0 += BK;
    }
    unroll::<TM>(|i| {
        let row = c.add((m0 + ty * TM + i) * n + n0 + tx * TN).cast::<f32x4>();
        let r = &acc[i];
        vector::st_global(row, f32x4::new(r[0], r[1], r[2], r[3]));
        vector::st_global(row.add(1), f32x4::new(r[4], r[5], r[6], r[7]));
    });
}

const TILE: usize = 32;
const ROWS: usize = 8;

/// `out = in^T`, `n` x `n`, `n` a multiple of 32: 32 x 8 threads move a 32 x 32 tile through
/// shared memory padded to 33 columns, so the column reads hit 32 different banks.
#[kernel]
pub unsafe fn rs_transpose(n: u32, input: *const f32, out: *mut f32) {
    let tile = shared_array![f32; TILE * (TILE + 1)].cast::<f32>();
    let n = n as usize;
    let (tx, ty) = (thread_idx().x as usize, thread_idx().y as usize);
    let (bx, by) = (block_idx().x as usize, block_idx().y as usize);
    let (x, y) = (bx * TILE + tx, by * TILE + ty);
    unroll::<{ TILE / ROWS }>(|r| {
        let j = r * ROWS;
        *tile.add((ty + j) * (TILE + 1) + tx) = *input.add((y + j) * n + x);
    });
    sync_threads();
    let (x, y) = (by * TILE + tx, bx * TILE + ty);
    unroll::<{ TILE / ROWS }>(|r| {
        let j = r * ROWS;
        *out.add((y + j) * n + x) = *tile.add(tx * (TILE + 1) + ty + j);
    });
}

/// 256-bin histogram of the bytes of `words` (`n` words, 4 bytes each): per-block counts in
/// shared memory with `red.shared.add`, then one global atomic per bin and block.
#[kernel]
pub unsafe fn rs_histogram(n: u32, words: *const u32, hist: *mut u32) {
    let s = shared_array![u32; 256].cast::<u32>();
    let t = thread_idx().x as usize;
    let step = block_dim().x as usize;
    let mut b = t;
    while b < 256 {
        *s.add(b) = 0;
        b += step;
    }
    sync_threads();
    let (stride, mut i) = (grid_stride(), global_index());
    while i < n as usize {
        let w = *words.add(i);
        red_add_shared(s.add((w & 0xff) as usize), 1u32);
        red_add_shared(s.add((w >> 8 & 0xff) as usize), 1u32);
        red_add_shared(s.add((w >> 16 & 0xff) as usize), 1u32);
        red_add_shared(s.add((w >> 24) as usize), 1u32);
        i += stride;
    }
    sync_threads();
    let mut b = t;
    while b < 256 {
        let count = *s.add(b);
        if count != 0 {
            red_add(hist.add(b), count);
        }
        b += step;
    }
}

/// Words per thread of [`rs_helpers`]: four width shuffles, a vector's four lanes through
/// shared memory, the same through `cp.async`, then an unrolled sum and three two-lane vectors
/// (written as one `u32x4`).
pub const HELPER_OUTS: usize = 16;
/// Words per block of [`rs_helpers`]'s atomics.
pub const HELPER_ATOMICS: usize = 10;

/// The helpers the twins do not use, each once (launch one block of 64 threads; `x` holds 256
/// floats, `out` 64 x [`HELPER_OUTS`] words, `atomics` [`HELPER_ATOMICS`] zeroed words): shuffles
/// in 8-lane segments, shared and scoped atomics, vector loads and stores in every state space,
/// the 16-byte `cp.async` and `unroll`.
#[kernel]
pub unsafe fn rs_helpers(x: *const f32, out: *mut u32, atomics: *mut u32) {
    let t = thread_idx().x;
    let lane = lane_id();
    let out = out.add(t as usize * HELPER_OUTS);
    *out = shfl_width_sync(FULL_MASK, lane, 0, 8);
    *out.add(1) = shfl_up_width_sync(FULL_MASK, lane, 1, 8);
    *out.add(2) = shfl_down_width_sync(FULL_MASK, lane, 1, 8);
    *out.add(3) = shfl_xor_width_sync(FULL_MASK, lane, 4, 8);

    let counters = shared_array![u32; 8].cast::<u32>();
    let vectors = shared_array![f32x4; 64].cast::<f32x4>();
    let copies = shared_array![f32x4; 64].cast::<f32x4>();
    if t < 8 {
        *counters.add(t as usize) = 0;
    }
    sync_threads();
    let x4 = x.cast::<f32x4>();
    // Through registers: global -> shared -> global, and through cp.async.cg.
    let v = vector::ld_global(x4.add(t as usize));
    let w = vector::ld_global_nc(x4.add(t as usize));
    vector::st_shared(vectors.add(t as usize), f32x4::new(v.x, v.y, w.z, w.w));
    ptx_device::mem::cp_async_16(copies.add(t as usize), x4.add(63 - t as usize));
    ptx_device::mem::cp_async_commit_group();
    atomic_add_shared(counters, 1u32);
    red_add_shared(counters.add(1), 2u32);
    atomic_max_shared(counters.add(2), t);
    atomic_cas_shared(counters.add(3), 0u32, t + 100);
    // The typed form: a pointer known to be shared, offset and handed back as a generic one.
    let typed = SharedPtr::new(counters).add(4);
    atomic_exch_shared(typed.as_ptr(), 9u32);
    red_or_shared(counters.add(5), 1u32 << (t % 32));
    ptx_device::mem::cp_async_wait_all();
    sync_threads();
    let back = vector::ld_shared(vectors.add(63 - t as usize));
    let copied = *copies.add(t as usize);
    let words = [back.x, back.y, back.z, back.w, copied.x, copied.y, copied.z, copied.w];
    let mut sum = 0u32;
    unroll::<10>(|i| sum += i as u32 * (t + 1));
    unroll::<8>(|i| *out.add(4 + i) = words[i].to_bits());
    // Two-lane vectors: f64x2 and u32x2 through shared memory, f32x2 from global.
    let d = shared_array![f64x2; 64].cast::<f64x2>();
    let u = shared_array![u32x2; 64].cast::<u32x2>();
    vector::st_shared(d.add(t as usize), f64x2::new(t as f64, 0.5));
    vector::st_shared(u.add(t as usize), u32x2::new(t, 1000));
    sync_threads();
    let (dv, uv) = (vector::ld_shared(d.add(63 - t as usize)), vector::ld_shared(u.add(63 - t as usize)));
    let f2 = vector::ld_global_nc(x.cast::<f32x2>().add(t as usize));
    let tail = ptx_device::vector::u32x4::new(sum, (dv.x + dv.y) as u32, uv.x + uv.y, (f2.x + f2.y) as u32);
    vector::st_global(out.add(12).cast::<ptx_device::vector::u32x4>(), tail);

    atomic_add_global(atomics, 1u32);
    atomic_add_block(atomics.add(1), 1u32);
    atomic_add_system(atomics.add(2), 1u32);
    red_add(atomics.add(3), 1u32);
    if t < 6 {
        *atomics.add(4 + t as usize) = *counters.add(t as usize);
    }
}
