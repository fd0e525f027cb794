#include "stencil.cuh"

// Horizontal box blur of a grey image, edges clamped.
extern "C" __global__ void box_blur(int width, int n, const float *in, float *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int row = i / width * width, x = i % width;
  float sum = 0.0f;
  for (int dx = -RADIUS; dx <= RADIUS; ++dx) sum += in[row + clamp_x(x + dx, width)];
  out[i] = sum / (2 * RADIUS + 1);
}
