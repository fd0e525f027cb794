#include "common.cuh"

// y = a * x + y
extern "C" __global__ void saxpy(unsigned n, float a, const float *__restrict__ x, float *__restrict__ y) {
  unsigned i = global_index();
  if (i < n) y[i] = a * x[i] + y[i];
}
