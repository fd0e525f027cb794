#include "common.cuh"

// 128-bit addition of (lo, hi) pairs with the carry chain: add.cc sets the carry, addc reads it.
// Both instructions sit in one asm: the carry flag does not survive between asm statements.
__device__ void add128(unsigned long long a_lo, unsigned long long a_hi, unsigned long long b_lo, unsigned long long b_hi,
                       unsigned long long *lo, unsigned long long *hi) {
  asm("add.cc.u64 %0, %2, %4;\n\t"
      "addc.u64 %1, %3, %5;"
      : "=l"(*lo), "=l"(*hi)
      : "l"(a_lo), "l"(a_hi), "l"(b_lo), "l"(b_hi));
}

extern "C" __global__ void add_u128(const unsigned long long *a, const unsigned long long *b, unsigned long long *out, unsigned n) {
  unsigned i = global_index();
  if (i < n) add128(a[2 * i], a[2 * i + 1], b[2 * i], b[2 * i + 1], &out[2 * i], &out[2 * i + 1]);
}

// Cycles a short loop takes, read from %clock64: `volatile`, so neither read is moved or merged.
extern "C" __global__ void clock_span(unsigned long long *cycles, float *sink, unsigned iterations) {
  unsigned long long start, end;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(start));
  float v = threadIdx.x;
  for (unsigned k = 0; k < iterations; ++k) v = v * 1.0001f + 0.5f;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(end));
  unsigned i = global_index();
  sink[i] = v;
  cycles[i] = end - start;
}
