//! On a GPU: the kernels load, and every kernel, from the cubin and through the PTX JIT,
//! matches the CPU.
//!
//! It runs on ptx-runtime's test harness (`harness = false` in Cargo.toml): without a CUDA driver
//! each test reports `ignored (no GPU: <reason>)` and counts as ignored, rather than passing
//! having checked nothing; with `CARGO_PTX_REQUIRE_GPU=1` (a run that must use the GPU) a missing
//! GPU fails instead. `cargo test` filters and flags work as usual.

use ptx_runtime::harness::{self, Context};
use ptx_runtime::Grid;

use {{crate}}::{{{#rust}}affine, {{/rust}}input, kernels::Kernels, {{#rust}}saxpy, {{/rust}}{{#cuda}}sigmoid, {{/cuda}}{{#rust}}softplus, {{/rust}}ulps_apart};
{{#rust}}
// The struct the `affine` kernel takes, from the crate the kernels share with this host.
use {{crate}}_shared::Affine;
{{/rust}}

fn main() {
    harness::run(vec![
        harness::gpu("the_kernels_load_on_this_machines_gpu", kernels_load),
        harness::gpu("kernels_match_the_cpu", kernels_match_the_cpu),
    ]);
}

fn kernels_load(ctx: &Context) {
    let k = Kernels::load(ctx).expect("an embedded image fits this GPU");
    assert!(!k.images().is_empty());
}

fn kernels_match_the_cpu(ctx: &Context) {
    for load in [Kernels::load, Kernels::load_ptx_only] {
        let k = load(ctx).unwrap();
        let stream = ctx.default_stream();
        for n in [1, 255, 100_003] {
            let x = input(n);
            let dx = stream.clone_htod(&x).unwrap();
            let mut dy = stream.alloc_zeros::<f32>(n).unwrap();
{{#rust}}
            let y0: Vec<f32> = (0..n).map(|i| i as f32).collect();
            stream.memcpy_htod(&y0, &mut dy).unwrap();
            let grid = Grid::elements(n);
            unsafe { k.saxpy(&stream, grid, n as u32, -3.0, &dx, &mut dy) }.unwrap();
            let want: Vec<f32> = (0..n).map(|i| saxpy(-3.0, x[i], y0[i])).collect();
            let got = stream.clone_dtoh(&dy).unwrap();
            assert_eq!(got, want, "saxpy, n = {n}, {:?}", k.images());

            let grid = Grid::elements(n);
            unsafe { k.softplus(&stream, grid, n as u32, &dx, &mut dy) }.unwrap();
            let got = stream.clone_dtoh(&dy).unwrap();
            for (i, (g, x)) in got.iter().zip(&x).enumerate() {
                let ulps = ulps_apart(*g, softplus(*x));
                assert!(ulps <= 4, "softplus({x}) = {g} at {i}, n = {n}");
            }

            // A struct by value, from shared/. A power-of-two scale makes `scale * x` exact,
            // so the result is the same whether or not the multiply and add are fused.
            let p = Affine {
                scale: -0.25,
                shift: 1.5,
            };
            let grid = Grid::elements(n);
            unsafe { k.affine(&stream, grid, n as u32, p, &dx, &mut dy) }.unwrap();
            let want: Vec<f32> = x.iter().map(|x| affine(p, *x)).collect();
            let got = stream.clone_dtoh(&dy).unwrap();
            assert_eq!(got, want, "affine, n = {n}, {:?}", k.images());
{{/rust}}
{{#cuda}}
            let grid = Grid::elements(n);
            unsafe { k.sigmoid(&stream, grid, n as u32, &dx, &mut dy) }.unwrap();
            let got = stream.clone_dtoh(&dy).unwrap();
            for (i, (g, x)) in got.iter().zip(&x).enumerate() {
                let ulps = ulps_apart(*g, sigmoid(*x));
                assert!(ulps <= 4, "sigmoid({x}) = {g} at {i}, n = {n}");
            }
{{/cuda}}
        }
    }
}
