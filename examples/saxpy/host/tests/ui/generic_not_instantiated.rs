use ptx_runtime::cudarc::driver::LaunchConfig;

fn main() {
    let ctx = ptx_runtime::context(0).unwrap();
    let k = saxpy::kernels::Kernels::load(&ctx).unwrap();
    let s = ctx.default_stream();
    let cfg = LaunchConfig::for_num_elems(4);
    let x = s.alloc_zeros::<i32>(4).unwrap();
    let mut y = s.alloc_zeros::<i32>(4).unwrap();
    // `axpy` is instantiated for f32 and f64 only.
    unsafe { k.axpy::<i32>(&s, cfg, 4, 2, &x, &mut y) }.unwrap();
}
