//! CUDA's vector types (`float2`, `float4`, `uint4`, `double2`, ..) and the 8- and 16-byte
//! loads and stores they exist for: one `ld.global.v4.f32` moves 16 bytes per thread, which a
//! bandwidth-bound kernel needs to reach the memory's speed, and a 16-byte copy into shared
//! memory stays one instruction instead of two 8-byte ones.
//!
//! Each type is `#[repr(C, align(N))]` with its size as alignment, as CUDA's are: a reference or
//! a well-made pointer to one is aligned, so the vector instructions (which fault on a misaligned
//! address) are safe to use on it. A pointer cast from a `*const f32` that is not a multiple of
//! 16 bytes is *not*: casting is where the alignment has to be checked (a misaligned vector
//! access is undefined behaviour, a "misaligned address" launch error in practice).
//!
//! Plain `*p` / `*p = v` on these types already compile to vector accesses where LLVM sees the
//! alignment; the functions below say the state space and cache policy too: [`ld_global`],
//! [`ld_global_nc`] (`__ldg`), [`st_global`], [`ld_shared`], [`st_shared`].

use core::arch::asm;

use crate::shared::{global_addr, shared_addr};

mod sealed {
    pub trait Sealed {}
}

/// A vector type the loads and stores of this module move in one instruction.
pub trait Vector: Copy + sealed::Sealed {
    #[doc(hidden)]
    unsafe fn ld_global(p: *const Self) -> Self;
    #[doc(hidden)]
    unsafe fn ld_global_nc(p: *const Self) -> Self;
    #[doc(hidden)]
    unsafe fn st_global(p: *mut Self, v: Self);
    #[doc(hidden)]
    unsafe fn ld_shared(p: *const Self) -> Self;
    #[doc(hidden)]
    unsafe fn st_shared(p: *mut Self, v: Self);
}

macro_rules! vec4 {
    ($($(#[$doc:meta])* $name:ident($t:ty, $align:literal) = $ptx:literal, $reg:ident;)*) => {$(
        $(#[$doc])*
        #[allow(non_camel_case_types)]
        #[repr(C, align($align))]
        #[derive(Clone, Copy, Debug, Default, PartialEq)]
        pub struct $name {
            /// Lane 0.
            pub x: $t,
            /// Lane 1.
            pub y: $t,
            /// Lane 2.
            pub z: $t,
            /// Lane 3.
            pub w: $t,
        }

        impl $name {
            /// `{x, y, z, w}` (`make_float4`).
            #[inline(always)]
            pub const fn new(x: $t, y: $t, z: $t, w: $t) -> Self {
                $name { x, y, z, w }
            }
        }

        impl sealed::Sealed for $name {}
        impl Vector for $name {
            #[inline(always)]
            unsafe fn ld_global(p: *const Self) -> Self {
                let (x, y, z, w): ($t, $t, $t, $t);
                asm!(concat!("ld.global.v4.", $ptx, " {{{x}, {y}, {z}, {w}}}, [{p}];"),
                    p = in(reg64) global_addr(p), x = out($reg) x, y = out($reg) y, z = out($reg) z, w = out($reg) w,
                    options(readonly, nostack, preserves_flags));
                $name { x, y, z, w }
            }
            #[inline(always)]
            unsafe fn ld_global_nc(p: *const Self) -> Self {
                let (x, y, z, w): ($t, $t, $t, $t);
                asm!(concat!("ld.global.nc.v4.", $ptx, " {{{x}, {y}, {z}, {w}}}, [{p}];"),
                    p = in(reg64) global_addr(p), x = out($reg) x, y = out($reg) y, z = out($reg) z, w = out($reg) w,
                    // The data must not change while the kernel runs: two loads may merge.
                    options(pure, readonly, nostack, preserves_flags));
                $name { x, y, z, w }
            }
            #[inline(always)]
            unsafe fn st_global(p: *mut Self, v: Self) {
                asm!(concat!("st.global.v4.", $ptx, " [{p}], {{{x}, {y}, {z}, {w}}};"),
                    p = in(reg64) global_addr(p), x = in($reg) v.x, y = in($reg) v.y, z = in($reg) v.z, w = in($reg) v.w,
                    options(nostack, preserves_flags));
            }
            #[inline(always)]
            unsafe fn ld_shared(p: *const Self) -> Self {
                let (x, y, z, w): ($t, $t, $t, $t);
                asm!(concat!("ld.shared.v4.", $ptx, " {{{x}, {y}, {z}, {w}}}, [{a}];"),
                    a = in(reg64) shared_addr(p), x = out($reg) x, y = out($reg) y, z = out($reg) z, w = out($reg) w,
                    options(readonly, nostack, preserves_flags));
                $name { x, y, z, w }
            }
            #[inline(always)]
            unsafe fn st_shared(p: *mut Self, v: Self) {
                asm!(concat!("st.shared.v4.", $ptx, " [{a}], {{{x}, {y}, {z}, {w}}};"),
                    a = in(reg64) shared_addr(p), x = in($reg) v.x, y = in($reg) v.y, z = in($reg) v.z, w = in($reg) v.w,
                    options(nostack, preserves_flags));
            }
        }
    )*};
}

macro_rules! vec2 {
    ($($(#[$doc:meta])* $name:ident($t:ty, $align:literal) = $ptx:literal, $reg:ident;)*) => {$(
        $(#[$doc])*
        #[allow(non_camel_case_types)]
        #[repr(C, align($align))]
        #[derive(Clone, Copy, Debug, Default, PartialEq)]
        pub struct $name {
            /// Lane 0.
            pub x: $t,
            /// Lane 1.
            pub y: $t,
        }

        impl $name {
            /// `{x, y}` (`make_float2`).
            #[inline(always)]
            pub const fn new(x: $t, y: $t) -> Self {
                $name { x, y }
            }
        }

        impl sealed::Sealed for $name {}
        impl Vector for $name {
            #[inline(always)]
            unsafe fn ld_global(p: *const Self) -> Self {
                let (x, y): ($t, $t);
                asm!(concat!("ld.global.v2.", $ptx, " {{{x}, {y}}}, [{p}];"),
                    p = in(reg64) global_addr(p), x = out($reg) x, y = out($reg) y, options(readonly, nostack, preserves_flags));
                $name { x, y }
            }
            #[inline(always)]
            unsafe fn ld_global_nc(p: *const Self) -> Self {
                let (x, y): ($t, $t);
                asm!(concat!("ld.global.nc.v2.", $ptx, " {{{x}, {y}}}, [{p}];"),
                    p = in(reg64) global_addr(p), x = out($reg) x, y = out($reg) y, options(pure, readonly, nostack, preserves_flags));
                $name { x, y }
            }
            #[inline(always)]
            unsafe fn st_global(p: *mut Self, v: Self) {
                asm!(concat!("st.global.v2.", $ptx, " [{p}], {{{x}, {y}}};"),
                    p = in(reg64) global_addr(p), x = in($reg) v.x, y = in($reg) v.y, options(nostack, preserves_flags));
            }
            #[inline(always)]
            unsafe fn ld_shared(p: *const Self) -> Self {
                let (x, y): ($t, $t);
                asm!(concat!("ld.shared.v2.", $ptx, " {{{x}, {y}}}, [{a}];"),
                    a = in(reg64) shared_addr(p), x = out($reg) x, y = out($reg) y, options(readonly, nostack, preserves_flags));
                $name { x, y }
            }
            #[inline(always)]
            unsafe fn st_shared(p: *mut Self, v: Self) {
                asm!(concat!("st.shared.v2.", $ptx, " [{a}], {{{x}, {y}}};"),
                    a = in(reg64) shared_addr(p), x = in($reg) v.x, y = in($reg) v.y, options(nostack, preserves_flags));
            }
        }
    )*};
}

vec4! {
    /// Four `f32`, 16-aligned: CUDA's `float4`.
    f32x4(f32, 16) = "f32", reg32;
    /// Four `u32`, 16-aligned: CUDA's `uint4`.
    u32x4(u32, 16) = "u32", reg32;
    /// Four `i32`, 16-aligned: CUDA's `int4`.
    i32x4(i32, 16) = "s32", reg32;
}

vec2! {
    /// Two `f32`, 8-aligned: CUDA's `float2`.
    f32x2(f32, 8) = "f32", reg32;
    /// Two `u32`, 8-aligned: CUDA's `uint2`.
    u32x2(u32, 8) = "u32", reg32;
    /// Two `f64`, 16-aligned: CUDA's `double2`.
    f64x2(f64, 16) = "f64", reg64;
    /// Two `u64`, 16-aligned: CUDA's `ulonglong2`.
    u64x2(u64, 16) = "u64", reg64;
}

/// Loads `*p` from global memory in one vector instruction (`ld.global.v4`/`.v2`).
///
/// # Safety
/// `p` points to a valid `V` in global memory, aligned to `align_of::<V>()`.
#[inline(always)]
pub unsafe fn ld_global<V: Vector>(p: *const V) -> V {
    V::ld_global(p)
}

/// Loads `*p` through the read-only data cache (`__ldg`, `ld.global.nc.v4`/`.v2`).
///
/// # Safety
/// As [`ld_global`], and no thread writes `*p` while the kernel runs.
#[inline(always)]
pub unsafe fn ld_global_nc<V: Vector>(p: *const V) -> V {
    V::ld_global_nc(p)
}

/// Stores `v` to global memory in one vector instruction (`st.global.v4`/`.v2`).
///
/// # Safety
/// `p` points to a `V` in global memory, aligned to `align_of::<V>()`, that this thread may
/// write.
#[inline(always)]
pub unsafe fn st_global<V: Vector>(p: *mut V, v: V) {
    V::st_global(p, v)
}

/// Loads `*p` from shared memory in one vector instruction (`ld.shared.v4`/`.v2`, SASS
/// `LDS.128`/`LDS.64`).
///
/// # Safety
/// `p` points to a valid `V` in this block's shared memory, aligned to `align_of::<V>()`.
#[inline(always)]
pub unsafe fn ld_shared<V: Vector>(p: *const V) -> V {
    V::ld_shared(p)
}

/// Stores `v` to shared memory in one vector instruction (`st.shared.v4`/`.v2`).
///
/// # Safety
/// `p` points to a `V` in this block's shared memory, aligned to `align_of::<V>()`.
#[inline(always)]
pub unsafe fn st_shared<V: Vector>(p: *mut V, v: V) {
    V::st_shared(p, v)
}
