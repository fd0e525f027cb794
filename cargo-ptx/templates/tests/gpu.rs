//! On a GPU: every kernel, from the cubin and through the PTX JIT, against the CPU. Without a
//! CUDA driver each test says why in one line and passes.

use {{crate}}::{input, kernels::Kernels, ulps_apart};

#[test]
fn kernels_match_the_cpu() {
    let Some(ctx) = ptx_runtime::context_or_skip() else { return };
    for load in [Kernels::load, Kernels::load_ptx_only] {
        let k = load(&ctx).unwrap();
        let stream = ctx.default_stream();
        for n in [1, 255, 100_003] {
            let x = input(n);
            let dx = stream.clone_htod(&x).unwrap();
            let mut dy = stream.alloc_zeros::<f32>(n).unwrap();
{{#rust}}
            let y0: Vec<f32> = (0..n).map(|i| i as f32).collect();
            stream.memcpy_htod(&y0, &mut dy).unwrap();
            unsafe { k.saxpy(&stream, k.saxpy_config(n).unwrap(), n as u32, -3.0, &dx, &mut dy) }.unwrap();
            let want: Vec<f32> = x.iter().zip(&y0).map(|(x, y)| {{crate}}::saxpy(-3.0, *x, *y)).collect();
            assert_eq!(stream.clone_dtoh(&dy).unwrap(), want, "saxpy, n = {n}, {:?}", k.images());

            unsafe { k.softplus(&stream, k.softplus_config(n).unwrap(), n as u32, &dx, &mut dy) }.unwrap();
            let got = stream.clone_dtoh(&dy).unwrap();
            for (i, (g, x)) in got.iter().zip(&x).enumerate() {
                assert!(ulps_apart(*g, {{crate}}::softplus(*x)) <= 4, "softplus({x}) = {g} at {i}, n = {n}");
            }
{{/rust}}
{{#cuda}}
            unsafe { k.sigmoid(&stream, k.sigmoid_config(n).unwrap(), n as u32, &dx, &mut dy) }.unwrap();
            let got = stream.clone_dtoh(&dy).unwrap();
            for (i, (g, x)) in got.iter().zip(&x).enumerate() {
                assert!(ulps_apart(*g, {{crate}}::sigmoid(*x)) <= 4, "sigmoid({x}) = {g} at {i}, n = {n}");
            }
{{/cuda}}
        }
    }
}
