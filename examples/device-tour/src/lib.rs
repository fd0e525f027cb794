//! The kernels of `kernels/` (Rust with ptx-device, and the same in CUDA C++) in one generated
//! module, with the launch shapes and inputs the tests and the benchmark share.

pub mod kernels {
    ptx_runtime::include_kernels!();
}

use ptx_runtime::cudarc::driver::LaunchConfig;

/// Output words per element or thread, as the kernels write them (`kernels/src/*.rs`).
pub const INT_OPS: usize = 73;
pub const F32_OPS: usize = 78;
pub const F64_OPS: usize = 63;
pub const WARP_OUTS: usize = 18;
pub const BLOCK_OUTS: usize = 7;
pub const INDEX_OUTS: usize = 6;
pub const BENCH_BLOCK: u32 = 256;
/// Floats a row of the softmax kernels (one block of `BENCH_BLOCK` a row).
pub const SOFTMAX_COLS: usize = 2048;

/// A 1-D launch of `threads` threads, `block` a block.
pub fn linear(threads: usize, block: u32) -> LaunchConfig {
    LaunchConfig { grid_dim: ((threads as u32).div_ceil(block).max(1), 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: 0 }
}

/// A deterministic stream of pseudo-random words (SplitMix64).
pub struct Words(pub u64);

impl Iterator for Words {
    type Item = u64;
    fn next(&mut self) -> Option<u64> {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        Some(z ^ (z >> 31))
    }
}

/// `n` floats for the math comparison: every special value IEEE has, then random bit patterns
/// and values in the ranges math functions care about.
pub fn f32_inputs(n: usize, seed: u64) -> Vec<f32> {
    let special = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        2.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::MIN_POSITIVE,
        1e-40,
        -1e-40,
        f32::MAX,
        f32::MIN,
        88.7,
        -103.9,
        1e10,
        std::f32::consts::PI,
    ];
    let mut w = Words(seed);
    special
        .iter()
        .copied()
        .chain((0..).map(|i| {
            let r = w.next().unwrap();
            match i % 3 {
                0 => f32::from_bits(r as u32),
                1 => (r as u32 as f32 / u32::MAX as f32) * 20.0 - 10.0,
                _ => (r as u32 as f32 / u32::MAX as f32) * 2.0 - 1.0,
            }
        }))
        .take(n)
        .collect()
}

/// As [`f32_inputs`], for `f64`.
pub fn f64_inputs(n: usize, seed: u64) -> Vec<f64> {
    let special = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        2.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        f64::MIN_POSITIVE,
        1e-310,
        -1e-310,
        f64::MAX,
        f64::MIN,
        709.7,
        -745.1,
        1e300,
        std::f64::consts::PI,
    ];
    let mut w = Words(seed);
    special
        .iter()
        .copied()
        .chain((0..).map(|i| {
            let r = w.next().unwrap();
            match i % 3 {
                0 => f64::from_bits(r),
                1 => (r as f64 / u64::MAX as f64) * 20.0 - 10.0,
                _ => (r as f64 / u64::MAX as f64) * 2.0 - 1.0,
            }
        }))
        .take(n)
        .collect()
}
