//! Both languages from one generated module, on a GPU. ptx-runtime's test harness: without a
//! CUDA driver the GPU test reports `ignored (no GPU: <reason>)`.

use mixed::{config, cpu, kernels};
use ptx_runtime::harness::{self, Context};

fn main() {
    harness::run(vec![
        harness::test("rust_and_cuda_kernels_share_one_module", rust_and_cuda_kernels_share_one_module),
        harness::gpu("rust_then_cuda_matches_the_cpu", rust_then_cuda_matches_the_cpu),
    ]);
}

fn rust_and_cuda_kernels_share_one_module() {
    // No GPU needed: the names and images are plain data.
    assert_eq!(kernels::KERNEL_NAMES, &["leaky_relu", "scale_add"]);
    assert!(kernels::mixed_kernels::PTX_SM_80.contains(".entry scale_add"));
    assert!(kernels::leaky_relu::PTX_SM_90.contains(".entry leaky_relu"));
}

fn rust_then_cuda_matches_the_cpu(ctx: &Context) {
    for load in [kernels::Kernels::load, kernels::Kernels::load_ptx_only] {
        let k = load(ctx).unwrap();
        let stream = ctx.default_stream();
        for n in [1usize, 257, 100_003] {
            let x: Vec<f32> = (0..n).map(|i| (i % 2001) as f32 * 0.01 - 10.0).collect();
            let dx = stream.clone_htod(&x).unwrap();
            let mut t = stream.alloc_zeros::<f32>(n).unwrap();
            let mut y = stream.alloc_zeros::<f32>(n).unwrap();
            unsafe { k.scale_add(&stream, config(n), n as u32, 1.5, -2.0, &dx, &mut t) }.unwrap();
            unsafe { k.leaky_relu(&stream, config(n), n as i64, &t, &mut y) }.unwrap();
            assert_eq!(stream.clone_dtoh(&y).unwrap(), cpu(1.5, -2.0, &x), "n = {n}, {:?}", k.images());
        }
    }
}
