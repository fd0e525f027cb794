//! Rust GPU kernels that read like CUDA.
//!
//! A `#![no_std]` crate for kernel crates that `cargo ptx` builds for `nvptx64-nvidia-cuda`:
//! what a CUDA C++ author reaches for, under names a CUDA reader recognises.
//!
//! | CUDA C++ | ptx-device |
//! |---|---|
//! | `__global__ void f(..)` | [`#[kernel]`](macro@kernel) `pub unsafe fn f(..)` |
//! | `__launch_bounds__(256, 2)`, `__maxnreg__(64)` | `#[kernel(launch_bounds(256, 2), max_registers(64))]` |
//! | `threadIdx`, `blockIdx`, `blockDim`, `gridDim`, `warpSize` | [`index`]: [`thread_idx()`](index::thread_idx)`.x`, .., [`global_index()`](index::global_index), [`lane_id()`](index::lane_id) |
//! | `__syncthreads`, `__syncwarp`, `__threadfence*` | [`sync`] |
//! | `__shared__ T a[N]`, `extern __shared__ T a[]` | [`shared_array!`], [`shared::dynamic_shared`] (in the shared state space: `ld.shared`/`st.shared`) |
//! | `__shfl*_sync(.., width)`, `__all_sync`, `__ballot_sync`, `__activemask`, `__match*_sync` | [`warp`] |
//! | `atomicAdd`, `atomicAdd_block`, `atomicAdd_system`, `atomicCAS`, `atomicInc`, .. (and shared/`red` forms) | [`atomic`] |
//! | `float4`, `uint4`, `double2`, .., 16-byte loads and stores | [`vector`] |
//! | `#pragma unroll` | [`unroll::unroll`] |
//! | `clock()`, `clock64()`, `%globaltimer` | [`time`] |
//! | `expf`, `__expf`, `rsqrt`, .. (libdevice) | [`math`] (safe), [`libdevice`] (all 349, raw) |
//! | `__umulhi`, `__byte_perm`, `__ldg`, inline PTX carry chains, `cp.async` | [`int`], [`mem`] |
//! | `__half`, `__nv_bfloat16`, `__half2`, `__hfma2`, .. | [`half`]: [`f16`](half::f16), [`bf16`](half::bf16), [`f16x2`](half::f16x2), [`bf16x2`](half::bf16x2) |
//! | `mma.sync` (f16, bf16, tf32, int8), `ldmatrix`, `stmatrix` | [`mma`] |
//! | `wgmma.mma_async` and its descriptors, `setmaxnreg` (sm_90a) | [`wgmma`] |
//! | TMA: `CUtensorMap`, `cp.async.bulk.tensor` (sm_90) | [`tma`] |
//! | `mbarrier`, `fence.proxy.async` | [`barrier`] |
//! | `__cluster_dims__`, `cluster.sync()`, distributed shared memory (sm_90) | [`cluster`], `#[kernel(cluster_dims(..))]` |
//! | `__CUDA_ARCH__`, `__CUDA_ARCH_FEAT_SM90_ALL`, `__launch_bounds__` | [`arch`], `#[kernel(launch_bounds(..))]` |
//!
//! A kernel crate needs no `#![feature]` of its own to use it:
//!
//! ```ignore
//! #![no_std]
//! use ptx_device::{index::global_index, kernel, math};
//!
//! /// `y[i] = exp(x[i])`.
//! #[kernel]
//! pub unsafe fn exp_kernel(n: u32, x: *const f32, y: *mut f32) {
//!     let i = global_index();
//!     if i < n as usize {
//!         *y.add(i) = math::exp(*x.add(i));
//!     }
//! }
//! ```
//!
//! Functions whose misuse is undefined behaviour on the GPU (a barrier in divergent code, a
//! warp mask that leaves out the calling thread, a raw pointer) are `unsafe fn` and say why in
//! their `# Safety` section; kernels are `unsafe fn` themselves, so their bodies call them
//! directly. [`guide`] maps NVIDIA's inline-PTX reference onto Rust's `asm!`.
//!
//! The minimum arch is sm_70 (`shfl.sync`, `fence.acq_rel`); [`mem::cp_async`] needs sm_80 and
//! is compiled out by `#[cfg(target_feature = "sm_80")]` below it (rustc sees the lowest arch of
//! a build). The tensor-core modules are not: one crate may carry an sm_80 and an sm_90a path,
//! chosen per arch at link time by [`arch`]'s queries, and an instruction left in the code of an
//! arch that lacks it is a build error naming the kernel, the instruction and the arch. The
//! guide from CUDA's tensor-core names to these is
//! [docs/tensor-cores.md](https://github.com/cargo-ptx/cargo-ptx/blob/main/ptx-device/docs/tensor-cores.md).
#![no_std]
// The host doc mode (docs.rs, `cargo doc`): rustdoc on the host documents every item, its body
// unchecked, so the nvptx-only pieces (`core::arch::nvptx`, the panic handler) are cfg'd to the
// GPU and the feature gates stay on for both (rustdoc checks them; docs.rs runs a nightly).
#![cfg_attr(any(target_arch = "nvptx64", doc), feature(link_llvm_intrinsics, allow_internal_unstable))]
#![cfg_attr(target_arch = "nvptx64", feature(asm_experimental_arch, stdarch_nvptx))]
#![allow(internal_features)]
#![warn(missing_docs)]

// Any other host build is refused rather than made harmless: a kernel crate compiled for the
// host (a kernel crate listed as a member of the host workspace, a `cargo build` in its folder)
// is always a mistake, and this names the fix where stubs would fail later with a confusing
// link error or, worse, a host binary whose "kernels" do nothing.
#[cfg(not(any(target_arch = "nvptx64", doc)))]
compile_error!("ptx-device is for GPU kernels: build the kernel crate with `cargo ptx build` (nvptx64-nvidia-cuda), not for the host");

/// Applies `cfg(any(target_arch = "nvptx64", doc))` to each item: on the host they exist only
/// for rustdoc, so a host build shows the one error above instead of a screenful.
macro_rules! gpu_or_doc {
    ($($item:item)*) => { $(#[cfg(any(target_arch = "nvptx64", doc))] $item)* };
}

gpu_or_doc! {
    pub mod arch;
    pub mod atomic;
    pub mod barrier;
    pub mod cluster;
    pub mod guide;
    pub mod half;
    pub mod index;
    pub mod int;
    pub mod libdevice;
    pub mod math;
    pub mod mem;
    pub mod mma;
    pub mod shared;
    pub mod sync;
    pub mod time;
    pub mod tma;
    pub mod unroll;
    pub mod vector;
    pub mod warp;
    pub mod wgmma;
    mod wgmma_shapes;

    pub use ptx_device_macros::{kernel, launch_bounds, shared_array};

    /// Everything a kernel usually needs, for `use ptx_device::prelude::*`.
    pub mod prelude {
        pub use crate::atomic::*;
        pub use crate::index::*;
        pub use crate::shared::{dynamic_shared, SharedPtr};
        pub use crate::sync::*;
        pub use crate::unroll::unroll;
        pub use crate::vector::{f32x2, f32x4, f64x2, i32x4, u32x2, u32x4, u64x2};
        pub use crate::warp::*;
        pub use crate::{kernel, launch_bounds, math, shared_array};
    }
}

/// What `#[kernel]` expands to. The `extern "ptx-kernel"` token is written here, so the
/// kernel crate needs no `#![feature(abi_ptx)]`.
#[cfg(any(target_arch = "nvptx64", doc))]
#[doc(hidden)]
#[macro_export]
#[allow_internal_unstable(abi_ptx)]
macro_rules! __kernel {
    ([$($attr:tt)*] [$($vis:tt)*] $name:ident [$($params:tt)*] $body:block) => {
        $($attr)*
        #[no_mangle]
        $($vis)* unsafe extern "ptx-kernel" fn $name($($params)*) $body
    };
}

#[cfg(all(feature = "panic-handler", target_arch = "nvptx64"))]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // SAFETY: `trap` ends the kernel with an error the host sees as a launch failure.
    unsafe { core::arch::nvptx::trap() }
}
