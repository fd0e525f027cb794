// Casts between every pair of storage types, strided input.
#include "utils.cuh"

#define CAST_OP(S, SS, D, DS)                                                              \
  extern "C" __global__ void cast_##SS##_##DS(const size_t numel, const size_t num_dims,  \
                                              const size_t *info, const S *inp, D *out) { \
    const size_t *dims = info;                                                             \
    const size_t *strides = info + num_dims;                                               \
    const bool cont = info == nullptr || contiguous(num_dims, dims, strides);              \
    GRID_STRIDE(i, numel) {                                                                \
      typename Num<S>::A x = Num<S>::a(LOAD(inp + (cont ? i : strided(i, num_dims, dims, strides)))); \
      out[i] = Num<D>::t((typename Num<D>::A)x);                                           \
    }                                                                                      \
  }
#define CAST_FROM(S, SS, _)                                                                \
  CAST_OP(S, SS, float, f32) CAST_OP(S, SS, double, f64) CAST_OP(S, SS, __half, f16)       \
  CAST_OP(S, SS, int, i32) CAST_OP(S, SS, uint8_t, u8)

FOR_NUMS(CAST_FROM, _)
CAST_FROM(uint8_t, u8, _)
