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

/// Values per q8_0 block (`QK8_0` in cuda/quantized.cu).
pub const QK8_0: usize = 32;

/// Bytes per q8_0 block: an f16 scale and 32 signed bytes.
pub const BLOCK_Q8_0_BYTES: usize = 34;

/// `x` (a multiple of 32 values) as q8_0 blocks, as `quantize_q8_0` writes them: the scale is the
/// largest magnitude over 127, each value divided by it and rounded half away from zero.
pub fn quantize_q8_0_cpu(x: &[f32]) -> Vec<u8> {
    x.chunks(QK8_0)
        .flat_map(|xb| {
            let amax = xb.iter().fold(0.0f32, |m, v| m.max(v.abs()));
            let d = amax / 127.0;
            let id = if d != 0.0 { 1.0 / d } else { 0.0 };
            let mut block = ptx_runtime::half::f16::from_f32(d).to_le_bytes().to_vec();
            block.extend(xb.iter().map(|v| (v * id).round() as i8 as u8));
            block
        })
        .collect()
}

/// The values of q8_0 `blocks`: scale times each signed byte (exact in f32).
pub fn dequantize_q8_0_cpu(blocks: &[u8]) -> Vec<f32> {
    blocks
        .chunks(BLOCK_Q8_0_BYTES)
        .flat_map(|b| {
            let d = ptx_runtime::half::f16::from_le_bytes([b[0], b[1]]).to_f32();
            b[2..].iter().map(move |q| d * f32::from(*q as i8))
        })
        .collect()
}

/// A Goldilocks element, the host twin of `gl64_t` in cuda/field.cuh: the kernels name it by its
/// typedef `fr_t`, their mangled names by what it stands for, and their methods take this.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct gl64_t(pub u64);
unsafe impl ptx_runtime::cudarc::driver::DeviceRepr for gl64_t {}

/// Goldilocks' prime, 2^64 - 2^32 + 1.
pub const GL_P: u64 = 0xffff_ffff_0000_0001;

/// `a + b` mod [`GL_P`], what `gl_add` in cuda/field.cuh computes.
pub fn gl_add_cpu(a: u64, b: u64) -> u64 {
    ((a as u128 + b as u128) % GL_P as u128) as u64
}
