//! GPU benchmark of the host side (BENCHMARKS.md):
//! 1. module load from the embedded cubin against the PTX JIT, for the same kernels;
//! 2. a typed launch against cudarc's raw `launch_builder`, for the empty kernel.
//!
//! Run on a GPU machine: `cargo run --release -p saxpy --example bench`
//! (set CUDA_CACHE_DISABLE=1 so the driver's JIT cache does not hide the PTX compile).

use std::time::Instant;

use ptx_runtime::cudarc::driver::LaunchConfig;
use saxpy::kernels::Kernels;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let ctx = match ptx_runtime::context(0) {
        Ok(c) => c,
        Err(e) => {
            println!("bench skipped: {}", e.to_string().lines().next().unwrap_or_default());
            return Ok(());
        }
    };
    let (major, minor) = ctx.compute_capability()?;
    println!("device: sm_{major}{minor}, driver CUDA {}", ptx_runtime::driver_version().unwrap_or_default());

    // 1. Module load.
    let mut cubin = Vec::new();
    let mut ptx = Vec::new();
    for _ in 0..15 {
        let t = Instant::now();
        let k = Kernels::load(&ctx)?;
        cubin.push(t.elapsed().as_secs_f64() * 1e3);
        drop(k);
        let t = Instant::now();
        let k = Kernels::load_ptx_only(&ctx)?;
        ptx.push(t.elapsed().as_secs_f64() * 1e3);
        drop(k);
    }
    let k = Kernels::load(&ctx)?;
    let first_ptx = ptx[0];
    let (cubin_ms, ptx_ms) = (median(cubin), median(ptx));
    println!(
        "load: {} {cubin_ms:.3} ms median; PTX JIT ({}) {ptx_ms:.3} ms median (first {first_ptx:.3} ms); ratio {:.0}x",
        k.images()[0],
        Kernels::load_ptx_only(&ctx)?.images()[0],
        ptx_ms / cubin_ms
    );

    // 2. Launch overhead: typed method against the raw builder, interleaved rounds.
    let stream = ctx.new_stream()?;
    let cfg = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (32, 1, 1), shared_mem_bytes: 0 };
    let module = ptx_runtime::load(&ctx, saxpy::kernels::saxpy_kernels::IMAGES, ptx_runtime::Policy::Best)?;
    let raw = module.function("empty")?;
    let n = 100_000;
    let (mut typed_t, mut raw_t) = (Vec::new(), Vec::new());
    for _ in 0..9 {
        stream.synchronize()?;
        let t = Instant::now();
        for _ in 0..n {
            unsafe { k.empty(&stream, cfg) }?;
        }
        stream.synchronize()?;
        typed_t.push(t.elapsed().as_secs_f64() * 1e9 / n as f64);
        let t = Instant::now();
        for _ in 0..n {
            unsafe { stream.launch_builder(&raw).launch(cfg) }?;
        }
        stream.synchronize()?;
        raw_t.push(t.elapsed().as_secs_f64() * 1e9 / n as f64);
    }
    let (typed, raw) = (median(typed_t), median(raw_t));
    println!("launch of an empty kernel: typed {typed:.0} ns, raw launch_builder {raw:.0} ns; typed/raw {:.3}x", typed / raw);

    // 3. saxpy bandwidth, for reference.
    let n = 1 << 26;
    let x = stream.alloc_zeros::<f32>(n)?;
    let mut y = stream.alloc_zeros::<f32>(n)?;
    let mut times = Vec::new();
    for _ in 0..20 {
        stream.synchronize()?;
        let t = Instant::now();
        unsafe { k.saxpy(&stream, saxpy::config(n), n as u32, 2.0, &x, &mut y) }?;
        stream.synchronize()?;
        times.push(t.elapsed().as_secs_f64());
    }
    let s = median(times);
    println!("saxpy on {n} floats: {:.3} ms, {:.0} GB/s (3 x 4 bytes per element)", s * 1e3, 12.0 * n as f64 / s / 1e9);
    Ok(())
}
