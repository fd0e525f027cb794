// Kernels written the way candle and llm.c write them: stamped out by a macro, a template with
// explicit instantiations, one over bytes of any type (`void *`), and a template over a value.
// ptx-build types the first three (from the preprocessed source and the demangled names) and
// embeds the last, launched by name.
#include <cuda_fp16.h>
#include <stdint.h>

#define UNARY_OP(TYPENAME, FN_NAME, FUNC)                                                        \
    extern "C" __global__ void FN_NAME(const size_t numel, const TYPENAME *inp, TYPENAME *out) { \
        for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < numel;                       \
             i += blockDim.x * gridDim.x) {                                                     \
            TYPENAME x = inp[i];                                                                \
            out[i] = FUNC;                                                                      \
        }                                                                                       \
    }

UNARY_OP(float, uneg_f32, -x)
UNARY_OP(double, usqr_f64, x * x)

// y = a * x + b, for the types instantiated below.
template <typename T>
__global__ void axpb(T *y, const T *x, T a, T b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = a * x[i] + b;
    }
}

template __global__ void axpb<float>(float *, const float *, float, float, int);
template __global__ void axpb<double>(double *, const double *, double, double, int);
template __global__ void axpb<__half>(__half *, const __half *, __half, __half, int);

// Bytes in, bytes out: `void *` takes any buffer (or a raw device address) on the host.
extern "C" __global__ void copy_bytes(const void *src, void *dst, size_t n) {
    size_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        ((uint8_t *)dst)[i] = ((const uint8_t *)src)[i];
    }
}

// A template over a value has no typed form: embedded, and launched by its PTX name.
template <int N>
__global__ void add_n(float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        x[i] += N;
    }
}

template __global__ void add_n<3>(float *, int);
