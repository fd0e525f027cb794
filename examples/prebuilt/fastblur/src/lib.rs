//! Box blur (CUDA C++, `cuda/box_blur.cu`) and brightness (Rust, `kernels/`) of grey images on
//! the GPU, from kernels shipped prebuilt in the package.

pub mod kernels {
    ptx_runtime::include_kernels!();
}

pub use kernels::Kernels;

/// The blur's radius, as `cuda/stencil.cuh` defines it.
pub const RADIUS: usize = 2;

/// One thread an element, 256 a block.
pub fn config(n: usize) -> ptx_runtime::cudarc::driver::LaunchConfig {
    ptx_runtime::cudarc::driver::LaunchConfig {
        grid_dim: (n.div_ceil(256).max(1) as u32, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// `box_blur` on the CPU: the mean of the `2 * RADIUS + 1` pixels around each one of its row,
/// clamped at the edges.
pub fn box_blur_cpu(width: usize, pixels: &[f32]) -> Vec<f32> {
    let r = RADIUS as isize;
    let mut out = vec![0.0; pixels.len()];
    for (i, o) in out.iter_mut().enumerate() {
        let (row, x) = (i / width * width, (i % width) as isize);
        let mut sum = 0.0f32;
        for dx in -r..=r {
            let xx = (x + dx).clamp(0, width as isize - 1) as usize;
            sum += pixels[row + xx];
        }
        *o = sum / (2 * r + 1) as f32;
    }
    out
}

/// `brighten` on the CPU: `min(p * gain, 1)`.
pub fn brighten_cpu(gain: f32, pixels: &[f32]) -> Vec<f32> {
    pixels.iter().map(|p| (p * gain).min(1.0)).collect()
}
