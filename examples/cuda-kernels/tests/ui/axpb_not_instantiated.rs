use cuda_kernels::{config, kernels};

fn main() {
    let ctx = ptx_runtime::context(0).unwrap();
    let k = kernels::Kernels::load(&ctx).unwrap();
    let s = ctx.default_stream();
    let x = s.alloc_zeros::<i32>(4).unwrap();
    let mut y = s.alloc_zeros::<i32>(4).unwrap();
    // cuda/stamped.cu instantiates axpb for float, double and __half, not int.
    unsafe { k.axpb::<i32>(&s, config(4), &mut y, &x, 2, 1, 4) }.unwrap();
}
