// Quantized blocks the way candle's quantized.cu (from ggml) passes them: `const void *` for
// "a buffer of any element type", whatever the host allocated it as. ptx-build types these
// parameters as any device buffer, so each kernel gets a typed method.
#include <cuda_fp16.h>
#include <stdint.h>

#include "common.cuh"

// ggml's q8_0 block: an f16 scale and 32 signed bytes (34 bytes, aligned to 2).
#define QK8_0 32
typedef struct {
    half d;
    int8_t qs[QK8_0];
} block_q8_0;

// One macro, one kernel per output type, as candle stamps out its dequantize kernels.
#define DEQUANTIZE_Q8_0(NAME, DST_T, CONVERT)                                                      \
    extern "C" __global__ void NAME(const void *__restrict__ vx, DST_T *__restrict__ y, const int k) { \
        const int i = (int)global_index();                                                         \
        if (i >= k) return;                                                                        \
        const block_q8_0 *x = (const block_q8_0 *)vx;                                              \
        y[i] = CONVERT(__half2float(x[i / QK8_0].d) * x[i / QK8_0].qs[i % QK8_0]);                 \
    }

DEQUANTIZE_Q8_0(dequantize_q8_0_f32, float, )
DEQUANTIZE_Q8_0(dequantize_q8_0_f16, half, __float2half)

// The other way: `k` floats (a multiple of 32) into q8_0 blocks behind `void *`, one thread a block.
extern "C" __global__ void quantize_q8_0(const float *__restrict__ x, void *__restrict__ vy, const int k) {
    const int b = (int)global_index();
    if (b * QK8_0 >= k) return;
    const float *xb = x + b * QK8_0;
    float amax = 0.0f;
    for (int j = 0; j < QK8_0; ++j) amax = fmaxf(amax, fabsf(xb[j]));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    block_q8_0 *y = (block_q8_0 *)vy;
    y[b].d = __float2half(d);
    for (int j = 0; j < QK8_0; ++j) y[b].qs[j] = (int8_t)roundf(xb[j] * id);
}
