use ptx_runtime::cudarc::driver::LaunchConfig;

fn main() {
    let ctx = ptx_runtime::context(0).unwrap();
    let k = saxpy::kernels::Kernels::load(&ctx).unwrap();
    let s = ctx.default_stream();
    let cfg = LaunchConfig::for_num_elems(4);
    let x = s.alloc_zeros::<f64>(4).unwrap();
    let mut y = s.alloc_zeros::<f32>(4).unwrap();
    // x holds f64, the kernel reads f32.
    unsafe { k.saxpy(&s, cfg, 4, 2.0, &x, &mut y) }.unwrap();
}
