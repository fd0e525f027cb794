//! Issue 23's obvious-way twins on a GPU (`kernels/src/obvious.rs`: generic atomics on shared
//! memory, by-value loops over small arrays, plain `for` loops) against a CPU reference and
//! against their CUDA twins, and launch bounds as the generated module enforces them.
//!
//! ptx-runtime's test harness: without a driver each GPU test reports `ignored` with the reason,
//! and with `CARGO_PTX_REQUIRE_GPU=1` (the GPU bundle's `run` sets it) it fails instead.

use std::sync::Arc;

use device_tour::kernels::Kernels;
use device_tour::{linear, Words};
use ptx_runtime::cudarc::driver::{sys, CudaStream, LaunchConfig};
use ptx_runtime::harness::{self, Context};
use ptx_runtime::{Grid, LaunchError};

type Ctx = Context;

fn main() {
    harness::run(vec![
        gpu("histograms_count_every_byte", histograms_count_every_byte),
        gpu("sgemm_is_bit_identical_to_the_cpu_and_cuda", sgemm_is_bit_identical_to_the_cpu_and_cuda),
        gpu("transpose_conv5_and_dense16_match_the_cpu_and_cuda", transpose_conv5_and_dense16_match_the_cpu_and_cuda),
        gpu("atomic_inc_and_dec_wrap_as_cudas", atomic_inc_and_dec_wrap_as_cudas),
        gpu("a_launch_over_the_bound_is_refused_naming_it", a_launch_over_the_bound_is_refused_naming_it),
    ]);
}

/// A GPU test with the default stream and the kernels loaded.
fn gpu(name: &'static str, test: fn(&Ctx, &Arc<CudaStream>, &Kernels)) -> harness::Trial {
    harness::gpu(name, move |ctx: &Context| {
        let k = Kernels::load(ctx).unwrap();
        test(ctx, &ctx.default_stream(), &k)
    })
}

/// Floats in [-1, 1) with 12 significant bits, so sums stay exact enough to show any reordering.
fn floats(n: usize, seed: u64) -> Vec<f32> {
    Words(seed).map(|r| ((r >> 40) as i32 % 2048) as f32 / 2048.0).take(n).collect()
}

#[track_caller]
fn assert_bits(what: &str, expected: &[f32], got: &[f32]) {
    assert_eq!(expected.len(), got.len(), "{what}");
    if let Some(i) = (0..got.len()).find(|&i| expected[i].to_bits() != got[i].to_bits()) {
        let bad = (0..got.len()).filter(|&i| expected[i].to_bits() != got[i].to_bits()).count();
        panic!("{what}: {bad} of {} differ; first at {i}: expected {} got {}", got.len(), expected[i], got[i]);
    }
}

fn histograms_count_every_byte(_ctx: &Ctx, s: &Arc<CudaStream>, k: &Kernels) {
    let n = (1 << 22) + 8;
    // Skewed: half the words repeat one byte, so some bins see heavy contention.
    let words: Vec<u32> = Words(16).take(n).map(|r| if r % 2 == 0 { 0x4141_4141 } else { r as u32 }).collect();
    let mut expected = vec![0u32; 256];
    for w in &words {
        for byte in w.to_le_bytes() {
            expected[byte as usize] += 1;
        }
    }
    let dw = s.clone_htod(&words).unwrap();
    let cfg = linear(132 * 4 * 256, 256);
    let run = |f: &dyn Fn(&mut ptx_runtime::cudarc::driver::CudaSlice<u32>)| {
        let mut h = s.alloc_zeros::<u32>(256).unwrap();
        f(&mut h);
        s.clone_dtoh(&h).unwrap()
    };
    assert_eq!(run(&|h| unsafe { k.rs_histogram_obvious(s, cfg, n as u32, &dw, h) }.unwrap()), expected, "Rust histogram");
    assert_eq!(run(&|h| unsafe { k.cu_histogram(s, cfg, n as u32, &dw, h) }.unwrap()), expected, "CUDA histogram");
    let n4 = (n / 4) as u32;
    assert_eq!(run(&|h| unsafe { k.rs_histogram16_obvious(s, cfg, n4, &dw, h) }.unwrap()), expected, "Rust histogram16");
    assert_eq!(run(&|h| unsafe { k.cu_histogram16(s, cfg, n4, &dw, h) }.unwrap()), expected, "CUDA histogram16");
    // Fewer threads than bins: the zeroing and flushing loops take several steps.
    let small = LaunchConfig { grid_dim: (3, 1, 1), block_dim: (96, 1, 1), shared_mem_bytes: 0 };
    assert_eq!(run(&|h| unsafe { k.rs_histogram16_obvious(s, small, n4, &dw, h) }.unwrap()), expected, "Rust histogram16, 96 threads");
    assert_eq!(run(&|h| unsafe { k.rs_histogram_obvious(s, small, n as u32, &dw, h) }.unwrap()), expected, "Rust histogram, 96 threads");
}

fn sgemm_is_bit_identical_to_the_cpu_and_cuda(_ctx: &Ctx, s: &Arc<CudaStream>, k: &Kernels) {
    let n = 512;
    let (a, b) = (floats(n * n, 13), floats(n * n, 14));
    // One FMA per k, in order: what both kernels do per element of C.
    let mut expected = vec![0.0f32; n * n];
    for i in 0..n {
        for j in 0..n {
            expected[i * n + j] = (0..n).fold(0.0f32, |acc, kk| a[i * n + kk].mul_add(b[kk * n + j], acc));
        }
    }
    let (da, db) = (s.clone_htod(&a).unwrap(), s.clone_htod(&b).unwrap());
    let (mut rc, mut cc) = (s.alloc_zeros::<f32>(n * n).unwrap(), s.alloc_zeros::<f32>(n * n).unwrap());
    let cfg = LaunchConfig { grid_dim: ((n / 128) as u32, (n / 128) as u32, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
    unsafe { k.rs_sgemm_obvious(s, cfg, n as u32, &da, &db, &mut rc) }.unwrap();
    unsafe { k.cu_sgemm(s, cfg, n as u32, &da, &db, &mut cc) }.unwrap();
    assert_bits("Rust SGEMM", &expected, &s.clone_dtoh(&rc).unwrap());
    assert_bits("CUDA SGEMM", &expected, &s.clone_dtoh(&cc).unwrap());
}

fn transpose_conv5_and_dense16_match_the_cpu_and_cuda(_ctx: &Ctx, s: &Arc<CudaStream>, k: &Kernels) {
    let n = 1024;
    let x = floats(n * n, 15);
    let mut expected = vec![0.0f32; n * n];
    for i in 0..n {
        for j in 0..n {
            expected[j * n + i] = x[i * n + j];
        }
    }
    let dx = s.clone_htod(&x).unwrap();
    let (mut r, mut c) = (s.alloc_zeros::<f32>(n * n).unwrap(), s.alloc_zeros::<f32>(n * n).unwrap());
    let cfg = LaunchConfig { grid_dim: ((n / 32) as u32, (n / 32) as u32, 1), block_dim: (32, 8, 1), shared_mem_bytes: 0 };
    unsafe { k.rs_transpose_obvious(s, cfg, n as u32, &dx, &mut r) }.unwrap();
    unsafe { k.cu_transpose(s, cfg, n as u32, &dx, &mut c) }.unwrap();
    assert_bits("Rust transpose", &expected, &s.clone_dtoh(&r).unwrap());
    assert_bits("CUDA transpose", &expected, &s.clone_dtoh(&c).unwrap());

    // 5 x 5 convolution of a (w + 4) x (h + 4) image; w not a multiple of the block.
    let (w, h) = (1000usize, 333usize);
    let pitch = w + 4;
    let img = floats(pitch * (h + 4), 16);
    let taps = floats(25, 17);
    let mut want = vec![0.0f32; w * h];
    for y in 0..h {
        for xx in 0..w {
            let mut acc = 0.0f32;
            for dy in 0..5 {
                for dx in 0..5 {
                    acc = taps[dy * 5 + dx].mul_add(img[(y + dy) * pitch + xx + dx], acc);
                }
            }
            want[y * w + xx] = acc;
        }
    }
    let (di, dt) = (s.clone_htod(&img).unwrap(), s.clone_htod(&taps).unwrap());
    let (mut r, mut c) = (s.alloc_zeros::<f32>(w * h).unwrap(), s.alloc_zeros::<f32>(w * h).unwrap());
    let cfg = LaunchConfig { grid_dim: (w.div_ceil(32) as u32, h.div_ceil(8) as u32, 1), block_dim: (32, 8, 1), shared_mem_bytes: 0 };
    unsafe { k.rs_conv5_obvious(s, cfg, w as u32, h as u32, &di, &dt, &mut r) }.unwrap();
    unsafe { k.cu_conv5(s, cfg, w as u32, h as u32, &di, &dt, &mut c) }.unwrap();
    assert_bits("Rust conv5", &want, &s.clone_dtoh(&r).unwrap());
    assert_bits("CUDA conv5", &want, &s.clone_dtoh(&c).unwrap());

    // A 16 x 32 dense layer over a batch that is not a multiple of the block.
    let batch = 100_003usize;
    let (wt, xs) = (floats(16 * 32, 18), floats(32 * batch, 19));
    let mut want = vec![0.0f32; 16 * batch];
    for sample in 0..batch {
        for i in 0..16 {
            want[i * batch + sample] = (0..32).fold(0.0f32, |acc, kk| wt[i * 32 + kk].mul_add(xs[kk * batch + sample], acc));
        }
    }
    let (dw, dxs) = (s.clone_htod(&wt).unwrap(), s.clone_htod(&xs).unwrap());
    let (mut r, mut c) = (s.alloc_zeros::<f32>(16 * batch).unwrap(), s.alloc_zeros::<f32>(16 * batch).unwrap());
    let cfg = linear(batch, 256);
    unsafe { k.rs_dense16_obvious(s, cfg, batch as u32, &dw, &dxs, &mut r) }.unwrap();
    unsafe { k.cu_dense16(s, cfg, batch as u32, &dw, &dxs, &mut c) }.unwrap();
    assert_bits("Rust dense16", &want, &s.clone_dtoh(&r).unwrap());
    assert_bits("CUDA dense16", &want, &s.clone_dtoh(&c).unwrap());
}

fn atomic_inc_and_dec_wrap_as_cudas(_ctx: &Ctx, s: &Arc<CudaStream>, k: &Kernels) {
    let (n, limit, block) = (100_003u32, 9u32, 256u32);
    let mut out = s.alloc_zeros::<u32>(4).unwrap();
    let blocks = n.div_ceil(block);
    let cfg = LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: 0 };
    unsafe { k.rs_inc_dec(s, cfg, n, limit, &mut out) }.unwrap();
    let out = s.clone_dtoh(&out).unwrap();
    // atomicInc: old >= limit ? 0 : old + 1, a counter modulo limit + 1; atomicDec the same backwards.
    let wrap = limit + 1;
    assert_eq!(out[0], n % wrap, "atom.global.inc");
    assert_eq!(out[1], (wrap - n % wrap) % wrap, "atom.global.dec");
    // Per block: the shared counters end at (threads of the block) mod 10, and are summed.
    let per_block = |threads: u32| (threads % wrap, (wrap - threads % wrap) % wrap);
    let (mut inc, mut dec) = (0, 0);
    for b in 0..blocks {
        let t = (n - b * block).min(block);
        inc += per_block(t).0;
        dec += per_block(t).1;
    }
    assert_eq!((out[2], out[3]), (inc, dec), "atom.shared.inc / atom.shared.dec per block");
}

fn a_launch_over_the_bound_is_refused_naming_it(_ctx: &Ctx, s: &Arc<CudaStream>, k: &Kernels) {
    use sys::CUfunction_attribute_enum::{CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, CU_FUNC_ATTRIBUTE_NUM_REGS};
    let words = s.alloc_zeros::<u32>(1024).unwrap();
    let mut h = s.alloc_zeros::<u32>(256).unwrap();
    let big = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (512, 1, 1), shared_mem_bytes: 0 };
    for name in ["rs_histogram16_obvious", "cu_histogram16"] {
        let e = if name.starts_with("rs") {
            unsafe { k.rs_histogram16_obvious(s, big, 256, &words, &mut h) }
        } else {
            unsafe { k.cu_histogram16(s, big, 256, &words, &mut h) }
        }
        .unwrap_err();
        assert!(matches!(e, LaunchError::TooManyThreads { max_threads: 256, .. }), "{name}: {e:?}");
        let msg = e.to_string();
        assert!(
            msg.starts_with(&format!("kernel `{name}` launched with 512 threads a block (512 x 1 x 1), more than its launch bound of 256")),
            "{msg}"
        );
        // The driver sees the same bound, and ptxas kept registers for 4 blocks of 256 an SM.
        let f = k.function(name).unwrap();
        assert_eq!(f.get_attribute(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK).unwrap(), 256, "{name}: .maxntid in the cubin");
        assert!(f.get_attribute(CU_FUNC_ATTRIBUTE_NUM_REGS).unwrap() <= 64, "{name}: .minnctapersm 4 caps registers at 64");
    }
    let cfg = k.config_of("rs_histogram16_obvious", Grid::elements(1 << 20)).unwrap();
    assert!(cfg.block_dim.0 <= 256, "the occupancy config stays within the bound: {cfg:?}");
    assert!(k.plan_of("cu_histogram16", 0).unwrap().block_size <= 256);
    // At the bound, the launch runs.
    unsafe { k.rs_histogram16_obvious(s, LaunchConfig { block_dim: (256, 1, 1), ..big }, 256, &words, &mut h) }.unwrap();
    assert_eq!(s.clone_dtoh(&h).unwrap()[0], 4096, "1024 zero words: 4096 zero bytes");
}
