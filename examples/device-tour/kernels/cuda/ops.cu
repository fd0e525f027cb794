// The CUDA C++ half of the bit-exact comparison: the operations of src/ops.rs, in the same
// order, written the way CUDA code writes them (intrinsics, operators, inline PTX where CUDA
// has nothing else).
#define INT_OPS 73
#define F32_OPS 78
#define F64_OPS 63

__device__ __forceinline__ unsigned lo(unsigned long long v) { return (unsigned)v; }
__device__ __forceinline__ unsigned hi(unsigned long long v) { return (unsigned)(v >> 32); }
__device__ __forceinline__ unsigned __int128 wide(unsigned long long lo, unsigned long long hi) {
  return ((unsigned __int128)hi << 64) | lo;
}

__device__ __forceinline__ unsigned prmt(unsigned a, unsigned b, unsigned s) {
  unsigned r; asm("prmt.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(s)); return r;
}
__device__ __forceinline__ unsigned bfe_u32(unsigned x, unsigned p, unsigned l) {
  unsigned r; asm("bfe.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(p), "r"(l)); return r;
}
__device__ __forceinline__ int bfe_s32(int x, unsigned p, unsigned l) {
  int r; asm("bfe.s32 %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(p), "r"(l)); return r;
}
__device__ __forceinline__ unsigned long long bfe_u64(unsigned long long x, unsigned p, unsigned l) {
  unsigned long long r; asm("bfe.u64 %0, %1, %2, %3;" : "=l"(r) : "l"(x), "r"(p), "r"(l)); return r;
}
__device__ __forceinline__ long long bfe_s64(long long x, unsigned p, unsigned l) {
  long long r; asm("bfe.s64 %0, %1, %2, %3;" : "=l"(r) : "l"(x), "r"(p), "r"(l)); return r;
}
__device__ __forceinline__ unsigned bfi_u32(unsigned f, unsigned b, unsigned p, unsigned l) {
  unsigned r; asm("bfi.b32 %0, %1, %2, %3, %4;" : "=r"(r) : "r"(f), "r"(b), "r"(p), "r"(l)); return r;
}
__device__ __forceinline__ unsigned long long bfi_u64(unsigned long long f, unsigned long long b, unsigned p, unsigned l) {
  unsigned long long r; asm("bfi.b64 %0, %1, %2, %3, %4;" : "=l"(r) : "l"(f), "l"(b), "r"(p), "r"(l)); return r;
}

extern "C" __global__ void cu_int_ops(unsigned n, const unsigned *a, const unsigned *b, unsigned *out) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned x = a[i], y = b[i];
  unsigned long long xx = ((unsigned long long)x << 32) | y, yy = ((unsigned long long)y << 32) | x;
  unsigned p = y & 31, l = (y >> 8) & 31, pp = y & 63, ll = (y >> 8) & 63;
  // The carry chains as NVIDIA's inline-PTX reference writes them.
  unsigned ac[3], sb[3];
  asm("add.cc.u32 %0, %3, %5;\naddc.cc.u32 %1, %4, %6;\naddc.u32 %2, 0, 0;"
      : "=r"(ac[0]), "=r"(ac[1]), "=r"(ac[2]) : "r"(x), "r"(y), "r"(y), "r"(x));
  asm("sub.cc.u32 %0, %3, %5;\nsubc.cc.u32 %1, %4, %6;\nsubc.u32 %2, 0, 0;"
      : "=r"(sb[0]), "=r"(sb[1]), "=r"(sb[2]) : "r"(x), "r"(y), "r"(y), "r"(x));
  sb[2] = sb[2] != 0;
  unsigned long long ac2[3], sb2[3];
  asm("add.cc.u64 %0, %3, %5;\naddc.cc.u64 %1, %4, %6;\naddc.u64 %2, 0, 0;"
      : "=l"(ac2[0]), "=l"(ac2[1]), "=l"(ac2[2]) : "l"(xx), "l"(yy), "l"(yy), "l"(xx));
  asm("sub.cc.u64 %0, %3, %5;\nsubc.cc.u64 %1, %4, %6;\nsubc.u64 %2, 0, 0;"
      : "=l"(sb2[0]), "=l"(sb2[1]), "=l"(sb2[2]) : "l"(xx), "l"(yy), "l"(yy), "l"(xx));
  sb2[2] = sb2[2] != 0;
  const unsigned words[INT_OPS] = {
      lo((unsigned long long)x * y),
      hi((unsigned long long)x * y),
      lo((unsigned long long)((long long)(int)x * (int)y)),
      hi((unsigned long long)((long long)(int)x * (int)y)),
      __umulhi(x, y),
      (unsigned)__mulhi((int)x, (int)y),
      lo(__umul64hi(xx, yy)),
      hi(__umul64hi(xx, yy)),
      lo((unsigned long long)__mul64hi((long long)xx, (long long)yy)),
      hi((unsigned long long)__mul64hi((long long)xx, (long long)yy)),
      prmt(x, y, y),
      bfe_u32(x, p, l),
      (unsigned)bfe_s32((int)x, p, l),
      lo(bfe_u64(xx, pp, ll)),
      hi(bfe_u64(xx, pp, ll)),
      lo((unsigned long long)bfe_s64((long long)xx, pp, ll)),
      hi((unsigned long long)bfe_s64((long long)xx, pp, ll)),
      bfi_u32(x, y, p, l),
      lo(bfi_u64(xx, yy, pp, ll)),
      hi(bfi_u64(xx, yy, pp, ll)),
      ac[0],
      ac[1],
      ac[2],
      sb[0],
      sb[1],
      sb[2],
      lo(ac2[0]),
      hi(ac2[0]),
      lo(ac2[1]),
      hi(ac2[1]),
      (unsigned)ac2[2],
      lo(sb2[0]),
      hi(sb2[0]),
      lo(sb2[1]),
      hi(sb2[1]),
      (unsigned)sb2[2],
      lo((unsigned long long)(wide(xx, yy) + wide(yy, xx))),
      hi((unsigned long long)(wide(xx, yy) + wide(yy, xx))),
      lo((unsigned long long)((wide(xx, yy) + wide(yy, xx)) >> 64)),
      hi((unsigned long long)((wide(xx, yy) + wide(yy, xx)) >> 64)),
      lo((unsigned long long)(wide(xx, yy) - wide(yy, xx))),
      hi((unsigned long long)(wide(xx, yy) - wide(yy, xx))),
      lo((unsigned long long)((wide(xx, yy) - wide(yy, xx)) >> 64)),
      hi((unsigned long long)((wide(xx, yy) - wide(yy, xx)) >> 64)),
      x + y + (x ^ y),
      (unsigned)__popcll(xx),
      min(x, y),
      x > y ? y : x,
      x << 5,
      (unsigned)(y & 1 ? max((int)x, (int)y) : min((int)x, (int)y)),
      (unsigned short)(((unsigned short)x << 8) | ((unsigned short)x >> 8)),
      __ldg(a + i),
      ((const unsigned char *)a)[i],
      __ldg((const unsigned char *)a + i),
      (unsigned)(int)__ldg((const signed char *)a + i),
      (unsigned)(int)__ldg((const short *)a + i),
      lo(__ldg((const unsigned long long *)a + i / 2)),
      hi(__ldg((const unsigned long long *)a + i / 2)),
      __float_as_uint(__ldg((const float *)a + i)),
      __brev(x),
      (unsigned)__clz((int)x),
      (unsigned)__ffs((int)x),
      (unsigned)__popc(x),
      __byte_perm(x, y, y),
      __sad((int)x, (int)y, x),
      __usad(x, y, y),
      __umul24(x, y),
      (unsigned)__mul24((int)x, (int)y),
      __uhadd(x, y),
      (unsigned)__rhadd((int)x, (int)y),
      (unsigned)__clzll((long long)xx),
      lo(__brevll(xx)),
      hi(__brevll(xx))
  };
  for (int j = 0; j < INT_OPS; j++) out[(size_t)i * INT_OPS + j] = words[j];
}

extern "C" __global__ void cu_math_f32(unsigned n, const float *x_, const float *y_, const float *z_, unsigned *out) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = x_[i], y = y_[i], z = z_[i];
  float s, c, fs, fc;
  sincosf(x, &s, &c);
  __sincosf(x, &fs, &fc);
  const unsigned words[F32_OPS] = {
      __float_as_uint(expf(x)),
      __float_as_uint(exp2f(x)),
      __float_as_uint(exp10f(x)),
      __float_as_uint(expm1f(x)),
      __float_as_uint(logf(x)),
      __float_as_uint(log2f(x)),
      __float_as_uint(log10f(x)),
      __float_as_uint(log1pf(x)),
      __float_as_uint(sinf(x)),
      __float_as_uint(cosf(x)),
      __float_as_uint(tanf(x)),
      __float_as_uint(sinpif(x)),
      __float_as_uint(cospif(x)),
      __float_as_uint(asinf(x)),
      __float_as_uint(acosf(x)),
      __float_as_uint(atanf(x)),
      __float_as_uint(sinhf(x)),
      __float_as_uint(coshf(x)),
      __float_as_uint(tanhf(x)),
      __float_as_uint(asinhf(x)),
      __float_as_uint(acoshf(x)),
      __float_as_uint(atanhf(x)),
      __float_as_uint(sqrtf(x)),
      __float_as_uint(rsqrtf(x)),
      __float_as_uint(cbrtf(x)),
      __float_as_uint(rcbrtf(x)),
      __float_as_uint(erff(x)),
      __float_as_uint(erfcf(x)),
      __float_as_uint(erfinvf(x)),
      __float_as_uint(erfcinvf(x)),
      __float_as_uint(tgammaf(x)),
      __float_as_uint(lgammaf(x)),
      __float_as_uint(fabsf(x)),
      __float_as_uint(floorf(x)),
      __float_as_uint(ceilf(x)),
      __float_as_uint(truncf(x)),
      __float_as_uint(roundf(x)),
      __float_as_uint(rintf(x)),
      __float_as_uint(atan2f(x, y)),
      __float_as_uint(powf(x, y)),
      __float_as_uint(hypotf(x, y)),
      __float_as_uint(fminf(x, y)),
      __float_as_uint(fmaxf(x, y)),
      __float_as_uint(fmodf(x, y)),
      __float_as_uint(remainderf(x, y)),
      __float_as_uint(copysignf(x, y)),
      __float_as_uint(fdimf(x, y)),
      __float_as_uint(fmaf(x, y, z)),
      __float_as_uint(s),
      __float_as_uint(c),
      __float_as_uint(x + y),
      __float_as_uint(x - y),
      __float_as_uint(x * y),
      __float_as_uint(x / y),
      __float_as_uint(__expf(x)),
      __float_as_uint(__exp10f(x)),
      __float_as_uint(__logf(x)),
      __float_as_uint(__log2f(x)),
      __float_as_uint(__log10f(x)),
      __float_as_uint(__sinf(x)),
      __float_as_uint(__cosf(x)),
      __float_as_uint(__tanf(x)),
      __float_as_uint(__tanhf(x)),
      __float_as_uint(__powf(x, y)),
      __float_as_uint(__fdividef(x, y)),
      __float_as_uint(fs),
      __float_as_uint(fc),
      __float_as_uint(__fmaf_rn(x, y, z)),
      __float_as_uint(__fadd_rz(x, y)),
      __float_as_uint(__fmul_ru(x, y)),
      __float_as_uint(__fdiv_rd(x, y)),
      __float_as_uint(__fsqrt_ru(x)),
      __float_as_uint(__frcp_rn(x)),
      __float_as_uint(__fmaf_rz(x, y, z)),
      (unsigned)__float2int_rn(x),
      __float2uint_rz(x),
      __float_as_uint(__int2float_rd(__float_as_int(x))),
      (unsigned)__float2ll_ru(x)
  };
  for (int j = 0; j < F32_OPS; j++) out[(size_t)i * F32_OPS + j] = words[j];
}

extern "C" __global__ void cu_math_f64(unsigned n, const double *x_, const double *y_, const double *z_, unsigned long long *out) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double x = x_[i], y = y_[i], z = z_[i];
  double s, c;
  sincos(x, &s, &c);
  const unsigned long long words[F64_OPS] = {
      (unsigned long long)__double_as_longlong(exp(x)),
      (unsigned long long)__double_as_longlong(exp2(x)),
      (unsigned long long)__double_as_longlong(exp10(x)),
      (unsigned long long)__double_as_longlong(expm1(x)),
      (unsigned long long)__double_as_longlong(log(x)),
      (unsigned long long)__double_as_longlong(log2(x)),
      (unsigned long long)__double_as_longlong(log10(x)),
      (unsigned long long)__double_as_longlong(log1p(x)),
      (unsigned long long)__double_as_longlong(sin(x)),
      (unsigned long long)__double_as_longlong(cos(x)),
      (unsigned long long)__double_as_longlong(tan(x)),
      (unsigned long long)__double_as_longlong(sinpi(x)),
      (unsigned long long)__double_as_longlong(cospi(x)),
      (unsigned long long)__double_as_longlong(asin(x)),
      (unsigned long long)__double_as_longlong(acos(x)),
      (unsigned long long)__double_as_longlong(atan(x)),
      (unsigned long long)__double_as_longlong(sinh(x)),
      (unsigned long long)__double_as_longlong(cosh(x)),
      (unsigned long long)__double_as_longlong(tanh(x)),
      (unsigned long long)__double_as_longlong(asinh(x)),
      (unsigned long long)__double_as_longlong(acosh(x)),
      (unsigned long long)__double_as_longlong(atanh(x)),
      (unsigned long long)__double_as_longlong(sqrt(x)),
      (unsigned long long)__double_as_longlong(rsqrt(x)),
      (unsigned long long)__double_as_longlong(cbrt(x)),
      (unsigned long long)__double_as_longlong(rcbrt(x)),
      (unsigned long long)__double_as_longlong(erf(x)),
      (unsigned long long)__double_as_longlong(erfc(x)),
      (unsigned long long)__double_as_longlong(erfinv(x)),
      (unsigned long long)__double_as_longlong(erfcinv(x)),
      (unsigned long long)__double_as_longlong(tgamma(x)),
      (unsigned long long)__double_as_longlong(lgamma(x)),
      (unsigned long long)__double_as_longlong(fabs(x)),
      (unsigned long long)__double_as_longlong(floor(x)),
      (unsigned long long)__double_as_longlong(ceil(x)),
      (unsigned long long)__double_as_longlong(trunc(x)),
      (unsigned long long)__double_as_longlong(round(x)),
      (unsigned long long)__double_as_longlong(rint(x)),
      (unsigned long long)__double_as_longlong(atan2(x, y)),
      (unsigned long long)__double_as_longlong(pow(x, y)),
      (unsigned long long)__double_as_longlong(hypot(x, y)),
      (unsigned long long)__double_as_longlong(fmin(x, y)),
      (unsigned long long)__double_as_longlong(fmax(x, y)),
      (unsigned long long)__double_as_longlong(fmod(x, y)),
      (unsigned long long)__double_as_longlong(remainder(x, y)),
      (unsigned long long)__double_as_longlong(copysign(x, y)),
      (unsigned long long)__double_as_longlong(fdim(x, y)),
      (unsigned long long)__double_as_longlong(fma(x, y, z)),
      (unsigned long long)__double_as_longlong(s),
      (unsigned long long)__double_as_longlong(c),
      (unsigned long long)__double_as_longlong(x + y),
      (unsigned long long)__double_as_longlong(x - y),
      (unsigned long long)__double_as_longlong(x * y),
      (unsigned long long)__double_as_longlong(x / y),
      (unsigned long long)__double_as_longlong(__fma_rn(x, y, z)),
      (unsigned long long)__double_as_longlong(__dadd_rz(x, y)),
      (unsigned long long)__double_as_longlong(__dmul_ru(x, y)),
      (unsigned long long)__double_as_longlong(__ddiv_rd(x, y)),
      (unsigned long long)__double_as_longlong(__dsqrt_ru(x)),
      (unsigned long long)__double_as_longlong(__drcp_rn(x)),
      (unsigned long long)__float_as_uint(__double2float_rz(x)),
      (unsigned long long)__double2ll_rn(x),
      (unsigned long long)__double_as_longlong(__ull2double_ru((unsigned long long)__double_as_longlong(x)))
  };
  for (int j = 0; j < F64_OPS; j++) out[(size_t)i * F64_OPS + j] = words[j];
}
