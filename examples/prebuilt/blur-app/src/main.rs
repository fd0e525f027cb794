//! `cargo run --release -p blur-app`: fastblur's kernels, from its prebuilt set, brighten and
//! blur an image on the GPU, checked against the CPU.

use fastblur::{box_blur_cpu, brighten_cpu, config, Kernels};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let ctx = ptx_runtime::context(0)?;
    let k = Kernels::load(&ctx)?;
    let stream = ctx.default_stream();
    let (width, height) = (1920usize, 1080usize);
    let n = width * height;
    let image: Vec<f32> = (0..n).map(|i| ((i * 7919) % 1000) as f32 / 1000.0).collect();
    let d_image = stream.clone_htod(&image)?;
    let mut bright = stream.alloc_zeros::<f32>(n)?;
    let mut blurred = stream.alloc_zeros::<f32>(n)?;
    unsafe { k.brighten(&stream, config(n), n as u32, 1.25, &d_image, &mut bright) }?;
    unsafe { k.box_blur(&stream, config(n), width as i32, n as i32, &bright, &mut blurred) }?;
    let got = stream.clone_dtoh(&blurred)?;
    let want = box_blur_cpu(width, &brighten_cpu(1.25, &image));
    let bad = got.iter().zip(&want).filter(|(g, w)| (**g - **w).abs() > 1e-5).count();
    println!("device images: {}", k.images().iter().map(|i| i.to_string()).collect::<Vec<_>>().join(", "));
    println!("brighten (Rust) then box_blur (CUDA C++) on {width}x{height}: {bad} mismatches");
    if bad != 0 {
        return Err("GPU results differ from the CPU".into());
    }
    Ok(())
}
