//! Issue 12's twins on a GPU: the Rust kernels that use shared memory, shared atomics, vector
//! loads and unrolling (`kernels/src/twins.rs`) and their CUDA C++ twins (`kernels/cuda/twins.cu`)
//! against a CPU reference and against each other, bit for bit (both contract `a * b + c` into
//! FMA, `fmad` being on by default, and the CPU reference uses `mul_add` in the same order).
//! ptx-runtime's test harness: without a CUDA driver each test reports `ignored (no GPU: <reason>)`.

use std::sync::Arc;

use device_tour::kernels::Kernels;
use device_tour::{linear, Words};
use ptx_runtime::cudarc::driver::{CudaStream, LaunchConfig};
use ptx_runtime::harness::{self, Context};

fn main() {
    harness::run(vec![
        harness::gpu("saxpy4_matches_the_cpu_and_cuda", saxpy4_matches_the_cpu_and_cuda),
        harness::gpu("sgemm_matches_the_cpu_and_cuda_bit_for_bit", sgemm_matches_the_cpu_and_cuda_bit_for_bit),
        harness::gpu("transpose_matches_the_cpu_and_cuda", transpose_matches_the_cpu_and_cuda),
        harness::gpu("histogram_counts_every_byte", histogram_counts_every_byte),
        harness::gpu(
            "width_shuffles_scoped_atomics_vectors_cp_async_and_unroll_are_right",
            width_shuffles_scoped_atomics_vectors_cp_async_and_unroll_are_right,
        ),
    ]);
}

fn setup(ctx: &Context) -> (Arc<CudaStream>, Kernels) {
    (ctx.default_stream(), Kernels::load(ctx).unwrap())
}

/// Floats in [-1, 1) with 12 significant bits, so sums stay exact enough to show any reordering.
fn floats(n: usize, seed: u64) -> Vec<f32> {
    Words(seed).map(|r| ((r >> 40) as i32 % 2048) as f32 / 2048.0).take(n).collect()
}

#[track_caller]
fn assert_bits(what: &str, expected: &[f32], got: &[f32]) {
    assert_eq!(expected.len(), got.len());
    if let Some(i) = (0..got.len()).find(|&i| expected[i].to_bits() != got[i].to_bits()) {
        let bad = (0..got.len()).filter(|&i| expected[i].to_bits() != got[i].to_bits()).count();
        panic!("{what}: {bad} of {} differ; first at {i}: expected {} got {}", got.len(), expected[i], got[i]);
    }
}

fn saxpy4_matches_the_cpu_and_cuda(ctx: &Context) {
    let (s, k) = setup(ctx);
    let n = (1 << 22) + 4 * 37;
    let (x, y) = (floats(n, 1), floats(n, 2));
    let a = 1.75f32;
    let expected: Vec<f32> = x.iter().zip(&y).map(|(&x, &y)| a.mul_add(x, y)).collect();
    let dx = s.clone_htod(&x).unwrap();
    let (mut ry, mut cy) = (s.clone_htod(&y).unwrap(), s.clone_htod(&y).unwrap());
    let cfg = linear(132 * 8 * 256, 256);
    unsafe { k.rs_saxpy4(&s, cfg, (n / 4) as u32, a, &dx, &mut ry) }.unwrap();
    unsafe { k.cu_saxpy4(&s, cfg, (n / 4) as u32, a, &dx, &mut cy) }.unwrap();
    assert_bits("Rust saxpy4", &expected, &s.clone_dtoh(&ry).unwrap());
    assert_bits("CUDA saxpy4", &expected, &s.clone_dtoh(&cy).unwrap());
}

fn sgemm_matches_the_cpu_and_cuda_bit_for_bit(ctx: &Context) {
    let (s, k) = setup(ctx);
    let n = 512;
    let (a, b) = (floats(n * n, 3), floats(n * n, 4));
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
    unsafe { k.rs_sgemm(&s, cfg, n as u32, &da, &db, &mut rc) }.unwrap();
    unsafe { k.cu_sgemm(&s, cfg, n as u32, &da, &db, &mut cc) }.unwrap();
    assert_bits("Rust SGEMM", &expected, &s.clone_dtoh(&rc).unwrap());
    assert_bits("CUDA SGEMM", &expected, &s.clone_dtoh(&cc).unwrap());
}

fn transpose_matches_the_cpu_and_cuda(ctx: &Context) {
    let (s, k) = setup(ctx);
    let n = 1024;
    let x = floats(n * n, 5);
    let mut expected = vec![0.0f32; n * n];
    for i in 0..n {
        for j in 0..n {
            expected[j * n + i] = x[i * n + j];
        }
    }
    let dx = s.clone_htod(&x).unwrap();
    let (mut r, mut c) = (s.alloc_zeros::<f32>(n * n).unwrap(), s.alloc_zeros::<f32>(n * n).unwrap());
    let cfg = LaunchConfig { grid_dim: ((n / 32) as u32, (n / 32) as u32, 1), block_dim: (32, 8, 1), shared_mem_bytes: 0 };
    unsafe { k.rs_transpose(&s, cfg, n as u32, &dx, &mut r) }.unwrap();
    unsafe { k.cu_transpose(&s, cfg, n as u32, &dx, &mut c) }.unwrap();
    assert_bits("Rust transpose", &expected, &s.clone_dtoh(&r).unwrap());
    assert_bits("CUDA transpose", &expected, &s.clone_dtoh(&c).unwrap());
}

fn histogram_counts_every_byte(ctx: &Context) {
    let (s, k) = setup(ctx);
    let n = (1 << 22) + 11;
    // Skewed: half the words repeat one byte, so some bins see heavy contention.
    let words: Vec<u32> = Words(6).take(n).map(|r| if r % 2 == 0 { 0x4141_4141 } else { r as u32 }).collect();
    let mut expected = vec![0u32; 256];
    for w in &words {
        for byte in w.to_le_bytes() {
            expected[byte as usize] += 1;
        }
    }
    let dw = s.clone_htod(&words).unwrap();
    let (mut r, mut c) = (s.alloc_zeros::<u32>(256).unwrap(), s.alloc_zeros::<u32>(256).unwrap());
    let cfg = linear(132 * 4 * 256, 256);
    unsafe { k.rs_histogram(&s, cfg, n as u32, &dw, &mut r) }.unwrap();
    unsafe { k.cu_histogram(&s, cfg, n as u32, &dw, &mut c) }.unwrap();
    assert_eq!(s.clone_dtoh(&r).unwrap(), expected, "Rust histogram");
    assert_eq!(s.clone_dtoh(&c).unwrap(), expected, "CUDA histogram");
}

fn width_shuffles_scoped_atomics_vectors_cp_async_and_unroll_are_right(ctx: &Context) {
    let (s, k) = setup(ctx);
    let x: Vec<f32> = (0..256).map(|i| i as f32 * 0.5).collect();
    let dx = s.clone_htod(&x).unwrap();
    let mut out = s.alloc_zeros::<u32>(64 * 16).unwrap();
    let mut atomics = s.alloc_zeros::<u32>(10).unwrap();
    let cfg = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (64, 1, 1), shared_mem_bytes: 0 };
    unsafe { k.rs_helpers(&s, cfg, &dx, &mut out, &mut atomics) }.unwrap();
    let out = s.clone_dtoh(&out).unwrap();
    let atomics = s.clone_dtoh(&atomics).unwrap();
    for t in 0..64usize {
        let o = &out[t * 16..t * 16 + 16];
        let lane = (t % 32) as u32;
        let seg = lane & !7;
        assert_eq!(o[0], seg, "thread {t}: shfl idx 0 in 8-lane segments");
        assert_eq!(o[1], if lane.is_multiple_of(8) { lane } else { lane - 1 }, "thread {t}: shfl up");
        assert_eq!(o[2], if lane % 8 == 7 { lane } else { lane + 1 }, "thread {t}: shfl down");
        assert_eq!(o[3], lane ^ 4, "thread {t}: shfl xor");
        // Stored by thread 63 - t through st.shared.v4, read back with ld.shared.v4.
        let u = 63 - t;
        let back = [x[4 * u], x[4 * u + 1], x[4 * u + 2], x[4 * u + 3]];
        assert_eq!(&o[4..8], &back.map(f32::to_bits), "thread {t}: vector through shared memory");
        // cp.async.cg of x4[63 - t] into copies[t].
        assert_eq!(&o[8..12], &back.map(f32::to_bits), "thread {t}: cp.async 16 bytes");
        assert_eq!(o[12], 45 * (t as u32 + 1), "thread {t}: unrolled sum");
        assert_eq!(o[13], u as u32, "thread {t}: f64x2 through shared memory ({u} + 0.5, truncated)");
        assert_eq!(o[14], u as u32 + 1000, "thread {t}: u32x2 through shared memory");
        assert_eq!(o[15], (x[2 * t] + x[2 * t + 1]) as u32, "thread {t}: f32x2 from global");
    }
    assert_eq!(&atomics[..4], &[64, 64, 64, 64], "atom.global, .cta, .sys, red");
    assert_eq!(&atomics[4..6], &[64, 128], "atom.shared.add, red.shared.add");
    assert_eq!(atomics[6], 63, "atom.shared.max");
    assert!((100..164).contains(&atomics[7]), "atom.shared.cas: one thread's {}", atomics[7]);
    assert_eq!(atomics[8], 9, "atom.shared.exch");
    assert_eq!(atomics[9], u32::MAX, "red.shared.or");
}
