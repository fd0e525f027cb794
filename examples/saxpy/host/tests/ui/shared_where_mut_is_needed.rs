use ptx_runtime::cudarc::driver::LaunchConfig;

fn main() {
    let ctx = ptx_runtime::context(0).unwrap();
    let k = saxpy::kernels::Kernels::load(&ctx).unwrap();
    let s = ctx.default_stream();
    let cfg = LaunchConfig::for_num_elems(4);
    let x = s.alloc_zeros::<f32>(4).unwrap();
    let y = s.alloc_zeros::<f32>(4).unwrap();
    // The kernel writes y: it needs `&mut`.
    unsafe { k.saxpy(&s, cfg, 4, 2.0, &x, &y) }.unwrap();
}
