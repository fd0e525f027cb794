use cuda_kernels::{config, kernels};

fn main() {
    let ctx = ptx_runtime::context(0).unwrap();
    let k = kernels::Kernels::load(&ctx).unwrap();
    let s = ctx.default_stream();
    let xs = s.alloc_zeros::<f32>(4).unwrap();
    let ys = s.alloc_zeros::<u64>(1).unwrap();
    // `const float *const *xs` is a buffer of device addresses (`u64`), not of the floats.
    unsafe { k.axpy_batched::<f32>(&s, config(4), &xs, &ys, 2.0, 4) }.unwrap();
}
