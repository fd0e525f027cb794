//! `cargo run --release -p device-tour --example device-bench`: a shared-memory reduction, a
//! warp-shuffle reduction, a row softmax, and issue 12's twins (float4 saxpy, padded-tile
//! transpose, 256-bin shared-atomic histogram, register-blocked SGEMM) written with ptx-device,
//! the same twins written the obvious way and a 5 x 5 convolution and a small dense layer
//! (issue 23: generic atomics, by-value loops, plain `for` loops, no kernel option), each against
//! the nvcc build of the same CUDA C++, with the device's copy bandwidth
//! (device-to-device memcpy) as the ceiling of the memory-bound ones and the FP32 peak as
//! SGEMM's. Medians over many runs, Rust and CUDA alternating
//! (each first in half of the rounds).

use std::sync::Arc;

use device_tour::{kernels::Kernels, Words, BENCH_BLOCK, SOFTMAX_COLS};
use ptx_runtime::cudarc::driver::{sys, CudaContext, CudaStream, LaunchConfig};

const RUNS: usize = 100;

/// Median milliseconds of `f` over `RUNS` runs (after two warm-ups), timed with CUDA events.
fn time(ctx: &Arc<CudaContext>, s: &Arc<CudaStream>, mut f: impl FnMut()) -> Vec<f32> {
    let ev = || ctx.new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT)).unwrap();
    f();
    f();
    (0..RUNS)
        .map(|_| {
            let (a, b) = (ev(), ev());
            a.record(s).unwrap();
            f();
            b.record(s).unwrap();
            a.elapsed_ms(&b).unwrap()
        })
        .collect()
}

fn median(mut v: Vec<f32>) -> f64 {
    v.sort_by(f32::total_cmp);
    v[v.len() / 2] as f64
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let ctx = ptx_runtime::context(0)?;
    // SAFETY: one stream, so cudarc's cross-stream events are not needed; they would add an
    // event record per launch argument to both sides.
    unsafe { ctx.disable_event_tracking() };
    let k = Kernels::load(&ctx)?;
    let s = ctx.default_stream();
    let sms = ctx.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32;
    println!("device: {} ({sms} SMs), images: {}", ctx.name()?, k.images().iter().map(|i| i.to_string()).collect::<Vec<_>>().join(", "));

    let n: usize = 64 << 20; // 256 MiB of f32
    let x: Vec<f32> = Words(1).map(|r| (r % 1000) as f32 * 0.001).take(n).collect();
    let dx = s.clone_htod(&x)?;
    let mut dy = s.alloc_zeros::<f32>(n)?;
    let bytes = (n * 4) as f64;
    let copy_ms = median(time(&ctx, &s, || s.memcpy_dtod(&dx, &mut dy).unwrap()));
    let copy = 2.0 * bytes / copy_ms / 1e6;
    println!("copy bandwidth (DtoD memcpy, 2 x {} MiB moved): {copy:.0} GB/s ({:.1} us)", (n * 4) >> 20, copy_ms * 1e3);
    println!();
    println!(
        "{:<16} {:>10} {:>10} {:>10} {:>9} {:>9} {:>8} {:>8}",
        "kernel", "Rust us", "CUDA us", "Rust/CUDA", "Rust GB/s", "CUDA GB/s", "Rust %cp", "CUDA %cp"
    );

    let blocks = sms * 8;
    let cfg = LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (BENCH_BLOCK, 1, 1), shared_mem_bytes: 0 };
    // Each side writes its own outputs: the two closures cannot share one `&mut`.
    let (mut pr, mut pc) = (s.alloc_zeros::<f32>(blocks as usize)?, s.alloc_zeros::<f32>(blocks as usize)?);
    let mut dz = s.alloc_zeros::<f32>(n)?;
    let rows = n / SOFTMAX_COLS; // the whole input, one block a row
    let softmax_cfg = LaunchConfig { grid_dim: (rows as u32, 1, 1), block_dim: (BENCH_BLOCK, 1, 1), shared_mem_bytes: 0 };
    let report = |name: &str, moved: f64, rust: Vec<f32>, cuda: Vec<f32>| {
        let (r, c) = (median(rust), median(cuda));
        let (rb, cb) = (moved / r / 1e6, moved / c / 1e6);
        println!(
            "{name:<16} {:>10.1} {:>10.1} {:>10.3} {:>9.0} {:>9.0} {:>7.1}% {:>7.1}%",
            r * 1e3,
            c * 1e3,
            r / c,
            rb,
            cb,
            100.0 * rb / copy,
            100.0 * cb / copy
        );
    };
    // Rust and CUDA alternate batch by batch, each going first in half of the rounds, so clock
    // and thermal drift and whatever the previous batch left in L2 fall on both.
    let both = |rust: &mut dyn FnMut(), cuda: &mut dyn FnMut()| {
        let (mut r, mut c) = (Vec::new(), Vec::new());
        for round in 0..4 {
            if round % 2 == 0 {
                r.extend(time(&ctx, &s, &mut *rust));
                c.extend(time(&ctx, &s, &mut *cuda));
            } else {
                c.extend(time(&ctx, &s, &mut *cuda));
                r.extend(time(&ctx, &s, &mut *rust));
            }
        }
        (r, c)
    };
    let (r, c) = both(&mut || unsafe { k.rs_reduce_shared(&s, cfg, n as u32, &dx, &mut pr) }.unwrap(), &mut || {
        unsafe { k.cu_reduce_shared(&s, cfg, n as u32, &dx, &mut pc) }.unwrap()
    });
    report("reduce (shared)", bytes, r, c);
    let (r, c) = both(&mut || unsafe { k.rs_reduce_warp(&s, cfg, n as u32, &dx, &mut pr) }.unwrap(), &mut || {
        unsafe { k.cu_reduce_warp(&s, cfg, n as u32, &dx, &mut pc) }.unwrap()
    });
    report("reduce (shuffle)", bytes, r, c);
    let (r, c) = both(&mut || unsafe { k.rs_softmax(&s, softmax_cfg, rows as u32, &dx, &mut dy) }.unwrap(), &mut || {
        unsafe { k.cu_softmax(&s, softmax_cfg, rows as u32, &dx, &mut dz) }.unwrap()
    });
    report("softmax (expf)", 2.0 * bytes, r, c);

    // Issue 12's twins: shared memory, shared atomics, vector loads, unrolling.
    let (mut dy2, mut dz2) = (s.clone_htod(&x)?, s.clone_htod(&x)?);
    let saxpy_cfg = LaunchConfig { grid_dim: (sms * 8, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
    let n4 = (n / 4) as u32;
    let (r, c) = both(&mut || unsafe { k.rs_saxpy4(&s, saxpy_cfg, n4, 1.5, &dx, &mut dy2) }.unwrap(), &mut || {
        unsafe { k.cu_saxpy4(&s, saxpy_cfg, n4, 1.5, &dx, &mut dz2) }.unwrap()
    });
    report("saxpy (float4)", 3.0 * bytes, r, c);
    let side = 8192usize; // 8192^2 floats = the same 256 MiB
    let tcfg = LaunchConfig { grid_dim: ((side / 32) as u32, (side / 32) as u32, 1), block_dim: (32, 8, 1), shared_mem_bytes: 0 };
    let (r, c) = both(&mut || unsafe { k.rs_transpose(&s, tcfg, side as u32, &dx, &mut dy) }.unwrap(), &mut || {
        unsafe { k.cu_transpose(&s, tcfg, side as u32, &dx, &mut dz) }.unwrap()
    });
    report("transpose 8192^2", 2.0 * bytes, r, c);
    let words: Vec<u32> = Words(7).map(|r| r as u32).take(n).collect();
    let dw = s.clone_htod(&words)?;
    let (mut hr, mut hc) = (s.alloc_zeros::<u32>(256)?, s.alloc_zeros::<u32>(256)?);
    let hcfg = LaunchConfig { grid_dim: (sms * 4, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
    let (r, c) = both(&mut || unsafe { k.rs_histogram(&s, hcfg, n as u32, &dw, &mut hr) }.unwrap(), &mut || {
        unsafe { k.cu_histogram(&s, hcfg, n as u32, &dw, &mut hc) }.unwrap()
    });
    report("histogram 256", bytes, r, c);

    // SGEMM against the FP32 peak: SMs x 128 FP32 lanes x 2 flops x the maximum clock.
    let clock_khz = ctx.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_CLOCK_RATE)? as f64;
    let peak = sms as f64 * 128.0 * 2.0 * clock_khz * 1e3;
    let m = 4096usize;
    let (a, b) = (s.clone_htod(&x[..m * m])?, s.clone_htod(&x[m * m..2 * m * m])?);
    let (mut cr, mut cc) = (s.alloc_zeros::<f32>(m * m)?, s.alloc_zeros::<f32>(m * m)?);
    let gcfg = LaunchConfig { grid_dim: ((m / 128) as u32, (m / 128) as u32, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
    let (r, c) = both(&mut || unsafe { k.rs_sgemm(&s, gcfg, m as u32, &a, &b, &mut cr) }.unwrap(), &mut || {
        unsafe { k.cu_sgemm(&s, gcfg, m as u32, &a, &b, &mut cc) }.unwrap()
    });
    let (r, c) = (median(r), median(c));
    let flops = 2.0 * (m as f64).powi(3);
    let (rt, ct) = (flops / r / 1e9, flops / c / 1e9);
    println!(
        "{:<16} {:>10.1} {:>10.1} {:>10.3} {:>8.1}T {:>8.1}T {:>7.1}% {:>7.1}%   (TFLOP/s; % of FP32 peak {:.1} TFLOP/s)",
        "sgemm 4096^3",
        r * 1e3,
        c * 1e3,
        r / c,
        rt,
        ct,
        100.0 * rt * 1e12 / peak,
        100.0 * ct * 1e12 / peak,
        peak / 1e12
    );

    // Issue 23's obvious-way twins (kernels/src/obvious.rs) against the same CUDA twins: generic
    // atomics on shared memory, by-value loops over small arrays, plain `for` loops, no option.
    println!();
    println!("obvious-way Rust twins (registers and local bytes of each side from the driver):");
    let attrs = |name: &str| {
        use sys::CUfunction_attribute_enum::{CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, CU_FUNC_ATTRIBUTE_NUM_REGS};
        let f = k.function(name).unwrap();
        (f.get_attribute(CU_FUNC_ATTRIBUTE_NUM_REGS).unwrap(), f.get_attribute(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES).unwrap())
    };
    let regs = |rust: &str, cuda: &str| {
        let ((rr, rl), (cr, cl)) = (attrs(rust), attrs(cuda));
        println!("{:<16} registers {rr} / {cr}, local memory {rl} / {cl} bytes ({rust} / {cuda})", "");
    };
    let (r, c) = both(&mut || unsafe { k.rs_histogram_obvious(&s, hcfg, n as u32, &dw, &mut hr) }.unwrap(), &mut || {
        unsafe { k.cu_histogram(&s, hcfg, n as u32, &dw, &mut hc) }.unwrap()
    });
    report("histogram (obv)", bytes, r, c);
    regs("rs_histogram_obvious", "cu_histogram");
    // The resident grid (8 blocks of 256 an SM): with the 4 of `hcfg` a warp's 16 shared atomics
    // per 16-byte load leave the load's latency half hidden, and either side's instruction order
    // moves its time by a few percent (BENCHMARKS.md, issue 23).
    let n4 = (n / 4) as u32;
    let h16cfg = LaunchConfig { grid_dim: (sms * 8, 1, 1), ..hcfg };
    let (r, c) = both(&mut || unsafe { k.rs_histogram16_obvious(&s, h16cfg, n4, &dw, &mut hr) }.unwrap(), &mut || {
        unsafe { k.cu_histogram16(&s, h16cfg, n4, &dw, &mut hc) }.unwrap()
    });
    report("histogram16 (obv)", bytes, r, c);
    regs("rs_histogram16_obvious", "cu_histogram16");
    let (r, c) = both(&mut || unsafe { k.rs_transpose_obvious(&s, tcfg, side as u32, &dx, &mut dy) }.unwrap(), &mut || {
        unsafe { k.cu_transpose(&s, tcfg, side as u32, &dx, &mut dz) }.unwrap()
    });
    report("transpose (obv)", 2.0 * bytes, r, c);
    regs("rs_transpose_obvious", "cu_transpose");
    // 5 x 5 convolution of the 8192^2 input into 8188^2 pixels.
    let cw = side as u32 - 4;
    let taps = s.clone_htod(&x[..25])?;
    let ccfg = LaunchConfig { grid_dim: (cw.div_ceil(32), cw.div_ceil(8), 1), block_dim: (32, 8, 1), shared_mem_bytes: 0 };
    let (r, c) = both(&mut || unsafe { k.rs_conv5_obvious(&s, ccfg, cw, cw, &dx, &taps, &mut dy) }.unwrap(), &mut || {
        unsafe { k.cu_conv5(&s, ccfg, cw, cw, &dx, &taps, &mut dz) }.unwrap()
    });
    report("conv5 (obv)", bytes + (cw as f64).powi(2) * 4.0, r, c);
    regs("rs_conv5_obvious", "cu_conv5");
    // A 16 x 32 layer over 2^21 samples: the 32 x 2^21 inputs are the 256 MiB of `dx`.
    let batch = (n / 32) as u32;
    let weights = s.clone_htod(&x[..16 * 32])?;
    let dcfg = LaunchConfig { grid_dim: (batch / 256, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
    let (r, c) = both(&mut || unsafe { k.rs_dense16_obvious(&s, dcfg, batch, &weights, &dx, &mut dy) }.unwrap(), &mut || {
        unsafe { k.cu_dense16(&s, dcfg, batch, &weights, &dx, &mut dz) }.unwrap()
    });
    report("dense16 (obv)", 1.5 * bytes, r, c);
    regs("rs_dense16_obvious", "cu_dense16");
    let (r, c) = both(&mut || unsafe { k.rs_sgemm_obvious(&s, gcfg, m as u32, &a, &b, &mut cr) }.unwrap(), &mut || {
        unsafe { k.cu_sgemm(&s, gcfg, m as u32, &a, &b, &mut cc) }.unwrap()
    });
    let (r, c) = (median(r), median(c));
    let (rt, ct) = (flops / r / 1e9, flops / c / 1e9);
    println!(
        "{:<16} {:>10.1} {:>10.1} {:>10.3} {:>8.1}T {:>8.1}T {:>7.1}% {:>7.1}%   (TFLOP/s; % of FP32 peak)",
        "sgemm (obv)",
        r * 1e3,
        c * 1e3,
        r / c,
        rt,
        ct,
        100.0 * rt * 1e12 / peak,
        100.0 * ct * 1e12 / peak,
    );
    regs("rs_sgemm_obvious", "cu_sgemm");
    println!();
    println!("medians of {} runs each; GB/s = bytes read (+ written) / time; %cp = of the copy bandwidth", 4 * RUNS);
    Ok(())
}
