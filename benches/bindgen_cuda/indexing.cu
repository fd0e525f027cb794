// index_select, gather, scatter_add and index_add for three index types and five value types.
#include "utils.cuh"

#define INDEX_SELECT(I, IS, T, TS)                                                         \
  extern "C" __global__ void is_##IS##_##TS(const size_t numel, const I *ids,             \
                                            const T *inp, T *out, const size_t left,       \
                                            const size_t src_dim, const size_t ids_dim,    \
                                            const size_t right) {                          \
    GRID_STRIDE(i, numel) {                                                                \
      const size_t r = i % right, k = (i / right) % ids_dim, l = i / (right * ids_dim);    \
      const size_t id = (size_t)LOAD(ids + k);                                             \
      out[i] = id < src_dim ? inp[(l * src_dim + id) * right + r] : Num<T>::t(0);          \
    }                                                                                      \
  }
#define GATHER(I, IS, T, TS)                                                               \
  extern "C" __global__ void gather_##IS##_##TS(const size_t numel, const I *ids,         \
                                                const T *inp, T *out, const size_t left,   \
                                                const size_t src_dim, const size_t ids_dim, \
                                                const size_t right) {                      \
    GRID_STRIDE(i, numel) {                                                                \
      const size_t r = i % right, l = i / (right * ids_dim);                               \
      const size_t id = (size_t)LOAD(ids + i);                                             \
      out[i] = id < src_dim ? inp[(l * src_dim + id) * right + r] : Num<T>::t(0);          \
    }                                                                                      \
  }
#define SCATTER_ADD(I, IS, T, TS)                                                          \
  extern "C" __global__ void sa_##IS##_##TS(const I *ids, const T *inp, T *out,           \
                                            const size_t left, const size_t src_dim,       \
                                            const size_t dst_dim, const size_t right) {    \
    GRID_STRIDE(i, left * right) {                                                         \
      const size_t l = i / right, r = i % right;                                           \
      for (size_t j = 0; j < src_dim; ++j) {                                               \
        const size_t s = (l * src_dim + j) * right + r;                                    \
        const size_t id = (size_t)LOAD(ids + s);                                           \
        if (id < dst_dim) atomicAdd(out + (l * dst_dim + id) * right + r, LOAD(inp + s));  \
      }                                                                                    \
    }                                                                                      \
  }
#define INDEX_ADD(I, IS, T, TS)                                                            \
  extern "C" __global__ void ia_##IS##_##TS(const I *ids, const size_t ids_dim,           \
                                            const T *inp, T *out, const size_t left,       \
                                            const size_t src_dim, const size_t dst_dim,    \
                                            const size_t right) {                          \
    GRID_STRIDE(i, left * right) {                                                         \
      const size_t l = i / right, r = i % right;                                           \
      for (size_t j = 0; j < ids_dim; ++j) {                                               \
        const size_t id = (size_t)LOAD(ids + j);                                           \
        if (id < dst_dim)                                                                  \
          atomicAdd(out + (l * dst_dim + id) * right + r, LOAD(inp + (l * src_dim + j) * right + r)); \
      }                                                                                    \
    }                                                                                      \
  }
#define ALL_IDS(M, T, TS) M(uint32_t, u32, T, TS) M(int64_t, i64, T, TS) M(uint8_t, u8, T, TS)
#define ALL_OPS(T, TS, _)                                                                  \
  ALL_IDS(INDEX_SELECT, T, TS) ALL_IDS(GATHER, T, TS) ALL_IDS(SCATTER_ADD, T, TS)          \
  ALL_IDS(INDEX_ADD, T, TS)

FOR_NUMS(ALL_OPS, _)
ALL_IDS(INDEX_SELECT, uint8_t, u8)
ALL_IDS(GATHER, uint8_t, u8)
