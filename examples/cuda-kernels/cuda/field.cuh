// A prime field in sppark's style (the CUDA library under risc0's and SP1's provers): the element
// is a struct, the kernels name it by a typedef, and the PTX scope of an asm sequence is opened
// and closed by asm statements of their own.
#pragma once

#include <cstdint>

// Goldilocks: p = 2^64 - 2^32 + 1 (plonky2's field, sppark's `gl64_t`).
struct gl64_t {
    uint64_t v;
};
typedef gl64_t fr_t;

#define GL_P 0xffffffff00000001ull

// a + b mod p for canonical a, b. The sum may wrap past 2^64: then it is 2^64 - p = 2^32 - 1 short.
__device__ __forceinline__ uint64_t gl_add(uint64_t a, uint64_t b) {
    uint64_t r;
    asm volatile("{");
    asm volatile(".reg.pred %wrapped;");
    asm volatile("add.u64 %0, %1, %2;" : "=l"(r) : "l"(a), "l"(b));
    asm volatile("setp.lt.u64 %wrapped, %0, %1;" ::"l"(r), "l"(a));
    asm volatile("@%wrapped add.u64 %0, %0, 4294967295;" : "+l"(r));
    asm volatile("}");
    return r >= GL_P ? r - GL_P : r;
}
