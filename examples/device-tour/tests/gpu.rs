//! ptx-device against CUDA C++ on a GPU: each Rust kernel (`rs_*`) and its CUDA twin (`cu_*`)
//! run on the same inputs; integer and IEEE results must agree bit for bit, and both must
//! match the CPU where the CPU can say. ptx-runtime's test harness: without a CUDA driver each
//! test reports `ignored (no GPU: <reason>)`.

use std::sync::Arc;

use device_tour::*;
use ptx_runtime::cudarc::driver::{CudaSlice, CudaStream, LaunchConfig};
use ptx_runtime::harness::{self, Context};

fn main() {
    harness::run(vec![
        harness::gpu("integer_operations_are_bit_exact", integer_operations_are_bit_exact),
        harness::gpu("libdevice_math_and_ieee_operations_are_identical", libdevice_math_and_ieee_operations_are_identical),
        harness::gpu("shuffles_and_votes_are_right_for_every_active_lane_count", shuffles_and_votes_are_right_for_every_active_lane_count),
        harness::gpu("atomics_are_right_under_contention", atomics_are_right_under_contention),
        harness::gpu("indices_copies_and_timers_agree_with_cuda", indices_copies_and_timers_agree_with_cuda),
        harness::gpu("benchmark_kernels_compute_what_cuda_computes", benchmark_kernels_compute_what_cuda_computes),
    ]);
}

fn setup(ctx: &Context) -> (Arc<CudaStream>, kernels::Kernels) {
    (ctx.default_stream(), kernels::Kernels::load(ctx).unwrap())
}

fn zeros<T: ptx_runtime::cudarc::driver::DeviceRepr + ptx_runtime::cudarc::driver::ValidAsZeroBits>(
    s: &Arc<CudaStream>,
    n: usize,
) -> CudaSlice<T> {
    s.alloc_zeros::<T>(n).unwrap()
}

/// The first differing word of two per-element result tables, named by element and operation.
#[track_caller]
fn assert_same<T: PartialEq + std::fmt::LowerHex>(what: &str, ops: usize, rust: &[T], cuda: &[T]) {
    assert_same_but(what, ops, rust, cuda, |_, _| false)
}

/// As [`assert_same`], where `excused(rust, cuda)` pairs may differ (and are counted).
#[track_caller]
fn assert_same_but<T: PartialEq + std::fmt::LowerHex>(what: &str, ops: usize, rust: &[T], cuda: &[T], excused: impl Fn(&T, &T) -> bool) {
    assert_eq!(rust.len(), cuda.len());
    let excuses = (0..rust.len()).filter(|&i| rust[i] != cuda[i] && excused(&rust[i], &cuda[i])).count();
    if excuses > 0 {
        println!("{what}: {excuses} results are NaN on both sides with different payloads");
    }
    let bad: Vec<usize> = (0..rust.len()).filter(|&i| rust[i] != cuda[i] && !excused(&rust[i], &cuda[i])).collect();
    if let Some(&i) = bad.first() {
        panic!(
            "{what}: {} words differ; first: element {}, operation {} (0-based, the order of kernels/src/ops.rs): Rust {:#x}, CUDA {:#x}",
            bad.len(),
            i / ops,
            i % ops,
            rust[i],
            cuda[i]
        );
    }
}

fn integer_operations_are_bit_exact(ctx: &Context) {
    let (s, k) = setup(ctx);
    let n = 4099;
    let edge = [0u32, 1, 2, 31, 32, 63, 0x7fff_ffff, 0x8000_0000, 0xffff_ffff, 0x0000_ffff, 0xffff_0000, 0x1f1f];
    let mut w = Words(1);
    let a: Vec<u32> = edge.iter().flat_map(|&e| edge.iter().map(move |_| e)).chain(w.by_ref().map(|r| r as u32)).take(n).collect();
    let b: Vec<u32> = edge.iter().flat_map(|_| edge.iter().copied()).chain(w.map(|r| (r >> 32) as u32)).take(n).collect();
    let (da, db) = (s.clone_htod(&a).unwrap(), s.clone_htod(&b).unwrap());
    let (mut rs, mut cu) = (zeros::<u32>(&s, n * INT_OPS), zeros::<u32>(&s, n * INT_OPS));
    unsafe { k.rs_int_ops(&s, linear(n, 128), n as u32, &da, &db, &mut rs) }.unwrap();
    unsafe { k.cu_int_ops(&s, linear(n, 128), n as u32, &da, &db, &mut cu) }.unwrap();
    let (rs, cu) = (s.clone_dtoh(&rs).unwrap(), s.clone_dtoh(&cu).unwrap());
    assert_same("integer operations", INT_OPS, &rs, &cu);
    // The CPU agrees on what it can compute directly.
    for i in 0..n {
        let (x, y) = (a[i], b[i]);
        let row = &rs[i * INT_OPS..];
        assert_eq!(row[0] as u64 | (row[1] as u64) << 32, x as u64 * y as u64, "mul_wide_u32");
        assert_eq!(row[4], ((x as u64 * y as u64) >> 32) as u32, "mul_hi_u32");
        let (sum, carry) = (x as u64 | (y as u64) << 32).overflowing_add(y as u64 | (x as u64) << 32);
        assert_eq!((row[20], row[21], row[22] != 0), (sum as u32, (sum >> 32) as u32, carry), "add_carry_u32x2");
    }
}

fn libdevice_math_and_ieee_operations_are_identical(ctx: &Context) {
    let (s, k) = setup(ctx);
    let n = 3001;
    let (x, y, z) = (f32_inputs(n, 2), f32_inputs(n, 3), f32_inputs(n, 4));
    let (dx, dy, dz) = (s.clone_htod(&x).unwrap(), s.clone_htod(&y).unwrap(), s.clone_htod(&z).unwrap());
    let (mut rs, mut cu) = (zeros::<u32>(&s, n * F32_OPS), zeros::<u32>(&s, n * F32_OPS));
    unsafe { k.rs_math_f32(&s, linear(n, 128), n as u32, &dx, &dy, &dz, &mut rs) }.unwrap();
    unsafe { k.cu_math_f32(&s, linear(n, 128), n as u32, &dx, &dy, &dz, &mut cu) }.unwrap();
    // NaN payloads are not IEEE results: LLVM and NVVM may propagate different ones.
    let f32_nans = |a: &u32, b: &u32| f32::from_bits(*a).is_nan() && f32::from_bits(*b).is_nan();
    assert_same_but("f32 math", F32_OPS, &s.clone_dtoh(&rs).unwrap(), &s.clone_dtoh(&cu).unwrap(), f32_nans);

    let (x, y, z) = (f64_inputs(n, 5), f64_inputs(n, 6), f64_inputs(n, 7));
    let (dx, dy, dz) = (s.clone_htod(&x).unwrap(), s.clone_htod(&y).unwrap(), s.clone_htod(&z).unwrap());
    let (mut rs, mut cu) = (zeros::<u64>(&s, n * F64_OPS), zeros::<u64>(&s, n * F64_OPS));
    unsafe { k.rs_math_f64(&s, linear(n, 128), n as u32, &dx, &dy, &dz, &mut rs) }.unwrap();
    unsafe { k.cu_math_f64(&s, linear(n, 128), n as u32, &dx, &dy, &dz, &mut cu) }.unwrap();
    let rs = s.clone_dtoh(&rs).unwrap();
    let f64_nans = |a: &u64, b: &u64| f64::from_bits(*a).is_nan() && f64::from_bits(*b).is_nan();
    assert_same_but("f64 math", F64_OPS, &rs, &s.clone_dtoh(&cu).unwrap(), f64_nans);
    // IEEE basics against the CPU (x + y is operation 50, after 38 + 9 + 1 + 2 function results).
    for i in 0..n {
        let (a, b) = (x[i], y[i]);
        for (op, want) in [(50, a + b), (51, a - b), (52, a * b), (53, a / b)] {
            let got = f64::from_bits(rs[i * F64_OPS + op]);
            assert!(got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()), "op {op} on {a:e}, {b:e}: {got:e} vs {want:e}");
        }
    }
}

/// The CPU's view of `rs_warp`/`cu_warp` for warp `w` (`w + 1` active lanes).
fn warp_expected(x: &[u32], w: usize, lane: usize) -> [Option<u32>; WARP_OUTS] {
    let active = w + 1;
    let v = &x[w * 32..w * 32 + active];
    let mask = ((1u64 << active) - 1) as u32;
    let lanes = |f: &dyn Fn(u32) -> bool| v.iter().enumerate().filter(|(_, &x)| f(x)).fold(0u32, |m, (i, _)| m | 1 << i);
    let lane0 = |x: u32| if lane == 0 { Some(x) } else { None };
    let sum: u32 = v.iter().sum();
    let dsum = v.iter().map(|&x| x as f64).sum::<f64>().to_bits();
    let lsum: u64 = v.iter().map(|&x| x as u64 * 3).sum();
    let me = v[lane];
    [
        Some(mask),
        lane0(sum),
        lane0((sum as f32).to_bits()),
        lane0(dsum as u32),
        lane0((dsum >> 32) as u32),
        lane0(lsum as u32),
        lane0((lsum >> 32) as u32),
        Some(v[..=lane].iter().sum()),
        lane0(*v.iter().max().unwrap()),
        Some(v[active - 1]),
        Some(lanes(&|x| x & 1 == 1)),
        Some(v.iter().all(|&x| x > 0) as u32),
        Some(v.iter().any(|&x| x > 1000) as u32),
        Some(lanes(&|x| x % 3 == me % 3)),
        Some(mask),
        Some(if v.iter().all(|&x| x == v[0]) { mask } else { 0 }),
        Some(lane as u32 | 32 << 8),
        Some((v[(lane + 1) % active] as i64 - 5000) as u32),
    ]
}

fn shuffles_and_votes_are_right_for_every_active_lane_count(ctx: &Context) {
    let (s, k) = setup(ctx);
    // Warp w of the one block has w + 1 active lanes: every count from 1 to 32 in one launch.
    let mut words = Words(8);
    let mut x: Vec<u32> = (0..1024).map(|_| (words.next().unwrap() % 2000) as u32).collect();
    x[5 * 32..5 * 32 + 6].fill(42); // a warp whose lanes all agree, for match.all
    let dx = s.clone_htod(&x).unwrap();
    let cfg = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (1024, 1, 1), shared_mem_bytes: 0 };
    let (mut rs, mut cu) = (zeros::<u32>(&s, 1024 * WARP_OUTS), zeros::<u32>(&s, 1024 * WARP_OUTS));
    unsafe { k.rs_warp(&s, cfg, &dx, &mut rs) }.unwrap();
    unsafe { k.cu_warp(&s, cfg, &dx, &mut cu) }.unwrap();
    let (rs, cu) = (s.clone_dtoh(&rs).unwrap(), s.clone_dtoh(&cu).unwrap());
    for (name, got) in [("Rust", &rs), ("CUDA", &cu)] {
        for w in 0..32 {
            for lane in 0..=w {
                let t = w * 32 + lane;
                for (j, want) in warp_expected(&x, w, lane).into_iter().enumerate() {
                    if let Some(want) = want {
                        assert_eq!(got[t * WARP_OUTS + j], want, "{name}: {} active lanes, lane {lane}, output {j}", w + 1);
                    }
                }
            }
        }
    }
}

fn atomics_are_right_under_contention(ctx: &Context) {
    let (s, k) = setup(ctx);
    let (n, block) = (65536usize, 256u32);
    let x: Vec<u32> = Words(9).map(|r| r as u32).take(n).collect();
    let dx = s.clone_htod(&x).unwrap();
    let blocks = n / block as usize;
    let mut want64 = [0u64, u64::MAX, 0, u64::MAX, 0, 0, 0, 0];
    for &v in &x {
        let w = v as u64;
        want64[0] = want64[0].wrapping_add(w * 0x1_0000_0001);
        want64[1] = want64[1].min(w << 20 | 5);
        want64[2] = want64[2].max(w << 20 | 5);
        want64[3] &= w << 32 | 0xffff_ffff;
        want64[4] |= (w & 0x0101) << 40;
        want64[5] ^= w * 3;
    }
    want64[7] = 2 * n as u64;
    for (name, rust) in [("Rust", true), ("CUDA", false)] {
        let mut g32 = s.clone_htod(&[0u32, u32::MAX, 0, u32::MAX, 0, 0, 0, 0]).unwrap();
        let mut g64 = s.clone_htod(&[0u64, u64::MAX, 0, u64::MAX, 0, 0, 0, 0]).unwrap();
        let mut gi = s.clone_htod(&[0i32, i32::MAX, i32::MIN, 0]).unwrap();
        let mut gl = s.clone_htod(&[0i64, i64::MAX, i64::MIN, 0]).unwrap();
        let mut gf = s.clone_htod(&[0f32; 4]).unwrap();
        let mut gd = s.clone_htod(&[0f64; 2]).unwrap();
        let mut per_block = zeros::<u32>(&s, blocks * BLOCK_OUTS);
        let cfg = linear(n, block);
        if rust {
            unsafe { k.rs_atomics(&s, cfg, n as u32, &dx, &mut g32, &mut g64, &mut gi, &mut gl, &mut gf, &mut gd, &mut per_block) }
                .unwrap();
        } else {
            unsafe { k.cu_atomics(&s, cfg, n as u32, &dx, &mut g32, &mut g64, &mut gi, &mut gl, &mut gf, &mut gd, &mut per_block) }
                .unwrap();
        }
        let g32 = s.clone_dtoh(&g32).unwrap();
        let and = x.iter().fold(u32::MAX, |a, &v| a & (v | 0xf0f0_f0f0));
        let or = x.iter().fold(0, |a, &v| a | (v & 0x0101_0101));
        let xor = x.iter().fold(0, |a, &v| a ^ v);
        assert_eq!(g32[..6], [n as u32, *x.iter().min().unwrap(), *x.iter().max().unwrap(), and, or, xor], "{name}: u32 atomics");
        assert!((g32[6] as usize) < n, "{name}: exch left one of the written values");
        assert_eq!(g32[7], n as u32, "{name}: CAS loop");
        let g64 = s.clone_dtoh(&g64).unwrap();
        assert_eq!([&g64[..6], &g64[7..]].concat(), [&want64[..6], &want64[7..]].concat(), "{name}: u64 atomics");
        assert!((g64[6] as usize) < n);
        let gi = s.clone_dtoh(&gi).unwrap();
        let si: Vec<i32> = x.iter().map(|&v| v as i32).collect();
        assert_eq!(
            gi,
            [
                si.iter().fold(0i32, |a, &v| a.wrapping_add(v)),
                *si.iter().min().unwrap(),
                *si.iter().max().unwrap(),
                si.iter().fold(0, |a, &v| a ^ v)
            ],
            "{name}: i32"
        );
        let gl = s.clone_dtoh(&gl).unwrap();
        let sl: Vec<i64> = x.iter().map(|&v| v as i64 - (1 << 31)).collect();
        assert_eq!(gl[..3], [sl.iter().sum::<i64>(), *sl.iter().min().unwrap(), *sl.iter().max().unwrap()], "{name}: i64");
        assert!(sl.contains(&gl[3]));
        let gf = s.clone_dtoh(&gf).unwrap();
        assert_eq!([gf[0], gf[1], gf[3]], [n as f32, x.iter().map(|&v| v & 0xff).sum::<u32>() as f32, 2.0 * n as f32], "{name}: f32");
        assert!(x.iter().any(|&v| v as f32 == gf[2]));
        let gd = s.clone_dtoh(&gd).unwrap();
        assert_eq!(gd[0], x.iter().map(|&v| v as f64).sum::<f64>(), "{name}: f64 add");
        assert!(gd[1] >= 0.0 && gd[1] < n as f64 && gd[1].fract() == 0.0);
        let per_block = s.clone_dtoh(&per_block).unwrap();
        for b in 0..blocks {
            let v = &x[b * block as usize..(b + 1) * block as usize];
            let sum: u64 = v.iter().map(|&v| v as u64).sum();
            let want = [
                block,
                *v.iter().min().unwrap(),
                *v.iter().max().unwrap(),
                3 * block,
                (0.5 * block as f32).to_bits(),
                sum as u32,
                (sum >> 32) as u32,
            ];
            assert_eq!(per_block[b * BLOCK_OUTS..(b + 1) * BLOCK_OUTS], want, "{name}: shared-memory atomics of block {b}");
        }
    }
}

fn indices_copies_and_timers_agree_with_cuda(ctx: &Context) {
    let (s, k) = setup(ctx);
    let (w, h) = (100u32, 37u32);
    let cfg = LaunchConfig { grid_dim: (w.div_ceil(16), h.div_ceil(8), 1), block_dim: (16, 8, 1), shared_mem_bytes: 0 };
    let (mut rs, mut cu) = (zeros::<u32>(&s, (w * h) as usize * INDEX_OUTS), zeros::<u32>(&s, (w * h) as usize * INDEX_OUTS));
    unsafe { k.rs_index(&s, cfg, w, h, &mut rs) }.unwrap();
    unsafe { k.cu_index(&s, cfg, w, h, &mut cu) }.unwrap();
    let rs = s.clone_dtoh(&rs).unwrap();
    assert_eq!(rs, s.clone_dtoh(&cu).unwrap());
    for row in 0..h {
        for col in 0..w {
            let o = &rs[(row * w + col) as usize * INDEX_OUTS..];
            assert_eq!(o[..4], [col, row, (col % 16) | ((row % 8) << 8), (col / 16) | ((row / 8) << 16)]);
            assert_eq!(o[4..6], [16 | 8 << 8 | 1 << 16, 7 | 5 << 16 | (7 * 16) << 24]);
        }
    }

    let n = 1000usize;
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let dx = s.clone_htod(&x).unwrap();
    let cfg = LaunchConfig { shared_mem_bytes: 256 * 4, ..linear(n, 256) };
    let (mut rs, mut cu) = (zeros::<f32>(&s, n), zeros::<f32>(&s, n));
    unsafe { k.rs_reverse_tiles(&s, cfg, n as u32, &dx, &mut rs) }.unwrap();
    unsafe { k.cu_reverse_tiles(&s, cfg, n as u32, &dx, &mut cu) }.unwrap();
    let rs = s.clone_dtoh(&rs).unwrap();
    assert_eq!(rs, s.clone_dtoh(&cu).unwrap());
    for (i, r) in rs.iter().enumerate().take(768) {
        assert_eq!(*r, (i / 256 * 256 + 255 - i % 256) as f32, "element {i}");
    }

    for rust in [true, false] {
        let mut t = zeros::<u64>(&s, 6);
        let one = linear(1, 1);
        if rust { unsafe { k.rs_timing(&s, one, &mut t) } } else { unsafe { k.cu_timing(&s, one, &mut t) } }.unwrap();
        let t = s.clone_dtoh(&t).unwrap();
        assert!(t[1] - t[0] >= 10_000, "clock64 advanced: {t:?}");
        assert!(t[2] > 0 && t[3] >= t[2], "globaltimer runs: {t:?}");
        assert!((t[5] as u32).wrapping_sub(t[4] as u32) >= 10_000, "clock advanced: {t:?}");
    }
}

fn benchmark_kernels_compute_what_cuda_computes(ctx: &Context) {
    let (s, k) = setup(ctx);
    let n = (1 << 20) + 3;
    let x: Vec<f32> = Words(10).map(|r| (r % 1000) as f32 * 0.001).take(n).collect();
    let dx = s.clone_htod(&x).unwrap();
    let blocks = 120;
    let cfg = LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (BENCH_BLOCK, 1, 1), shared_mem_bytes: 0 };
    let want: f64 = x.iter().map(|&v| v as f64).sum();
    let partial = |f: &dyn Fn(&mut CudaSlice<f32>)| {
        let mut p = zeros::<f32>(&s, blocks as usize);
        f(&mut p);
        s.clone_dtoh(&p).unwrap()
    };
    let rs_shared = partial(&|p| unsafe { k.rs_reduce_shared(&s, cfg, n as u32, &dx, p) }.unwrap());
    let cu_shared = partial(&|p| unsafe { k.cu_reduce_shared(&s, cfg, n as u32, &dx, p) }.unwrap());
    let rs_warp = partial(&|p| unsafe { k.rs_reduce_warp(&s, cfg, n as u32, &dx, p) }.unwrap());
    let cu_warp = partial(&|p| unsafe { k.cu_reduce_warp(&s, cfg, n as u32, &dx, p) }.unwrap());
    assert_eq!(rs_shared, cu_shared, "same summation order, same bits");
    assert_eq!(rs_warp, cu_warp);
    for p in [&rs_shared, &rs_warp] {
        let got: f64 = p.iter().map(|&v| v as f64).sum();
        assert!((got - want).abs() / want < 1e-5, "{got} vs {want}");
    }

    let (rows, cols) = (64usize, SOFTMAX_COLS);
    let x: Vec<f32> = Words(11).map(|r| (r % 2000) as f32 * 0.01 - 10.0).take(rows * cols).collect();
    let dx = s.clone_htod(&x).unwrap();
    let cfg = LaunchConfig { grid_dim: (rows as u32, 1, 1), block_dim: (BENCH_BLOCK, 1, 1), shared_mem_bytes: 0 };
    let (mut rs, mut cu) = (zeros::<f32>(&s, rows * cols), zeros::<f32>(&s, rows * cols));
    unsafe { k.rs_softmax(&s, cfg, rows as u32, &dx, &mut rs) }.unwrap();
    unsafe { k.cu_softmax(&s, cfg, rows as u32, &dx, &mut cu) }.unwrap();
    let rs = s.clone_dtoh(&rs).unwrap();
    assert_eq!(rs, s.clone_dtoh(&cu).unwrap(), "softmax: same bits");
    for r in 0..rows {
        let sum: f32 = rs[r * cols..(r + 1) * cols].iter().sum();
        assert!((sum - 1.0).abs() < 1e-4, "row {r} sums to {sum}");
    }
}
