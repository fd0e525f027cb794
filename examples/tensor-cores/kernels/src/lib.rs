//! Tensor-core kernels: an `mma.sync` HGEMM for sm_80 and later ([`hgemm`]), a `wgmma` + TMA
//! HGEMM for sm_90a ([`wgmma_gemm`]), each with a CUDA C++ twin in `cuda/gemm.cu`, and small
//! kernels that check each helper's layout against the CPU ([`checks`]).
//!
//! Every GEMM computes `C = A * B^T` in f16 with f32 accumulation: `A` is `M x K` row-major, `B`
//! is `N x K` row-major (both K-major, cuBLAS's "TN"), `C` is `M x N` row-major f16.
#![no_std]

pub mod checks;
pub mod hgemm;
pub mod wgmma_gemm;
