//! The CUDA C++ kernels on a GPU against the CPU. ptx-runtime's test harness: without a CUDA
//! driver each GPU test reports `ignored (no GPU: <reason>)`.

use cuda_kernels::{
    add_u128_cpu, block_sums_cpu, config, dequantize_q8_0_cpu, gl64_t, gl_add_cpu, kernels, quantize_q8_0_cpu, saxpy_cpu, BLOCK_Q8_0_BYTES,
    GL_P, QK8_0,
};
use ptx_runtime::harness::{self, Context};
use ptx_runtime::ImageKind;

fn main() {
    harness::run(vec![
        harness::gpu("cuda_kernels_match_the_cpu_from_the_cubin", cuda_kernels_match_the_cpu_from_the_cubin),
        harness::gpu("cuda_kernels_match_the_cpu_through_the_ptx_jit", cuda_kernels_match_the_cpu_through_the_ptx_jit),
        harness::test("every_cu_file_is_a_module_with_ptx_and_cubins", every_cu_file_is_a_module_with_ptx_and_cubins),
    ]);
}

fn check(k: &kernels::Kernels, ctx: &Context) {
    let stream = ctx.default_stream();
    for n in [1usize, 255, 256, 257, 100_003] {
        let x: Vec<f32> = (0..n).map(|i| (i % 977) as f32 * 0.013 - 6.0).collect();
        let y: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
        let dx = stream.clone_htod(&x).unwrap();
        let mut dy = stream.clone_htod(&y).unwrap();
        unsafe { k.saxpy(&stream, config(n), n as u32, 1.5, &dx, &mut dy) }.unwrap();
        let mut want = y.clone();
        saxpy_cpu(1.5, &x, &mut want);
        assert_eq!(stream.clone_dtoh(&dy).unwrap(), want, "saxpy, n = {n}");

        let mut partial = stream.alloc_zeros::<f32>(n.div_ceil(256)).unwrap();
        unsafe { k.block_sum(&stream, config(n), &dx, &mut partial, n as u32) }.unwrap();
        assert_eq!(stream.clone_dtoh(&partial).unwrap(), block_sums_cpu(&x), "block_sum, n = {n}");

        let a: Vec<u64> = (0..2 * n as u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).collect();
        let b: Vec<u64> = (0..2 * n as u64).map(|i| u64::MAX - i * 3).collect();
        let (da, db) = (stream.clone_htod(&a).unwrap(), stream.clone_htod(&b).unwrap());
        let mut out = stream.alloc_zeros::<u64>(2 * n).unwrap();
        unsafe { k.add_u128(&stream, config(n), &da, &db, &mut out, n as u32) }.unwrap();
        assert_eq!(stream.clone_dtoh(&out).unwrap(), add_u128_cpu(&a, &b), "add_u128 carries, n = {n}");
    }
    stamped(k, &stream);
    quantized(k, &stream);
    field(k, &stream);
    arch_guarded(k, &stream);
    grid_sync(k, &stream);
    // The header's kernel, through two modules' methods: each launches its own module's copy.
    let n = 1000usize;
    let mut buf = stream.alloc_zeros::<f32>(n).unwrap();
    unsafe { k.saxpy_fill_f32(&stream, config(n), &mut buf, 2.5, n) }.unwrap();
    assert_eq!(stream.clone_dtoh(&buf).unwrap(), vec![2.5f32; n], "saxpy_fill_f32");
    unsafe { k.reduce_fill_f32(&stream, config(n / 2), &mut buf, -1.0, n / 2) }.unwrap();
    let want: Vec<f32> = (0..n).map(|i| if i < n / 2 { -1.0 } else { 2.5 }).collect();
    assert_eq!(stream.clone_dtoh(&buf).unwrap(), want, "reduce_fill_f32");
    let mut cycles = stream.alloc_zeros::<u64>(256).unwrap();
    let mut sink = stream.alloc_zeros::<f32>(256).unwrap();
    unsafe { k.clock_span(&stream, config(256), &mut cycles, &mut sink, 1000) }.unwrap();
    let cycles = stream.clone_dtoh(&cycles).unwrap();
    assert!(cycles.iter().all(|c| *c >= 1000), "1000 dependent FMAs take at least 1000 cycles: {:?}", &cycles[..4]);
}

/// saxpy.cu's kernels on either side of `#if __CUDA_ARCH__ >= 900`: the loaded image's one
/// runs, the other's method says it is not in this GPU's image, and the rest of the set loaded.
fn arch_guarded(k: &kernels::Kernels, stream: &std::sync::Arc<ptx_runtime::cudarc::driver::CudaStream>) {
    let image = k.images()[0];
    let n = 1000usize;
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let dx = stream.clone_htod(&x).unwrap();
    let mut dy = stream.alloc_zeros::<f32>(n).unwrap();
    let hopper = unsafe { k.saxpy_sm90(stream, config(n), n as u32, 2.0, &dx, &mut dy) };
    let before = unsafe { k.saxpy_before_sm90(stream, config(n), n as u32, 2.0, &dx, &mut dy) };
    let (ran, refused, lacking) = match image.capability >= 90 {
        true => (hopper, before, "saxpy_before_sm90"),
        false => (before, hopper, "saxpy_sm90"),
    };
    ran.unwrap();
    let want: Vec<f32> = x.iter().map(|v| 2.0 * v).collect();
    assert_eq!(stream.clone_dtoh(&dy).unwrap(), want, "the {} image's saxpy", image.arch);
    match refused {
        Err(ptx_runtime::LaunchError::NotInImage { kernel, arch }) => assert_eq!((kernel, arch), (lacking, image.arch)),
        other => panic!("{lacking} on {}: {other:?}", image.arch),
    }
}

/// The kernels of cuda/stamped.cu: stamped out by a macro, a template's instances and one
/// launched by name, each against the CPU.
fn stamped(k: &kernels::Kernels, stream: &std::sync::Arc<ptx_runtime::cudarc::driver::CudaStream>) {
    use ptx_runtime::cudarc::driver::PushKernelArg;
    use ptx_runtime::half::f16;
    let n = 10_007usize;
    // Multiples of 1/4 below 250: every product and sum below is exact, fused or not.
    let x: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.25).collect();
    let xd: Vec<f64> = x.iter().map(|v| *v as f64).collect();
    let xh: Vec<f16> = (0..n).map(|i| f16::from_f32((i % 64) as f32 * 0.25)).collect();
    let (dx, dxd, dxh) = (stream.clone_htod(&x).unwrap(), stream.clone_htod(&xd).unwrap(), stream.clone_htod(&xh).unwrap());

    let mut y = stream.alloc_zeros::<f32>(n).unwrap();
    unsafe { k.uneg_f32(stream, config(n), n, &dx, &mut y) }.unwrap();
    assert_eq!(stream.clone_dtoh(&y).unwrap(), x.iter().map(|v| -v).collect::<Vec<_>>(), "uneg_f32");
    let mut yd = stream.alloc_zeros::<f64>(n).unwrap();
    unsafe { k.usqr_f64(stream, config(n), n, &dxd, &mut yd) }.unwrap();
    assert_eq!(stream.clone_dtoh(&yd).unwrap(), xd.iter().map(|v| v * v).collect::<Vec<_>>(), "usqr_f64");

    unsafe { k.axpb::<f32>(stream, config(n), &mut y, &dx, 1.5, -2.0, n as i32) }.unwrap();
    assert_eq!(stream.clone_dtoh(&y).unwrap(), x.iter().map(|v| 1.5 * v - 2.0).collect::<Vec<_>>(), "axpb::<f32>");
    unsafe { k.axpb::<f64>(stream, config(n), &mut yd, &dxd, 1.5, -2.0, n as i32) }.unwrap();
    assert_eq!(stream.clone_dtoh(&yd).unwrap(), xd.iter().map(|v| 1.5 * v - 2.0).collect::<Vec<_>>(), "axpb::<f64>");
    let mut yh = stream.alloc_zeros::<f16>(n).unwrap();
    unsafe { k.axpb::<f16>(stream, config(n), &mut yh, &dxh, f16::from_f32(2.0), f16::from_f32(1.0), n as i32) }.unwrap();
    let want: Vec<f16> = xh.iter().map(|v| f16::from_f32(2.0 * v.to_f32() + 1.0)).collect();
    assert_eq!(stream.clone_dtoh(&yh).unwrap(), want, "axpb::<f16>");

    // `void *`: any buffer, or a raw device address.
    let bytes: Vec<u8> = (0..n).map(|i| (i * 7 % 251) as u8).collect();
    let src = stream.clone_htod(&bytes).unwrap();
    let mut dst = stream.alloc_zeros::<u8>(n).unwrap();
    unsafe { k.copy_bytes(stream, config(n), &src, &mut dst, n) }.unwrap();
    assert_eq!(stream.clone_dtoh(&dst).unwrap(), bytes, "copy_bytes");
    let mut again = stream.alloc_zeros::<u8>(n).unwrap();
    {
        use ptx_runtime::cudarc::driver::DevicePtr;
        let (address, _sync) = src.device_ptr(stream);
        unsafe { k.copy_bytes(stream, config(n), &ptx_runtime::DeviceAddress(address), &mut again, n) }.unwrap();
    }
    assert_eq!(stream.clone_dtoh(&again).unwrap(), bytes, "copy_bytes from a raw device address");

    // Templates over values: const generic parameters pick the instance.
    let before = stream.clone_dtoh(&y).unwrap();
    let count = n as i32;
    unsafe { k.add_n::<3>(stream, config(n), &mut y, count) }.unwrap();
    assert_eq!(stream.clone_dtoh(&y).unwrap(), before.iter().map(|v| v + 3.0).collect::<Vec<_>>(), "add_n::<3>");
    unsafe { k.add_n::<{ -2 }>(stream, config(n), &mut y, count) }.unwrap();
    assert_eq!(stream.clone_dtoh(&y).unwrap(), before.iter().map(|v| v + 1.0).collect::<Vec<_>>(), "add_n::<-2>");
    // Instantiated by the .cu file's launcher only; `Mode::Twice` is 1.
    let (plain, twice) = (0, 1);
    let start: Vec<f32> = x.iter().map(|v| v * 0.5).collect();
    for (mode, clamp, scale, limit) in [(plain, false, 1.0f32, f32::MAX), (twice, true, 2.0, 100.0), (twice, false, 2.0, f32::MAX)] {
        let mut out = stream.clone_htod(&start).unwrap();
        unsafe {
            match (mode, clamp) {
                (0, _) => k.add_scaled::<f32, 0, false>(stream, config(n), &mut out, &dx, count),
                (_, true) => k.add_scaled::<f32, 1, true>(stream, config(n), &mut out, &dx, count),
                _ => k.add_scaled::<f32, 1, false>(stream, config(n), &mut out, &dx, count),
            }
        }
        .unwrap();
        let want: Vec<f32> = start.iter().zip(&x).map(|(s, x)| (s + scale * x).min(limit)).collect();
        assert_eq!(stream.clone_dtoh(&out).unwrap(), want, "add_scaled::<f32, {mode}, {clamp}>");
    }

    // A template over a device function: the function's marker type picks the instance.
    let before = stream.clone_dtoh(&y).unwrap();
    unsafe { k.map::<kernels::stamped::cube>(stream, config(n), &mut y, count) }.unwrap();
    let cubed: Vec<f32> = before.iter().map(|v| v * v * v).collect();
    assert_eq!(stream.clone_dtoh(&y).unwrap(), cubed, "map::<cube>");
    unsafe { k.map::<kernels::stamped::twice>(stream, config(n), &mut y, count) }.unwrap();
    let doubled: Vec<f32> = cubed.iter().map(|v| 2.0 * v).collect();
    assert_eq!(stream.clone_dtoh(&y).unwrap(), doubled, "map::<twice>");

    // A template whose last parameter is a parameter pack (ggml's binbcast): the pack's length
    // is the last generic argument, its elements one array (a buffer and a view together).
    let ny = 7usize;
    let src1: Vec<f32> = (0..ny).map(|i| i as f32 + 1.0).collect();
    let (f0, f1): (Vec<f32>, Vec<f32>) = ((0..ny).map(|i| i as f32 * 0.5).collect(), (0..2 * ny).map(|i| i as f32 * -0.25).collect());
    let (d1, df0, df1) = (stream.clone_htod(&src1).unwrap(), stream.clone_htod(&f0).unwrap(), stream.clone_htod(&f1).unwrap());
    let (m, mny) = (n as i32, ny as i32);
    let add = |with: &[&[f32]]| -> Vec<f32> { x.iter().enumerate().map(|(i, v)| with.iter().fold(*v, |r, s| r + s[i % ny])).collect() };
    let mut out = stream.alloc_zeros::<f32>(n).unwrap();
    unsafe { k.bin_bcast::<kernels::stamped::op_add, f32, f32, f32, 0>(stream, config(n), &dx, &d1, &mut out, m, mny, []) }.unwrap();
    assert_eq!(stream.clone_dtoh(&out).unwrap(), add(&[&src1]), "bin_bcast, no pack");
    unsafe { k.bin_bcast::<kernels::stamped::op_add, f32, f32, f32, 1>(stream, config(n), &dx, &d1, &mut out, m, mny, [&df0]) }.unwrap();
    assert_eq!(stream.clone_dtoh(&out).unwrap(), add(&[&f0]), "bin_bcast, one fused source");
    let view = df1.slice(ny..);
    unsafe { k.bin_bcast::<kernels::stamped::op_add, f32, f32, f32, _>(stream, config(n), &dx, &d1, &mut out, m, mny, [&df0, &view]) }
        .unwrap();
    assert_eq!(stream.clone_dtoh(&out).unwrap(), add(&[&f0, &f1[ny..]]), "bin_bcast, two fused sources");
    let mut outh = stream.alloc_zeros::<f16>(n).unwrap();
    unsafe { k.bin_bcast::<kernels::stamped::op_mul, f32, f32, f16, 0>(stream, config(n), &dx, &d1, &mut outh, m, mny, []) }.unwrap();
    let want: Vec<f16> = x.iter().enumerate().map(|(i, v)| f16::from_f32(v * src1[i % ny])).collect();
    assert_eq!(stream.clone_dtoh(&outh).unwrap(), want, "bin_bcast::<op_mul, .., f16, 0>");

    // Any kernel by its PTX name, typed or not: cudarc's builder on the loaded function,
    // arguments in the kernel's order (the way to launch a kernel that has no typed method).
    let mut launch = k.launch_builder(stream, "_Z3mapIXadL_Z5twicefEEEvPfi").expect("map<twice> is loaded");
    launch.arg(&mut y).arg(&count);
    unsafe { launch.launch(config(n)) }.unwrap();
    assert_eq!(stream.clone_dtoh(&y).unwrap(), doubled.iter().map(|v| 2.0 * v).collect::<Vec<_>>(), "map<twice> by name");

    // `fwd::scale` and `bwd::scale`: one C++ name and signature, a method each, each launching
    // its own namespace's kernel.
    let mut y = stream.clone_htod(&x).unwrap();
    unsafe { k.fwd_scale(stream, config(n), &mut y, 4.0, n) }.unwrap();
    assert_eq!(stream.clone_dtoh(&y).unwrap(), x.iter().map(|v| v * 4.0).collect::<Vec<_>>(), "fwd::scale");
    unsafe { k.bwd_scale(stream, config(n), &mut y, 2.0, n) }.unwrap();
    assert_eq!(stream.clone_dtoh(&y).unwrap(), x.iter().map(|v| v * 2.0).collect::<Vec<_>>(), "bwd::scale after fwd::scale");

    // Arrays of device addresses (`const T *const *`): a buffer of `u64`, one address a vector,
    // here three vectors of `x` and three views into one buffer of `y`s.
    use ptx_runtime::cudarc::driver::DevicePtr;
    let batch = 3usize;
    let xs: Vec<Vec<f32>> = (0..batch).map(|b| x.iter().map(|v| v + b as f32).collect()).collect();
    let dxs: Vec<_> = xs.iter().map(|v| stream.clone_htod(v).unwrap()).collect();
    let ys0: Vec<f32> = (0..batch * n).map(|i| (i % 13) as f32).collect();
    let dys = stream.clone_htod(&ys0).unwrap();
    let x_addresses: Vec<u64> = dxs.iter().map(|d| d.device_ptr(stream).0).collect();
    let y_base = dys.device_ptr(stream).0;
    let y_addresses: Vec<u64> = (0..batch).map(|b| y_base + (b * n * 4) as u64).collect();
    let (xa, ya) = (stream.clone_htod(&x_addresses).unwrap(), stream.clone_htod(&y_addresses).unwrap());
    let grid = ptx_runtime::cudarc::driver::LaunchConfig {
        grid_dim: (n.div_ceil(256) as u32, batch as u32, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    unsafe { k.axpy_batched::<f32>(stream, grid, &xa, &ya, 0.5, count) }.unwrap();
    let want: Vec<f32> = ys0.iter().enumerate().map(|(i, y)| y + 0.5 * xs[i / n][i % n]).collect();
    assert_eq!(stream.clone_dtoh(&dys).unwrap(), want, "axpy_batched::<f32>");

    // A template value in an empty tag's type (`std::bool_constant<Accumulate>`): a const
    // parameter, the tag passed by the launch.
    let mut out = stream.clone_htod(&x).unwrap();
    unsafe { k.store_scaled::<f32, true>(stream, config(n), &mut out, &dx, 2.0, count) }.unwrap();
    assert_eq!(stream.clone_dtoh(&out).unwrap(), x.iter().map(|v| v * 3.0).collect::<Vec<_>>(), "store_scaled::<f32, true>");
    unsafe { k.store_scaled::<f32, false>(stream, config(n), &mut out, &dx, 0.5, count) }.unwrap();
    assert_eq!(stream.clone_dtoh(&out).unwrap(), x.iter().map(|v| v * 0.5).collect::<Vec<_>>(), "store_scaled::<f32, false>");
}

/// The kernels of cuda/quantized.cu: q8_0 blocks behind `void *`, passed as buffers of bytes,
/// of `u16` and as a view, each against the CPU.
fn quantized(k: &kernels::Kernels, stream: &std::sync::Arc<ptx_runtime::cudarc::driver::CudaStream>) {
    use ptx_runtime::half::f16;
    let n = QK8_0 * 1000;
    let x: Vec<f32> = (0..n).map(|i| ((i * 37 % 1001) as f32 - 500.0) * 0.0173).collect();
    let dx = stream.clone_htod(&x).unwrap();
    let blocks_n = n / QK8_0;
    let mut blocks = stream.alloc_zeros::<u8>(blocks_n * BLOCK_Q8_0_BYTES).unwrap();
    unsafe { k.quantize_q8_0(stream, config(blocks_n), &dx, &mut blocks, n as i32) }.unwrap();
    let want_blocks = quantize_q8_0_cpu(&x);
    assert_eq!(stream.clone_dtoh(&blocks).unwrap(), want_blocks, "quantize_q8_0");

    let want = dequantize_q8_0_cpu(&want_blocks);
    let mut y = stream.alloc_zeros::<f32>(n).unwrap();
    unsafe { k.dequantize_q8_0_f32(stream, config(n), &blocks, &mut y, n as i32) }.unwrap();
    assert_eq!(stream.clone_dtoh(&y).unwrap(), want, "dequantize_q8_0_f32 from bytes");
    // The same blocks held as `u16`s: the same parameter takes them.
    let halves: Vec<u16> = want_blocks.chunks(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect();
    let dh = stream.clone_htod(&halves).unwrap();
    let mut y2 = stream.alloc_zeros::<f32>(n).unwrap();
    unsafe { k.dequantize_q8_0_f32(stream, config(n), &dh, &mut y2, n as i32) }.unwrap();
    assert_eq!(stream.clone_dtoh(&y2).unwrap(), want, "dequantize_q8_0_f32 from u16s");
    // A view from the second block on, into f16.
    let rest = blocks.slice(BLOCK_Q8_0_BYTES..);
    let m = n - QK8_0;
    let mut yh = stream.alloc_zeros::<f16>(m).unwrap();
    unsafe { k.dequantize_q8_0_f16(stream, config(m), &rest, &mut yh, m as i32) }.unwrap();
    let want_h: Vec<f16> = want[QK8_0..].iter().map(|v| f16::from_f32(*v)).collect();
    assert_eq!(stream.clone_dtoh(&yh).unwrap(), want_h, "dequantize_q8_0_f16 from a view");
}

/// The kernels of cuda/field.cu, over a header's typedef'd struct: a C++ kernel and a template's
/// instance through their typed methods, with values near the prime (the sums wrap past 2^64).
fn field(k: &kernels::Kernels, stream: &std::sync::Arc<ptx_runtime::cudarc::driver::CudaStream>) {
    let n = 100_003usize;
    let a: Vec<gl64_t> = (0..n as u64).map(|i| gl64_t(GL_P - 1 - i.wrapping_mul(0x9E37_79B9) % (1 << 40))).collect();
    let b: Vec<gl64_t> = (0..n as u64).map(|i| gl64_t(if i % 3 == 0 { i } else { GL_P - 1 - i })).collect();
    let (da, db) = (stream.clone_htod(&a).unwrap(), stream.clone_htod(&b).unwrap());
    let mut out = stream.clone_htod(&vec![gl64_t(0); n]).unwrap();
    unsafe { k.fr_add(stream, config(n), &mut out, &da, &db, n) }.unwrap();
    let want: Vec<gl64_t> = a.iter().zip(&b).map(|(x, y)| gl64_t(gl_add_cpu(x.0, y.0))).collect();
    assert_eq!(stream.clone_dtoh(&out).unwrap(), want, "fr_add");
    unsafe { k.fr_times::<7>(stream, config(n), &mut out, n) }.unwrap();
    let want: Vec<gl64_t> = want.iter().map(|x| gl64_t((0..7).fold(0, |acc, _| gl_add_cpu(acc, x.0)))).collect();
    assert_eq!(stream.clone_dtoh(&out).unwrap(), want, "fr_times::<7>");
}

/// cuda/grid_sync.cu: a grid-wide sync through the typed method (a cooperative launch), the
/// grid the device holds, and a grid it cannot hold refused with the way out.
fn grid_sync(k: &kernels::Kernels, stream: &std::sync::Arc<ptx_runtime::cudarc::driver::CudaStream>) {
    use ptx_runtime::cudarc::driver::LaunchConfig;
    use ptx_runtime::{Grid, LaunchError};
    // More elements than the resident grid has threads: each thread loops.
    let n = 3_000_011usize;
    let x: Vec<f32> = (0..n).map(|i| (i % 1024) as f32 * 0.5).collect();
    let mut dx = stream.clone_htod(&x).unwrap();
    let mut out = stream.alloc_zeros::<f32>(n).unwrap();
    unsafe { k.mirror_sum(stream, Grid::resident(), &mut dx, &mut out, n as i32) }.unwrap();
    let want: Vec<f32> = (0..n).map(|i| 2.0 * x[i] + 2.0 * x[n - 1 - i]).collect();
    assert_eq!(stream.clone_dtoh(&out).unwrap(), want, "mirror_sum after the grid's sync");
    let too_many = LaunchConfig { grid_dim: (1 << 20, 1, 1), block_dim: (1024, 1, 1), shared_mem_bytes: 0 };
    let e = unsafe { k.mirror_sum(stream, too_many, &mut dx, &mut out, n as i32) }.unwrap_err();
    assert!(matches!(e, LaunchError::CooperativeTooLarge { kernel: "mirror_sum", blocks: 1_048_576 }), "{e}");
    // The plain kernel of the file takes that grid, and the stream is still usable.
    unsafe { k.plain_scale(stream, LaunchConfig { grid_dim: (n.div_ceil(1024) as u32, 1, 1), ..too_many }, &mut dx, 0.5, n as i32) }
        .unwrap();
    assert_eq!(stream.clone_dtoh(&dx).unwrap(), x, "plain_scale undoes mirror_sum's doubling");
}

fn cuda_kernels_match_the_cpu_from_the_cubin(ctx: &Context) {
    let k = kernels::Kernels::load(ctx).unwrap();
    let (major, minor) = ctx.compute_capability().unwrap();
    if [80, 90].contains(&(major * 10 + minor)) {
        assert!(k.images().iter().all(|i| i.kind == ImageKind::Cubin), "{:?}", k.images());
    }
    check(&k, ctx);
}

fn cuda_kernels_match_the_cpu_through_the_ptx_jit(ctx: &Context) {
    let k = kernels::Kernels::load_ptx_only(ctx).unwrap();
    assert!(k.images().iter().all(|i| i.kind == ImageKind::Ptx));
    check(&k, ctx);
}

fn every_cu_file_is_a_module_with_ptx_and_cubins() {
    // No GPU needed: the constants are plain data.
    assert_eq!(
        kernels::KERNEL_NAMES,
        &[
            "_Z8fr_timesILi3EEvP6gl64_tm",
            "_Z8fr_timesILi7EEvP6gl64_tm",
            "_Z6fr_addP6gl64_tPKS_S2_m",
            "mirror_sum",
            "plain_scale",
            // Each file that includes cuda/common.cuh has its `fill_f32`.
            "fill_f32",
            "add_u128",
            "clock_span",
            "fill_f32",
            "dequantize_q8_0_f32",
            "dequantize_q8_0_f16",
            "quantize_q8_0",
            "fill_f32",
            "block_sum",
            "fill_f32",
            "saxpy",
            "saxpy_sm90",
            "saxpy_before_sm90",
            "uneg_f32",
            "usqr_f64",
            "_Z4axpbIfEvPT_PKS0_S0_S0_i",
            "_Z4axpbIdEvPT_PKS0_S0_S0_i",
            "_Z4axpbI6__halfEvPT_PKS1_S1_S1_i",
            "copy_bytes",
            "_Z5add_nILi3EEvPfi",
            "_Z5add_nILin2EEvPfi",
            "_Z10add_scaledIfL4Mode0ELb0EEvPT_PKS1_i",
            "_Z10add_scaledIfL4Mode1ELb1EEvPT_PKS1_i",
            "_Z10add_scaledIfL4Mode1ELb0EEvPT_PKS1_i",
            "_Z3mapIXadL_Z4cubefEEEvPfi",
            "_Z3mapIXadL_Z5twicefEEEvPfi",
            "_Z9bin_bcastIXadL_Z6op_addffEEfffJEEvPKT0_PKT1_PT2_iiDpT3_",
            "_Z9bin_bcastIXadL_Z6op_addffEEfffJPKfEEvPKT0_PKT1_PT2_iiDpT3_",
            "_Z9bin_bcastIXadL_Z6op_addffEEfffJPKfS1_EEvPKT0_PKT1_PT2_iiDpT3_",
            "_Z9bin_bcastIXadL_Z6op_mulffEEff6__halfJEEvPKT0_PKT1_PT2_iiDpT3_",
            "_Z12axpy_batchedIfEvPKPKT_PKPS0_S0_i",
            "_Z12axpy_batchedIdEvPKPKT_PKPS0_S0_i",
            "_Z12store_scaledIfLb1EEvPT_PKS0_fiSt17integral_constantIbXT0_EE",
            "_Z12store_scaledIfLb0EEvPT_PKS0_fiSt17integral_constantIbXT0_EE",
            "_ZN3fwd5scaleEPffm",
            "_ZN3bwd5scaleEPffm"
        ]
    );
    for images in [
        kernels::saxpy::IMAGES,
        kernels::reduce::IMAGES,
        kernels::inline_ptx::IMAGES,
        kernels::stamped::IMAGES,
        kernels::quantized::IMAGES,
        kernels::field::IMAGES,
        kernels::grid_sync::IMAGES,
    ] {
        let names: Vec<String> = images.iter().map(|i| i.to_string()).collect();
        assert_eq!(names, ["sm_80 PTX", "sm_80 cubin", "sm_90 PTX", "sm_90 cubin"]);
    }
    assert!(kernels::inline_ptx::PTX_SM_80.contains("addc.u64"), "the carry chain is in the PTX");
    assert!(kernels::inline_ptx::PTX_SM_80.contains("%clock64"));
    assert_eq!(&kernels::reduce::CUBIN_SM_90[..4], b"\x7fELF");
    // Only the kernel that syncs its grid is launched cooperatively.
    assert_eq!(kernels::grid_sync::COOPERATIVE, ["mirror_sum"]);
    // Each side of saxpy.cu's `#if __CUDA_ARCH__ >= 900` is in its own arch's image only.
    assert!(kernels::saxpy::PTX_SM_90.contains(".entry saxpy_sm90(") && !kernels::saxpy::PTX_SM_90.contains("saxpy_before_sm90"));
    assert!(kernels::saxpy::PTX_SM_80.contains(".entry saxpy_before_sm90(") && !kernels::saxpy::PTX_SM_80.contains("saxpy_sm90"));
}
