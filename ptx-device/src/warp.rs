//! Warp-level operations: shuffles, votes, `activemask` and `match`.
//!
//! Shuffles, votes and `activemask` call the LLVM intrinsics that nvcc's front end uses: they
//! are marked *convergent*, so LLVM never moves one into code that only some lanes run, a
//! guarantee an `asm!` statement does not carry. `match.all` (whose intrinsic returns a pair
//! Rust cannot declare) is `asm!`.
//!
//! Every `*_sync` function takes the mask of lanes that take part. Misuse is undefined
//! behaviour in PTX, hence `unsafe`: the calling lane must be in `mask`, and every lane of
//! `mask` must execute the same call. [`activemask`] gives the lanes running now, for code
//! that is already divergent.

use core::arch::asm;

/// The mask of all 32 lanes.
pub const FULL_MASK: u32 = u32::MAX;

unsafe extern "C" {
    #[link_name = "llvm.nvvm.shfl.sync.idx.i32"]
    fn shfl_idx(mask: u32, v: i32, b: u32, c: u32) -> i32;
    #[link_name = "llvm.nvvm.shfl.sync.up.i32"]
    fn shfl_up(mask: u32, v: i32, b: u32, c: u32) -> i32;
    #[link_name = "llvm.nvvm.shfl.sync.down.i32"]
    fn shfl_down(mask: u32, v: i32, b: u32, c: u32) -> i32;
    #[link_name = "llvm.nvvm.shfl.sync.bfly.i32"]
    fn shfl_bfly(mask: u32, v: i32, b: u32, c: u32) -> i32;
    #[link_name = "llvm.nvvm.vote.all.sync"]
    fn vote_all(mask: u32, pred: bool) -> bool;
    #[link_name = "llvm.nvvm.vote.any.sync"]
    fn vote_any(mask: u32, pred: bool) -> bool;
    #[link_name = "llvm.nvvm.vote.ballot.sync"]
    fn vote_ballot(mask: u32, pred: bool) -> u32;
    #[link_name = "llvm.nvvm.activemask"]
    fn active_mask() -> u32;
    #[cfg(any(target_feature = "sm_70", doc))]
    #[link_name = "llvm.nvvm.match.any.sync.i32"]
    fn match_any_32(mask: u32, v: u32) -> u32;
    #[cfg(any(target_feature = "sm_70", doc))]
    #[link_name = "llvm.nvvm.match.any.sync.i64"]
    fn match_any_64(mask: u32, v: u64) -> u32;
}

/// Which lane a shuffle reads: the `shfl.sync` mode.
#[doc(hidden)]
#[derive(Clone, Copy)]
pub enum Mode {
    Idx,
    Up,
    Down,
    Xor,
}

/// One `shfl.sync.b32` in segments of `width` lanes. `c` packs the segment mask
/// (`(32 - width) << 8`; 0 for the whole warp) with the clamp lane: 31 for idx/down/xor, 0 for up,
/// exactly as CUDA's `__shfl*_sync(.., width)` compute it.
#[inline(always)]
unsafe fn shfl32(mode: Mode, mask: u32, v: u32, b: u32, width: u32) -> u32 {
    let seg = (32u32.wrapping_sub(width) & 0x1f) << 8;
    (match mode {
        Mode::Idx => shfl_idx(mask, v as i32, b, seg | 0x1f),
        Mode::Up => shfl_up(mask, v as i32, b, seg),
        Mode::Down => shfl_down(mask, v as i32, b, seg | 0x1f),
        Mode::Xor => shfl_bfly(mask, v as i32, b, seg | 0x1f),
    }) as u32
}

mod sealed {
    pub trait Sealed {}
}

/// A value a shuffle can move between lanes: 32-bit values in one `shfl.sync`, 64-bit ones as
/// two halves, as CUDA does for `double` and `long long`.
pub trait Shuffle: Copy + sealed::Sealed {
    #[doc(hidden)]
    unsafe fn shuffle(self, mode: Mode, mask: u32, b: u32, width: u32) -> Self;
}

macro_rules! shuffle_32 {
    ($($t:ty: $to:expr, $from:expr;)*) => {$(
        impl sealed::Sealed for $t {}
        impl Shuffle for $t {
            #[inline(always)]
            unsafe fn shuffle(self, mode: Mode, mask: u32, b: u32, width: u32) -> Self {
                $from(shfl32(mode, mask, $to(self), b, width))
            }
        }
    )*};
}

macro_rules! shuffle_64 {
    ($($t:ty: $to:expr, $from:expr;)*) => {$(
        impl sealed::Sealed for $t {}
        impl Shuffle for $t {
            #[inline(always)]
            unsafe fn shuffle(self, mode: Mode, mask: u32, b: u32, width: u32) -> Self {
                let bits: u64 = $to(self);
                let lo = shfl32(mode, mask, bits as u32, b, width) as u64;
                let hi = shfl32(mode, mask, (bits >> 32) as u32, b, width) as u64;
                $from(hi << 32 | lo)
            }
        }
    )*};
}

shuffle_32! {
    u32: |v| v, |b| b;
    i32: |v: i32| v as u32, |b| b as i32;
    f32: f32::to_bits, f32::from_bits;
}
shuffle_64! {
    u64: |v| v, |b| b;
    i64: |v: i64| v as u64, |b| b as i64;
    f64: f64::to_bits, f64::from_bits;
}

macro_rules! shuffles {
    ($($(#[$doc:meta])* $name:ident, $width_name:ident($b:ident) = $mode:ident;)*) => {$(
        $(#[$doc])*
        ///
        /// # Safety
        /// The calling lane must be in `mask`, and every lane of `mask` must make this call.
        #[inline(always)]
        pub unsafe fn $name<T: Shuffle>(mask: u32, value: T, $b: u32) -> T {
            value.shuffle(Mode::$mode, mask, $b, 32)
        }

        #[doc = concat!("[`", stringify!($name), "`] within segments of `width` lanes (CUDA's `width` argument): ")]
        /// the warp acts as `32 / width` independent groups, lane numbers counted from each
        /// group's first lane.
        ///
        /// # Safety
        /// As the whole-warp form; `width` is a power of two from 1 to 32 (else the lanes read are
        /// unspecified, as in CUDA).
        #[inline(always)]
        pub unsafe fn $width_name<T: Shuffle>(mask: u32, value: T, $b: u32, width: u32) -> T {
            value.shuffle(Mode::$mode, mask, $b, width)
        }
    )*};
}

shuffles! {
    /// `value` of lane `src_lane` (`__shfl_sync`).
    shfl_sync, shfl_width_sync(src_lane) = Idx;
    /// `value` of lane `lane_id - delta`; lanes below `delta` keep their own (`__shfl_up_sync`).
    shfl_up_sync, shfl_up_width_sync(delta) = Up;
    /// `value` of lane `lane_id + delta`; lanes past 31 keep their own (`__shfl_down_sync`).
    shfl_down_sync, shfl_down_width_sync(delta) = Down;
    /// `value` of lane `lane_id ^ lane_mask`, the butterfly of a reduction (`__shfl_xor_sync`).
    shfl_xor_sync, shfl_xor_width_sync(lane_mask) = Xor;
}

/// Whether `pred` holds on every lane of `mask` (`__all_sync`).
///
/// # Safety
/// The calling lane must be in `mask`, and every lane of `mask` must make this call.
#[inline(always)]
pub unsafe fn all_sync(mask: u32, pred: bool) -> bool {
    vote_all(mask, pred)
}

/// Whether `pred` holds on some lane of `mask` (`__any_sync`).
///
/// # Safety
/// As [`all_sync`].
#[inline(always)]
pub unsafe fn any_sync(mask: u32, pred: bool) -> bool {
    vote_any(mask, pred)
}

/// The lanes of `mask` where `pred` holds, bit `i` for lane `i` (`__ballot_sync`).
///
/// # Safety
/// As [`all_sync`].
#[inline(always)]
pub unsafe fn ballot_sync(mask: u32, pred: bool) -> u32 {
    vote_ballot(mask, pred)
}

/// The lanes running this instruction now (`__activemask()`): not a synchronisation, just what
/// the hardware reports.
#[inline(always)]
pub fn activemask() -> u32 {
    // SAFETY: `activemask` has no preconditions.
    unsafe { active_mask() }
}

/// A value `match.sync` compares between lanes: 32-bit or 64-bit, by its bits.
#[cfg(any(target_feature = "sm_70", doc))]
pub trait Match: Copy + sealed::Sealed {
    #[doc(hidden)]
    unsafe fn match_any(self, mask: u32) -> u32;
    #[doc(hidden)]
    unsafe fn match_all(self, mask: u32) -> u32;
}

#[cfg(any(target_feature = "sm_70", doc))]
macro_rules! match_impls {
    ($($t:ty: $bits:ty = $to:expr, $any:ident, $ptx:literal, $reg:ident;)*) => {$(
        impl Match for $t {
            #[inline(always)]
            unsafe fn match_any(self, mask: u32) -> u32 {
                $any(mask, $to(self))
            }
            #[inline(always)]
            unsafe fn match_all(self, mask: u32) -> u32 {
                let bits: $bits = $to(self);
                let lanes: u32;
                // Not `pure`: a warp-synchronous instruction must not be merged or moved.
                asm!($ptx, d = out(reg32) lanes, v = in($reg) bits, m = in(reg32) mask, options(nomem, nostack, preserves_flags));
                lanes
            }
        }
    )*};
}

#[cfg(any(target_feature = "sm_70", doc))]
match_impls! {
    u32: u32 = |v| v, match_any_32, "match.all.sync.b32 {d}, {v}, {m};", reg32;
    i32: u32 = |v: i32| v as u32, match_any_32, "match.all.sync.b32 {d}, {v}, {m};", reg32;
    f32: u32 = f32::to_bits, match_any_32, "match.all.sync.b32 {d}, {v}, {m};", reg32;
    u64: u64 = |v| v, match_any_64, "match.all.sync.b64 {d}, {v}, {m};", reg64;
    i64: u64 = |v: i64| v as u64, match_any_64, "match.all.sync.b64 {d}, {v}, {m};", reg64;
    f64: u64 = f64::to_bits, match_any_64, "match.all.sync.b64 {d}, {v}, {m};", reg64;
}

/// The lanes of `mask` whose `value` has the same bits as this lane's (`__match_any_sync`;
/// sm_70+).
///
/// # Safety
/// As [`all_sync`].
#[cfg(any(target_feature = "sm_70", doc))]
#[inline(always)]
pub unsafe fn match_any_sync<T: Match>(mask: u32, value: T) -> u32 {
    value.match_any(mask)
}

/// `mask` when every lane of `mask` has the same bits in `value`, else 0
/// (`__match_all_sync`; sm_70+).
///
/// # Safety
/// As [`all_sync`].
#[cfg(any(target_feature = "sm_70", doc))]
#[inline(always)]
pub unsafe fn match_all_sync<T: Match>(mask: u32, value: T) -> u32 {
    value.match_all(mask)
}
