// Element-wise unary kernels over a possibly strided input, as candle-style code writes them.
#include "utils.cuh"

#define UNARY_OP(T, SUF, NAME, EXPR)                                                       \
  extern "C" __global__ void NAME##_##SUF(const size_t numel, const size_t num_dims,      \
                                          const size_t *info, const T *inp, T *out) {     \
    const size_t *dims = info;                                                             \
    const size_t *strides = info + num_dims;                                               \
    const bool cont = info == nullptr || contiguous(num_dims, dims, strides);              \
    GRID_STRIDE(i, numel) {                                                                \
      typename Num<T>::A x = Num<T>::a(LOAD(inp + (cont ? i : strided(i, num_dims, dims, strides)))); \
      out[i] = Num<T>::t(EXPR);                                                            \
    }                                                                                      \
  }

FOR_FLOATS(UNARY_OP, uexp, m_exp(x))
FOR_FLOATS(UNARY_OP, ulog, m_log(x))
FOR_FLOATS(UNARY_OP, usin, m_sin(x))
FOR_FLOATS(UNARY_OP, ucos, m_cos(x))
FOR_FLOATS(UNARY_OP, utanh, m_tanh(x))
FOR_FLOATS(UNARY_OP, usqrt, m_sqrt(x))
FOR_FLOATS(UNARY_OP, urecip, C(1) / x)
FOR_FLOATS(UNARY_OP, urelu, x > C(0) ? x : C(0))
FOR_FLOATS(UNARY_OP, usigmoid, C(1) / (C(1) + m_exp(-x)))
FOR_FLOATS(UNARY_OP, usilu, x / (C(1) + m_exp(-x)))
FOR_FLOATS(UNARY_OP, ugelu, C(0.5) * x * (C(1) + m_tanh(C(0.7978845608028654) * (x + C(0.044715) * x * x * x))))
FOR_FLOATS(UNARY_OP, ugelu_erf, C(0.5) * x * (C(1) + m_erf(x * C(0.7071067811865476))))
FOR_FLOATS(UNARY_OP, uerf, m_erf(x))
FOR_FLOATS(UNARY_OP, ufloor, m_floor(x))
FOR_FLOATS(UNARY_OP, uceil, m_ceil(x))
FOR_FLOATS(UNARY_OP, uround, m_round(x))
FOR_FLOATS(UNARY_OP, usoftplus, x > C(20) ? x : m_log1p(m_exp(x)))
FOR_FLOATS(UNARY_OP, umish, x * m_tanh(m_log1p(m_exp(x))))
FOR_NUMS(UNARY_OP, uneg, -x)
FOR_NUMS(UNARY_OP, usqr, x * x)
FOR_NUMS(UNARY_OP, usign, C((x > C(0)) - (x < C(0))))
FOR_NUMS(UNARY_OP, ucopy, x)
UNARY_OP(int, i32, uabs, x < 0 ? -x : x)
FOR_FLOATS(UNARY_OP, uabs, m_abs(x))
