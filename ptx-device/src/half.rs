//! Half-precision floats: CUDA's `__half`, `__nv_bfloat16`, `__half2` and `__nv_bfloat162`, with
//! the conversions and arithmetic PTX has for them.
//!
//! Each type holds its IEEE bits (`f16`: 1 sign, 5 exponent, 10 mantissa bits; `bf16`: 1, 8, 7,
//! the top half of an `f32`) and has the layout of the host's `half::f16` / `half::bf16`
//! (`ptx_runtime::half`), so kernel parameters and device buffers of these types cross to typed
//! launches as those: `*const f16` takes a `&CudaSlice<half::f16>`, an `f16` by value a
//! `half::f16`, an `f16x2` a `ptx_runtime::cuda_types::Half2`.
//!
//! Arithmetic is the PTX instruction, rounded to nearest even (`add.rn.f16`, `fma.rn.bf16`, ..):
//! `a + b` on two `f16` is one `add.f16`, not a round trip through `f32`. Comparisons and the
//! operations PTX has no half instruction for (`/`, `sqrt`) go through `f32`, which is exact
//! for the conversion in and correctly rounded on the way out (24 bits hold 2 x 11 + 2).
//! `bf16` add, subtract and multiply are `fma.rn.bf16` (sm_80; `add.bf16` itself needs sm_90).
//!
//! | CUDA | ptx-device |
//! |---|---|
//! | `__float2half_rn(x)`, `__half2float(h)` | [`f16::from_f32`](crate::half::f16::from_f32), [`f16::to_f32`](crate::half::f16::to_f32) |
//! | `__float2bfloat16_rn(x)`, `__bfloat162float(b)` | [`bf16::from_f32`](crate::half::bf16::from_f32), [`bf16::to_f32`](crate::half::bf16::to_f32) |
//! | `__hadd`, `__hsub`, `__hmul`, `__hneg`, `__habs` | `+`, `-`, `*`, unary `-`, [`f16::abs`](crate::half::f16::abs) |
//! | `__hfma(a, b, c)`, `__hmin`, `__hmax` | [`f16::fma`](crate::half::f16::fma), [`f16::min`](crate::half::f16::min), [`f16::max`](crate::half::f16::max) (sm_80) |
//! | `hexp2` (approximate), `htanh_approx` | [`f16::exp2_approx`](crate::half::f16::exp2_approx), [`f16::tanh_approx`](crate::half::f16::tanh_approx) (sm_75) |
//! | `__floats2half2_rn(a, b)`, `__half22float2` | [`f16x2::from_f32s`](crate::half::f16x2::from_f32s), [`f16x2::to_f32s`](crate::half::f16x2::to_f32s) |
//! | `__hadd2`, `__hmul2`, `__hfma2`, `__hmin2`, `__hmax2` | `+`, `*`, [`f16x2::fma`](crate::half::f16x2::fma), [`f16x2::min`](crate::half::f16x2::min), [`f16x2::max`](crate::half::f16x2::max) |
//! | the same for `__nv_bfloat16(2)` | [`bf16`], [`bf16x2`] |
//!
//! The minimum arch is each instruction's: `f16` arithmetic sm_53, `f16` `min`/`max` and
//! everything `bf16` but `to_f32` sm_80. A build for an older arch reports the instruction at
//! its line (see [`crate::arch`]).

use core::arch::asm;
use core::cmp::Ordering;
use core::ops::{Add, AddAssign, Mul, MulAssign, Neg, Sub, SubAssign};

/// One `asm!` on 16- or 32-bit registers, a pure function of its operands.
macro_rules! op {
    ($ptx:expr, $reg:ident, $t:ty; $($arg:ident),*) => {{
        let r: $t;
        // SAFETY: arithmetic on registers only.
        unsafe { asm!($ptx, r = lateout($reg) r, $($arg = in($reg) $arg),*, options(pure, nomem, nostack, preserves_flags)) };
        r
    }};
}

/// An IEEE 754 binary16 float: CUDA's `__half`, the host's `half::f16`.
#[allow(non_camel_case_types)]
#[repr(transparent)]
#[derive(Clone, Copy, Default)]
pub struct f16(u16);

/// A bfloat16 (the top 16 bits of an `f32`): CUDA's `__nv_bfloat16`, the host's `half::bf16`.
#[allow(non_camel_case_types)]
#[repr(transparent)]
#[derive(Clone, Copy, Default)]
pub struct bf16(u16);

macro_rules! common {
    ($t:ident, $ptx:literal) => {
        impl $t {
            /// The value of these bits.
            #[inline(always)]
            pub const fn from_bits(bits: u16) -> Self {
                $t(bits)
            }

            /// The bits.
            #[inline(always)]
            pub const fn to_bits(self) -> u16 {
                self.0
            }

            /// `self` as an `f64` (exact).
            #[inline(always)]
            pub fn to_f64(self) -> f64 {
                self.to_f32() as f64
            }

            /// `self * b + c` with one rounding (`fma.rn`).
            #[inline(always)]
            pub fn fma(self, b: Self, c: Self) -> Self {
                let (a, b, c) = (self.0, b.0, c.0);
                $t(op!(concat!("fma.rn.", $ptx, " {r}, {a}, {b}, {c};"), reg16, u16; a, b, c))
            }

            /// The smaller of the two; a NaN operand yields the other (`min`; sm_80).
            #[inline(always)]
            pub fn min(self, b: Self) -> Self {
                let (a, b) = (self.0, b.0);
                $t(op!(concat!("min.", $ptx, " {r}, {a}, {b};"), reg16, u16; a, b))
            }

            /// The larger of the two; a NaN operand yields the other (`max`; sm_80).
            #[inline(always)]
            pub fn max(self, b: Self) -> Self {
                let (a, b) = (self.0, b.0);
                $t(op!(concat!("max.", $ptx, " {r}, {a}, {b};"), reg16, u16; a, b))
            }

            /// `|self|`, clearing the sign bit (NaN stays NaN).
            #[inline(always)]
            pub fn abs(self) -> Self {
                $t(self.0 & 0x7fff)
            }

            /// Whether this is a NaN.
            #[inline(always)]
            pub fn is_nan(self) -> bool {
                self.to_f32().is_nan()
            }

            /// The square root, correctly rounded (through `f32`).
            #[inline(always)]
            pub fn sqrt(self) -> Self {
                let x = self.to_f32();
                Self::from_f32(op!("sqrt.rn.f32 {r}, {x};", reg32, f32; x))
            }
        }

        impl Neg for $t {
            type Output = $t;
            /// Flips the sign bit, as `neg` does (NaN included).
            #[inline(always)]
            fn neg(self) -> $t {
                $t(self.0 ^ 0x8000)
            }
        }

        impl core::ops::Div for $t {
            type Output = $t;
            /// Through `f32`: correctly rounded (`__hdiv`).
            #[inline(always)]
            fn div(self, b: $t) -> $t {
                $t::from_f32(self.to_f32() / b.to_f32())
            }
        }

        impl PartialEq for $t {
            /// IEEE equality: `-0 == +0`, NaN equals nothing.
            #[inline(always)]
            fn eq(&self, other: &$t) -> bool {
                self.to_f32() == other.to_f32()
            }
        }

        impl PartialOrd for $t {
            #[inline(always)]
            fn partial_cmp(&self, other: &$t) -> Option<Ordering> {
                self.to_f32().partial_cmp(&other.to_f32())
            }
        }

        impl From<$t> for f32 {
            #[inline(always)]
            fn from(v: $t) -> f32 {
                v.to_f32()
            }
        }

        impl AddAssign for $t {
            #[inline(always)]
            fn add_assign(&mut self, b: $t) {
                *self = *self + b;
            }
        }
        impl SubAssign for $t {
            #[inline(always)]
            fn sub_assign(&mut self, b: $t) {
                *self = *self - b;
            }
        }
        impl MulAssign for $t {
            #[inline(always)]
            fn mul_assign(&mut self, b: $t) {
                *self = *self * b;
            }
        }

        impl core::fmt::Debug for $t {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                core::fmt::Debug::fmt(&self.to_f32(), f)
            }
        }
    };
}

common!(f16, "f16");
common!(bf16, "bf16");

impl f16 {
    /// `0.0`.
    pub const ZERO: f16 = f16(0);
    /// `1.0`.
    pub const ONE: f16 = f16(0x3c00);
    /// The largest finite value, 65504.
    pub const MAX: f16 = f16(0x7bff);
    /// The smallest positive normal value, 2^-14.
    pub const MIN_POSITIVE: f16 = f16(0x0400);
    /// 2^-10, the gap between 1 and the next value.
    pub const EPSILON: f16 = f16(0x1400);
    /// `+inf`.
    pub const INFINITY: f16 = f16(0x7c00);
    /// A quiet NaN.
    pub const NAN: f16 = f16(0x7e00);

    /// `x` rounded to nearest even (`cvt.rn.f16.f32`, `__float2half_rn`); beyond 65504 it
    /// becomes infinity.
    #[inline(always)]
    pub fn from_f32(x: f32) -> f16 {
        let r: u16;
        // SAFETY: registers only.
        unsafe { asm!("cvt.rn.f16.f32 {r}, {x};", r = out(reg16) r, x = in(reg32) x, options(pure, nomem, nostack, preserves_flags)) };
        f16(r)
    }

    /// The exact `f32` value (`cvt.f32.f16`, `__half2float`).
    #[inline(always)]
    pub fn to_f32(self) -> f32 {
        let r: f32;
        let h = self.0;
        // SAFETY: registers only.
        unsafe { asm!("cvt.f32.f16 {r}, {h};", r = out(reg32) r, h = in(reg16) h, options(pure, nomem, nostack, preserves_flags)) };
        r
    }

    /// `2^self`, approximate (`ex2.approx.f16`, sm_75: a maximum relative error of 2^-9.9).
    #[inline(always)]
    pub fn exp2_approx(self) -> f16 {
        let h = self.0;
        f16(op!("ex2.approx.f16 {r}, {h};", reg16, u16; h))
    }

    /// `tanh(self)`, approximate (`tanh.approx.f16`, sm_75: a maximum absolute error of 2^-10.7).
    #[inline(always)]
    pub fn tanh_approx(self) -> f16 {
        let h = self.0;
        f16(op!("tanh.approx.f16 {r}, {h};", reg16, u16; h))
    }
}

impl bf16 {
    /// `0.0`.
    pub const ZERO: bf16 = bf16(0);
    /// `1.0`.
    pub const ONE: bf16 = bf16(0x3f80);
    /// The largest finite value, about 3.39e38.
    pub const MAX: bf16 = bf16(0x7f7f);
    /// The smallest positive normal value, 2^-126.
    pub const MIN_POSITIVE: bf16 = bf16(0x0080);
    /// 2^-7, the gap between 1 and the next value.
    pub const EPSILON: bf16 = bf16(0x3c00);
    /// `+inf`.
    pub const INFINITY: bf16 = bf16(0x7f80);
    /// A quiet NaN.
    pub const NAN: bf16 = bf16(0x7fc0);

    /// `x` rounded to nearest even (`cvt.rn.bf16.f32`, `__float2bfloat16_rn`; sm_80).
    #[inline(always)]
    pub fn from_f32(x: f32) -> bf16 {
        let r: u16;
        // SAFETY: registers only.
        unsafe { asm!("cvt.rn.bf16.f32 {r}, {x};", r = out(reg16) r, x = in(reg32) x, options(pure, nomem, nostack, preserves_flags)) };
        bf16(r)
    }

    /// The exact `f32` value: the bits shifted into the top half (`__bfloat162float`).
    #[inline(always)]
    pub fn to_f32(self) -> f32 {
        f32::from_bits((self.0 as u32) << 16)
    }
}

// f16: the PTX instructions of sm_53.
macro_rules! f16_binary {
    ($($tr:ident $method:ident $ptx:literal;)*) => {$(
        impl $tr for f16 {
            type Output = f16;
            #[inline(always)]
            fn $method(self, b: f16) -> f16 {
                let (a, b) = (self.0, b.0);
                f16(op!(concat!($ptx, ".rn.f16 {r}, {a}, {b};"), reg16, u16; a, b))
            }
        }
    )*};
}
f16_binary! {
    Add add "add";
    Sub sub "sub";
    Mul mul "mul";
}

// bf16 on sm_80 has `fma.rn.bf16` but no `add`/`mul` (sm_90): each is one exact FMA.
impl Add for bf16 {
    type Output = bf16;
    /// `self * 1 + b`: one `fma.rn.bf16`, correctly rounded.
    #[inline(always)]
    fn add(self, b: bf16) -> bf16 {
        self.fma(bf16::ONE, b)
    }
}
impl Sub for bf16 {
    type Output = bf16;
    /// `b * -1 + self`.
    #[inline(always)]
    fn sub(self, b: bf16) -> bf16 {
        b.fma(-bf16::ONE, self)
    }
}
impl Mul for bf16 {
    type Output = bf16;
    /// `self * b + (-0)`: `-0` keeps the sign of a zero product.
    #[inline(always)]
    fn mul(self, b: bf16) -> bf16 {
        self.fma(b, bf16(0x8000))
    }
}

/// Two `f16` in one 32-bit register, `x` in the low half: CUDA's `__half2`, the host's
/// `ptx_runtime::cuda_types::Half2`. Its arithmetic is one packed instruction for both lanes.
#[allow(non_camel_case_types)]
#[repr(C, align(4))]
#[derive(Clone, Copy, Default, Debug, PartialEq)]
pub struct f16x2 {
    /// The low half.
    pub x: f16,
    /// The high half.
    pub y: f16,
}

/// Two `bf16` in one 32-bit register, `x` in the low half: CUDA's `__nv_bfloat162`, the host's
/// `ptx_runtime::cuda_types::Bf16x2`.
#[allow(non_camel_case_types)]
#[repr(C, align(4))]
#[derive(Clone, Copy, Default, Debug, PartialEq)]
pub struct bf16x2 {
    /// The low half.
    pub x: bf16,
    /// The high half.
    pub y: bf16,
}

macro_rules! pair {
    ($t:ident, $h:ident, $ptx:literal, $ptx2:literal) => {
        impl $t {
            /// `{x, y}`.
            #[inline(always)]
            pub const fn new(x: $h, y: $h) -> $t {
                $t { x, y }
            }

            /// The register: `x` in bits 0..16, `y` in 16..32 (what `mma` and `ldmatrix` move).
            #[inline(always)]
            pub const fn to_bits(self) -> u32 {
                self.x.to_bits() as u32 | (self.y.to_bits() as u32) << 16
            }

            /// The pair held by a register (`x` from the low half).
            #[inline(always)]
            pub const fn from_bits(bits: u32) -> $t {
                $t { x: $h::from_bits(bits as u16), y: $h::from_bits((bits >> 16) as u16) }
            }

            /// Both lanes rounded to nearest even in one instruction
            /// (`cvt.rn.{f16,bf16}x2.f32`, sm_80; `__floats2half2_rn(x, y)`).
            #[inline(always)]
            pub fn from_f32s(x: f32, y: f32) -> $t {
                let r: u32;
                // SAFETY: registers only. The first source goes to the upper half.
                unsafe {
                    asm!(concat!("cvt.rn.", $ptx2, ".f32 {r}, {y}, {x};"), r = out(reg32) r, x = in(reg32) x, y = in(reg32) y,
                        options(pure, nomem, nostack, preserves_flags))
                };
                $t::from_bits(r)
            }

            /// Both lanes as `f32` (exact).
            #[inline(always)]
            pub fn to_f32s(self) -> (f32, f32) {
                (self.x.to_f32(), self.y.to_f32())
            }

            /// `self * b + c` per lane, one rounding each (`fma.rn` on the pair).
            #[inline(always)]
            pub fn fma(self, b: $t, c: $t) -> $t {
                let (a, b, c) = (self.to_bits(), b.to_bits(), c.to_bits());
                $t::from_bits(op!(concat!("fma.rn.", $ptx2, " {r}, {a}, {b}, {c};"), reg32, u32; a, b, c))
            }

            /// Per-lane minimum (`min`; sm_80).
            #[inline(always)]
            pub fn min(self, b: $t) -> $t {
                let (a, b) = (self.to_bits(), b.to_bits());
                $t::from_bits(op!(concat!("min.", $ptx2, " {r}, {a}, {b};"), reg32, u32; a, b))
            }

            /// Per-lane maximum (`max`; sm_80).
            #[inline(always)]
            pub fn max(self, b: $t) -> $t {
                let (a, b) = (self.to_bits(), b.to_bits());
                $t::from_bits(op!(concat!("max.", $ptx2, " {r}, {a}, {b};"), reg32, u32; a, b))
            }

            /// Per-lane `|x|`.
            #[inline(always)]
            pub fn abs(self) -> $t {
                $t::from_bits(self.to_bits() & 0x7fff_7fff)
            }
        }

        impl Neg for $t {
            type Output = $t;
            #[inline(always)]
            fn neg(self) -> $t {
                $t::from_bits(self.to_bits() ^ 0x8000_8000)
            }
        }
    };
}

pair!(f16x2, f16, "f16", "f16x2");
pair!(bf16x2, bf16, "bf16", "bf16x2");

macro_rules! f16x2_binary {
    ($($tr:ident $method:ident $ptx:literal;)*) => {$(
        impl $tr for f16x2 {
            type Output = f16x2;
            #[inline(always)]
            fn $method(self, b: f16x2) -> f16x2 {
                let (a, b) = (self.to_bits(), b.to_bits());
                f16x2::from_bits(op!(concat!($ptx, ".rn.f16x2 {r}, {a}, {b};"), reg32, u32; a, b))
            }
        }
    )*};
}
f16x2_binary! {
    Add add "add";
    Sub sub "sub";
    Mul mul "mul";
}

const BF16X2_ONE: bf16x2 = bf16x2 { x: bf16::ONE, y: bf16::ONE };

impl Add for bf16x2 {
    type Output = bf16x2;
    /// One `fma.rn.bf16x2` by one.
    #[inline(always)]
    fn add(self, b: bf16x2) -> bf16x2 {
        self.fma(BF16X2_ONE, b)
    }
}
impl Sub for bf16x2 {
    type Output = bf16x2;
    #[inline(always)]
    fn sub(self, b: bf16x2) -> bf16x2 {
        b.fma(-BF16X2_ONE, self)
    }
}
impl Mul for bf16x2 {
    type Output = bf16x2;
    /// `self * b + (-0)` per lane.
    #[inline(always)]
    fn mul(self, b: bf16x2) -> bf16x2 {
        self.fma(b, bf16x2::from_bits(0x8000_8000))
    }
}
