//! The tensor-core twins against each other and against cuBLAS's HGEMM.
//!
//! For each shape (4096^3, and the tall-skinny 16384 x 4096 x 1024): fresh random f16 inputs,
//! every variant checked against a sampled f64 reference, then timed with CUDA events, 10
//! launches a sample, in rounds that rotate the order of the variants; medians of the rounds.
//! Ratios are Rust over CUDA (target <= 1.02) and wgmma over cuBLAS (throughput, target >= 0.70).
//!
//! Run on a GPU machine with libcublas.so.13 on LD_LIBRARY_PATH:
//! `LD_LIBRARY_PATH=/usr/local/cuda-13.0/targets/x86_64-linux/lib ./tensor-cores-bench [rounds]`.

#[path = "../tests/cublas/mod.rs"]
mod cublas;

use std::sync::Arc;

use ptx_runtime::cudarc::driver::{sys, CudaSlice, CudaStream};
use ptx_runtime::half::f16;
use tensor_cores::kernels::Kernels;
use tensor_cores::{fresh_seed, poison, random_f16, sampled_error, Shape};

/// Dense FP16 (f32 accumulate) tensor throughput of an H100 SXM5 by its datasheet, TFLOP/s.
const H100_SXM_PEAK: f64 = 989.4;

type Launch<'a> = Box<dyn Fn(&mut CudaSlice<f16>) + 'a>;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let rounds: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(25);
    let ctx = ptx_runtime::context(0)?;
    let s = ctx.default_stream();
    let k = &Kernels::load(&ctx)?;
    let blas = &cublas::blas(&s)?;
    let s = &s;
    let (major, minor) = ctx.compute_capability()?;
    println!("device: {} (sm_{major}{minor}), images {:?}", ctx.name()?, k.images().iter().map(|i| i.to_string()).collect::<Vec<_>>());
    let hopper = major == 9 && minor == 0;
    let mut table = Vec::new();
    for shape in [Shape { m: 4096, n: 4096, k: 4096 }, Shape { m: 16384, n: 4096, k: 1024 }] {
        let seed = fresh_seed();
        let (a, b) = (random_f16(shape.m * shape.k, seed), random_f16(shape.n * shape.k, seed + 1));
        let (da, db) = (s.clone_htod(&a)?, s.clone_htod(&b)?);
        let maps = if hopper { Some(tensor_cores::wgmma_maps(s, shape, &da, &db)?) } else { None };
        let (da, db) = (&da, &db);
        let (m, n, kk) = (shape.m, shape.n, shape.k);
        let mma = shape.mma_config()?;
        let mut variants: Vec<(&str, Launch)> = vec![
            ("cuBLAS", Box::new(move |c: &mut CudaSlice<f16>| cublas::hgemm(blas, shape, da, db, c).unwrap())),
            (
                "mma.sync Rust",
                Box::new(move |c: &mut CudaSlice<f16>| {
                    unsafe { k.rs_mma_hgemm(s, mma, m as u32, n as u32, kk as u32, da, db, c) }.unwrap()
                }),
            ),
            (
                "mma.sync CUDA",
                Box::new(move |c: &mut CudaSlice<f16>| {
                    unsafe { k.cu_mma_hgemm(s, mma, m as i32, n as i32, kk as i32, da, db, c) }.unwrap()
                }),
            ),
        ];
        if let Some((ma, mb)) = &maps {
            let wg = shape.wgmma_config()?;
            variants.push((
                "wgmma Rust",
                Box::new(move |c: &mut CudaSlice<f16>| {
                    unsafe { k.rs_wgmma_hgemm(s, wg, m as u32, n as u32, kk as u32, ma, mb, c) }.unwrap()
                }),
            ));
            variants.push((
                "wgmma CUDA",
                Box::new(move |c: &mut CudaSlice<f16>| {
                    unsafe { k.cu_wgmma_hgemm(s, wg, m as i32, n as i32, kk as i32, ma, mb, c) }.unwrap()
                }),
            ));
        }
        // Correct first: each variant into a poisoned C, against the sampled f64 reference.
        let mut c = s.clone_htod(&poison(m * n))?;
        for (name, launch) in &variants {
            s.memcpy_htod(&poison(m * n), &mut c)?;
            launch(&mut c);
            let out = s.clone_dtoh(&c)?;
            let (rel, worst, finite) = sampled_error(&a, &b, &out, shape, 2048, seed ^ 3);
            println!("check {name:14} {m}x{n}x{kk}: sampled error {rel:.2e}, worst {worst:.2e}");
            if !finite || rel > 2e-3 {
                return Err(format!("{name} is wrong at {m}x{n}x{kk}: error {rel:e}, finite {finite}").into());
            }
        }
        let times = time(s, &variants, &mut c, rounds)?;
        for (i, (name, _)) in variants.iter().enumerate() {
            table.push((shape, name.to_string(), times[i].clone()));
        }
    }
    println!("\n{:18} {:20} {:>10} {:>9} {:>9} {:>7}", "shape", "variant", "median ms", "spread", "TFLOP/s", "% peak");
    for (shape, name, t) in &table {
        let med = median(t);
        let mut sorted = t.clone();
        sorted.sort_by(|a, b| a.total_cmp(b));
        // The interquartile range over the median.
        let spread = (sorted[sorted.len() * 3 / 4] - sorted[sorted.len() / 4]) / med;
        let tf = shape.flops() / med / 1e9;
        println!(
            "{:18} {:20} {:>10.4} {:>8.1}% {:>9.1} {:>6.1}%",
            format!("{}x{}x{}", shape.m, shape.n, shape.k),
            name,
            med,
            spread * 100.0,
            tf,
            tf / H100_SXM_PEAK * 100.0
        );
    }
    println!("\nratios (medians of per-round ratios):");
    for shape in table.iter().map(|t| t.0).collect::<std::collections::BTreeSet<_>>() {
        let get = |n: &str| table.iter().find(|t| t.0 == shape && t.1 == n).map(|t| t.2.clone());
        let ratio = |x: &str, y: &str| get(x).zip(get(y)).map(|(a, b)| median(&a.iter().zip(&b).map(|(p, q)| p / q).collect::<Vec<_>>()));
        let label = format!("{}x{}x{}", shape.m, shape.n, shape.k);
        if let Some(r) = ratio("mma.sync Rust", "mma.sync CUDA") {
            println!("{label:18} mma.sync Rust / CUDA time        {r:.3}");
        }
        if let Some(r) = ratio("wgmma Rust", "wgmma CUDA") {
            println!("{label:18} wgmma Rust / CUDA time           {r:.3}");
        }
        if let Some(r) = ratio("cuBLAS", "wgmma Rust") {
            println!("{label:18} wgmma Rust / cuBLAS throughput   {r:.3}");
        }
        if let Some(r) = ratio("cuBLAS", "wgmma CUDA") {
            println!("{label:18} wgmma CUDA / cuBLAS throughput   {r:.3}");
        }
    }
    Ok(())
}

/// Per variant, `rounds` times of one launch (ms), each the mean of 10 launches between two
/// events; the order of the variants rotates from round to round.
fn time(
    s: &Arc<CudaStream>,
    variants: &[(&str, Launch)],
    c: &mut CudaSlice<f16>,
    rounds: usize,
) -> Result<Vec<Vec<f64>>, Box<dyn std::error::Error>> {
    let flags = Some(sys::CUevent_flags::CU_EVENT_DEFAULT);
    for (_, launch) in variants {
        for _ in 0..3 {
            launch(c); // warm-up: clocks, caches, cuBLAS's heuristics
        }
    }
    let mut times = vec![Vec::with_capacity(rounds); variants.len()];
    for r in 0..rounds {
        for j in 0..variants.len() {
            let i = (j + r) % variants.len();
            let start = s.record_event(flags)?;
            for _ in 0..10 {
                (variants[i].1)(c);
            }
            let end = s.record_event(flags)?;
            end.synchronize()?;
            times[i].push(start.elapsed_ms(&end)? as f64 / 10.0);
        }
    }
    Ok(times)
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}
