//! The kernels of `kernels/` (Rust and their CUDA C++ twins) in one generated module, with what
//! the tests and the benchmark share: launch shapes, tensor maps, random inputs and a CPU
//! reference.
//!
//! Every GEMM computes `C = A * B^T`: `A` is `M x K` row-major, `B` is `N x K` row-major, `C` is
//! `M x N` row-major, all f16, accumulated in f32 (cuBLAS's "TN" HGEMM).

pub mod kernels {
    ptx_runtime::include_kernels!();
}

use std::sync::Arc;

use ptx_runtime::cudarc::driver::{CudaSlice, CudaStream, DevicePtr, LaunchConfig};
use ptx_runtime::half::f16;
use ptx_runtime::{Swizzle, TensorMap, TensorMapError, TmaType};

/// The `mma.sync` kernels' tile (`kernels/src/hgemm.rs`).
pub mod mma_tile {
    pub const BM: usize = 128;
    pub const BN: usize = 256;
    pub const BK: usize = 32;
    pub const THREADS: u32 = 256;
    /// 4 stages of 128 + 256 rows of 40 halves.
    pub const SMEM_BYTES: u32 = 4 * (128 + 256) * 40 * 2;
}

/// The `wgmma` kernels' tile (`kernels/src/wgmma_gemm.rs`).
pub mod wgmma_tile {
    pub const BM: usize = 128;
    pub const BN: usize = 256;
    pub const BK: usize = 64;
    pub const THREADS: u32 = 384;
    /// 4 stages of 128 + 256 rows of 64 halves, 1024 for alignment, 8 barriers.
    pub const SMEM_BYTES: u32 = 4 * (128 + 256) * 64 * 2 + 1024 + 64;
}

/// A GEMM's sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Shape {
    pub m: usize,
    pub n: usize,
    pub k: usize,
}

impl Shape {
    /// Floating-point operations: `2 M N K`.
    pub fn flops(&self) -> f64 {
        2.0 * self.m as f64 * self.n as f64 * self.k as f64
    }

    fn fits(&self, bm: usize, bn: usize, bk: usize, what: &str) -> Result<(), String> {
        if !self.m.is_multiple_of(bm)
            || !self.n.is_multiple_of(bn)
            || !self.k.is_multiple_of(bk)
            || self.m == 0
            || self.n == 0
            || self.k == 0
        {
            return Err(format!(
                "the {what} kernels take M a multiple of {bm}, N of {bn} and K of {bk}; got {} x {} x {}",
                self.m, self.n, self.k
            ));
        }
        Ok(())
    }

    /// The launch of `rs_mma_hgemm` / `cu_mma_hgemm`.
    pub fn mma_config(&self) -> Result<LaunchConfig, String> {
        self.fits(mma_tile::BM, mma_tile::BN, mma_tile::BK, "mma.sync")?;
        Ok(LaunchConfig {
            grid_dim: ((self.n / mma_tile::BN) as u32, (self.m / mma_tile::BM) as u32, 1),
            block_dim: (mma_tile::THREADS, 1, 1),
            shared_mem_bytes: mma_tile::SMEM_BYTES,
        })
    }

    /// The launch of `rs_wgmma_hgemm` / `cu_wgmma_hgemm`.
    pub fn wgmma_config(&self) -> Result<LaunchConfig, String> {
        self.fits(wgmma_tile::BM, wgmma_tile::BN, wgmma_tile::BK, "wgmma")?;
        Ok(LaunchConfig {
            grid_dim: ((self.n / wgmma_tile::BN) as u32, (self.m / wgmma_tile::BM) as u32, 1),
            block_dim: (wgmma_tile::THREADS, 1, 1),
            shared_mem_bytes: wgmma_tile::SMEM_BYTES,
        })
    }
}

/// The TMA maps of `a` (`M x K`, boxes of 64 x 128) and `b` (`N x K`, boxes of 64 x 256), with
/// the 128-byte swizzle the wgmma kernels' descriptors name, uploaded for the kernels.
pub fn wgmma_maps(
    stream: &Arc<CudaStream>,
    shape: Shape,
    a: &CudaSlice<f16>,
    b: &CudaSlice<f16>,
) -> Result<(CudaSlice<TensorMap>, CudaSlice<TensorMap>), Box<dyn std::error::Error>> {
    let map = |s: &CudaSlice<f16>, rows: usize, box_rows: u32| -> Result<TensorMap, TensorMapError> {
        let (ptr, _sync) = s.device_ptr(stream);
        TensorMap::tiled_2d(TmaType::F16, ptr, rows as u64, shape.k as u64, shape.k as u64, box_rows, 64, Swizzle::B128)
    };
    let ma = map(a, shape.m, wgmma_tile::BM as u32)?;
    let mb = map(b, shape.n, wgmma_tile::BN as u32)?;
    Ok((stream.clone_htod(&[ma])?, stream.clone_htod(&[mb])?))
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

/// A seed that differs from run to run (the tests print it): fresh inputs every time.
pub fn fresh_seed() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1)
}

/// `n` f16 values uniform in [-1, 1).
pub fn random_f16(n: usize, seed: u64) -> Vec<f16> {
    Words(seed).take(n).map(|r| f16::from_f32((r >> 40) as f32 / (1u64 << 23) as f32 - 1.0)).collect()
}

/// `C[i][j]` in f64 from the f16 inputs: the exact product sum, rounded once.
pub fn reference(a: &[f16], b: &[f16], shape: Shape, i: usize, j: usize) -> f64 {
    let (ra, rb) = (&a[i * shape.k..(i + 1) * shape.k], &b[j * shape.k..(j + 1) * shape.k]);
    ra.iter().zip(rb).map(|(x, y)| x.to_f64() * y.to_f64()).sum()
}

/// How far a GPU result is from the f64 reference on `samples` pseudo-random elements:
/// `(‖out - ref‖ / ‖ref‖, the worst element's |out - ref|, and whether every sampled output is
/// finite)`.
pub fn sampled_error(a: &[f16], b: &[f16], c: &[f16], shape: Shape, samples: usize, seed: u64) -> (f64, f64, bool) {
    let (mut diff, mut norm, mut worst, mut finite) = (0.0f64, 0.0f64, 0.0f64, true);
    for r in Words(seed).take(samples) {
        let (i, j) = ((r as usize) % shape.m, ((r >> 32) as usize) % shape.n);
        let want = reference(a, b, shape, i, j);
        let got = c[i * shape.n + j].to_f64();
        finite &= got.is_finite();
        diff += (got - want).powi(2);
        norm += want * want;
        worst = worst.max((got - want).abs());
    }
    ((diff / norm.max(f64::MIN_POSITIVE)).sqrt(), worst, finite)
}

/// `‖x - y‖ / ‖y‖` over two whole outputs, and how many elements differ in their bits.
pub fn compare(x: &[f16], y: &[f16]) -> (f64, usize) {
    let (mut d, mut n, mut bits) = (0.0f64, 0.0f64, 0usize);
    for (p, q) in x.iter().zip(y) {
        let (p, q) = (p.to_f64(), q.to_f64());
        d += if p.is_finite() { (p - q).powi(2) } else { f64::INFINITY };
        n += q * q;
        bits += (p.to_bits() != q.to_bits()) as usize;
    }
    ((d / n.max(f64::MIN_POSITIVE)).sqrt(), bits)
}

/// Every element NaN: the poison a kernel must overwrite.
pub fn poison(n: usize) -> Vec<f16> {
    vec![f16::NAN; n]
}
