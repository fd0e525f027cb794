#include "common.cuh"

// One partial sum per block, through shared memory: launch with REDUCE_BLOCK threads a block.
extern "C" __global__ void block_sum(const float *__restrict__ x, float *__restrict__ partial, unsigned n) {
  __shared__ float s[REDUCE_BLOCK];
  unsigned i = global_index();
  s[threadIdx.x] = i < n ? x[i] : 0.0f;
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) s[threadIdx.x] += s[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = s[0];
}
