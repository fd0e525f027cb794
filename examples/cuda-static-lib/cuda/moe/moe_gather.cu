// MoE routing: every (token, slot) pair reads its expert's row entry and scales it by the
// router weight. One template kernel, instantiated for f32 and f16 inputs by the launchers.
#include "../common.cuh"

template <typename T>
__global__ void moe_gather_scale(const T *__restrict__ inp, const int32_t *__restrict__ ids, const float *__restrict__ weights,
                                 float *__restrict__ out, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
#if MOE_AMPERE
        // sm_80+: read-only loads through the texture path (the same result, another path).
        out[i] = to_float(__ldg(&inp[__ldg(&ids[i])])) * __ldg(&weights[i]);
#else
        out[i] = to_float(inp[ids[i]]) * weights[i];
#endif
    }
}

template <typename T>
static int launch_gather(const T *inp, const int32_t *ids, const float *weights, float *out, int n, cudaStream_t stream) {
    if (n <= 0) {
        return (int)cudaErrorInvalidValue;
    }
    const int grid = (n + MOE_BLOCK - 1) / MOE_BLOCK;
    moe_gather_scale<T><<<grid, MOE_BLOCK, 0, stream>>>(inp, ids, weights, out, n);
    return launch_status();
}

__global__ void moe_arch_kernel(int *out) {
#ifdef __CUDA_ARCH__
    *out = __CUDA_ARCH__;
#endif
}

extern "C" {

int moe_gather_scale_f32(const float *inp, const int32_t *ids, const float *weights, float *out, int n, cudaStream_t stream) {
    return launch_gather<float>(inp, ids, weights, out, n, stream);
}

int moe_gather_scale_f16(const __half *inp, const int32_t *ids, const float *weights, float *out, int n, cudaStream_t stream) {
    return launch_gather<__half>(inp, ids, weights, out, n, stream);
}

// The `__CUDA_ARCH__` of the device code that ran: which cubin (or PTX) of the fatbin the
// runtime picked.
int moe_arch(int *out, cudaStream_t stream) {
    moe_arch_kernel<<<1, 1, 0, stream>>>(out);
    return launch_status();
}

// The number of GPUs the runtime sees, or its error (no driver, no device) without a GPU.
int moe_device_count(int *count) {
    return (int)cudaGetDeviceCount(count);
}

const char *moe_error_name(int code) {
    return cudaGetErrorName((cudaError_t)code);
}
}
