// The CUDA C++ side of src/lib.rs: the same kernels, as a CUDA programmer writes them.
#define WARP_OUTS 18
#define BLOCK_OUTS 7
#define INDEX_OUTS 6
#define BENCH_BLOCK 256
#define FULL_MASK 0xffffffffu

extern "C" __global__ void cu_warp(const unsigned *x, unsigned *out) {
  unsigned t = threadIdx.x, lane = t % 32, active = t / warpSize + 1;
  if (lane >= active) return;
  unsigned mask = __activemask();
  __syncwarp(mask);
  unsigned v = x[t];
  unsigned sum = v, max = v;
  float fsum = (float)v;
  double dsum = (double)v;
  unsigned long long lsum = (unsigned long long)v * 3;
  for (unsigned offset = 16; offset > 0; offset /= 2) {
    unsigned s = __shfl_down_sync(mask, sum, offset);
    float f = __shfl_down_sync(mask, fsum, offset);
    double d = __shfl_down_sync(mask, dsum, offset);
    unsigned long long l = __shfl_down_sync(mask, lsum, offset);
    unsigned m = __shfl_xor_sync(mask, max, offset);
    if (lane + offset < active) { sum += s; fsum += f; dsum += d; lsum += l; }
    if ((lane ^ offset) < active) max = max > m ? max : m;
  }
  unsigned scan = v;
  for (unsigned offset = 1; offset < 32; offset *= 2) {
    unsigned s = __shfl_up_sync(mask, scan, offset);
    if (lane >= offset) scan += s;
  }
  int pred;
  const unsigned words[WARP_OUTS] = {
      mask, sum, __float_as_uint(fsum),
      (unsigned)__double_as_longlong(dsum), (unsigned)((unsigned long long)__double_as_longlong(dsum) >> 32),
      (unsigned)lsum, (unsigned)(lsum >> 32), scan, max,
      __shfl_sync(mask, v, active - 1),
      __ballot_sync(mask, v & 1),
      (unsigned)(__all_sync(mask, v > 0) != 0),
      (unsigned)(__any_sync(mask, v > 1000) != 0),
      __match_any_sync(mask, v % 3),
      __match_all_sync(mask, 7ull, &pred),
      __match_all_sync(mask, (float)v, &pred),
      lane | (unsigned)warpSize << 8,
      (unsigned)__shfl_sync(mask, (long long)v - 5000, (lane + 1) % active),
  };
  for (int j = 0; j < WARP_OUTS; j++) out[t * WARP_OUTS + j] = words[j];
}

template <typename T, typename F> __device__ void cas_loop(T *p, F f) {
  T old = *(volatile T *)p;
  while (true) {
    T seen = atomicCAS(p, old, f(old));
    if (seen == old) return;
    old = seen;
  }
}

__device__ void cas_loop_f32(float *p, float add) {
  unsigned *q = (unsigned *)p;
  unsigned old = *(volatile unsigned *)q;
  while (true) {
    unsigned seen = atomicCAS(q, old, __float_as_uint(__uint_as_float(old) + add));
    if (seen == old) return;
    old = seen;
  }
}

extern "C" __global__ void cu_atomics(unsigned n, const unsigned *x, unsigned *g32, unsigned long long *g64, int *gi,
                                      long long *gl, float *gf, double *gd, unsigned *per_block) {
  __shared__ unsigned s32[4];
  __shared__ float sf;
  __shared__ unsigned long long s64;
  unsigned t = threadIdx.x;
  if (t == 0) { s32[0] = 0; s32[1] = 0xffffffffu; s32[2] = 0; s32[3] = 0; sf = 0.0f; s64 = 0; }
  __syncthreads();
  unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + t;
  if (i < n) {
    unsigned v = x[i];
    atomicAdd(g32, 1u);
    atomicMin(g32 + 1, v);
    atomicMax(g32 + 2, v);
    atomicAnd(g32 + 3, v | 0xf0f0f0f0u);
    atomicOr(g32 + 4, v & 0x01010101u);
    atomicXor(g32 + 5, v);
    atomicExch(g32 + 6, (unsigned)i);
    cas_loop(g32 + 7, [](unsigned o) { return o + 1; });

    unsigned long long w = v;
    atomicAdd(g64, w * 0x100000001ull);
    atomicMin(g64 + 1, w << 20 | 5);
    atomicMax(g64 + 2, w << 20 | 5);
    atomicAnd(g64 + 3, w << 32 | 0xffffffffull);
    atomicOr(g64 + 4, (w & 0x0101) << 40);
    atomicXor(g64 + 5, w * 3);
    atomicExch(g64 + 6, i);
    cas_loop(g64 + 7, [](unsigned long long o) { return o + 2; });

    int s = (int)v;
    atomicAdd(gi, s);
    atomicMin(gi + 1, s);
    atomicMax(gi + 2, s);
    atomicXor(gi + 3, s);
    long long l = (long long)v - (1ll << 31);
    atomicAdd((unsigned long long *)gl, (unsigned long long)l);
    atomicMin(gl + 1, l);
    atomicMax(gl + 2, l);
    atomicExch((unsigned long long *)gl + 3, (unsigned long long)l);

    atomicAdd(gf, 1.0f);
    atomicAdd(gf + 1, (float)(v & 0xff));
    atomicExch(gf + 2, (float)v);
    cas_loop_f32(gf + 3, 2.0f);
    atomicAdd(gd, (double)v);
    atomicExch((unsigned long long *)(gd + 1), (unsigned long long)__double_as_longlong((double)i));

    atomicAdd(s32, 1u);
    atomicMin(s32 + 1, v);
    atomicMax(s32 + 2, v);
    cas_loop(s32 + 3, [](unsigned o) { return o + 3; });
    atomicAdd(&sf, 0.5f);
    atomicAdd(&s64, w);
  }
  __syncthreads();
  if (t == 0) {
    const unsigned words[BLOCK_OUTS] = {s32[0], s32[1], s32[2], s32[3], __float_as_uint(sf), (unsigned)s64, (unsigned)(s64 >> 32)};
    for (int j = 0; j < BLOCK_OUTS; j++) per_block[blockIdx.x * BLOCK_OUTS + j] = words[j];
  }
}

extern "C" __global__ void cu_index(unsigned w, unsigned h, unsigned *out) {
  unsigned col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y * blockDim.y + threadIdx.y;
  if (col >= w || row >= h) return;
  const unsigned words[INDEX_OUTS] = {
      col, row, threadIdx.x | threadIdx.y << 8 | threadIdx.z << 16, blockIdx.x | blockIdx.y << 16,
      blockDim.x | blockDim.y << 8 | blockDim.z << 16, gridDim.x | gridDim.y << 16 | (gridDim.x * blockDim.x) << 24};
  for (int j = 0; j < INDEX_OUTS; j++) out[((size_t)row * w + col) * INDEX_OUTS + j] = words[j];
}

extern "C" __global__ void cu_reverse_tiles(unsigned n, const float *x, float *y) {
  extern __shared__ float tile[];
  unsigned t = threadIdx.x, size = blockDim.x;
  unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + t;
  if (i < n) {
    unsigned s = (unsigned)__cvta_generic_to_shared(tile + t);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(s), "l"(x + i) : "memory");
  }
  asm volatile("cp.async.commit_group;" ::: "memory");
  asm volatile("cp.async.wait_group 0;" ::: "memory");
  asm volatile("cp.async.wait_all;" ::: "memory");
  __threadfence_block();
  __threadfence();
  __threadfence_system();
  __syncthreads();
  unsigned long long base = i - t, src = size - 1 - t;
  if (i < n && base + src < n) y[i] = tile[src];
}

extern "C" __global__ void cu_timing(unsigned long long *out) {
  long long c0 = clock64();
  unsigned long long g0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g0));
  unsigned k0 = (unsigned)clock();
  while (clock64() - c0 < 10000) {}
  long long c1 = clock64();
  unsigned long long g1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g1));
  unsigned k1 = (unsigned)clock();
  out[0] = c0; out[1] = c1; out[2] = g0; out[3] = g1; out[4] = k0; out[5] = k1;
}

__device__ __forceinline__ float grid_sum(unsigned long long n, const float *x) {
  unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
  float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
  while (i + 3 * stride < n) {
    a0 += x[i];
    a1 += x[i + stride];
    a2 += x[i + 2 * stride];
    a3 += x[i + 3 * stride];
    i += 4 * stride;
  }
  while (i < n) { a0 += x[i]; i += stride; }
  return (a0 + a1) + (a2 + a3);
}

extern "C" __global__ void cu_reduce_shared(unsigned n, const float *x, float *partial) {
  __shared__ float s[BENCH_BLOCK];
  unsigned t = threadIdx.x;
  s[t] = grid_sum(n, x);
  __syncthreads();
  for (unsigned half = BENCH_BLOCK / 2; half > 0; half /= 2) {
    if (t < half) s[t] += s[t + half];
    __syncthreads();
  }
  if (t == 0) partial[blockIdx.x] = s[0];
}

__device__ __forceinline__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(FULL_MASK, v, offset);
  return v;
}

__device__ __forceinline__ float warp_max(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v = fmaxf(v, __shfl_xor_sync(FULL_MASK, v, offset));
  return v;
}

template <float (*op)(float)> __device__ __forceinline__ float block_reduce(float v, float identity) {
  __shared__ float s[32];
  unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  v = op(v);
  __syncthreads();
  if (lane == 0) s[warp] = v;
  __syncthreads();
  v = lane < blockDim.x / 32 ? s[lane] : identity;
  return op(v);
}

extern "C" __global__ void cu_reduce_warp(unsigned n, const float *x, float *partial) {
  float v = block_reduce<warp_sum>(grid_sum(n, x), 0.0f);
  if (threadIdx.x == 0) partial[blockIdx.x] = v;
}

#define SOFTMAX_COLS 2048
#define SOFTMAX_PER_THREAD (SOFTMAX_COLS / BENCH_BLOCK)

// Each row read once: a thread keeps its 8 values in registers.
extern "C" __global__ void cu_softmax(unsigned rows, const float *x, float *y) {
  unsigned row = blockIdx.x;
  if (row >= rows) return;
  x += (size_t)row * SOFTMAX_COLS + threadIdx.x;
  y += (size_t)row * SOFTMAX_COLS + threadIdx.x;
  float v[SOFTMAX_PER_THREAD];
#pragma unroll
  for (int k = 0; k < SOFTMAX_PER_THREAD; k++) v[k] = x[k * BENCH_BLOCK];
  float m = -INFINITY;
#pragma unroll
  for (int k = 0; k < SOFTMAX_PER_THREAD; k++) m = fmaxf(m, v[k]);
  m = block_reduce<warp_max>(m, -INFINITY);
  float sum = 0.0f;
#pragma unroll
  for (int k = 0; k < SOFTMAX_PER_THREAD; k++) {
    v[k] = expf(v[k] - m);
    sum += v[k];
  }
  sum = block_reduce<warp_sum>(sum, 0.0f);
#pragma unroll
  for (int k = 0; k < SOFTMAX_PER_THREAD; k++) y[k * BENCH_BLOCK] = v[k] / sum;
}
