// A kernel that syncs its whole grid (cooperative groups' `this_grid().sync()`), as CUDA's
// conjugateGradientMultiBlockCG does: only a cooperative launch lets it, so its typed method
// launches it that way and every block must be resident at once (`Grid::resident()`).
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

// Every block doubles its part of `x`; after the grid's sync each thread reads parts that
// other blocks wrote.
extern "C" __global__ void mirror_sum(float *x, float *out, int n) {
    cg::grid_group grid = cg::this_grid();
    const int start = (int)grid.thread_rank(), stride = (int)grid.size();
    for (int i = start; i < n; i += stride) {
        x[i] *= 2.0f;
    }
    grid.sync();
    for (int i = start; i < n; i += stride) {
        out[i] = x[i] + x[n - 1 - i];
    }
}

// A kernel of the same file without a grid sync: a plain launch, any grid.
extern "C" __global__ void plain_scale(float *x, float s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        x[i] *= s;
    }
}
