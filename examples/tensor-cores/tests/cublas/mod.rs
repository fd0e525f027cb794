//! cuBLAS's HGEMM as the tests' and the benchmark's yardstick (cudarc's `cublas` feature, a
//! dev-dependency: libcublas is opened at run time).

use std::sync::Arc;

use cudarc::cublas::sys::cublasOperation_t;
use cudarc::cublas::{CudaBlas, Gemm, GemmConfig};
use ptx_runtime::cudarc::driver::{CudaSlice, CudaStream};
use ptx_runtime::half::f16;
use tensor_cores::Shape;

/// A cuBLAS handle on `stream`, or why there is none (libcublas.so.13 not found: add its folder
/// to LD_LIBRARY_PATH).
pub fn blas(stream: &Arc<CudaStream>) -> Result<CudaBlas, String> {
    // SAFETY: only tries to open the library.
    if !unsafe { cudarc::cublas::sys::is_culib_present() } {
        return Err("libcublas could not be opened: add /usr/local/cuda/lib64 (or the folder of libcublas.so.13) to LD_LIBRARY_PATH".into());
    }
    CudaBlas::new(stream.clone()).map_err(|e| format!("cublasCreate: {e}"))
}

/// `C = A * B^T` (row-major, as the kernels compute it) through cublasGemmEx with f16 in and
/// out and f32 compute: column-major, that is `C^T (N x M) = B (N x K as K x N, transposed) *
/// A^T`, cuBLAS's "TN" case.
pub fn hgemm(blas: &CudaBlas, shape: Shape, a: &CudaSlice<f16>, b: &CudaSlice<f16>, c: &mut CudaSlice<f16>) -> Result<(), String> {
    let (m, n, k) = (shape.m as i32, shape.n as i32, shape.k as i32);
    let cfg = GemmConfig {
        transa: cublasOperation_t::CUBLAS_OP_T,
        transb: cublasOperation_t::CUBLAS_OP_N,
        m: n,
        n: m,
        k,
        alpha: f16::ONE,
        lda: k,
        ldb: k,
        beta: f16::ZERO,
        ldc: n,
    };
    // SAFETY: the buffers hold M x K, N x K and M x N elements.
    unsafe { blas.gemm(cfg, b, a, c) }.map_err(|e| format!("cublasGemmEx: {e:?}"))
}
