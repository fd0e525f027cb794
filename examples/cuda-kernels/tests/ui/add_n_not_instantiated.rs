use cuda_kernels::{config, kernels};

fn main() {
    let ctx = ptx_runtime::context(0).unwrap();
    let k = kernels::Kernels::load(&ctx).unwrap();
    let s = ctx.default_stream();
    let mut y = s.alloc_zeros::<f32>(4).unwrap();
    // cuda/stamped.cu instantiates add_n for 3 and -2, not 4.
    unsafe { k.add_n::<4>(&s, config(4), &mut y, 4) }.unwrap();
}
