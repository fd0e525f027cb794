//! The tensor-core kernels on a GPU: every fragment helper against the CPU, TMA, clusters, the
//! arch queries, and the two GEMM twin pairs against a sampled f64 reference, cuBLAS and each
//! other.
//!
//! ptx-runtime's test harness: without a GPU the GPU tests report `ignored (no GPU: ..)`; with
//! `CARGO_PTX_REQUIRE_GPU=1` (the GPU bundle's `run`) a missing GPU is a failure. The sm_90a
//! tests are ignored, with the reason, on other GPUs.

mod cublas;

use std::sync::Arc;

use ptx_runtime::cudarc::driver::{CudaSlice, CudaStream, DevicePtr, LaunchConfig, PushKernelArg};
use ptx_runtime::half::{bf16, f16};
use ptx_runtime::harness::{self, Context};
use ptx_runtime::{ImageKind, Policy, Swizzle, TensorMap, TmaType};
use tensor_cores::kernels::{self, Kernels};
use tensor_cores::{compare, poison, random_f16, sampled_error, Shape, Words};

type Ctx = Context;

fn main() {
    harness::run(vec![
        harness::test("the_module_holds_both_languages_for_sm_80_and_sm_90a", the_module_holds_both_languages_for_sm_80_and_sm_90a),
        harness::test("gemm_shapes_off_the_tiles_are_refused", gemm_shapes_off_the_tiles_are_refused),
        gpu("arch_queries_answer_for_the_image_that_runs", 0, arch_queries_answer_for_the_image_that_runs),
        gpu("launch_bounds_refuse_a_larger_block", 0, launch_bounds_refuse_a_larger_block),
        gpu("mma_fragments_follow_their_documented_layouts", 80, mma_fragments_follow_their_documented_layouts),
        gpu("ldmatrix_and_stmatrix_move_the_documented_elements", 80, ldmatrix_and_stmatrix_move_the_documented_elements),
        gpu("cp_async_of_every_width_lands", 80, cp_async_of_every_width_lands),
        gpu("half_arithmetic_matches_the_half_crate", 80, half_arithmetic_matches_the_half_crate),
        gpu("mma_hgemm_twins_match_the_cpu_cublas_and_each_other", 80, mma_hgemm_twins_match_the_cpu_cublas_and_each_other),
        gpu("dynamic_shared_memory_over_48_kib_needs_no_setup", 80, dynamic_shared_memory_over_48_kib_needs_no_setup),
        gpu("tma_copies_boxes_and_completes_the_barrier", 90, tma_copies_boxes_and_completes_the_barrier),
        gpu("clusters_exchange_through_distributed_shared_memory", 90, clusters_exchange_through_distributed_shared_memory),
        gpu("wgmma_hgemm_twins_match_the_cpu_cublas_and_each_other", 900, wgmma_hgemm_twins_match_the_cpu_cublas_and_each_other),
    ]);
}

/// A test that needs device 0 of at least compute capability `min` (`900`: exactly sm_90, for
/// the sm_90a image), with the kernels loaded.
fn gpu(name: &'static str, min: u32, test: fn(&Ctx, &Kernels)) -> harness::Trial {
    let lacks = move |ctx: &Context| {
        let (major, minor) = ctx.compute_capability().expect("compute capability");
        let cc = (major * 10 + minor) as u32;
        let ok = if min == 900 { cc == 90 } else { cc >= min };
        (!ok).then(|| format!("needs {} (this GPU is sm_{cc})", if min == 900 { "sm_90a".into() } else { format!("sm_{min}+") }))
    };
    harness::gpu_where(name, lacks, move |ctx: &Context| {
        let k = Kernels::load(ctx).unwrap();
        test(ctx, &k);
    })
}

fn the_module_holds_both_languages_for_sm_80_and_sm_90a() {
    for name in ["rs_mma_hgemm", "cu_mma_hgemm", "rs_wgmma_hgemm", "cu_wgmma_hgemm", "mma_16x8x16_f16", "mma_16x8x32_u8"] {
        assert!(kernels::KERNEL_NAMES.contains(&name), "{name}");
    }
    let archs: Vec<String> = kernels::tensor_cores_kernels::IMAGES.iter().map(|i| i.to_string()).collect();
    assert_eq!(archs, ["sm_80 PTX", "sm_80 cubin", "sm_90a PTX", "sm_90a cubin"]);
    // The wgmma path only in the sm_90a image, in both languages.
    for ptx in [kernels::tensor_cores_kernels::PTX_SM_90A, kernels::gemm::PTX_SM_90A] {
        assert!(ptx.contains("wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16") && ptx.contains("cp.async.bulk.tensor.2d"));
    }
    for ptx in [kernels::tensor_cores_kernels::PTX_SM_80, kernels::gemm::PTX_SM_80] {
        assert!(!ptx.contains("wgmma.") && !ptx.contains("cp.async.bulk") && ptx.contains("mma.sync.aligned.m16n8k16"));
    }
}

fn gemm_shapes_off_the_tiles_are_refused() {
    let e = Shape { m: 100, n: 256, k: 64 }.wgmma_config().unwrap_err();
    assert!(e.contains("M a multiple of 128, N of 256 and K of 64; got 100 x 256 x 64"), "{e}");
    assert!(Shape { m: 128, n: 256, k: 48 }.mma_config().is_err());
    assert!(Shape { m: 128, n: 256, k: 32 }.mma_config().is_ok());
}

fn one_warp() -> LaunchConfig {
    LaunchConfig { grid_dim: (1, 1, 1), block_dim: (32, 1, 1), shared_mem_bytes: 0 }
}

fn arch_queries_answer_for_the_image_that_runs(ctx: &Ctx, k: &Kernels) {
    let s = ctx.default_stream();
    let (major, minor) = ctx.compute_capability().unwrap();
    let cc = (major * 10 + minor) as u32;
    let mut out = s.alloc_zeros::<u32>(3).unwrap();
    unsafe { k.arch_answers(&s, one_warp(), &mut out) }.unwrap();
    let image = k.images()[0];
    eprintln!("sm_{cc}: the {image} image answers {:?}", s.clone_dtoh(&out).unwrap());
    if cc == 90 {
        assert_eq!(image.arch, "sm_90a", "the arch-specific cubin is chosen on its exact GPU");
        assert_eq!(s.clone_dtoh(&out).unwrap(), [900, 900, 900]);
    } else {
        assert_eq!(image.arch, "sm_80", "sm_90a code never runs on sm_{cc}");
        assert_eq!(s.clone_dtoh(&out).unwrap(), [800, 0, 0]);
    }
    // The sm_80 PTX, JIT-compiled for this GPU, answers for sm_80.
    let only: Vec<ptx_runtime::Image> =
        kernels::tensor_cores_kernels::IMAGES.iter().filter(|i| i.arch == "sm_80" && i.kind == ImageKind::Ptx).copied().collect();
    let loaded = ptx_runtime::load(ctx, Box::leak(only.into_boxed_slice()), Policy::Best).unwrap();
    let f = loaded.function("arch_answers").unwrap();
    let mut out = s.alloc_zeros::<u32>(3).unwrap();
    unsafe { s.launch_builder(&f).arg(&mut out).launch(one_warp()) }.unwrap();
    assert_eq!(s.clone_dtoh(&out).unwrap(), [800, 0, 0]);
}

fn launch_bounds_refuse_a_larger_block(ctx: &Ctx, k: &Kernels) {
    let s = ctx.default_stream();
    let mut out = s.alloc_zeros::<u32>(3).unwrap();
    // `#[kernel(launch_bounds(64))]`: 64 threads run, 128 are refused by the driver.
    let cfg = |t| LaunchConfig { grid_dim: (1, 1, 1), block_dim: (t, 1, 1), shared_mem_bytes: 0 };
    unsafe { k.arch_answers(&s, cfg(64), &mut out) }.unwrap();
    let e = unsafe { k.arch_answers(&s, cfg(128), &mut out) };
    assert!(e.is_err(), "a block over .maxntid launched");
    s.synchronize().unwrap();
}

/// Small integers: every product and sum below is exact in f32.
fn small_ints(n: usize, seed: u64, range: i64) -> Vec<i64> {
    Words(seed).take(n).map(|r| (r % (2 * range as u64 + 1)) as i64 - range).collect()
}

fn mma_fragments_follow_their_documented_layouts(ctx: &Ctx, k: &Kernels) {
    let s = ctx.default_stream();
    let seed = tensor_cores::fresh_seed();
    let expect = |a: &[i64], b: &[i64], kk: usize, add: i64| -> Vec<i64> {
        (0..16 * 8).map(|e| add + (0..kk).map(|x| a[(e / 8) * kk + x] * b[x * 8 + e % 8]).sum::<i64>()).collect()
    };
    // f16 and bf16, m16n8k16.
    let (a, b) = (small_ints(256, seed, 8), small_ints(128, seed + 1, 8));
    let want: Vec<f32> = expect(&a, &b, 16, 0).iter().map(|v| *v as f32 + 0.5).collect();
    let bits16 = |v: &[i64], bf: bool| -> Vec<u16> {
        v.iter().map(|x| if bf { bf16::from_f32(*x as f32).to_bits() } else { f16::from_f32(*x as f32).to_bits() }).collect()
    };
    for bf in [false, true] {
        let (da, db) = (s.clone_htod(&bits16(&a, bf)).unwrap(), s.clone_htod(&bits16(&b, bf)).unwrap());
        let mut dc = s.alloc_zeros::<f32>(128).unwrap();
        if bf {
            unsafe { k.mma_16x8x16::<bf16>(&s, one_warp(), &da, &db, &mut dc) }.unwrap();
        } else {
            unsafe { k.mma_16x8x16::<f16>(&s, one_warp(), &da, &db, &mut dc) }.unwrap();
        }
        assert_eq!(s.clone_dtoh(&dc).unwrap(), want, "m16n8k16 {} (seed {seed})", if bf { "bf16" } else { "f16" });
    }
    // tf32, m16n8k8.
    let (a, b) = (small_ints(128, seed + 2, 30), small_ints(64, seed + 3, 30));
    let want: Vec<f32> = expect(&a, &b, 8, 0).iter().map(|v| *v as f32 + 0.5).collect();
    let f = |v: &[i64]| v.iter().map(|x| *x as f32).collect::<Vec<f32>>();
    let (da, db) = (s.clone_htod(&f(&a)).unwrap(), s.clone_htod(&f(&b)).unwrap());
    let mut dc = s.alloc_zeros::<f32>(128).unwrap();
    unsafe { k.mma_tf32(&s, one_warp(), &da, &db, &mut dc) }.unwrap();
    assert_eq!(s.clone_dtoh(&dc).unwrap(), want, "m16n8k8 tf32 (seed {seed})");
    // i8 and u8, m16n8k32: every value of the type.
    let words: Vec<u8> = Words(seed + 4).take(512 + 256).map(|r| r as u8).collect();
    let (a8, b8) = words.split_at(512);
    for signed in [true, false] {
        let v = |x: &[u8]| x.iter().map(|&b| if signed { b as i8 as i64 } else { b as i64 }).collect::<Vec<i64>>();
        let want: Vec<i32> = expect(&v(a8), &v(b8), 32, 7).iter().map(|x| *x as i32).collect();
        let (da, db) = (s.clone_htod(a8).unwrap(), s.clone_htod(b8).unwrap());
        let mut dc = s.alloc_zeros::<i32>(128).unwrap();
        if signed {
            unsafe { k.mma_16x8x32::<i8>(&s, one_warp(), &da, &db, &mut dc) }.unwrap();
        } else {
            unsafe { k.mma_16x8x32::<u8>(&s, one_warp(), &da, &db, &mut dc) }.unwrap();
        }
        assert_eq!(s.clone_dtoh(&dc).unwrap(), want, "m16n8k32 {} (seed {seed})", if signed { "s8" } else { "u8" });
    }
}

fn ldmatrix_and_stmatrix_move_the_documented_elements(ctx: &Ctx, k: &Kernels) {
    let s = ctx.default_stream();
    let m: Vec<u16> = Words(tensor_cores::fresh_seed()).take(256).map(|r| r as u16).collect();
    let at = |r: usize, c: usize| m[r * 16 + c] as u32;
    let dm = s.clone_htod(&m).unwrap();
    let mut regs = s.alloc_zeros::<u32>(32 * 14).unwrap();
    let mut back = s.alloc_zeros::<u16>(512).unwrap();
    unsafe { k.ldmatrix_forms(&s, one_warp(), &dm, &mut regs, &mut back) }.unwrap();
    let regs = s.clone_dtoh(&regs).unwrap();
    // Quadrants in x4 order: (rows 0-7, cols 0-7), (8-15, 0-7), (0-7, 8-15), (8-15, 8-15).
    let quad = [(0, 0), (8, 0), (0, 8), (8, 8)];
    for l in 0..32 {
        let plain = |q: usize| at(quad[q].0 + l / 4, quad[q].1 + 2 * (l % 4)) | at(quad[q].0 + l / 4, quad[q].1 + 2 * (l % 4) + 1) << 16;
        let trans = |q: usize| at(quad[q].0 + 2 * (l % 4), quad[q].1 + l / 4) | at(quad[q].0 + 2 * (l % 4) + 1, quad[q].1 + l / 4) << 16;
        let want = [
            plain(0),
            plain(0),
            plain(1),
            plain(0),
            plain(1),
            plain(2),
            plain(3),
            trans(0),
            trans(0),
            trans(1),
            trans(0),
            trans(1),
            trans(2),
            trans(3),
        ];
        assert_eq!(regs[l * 14..l * 14 + 14], want, "lane {l}: x1, x2, x4, x1.trans, x2.trans, x4.trans");
    }
    let back = s.clone_dtoh(&back).unwrap();
    assert_eq!(back[..256], m[..], "stmatrix.x4 undoes ldmatrix.x4");
    for r in 0..16 {
        for c in 0..16 {
            let (qr, qc, i, j) = (r / 8 * 8, c / 8 * 8, r % 8, c % 8);
            assert_eq!(back[256 + r * 16 + c], m[(qr + j) * 16 + qc + i], "stmatrix.x4.trans at ({r}, {c})");
        }
    }
}

fn cp_async_of_every_width_lands(ctx: &Ctx, k: &Kernels) {
    let s = ctx.default_stream();
    let src: Vec<u32> = Words(tensor_cores::fresh_seed()).take(2816).map(|r| r as u32).collect();
    let dsrc = s.clone_htod(&src).unwrap();
    let mut dst = s.clone_htod(&vec![0xdead_beefu32; 2816]).unwrap();
    let cfg = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
    unsafe { k.cp_async_widths(&s, cfg, &dsrc, &mut dst) }.unwrap();
    assert_eq!(s.clone_dtoh(&dst).unwrap(), src);
}

/// `x` (exact: a product of halves plus a half) as an f32 rounded to odd, so that rounding it
/// again to 11 or 8 bits is the correct rounding of `x` (`half`'s `from_f64` rounds a tie broken
/// only by bits far below wrongly: -496 * 79 - 0.0021 gave -39184 instead of -39200).
fn round_to_odd(x: f64) -> f32 {
    let f = x as f32;
    if f as f64 == x || f.to_bits() & 1 == 1 || !f.is_finite() {
        return f;
    }
    // Even and inexact: step to the odd neighbour on x's side.
    let toward_larger_magnitude = (x.abs()) > (f as f64).abs();
    f32::from_bits(if toward_larger_magnitude { f.to_bits() + 1 } else { f.to_bits() - 1 })
}

fn half_arithmetic_matches_the_half_crate(ctx: &Ctx, k: &Kernels) {
    let s = ctx.default_stream();
    let seed = tensor_cores::fresh_seed();
    let n = 1 << 16;
    // Magnitudes from 2^-20 (f16 subnormals) to 2^10.
    let vals = |sd: u64| -> Vec<f32> {
        Words(sd).take(n).map(|r| ((r >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0) * 2f32.powi((r % 31) as i32 - 20)).collect()
    };
    let (x, y, z) = (vals(seed), vals(seed + 1), vals(seed + 2));
    let (dx, dy, dz) = (s.clone_htod(&x).unwrap(), s.clone_htod(&y).unwrap(), s.clone_htod(&z).unwrap());
    let mut out = s.alloc_zeros::<u16>(n * 16).unwrap();
    unsafe { k.half_ops(&s, ptx_runtime::cudarc::driver::LaunchConfig::for_num_elems(n as u32), n as u32, &dx, &dy, &dz, &mut out) }
        .unwrap();
    let out = s.clone_dtoh(&out).unwrap();
    let names = [
        "f16", "+", "-", "*", "fma", "min", "abs", "bf16", "bf16 +", "bf16 -", "bf16 *", "bf16 fma", "f16x2.x", "f16x2.y", "bf16x2.x",
        "bf16x2.y",
    ];
    for i in 0..n {
        let (a, b, c) = (f16::from_f32(x[i]), f16::from_f32(y[i]), f16::from_f32(z[i]));
        let (p, q, r) = (bf16::from_f32(x[i]), bf16::from_f32(y[i]), bf16::from_f32(z[i]));
        let fma16 = |a: f16, b: f16, c: f16| f16::from_f32(round_to_odd(a.to_f64() * b.to_f64() + c.to_f64()));
        let fma_bf = |a: bf16, b: bf16, c: bf16| bf16::from_f32(round_to_odd(a.to_f64() * b.to_f64() + c.to_f64()));
        let want = [
            a.to_bits(),
            (a + b).to_bits(),
            (a - b).to_bits(),
            (a * b).to_bits(),
            fma16(a, b, c).to_bits(),
            if a.to_f32() < b.to_f32() { a } else { b }.to_bits(),
            a.to_bits() & 0x7fff,
            p.to_bits(),
            (p + q).to_bits(),
            (p - q).to_bits(),
            (p * q).to_bits(),
            fma_bf(p, q, r).to_bits(),
            (a * b + c).to_bits(),
            (b * a + c).to_bits(),
            fma_bf(p, q, r).to_bits(),
            fma_bf(q, p, r).to_bits(),
        ];
        for j in 0..16 {
            let got = out[i * 16 + j];
            // min(-0, +0) may give either zero.
            let same_zero = j == 5 && (got & 0x7fff) == 0 && (want[j] & 0x7fff) == 0;
            assert!(
                got == want[j] || same_zero,
                "{} of ({}, {}, {}): got {got:#06x}, want {:#06x} (seed {seed})",
                names[j],
                x[i],
                y[i],
                z[i],
                want[j]
            );
        }
    }
}

/// Launches one twin of a GEMM into a poisoned C and returns C.
fn run_gemm(s: &Arc<CudaStream>, n: usize, launch: impl FnOnce(&mut CudaSlice<f16>)) -> Vec<f16> {
    let mut c = s.clone_htod(&poison(n)).unwrap();
    launch(&mut c);
    s.clone_dtoh(&c).unwrap()
}

/// `inputs` are A and B, `twins` the Rust and CUDA kernels' C.
fn check_twins(s: &Arc<CudaStream>, shape: Shape, inputs: (&[f16], &[f16]), twins: (&[f16], &[f16]), what: &str, seed: u64) {
    let ((a, b), (rust, cuda)) = (inputs, twins);
    let (da, db) = (s.clone_htod(a).unwrap(), s.clone_htod(b).unwrap());
    let blas = cublas::blas(s).unwrap();
    let reference = run_gemm(s, shape.m * shape.n, |c| cublas::hgemm(&blas, shape, &da, &db, c).unwrap());
    for (name, c) in [("Rust", rust), ("CUDA", cuda)] {
        let (rel, worst, finite) = sampled_error(a, b, c, shape, 4096, seed ^ 7);
        eprintln!("{what} {name} {shape:?}: sampled error {rel:.2e} (worst {worst:.2e}) against f64");
        assert!(
            finite && rel < 2e-3 && worst < 0.05,
            "{what} {name} {shape:?}: error {rel:e}, worst {worst}, finite {finite} (seed {seed})"
        );
        let (rel, bits) = compare(c, &reference);
        eprintln!("{what} {name} {shape:?}: {rel:.2e} from cuBLAS, {bits} elements differ in their bits");
        assert!(rel < 2e-3, "{what} {name} {shape:?}: {rel:e} from cuBLAS (seed {seed})");
    }
    let (_, bits) = compare(rust, cuda);
    assert_eq!(bits, 0, "{what} {shape:?}: the Rust and CUDA twins differ in {bits} elements (seed {seed})");
}

fn mma_hgemm_twins_match_the_cpu_cublas_and_each_other(ctx: &Ctx, k: &Kernels) {
    let s = ctx.default_stream();
    // K = 64: fewer tiles than stages; K = 1056: 33 tiles, the ring wraps many times.
    for shape in [Shape { m: 128, n: 256, k: 64 }, Shape { m: 384, n: 512, k: 1056 }, Shape { m: 1024, n: 1024, k: 4096 }] {
        let seed = tensor_cores::fresh_seed();
        let (a, b) = (random_f16(shape.m * shape.k, seed), random_f16(shape.n * shape.k, seed + 1));
        let (da, db) = (s.clone_htod(&a).unwrap(), s.clone_htod(&b).unwrap());
        let cfg = shape.mma_config().unwrap();
        let (m, n, kk) = (shape.m, shape.n, shape.k);
        let rust = run_gemm(&s, m * n, |c| unsafe { k.rs_mma_hgemm(&s, cfg, m as u32, n as u32, kk as u32, &da, &db, c) }.unwrap());
        let cuda = run_gemm(&s, m * n, |c| unsafe { k.cu_mma_hgemm(&s, cfg, m as i32, n as i32, kk as i32, &da, &db, c) }.unwrap());
        check_twins(&s, shape, (&a, &b), (&rust, &cuda), "mma.sync", seed);
    }
}

/// The GEMMs' 120 KiB of dynamic shared memory is over the 48 KiB a kernel gets without asking:
/// a typed launch raises the limit itself (the tests above launch with nothing else done), a
/// `launch_builder` launch after `allow_dynamic_shared_memory`, and more than the device has is
/// refused with the numbers.
fn dynamic_shared_memory_over_48_kib_needs_no_setup(ctx: &Ctx, k: &Kernels) {
    use ptx_runtime::cudarc::driver::sys::{CUdevice_attribute, CUfunction_attribute};
    use ptx_runtime::LaunchError;
    let limit = |name: &str| {
        k.function(name).unwrap().get_attribute(CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES).unwrap()
    };
    let s = ctx.default_stream();
    let shape = Shape { m: 128, n: 256, k: 64 };
    let (a, b) = (random_f16(shape.m * shape.k, 11), random_f16(shape.n * shape.k, 12));
    let (da, db) = (s.clone_htod(&a).unwrap(), s.clone_htod(&b).unwrap());
    let cfg = shape.mma_config().unwrap();
    assert!(cfg.shared_mem_bytes > 48 * 1024);
    let (m, n, kk) = (shape.m as i32, shape.n as i32, shape.k as i32);
    // Without the raise the driver refuses the launch: what a cudarc user meets.
    assert!(limit("cu_mma_hgemm") <= 48 * 1024, "a freshly loaded kernel has the default limit");
    let mut c = s.alloc_zeros::<f16>(shape.m * shape.n).unwrap();
    let bare = unsafe { k.launch_builder(&s, "cu_mma_hgemm").unwrap().arg(&m).arg(&n).arg(&kk).arg(&da).arg(&db).arg(&mut c).launch(cfg) };
    assert!(bare.is_err(), "120 KiB launched without raising the limit");
    k.allow_dynamic_shared_memory("cu_mma_hgemm", cfg.shared_mem_bytes).unwrap();
    assert_eq!(limit("cu_mma_hgemm"), cfg.shared_mem_bytes as i32);
    unsafe { k.launch_builder(&s, "cu_mma_hgemm").unwrap().arg(&m).arg(&n).arg(&kk).arg(&da).arg(&db).arg(&mut c).launch(cfg) }.unwrap();
    let by_builder = s.clone_dtoh(&c).unwrap();
    // The typed launch of the Rust twin: nothing asked before it.
    assert!(limit("rs_mma_hgemm") <= 48 * 1024);
    let rust = run_gemm(&s, shape.m * shape.n, |c| unsafe { k.rs_mma_hgemm(&s, cfg, m as u32, n as u32, kk as u32, &da, &db, c) }.unwrap());
    assert_eq!(limit("rs_mma_hgemm"), cfg.shared_mem_bytes as i32);
    assert_eq!(compare(&rust, &by_builder).1, 0, "the twins agree");
    // Past the device: refused before the driver, with the numbers.
    let optin = ctx.attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN).unwrap() as u32;
    let over = LaunchConfig { shared_mem_bytes: optin + 1, ..cfg };
    let e = unsafe { k.rs_mma_hgemm(&s, over, m as u32, n as u32, kk as u32, &da, &db, &mut c) }.unwrap_err();
    assert!(matches!(e, LaunchError::TooMuchSharedMemory { kernel: "rs_mma_hgemm", device_limit, .. } if device_limit == optin), "{e:?}");
    assert!(e.to_string().contains(&format!("more than the {optin} bytes a block of this device may have")), "{e}");
    assert!(k.allow_dynamic_shared_memory("cu_mma_hgemm", optin + 1).is_err());
    assert_eq!(limit("rs_mma_hgemm"), cfg.shared_mem_bytes as i32, "a refused request leaves the limit as it was");
    s.synchronize().unwrap();
}

fn wgmma_hgemm_twins_match_the_cpu_cublas_and_each_other(ctx: &Ctx, k: &Kernels) {
    let s = ctx.default_stream();
    // K = 64: one stage; K = 320: 5 tiles through 4 stages; then a full-size shape.
    for shape in [Shape { m: 128, n: 256, k: 64 }, Shape { m: 256, n: 512, k: 320 }, Shape { m: 1024, n: 2048, k: 4096 }] {
        let seed = tensor_cores::fresh_seed();
        let (a, b) = (random_f16(shape.m * shape.k, seed), random_f16(shape.n * shape.k, seed + 1));
        let (da, db) = (s.clone_htod(&a).unwrap(), s.clone_htod(&b).unwrap());
        let (ma, mb) = tensor_cores::wgmma_maps(&s, shape, &da, &db).unwrap();
        let cfg = shape.wgmma_config().unwrap();
        let (m, n, kk) = (shape.m, shape.n, shape.k);
        let rust = run_gemm(&s, m * n, |c| unsafe { k.rs_wgmma_hgemm(&s, cfg, m as u32, n as u32, kk as u32, &ma, &mb, c) }.unwrap());
        let cuda = run_gemm(&s, m * n, |c| unsafe { k.cu_wgmma_hgemm(&s, cfg, m as i32, n as i32, kk as i32, &ma, &mb, c) }.unwrap());
        if let Some(bad) = (0..m * n).find(|&i| !rust[i].is_finite()) {
            panic!("wgmma {shape:?}: element ({}, {}) never written or not finite: {}", bad / n, bad % n, rust[bad]);
        }
        check_twins(&s, shape, (&a, &b), (&rust, &cuda), "wgmma", seed);
    }
}

fn tma_copies_boxes_and_completes_the_barrier(ctx: &Ctx, k: &Kernels) {
    let s = ctx.default_stream();
    let (rows, cols) = (64usize, 96usize);
    let src: Vec<f32> = Words(tensor_cores::fresh_seed()).take(rows * cols).map(|r| (r >> 40) as f32).collect();
    let dsrc = s.clone_htod(&src).unwrap();
    let ddst = s.clone_htod(&vec![-1.0f32; rows * cols]).unwrap();
    let map = |d: &CudaSlice<f32>, box_rows: u32| {
        let (p, _sync) = d.device_ptr(&s);
        TensorMap::tiled_2d(TmaType::F32, p, rows as u64, cols as u64, cols as u64, box_rows, 32, Swizzle::None)
    };
    // A box over TMA's limits is refused by ptx-runtime, before any launch.
    let e = map(&dsrc, 512).unwrap_err().to_string();
    assert!(e.contains("box dimension 1 is 512 elements") && e.contains("1 to 256"), "{e}");
    let (ms, md) = (s.clone_htod(&[map(&dsrc, 16).unwrap()]).unwrap(), s.clone_htod(&[map(&ddst, 16).unwrap()]).unwrap());
    let mut phase = s.alloc_zeros::<u32>(1).unwrap();
    let one = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (128, 1, 1), shared_mem_bytes: 0 };
    // An inner box, and one that hangs over the tensor's right edge (cols 80..112 of 96).
    for (x, y) in [(32, 16), (80, 48)] {
        unsafe { k.tma_roundtrip(&s, one, &ms, &md, x, y, &mut phase) }.unwrap();
        assert_eq!(s.clone_dtoh(&phase).unwrap(), [0], "the next phase had not completed");
    }
    let dst = s.clone_dtoh(&ddst).unwrap();
    for r in 0..rows {
        for c in 0..cols {
            let inside = (16..32).contains(&r) && (32..64).contains(&c) || (48..64).contains(&r) && (80..96).contains(&c);
            assert_eq!(dst[r * cols + c], if inside { src[r * cols + c] } else { -1.0 }, "({r}, {c})");
        }
    }
}

fn clusters_exchange_through_distributed_shared_memory(ctx: &Ctx, k: &Kernels) {
    let s = ctx.default_stream();
    let mut out = s.alloc_zeros::<u32>(16).unwrap();
    let cfg = LaunchConfig { grid_dim: (4, 1, 1), block_dim: (32, 1, 1), shared_mem_bytes: 0 };
    unsafe { k.cluster_exchange(&s, cfg, &mut out) }.unwrap();
    let out = s.clone_dtoh(&out).unwrap();
    for b in 0..4u32 {
        let rank = b % 2;
        assert_eq!(out[b as usize * 4..b as usize * 4 + 4], [100 + (rank ^ 1), b ^ 1, 2, 10 * rank], "block {b}");
    }
}
