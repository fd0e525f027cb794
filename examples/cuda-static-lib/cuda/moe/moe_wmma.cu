// One 16x16x16 tile on the tensor cores (f16 in, f32 accumulate), as candle's MoE wmma files
// do per expert. Built for sm_80 and sm_90 only (`cuda_file_archs` in build.rs).
#include <mma.h>
#include "../common.cuh"

__global__ void moe_wmma_tile(const __half *a, const __half *b, float *c) {
#if __CUDA_ARCH__ >= 700
    using namespace nvcuda;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
    wmma::fill_fragment(fc, 0.0f);
    wmma::load_matrix_sync(fa, a, 16);
    wmma::load_matrix_sync(fb, b, 16);
    wmma::mma_sync(fc, fa, fb, fc);
    wmma::store_matrix_sync(c, fc, 16, wmma::mem_row_major);
#endif
}

// c = a (16x16, row-major) times b (16x16, column-major), one warp.
extern "C" int moe_wmma_16x16x16(const __half *a, const __half *b, float *c, cudaStream_t stream) {
    moe_wmma_tile<<<1, 32, 0, stream>>>(a, b, c);
    return launch_status();
}
