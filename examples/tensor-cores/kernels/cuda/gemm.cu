// The CUDA C++ twins of src/hgemm.rs and src/wgmma_gemm.rs: the same algorithms, tile shapes,
// pipelines and instructions, so that the two languages can be compared kernel for kernel.
// C = A * B^T, A M x K and B N x K row-major f16, C M x N row-major f16, f32 accumulation.
#include <cuda.h>
#include <cuda_fp16.h>
#include <stdint.h>

// ---- the sm_80 HGEMM: mma.sync m16n8k16 + ldmatrix + 4-stage cp.async ----------------------

#define MMA_BM 128
#define MMA_BN 256
#define MMA_BK 32
#define MMA_STAGES 4
#define MMA_LDS (MMA_BK + 8)  // padded rows: 80 bytes, conflict-free ldmatrix

__device__ __forceinline__ uint32_t smem_addr(const void *p) {
    return (uint32_t)__cvta_generic_to_shared(p);
}

__device__ __forceinline__ void cp_async_16(void *dst, const void *src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(smem_addr(dst)), "l"(__cvta_generic_to_global(src)) : "memory");
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], const void *row) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_addr(row)));
}

__device__ __forceinline__ void mma_16816(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ void mma_load_stage(__half *sA, __half *sB, const __half *gA, const __half *gB, int K, int kt, int tid) {
#pragma unroll
    for (int i = 0; i < 2; ++i) {
        int ch = tid + i * 256, row = ch / 4, col = (ch % 4) * 8;
        cp_async_16(sA + row * MMA_LDS + col, gA + (size_t)row * K + kt * MMA_BK + col);
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        int ch = tid + i * 256, row = ch / 4, col = (ch % 4) * 8;
        cp_async_16(sB + row * MMA_LDS + col, gB + (size_t)row * K + kt * MMA_BK + col);
    }
}

extern "C" __global__ void __launch_bounds__(256) cu_mma_hgemm(int M, int N, int K, const __half *__restrict__ A,
                                                               const __half *__restrict__ B, __half *__restrict__ C) {
    extern __shared__ __align__(16) __half mma_smem[];
    __half *sA = mma_smem;
    __half *sB = mma_smem + MMA_STAGES * MMA_BM * MMA_LDS;
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int wm = warp / 4, wn = warp % 4;
    const int bm = blockIdx.y * MMA_BM, bn = blockIdx.x * MMA_BN;
    const __half *gA = A + (size_t)bm * K, *gB = B + (size_t)bn * K;
    const int k_tiles = K / MMA_BK;

    float acc[4][8][4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;

#pragma unroll
    for (int s = 0; s < MMA_STAGES - 1; ++s) {
        if (s < k_tiles) mma_load_stage(sA + s * MMA_BM * MMA_LDS, sB + s * MMA_BN * MMA_LDS, gA, gB, K, s, tid);
        asm volatile("cp.async.commit_group;" ::: "memory");
    }
    for (int kt = 0; kt < k_tiles; ++kt) {
        asm volatile("cp.async.wait_group %0;" ::"n"(MMA_STAGES - 2) : "memory");
        __syncthreads();
        int next = kt + MMA_STAGES - 1;
        if (next < k_tiles) {
            int ns = next % MMA_STAGES;
            mma_load_stage(sA + ns * MMA_BM * MMA_LDS, sB + ns * MMA_BN * MMA_LDS, gA, gB, K, next, tid);
        }
        asm volatile("cp.async.commit_group;" ::: "memory");

        const int stage = kt % MMA_STAGES;
        const __half *sa = sA + stage * MMA_BM * MMA_LDS, *sb = sB + stage * MMA_BN * MMA_LDS;
#pragma unroll
        for (int kk = 0; kk < MMA_BK / 16; ++kk) {
            uint32_t fa[4][4], fb[8][2];
#pragma unroll
            for (int mi = 0; mi < 4; ++mi) {
                int row = wm * 64 + mi * 16 + lane % 16;
                ldmatrix_x4(fa[mi], sa + row * MMA_LDS + kk * 16 + (lane / 16) * 8);
            }
#pragma unroll
            for (int nj = 0; nj < 4; ++nj) {
                int row = wn * 64 + nj * 16 + lane % 8 + (lane / 16) * 8;
                uint32_t r[4];
                ldmatrix_x4(r, sb + row * MMA_LDS + kk * 16 + ((lane / 8) % 2) * 8);
                fb[2 * nj][0] = r[0];
                fb[2 * nj][1] = r[1];
                fb[2 * nj + 1][0] = r[2];
                fb[2 * nj + 1][1] = r[3];
            }
#pragma unroll
            for (int mi = 0; mi < 4; ++mi)
#pragma unroll
                for (int ni = 0; ni < 8; ++ni) mma_16816(acc[mi][ni], fa[mi], fb[ni][0], fb[ni][1]);
        }
    }

    const int g = lane / 4, t = lane % 4;
#pragma unroll
    for (int mi = 0; mi < 4; ++mi)
#pragma unroll
        for (int ni = 0; ni < 8; ++ni) {
            int row = bm + wm * 64 + mi * 16 + g, col = bn + wn * 64 + ni * 8 + 2 * t;
            *(__half2 *)(C + (size_t)row * N + col) = __floats2half2_rn(acc[mi][ni][0], acc[mi][ni][1]);
            *(__half2 *)(C + (size_t)(row + 8) * N + col) = __floats2half2_rn(acc[mi][ni][2], acc[mi][ni][3]);
        }
}

// ---- the sm_90a HGEMM: TMA + mbarrier pipeline, wgmma m64n256k16, warp specialization -------

#define WG_BM 128
#define WG_BN 256
#define WG_BK 64
#define WG_STAGES 4

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
__device__ __forceinline__ void mbar_init(uint64_t *bar, uint32_t count) {
    asm volatile("mbarrier.init.shared.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count) : "memory");
}

__device__ __forceinline__ void mbar_arrive(uint64_t *bar) {
    asm volatile("{\n.reg .b64 s;\nmbarrier.arrive.shared.b64 s, [%0];\n}" ::"r"(smem_addr(bar)) : "memory");
}

__device__ __forceinline__ void mbar_arrive_expect_tx(uint64_t *bar, uint32_t bytes) {
    asm volatile("{\n.reg .b64 s;\nmbarrier.arrive.expect_tx.shared.b64 s, [%0], %1;\n}" ::"r"(smem_addr(bar)), "r"(bytes) : "memory");
}

__device__ __forceinline__ bool mbar_try_wait(uint64_t *bar, uint32_t parity) {
    uint32_t done;
    asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}"
                 : "=r"(done)
                 : "r"(smem_addr(bar)), "r"(parity)
                 : "memory");
    return done != 0;
}

__device__ __forceinline__ void mbar_wait(uint64_t *bar, uint32_t parity) {
    while (!mbar_try_wait(bar, parity)) {
    }
}

__device__ __forceinline__ void tma_load_2d(void *dst, const CUtensorMap *map, int x, int y, uint64_t *bar) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(smem_addr(dst)),
        "l"(map), "r"(x), "r"(y), "r"(smem_addr(bar))
        : "memory");
}

// The 64-bit shared-memory matrix descriptor: address, leading and stride byte offsets in
// 16-byte units, 128-byte swizzle in bits 62-63.
__device__ __forceinline__ uint64_t sw128_desc(const void *p) {
    uint64_t a = smem_addr(p);
    return ((a & 0x3ffff) >> 4) | ((uint64_t)(16 >> 4) << 16) | ((uint64_t)(1024 >> 4) << 32) | (1ull << 62);
}

// wgmma.mma_async m64n256k16, f32 += f16 * f16, both operands K-major in shared memory.
__device__ __forceinline__ void wgmma_m64n256k16(float (&d)[128], uint64_t da, uint64_t db) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, %128, %129, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
          "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
          "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
          "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
          "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
          "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
          "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
          "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
          "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
        : "l"(da), "l"(db), "r"(1)
        : "memory");
}

// wgmma.wait_group 0, with every accumulator register as an operand so that the compiler keeps
// their uses after it (CUTLASS's warpgroup_fence_operand); the Rust twin's `wait_group` is the same.
__device__ __forceinline__ void wgmma_wait0(float (&d)[128]) {
    asm volatile("wgmma.wait_group.sync.aligned 0; // %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
          "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
          "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
          "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
          "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
          "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
          "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
          "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
          "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
        :: "memory");
}
#endif

extern "C" __global__ void __launch_bounds__(384, 1)
    cu_wgmma_hgemm(int M, int N, int K, const CUtensorMap *map_a, const CUtensorMap *map_b, __half *C) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ __align__(16) unsigned char wg_smem[];
    // 128-byte swizzled tiles must start on 1024-byte boundaries.
    unsigned char *base = wg_smem + ((1024 - (smem_addr(wg_smem) & 1023)) & 1023);
    __half *sA = (__half *)base;
    __half *sB = sA + WG_STAGES * WG_BM * WG_BK;
    uint64_t *full = (uint64_t *)(sB + WG_STAGES * WG_BN * WG_BK);
    uint64_t *empty = full + WG_STAGES;
    const int tid = threadIdx.x, wg = tid / 128, t = tid % 128;
    const int bm = blockIdx.y * WG_BM, bn = blockIdx.x * WG_BN;
    const int k_tiles = K / WG_BK;

    if (tid == 0) {
        for (int s = 0; s < WG_STAGES; ++s) {
            mbar_init(&full[s], 1);
            mbar_init(&empty[s], 8);  // one arrival from each warp of the two consumers
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();

    if (wg == 0) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
        if (t == 0) {
            for (int kt = 0; kt < k_tiles; ++kt) {
                int s = kt % WG_STAGES;
                if (kt >= WG_STAGES) mbar_wait(&empty[s], ((kt / WG_STAGES) + 1) & 1);
                mbar_arrive_expect_tx(&full[s], (WG_BM + WG_BN) * WG_BK * 2);
                tma_load_2d(sA + s * WG_BM * WG_BK, map_a, kt * WG_BK, bm, &full[s]);
                tma_load_2d(sB + s * WG_BN * WG_BK, map_b, kt * WG_BK, bn, &full[s]);
            }
        }
    } else {
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
        const int consumer = wg - 1;
        float d[128];
#pragma unroll
        for (int i = 0; i < 128; ++i) d[i] = 0.0f;
        for (int kt = 0; kt < k_tiles; ++kt) {
            int s = kt % WG_STAGES;
            mbar_wait(&full[s], (kt / WG_STAGES) & 1);
            uint64_t da = sw128_desc(sA + (s * WG_BM + consumer * 64) * WG_BK);
            uint64_t db = sw128_desc(sB + s * WG_BN * WG_BK);
            asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
            for (int kk = 0; kk < WG_BK / 16; ++kk) wgmma_m64n256k16(d, da + kk * 2, db + kk * 2);
            asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
            wgmma_wait0(d);
            if (t % 32 == 0) mbar_arrive(&empty[s]);
        }
        const int w = t / 32, l = t % 32;
        const int row = bm + consumer * 64 + w * 16 + l / 4;
#pragma unroll
        for (int j = 0; j < 32; ++j) {
            int col = bn + j * 8 + 2 * (l % 4);
            *(__half2 *)(C + (size_t)row * N + col) = __floats2half2_rn(d[4 * j], d[4 * j + 1]);
            *(__half2 *)(C + (size_t)(row + 8) * N + col) = __floats2half2_rn(d[4 * j + 2], d[4 * j + 3]);
        }
    }
#else
    __trap();
#endif
}
