//! The struct parameter on a GPU: the kernel's result against `Affine::apply` on the CPU.
//! ptx-runtime's test harness: without a driver the GPU test reports `ignored` with the reason.

use affine::{kernels, Affine};
use ptx_runtime::harness::{self, Context};
use ptx_runtime::Grid;

fn main() {
    harness::run(vec![
        harness::gpu("the_kernel_applies_the_struct_it_was_passed", the_kernel_applies_the_struct_it_was_passed),
        harness::test("the_module_embeds_the_kernel", || assert!(kernels::KERNEL_NAMES.contains(&"affine"))),
    ]);
}

/// Compiles only if the generated method's parameter is the shared crate's `Affine`.
#[allow(dead_code)]
unsafe fn takes_the_shared_type(
    k: &kernels::Kernels,
    s: &ptx_runtime::cudarc::driver::CudaStream,
    cfg: ptx_runtime::cudarc::driver::LaunchConfig,
    x: &ptx_runtime::cudarc::driver::CudaSlice<f32>,
    y: &mut ptx_runtime::cudarc::driver::CudaSlice<f32>,
) {
    let _ = unsafe { k.affine(s, cfg, 1, affine_shared::Affine { scale: 1.0, shift: 0.0 }, x, y) };
}

fn the_kernel_applies_the_struct_it_was_passed(ctx: &Context) {
    let k = kernels::Kernels::load(ctx).unwrap();
    let stream = ctx.default_stream();
    let p = Affine { scale: 1.5, shift: -2.0 };
    for n in [1usize, 257, 100_003] {
        let x: Vec<f32> = (0..n).map(|i| (i % 977) as f32 * 0.013 - 6.0).collect();
        let dx = stream.clone_htod(&x).unwrap();
        let mut dy = stream.alloc_zeros::<f32>(n).unwrap();
        unsafe { k.affine(&stream, Grid::elements(n), n as u32, p, &dx, &mut dy) }.unwrap();
        // The kernel's `p.apply(x)`, fused as the GPU build fuses it (`fmad`, on by default).
        let want: Vec<f32> = x.iter().map(|x| p.scale.mul_add(*x, p.shift)).collect();
        assert_eq!(stream.clone_dtoh(&dy).unwrap(), want, "n = {n}");
    }
}
