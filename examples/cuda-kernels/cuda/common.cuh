// Shared by the kernels: an edit here rebuilds the files that include it, and only those.
#pragma once

#define REDUCE_BLOCK 256

__device__ __forceinline__ unsigned global_index() { return blockIdx.x * blockDim.x + threadIdx.x; }
