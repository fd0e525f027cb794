// CUDA twins of src/obvious.rs that twins.cu lacks, written as a CUDA programmer writes them:
// plain loops (no #pragma unroll), atomicAdd on shared memory, __launch_bounds__.

// The histogram of cu_histogram over 16-byte loads (n4 groups of four words), at most 256
// threads a block and four blocks an SM.
extern "C" __global__ void __launch_bounds__(256, 4) cu_histogram16(unsigned n4, const unsigned *words, unsigned *hist) {
  __shared__ unsigned s[256];
  for (unsigned b = threadIdx.x; b < 256; b += blockDim.x) s[b] = 0;
  __syncthreads();
  const uint4 *words4 = reinterpret_cast<const uint4 *>(words);
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n4; i += (size_t)gridDim.x * blockDim.x) {
    uint4 v = words4[i];
    unsigned w[4] = {v.x, v.y, v.z, v.w};
    for (int k = 0; k < 4; k++)
      for (int j = 0; j < 4; j++) atomicAdd(&s[(w[k] >> (8 * j)) & 0xff], 1u);
  }
  __syncthreads();
  for (unsigned b = threadIdx.x; b < 256; b += blockDim.x)
    if (s[b]) atomicAdd(&hist[b], s[b]);
}

// A 5 x 5 convolution of a (w + 4) x (h + 4) image into a w x h one: one thread a pixel.
extern "C" __global__ void cu_conv5(unsigned w, unsigned h, const float *in, const float *weights, float *out) {
  size_t x = blockIdx.x * (size_t)blockDim.x + threadIdx.x, y = blockIdx.y * (size_t)blockDim.y + threadIdx.y;
  if (x >= w || y >= h) return;
  size_t pitch = w + 4;
  float acc = 0.0f;
  for (int dy = 0; dy < 5; dy++)
    for (int dx = 0; dx < 5; dx++) acc += weights[dy * 5 + dx] * in[(y + dy) * pitch + x + dx];
  out[y * w + x] = acc;
}

// A 16 x 32 dense layer applied to each of `batch` samples, one thread a sample (x and out are
// sample-minor).
extern "C" __global__ void cu_dense16(unsigned batch, const float *w, const float *x, float *out) {
  size_t s = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (s >= batch) return;
  float acc[16] = {};
  for (int k = 0; k < 32; k++) {
    float v = x[k * (size_t)batch + s];
    for (int i = 0; i < 16; i++) acc[i] += w[i * 32 + k] * v;
  }
  for (int i = 0; i < 16; i++) out[i * (size_t)batch + s] = acc[i];
}
