//! Loops that are always unrolled, as CUDA's `#pragma unroll` on a constant trip count.
//!
//! LLVM unrolls a loop only when its cost model agrees, and in kernels with big bodies (the
//! inner product of a register-blocked SGEMM) it often keeps the loop: the indices then stay in
//! registers that must be computed at run time, and arrays indexed by them spill to local
//! memory. [`unroll`] writes the body out `N` times with each index a constant, so nothing is
//! left to a heuristic. (The crate-wide alternative is the `unroll-threshold` build option,
//! which raises `opt`'s budget for every loop.)

/// Calls `body(0)`, `body(1)`, .., `body(N - 1)` as straight-line code: each call gets its index
/// as a constant, so `a[i]` on a fixed-size array becomes a register, not an indexed access.
/// `N` is at most 64 (a bigger body is better left as a loop).
///
/// ```ignore
/// let mut acc = [0.0f32; 8];
/// unroll::<8>(|i| acc[i] = a[i].mul_add(b, acc[i]));   // #pragma unroll
/// ```
#[inline(always)]
pub fn unroll<const N: usize>(mut body: impl FnMut(usize)) {
    const { assert!(N <= 64, "unroll::<N> unrolls at most 64 steps: write a loop around a smaller unroll") };
    // Each `if` compares two constants, so it folds away even without optimisation passes
    // that know about loops: what remains is the `N` calls in order.
    macro_rules! steps {
        ($($i:literal)*) => {$(
            if $i < N {
                body($i);
            }
        )*};
    }
    steps!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31
           32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63);
}
