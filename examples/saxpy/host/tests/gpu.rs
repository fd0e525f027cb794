//! The example on a GPU: results against the CPU, the PTX (JIT) path, and load errors.
//!
//! ptx-runtime's test harness (`harness = false`, `ptx_runtime::harness`) rather than `#[test]`:
//! libtest cannot decide at run time that a test did not run, so without a driver the GPU tests
//! would pass having checked nothing. Here they report `ignored (no GPU: <reason>)`, and the
//! summary counts them as ignored (with `CARGO_PTX_REQUIRE_GPU=1` they fail instead); on a GPU
//! they run. Filters, `--list`, `--ignored` and `--test-threads` work as with libtest.

use ptx_runtime::harness::{self, Context as Ctx};
use ptx_runtime::{EmbeddedModule, Grid, Image, ImageKind, KernelSet, LaunchError, LoadError, Policy, Variant};
use saxpy::{kernels, max_exp_error, saxpy_cpu};

fn main() {
    harness::run(vec![
        harness::gpu("kernels_match_the_cpu_from_the_cubin", kernels_match_the_cpu_from_the_cubin),
        harness::gpu("kernels_match_the_cpu_through_the_ptx_jit", kernels_match_the_cpu_through_the_ptx_jit),
        harness::gpu("a_device_without_a_fitting_image_gets_a_load_error", a_device_without_a_fitting_image_gets_a_load_error),
        harness::gpu(
            "a_function_the_image_lacks_fails_the_load_unless_some_images_lack_it",
            a_function_the_image_lacks_fails_the_load_unless_some_images_lack_it,
        ),
        harness::gpu("occupancy_configs_reach_the_drivers_best_occupancy", occupancy_configs_reach_the_drivers_best_occupancy),
        harness::gpu("grids_are_resolved_for_the_kernel_they_launch", grids_are_resolved_for_the_kernel_they_launch),
        harness::gpu("generic_and_macro_stamped_kernels_match_the_cpu", generic_and_macro_stamped_kernels_match_the_cpu),
        harness::gpu("a_launch_the_driver_refuses_is_a_driver_error", a_launch_the_driver_refuses_is_a_driver_error),
        harness::test("the_generated_module_lists_kernels_and_images", the_generated_module_lists_kernels_and_images),
    ]);
}

fn check_results(k: &kernels::Kernels, ctx: &Ctx) {
    let stream = ctx.default_stream();
    for n in [1usize, 255, 256, 257, 100_003] {
        let x: Vec<f32> = (0..n).map(|i| (i % 977) as f32 * 0.013 - 6.0).collect();
        let y: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
        let dx = stream.clone_htod(&x).unwrap();
        let mut dy = stream.clone_htod(&y).unwrap();
        unsafe { k.saxpy(&stream, Grid::elements(n), n as u32, 1.5, &dx, &mut dy) }.unwrap();
        let mut want = y.clone();
        saxpy_cpu(1.5, &x, &mut want);
        assert_eq!(stream.clone_dtoh(&dy).unwrap(), want, "saxpy, n = {n}");

        // Views work as well as slices.
        let mut de = stream.alloc_zeros::<f32>(n).unwrap();
        let view = dx.slice(..);
        let mut out = de.slice_mut(..);
        unsafe { k.exp_kernel(&stream, Grid::elements(n), n as u32, &view, &mut out) }.unwrap();
        let e = stream.clone_dtoh(&de).unwrap();
        assert!(max_exp_error(&x, &e) <= 1e-6, "exp, n = {n}: {}", max_exp_error(&x, &e));
    }
}

fn kernels_match_the_cpu_from_the_cubin(ctx: &Ctx) {
    let k = kernels::Kernels::load(ctx).unwrap();
    let (major, minor) = ctx.compute_capability().unwrap();
    let image = k.images()[0];
    eprintln!("device sm_{major}{minor}: loaded {image}");
    if [80, 90].contains(&(major * 10 + minor)) {
        assert_eq!(image.kind, ImageKind::Cubin, "an exact cubin is embedded for this device");
    }
    check_results(&k, ctx);
}

fn kernels_match_the_cpu_through_the_ptx_jit(ctx: &Ctx) {
    let k = kernels::Kernels::load_ptx_only(ctx).unwrap();
    assert_eq!(k.images()[0].kind, ImageKind::Ptx);
    check_results(&k, ctx);
}

fn a_device_without_a_fitting_image_gets_a_load_error(ctx: &Ctx) {
    static ONLY_OTHER: &[Image] =
        &[Image { arch: "sm_121a", capability: 121, variant: Variant::Specific, kind: ImageKind::Cubin, ptx_isa: None, bytes: &[] }];
    let e = ptx_runtime::load(ctx, ONLY_OTHER, Policy::Best).unwrap_err();
    assert!(matches!(e, LoadError::NoImage { .. }), "{e}");
    let msg = e.to_string();
    assert!(msg.contains("no embedded kernel image runs on this GPU") && msg.contains("sm_121a cubin"), "{msg}");
}

/// A function the loaded image lacks: an error at load (the image and the generated code are
/// not of one build), unless the module lists it as one some images lack (an `#if` on the arch),
/// which loads the rest and fails that function's launch alone.
fn a_function_the_image_lacks_fails_the_load_unless_some_images_lack_it(ctx: &Ctx) {
    let module = |partial: &'static [&'static str]| EmbeddedModule {
        images: kernels::saxpy_kernels::IMAGES,
        functions: &["saxpy", "not_there"],
        bounds: &[0, 0],
        partial,
        cooperative: &[],
    };
    let e = KernelSet::load(ctx, &[module(&[])], Policy::Best).map(|_| ()).unwrap_err();
    assert!(matches!(e, LoadError::MissingKernel { ref name, .. } if name == "not_there"), "{e}");
    let set = KernelSet::load(ctx, &[module(&["not_there"])], Policy::Best).unwrap();
    assert!(set.function("saxpy").is_some() && set.function("not_there").is_none());
    let arch = set.images()[0].arch;
    match set.at(1) {
        Err(e @ LaunchError::NotInImage { kernel: "not_there", .. }) => {
            assert!(e.to_string().contains(&format!("not in the {arch} image")), "{e}")
        }
        other => panic!("{:?}", other.map(|_| ())),
    }
}

fn the_generated_module_lists_kernels_and_images() {
    // No GPU needed: the constants are plain data.
    assert_eq!(kernels::KERNEL_NAMES, &["saxpy", "exp_kernel", "empty", "axpy_f32", "axpy_f64", "negate_f32", "negate_i32"]);
    let archs: Vec<String> = kernels::saxpy_kernels::IMAGES.iter().map(|i| i.to_string()).collect();
    assert_eq!(archs, ["sm_80 PTX", "sm_80 cubin", "sm_90 PTX", "sm_90 cubin"]);
    assert!(kernels::saxpy_kernels::PTX_SM_90.contains(".entry saxpy"));
    assert_eq!(&kernels::saxpy_kernels::CUBIN_SM_80[..4], b"\x7fELF");
}

/// The occupancy plan reaches the driver's own best occupancy (`cuOccupancyMaxPotentialBlockSize`),
/// covers every element, is cached, and follows the dynamic shared memory asked for.
fn occupancy_configs_reach_the_drivers_best_occupancy(ctx: &Ctx) {
    let k = kernels::Kernels::load(ctx).unwrap();
    let module = ptx_runtime::load(ctx, kernels::saxpy_kernels::IMAGES, Policy::Best).unwrap();
    extern "C" fn no_shared(_: std::ffi::c_int) -> usize {
        0
    }
    for name in ["saxpy", "exp_kernel"] {
        let plan = k.plan_of(name, 0).unwrap();
        let f = module.function(name).unwrap();
        let (_, driver_block) = f.occupancy_max_potential_block_size(no_shared, 0, 0, None).unwrap();
        let driver_blocks = f.occupancy_max_active_blocks_per_multiprocessor(driver_block, 0, None).unwrap();
        eprintln!("{name}: plan {plan:?}; driver's choice {driver_block} threads x {driver_blocks} blocks/SM");
        assert_eq!(plan.block_size * plan.blocks_per_sm, driver_block * driver_blocks, "{name}: same resident threads per SM");
        assert!(plan.block_size >= 256 && plan.block_size.is_multiple_of(32), "{plan:?}");
        let cfg = plan.for_elements(100_003).unwrap();
        assert!(cfg.grid_dim.0 as usize * cfg.block_dim.0 as usize >= 100_003);
    }
    assert_eq!(k.plan_of("saxpy", 0).unwrap(), k.plan_of("saxpy", 0).unwrap());
    // 40 KiB of dynamic shared memory per block (under the 48 KiB that needs no opt-in): at most
    // five blocks fit in an H100 SM's 228 KiB.
    let big = k.plan_of("saxpy", 40 * 1024).unwrap();
    assert!(big.blocks_per_sm <= 5 && big.dynamic_shared_bytes == 40 * 1024, "{big:?}");
    assert_eq!(big.for_elements(1000).unwrap().shared_mem_bytes, 40 * 1024);
    // Over the 48 KiB a kernel gets without asking: the plan raises the kernel's limit (the
    // occupancy queries count no block over it), and every sm_80+ device has 64 KiB for a block.
    let over = k.plan_of("saxpy", 64 * 1024).unwrap();
    assert!(over.blocks_per_sm >= 1 && over.blocks_per_sm <= 3, "{over:?}");
    // More than any SM has: refused with the numbers, not a config that fails at launch.
    let e = k.plan_of("saxpy", 16 * 1024 * 1024).unwrap_err();
    assert!(matches!(e, ptx_runtime::LaunchError::TooMuchSharedMemory { kernel: "saxpy", dynamic: 16777216, .. }), "{e:?}");
}

/// A `Grid` is filled in by the plan of the kernel it launches; a `LaunchConfig` passes as given;
/// a name no kernel has is an error that says where the names are.
fn grids_are_resolved_for_the_kernel_they_launch(ctx: &Ctx) {
    use ptx_runtime::cudarc::driver::LaunchConfig;
    let k = kernels::Kernels::load(ctx).unwrap();
    let stream = ctx.default_stream();
    let plan = k.plan_of("saxpy", 0).unwrap();
    let n = 100_003usize;
    let cfg = k.config_of("saxpy", Grid::elements(n)).unwrap();
    let blocks = n.div_ceil(plan.block_size as usize) as u32;
    assert_eq!((cfg.grid_dim, cfg.block_dim, cfg.shared_mem_bytes), ((blocks, 1, 1), (plan.block_size, 1, 1), 0));
    let resident = k.config_of("saxpy", Grid::resident()).unwrap();
    assert_eq!(resident.grid_dim.0, plan.blocks_per_sm * plan.sm_count);
    // Dynamic shared memory goes into the plan (fewer blocks an SM) and into the launch.
    let shared = k.config_of("saxpy", Grid::elements(1000).shared(40 * 1024)).unwrap();
    assert_eq!((shared.shared_mem_bytes, shared.block_dim.0), (40 * 1024, k.plan_of("saxpy", 40 * 1024).unwrap().block_size));
    let fixed = LaunchConfig { grid_dim: (3, 1, 1), block_dim: (64, 1, 1), shared_mem_bytes: 0 };
    let given = k.config_of("saxpy", fixed).unwrap();
    assert_eq!((given.grid_dim, given.block_dim), ((3, 1, 1), (64, 1, 1)));
    // Each kernel its own plan: exp_kernel's grid is not saxpy's by accident of a shared config.
    assert_eq!(k.config_of("exp_kernel", Grid::elements(n)).unwrap().block_dim.0, k.plan_of("exp_kernel", 0).unwrap().block_size);
    let e = k.plan_of("saxpi", 0).unwrap_err();
    assert_eq!(
        e.to_string(),
        "no loaded kernel is named `saxpi`\n  help: `KERNEL_NAMES` of the generated module lists every kernel by its PTX name"
    );
    assert!(k.config_of("saxpi", Grid::elements(1)).is_err());
    // Launched with dynamic shared memory the kernel does not use, through the typed method.
    let x: Vec<f32> = (0..1000).map(|i| i as f32).collect();
    let dx = stream.clone_htod(&x).unwrap();
    let mut dy = stream.clone_htod(&vec![1.0f32; 1000]).unwrap();
    unsafe { k.saxpy(&stream, Grid::elements(1000).shared(1024), 1000, 2.0, &dx, &mut dy) }.unwrap();
    let mut want = vec![1.0f32; 1000];
    saxpy_cpu(2.0, &x, &mut want);
    assert_eq!(stream.clone_dtoh(&dy).unwrap(), want);
}

/// The typed method returns the driver's refusal as `LaunchError::Driver`, and the stream stays
/// usable: the next launch runs.
fn a_launch_the_driver_refuses_is_a_driver_error(ctx: &Ctx) {
    use ptx_runtime::cudarc::driver::{sys::CUresult, DriverError};
    let k = kernels::Kernels::load(ctx).unwrap();
    let stream = ctx.default_stream();
    let dx = stream.clone_htod(&[1.0f32; 256]).unwrap();
    let mut dy = stream.clone_htod(&[2.0f32; 256]).unwrap();
    // A grid 65,536 blocks high: more than any GPU takes (65,535), which only the driver checks.
    let too_high =
        ptx_runtime::cudarc::driver::LaunchConfig { grid_dim: (1, 65_536, 1), ..k.config_of("saxpy", Grid::elements(256)).unwrap() };
    let e = unsafe { k.saxpy(&stream, too_high, 256, 1.5, &dx, &mut dy) }.unwrap_err();
    assert!(matches!(e, ptx_runtime::LaunchError::Driver(DriverError(CUresult::CUDA_ERROR_INVALID_VALUE))), "{e:?}");
    // 16 MiB of dynamic shared memory a block, more than any GPU has, is refused before the
    // driver, with the numbers.
    let too_much =
        ptx_runtime::cudarc::driver::LaunchConfig { shared_mem_bytes: 16 << 20, ..k.config_of("saxpy", Grid::elements(256)).unwrap() };
    let e = unsafe { k.saxpy(&stream, too_much, 256, 1.5, &dx, &mut dy) }.unwrap_err();
    assert!(matches!(e, ptx_runtime::LaunchError::TooMuchSharedMemory { kernel: "saxpy", .. }), "{e:?}");
    unsafe { k.saxpy(&stream, Grid::elements(256), 256, 1.5, &dx, &mut dy) }.unwrap();
    assert_eq!(stream.clone_dtoh(&dy).unwrap(), vec![3.5f32; 256]);
}

/// The generic kernel's instances through `axpy::<T>`, and the macro-stamped kernels through their
/// typed methods, against the CPU.
fn generic_and_macro_stamped_kernels_match_the_cpu(ctx: &Ctx) {
    let k = kernels::Kernels::load(ctx).unwrap();
    let stream = ctx.default_stream();
    for n in [1usize, 257, 100_003] {
        let x: Vec<f32> = (0..n).map(|i| (i % 977) as f32 * 0.013 - 6.0).collect();
        let y: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
        let (dx, mut dy) = (stream.clone_htod(&x).unwrap(), stream.clone_htod(&y).unwrap());
        unsafe { k.axpy::<f32>(&stream, Grid::elements(n), n as u32, 1.5, &dx, &mut dy) }.unwrap();
        let mut want = y.clone();
        saxpy_cpu(1.5, &x, &mut want);
        assert_eq!(stream.clone_dtoh(&dy).unwrap(), want, "axpy::<f32>, n = {n}");

        let xd: Vec<f64> = x.iter().map(|v| *v as f64 * 1.1).collect();
        let yd: Vec<f64> = y.iter().map(|v| *v as f64).collect();
        let (dxd, mut dyd) = (stream.clone_htod(&xd).unwrap(), stream.clone_htod(&yd).unwrap());
        unsafe { k.axpy::<f64>(&stream, Grid::elements(n), n as u32, -0.25, &dxd, &mut dyd) }.unwrap();
        let want: Vec<f64> = xd.iter().zip(&yd).map(|(x, y)| (-0.25f64).mul_add(*x, *y)).collect();
        assert_eq!(stream.clone_dtoh(&dyd).unwrap(), want, "axpy::<f64>, n = {n}");

        let mut neg = stream.alloc_zeros::<f32>(n).unwrap();
        unsafe { k.negate_f32(&stream, Grid::elements(n), n as u32, &dx, &mut neg) }.unwrap();
        assert_eq!(stream.clone_dtoh(&neg).unwrap(), x.iter().map(|v| -v).collect::<Vec<_>>(), "negate_f32, n = {n}");
        let xi: Vec<i32> = (0..n as i32).map(|i| i * 7 - 1000).collect();
        let dxi = stream.clone_htod(&xi).unwrap();
        let mut negi = stream.alloc_zeros::<i32>(n).unwrap();
        unsafe { k.negate_i32(&stream, Grid::elements(n), n as u32, &dxi, &mut negi) }.unwrap();
        assert_eq!(stream.clone_dtoh(&negi).unwrap(), xi.iter().map(|v| -v).collect::<Vec<_>>(), "negate_i32, n = {n}");
    }
}
