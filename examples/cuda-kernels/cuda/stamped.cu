// Kernels written the way candle, llm.c and ggml write them: stamped out by a macro, a template
// with explicit instantiations, one over bytes of any type (`void *`), templates over values
// (instantiated explicitly, or by a host launcher) and a template over a device function.
// ptx-build types each (from the preprocessed source and the demangled names).
#include <cuda_fp16.h>
#include <stdint.h>

#include <cstddef>
#include <type_traits>

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

// Templates over values: one method generic over const parameters (`k.add_n::<3>(..)`).
template <int N>
__global__ void add_n(float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        x[i] += N;
    }
}

template __global__ void add_n<3>(float *, int);
template __global__ void add_n<-2>(float *, int);

// ggml's shape: a `static` template over a type, an enum and a `bool`, instantiated only by the
// host launcher's branches (an enum argument is its integer value on the Rust side).
enum class Mode { Plain, Twice };

template <typename T, Mode mode, bool clamp>
static __global__ void add_scaled(T *y, const T *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = (float)y[i] + (mode == Mode::Twice ? 2.0f : 1.0f) * (float)x[i];
        y[i] = (T)(clamp ? fminf(v, 100.0f) : v);
    }
}

void add_scaled_cuda(float *y, const float *x, int n, bool twice, bool clamp, cudaStream_t stream) {
    const int blocks = (n + 255) / 256;
    if (!twice) {
        add_scaled<float, Mode::Plain, false><<<blocks, 256, 0, stream>>>(y, x, n);
    } else if (clamp) {
        add_scaled<float, Mode::Twice, true><<<blocks, 256, 0, stream>>>(y, x, n);
    } else {
        add_scaled<float, Mode::Twice, false><<<blocks, 256, 0, stream>>>(y, x, n);
    }
}

// ggml's unary ops: a template over a device function. Each function an instance passes is a
// marker type of this module on the Rust side (`k.map::<stamped::cube>(..)`).
__device__ float cube(float x) { return x * x * x; }
__device__ float twice(float x) { return 2.0f * x; }

template <float (*op)(float)>
__global__ void map(float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        x[i] = op(x[i]);
    }
}

template __global__ void map<cube>(float *, int);
template __global__ void map<twice>(float *, int);

// ggml's binbcast: a template over a device function and types whose last parameter is a
// parameter pack, instantiated by the host launcher for 0, 1 and 2 more sources to fuse. The
// pack's length is a const parameter on the Rust side and its elements one array
// (`k.bin_bcast::<stamped::op_add, f32, f32, f32, 2>(.., [&c, &d])`).
__device__ float op_add(const float a, const float b) { return a + b; }
__device__ float op_mul(const float a, const float b) { return a * b; }

template <float (*bin_op)(const float, const float), typename src0_t, typename src1_t, typename dst_t, typename... src1_ptrs>
static __global__ void bin_bcast(const src0_t *src0, const src1_t *src1, dst_t *dst, const int ne0, const int ne10,
                                 src1_ptrs... src1s) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= ne0) {
        return;
    }
    float result = (float)src0[i];
    if constexpr (sizeof...(src1_ptrs) > 0) {
        result = (..., (result = bin_op(result, (float)src1s[i % ne10])));
    } else {
        result = bin_op(result, (float)src1[i % ne10]);
    }
    dst[i] = (dst_t)result;
}

void bin_bcast_cuda(const float *x, const float *y, float *dst, int n, int ny, const float *fused0, const float *fused1,
                    __half *dst_h, cudaStream_t stream) {
    const int blocks = (n + 255) / 256;
    bin_bcast<op_add, float, float, float><<<blocks, 256, 0, stream>>>(x, y, dst, n, ny);
    bin_bcast<op_add, float, float, float><<<blocks, 256, 0, stream>>>(x, y, dst, n, ny, fused0);
    bin_bcast<op_add, float, float, float><<<blocks, 256, 0, stream>>>(x, y, dst, n, ny, fused0, fused1);
    bin_bcast<op_mul, float, float, __half><<<blocks, 256, 0, stream>>>(x, y, dst_h, n, ny);
}

// One name in two namespaces, as a library writes a forward and a backward pass: each gets a
// method after its namespace (`k.fwd_scale(..)`, `k.bwd_scale(..)`); `std::size_t` is `usize`.
namespace fwd {
__global__ void scale(float *x, float s, std::size_t n) {
    std::size_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        x[i] *= s;
    }
}
}  // namespace fwd
namespace bwd {
__global__ void scale(float *x, float s, std::size_t n) {
    std::size_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        x[i] /= s;
    }
}
}  // namespace bwd

// cuBLAS's batched style: arrays of device addresses, one vector each. On the Rust side a
// buffer of `u64` (`CudaSlice<u64>` of `device_ptr` addresses), the element type a generic
// parameter (`k.axpy_batched::<f32>(..)`).
template <typename T>
__global__ void axpy_batched(const T *const *xs, T *const *ys, T a, int n) {
    const T *x = xs[blockIdx.y];
    T *y = ys[blockIdx.y];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] += a * x[i];
    }
}

template __global__ void axpy_batched<float>(const float *const *, float *const *, float, int);
template __global__ void axpy_batched<double>(const double *const *, double *const *, double, int);

// llm.c's tag dispatch: the value is in an unnamed `std::bool_constant`'s type, which the
// method leaves out and the launch passes (`k.store_scaled::<f32, true>(..)`).
template <typename T, bool Accumulate>
__global__ void store_scaled(T *out, const T *in, float s, int n, std::bool_constant<Accumulate>) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        T v = (T)((float)in[i] * s);
        out[i] = Accumulate ? out[i] + v : v;
    }
}

template __global__ void store_scaled<float, true>(float *, const float *, float, int, std::bool_constant<true>);
template __global__ void store_scaled<float, false>(float *, const float *, float, int, std::bool_constant<false>);
