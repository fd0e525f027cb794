// Element-wise binary kernels with independently strided (broadcast) operands.
#include "utils.cuh"

#define BINARY_OP(T, SUF, NAME, EXPR)                                                      \
  extern "C" __global__ void NAME##_##SUF(const size_t numel, const size_t num_dims,      \
                                          const size_t *info, const T *lhs, const T *rhs, \
                                          T *out) {                                        \
    const size_t *dims = info;                                                             \
    const size_t *ls = info + num_dims;                                                    \
    const size_t *rs = info + 2 * num_dims;                                                \
    const bool lc = info == nullptr || contiguous(num_dims, dims, ls);                     \
    const bool rc = info == nullptr || contiguous(num_dims, dims, rs);                     \
    GRID_STRIDE(i, numel) {                                                                \
      typename Num<T>::A x = Num<T>::a(LOAD(lhs + (lc ? i : strided(i, num_dims, dims, ls)))); \
      typename Num<T>::A y = Num<T>::a(LOAD(rhs + (rc ? i : strided(i, num_dims, dims, rs)))); \
      out[i] = Num<T>::t(EXPR);                                                            \
    }                                                                                      \
  }

FOR_NUMS(BINARY_OP, badd, x + y)
FOR_NUMS(BINARY_OP, bsub, x - y)
FOR_NUMS(BINARY_OP, bmul, x * y)
FOR_NUMS(BINARY_OP, bminimum, y < x ? y : x)
FOR_NUMS(BINARY_OP, bmaximum, y > x ? y : x)
FOR_FLOATS(BINARY_OP, bdiv, x / y)
BINARY_OP(int, i32, bdiv, y == 0 ? 0 : x / y)
FOR_FLOATS(BINARY_OP, bpow, m_pow(x, y))
FOR_FLOATS(BINARY_OP, batan2, m_atan2(x, y))
FOR_FLOATS(BINARY_OP, bhypot, m_hypot(x, y))
FOR_FLOATS(BINARY_OP, bfmod, m_fmod(x, y))
FOR_FLOATS(BINARY_OP, bsquared_diff, (x - y) * (x - y))
BINARY_OP(int, i32, band, x & y)
BINARY_OP(int, i32, bor, x | y)
BINARY_OP(int, i32, bxor, x ^ y)
BINARY_OP(int, i32, bshl, x << (y & 31))
BINARY_OP(uint8_t, u8, badd, x + y)
BINARY_OP(uint8_t, u8, bminimum, y < x ? y : x)
BINARY_OP(uint8_t, u8, bmaximum, y > x ? y : x)
