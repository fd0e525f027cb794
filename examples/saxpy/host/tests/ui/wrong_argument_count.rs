use ptx_runtime::cudarc::driver::LaunchConfig;

fn main() {
    let ctx = ptx_runtime::context(0).unwrap();
    let k = saxpy::kernels::Kernels::load(&ctx).unwrap();
    let s = ctx.default_stream();
    let cfg = LaunchConfig::for_num_elems(4);
    let x = s.alloc_zeros::<f32>(4).unwrap();
    let mut y = s.alloc_zeros::<f32>(4).unwrap();
    // The scale factor is missing.
    unsafe { k.saxpy(&s, cfg, 4, &x, &mut y) }.unwrap();
}
