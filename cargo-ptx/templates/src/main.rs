//! `cargo run --release`: runs every kernel on the GPU, checks every element against the CPU and
//! prints the time each took.

use std::error::Error;
use std::time::Instant;

use ptx_runtime::cudarc::driver::CudaStream;
use ptx_runtime::{Grid, LaunchError};

use {{crate}}::{{{#rust}}affine, {{/rust}}input, kernels::Kernels, {{#rust}}saxpy, {{/rust}}{{#cuda}}sigmoid, {{/cuda}}{{#rust}}softplus, {{/rust}}ulps_apart};
{{#rust}}
// The struct the `affine` kernel takes, from the crate the kernels share with this host.
use {{crate}}_shared::Affine;
{{/rust}}

const N: usize = 1 << 24;

fn main() -> Result<(), Box<dyn Error>> {
    let ctx = ptx_runtime::context(0)?;
    let k = Kernels::load(&ctx)?;
    let stream = ctx.default_stream();
    let images: Vec<String> = k.images().iter().map(|i| i.to_string()).collect();
    println!("{} ({})", ctx.name()?, images.join(", "));

    let x = input(N);
    let dx = stream.clone_htod(&x)?;
    let mut dy = stream.alloc_zeros::<f32>(N)?;
    let mut failed = false;
{{#rust}}

    let y0: Vec<f32> = (0..N).map(|i| (i % 7) as f32).collect();
    stream.memcpy_htod(&y0, &mut dy)?;
    // Timed once: saxpy updates y in place.
    let grid = Grid::elements(N);
    let ms = time(&stream, 1, || unsafe {
        k.saxpy(&stream, grid, N as u32, 2.0, &dx, &mut dy)
    })?;
    let want: Vec<f32> = x.iter().zip(&y0).map(|(x, y)| saxpy(2.0, *x, *y)).collect();
    failed |= report("saxpy", &stream.clone_dtoh(&dy)?, &want, 0, ms, 3);

    let grid = Grid::elements(N);
    let ms = time(&stream, 20, || unsafe {
        k.softplus(&stream, grid, N as u32, &dx, &mut dy)
    })?;
    let want: Vec<f32> = x.iter().map(|x| softplus(*x)).collect();
    failed |= report("softplus", &stream.clone_dtoh(&dy)?, &want, 4, ms, 2);

    // A struct passed by value, the type of shared/. A power-of-two scale makes `scale * x`
    // exact: the result is the same whether or not the GPU fuses the multiply and the add.
    let p = Affine {
        scale: 0.5,
        shift: 3.0,
    };
    let grid = Grid::elements(N);
    let ms = time(&stream, 20, || unsafe {
        k.affine(&stream, grid, N as u32, p, &dx, &mut dy)
    })?;
    let want: Vec<f32> = x.iter().map(|x| affine(p, *x)).collect();
    failed |= report("affine", &stream.clone_dtoh(&dy)?, &want, 0, ms, 2);
{{/rust}}
{{#cuda}}

    let grid = Grid::elements(N);
    let ms = time(&stream, 20, || unsafe {
        k.sigmoid(&stream, grid, N as u32, &dx, &mut dy)
    })?;
    let want: Vec<f32> = x.iter().map(|x| sigmoid(*x)).collect();
    failed |= report("sigmoid", &stream.clone_dtoh(&dy)?, &want, 4, ms, 2);
{{/cuda}}

    if failed {
        return Err("the GPU's results differ from the CPU's".into());
    }
    Ok(())
}

/// Runs `launch` `runs` times after a warm-up; the median time of one run in milliseconds.
fn time(
    stream: &CudaStream,
    runs: usize,
    mut launch: impl FnMut() -> Result<(), LaunchError>,
) -> Result<f64, Box<dyn Error>> {
    if runs > 1 {
        launch()?;
        stream.synchronize()?;
    }
    let mut ms = Vec::with_capacity(runs);
    for _ in 0..runs {
        let t = Instant::now();
        launch()?;
        stream.synchronize()?;
        ms.push(t.elapsed().as_secs_f64() * 1e3);
    }
    ms.sort_by(f64::total_cmp);
    Ok(ms[ms.len() / 2])
}

/// Prints one kernel's line; true when an element is further than `max_ulps` from the CPU's.
fn report(name: &str, got: &[f32], want: &[f32], max_ulps: u32, ms: f64, arrays: usize) -> bool {
    let far = |(g, w): (&f32, &f32)| ulps_apart(*g, *w) > max_ulps;
    let (n, bad) = (got.len(), got.iter().zip(want).filter(|&p| far(p)).count());
    let gbs = (arrays * n * 4) as f64 / (ms * 1e-3) / 1e9;
    println!("{name:>9}: {n} elements, {bad} wrong, {ms:.3} ms ({gbs:.0} GB/s)");
    bad != 0
}
