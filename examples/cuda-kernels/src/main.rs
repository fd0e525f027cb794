//! `cargo run --release -p cuda-kernels`: runs the CUDA C++ kernels on the GPU, checks every
//! element against the CPU, and prints the time.

use std::time::Instant;

use cuda_kernels::{add_u128_cpu, block_sums_cpu, config, kernels::Kernels, saxpy_cpu};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let ctx = ptx_runtime::context(0)?;
    let k = Kernels::load(&ctx)?;
    let stream = ctx.default_stream();
    let n = 1 << 24;
    let x: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.01 - 5.0).collect();
    let y: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    let dx = stream.clone_htod(&x)?;
    let mut dy = stream.clone_htod(&y)?;
    let t = Instant::now();
    unsafe { k.saxpy(&stream, config(n), n as u32, 2.5, &dx, &mut dy) }?;
    stream.synchronize()?;
    let saxpy_ms = t.elapsed().as_secs_f64() * 1e3;
    let mut want = y.clone();
    saxpy_cpu(2.5, &x, &mut want);
    let saxpy_bad = stream.clone_dtoh(&dy)?.iter().zip(&want).filter(|(g, w)| g != w).count();

    let mut partial = stream.alloc_zeros::<f32>(n.div_ceil(256))?;
    unsafe { k.block_sum(&stream, config(n), &dx, &mut partial, n as u32) }?;
    let sum_bad = stream.clone_dtoh(&partial)?.iter().zip(block_sums_cpu(&x)).filter(|(g, w)| **g != *w).count();

    let m = 1 << 20;
    let a: Vec<u64> = (0..2 * m as u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).collect();
    let b: Vec<u64> = (0..2 * m as u64).map(|i| u64::MAX - i).collect();
    let (da, db) = (stream.clone_htod(&a)?, stream.clone_htod(&b)?);
    let mut dout = stream.alloc_zeros::<u64>(2 * m)?;
    unsafe { k.add_u128(&stream, config(m), &da, &db, &mut dout, m as u32) }?;
    let add_bad = stream.clone_dtoh(&dout)?.iter().zip(add_u128_cpu(&a, &b)).filter(|(g, w)| **g != *w).count();

    let mut cycles = stream.alloc_zeros::<u64>(256)?;
    let mut sink = stream.alloc_zeros::<f32>(256)?;
    unsafe { k.clock_span(&stream, config(256), &mut cycles, &mut sink, 1000) }?;
    let cycles = stream.clone_dtoh(&cycles)?;

    println!("device image: {}", k.images().iter().map(|i| i.to_string()).collect::<Vec<_>>().join(", "));
    println!("saxpy     on {n} floats: {saxpy_bad} mismatches, {saxpy_ms:.3} ms");
    println!("block_sum on {n} floats: {sum_bad} mismatching blocks");
    println!("add_u128  on {m} pairs: {add_bad} mismatches");
    println!("clock_span: 1000 iterations took {} cycles in thread 0", cycles[0]);
    if saxpy_bad + sum_bad + add_bad != 0 || cycles[0] < 1000 {
        return Err("GPU results differ from the CPU".into());
    }
    Ok(())
}
