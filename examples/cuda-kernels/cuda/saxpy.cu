#include "common.cuh"

// y = a * x + y
extern "C" __global__ void saxpy(unsigned n, float a, const float *__restrict__ x, float *__restrict__ y) {
  unsigned i = global_index();
  if (i < n) y[i] = a * x[i] + y[i];
}

// A kernel per side of an `#if` on the arch (as candle's bf16 kernels need sm_80): each is in
// one image only, and each gets a typed method; on a GPU whose image lacks it, the method
// returns `LaunchError::NotInImage`.
#if __CUDA_ARCH__ >= 900
extern "C" __global__ void saxpy_sm90(unsigned n, float a, const float *__restrict__ x, float *__restrict__ y) {
  unsigned i = global_index();
  if (i < n) y[i] = a * x[i] + y[i];
}
#else
extern "C" __global__ void saxpy_before_sm90(unsigned n, float a, const float *__restrict__ x, float *__restrict__ y) {
  unsigned i = global_index();
  if (i < n) y[i] = a * x[i] + y[i];
}
#endif
