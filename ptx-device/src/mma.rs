//! Warp-level matrix multiply on the tensor cores (`mma.sync`, sm_80+), and the shared-memory
//! moves that feed it: `ldmatrix` (sm_75+) and `stmatrix` (sm_90).
//!
//! One [`mma_sync`] is one `mma.sync.aligned` of the whole warp: `D = A * B + C` for an
//! `M x N x K` tile, each operand spread over the 32 lanes' registers as PTX's fragment layouts
//! say. The fragment types carry the element type and the shape, so the operands of one call
//! must agree: an `f16` A fragment of [`M16N8K16`] with a `tf32` B fragment, or with a C of
//! [`M16N8K8`], is a type error, and a shape PTX does not have for a type
//! (`mma_sync::<f16, M16N8K8>`) fails to compile, naming the shapes that exist.
//!
//! | CUDA (`mma.h` / PTX) | ptx-device |
//! |---|---|
//! | `mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32` | [`mma_sync`] on [`FragA`]`<f16, M16N8K16>`, [`FragB`]`<f16, ..>`, [`FragC`]`<f32, ..>` |
//! | `...m16n8k16...f32.bf16.bf16.f32` | the same with [`bf16`] |
//! | `...m16n8k8...f32.tf32.tf32.f32` | [`Tf32`] operands, [`M16N8K8`] |
//! | `...m16n8k32...s32.s8.s8.s32` (`.u8`) | `i8` (`u8`) operands, `i32` accumulators, [`M16N8K32`] |
//! | `ldmatrix.sync.aligned.m8n8.x4.shared.b16` (`.trans`) | [`ldmatrix_x4`] ([`ldmatrix_x4_trans`]), `_x2`, `_x1` |
//! | `stmatrix.sync.aligned.m8n8.x4.shared.b16` (sm_90) | [`stmatrix_x4`], `_x2`, `_x1`, `_trans` |
//! | `wmma::fragment<matrix_a, 16, 8, 16, half, row_major>` | [`FragA`]`<f16, M16N8K16>` (the `mma` layout, not `wmma`'s opaque one) |
//!
//! # Fragment layouts
//!
//! Lane `l` of the warp has `g = l / 4` (its group) and `t = l % 4` (its place in the group).
//! A is row-major (`.row`), B column-major (`.col`): B's `k` runs along a register.
//! [`Mma::a_coord`], [`Mma::b_coord`] and [`Mma::c_coord`] compute the tables below.
//!
//! | shape, type | A: register `i` | B: register `i` | C/D: element `i` (4 a lane) |
//! |---|---|---|---|
//! | M16N8K16 f16/bf16 (2 a register, low half first) | row `g + 8 * (i % 2)`, cols `2t + 8 * (i / 2)` and `+1` | col `g`, rows `2t + 8i` and `+1` | row `g + 8 * (i / 2)`, col `2t + i % 2` |
//! | M16N8K8 tf32 (1 a register) | row `g + 8 * (i % 2)`, col `t + 4 * (i / 2)` | col `g`, row `t + 4i` | as above |
//! | M16N8K32 i8/u8 (4 a register, low byte first) | row `g + 8 * (i % 2)`, cols `4t + 16 * (i / 2)` ..`+3` | col `g`, rows `4t + 16i` ..`+3` | as above, `i32` |
//!
//! `ldmatrix_x4` of a 16 x 16 `f16` tile (lanes 0-15 pointing at rows 0-15 of columns 0-7,
//! lanes 16-31 at rows 0-15 of columns 8-15) is exactly an A fragment; `ldmatrix_x2` of an
//! 8 (n) x 16 (k) tile stored n-major, a B fragment (or `ldmatrix_x2_trans` of a k-major one).

use core::arch::asm;
use core::marker::PhantomData;

use crate::half::{bf16, f16};
use crate::shared::shared_addr;

/// The `m16n8k16` shape: f16 and bf16 operands.
#[derive(Clone, Copy, Debug, Default)]
pub struct M16N8K16;
/// The `m16n8k8` shape: tf32 operands.
#[derive(Clone, Copy, Debug, Default)]
pub struct M16N8K8;
/// The `m16n8k32` shape: 8-bit integer operands.
#[derive(Clone, Copy, Debug, Default)]
pub struct M16N8K32;

/// TF32: an `f32` with its mantissa rounded to 10 bits, the tensor cores' "f32" input.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(transparent)]
pub struct Tf32(pub u32);

impl Tf32 {
    /// `x` rounded to nearest, ties away from zero (`cvt.rna.tf32.f32`, sm_80).
    #[inline(always)]
    pub fn from_f32(x: f32) -> Tf32 {
        let r: u32;
        // SAFETY: registers only.
        unsafe { asm!("cvt.rna.tf32.f32 {r}, {x};", r = out(reg32) r, x = in(reg32) x, options(pure, nomem, nostack, preserves_flags)) };
        Tf32(r)
    }
}

/// The A operand of an `S`-shaped multiply of `E`s, as this lane holds it: 4 registers for
/// every shape here (the layout table is in the [module docs](self)).
#[derive(Clone, Copy, Debug)]
pub struct FragA<E, S> {
    /// The registers, in PTX's order (`{a0, a1, a2, a3}`).
    pub regs: [u32; 4],
    _m: PhantomData<(E, S)>,
}

/// The B operand: 2 registers.
#[derive(Clone, Copy, Debug)]
pub struct FragB<E, S> {
    /// The registers (`{b0, b1}`).
    pub regs: [u32; 2],
    _m: PhantomData<(E, S)>,
}

/// The accumulator C (and result D) of type `T` (`f32` or `i32`): 4 elements a lane.
#[derive(Clone, Copy, Debug)]
pub struct FragC<T, S> {
    /// The elements (`{c0, c1, c2, c3}`).
    pub x: [T; 4],
    _m: PhantomData<S>,
}

impl<E, S> FragA<E, S> {
    /// The fragment held in these registers (as [`ldmatrix_x4`] returns them).
    #[inline(always)]
    pub const fn new(regs: [u32; 4]) -> Self {
        FragA { regs, _m: PhantomData }
    }
}

impl<E, S> FragB<E, S> {
    /// The fragment held in these registers (as [`ldmatrix_x2`] returns them).
    #[inline(always)]
    pub const fn new(regs: [u32; 2]) -> Self {
        FragB { regs, _m: PhantomData }
    }
}

impl<T: Copy, S> FragC<T, S> {
    /// An accumulator holding these elements.
    #[inline(always)]
    pub const fn new(x: [T; 4]) -> Self {
        FragC { x, _m: PhantomData }
    }

    /// Every element `v` (zero to start a sum).
    #[inline(always)]
    pub const fn splat(v: T) -> Self {
        FragC { x: [v; 4], _m: PhantomData }
    }
}

/// A shape PTX's `mma.sync` has for operands of type `Self`, with their layouts.
#[diagnostic::on_unimplemented(
    message = "`mma.sync` has no shape `{S}` for `{Self}` operands",
    label = "no `mma.sync` of this shape and type",
    note = "f16 and bf16 multiply as M16N8K16, Tf32 as M16N8K8, i8 and u8 as M16N8K32"
)]
pub trait Mma<S>: Sized {
    /// The accumulator's element type.
    type Acc: Copy;
    /// Elements of the operand type in one 32-bit register.
    const PER_REG: u32;
    #[doc(hidden)]
    unsafe fn mma(a: &FragA<Self, S>, b: &FragB<Self, S>, c: &mut FragC<Self::Acc, S>);

    /// `(row, col)` in the `M x K` tile of element `e` of lane `lane`'s A fragment (register
    /// `e / PER_REG`, lane `e % PER_REG` of it, low bits first).
    fn a_coord(lane: u32, e: u32) -> (u32, u32);
    /// `(k, n)` in the `K x N` tile of element `e` of the B fragment.
    fn b_coord(lane: u32, e: u32) -> (u32, u32);
    /// `(row, col)` in the `M x N` tile of accumulator element `i` (0..4).
    #[inline(always)]
    fn c_coord(lane: u32, i: u32) -> (u32, u32) {
        (lane / 4 + 8 * (i / 2), 2 * (lane % 4) + i % 2)
    }
}

/// `D = A * B + C` on the tensor cores (`mma.sync.aligned`), for the whole warp.
///
/// # Safety
/// Every lane of the warp calls it together (converged, no lane exited), with its own fragments.
#[inline(always)]
pub unsafe fn mma_sync<E: Mma<S>, S>(a: &FragA<E, S>, b: &FragB<E, S>, c: &mut FragC<E::Acc, S>) {
    E::mma(a, b, c)
}

macro_rules! mma_impl {
    ($e:ty, $s:ty, $acc:ty, $reg:ident, $ptx:literal, $per:literal, a: $a:expr, b: $b:expr) => {
        impl Mma<$s> for $e {
            type Acc = $acc;
            const PER_REG: u32 = $per;
            #[inline(always)]
            unsafe fn mma(a: &FragA<Self, $s>, b: &FragB<Self, $s>, c: &mut FragC<$acc, $s>) {
                let [c0, c1, c2, c3] = &mut c.x;
                asm!(
                    concat!("mma.sync.aligned.", $ptx, " {{{c0}, {c1}, {c2}, {c3}}}, {{{a0}, {a1}, {a2}, {a3}}}, {{{b0}, {b1}}}, {{{c0}, {c1}, {c2}, {c3}}};"),
                    c0 = inout($reg) *c0, c1 = inout($reg) *c1, c2 = inout($reg) *c2, c3 = inout($reg) *c3,
                    a0 = in(reg32) a.regs[0], a1 = in(reg32) a.regs[1], a2 = in(reg32) a.regs[2], a3 = in(reg32) a.regs[3],
                    b0 = in(reg32) b.regs[0], b1 = in(reg32) b.regs[1],
                    options(pure, nomem, nostack, preserves_flags),
                );
            }
            #[inline(always)]
            fn a_coord(lane: u32, e: u32) -> (u32, u32) {
                let (g, t, r, j) = (lane / 4, lane % 4, e / $per, e % $per);
                ($a)(g, t, r, j)
            }
            #[inline(always)]
            fn b_coord(lane: u32, e: u32) -> (u32, u32) {
                let (g, t, r, j) = (lane / 4, lane % 4, e / $per, e % $per);
                ($b)(g, t, r, j)
            }
        }
    };
}

mma_impl!(f16, M16N8K16, f32, reg32, "m16n8k16.row.col.f32.f16.f16.f32", 2,
    a: |g, t, r, j| (g + 8 * (r % 2), 2 * t + j + 8 * (r / 2)), b: |g, t, r, j| (2 * t + j + 8 * r, g));
mma_impl!(bf16, M16N8K16, f32, reg32, "m16n8k16.row.col.f32.bf16.bf16.f32", 2,
    a: |g, t, r, j| (g + 8 * (r % 2), 2 * t + j + 8 * (r / 2)), b: |g, t, r, j| (2 * t + j + 8 * r, g));
mma_impl!(Tf32, M16N8K8, f32, reg32, "m16n8k8.row.col.f32.tf32.tf32.f32", 1,
    a: |g, t, r, _j| (g + 8 * (r % 2), t + 4 * (r / 2)), b: |g, t, r, _j| (t + 4 * r, g));
mma_impl!(i8, M16N8K32, i32, reg32, "m16n8k32.row.col.s32.s8.s8.s32", 4,
    a: |g, t, r, j| (g + 8 * (r % 2), 4 * t + j + 16 * (r / 2)), b: |g, t, r, j| (4 * t + j + 16 * r, g));
mma_impl!(u8, M16N8K32, i32, reg32, "m16n8k32.row.col.s32.u8.u8.s32", 4,
    a: |g, t, r, j| (g + 8 * (r % 2), 4 * t + j + 16 * (r / 2)), b: |g, t, r, j| (4 * t + j + 16 * r, g));

macro_rules! ldmatrix {
    ($($(#[$doc:meta])* $name:ident -> $n:tt = $ptx:literal;)*) => {$(
        $(#[$doc])*
        ///
        /// # Safety
        /// Every lane of the warp calls it together; each lane that supplies a row passes a
        /// 16-byte aligned pointer to 16 bytes of shared memory (8 `b16` elements).
        #[inline(always)]
        pub unsafe fn $name<T>(row: *const T) -> [u32; $n] {
            let mut r = [0u32; $n];
            ldmatrix!(@asm $ptx, row, r, $n);
            r
        }
    )*};
    (@asm $ptx:literal, $row:ident, $r:ident, 1) => {
        asm!(concat!("ldmatrix.sync.aligned.m8n8.", $ptx, ".shared.b16 {{{r0}}}, [{a}];"),
            r0 = out(reg32) $r[0], a = in(reg64) shared_addr($row), options(readonly, nostack, preserves_flags))
    };
    (@asm $ptx:literal, $row:ident, $r:ident, 2) => {
        asm!(concat!("ldmatrix.sync.aligned.m8n8.", $ptx, ".shared.b16 {{{r0}, {r1}}}, [{a}];"),
            r0 = out(reg32) $r[0], r1 = out(reg32) $r[1], a = in(reg64) shared_addr($row), options(readonly, nostack, preserves_flags))
    };
    (@asm $ptx:literal, $row:ident, $r:ident, 4) => {
        asm!(concat!("ldmatrix.sync.aligned.m8n8.", $ptx, ".shared.b16 {{{r0}, {r1}, {r2}, {r3}}}, [{a}];"),
            r0 = out(reg32) $r[0], r1 = out(reg32) $r[1], r2 = out(reg32) $r[2], r3 = out(reg32) $r[3],
            a = in(reg64) shared_addr($row), options(readonly, nostack, preserves_flags))
    };
}

ldmatrix! {
    /// Loads one 8 x 8 matrix of 16-bit elements from shared memory (`ldmatrix...x1`): lanes
    /// 0-7 each point at one row; lane `l` receives row `l / 4`, elements `2 * (l % 4)` and
    /// `+1` (low half first).
    ldmatrix_x1 -> 1 = "x1";
    /// Two 8 x 8 matrices (`.x2`): lanes 0-7 point at the rows of the first, 8-15 of the
    /// second; register `i` holds matrix `i` as [`ldmatrix_x1`] lays it out.
    ldmatrix_x2 -> 2 = "x2";
    /// Four 8 x 8 matrices (`.x4`): lanes `8i..8i+8` point at the rows of matrix `i`.
    ldmatrix_x4 -> 4 = "x4";
    /// [`ldmatrix_x1`] transposed (`.trans`): lane `l` receives column `l / 4`, rows
    /// `2 * (l % 4)` and `+1`.
    ldmatrix_x1_trans -> 1 = "x1.trans";
    /// [`ldmatrix_x2`] transposed.
    ldmatrix_x2_trans -> 2 = "x2.trans";
    /// [`ldmatrix_x4`] transposed.
    ldmatrix_x4_trans -> 4 = "x4.trans";
}

macro_rules! stmatrix {
    ($($(#[$doc:meta])* $name:ident($n:literal) = $ptx:literal, $regs:literal, [$($i:literal => $r:ident),*];)*) => {$(
        $(#[$doc])*
        /// sm_90.
        ///
        /// # Safety
        /// Every lane of the warp calls it together; each lane that names a row passes a
        /// 16-byte aligned pointer to 16 bytes of shared memory it may write.
        #[inline(always)]
        pub unsafe fn $name<T>(row: *mut T, regs: [u32; $n]) {
            asm!(concat!("stmatrix.sync.aligned.m8n8.", $ptx, ".shared.b16 [{a}], {{", $regs, "}};"),
                a = in(reg64) shared_addr(row), $($r = in(reg32) regs[$i]),*, options(nostack, preserves_flags))
        }
    )*};
}

stmatrix! {
    /// Stores one 8 x 8 matrix of 16-bit elements to shared memory, the inverse of
    /// [`ldmatrix_x1`] (`stmatrix...x1`).
    stmatrix_x1(1) = "x1", "{r0}", [0 => r0];
    /// Two matrices, the inverse of [`ldmatrix_x2`].
    stmatrix_x2(2) = "x2", "{r0}, {r1}", [0 => r0, 1 => r1];
    /// Four matrices, the inverse of [`ldmatrix_x4`].
    stmatrix_x4(4) = "x4", "{r0}, {r1}, {r2}, {r3}", [0 => r0, 1 => r1, 2 => r2, 3 => r3];
    /// [`stmatrix_x1`] transposed.
    stmatrix_x1_trans(1) = "x1.trans", "{r0}", [0 => r0];
    /// [`stmatrix_x2`] transposed.
    stmatrix_x2_trans(2) = "x2.trans", "{r0}, {r1}", [0 => r0, 1 => r1];
    /// [`stmatrix_x4`] transposed.
    stmatrix_x4_trans(4) = "x4.trans", "{r0}, {r1}, {r2}, {r3}", [0 => r0, 1 => r1, 2 => r2, 3 => r3];
}
