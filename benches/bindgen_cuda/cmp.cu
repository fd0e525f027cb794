// Comparisons to a u8 mask, strided operands.
#include "utils.cuh"

#define CMP_OP(T, SUF, NAME, OP)                                                           \
  extern "C" __global__ void NAME##_##SUF(const size_t numel, const size_t num_dims,      \
                                          const size_t *info, const T *lhs, const T *rhs, \
                                          uint8_t *out) {                                  \
    const size_t *dims = info;                                                             \
    const size_t *ls = info + num_dims;                                                    \
    const size_t *rs = info + 2 * num_dims;                                                \
    const bool lc = info == nullptr || contiguous(num_dims, dims, ls);                     \
    const bool rc = info == nullptr || contiguous(num_dims, dims, rs);                     \
    GRID_STRIDE(i, numel) {                                                                \
      typename Num<T>::A x = Num<T>::a(LOAD(lhs + (lc ? i : strided(i, num_dims, dims, ls)))); \
      typename Num<T>::A y = Num<T>::a(LOAD(rhs + (rc ? i : strided(i, num_dims, dims, rs)))); \
      out[i] = (x OP y) ? 1 : 0;                                                           \
    }                                                                                      \
  }
#define CMP_ALL(M, ...) FOR_NUMS(M, __VA_ARGS__) M(uint8_t, u8, __VA_ARGS__)

CMP_ALL(CMP_OP, eq, ==)
CMP_ALL(CMP_OP, ne, !=)
CMP_ALL(CMP_OP, lt, <)
CMP_ALL(CMP_OP, le, <=)
CMP_ALL(CMP_OP, gt, >)
CMP_ALL(CMP_OP, ge, >=)
