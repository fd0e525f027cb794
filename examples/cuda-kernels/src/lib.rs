//! The host side of examples/cuda-kernels: the generated module with the embedded CUDA C++
//! kernels, and the CPU references the GPU results are checked against.

pub mod kernels {
    ptx_runtime::include_kernels!();
}

/// Threads a block of `block_sum` (REDUCE_BLOCK in cuda/common.cuh).
pub const REDUCE_BLOCK: usize = 256;

/// One launch configuration for `n` elements, `REDUCE_BLOCK` threads a block.
pub fn config(n: usize) -> ptx_runtime::cudarc::driver::LaunchConfig {
    ptx_runtime::cudarc::driver::LaunchConfig {
        grid_dim: (n.div_ceil(REDUCE_BLOCK).max(1) as u32, 1, 1),
        block_dim: (REDUCE_BLOCK as u32, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// `y = a * x + y` on the CPU, with the fused multiply-add nvcc emits.
pub fn saxpy_cpu(a: f32, x: &[f32], y: &mut [f32]) {
    for (y, x) in y.iter_mut().zip(x) {
        *y = a.mul_add(*x, *y);
    }
}

/// The per-block sums `block_sum` computes, in the same tree order (so bit-exact).
pub fn block_sums_cpu(x: &[f32]) -> Vec<f32> {
    x.chunks(REDUCE_BLOCK)
        .map(|chunk| {
            let mut s = [0.0f32; REDUCE_BLOCK];
            s[..chunk.len()].copy_from_slice(chunk);
            let mut stride = REDUCE_BLOCK / 2;
            while stride > 0 {
                for t in 0..stride {
                    s[t] += s[t + stride];
                }
                stride /= 2;
            }
            s[0]
        })
        .collect()
}

/// 128-bit sums of (lo, hi) pairs.
pub fn add_u128_cpu(a: &[u64], b: &[u64]) -> Vec<u64> {
    a.chunks(2)
        .zip(b.chunks(2))
        .flat_map(|(a, b)| {
            let s = (u128::from(a[1]) << 64 | u128::from(a[0])).wrapping_add(u128::from(b[1]) << 64 | u128::from(b[0]));
            [s as u64, (s >> 64) as u64]
        })
        .collect()
}
