// The CUDA C++ side of src/twins.rs: four kernels where shared memory, shared atomics, vector
// loads and unrolling decide the speed, written as a CUDA programmer writes them.

// y = a * x + y on float4s, grid-stride (n4 = number of float4s).
extern "C" __global__ void cu_saxpy4(unsigned n4, float a, const float *x, float *y) {
  const float4 *x4 = reinterpret_cast<const float4 *>(x);
  float4 *y4 = reinterpret_cast<float4 *>(y);
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n4; i += (size_t)gridDim.x * blockDim.x) {
    float4 xv = __ldg(&x4[i]);
    float4 yv = y4[i];
    y4[i] = make_float4(a * xv.x + yv.x, a * xv.y + yv.y, a * xv.z + yv.z, a * xv.w + yv.w);
  }
}

// C = A * B, all n x n row-major, n a multiple of 128. 256 threads a block compute a 128 x 128
// tile of C, each thread an 8 x 8 block in registers; A and B pass through shared tiles of
// depth 8 (A's transposed, so a thread reads its 8 rows as two float4s).
#define BM 128
#define BN 128
#define BK 8
#define TM 8
#define TN 8
extern "C" __global__ void cu_sgemm(unsigned n, const float *A, const float *B, float *C) {
  __shared__ __align__(16) float As[BK * BM];
  __shared__ __align__(16) float Bs[BK * BN];
  unsigned t = threadIdx.x, tx = t % 16, ty = t / 16;
  unsigned m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  unsigned a_row = t / 2, a_col = (t % 2) * 4;
  unsigned b_row = t / 32, b_col = (t % 32) * 4;
  float acc[TM][TN] = {};
  for (unsigned k0 = 0; k0 < n; k0 += BK) {
    float4 av = __ldg(reinterpret_cast<const float4 *>(&A[(size_t)(m0 + a_row) * n + k0 + a_col]));
    As[(a_col + 0) * BM + a_row] = av.x;
    As[(a_col + 1) * BM + a_row] = av.y;
    As[(a_col + 2) * BM + a_row] = av.z;
    As[(a_col + 3) * BM + a_row] = av.w;
    float4 bv = __ldg(reinterpret_cast<const float4 *>(&B[(size_t)(k0 + b_row) * n + n0 + b_col]));
    *reinterpret_cast<float4 *>(&Bs[b_row * BN + b_col]) = bv;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; k++) {
      float a[TM], b[TN];
      float4 a0 = *reinterpret_cast<const float4 *>(&As[k * BM + ty * TM]);
      float4 a1 = *reinterpret_cast<const float4 *>(&As[k * BM + ty * TM + 4]);
      float4 b0 = *reinterpret_cast<const float4 *>(&Bs[k * BN + tx * TN]);
      float4 b1 = *reinterpret_cast<const float4 *>(&Bs[k * BN + tx * TN + 4]);
      a[0] = a0.x; a[1] = a0.y; a[2] = a0.z; a[3] = a0.w; a[4] = a1.x; a[5] = a1.y; a[6] = a1.z; a[7] = a1.w;
      b[0] = b0.x; b[1] = b0.y; b[2] = b0.z; b[3] = b0.w; b[4] = b1.x; b[5] = b1.y; b[6] = b1.z; b[7] = b1.w;
#pragma unroll
      for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++) acc[i][j] += a[i] * b[j];
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < TM; i++) {
    float *c = &C[(size_t)(m0 + ty * TM + i) * n + n0 + tx * TN];
    *reinterpret_cast<float4 *>(c) = make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
    *reinterpret_cast<float4 *>(c + 4) = make_float4(acc[i][4], acc[i][5], acc[i][6], acc[i][7]);
  }
}

// out = in^T, n x n, n a multiple of 32: 32 x 8 threads move a 32 x 32 tile through shared
// memory padded to 33 columns, so the column reads hit 32 different banks.
#define TILE 32
#define ROWS 8
extern "C" __global__ void cu_transpose(unsigned n, const float *in, float *out) {
  __shared__ float tile[TILE * (TILE + 1)];
  unsigned tx = threadIdx.x, ty = threadIdx.y;
  unsigned x = blockIdx.x * TILE + tx, y = blockIdx.y * TILE + ty;
#pragma unroll
  for (int j = 0; j < TILE; j += ROWS) tile[(ty + j) * (TILE + 1) + tx] = in[(size_t)(y + j) * n + x];
  __syncthreads();
  x = blockIdx.y * TILE + tx;
  y = blockIdx.x * TILE + ty;
#pragma unroll
  for (int j = 0; j < TILE; j += ROWS) out[(size_t)(y + j) * n + x] = tile[tx * (TILE + 1) + ty + j];
}

// 256-bin histogram of the bytes of `words` (n words, 4 bytes each): per-block counts in shared
// memory with shared atomics, then one global atomic per bin and block.
extern "C" __global__ void cu_histogram(unsigned n, const unsigned *words, unsigned *hist) {
  __shared__ unsigned s[256];
  for (unsigned b = threadIdx.x; b < 256; b += blockDim.x) s[b] = 0;
  __syncthreads();
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    unsigned w = words[i];
    atomicAdd(&s[w & 0xff], 1u);
    atomicAdd(&s[(w >> 8) & 0xff], 1u);
    atomicAdd(&s[(w >> 16) & 0xff], 1u);
    atomicAdd(&s[w >> 24], 1u);
  }
  __syncthreads();
  for (unsigned b = threadIdx.x; b < 256; b += blockDim.x)
    if (s[b]) atomicAdd(&hist[b], s[b]);
}
