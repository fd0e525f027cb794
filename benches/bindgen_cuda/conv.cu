// Direct convolutions, im2col, pooling and upsampling (NCL / NCHW layouts).
#include "utils.cuh"
#include <float.h>

#define CONV1D(T, SUF, _)                                                                  \
  extern "C" __global__ void conv1d_##SUF(const size_t b, const size_t c_in,              \
                                          const size_t l_in, const size_t c_out,          \
                                          const size_t k, const size_t stride,            \
                                          const size_t pad, const T *x, const T *w, T *y) { \
    const size_t l_out = (l_in + 2 * pad - k) / stride + 1;                                \
    GRID_STRIDE(i, b * c_out * l_out) {                                                    \
      const size_t lo = i % l_out, co = (i / l_out) % c_out, bi = i / (l_out * c_out);     \
      typename Num<T>::A s = 0;                                                            \
      for (size_t ci = 0; ci < c_in; ++ci)                                                 \
        for (size_t kk = 0; kk < k; ++kk) {                                                \
          const long p = (long)(lo * stride + kk) - (long)pad;                             \
          if (p >= 0 && p < (long)l_in)                                                    \
            s += Num<T>::a(LOAD(x + (bi * c_in + ci) * l_in + p)) * Num<T>::a(LOAD(w + (co * c_in + ci) * k + kk)); \
        }                                                                                  \
      y[i] = Num<T>::t(s);                                                                 \
    }                                                                                      \
  }
#define CONV_T1D(T, SUF, _)                                                                \
  extern "C" __global__ void conv_transpose1d_##SUF(const size_t b, const size_t c_in,    \
                                                    const size_t l_in, const size_t c_out, \
                                                    const size_t k, const size_t stride,  \
                                                    const T *x, const T *w, T *y) {        \
    const size_t l_out = (l_in - 1) * stride + k;                                          \
    GRID_STRIDE(i, b * c_out * l_out) {                                                    \
      const size_t lo = i % l_out, co = (i / l_out) % c_out, bi = i / (l_out * c_out);     \
      typename Num<T>::A s = 0;                                                            \
      for (size_t ci = 0; ci < c_in; ++ci)                                                 \
        for (size_t kk = 0; kk < k; ++kk) {                                                \
          if (lo < kk || (lo - kk) % stride) continue;                                     \
          const size_t li = (lo - kk) / stride;                                            \
          if (li < l_in) s += Num<T>::a(LOAD(x + (bi * c_in + ci) * l_in + li)) * Num<T>::a(LOAD(w + (ci * c_out + co) * k + kk)); \
        }                                                                                  \
      y[i] = Num<T>::t(s);                                                                 \
    }                                                                                      \
  }
#define CONV2D(T, SUF, _)                                                                  \
  extern "C" __global__ void conv2d_##SUF(const size_t b, const size_t c_in, const size_t h, \
                                          const size_t wd, const size_t c_out, const size_t k, \
                                          const T *x, const T *w, T *y) {                  \
    const size_t ho = h - k + 1, wo = wd - k + 1;                                          \
    GRID_STRIDE(i, b * c_out * ho * wo) {                                                  \
      const size_t ox = i % wo, oy = (i / wo) % ho, co = (i / (wo * ho)) % c_out, bi = i / (wo * ho * c_out); \
      typename Num<T>::A s = 0;                                                            \
      for (size_t ci = 0; ci < c_in; ++ci)                                                 \
        for (size_t ky = 0; ky < k; ++ky)                                                  \
          for (size_t kx = 0; kx < k; ++kx)                                                \
            s += Num<T>::a(LOAD(x + ((bi * c_in + ci) * h + oy + ky) * wd + ox + kx)) *    \
                 Num<T>::a(LOAD(w + ((co * c_in + ci) * k + ky) * k + kx));                \
      y[i] = Num<T>::t(s);                                                                 \
    }                                                                                      \
  }
#define IM2COL1D(T, SUF, _)                                                                \
  extern "C" __global__ void im2col1d_##SUF(const size_t b, const size_t c, const size_t l, \
                                            const size_t k, const size_t stride, const T *x, T *y) { \
    const size_t lo = (l - k) / stride + 1;                                                \
    GRID_STRIDE(i, b * lo * c * k) {                                                       \
      const size_t kk = i % k, ci = (i / k) % c, o = (i / (k * c)) % lo, bi = i / (k * c * lo); \
      y[i] = LOAD(x + (bi * c + ci) * l + o * stride + kk);                                \
    }                                                                                      \
  }
#define POOL2D(T, SUF, NAME, INIT, ACC, FIN)                                               \
  extern "C" __global__ void NAME##_##SUF(const size_t bc, const size_t h, const size_t wd, \
                                          const size_t k, const size_t stride, const T *x, T *y) { \
    const size_t ho = (h - k) / stride + 1, wo = (wd - k) / stride + 1;                    \
    GRID_STRIDE(i, bc * ho * wo) {                                                         \
      const size_t ox = i % wo, oy = (i / wo) % ho, p = i / (wo * ho);                     \
      typename Num<T>::A a = INIT;                                                         \
      for (size_t ky = 0; ky < k; ++ky)                                                    \
        for (size_t kx = 0; kx < k; ++kx) {                                                \
          typename Num<T>::A v = Num<T>::a(LOAD(x + (p * h + oy * stride + ky) * wd + ox * stride + kx)); \
          ACC;                                                                             \
        }                                                                                  \
      y[i] = Num<T>::t(FIN);                                                               \
    }                                                                                      \
  }
#define UPSAMPLE2D(T, SUF, _)                                                              \
  extern "C" __global__ void upsample_nearest2d_##SUF(const size_t bc, const size_t h,    \
                                                      const size_t wd, const size_t ho,    \
                                                      const size_t wo, const T *x, T *y) { \
    GRID_STRIDE(i, bc * ho * wo) {                                                         \
      const size_t ox = i % wo, oy = (i / wo) % ho, p = i / (wo * ho);                     \
      y[i] = LOAD(x + (p * h + oy * h / ho) * wd + ox * wd / wo);                          \
    }                                                                                      \
  }
#define POOLS(T, SUF, _)                                                                   \
  POOL2D(T, SUF, avg_pool2d, 0, a += v, a / (typename Num<T>::A)(k * k))                   \
  POOL2D(T, SUF, max_pool2d, -FLT_MAX, a = v > a ? v : a, a)

FOR_FLOATS(CONV1D, _)
FOR_FLOATS(CONV_T1D, _)
FOR_FLOATS(CONV2D, _)
FOR_FLOATS(IM2COL1D, _)
FOR_FLOATS(POOLS, _)
FOR_FLOATS(UPSAMPLE2D, _)
