// fill, arange, copy2d and strided copies for every storage type.
#include "utils.cuh"

#define FILL_OP(T, SUF, _)                                                                 \
  extern "C" __global__ void fill_##SUF(T *out, const T value, const size_t numel) {      \
    GRID_STRIDE(i, numel) { out[i] = value; }                                              \
  }
#define ARANGE_OP(T, SUF, _)                                                               \
  extern "C" __global__ void arange_##SUF(T *out, const T start, const T step,            \
                                          const size_t numel) {                            \
    GRID_STRIDE(i, numel) { out[i] = Num<T>::t(Num<T>::a(start) + Num<T>::a(step) * (typename Num<T>::A)i); } \
  }
#define COPY2D_OP(T, SUF, _)                                                               \
  extern "C" __global__ void copy2d_##SUF(const T *src, T *dst, const uint32_t d1,        \
                                          const uint32_t d2, const uint32_t src_s,         \
                                          const uint32_t dst_s) {                          \
    GRID_STRIDE(i, (size_t)d1 * d2) {                                                      \
      const uint32_t r = (uint32_t)(i / d2), c = (uint32_t)(i % d2);                       \
      dst[(size_t)r * dst_s + c] = LOAD(src + (size_t)r * src_s + c);                      \
    }                                                                                      \
  }
#define STRIDED_COPY_OP(T, SUF, _)                                                         \
  extern "C" __global__ void copy_strided_##SUF(const size_t numel, const size_t num_dims, \
                                                const size_t *info, const T *inp, T *out) { \
    const size_t *dims = info;                                                             \
    const size_t *strides = info + num_dims;                                               \
    GRID_STRIDE(i, numel) { out[i] = LOAD(inp + strided(i, num_dims, dims, strides)); }    \
  }
#define ALL_TYPES(M) FOR_NUMS(M, _) M(uint8_t, u8, _)

ALL_TYPES(FILL_OP)
ALL_TYPES(ARANGE_OP)
ALL_TYPES(COPY2D_OP)
ALL_TYPES(STRIDED_COPY_OP)
