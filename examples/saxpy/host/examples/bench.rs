//! GPU benchmark of the host side (BENCHMARKS.md):
//! 1. module load from the embedded cubin against the PTX JIT, for the same kernels;
//! 2. a typed launch against cudarc's raw `launch_builder`, for the empty kernel;
//! 3. saxpy bandwidth;
//! 4. the occupancy-derived launch configuration (`Grid::elements(n)`) against fixed blocks of
//!    128, 256, 512 and 1024 threads, for saxpy and exp_kernel (CUDA events, interleaved rounds).
//!
//! Run on a GPU machine: `cargo run --release -p saxpy --example bench`
//! (set CUDA_CACHE_DISABLE=1 so the driver's JIT cache does not hide the PTX compile).

use std::time::Instant;

use ptx_runtime::cudarc::driver::{sys, LaunchConfig};
use ptx_runtime::Grid;
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
    let (mut typed_t, mut raw_t, mut grid_t) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..9 {
        stream.synchronize()?;
        let t = Instant::now();
        for _ in 0..n {
            unsafe { k.empty(&stream, cfg) }?;
        }
        stream.synchronize()?;
        typed_t.push(t.elapsed().as_secs_f64() * 1e9 / n as f64);
        // A grid the plan fills in at each launch (a cached plan behind a lock).
        let t = Instant::now();
        for _ in 0..n {
            unsafe { k.empty(&stream, Grid::elements(32)) }?;
        }
        stream.synchronize()?;
        grid_t.push(t.elapsed().as_secs_f64() * 1e9 / n as f64);
        let t = Instant::now();
        for _ in 0..n {
            unsafe { stream.launch_builder(&raw).launch(cfg) }?;
        }
        stream.synchronize()?;
        raw_t.push(t.elapsed().as_secs_f64() * 1e9 / n as f64);
    }
    let (typed, raw, grid) = (median(typed_t), median(raw_t), median(grid_t));
    println!(
        "launch of an empty kernel: typed {typed:.0} ns, typed with Grid::elements {grid:.0} ns, raw launch_builder {raw:.0} ns; typed/raw {:.3}x, grid/raw {:.3}x",
        typed / raw,
        grid / raw
    );

    // 3. saxpy bandwidth, for reference.
    let n = 1 << 26;
    let x = stream.alloc_zeros::<f32>(n)?;
    let mut y = stream.alloc_zeros::<f32>(n)?;
    let mut times = Vec::new();
    for _ in 0..20 {
        stream.synchronize()?;
        let t = Instant::now();
        unsafe { k.saxpy(&stream, Grid::elements(n), n as u32, 2.0, &x, &mut y) }?;
        stream.synchronize()?;
        times.push(t.elapsed().as_secs_f64());
    }
    let s = median(times);
    println!("saxpy on {n} floats: {:.3} ms, {:.0} GB/s (3 x 4 bytes per element)", s * 1e3, 12.0 * n as f64 / s / 1e9);

    // 4. Block sizes: the occupancy plan against fixed ones, each timed with CUDA events over
    // 10 launches, 31 rounds with the configurations in a rotating order; medians.
    let fixed = |b: u32| LaunchConfig { grid_dim: (n.div_ceil(b as usize) as u32, 1, 1), block_dim: (b, 1, 1), shared_mem_bytes: 0 };
    let (start, end) =
        (ctx.new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))?, ctx.new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))?);
    for (name, plan) in [("saxpy", k.plan_of("saxpy", 0)?), ("exp_kernel", k.plan_of("exp_kernel", 0)?)] {
        println!(
            "{name}: occupancy plan {} threads/block, {} blocks/SM on {} SMs, occupancy {:.0}%",
            plan.block_size,
            plan.blocks_per_sm,
            plan.sm_count,
            plan.occupancy * 100.0
        );
        let configs =
            [("occupancy", plan.for_elements(n)?), ("128", fixed(128)), ("256", fixed(256)), ("512", fixed(512)), ("1024", fixed(1024))];
        let mut times: Vec<Vec<f64>> = vec![Vec::new(); configs.len()];
        for round in 0..31 {
            for j in 0..configs.len() {
                let c = (round + j) % configs.len();
                let cfg = configs[c].1;
                start.record(&stream)?;
                for _ in 0..10 {
                    unsafe {
                        if name == "saxpy" {
                            k.saxpy(&stream, cfg, n as u32, 2.0, &x, &mut y)
                        } else {
                            k.exp_kernel(&stream, cfg, n as u32, &x, &mut y)
                        }
                    }?;
                }
                end.record(&stream)?;
                stream.synchronize()?;
                times[c].push(start.elapsed_ms(&end)? as f64 * 1e3 / 10.0);
            }
        }
        let medians: Vec<f64> = times.into_iter().map(median).collect();
        let best_fixed = medians[1..].iter().cloned().fold(f64::INFINITY, f64::min);
        let row: Vec<String> = configs.iter().zip(&medians).map(|((label, _), us)| format!("{label} {us:.1} us")).collect();
        println!("{name} on {n} floats: {}; occupancy / best fixed {:.3}", row.join(", "), medians[0] / best_fixed);
    }
    Ok(())
}
