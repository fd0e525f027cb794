// Block scans, bitonic argsort, shared-memory histograms, dot products and rotary embeddings.
#include "utils.cuh"

// Inclusive cumulative sum of rows of at most BLOCK elements (Hillis-Steele in __shared__).
#define CUMSUM_OP(T, SUF, _)                                                               \
  extern "C" __global__ void cumsum_##SUF(const size_t cols, const T *inp, T *out) {      \
    __shared__ typename Num<T>::A buf[2][BLOCK];                                           \
    const size_t c = threadIdx.x;                                                          \
    int cur = 0;                                                                           \
    buf[0][c] = c < cols ? Num<T>::a(LOAD(inp + blockIdx.x * cols + c)) : 0;               \
    __syncthreads();                                                                       \
    for (unsigned off = 1; off < blockDim.x; off <<= 1) {                                  \
      buf[1 - cur][c] = buf[cur][c] + (c >= off ? buf[cur][c - off] : 0);                  \
      cur = 1 - cur;                                                                       \
      __syncthreads();                                                                     \
    }                                                                                      \
    if (c < cols) out[blockIdx.x * cols + c] = Num<T>::t(buf[cur][c]);                     \
  }
// Argsort of one row a block, padded to a power of two `pow2` <= BLOCK.
#define ARGSORT_OP(T, SUF, NAME, ASC)                                                      \
  extern "C" __global__ void NAME##_##SUF(const T *x, uint32_t *dst, const int cols,      \
                                          const int pow2) {                                \
    __shared__ int idx[BLOCK];                                                             \
    const int c = threadIdx.x;                                                             \
    const T *row = x + blockIdx.x * cols;                                                  \
    if (c >= pow2) return;                                                                 \
    idx[c] = c;                                                                            \
    __syncthreads();                                                                       \
    for (int k = 2; k <= pow2; k *= 2)                                                     \
      for (int j = k / 2; j > 0; j /= 2) {                                                 \
        const int o = c ^ j;                                                               \
        if (o > c) {                                                                       \
          const int a = idx[c], b = idx[o];                                                \
          const bool a_pad = a >= cols, b_pad = b >= cols;                                 \
          bool gt = a_pad ? !b_pad : (!b_pad && (ASC ? Num<T>::a(row[a]) > Num<T>::a(row[b]) \
                                                     : Num<T>::a(row[a]) < Num<T>::a(row[b]))); \
          if (((c & k) == 0) == gt) { idx[c] = b; idx[o] = a; }                            \
        }                                                                                  \
        __syncthreads();                                                                   \
      }                                                                                    \
    if (c < cols) dst[blockIdx.x * cols + c] = idx[c];                                     \
  }
#define DOT_OP(T, SUF, _)                                                                  \
  extern "C" __global__ void dot_##SUF(const size_t n, const T *a, const T *b, T *partial) { \
    typename Num<T>::A s = 0;                                                              \
    GRID_STRIDE(i, n) s += Num<T>::a(LOAD(a + i)) * Num<T>::a(LOAD(b + i));                \
    s = block_reduce(s, OpAdd());                                                          \
    if (threadIdx.x == 0) partial[blockIdx.x] = Num<T>::t(s);                              \
  }
#define HIST_OP(T, SUF)                                                                    \
  extern "C" __global__ void histogram_##SUF(const size_t n, const T *x, uint32_t *bins,  \
                                             const uint32_t nbins) {                       \
    __shared__ uint32_t local[BLOCK];                                                      \
    for (unsigned b = threadIdx.x; b < BLOCK; b += blockDim.x) local[b] = 0;               \
    __syncthreads();                                                                       \
    GRID_STRIDE(i, n) atomicAdd(&local[(uint32_t)LOAD(x + i) % nbins % BLOCK], 1u);        \
    __syncthreads();                                                                       \
    for (unsigned b = threadIdx.x; b < nbins && b < BLOCK; b += blockDim.x) atomicAdd(bins + b, local[b]); \
  }
#define ROPE_OP(T, SUF, NAME, INTERLEAVED)                                                 \
  extern "C" __global__ void NAME##_##SUF(const T *src, const T *cos, const T *sin, T *dst, \
                                          const uint32_t bh, const uint32_t t, const uint32_t d) { \
    GRID_STRIDE(p, (size_t)bh * t * d / 2) {                                               \
      const uint32_t j = p % (d / 2), row = p / (d / 2), ti = row % t;                     \
      const size_t i1 = (size_t)row * d + (INTERLEAVED ? 2 * j : j);                       \
      const size_t i2 = i1 + (INTERLEAVED ? 1 : d / 2);                                    \
      typename Num<T>::A x1 = Num<T>::a(LOAD(src + i1)), x2 = Num<T>::a(LOAD(src + i2));   \
      typename Num<T>::A c = Num<T>::a(LOAD(cos + ti * (d / 2) + j));                      \
      typename Num<T>::A s = Num<T>::a(LOAD(sin + ti * (d / 2) + j));                      \
      dst[i1] = Num<T>::t(x1 * c - x2 * s);                                                \
      dst[i2] = Num<T>::t(x1 * s + x2 * c);                                                \
    }                                                                                      \
  }

FOR_NUMS(CUMSUM_OP, _)
FOR_NUMS(ARGSORT_OP, argsort_asc, true)
FOR_NUMS(ARGSORT_OP, argsort_desc, false)
FOR_FLOATS(DOT_OP, _)
HIST_OP(int, i32)
HIST_OP(uint8_t, u8)
FOR_FLOATS(ROPE_OP, rope_i, true)
FOR_FLOATS(ROPE_OP, rope, false)
