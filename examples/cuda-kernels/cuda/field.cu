// Kernels over a header's typedef'd struct (sppark's `fr_t`): a C++ kernel and a template over
// a value, whose mangled names spell the type as `gl64_t`.
#include "field.cuh"

__global__ void fr_add(fr_t *out, const fr_t *a, const fr_t *b, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) out[i].v = gl_add(a[i].v, b[i].v);
}

// x * TIMES mod p, by repeated addition.
template <int TIMES>
__global__ void fr_times(fr_t *x, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) {
        uint64_t acc = 0;
        for (int k = 0; k < TIMES; k++) acc = gl_add(acc, x[i].v);
        x[i].v = acc;
    }
}
template __global__ void fr_times<3>(fr_t *, size_t);
template __global__ void fr_times<7>(fr_t *, size_t);
