//! The host side of examples/saxpy: the generated module with the embedded kernels, and the
//! CPU references the GPU results are checked against.

pub mod kernels {
    ptx_runtime::include_kernels!();
}

/// `y = a * x + y` on the CPU, with one fused multiply-add as the kernel computes it (`fmad`,
/// on by default as in nvcc).
pub fn saxpy_cpu(a: f32, x: &[f32], y: &mut [f32]) {
    for (y, x) in y.iter_mut().zip(x) {
        *y = a.mul_add(*x, *y);
    }
}

/// The largest difference between `exp(x)` on the CPU and `y`, in units of the result's
/// magnitude (libdevice's `__nv_expf` is within 2 ulp).
pub fn max_exp_error(x: &[f32], y: &[f32]) -> f32 {
    x.iter().zip(y).map(|(x, y)| ((x.exp() - y) / x.exp().max(f32::MIN_POSITIVE)).abs()).fold(0.0, f32::max)
}
