//! Hopper's warpgroup matrix multiply (`wgmma.mma_async`, sm_90a): four warps (a warpgroup of
//! 128 consecutive threads starting at a multiple of 128) multiply a 64 x N x 16 tile whose A
//! and B operands the tensor cores read from shared memory through [`MatrixDescriptor`]s,
//! accumulating into registers spread over the warpgroup.
//!
//! | CUDA / PTX | ptx-device |
//! |---|---|
//! | `wgmma.fence.sync.aligned` (CUTLASS `warpgroup_arrive`) | [`fence`] |
//! | `wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {d..}, descA, descB, p, 1, 1, 0, 0` | [`mma_async`]`::<f16, M64N256K16>(&mut acc, a, b, true)` |
//! | the same with `imm-trans-a`/`imm-trans-b` = 1 (MN-major operands) | [`mma_async_trans`]`::<f16, _, 1, 1>` |
//! | `wgmma.commit_group.sync.aligned` | [`commit_group`] |
//! | `wgmma.wait_group.sync.aligned N` (+ CUTLASS `warpgroup_fence_operand`) | [`wait_group`]`::<N, _>(&mut acc)` |
//! | the 64-bit shared-memory matrix descriptor (`GmmaDescriptor`) | [`MatrixDescriptor::new`] |
//! | `setmaxnreg.inc/dec.sync.aligned.u32 N` | [`setmaxnreg_inc`], [`setmaxnreg_dec`] |
//!
//! The shape is a type ([`M64N8K16`] .. [`M64N256K16`]) and the accumulator an
//! [`Accumulator<S>`] of `N / 2` `f32` a thread, so an accumulator of one shape cannot be passed
//! to another's multiply, and an operand type without that shape does not compile.
//!
//! Thread `t` of the warpgroup (warp `w = t / 32`, lane `l`) holds accumulator element `i` at
//! row `16w + l / 4 + 8 * ((i / 2) % 2)`, column `8 * (i / 4) + 2 * (l % 4) + i % 2` of the
//! 64 x N tile ([`Accumulator::coord`]): per 8 columns, the layout of an `mma.sync` C fragment.
//!
//! The instructions are sm_90a's: a build without sm_90a has them only under
//! [`crate::arch::has_wgmma`], or stops with an error naming the kernel and the instruction.
//! While a multiply is in flight its accumulator must not be read or written: [`wait_group`]
//! takes the accumulator, so the compiler cannot move its uses above the wait.

pub use crate::wgmma_shapes::{M64N128K16, M64N16K16, M64N256K16, M64N32K16, M64N64K16, M64N8K16};

// The warpgroup-wide instructions are LLVM's intrinsics, not `asm!`: those are `convergent`, so
// LLVM never duplicates them into the two arms of a divergent branch (rustc's inline asm is not,
// and an `.aligned` instruction reached from two places deadlocks). `mma_async` itself has no
// intrinsic LLVM 22 can be handed from Rust; it sits in uniform code between these.
unsafe extern "C" {
    #[link_name = "llvm.nvvm.wgmma.fence.sync.aligned"]
    fn wgmma_fence();
    #[link_name = "llvm.nvvm.wgmma.commit_group.sync.aligned"]
    fn wgmma_commit_group();
    #[link_name = "llvm.nvvm.wgmma.wait_group.sync.aligned"]
    pub(crate) fn wgmma_wait_group(pending: i64);
    #[link_name = "llvm.nvvm.setmaxnreg.inc.sync.aligned.u32"]
    fn setmaxnreg_inc_u32(n: i32);
    #[link_name = "llvm.nvvm.setmaxnreg.dec.sync.aligned.u32"]
    fn setmaxnreg_dec_u32(n: i32);
}

/// How the tensor cores see a shared-memory tile: its swizzle, matching the one the tile was
/// written with (TMA's `Swizzle`, or by hand).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Swizzle {
    /// No swizzle ("interleave"): 8 x 16-byte core matrices.
    None = 0,
    /// 128-byte swizzle: rows of 128 bytes, 8-row atoms of 1024 bytes.
    B128 = 1,
    /// 64-byte swizzle.
    B64 = 2,
    /// 32-byte swizzle.
    B32 = 3,
}

/// The 64-bit descriptor of a matrix in shared memory that `wgmma` reads (PTX ISA "Matrix
/// Descriptor Format"): start address, leading- and stride-dimension byte offsets (all in
/// 16-byte units), base offset 0 and the swizzle mode in bits 62-63.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(transparent)]
pub struct MatrixDescriptor(pub u64);

impl MatrixDescriptor {
    /// The descriptor of the tile at `p` (shared memory; with a swizzle, aligned to its atom:
    /// 1024 bytes for [`Swizzle::B128`]). For a K-major tile with 128-byte swizzle (64 `f16` a
    /// row), `leading_bytes` is 16 (unused) and `stride_bytes` 1024, the distance between
    /// 8-row groups.
    ///
    /// # Safety
    /// `p` points into shared memory.
    #[inline(always)]
    pub unsafe fn new<T>(p: *const T, leading_bytes: u32, stride_bytes: u32, swizzle: Swizzle) -> Self {
        let addr = crate::shared::shared_addr(p);
        MatrixDescriptor(
            ((addr & 0x3ffff) >> 4) | ((leading_bytes as u64 & 0x3ffff) >> 4) << 16 | ((stride_bytes as u64 & 0x3ffff) >> 4) << 32 | (swizzle as u64) << 62,
        )
    }

    /// The same layout `bytes` further on (a multiple of 16): the next 16-wide K slice of a
    /// K-major tile is `+32` bytes of `f16`, also under a swizzle.
    #[inline(always)]
    pub const fn add_bytes(self, bytes: u32) -> Self {
        MatrixDescriptor(self.0 + (bytes as u64 >> 4))
    }
}

/// A `wgmma` shape: `64 x N x 16`.
pub trait Shape: Sized {
    /// The accumulator registers of one thread: `[f32; N / 2]`.
    type Acc: Copy;
    /// The tile's `N`.
    const N: u32;
    #[doc(hidden)]
    fn zero() -> Self::Acc;
    #[doc(hidden)]
    unsafe fn wait<const PENDING: u32>(acc: &mut Accumulator<Self>);
    #[doc(hidden)]
    unsafe fn fence_operands(acc: &mut Accumulator<Self>);
}

/// An operand type `wgmma` multiplies in shape `S` (`f16` and `bf16` into `f32`).
#[diagnostic::on_unimplemented(
    message = "`wgmma.mma_async` has no shape `{S}` for `{Self}` operands here",
    note = "f16 and bf16 operands multiply as M64N8K16 .. M64N256K16 into f32 accumulators"
)]
pub trait Operand<S: Shape> {
    #[doc(hidden)]
    unsafe fn mma_async<const TRANS_A: u32, const TRANS_B: u32>(
        acc: &mut Accumulator<S>,
        a: MatrixDescriptor,
        b: MatrixDescriptor,
        scale_d: u32,
    );
}

/// One thread's share of a `64 x N` `f32` accumulator of shape `S`.
#[derive(Clone, Copy)]
pub struct Accumulator<S: Shape> {
    /// The registers (see [`Accumulator::coord`]).
    pub x: S::Acc,
}

impl<S: Shape> Accumulator<S> {
    /// All zeros.
    #[inline(always)]
    pub fn zero() -> Self {
        Accumulator { x: S::zero() }
    }

    /// `(row, col)` in the 64 x N tile of element `i` held by thread `t` (0..128) of the
    /// warpgroup.
    #[inline(always)]
    pub fn coord(t: u32, i: u32) -> (u32, u32) {
        let (w, l) = (t / 32, t % 32);
        (16 * w + l / 4 + 8 * ((i / 2) % 2), 8 * (i / 4) + 2 * (l % 4) + i % 2)
    }
}

/// `acc = A * B + acc` (or `A * B` when `accumulate` is false), A (64 x 16) and B (16 x N) read
/// from shared memory through their descriptors, both K-major (`imm-trans` 0): A as rows of
/// K, B as N rows of K, CUDA's "TN" layout (`wgmma.mma_async`, sm_90a). Asynchronous: it is
/// issued after [`fence`], grouped by [`commit_group`] and complete after [`wait_group`].
///
/// # Safety
/// All 128 threads of a warpgroup call it together with the same descriptors; the tiles stay
/// untouched until the wait; `acc` is not read or written until then.
#[inline(always)]
pub unsafe fn mma_async<E: Operand<S>, S: Shape>(acc: &mut Accumulator<S>, a: MatrixDescriptor, b: MatrixDescriptor, accumulate: bool) {
    E::mma_async::<0, 0>(acc, a, b, accumulate as u32)
}

/// [`mma_async`] with A (`TRANS_A = 1`) and/or B (`TRANS_B = 1`) MN-major in shared memory
/// (`imm-trans-a`, `imm-trans-b`; f16 and bf16 only).
///
/// # Safety
/// As [`mma_async`].
#[inline(always)]
pub unsafe fn mma_async_trans<E: Operand<S>, S: Shape, const TRANS_A: u32, const TRANS_B: u32>(
    acc: &mut Accumulator<S>,
    a: MatrixDescriptor,
    b: MatrixDescriptor,
    accumulate: bool,
) {
    const { assert!(TRANS_A <= 1 && TRANS_B <= 1, "imm-trans is 0 or 1") };
    E::mma_async::<TRANS_A, TRANS_B>(acc, a, b, accumulate as u32)
}

/// Orders this warpgroup's earlier register and shared-memory writes before the `wgmma`s that
/// follow (`wgmma.fence.sync.aligned`): needed before the first multiply into an accumulator
/// and after shared memory the multiply reads was written by this warpgroup.
///
/// # Safety
/// All threads of the warpgroup call it together.
#[inline(always)]
pub unsafe fn fence() {
    wgmma_fence()
}

/// Closes the group of `wgmma`s issued since the last one (`wgmma.commit_group.sync.aligned`).
///
/// # Safety
/// All threads of the warpgroup call it together.
#[inline(always)]
pub unsafe fn commit_group() {
    wgmma_commit_group()
}

/// Waits until at most `PENDING` groups are in flight (`wgmma.wait_group.sync.aligned`); the
/// accumulator passed is the one those groups write, and is safe to read afterwards.
///
/// # Safety
/// All threads of the warpgroup call it together.
#[inline(always)]
pub unsafe fn wait_group<const PENDING: u32, S: Shape>(acc: &mut Accumulator<S>) {
    S::wait::<PENDING>(acc)
}

/// Keeps the compiler from moving reads or writes of `acc` across this point (CUTLASS's
/// `warpgroup_fence_operand`); emits nothing.
#[inline(always)]
pub fn fence_operands<S: Shape>(acc: &mut Accumulator<S>) {
    // SAFETY: an empty asm.
    unsafe { S::fence_operands(acc) }
}

/// Raises this warp's register limit to `N` (`setmaxnreg.inc.sync.aligned.u32`, sm_90a; `N` a
/// multiple of 8 from 24 to 256). ptxas applies it only in a kernel with launch bounds
/// (`#[kernel(launch_bounds(384, 1))]`); the warps of a warpgroup call it together.
///
/// # Safety
/// All threads of the warp call it; the block's registers must suffice (what other warps gave
/// up with [`setmaxnreg_dec`]).
#[inline(always)]
pub unsafe fn setmaxnreg_inc<const N: u32>() {
    const { assert!(N >= 24 && N <= 256 && N % 8 == 0, "setmaxnreg takes a multiple of 8 from 24 to 256") };
    setmaxnreg_inc_u32(N as i32)
}

/// Lowers this warp's register limit to `N` (`setmaxnreg.dec.sync.aligned.u32`, sm_90a), for a
/// producer warpgroup that only issues copies.
///
/// # Safety
/// As [`setmaxnreg_inc`]; the warp must not need more than `N` registers afterwards.
#[inline(always)]
pub unsafe fn setmaxnreg_dec<const N: u32>() {
    const { assert!(N >= 24 && N <= 256 && N % 8 == 0, "setmaxnreg takes a multiple of 8 from 24 to 256") };
    setmaxnreg_dec_u32(N as i32)
}
