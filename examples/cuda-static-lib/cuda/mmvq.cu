// A quantized mat-vec in the style of candle's mmvq_gguf.cu: rows of Q8_0 blocks (a scale and
// 32 signed bytes) behind `const void *`, one warp per row, the sum reduced with shuffles.
#include "common.cuh"

#define QK8_0 32
typedef struct {
    float d;
    int8_t qs[QK8_0];
} block_q8_0;

template <int WARPS>
__global__ void mmvq_q8_0(const void *__restrict__ vx, const float *__restrict__ y, float *__restrict__ dst, int ncols, int nrows) {
    const int row = blockIdx.x * WARPS + threadIdx.y;
    if (row >= nrows) {
        return;
    }
    const int blocks_per_row = ncols / QK8_0;
    const block_q8_0 *x = (const block_q8_0 *)vx + (size_t)row * blocks_per_row;
    float sum = 0.0f;
    for (int b = 0; b < blocks_per_row; ++b) {
        sum += x[b].d * (float)x[b].qs[threadIdx.x] * y[b * QK8_0 + threadIdx.x];
    }
#pragma unroll
    for (int mask = 16; mask > 0; mask >>= 1) {
        sum += __shfl_xor_sync(0xffffffff, sum, mask, 32);
    }
    if (threadIdx.x == 0) {
        dst[row] = sum;
    }
}

// dst[r] = sum over c of dequant(vx)[r][c] * y[c]; ncols a multiple of 32.
extern "C" int mmvq_q8_0_f32(const void *vx, const float *y, float *dst, int ncols, int nrows, cudaStream_t stream) {
    if (ncols % QK8_0 != 0 || nrows <= 0) {
        return (int)cudaErrorInvalidValue;
    }
    constexpr int warps = 4;
    const dim3 block(32, warps, 1);
    mmvq_q8_0<warps><<<(nrows + warps - 1) / warps, block, 0, stream>>>(vx, y, dst, ncols, nrows);
    return launch_status();
}
