//! Safe math on `f32` and `f64` through NVIDIA's libdevice: the functions of CUDA's math
//! library, with CUDA's accuracy (the same code nvcc links), generic over the float type.
//!
//! `math::exp(x)` calls `__nv_expf` for an `f32` and `__nv_exp` for an `f64`. They are free
//! functions rather than methods: `core` has unstable inherent float methods of the same names
//! (`sqrt`, `floor`..), which a method call would pick first. [`fast`] has the `f32`
//! approximations CUDA spells `__expf`, `__sinf`.. (one or two hardware instructions).
//! Everything else of libdevice is in [`crate::libdevice`].

use crate::libdevice::*;

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// Generates the [`Float`] trait (one method per function, implemented for `f32` and `f64` by
/// the two libdevice names) and a generic free function for each.
macro_rules! float_math {
    ($($(#[$doc:meta])* fn $name:ident($($arg:ident),+) = $f32:ident, $f64:ident;)*) => {
        /// `f32` or `f64`: the types the functions of [`math`](self) take.
        pub trait Float: Copy + sealed::Sealed {
            $(
                #[doc(hidden)]
                fn $name($($arg: Self),+) -> Self;
            )*
        }
        impl Float for f32 {
            $(
                #[inline(always)]
                fn $name($($arg: f32),+) -> f32 {
                    // SAFETY: libdevice's math is defined for every input.
                    unsafe { $f32($($arg),+) }
                }
            )*
        }
        impl Float for f64 {
            $(
                #[inline(always)]
                fn $name($($arg: f64),+) -> f64 {
                    // SAFETY: as above.
                    unsafe { $f64($($arg),+) }
                }
            )*
        }
        $(
            $(#[$doc])*
            #[inline(always)]
            pub fn $name<T: Float>($($arg: T),+) -> T {
                T::$name($($arg),+)
            }
        )*
    };
}

float_math! {
    /// e^x (`expf`, `exp`).
    fn exp(x) = __nv_expf, __nv_exp;
    /// 2^x.
    fn exp2(x) = __nv_exp2f, __nv_exp2;
    /// 10^x.
    fn exp10(x) = __nv_exp10f, __nv_exp10;
    /// e^x - 1, accurate near 0.
    fn expm1(x) = __nv_expm1f, __nv_expm1;
    /// Natural logarithm.
    fn log(x) = __nv_logf, __nv_log;
    /// Base-2 logarithm.
    fn log2(x) = __nv_log2f, __nv_log2;
    /// Base-10 logarithm.
    fn log10(x) = __nv_log10f, __nv_log10;
    /// ln(1 + x), accurate near 0.
    fn log1p(x) = __nv_log1pf, __nv_log1p;
    /// Sine (radians).
    fn sin(x) = __nv_sinf, __nv_sin;
    /// Cosine (radians).
    fn cos(x) = __nv_cosf, __nv_cos;
    /// Tangent (radians).
    fn tan(x) = __nv_tanf, __nv_tan;
    /// sin(πx).
    fn sinpi(x) = __nv_sinpif, __nv_sinpi;
    /// cos(πx).
    fn cospi(x) = __nv_cospif, __nv_cospi;
    /// Arc sine.
    fn asin(x) = __nv_asinf, __nv_asin;
    /// Arc cosine.
    fn acos(x) = __nv_acosf, __nv_acos;
    /// Arc tangent.
    fn atan(x) = __nv_atanf, __nv_atan;
    /// Arc tangent of y/x, in the quadrant of (x, y).
    fn atan2(y, x) = __nv_atan2f, __nv_atan2;
    /// Hyperbolic sine.
    fn sinh(x) = __nv_sinhf, __nv_sinh;
    /// Hyperbolic cosine.
    fn cosh(x) = __nv_coshf, __nv_cosh;
    /// Hyperbolic tangent.
    fn tanh(x) = __nv_tanhf, __nv_tanh;
    /// Inverse hyperbolic sine.
    fn asinh(x) = __nv_asinhf, __nv_asinh;
    /// Inverse hyperbolic cosine.
    fn acosh(x) = __nv_acoshf, __nv_acosh;
    /// Inverse hyperbolic tangent.
    fn atanh(x) = __nv_atanhf, __nv_atanh;
    /// x^y.
    fn pow(x, y) = __nv_powf, __nv_pow;
    /// Square root, correctly rounded.
    fn sqrt(x) = __nv_sqrtf, __nv_sqrt;
    /// 1 / sqrt(x).
    fn rsqrt(x) = __nv_rsqrtf, __nv_rsqrt;
    /// Cube root.
    fn cbrt(x) = __nv_cbrtf, __nv_cbrt;
    /// 1 / cbrt(x).
    fn rcbrt(x) = __nv_rcbrtf, __nv_rcbrt;
    /// sqrt(x² + y²) without overflow.
    fn hypot(x, y) = __nv_hypotf, __nv_hypot;
    /// The error function.
    fn erf(x) = __nv_erff, __nv_erf;
    /// 1 - erf(x), accurate for large x.
    fn erfc(x) = __nv_erfcf, __nv_erfc;
    /// The inverse error function.
    fn erfinv(x) = __nv_erfinvf, __nv_erfinv;
    /// The inverse complementary error function.
    fn erfcinv(x) = __nv_erfcinvf, __nv_erfcinv;
    /// The gamma function.
    fn tgamma(x) = __nv_tgammaf, __nv_tgamma;
    /// ln |gamma(x)|.
    fn lgamma(x) = __nv_lgammaf, __nv_lgamma;
    /// x * y + z with one rounding.
    fn fma(x, y, z) = __nv_fmaf, __nv_fma;
    /// |x|.
    fn fabs(x) = __nv_fabsf, __nv_fabs;
    /// The largest integer not above x.
    fn floor(x) = __nv_floorf, __nv_floor;
    /// The smallest integer not below x.
    fn ceil(x) = __nv_ceilf, __nv_ceil;
    /// x rounded toward zero.
    fn trunc(x) = __nv_truncf, __nv_trunc;
    /// x rounded to the nearest integer, halves away from zero.
    fn round(x) = __nv_roundf, __nv_round;
    /// x rounded to the nearest integer, halves to even.
    fn rint(x) = __nv_rintf, __nv_rint;
    /// The smaller of x and y; the other one if one is NaN.
    fn fmin(x, y) = __nv_fminf, __nv_fmin;
    /// The larger of x and y; the other one if one is NaN.
    fn fmax(x, y) = __nv_fmaxf, __nv_fmax;
    /// x - trunc(x / y) * y.
    fn fmod(x, y) = __nv_fmodf, __nv_fmod;
    /// x - round-half-even(x / y) * y.
    fn remainder(x, y) = __nv_remainderf, __nv_remainder;
    /// |x| with the sign of y.
    fn copysign(x, y) = __nv_copysignf, __nv_copysign;
    /// max(x - y, 0).
    fn fdim(x, y) = __nv_fdimf, __nv_fdim;
}

/// `(sin x, cos x)` in one call (`sincosf`, `sincos`).
#[inline(always)]
pub fn sincos<T: SinCos>(x: T) -> (T, T) {
    x.sincos()
}

/// The types [`sincos`] takes.
pub trait SinCos: Float {
    #[doc(hidden)]
    fn sincos(self) -> (Self, Self);
}

macro_rules! sincos_impl {
    ($($t:ty = $f:ident;)*) => {$(
        impl SinCos for $t {
            #[inline(always)]
            fn sincos(self) -> ($t, $t) {
                let (mut s, mut c) = (0.0, 0.0);
                // SAFETY: the pointers are to locals.
                unsafe { $f(self, &mut s, &mut c) };
                (s, c)
            }
        }
    )*};
}

sincos_impl! {
    f32 = __nv_sincosf;
    f64 = __nv_sincos;
}

/// CUDA's fast `f32` intrinsics (`__expf`, `__sinf`, ..): one or two hardware instructions
/// (`ex2.approx`, `sin.approx`, ..), with larger errors than [`math`](super) and no special
/// handling of huge arguments; what `--use_fast_math` turns `expf` into.
pub mod fast {
    use crate::libdevice::*;

    macro_rules! fast_math {
        ($($(#[$doc:meta])* fn $name:ident($($arg:ident),+) = $f:ident;)*) => {$(
            $(#[$doc])*
            #[inline(always)]
            pub fn $name($($arg: f32),+) -> f32 {
                // SAFETY: defined for every input.
                unsafe { $f($($arg),+) }
            }
        )*};
    }

    fast_math! {
        /// e^x (`__expf`).
        fn exp(x) = __nv_fast_expf;
        /// 10^x (`__exp10f`).
        fn exp10(x) = __nv_fast_exp10f;
        /// Natural logarithm (`__logf`).
        fn log(x) = __nv_fast_logf;
        /// Base-2 logarithm (`__log2f`).
        fn log2(x) = __nv_fast_log2f;
        /// Base-10 logarithm (`__log10f`).
        fn log10(x) = __nv_fast_log10f;
        /// Sine (`__sinf`).
        fn sin(x) = __nv_fast_sinf;
        /// Cosine (`__cosf`).
        fn cos(x) = __nv_fast_cosf;
        /// Tangent (`__tanf`).
        fn tan(x) = __nv_fast_tanf;
        /// Hyperbolic tangent (`__tanhf`, `tanh.approx.f32` on sm_75+).
        fn tanh(x) = __nv_fast_tanhf;
        /// x^y (`__powf`).
        fn pow(x, y) = __nv_fast_powf;
        /// x / y, approximate (`__fdividef`).
        fn div(x, y) = __nv_fast_fdividef;
    }

    /// `(sin x, cos x)` (`__sincosf`).
    #[inline(always)]
    pub fn sincos(x: f32) -> (f32, f32) {
        let (mut s, mut c) = (0.0, 0.0);
        // SAFETY: the pointers are to locals.
        unsafe { __nv_fast_sincosf(x, &mut s, &mut c) };
        (s, c)
    }
}
