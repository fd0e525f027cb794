// Shared by the kernels: an edit here rebuilds the files that include it, and only those.
#pragma once

#include <cstdint>

#define REDUCE_BLOCK 256

__device__ __forceinline__ unsigned global_index() { return blockIdx.x * blockDim.x + threadIdx.x; }

// A kernel of the shared header (dfdx's `fill_with_*` style): each file that includes it has its
// copy, so each module gets a method (`saxpy_fill_f32`, `reduce_fill_f32`, ...).
extern "C" __global__ void fill_f32(float *x, float value, uintptr_t n) {
    uintptr_t i = global_index();
    if (i < n) x[i] = value;
}
