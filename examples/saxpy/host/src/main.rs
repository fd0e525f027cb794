//! `cargo run --release -p saxpy`: runs saxpy and exp on the GPU, checks every element against
//! the CPU, and prints the time.

use std::time::Instant;

use ptx_runtime::Grid;
use saxpy::{kernels::Kernels, max_exp_error, saxpy_cpu};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let ctx = ptx_runtime::context(0)?;
    let kernels = Kernels::load(&ctx)?;
    let stream = ctx.default_stream();
    let n = 1 << 24;
    let x: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.01 - 5.0).collect();
    let y: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    let a = 2.5f32;

    let dx = stream.clone_htod(&x)?;
    let mut dy = stream.clone_htod(&y)?;
    let t = Instant::now();
    unsafe { kernels.saxpy(&stream, Grid::elements(n), n as u32, a, &dx, &mut dy) }?;
    stream.synchronize()?;
    let saxpy_time = t.elapsed();
    let got = stream.clone_dtoh(&dy)?;
    let mut want = y.clone();
    saxpy_cpu(a, &x, &mut want);
    let bad = got.iter().zip(&want).filter(|(g, w)| g != w).count();

    let mut de = stream.alloc_zeros::<f32>(n)?;
    unsafe { kernels.exp_kernel(&stream, Grid::elements(n), n as u32, &dx, &mut de) }?;
    let e = stream.clone_dtoh(&de)?;
    let err = max_exp_error(&x, &e);

    println!("device image: {}", kernels.images().iter().map(|i| i.to_string()).collect::<Vec<_>>().join(", "));
    println!("saxpy on {n} floats: {bad} mismatches, {:.3} ms", saxpy_time.as_secs_f64() * 1e3);
    println!("exp   on {n} floats: max relative error {err:.2e}");
    if bad != 0 || err > 1e-6 {
        return Err("GPU results differ from the CPU".into());
    }
    Ok(())
}
