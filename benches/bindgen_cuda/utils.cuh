// Shared helpers of the ten kernel files of benches/bindgen_cuda.py, included by all of them.
// Kernels are stamped out by macros (UNARY_OP, BINARY_OP, CAST_OP, ...) for several types.
#pragma once
#include <cuda_fp16.h>
#include <stdint.h>

// The benchmark's header edit flips this: every kernel's loads change (ld.global.nc <-> ld.global).
#define USE_LDG 1
#if USE_LDG
#define LOAD(p) __ldg(p)
#else
#define LOAD(p) (*(p))
#endif

#define BLOCK 256

#define GRID_STRIDE(i, n)                                                                  \
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < (size_t)(n);        \
       i += (size_t)blockDim.x * gridDim.x)

// Arithmetic type A of a storage type T and the conversions both ways.
template <typename T> struct Num;
template <> struct Num<float> {
  typedef float A;
  static __device__ __forceinline__ float a(float x) { return x; }
  static __device__ __forceinline__ float t(float x) { return x; }
};
template <> struct Num<double> {
  typedef double A;
  static __device__ __forceinline__ double a(double x) { return x; }
  static __device__ __forceinline__ double t(double x) { return x; }
};
template <> struct Num<__half> {
  typedef float A;
  static __device__ __forceinline__ float a(__half x) { return __half2float(x); }
  static __device__ __forceinline__ __half t(float x) { return __float2half(x); }
};
template <> struct Num<int> {
  typedef int A;
  static __device__ __forceinline__ int a(int x) { return x; }
  static __device__ __forceinline__ int t(int x) { return x; }
};
template <> struct Num<uint8_t> {
  typedef int A;
  static __device__ __forceinline__ int a(uint8_t x) { return x; }
  static __device__ __forceinline__ uint8_t t(int x) { return (uint8_t)x; }
};

#define MATH1(name, ff, fd)                                                                \
  __device__ __forceinline__ float name(float x) { return ff(x); }                        \
  __device__ __forceinline__ double name(double x) { return fd(x); }
#define MATH2(name, ff, fd)                                                                \
  __device__ __forceinline__ float name(float x, float y) { return ff(x, y); }            \
  __device__ __forceinline__ double name(double x, double y) { return fd(x, y); }
MATH1(m_exp, expf, exp)
MATH1(m_log, logf, log)
MATH1(m_sin, sinf, sin)
MATH1(m_cos, cosf, cos)
MATH1(m_tanh, tanhf, tanh)
MATH1(m_sqrt, sqrtf, sqrt)
MATH1(m_abs, fabsf, fabs)
MATH1(m_erf, erff, erf)
MATH1(m_floor, floorf, floor)
MATH1(m_ceil, ceilf, ceil)
MATH1(m_round, roundf, round)
MATH1(m_log1p, log1pf, log1p)
MATH2(m_pow, powf, pow)
MATH2(m_atan2, atan2f, atan2)
MATH2(m_hypot, hypotf, hypot)
MATH2(m_fmod, fmodf, fmod)

// A constant in the arithmetic type of `x`.
#define C(v) ((decltype(x))(v))

// Row-major contiguity of a (dims, strides) layout, and the offset of element i in it.
__device__ __forceinline__ bool contiguous(size_t nd, const size_t *dims, const size_t *strides) {
  size_t want = 1;
  for (size_t d = nd; d-- > 0;) {
    if (dims[d] > 1 && strides[d] != want) return false;
    want *= dims[d];
  }
  return true;
}
__device__ __forceinline__ size_t strided(size_t i, size_t nd, const size_t *dims, const size_t *strides) {
  size_t off = 0;
  for (size_t d = nd; d-- > 0;) {
    off += (i % dims[d]) * strides[d];
    i /= dims[d];
  }
  return off;
}

struct OpAdd { template <typename A> __device__ __forceinline__ A operator()(A a, A b) const { return a + b; } };
struct OpMul { template <typename A> __device__ __forceinline__ A operator()(A a, A b) const { return a * b; } };
struct OpMin { template <typename A> __device__ __forceinline__ A operator()(A a, A b) const { return b < a ? b : a; } };
struct OpMax { template <typename A> __device__ __forceinline__ A operator()(A a, A b) const { return b > a ? b : a; } };

// Tree reduction of one value a thread over the block (blockDim.x a power of two <= BLOCK);
// every thread gets the result.
template <typename A, typename Op> __device__ __forceinline__ A block_reduce(A v, Op op) {
  __shared__ A sh[BLOCK];
  sh[threadIdx.x] = v;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) sh[threadIdx.x] = op(sh[threadIdx.x], sh[threadIdx.x + s]);
    __syncthreads();
  }
  A r = sh[0];
  __syncthreads();
  return r;
}

// Stamps a macro out for the floating types (f32, f64, f16), or for those and i32.
#define FOR_FLOATS(M, ...) M(float, f32, __VA_ARGS__) M(double, f64, __VA_ARGS__) M(__half, f16, __VA_ARGS__)
#define FOR_NUMS(M, ...) FOR_FLOATS(M, __VA_ARGS__) M(int, i32, __VA_ARGS__)
