// The CUDA C++ half: LEAK comes from `cuda-defines` in Cargo.toml.
extern "C" __global__ void leaky_relu(long long n, const float *x, float *y) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] > 0.0f ? x[i] : LEAK * x[i];
}
