// A CUDA C++ kernel of {{name}}: nvcc compiles it to PTX and a cubin per arch, and the host gets
// a typed launch method of the same name (`extern "C"` keeps the name unmangled).

extern "C" __global__ void sigmoid(unsigned n, const float *x, float *y) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    y[i] = 1.0f / (1.0f + expf(-x[i]));
  }
}
