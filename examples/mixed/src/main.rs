//! `cargo run --release -p mixed`: a Rust kernel, then a CUDA C++ kernel on its output, checked
//! against the CPU.

use mixed::{config, cpu, kernels::Kernels};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let ctx = ptx_runtime::context(0)?;
    let k = Kernels::load(&ctx)?;
    let stream = ctx.default_stream();
    let n = 1 << 22;
    let x: Vec<f32> = (0..n).map(|i| (i % 2001) as f32 * 0.01 - 10.0).collect();
    let dx = stream.clone_htod(&x)?;
    let mut t = stream.alloc_zeros::<f32>(n)?;
    let mut y = stream.alloc_zeros::<f32>(n)?;
    unsafe { k.scale_add(&stream, config(n), n as u32, 1.5, -2.0, &dx, &mut t) }?;
    unsafe { k.leaky_relu(&stream, config(n), n as i64, &t, &mut y) }?;
    let got = stream.clone_dtoh(&y)?;
    let bad = got.iter().zip(cpu(1.5, -2.0, &x)).filter(|(g, w)| **g != *w).count();
    println!("device images: {}", k.images().iter().map(|i| i.to_string()).collect::<Vec<_>>().join(", "));
    println!("scale_add (Rust) then leaky_relu (CUDA C++) on {n} floats: {bad} mismatches");
    if bad != 0 {
        return Err("GPU results differ from the CPU".into());
    }
    Ok(())
}
