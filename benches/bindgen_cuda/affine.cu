// Affine maps, clamps, elu, lerp and where (select by a mask).
#include "utils.cuh"

#define AFFINE_OP(T, SUF, _)                                                               \
  extern "C" __global__ void affine_##SUF(const size_t numel, const T *inp, T *out,       \
                                          const T mul, const T add) {                               \
    GRID_STRIDE(i, numel) { out[i] = Num<T>::t(Num<T>::a(LOAD(inp + i)) * Num<T>::a(mul) + Num<T>::a(add)); } \
  }
#define CLAMP_OP(T, SUF, _)                                                                \
  extern "C" __global__ void clamp_##SUF(const size_t numel, const T *inp, T *out,        \
                                         const T lo_, const T hi_) {                              \
    const typename Num<T>::A lo = Num<T>::a(lo_), hi = Num<T>::a(hi_);                     \
    GRID_STRIDE(i, numel) {                                                                \
      typename Num<T>::A x = Num<T>::a(LOAD(inp + i));                                     \
      out[i] = Num<T>::t(x < lo ? lo : (x > hi ? hi : x));                                 \
    }                                                                                      \
  }
#define ELU_OP(T, SUF, _)                                                                  \
  extern "C" __global__ void elu_##SUF(const size_t numel, const T *inp, T *out,          \
                                       const T alpha) {                                    \
    GRID_STRIDE(i, numel) {                                                                \
      typename Num<T>::A x = Num<T>::a(LOAD(inp + i));                                     \
      out[i] = Num<T>::t(x > C(0) ? x : Num<T>::a(alpha) * (m_exp(x) - C(1)));                        \
    }                                                                                      \
  }
#define POWF_OP(T, SUF, _)                                                                 \
  extern "C" __global__ void powf_##SUF(const size_t numel, const T *inp, T *out,         \
                                        const T e) {                                       \
    GRID_STRIDE(i, numel) { out[i] = Num<T>::t(m_pow(Num<T>::a(LOAD(inp + i)), Num<T>::a(e))); } \
  }
#define LERP_OP(T, SUF, _)                                                                 \
  extern "C" __global__ void lerp_##SUF(const size_t numel, const T *a, const T *b,       \
                                        const T *w, T *out) {                              \
    GRID_STRIDE(i, numel) {                                                                \
      typename Num<T>::A x = Num<T>::a(LOAD(a + i));                                       \
      out[i] = Num<T>::t(x + Num<T>::a(LOAD(w + i)) * (Num<T>::a(LOAD(b + i)) - x));       \
    }                                                                                      \
  }
#define WHERE_OP(I, IS, T, TS)                                                             \
  extern "C" __global__ void where_##IS##_##TS(const size_t numel, const I *cond,         \
                                               const T *t, const T *f, T *out) {           \
    GRID_STRIDE(i, numel) { out[i] = LOAD(cond + i) != 0 ? t[i] : f[i]; }                  \
  }
#define WHERE_FOR(T, TS, _) WHERE_OP(uint8_t, u8, T, TS) WHERE_OP(int, i32, T, TS) WHERE_OP(uint32_t, u32, T, TS)

FOR_NUMS(AFFINE_OP, _)
FOR_NUMS(CLAMP_OP, _)
FOR_FLOATS(ELU_OP, _)
FOR_FLOATS(POWF_OP, _)
FOR_FLOATS(LERP_OP, _)
FOR_NUMS(WHERE_FOR, _)
WHERE_FOR(uint8_t, u8, _)
