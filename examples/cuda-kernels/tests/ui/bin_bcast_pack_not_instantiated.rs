use cuda_kernels::{config, kernels};

fn main() {
    let ctx = ptx_runtime::context(0).unwrap();
    let k = kernels::Kernels::load(&ctx).unwrap();
    let s = ctx.default_stream();
    let (x, mut y) = (s.alloc_zeros::<f32>(4).unwrap(), s.alloc_zeros::<f32>(4).unwrap());
    // cuda/stamped.cu's launcher fuses at most two sources: no instance has three.
    unsafe { k.bin_bcast::<kernels::stamped::op_add, f32, f32, f32, _>(&s, config(4), &x, &x, &mut y, 4, 4, [&x, &x, &x]) }.unwrap();
}
