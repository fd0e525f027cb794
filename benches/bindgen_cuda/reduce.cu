// Row reductions, one block a row, through a __shared__ tree (block_reduce in utils.cuh);
// softmax and norms the same way.
#include "utils.cuh"
#include <float.h>
#include <limits.h>

#define REDUCE_OP(T, SUF, NAME, OP, INIT)                                                  \
  extern "C" __global__ void NAME##_##SUF(const size_t cols, const T *inp, T *out) {      \
    const T *row = inp + blockIdx.x * cols;                                                \
    typename Num<T>::A x = INIT;                                                           \
    for (size_t c = threadIdx.x; c < cols; c += blockDim.x) x = OP()(x, Num<T>::a(LOAD(row + c))); \
    x = block_reduce(x, OP());                                                             \
    if (threadIdx.x == 0) out[blockIdx.x] = Num<T>::t(x);                                  \
  }
#define REDUCE_ALL(T, SUF, LO, HI)                                                         \
  REDUCE_OP(T, SUF, rsum, OpAdd, 0) REDUCE_OP(T, SUF, rprod, OpMul, 1)                     \
  REDUCE_OP(T, SUF, rmin, OpMin, HI) REDUCE_OP(T, SUF, rmax, OpMax, LO)

REDUCE_ALL(float, f32, -FLT_MAX, FLT_MAX)
REDUCE_ALL(double, f64, -DBL_MAX, DBL_MAX)
REDUCE_ALL(__half, f16, -65504.0f, 65504.0f)
REDUCE_ALL(int, i32, INT_MIN, INT_MAX)

#define ARG_OP(T, SUF, NAME, BETTER)                                                       \
  extern "C" __global__ void NAME##_##SUF(const size_t cols, const T *inp, uint32_t *out) { \
    __shared__ typename Num<T>::A val[BLOCK];                                              \
    __shared__ uint32_t idx[BLOCK];                                                        \
    const T *row = inp + blockIdx.x * cols;                                                \
    typename Num<T>::A best = Num<T>::a(row[0]);                                           \
    uint32_t at = 0;                                                                       \
    for (size_t c = threadIdx.x; c < cols; c += blockDim.x) {                              \
      typename Num<T>::A x = Num<T>::a(LOAD(row + c));                                     \
      if (x BETTER best) { best = x; at = (uint32_t)c; }                                   \
    }                                                                                      \
    val[threadIdx.x] = best;                                                               \
    idx[threadIdx.x] = at;                                                                 \
    __syncthreads();                                                                       \
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {                                    \
      if (threadIdx.x < s && val[threadIdx.x + s] BETTER val[threadIdx.x]) {               \
        val[threadIdx.x] = val[threadIdx.x + s];                                           \
        idx[threadIdx.x] = idx[threadIdx.x + s];                                           \
      }                                                                                    \
      __syncthreads();                                                                     \
    }                                                                                      \
    if (threadIdx.x == 0) out[blockIdx.x] = idx[0];                                        \
  }
FOR_NUMS(ARG_OP, argmin, <)
FOR_NUMS(ARG_OP, argmax, >)

#define SOFTMAX_OP(T, SUF, NAME, LOG)                                                      \
  extern "C" __global__ void NAME##_##SUF(const size_t cols, const T *inp, T *out) {      \
    typedef typename Num<T>::A A;                                                          \
    const T *row = inp + blockIdx.x * cols;                                                \
    A x = Num<T>::a(row[0]);                                                               \
    for (size_t c = threadIdx.x; c < cols; c += blockDim.x) x = OpMax()(x, Num<T>::a(LOAD(row + c))); \
    const A m = block_reduce(x, OpMax());                                                  \
    A s = 0;                                                                               \
    for (size_t c = threadIdx.x; c < cols; c += blockDim.x) s += m_exp(Num<T>::a(LOAD(row + c)) - m); \
    s = block_reduce(s, OpAdd());                                                          \
    for (size_t c = threadIdx.x; c < cols; c += blockDim.x) {                              \
      A v = Num<T>::a(LOAD(row + c)) - m;                                                  \
      out[blockIdx.x * cols + c] = Num<T>::t(LOG ? v - m_log(s) : m_exp(v) / s);           \
    }                                                                                      \
  }
FOR_FLOATS(SOFTMAX_OP, softmax, false)
FOR_FLOATS(SOFTMAX_OP, log_softmax, true)

#define NORM_OP(T, SUF, NAME, CENTER)                                                      \
  extern "C" __global__ void NAME##_##SUF(const size_t cols, const T *inp, const T *gamma, \
                                          const T *beta, T *out, float eps) {             \
    typedef typename Num<T>::A A;                                                          \
    const T *row = inp + blockIdx.x * cols;                                                \
    A s = 0, s2 = 0;                                                                       \
    for (size_t c = threadIdx.x; c < cols; c += blockDim.x) {                              \
      A x = Num<T>::a(LOAD(row + c));                                                      \
      s += x;                                                                              \
      s2 += x * x;                                                                         \
    }                                                                                      \
    s = block_reduce(s, OpAdd());                                                          \
    s2 = block_reduce(s2, OpAdd());                                                        \
    const A mean = CENTER ? s / (A)cols : (A)0;                                            \
    const A var = s2 / (A)cols - mean * mean;                                              \
    const A inv = (A)1 / m_sqrt(var + (A)eps);                                             \
    for (size_t c = threadIdx.x; c < cols; c += blockDim.x) {                              \
      A y = (Num<T>::a(LOAD(row + c)) - mean) * inv * Num<T>::a(LOAD(gamma + c));          \
      if (CENTER) y += Num<T>::a(LOAD(beta + c));                                          \
      out[blockIdx.x * cols + c] = Num<T>::t(y);                                           \
    }                                                                                      \
  }
FOR_FLOATS(NORM_OP, layernorm, true)
FOR_FLOATS(NORM_OP, rmsnorm, false)
