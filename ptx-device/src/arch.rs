//! Which GPU the code is being compiled for, answered per arch of one build: CUDA's
//! `__CUDA_ARCH__`, `__CUDA_ARCH_SPECIFIC__` and `__CUDA_ARCH_FAMILY_SPECIFIC__`.
//!
//! A kernel crate is compiled once by rustc (for the lowest arch of the build) and linked once
//! per arch; cargo-ptx's link stage answers these queries for each arch it links (LLVM's
//! NVVMReflect, as for libdevice), and drops the branches that do not apply before code is
//! generated. So one kernel can carry a Hopper path and an Ampere one:
//!
//! ```ignore
//! if arch::has_wgmma() {
//!     // wgmma + TMA: only in the sm_90a image
//! } else {
//!     // mma.sync: in every other image
//! }
//! ```
//!
//! and a build for `sm_80,sm_90a` assembles `wgmma` only into the sm_90a cubin. An instruction
//! left in the code of an arch that lacks it (no query around it, or a build without the arch
//! it needs) stops the build with an error naming the kernel, the instruction and the arch
//! (not ptxas's raw message). `cfg(target_feature = "sm_90")` cannot do this: rustc sees only
//! the lowest arch of the build.
//!
//! The answers are constants after linking: a query costs nothing at run time. Kernels must be
//! linked by cargo-ptx (or ptx-build), which defines them; another linker leaves the call to
//! `__ptx_device_reflect` undefined.

unsafe extern "C" {
    /// Renamed to `__nvvm_reflect` by the link stage. Not called `__nvvm_reflect` here: rustc's
    /// own LLVM pipeline runs NVVMReflect too, for the lowest arch, and would answer for every
    /// arch of the build at once.
    fn __ptx_device_reflect(name: *const u8) -> i32;
}

// The names as statics, passed by address with no call in between: NVVMReflect needs the
// argument to be a constant string even in a debug build, where `c"..".as_ptr()` stays a call.
static ARCH: [u8; 12] = *b"__CUDA_ARCH\0";
static SPECIFIC: [u8; 21] = *b"__CUDA_ARCH_SPECIFIC\0";
static FAMILY: [u8; 28] = *b"__CUDA_ARCH_FAMILY_SPECIFIC\0";

/// `__CUDA_ARCH__`: the compute capability as `major * 100 + minor * 10` (800 on sm_80, 900 on
/// sm_90 and sm_90a, 1000 on sm_100a).
#[inline(always)]
pub fn cuda_arch() -> u32 {
    // SAFETY: resolved to a constant at link time; the string is NUL-terminated.
    unsafe { __ptx_device_reflect(core::ptr::addr_of!(ARCH) as *const u8) as u32 }
}

/// `__CUDA_ARCH_SPECIFIC__`: [`cuda_arch`] on an arch-specific target (`sm_90a`, `sm_100a`),
/// 0 elsewhere. The `a` targets have instructions no later GPU promises (`wgmma`, `setmaxnreg`
/// on sm_90a); their cubins load only on that exact compute capability.
#[inline(always)]
pub fn arch_specific() -> u32 {
    // SAFETY: as above.
    unsafe { __ptx_device_reflect(core::ptr::addr_of!(SPECIFIC) as *const u8) as u32 }
}

/// `__CUDA_ARCH_FAMILY_SPECIFIC__`: [`cuda_arch`] on a family target (`sm_100f`) or an
/// arch-specific one (`sm_100a` has its family's features), 0 elsewhere.
#[inline(always)]
pub fn family_specific() -> u32 {
    // SAFETY: as above.
    unsafe { __ptx_device_reflect(core::ptr::addr_of!(FAMILY) as *const u8) as u32 }
}

/// Whether this is sm_90a: `wgmma`, `setmaxnreg` (CUDA's `__CUDA_ARCH_FEAT_SM90_ALL`).
#[inline(always)]
pub fn has_wgmma() -> bool {
    arch_specific() == 900
}

/// Whether this arch has sm_90's instructions: TMA (`cp.async.bulk.tensor`), `stmatrix`,
/// `mbarrier` transaction counts, clusters and distributed shared memory.
#[inline(always)]
pub fn has_sm90() -> bool {
    cuda_arch() >= 900
}

/// Whether this arch has sm_80's: `mma.sync` on f16/bf16/tf32/int8, `cp.async`, `ldmatrix`
/// (sm_75), `bf16` arithmetic.
#[inline(always)]
pub fn has_sm80() -> bool {
    cuda_arch() >= 800
}
