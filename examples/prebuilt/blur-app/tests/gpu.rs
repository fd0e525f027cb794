//! fastblur's prebuilt kernels in a dependent: embedded without a GPU, and on a GPU checked
//! against the CPU (ptx-runtime's harness: `ignored (no GPU: ...)` without a driver).

use fastblur::{box_blur_cpu, brighten_cpu, config, kernels, Kernels};
use ptx_runtime::harness::{self, Context};

fn main() {
    harness::run(vec![
        harness::test("the_prebuilt_kernels_are_embedded_for_each_arch", the_prebuilt_kernels_are_embedded_for_each_arch),
        harness::gpu("prebuilt_kernels_match_the_cpu", prebuilt_kernels_match_the_cpu),
    ]);
}

fn the_prebuilt_kernels_are_embedded_for_each_arch() {
    assert_eq!(kernels::KERNEL_NAMES, &["brighten", "box_blur"]);
    assert!(kernels::fastblur_kernels::PTX_SM_80.contains(".entry brighten"));
    assert!(kernels::box_blur::PTX_SM_90.contains(".entry box_blur"));
}

fn prebuilt_kernels_match_the_cpu(ctx: &Context) {
    for load in [Kernels::load, Kernels::load_ptx_only] {
        let k = load(ctx).unwrap();
        let stream = ctx.default_stream();
        for (width, height) in [(1usize, 1usize), (7, 3), (640, 480)] {
            let n = width * height;
            let image: Vec<f32> = (0..n).map(|i| ((i * 7919) % 1000) as f32 / 1000.0).collect();
            let d_image = stream.clone_htod(&image).unwrap();
            let mut bright = stream.alloc_zeros::<f32>(n).unwrap();
            let mut blurred = stream.alloc_zeros::<f32>(n).unwrap();
            unsafe { k.brighten(&stream, config(n), n as u32, 1.25, &d_image, &mut bright) }.unwrap();
            unsafe { k.box_blur(&stream, config(n), width as i32, n as i32, &bright, &mut blurred) }.unwrap();
            let got = stream.clone_dtoh(&blurred).unwrap();
            let want = box_blur_cpu(width, &brighten_cpu(1.25, &image));
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                assert!((g - w).abs() <= 1e-5, "{width}x{height}, pixel {i}: {g} vs {w} ({:?})", k.images());
            }
        }
    }
}
