//! A Rust kernel (`scale_add`) and a CUDA C++ kernel (`leaky_relu`) in one generated module.

pub mod kernels {
    ptx_runtime::include_kernels!();
}

/// One launch configuration for `n` elements, 256 threads a block.
pub fn config(n: usize) -> ptx_runtime::cudarc::driver::LaunchConfig {
    ptx_runtime::cudarc::driver::LaunchConfig {
        grid_dim: (n.div_ceil(256).max(1) as u32, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// `leaky_relu(a * x + b)` on the CPU, as the two kernels compute it one after the other.
pub fn cpu(a: f32, b: f32, x: &[f32]) -> Vec<f32> {
    x.iter()
        .map(|x| {
            let y = a.mul_add(*x, b); // one fused multiply-add, as `fmad` (on by default, as in nvcc) builds it
            if y > 0.0 {
                y
            } else {
                0.01 * y
            }
        })
        .collect()
}
