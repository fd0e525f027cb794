//! Integer and IEEE operations, one output word per operation and element: the Rust half of
//! the bit-exact comparison with `cuda/ops.cu`, which lists the same operations in the same
//! order in CUDA C++.

use ptx_device::libdevice::*;
use ptx_device::{guide, index::global_index, int, kernel, math, mem};

/// Output words per element of [`rs_int_ops`].
pub const INT_OPS: usize = 73;
/// Output words per element of [`rs_math_f32`].
pub const F32_OPS: usize = 78;
/// Output words per element of [`rs_math_f64`].
pub const F64_OPS: usize = 63;

fn lo(v: u64) -> u32 {
    v as u32
}

fn hi(v: u64) -> u32 {
    (v >> 32) as u32
}

fn wide(lo: u64, hi: u64) -> u128 {
    (hi as u128) << 64 | lo as u128
}

unsafe fn store<T: Copy, const N: usize>(out: *mut T, i: usize, words: [T; N]) {
    let out = out.add(i * N);
    for (j, w) in words.into_iter().enumerate() {
        *out.add(j) = w;
    }
}

/// Integer instructions of `ptx_device::int`, the inline-PTX guide, `ld.global.nc` and
/// libdevice's integer functions on `a[i]`, `b[i]`.
#[kernel]
pub unsafe fn rs_int_ops(n: u32, a: *const u32, b: *const u32, out: *mut u32) {
    let i = global_index();
    if i >= n as usize {
        return;
    }
    let (x, y) = (*a.add(i), *b.add(i));
    let (xx, yy) = ((x as u64) << 32 | y as u64, (y as u64) << 32 | x as u64);
    let (p, l, pp, ll) = (y & 31, (y >> 8) & 31, y & 63, (y >> 8) & 63);
    let ac = int::add_carry_u32x2([x, y], [y, x]);
    let sb = int::sub_borrow_u32x2([x, y], [y, x]);
    let ac2 = int::add_carry_u64x2([xx, yy], [yy, xx]);
    let sb2 = int::sub_borrow_u64x2([xx, yy], [yy, xx]);
    let words: [u32; INT_OPS] = [
        lo(int::mul_wide_u32(x, y)),
        hi(int::mul_wide_u32(x, y)),
        lo(int::mul_wide_i32(x as i32, y as i32) as u64),
        hi(int::mul_wide_i32(x as i32, y as i32) as u64),
        int::mul_hi_u32(x, y),
        int::mul_hi_i32(x as i32, y as i32) as u32,
        lo(int::mul_hi_u64(xx, yy)),
        hi(int::mul_hi_u64(xx, yy)),
        lo(int::mul_hi_i64(xx as i64, yy as i64) as u64),
        hi(int::mul_hi_i64(xx as i64, yy as i64) as u64),
        int::prmt(x, y, y),
        int::bfe_u32(x, p, l),
        int::bfe_i32(x as i32, p, l) as u32,
        lo(int::bfe_u64(xx, pp, ll)),
        hi(int::bfe_u64(xx, pp, ll)),
        lo(int::bfe_i64(xx as i64, pp, ll) as u64),
        hi(int::bfe_i64(xx as i64, pp, ll) as u64),
        int::bfi_u32(x, y, p, l),
        lo(int::bfi_u64(xx, yy, pp, ll)),
        hi(int::bfi_u64(xx, yy, pp, ll)),
        ac.0[0],
        ac.0[1],
        ac.1 as u32,
        sb.0[0],
        sb.0[1],
        sb.1 as u32,
        lo(ac2.0[0]),
        hi(ac2.0[0]),
        lo(ac2.0[1]),
        hi(ac2.0[1]),
        ac2.1 as u32,
        lo(sb2.0[0]),
        hi(sb2.0[0]),
        lo(sb2.0[1]),
        hi(sb2.0[1]),
        sb2.1 as u32,
        lo(int::add_u128(wide(xx, yy), wide(yy, xx)) as u64),
        hi(int::add_u128(wide(xx, yy), wide(yy, xx)) as u64),
        lo((int::add_u128(wide(xx, yy), wide(yy, xx)) >> 64) as u64),
        hi((int::add_u128(wide(xx, yy), wide(yy, xx)) >> 64) as u64),
        lo(int::sub_u128(wide(xx, yy), wide(yy, xx)) as u64),
        hi(int::sub_u128(wide(xx, yy), wide(yy, xx)) as u64),
        lo((int::sub_u128(wide(xx, yy), wide(yy, xx)) >> 64) as u64),
        hi((int::sub_u128(wide(xx, yy), wide(yy, xx)) >> 64) as u64),
        guide::add3(x, y, x ^ y),
        guide::popc64(xx),
        guide::min_u32(x, y),
        guide::clamp_above(x, y),
        guide::shift_left_const::<5>(x),
        guide::min_or_max(x as i32, y as i32, y & 1 == 1) as u32,
        guide::byte_swap16(x as u16) as u32,
        mem::ld_global_nc(a.add(i)),
        guide::load_byte(a.cast::<u8>().add(i)) as u32,
        mem::ld_global_nc(a.cast::<u8>().add(i)) as u32,
        mem::ld_global_nc(a.cast::<i8>().add(i)) as i32 as u32,
        mem::ld_global_nc(a.cast::<i16>().add(i)) as i32 as u32,
        lo(mem::ld_global_nc(a.cast::<u64>().add(i / 2))),
        hi(mem::ld_global_nc(a.cast::<u64>().add(i / 2))),
        mem::ld_global_nc(a.cast::<f32>().add(i)).to_bits(),
        __nv_brev(x),
        __nv_clz(x as i32) as u32,
        __nv_ffs(x as i32) as u32,
        __nv_popc(x) as u32,
        __nv_byte_perm(x, y, y),
        __nv_sad(x as i32, y as i32, x),
        __nv_usad(x, y, y),
        __nv_umul24(x, y),
        __nv_mul24(x as i32, y as i32) as u32,
        __nv_uhadd(x, y),
        __nv_rhadd(x as i32, y as i32) as u32,
        __nv_clzll(xx as i64) as u32,
        lo(__nv_brevll(xx)),
        hi(__nv_brevll(xx)),
    ];
    store(out, i, words);
}

/// libdevice's `f32` math through `ptx_device::math` (and a few raw `__nv_*` calls) on
/// `x[i]`, `y[i]`, `z[i]`, as bits.
#[kernel]
pub unsafe fn rs_math_f32(n: u32, x: *const f32, y: *const f32, z: *const f32, out: *mut u32) {
    let i = global_index();
    if i >= n as usize {
        return;
    }
    let (x, y, z) = (*x.add(i), *y.add(i), *z.add(i));
    let (s, c) = math::sincos(x);
    let (fs, fc) = math::fast::sincos(x);
    let words: [u32; F32_OPS] = [
        math::exp(x).to_bits(),
        math::exp2(x).to_bits(),
        math::exp10(x).to_bits(),
        math::expm1(x).to_bits(),
        math::log(x).to_bits(),
        math::log2(x).to_bits(),
        math::log10(x).to_bits(),
        math::log1p(x).to_bits(),
        math::sin(x).to_bits(),
        math::cos(x).to_bits(),
        math::tan(x).to_bits(),
        math::sinpi(x).to_bits(),
        math::cospi(x).to_bits(),
        math::asin(x).to_bits(),
        math::acos(x).to_bits(),
        math::atan(x).to_bits(),
        math::sinh(x).to_bits(),
        math::cosh(x).to_bits(),
        math::tanh(x).to_bits(),
        math::asinh(x).to_bits(),
        math::acosh(x).to_bits(),
        math::atanh(x).to_bits(),
        math::sqrt(x).to_bits(),
        math::rsqrt(x).to_bits(),
        math::cbrt(x).to_bits(),
        math::rcbrt(x).to_bits(),
        math::erf(x).to_bits(),
        math::erfc(x).to_bits(),
        math::erfinv(x).to_bits(),
        math::erfcinv(x).to_bits(),
        math::tgamma(x).to_bits(),
        math::lgamma(x).to_bits(),
        math::fabs(x).to_bits(),
        math::floor(x).to_bits(),
        math::ceil(x).to_bits(),
        math::trunc(x).to_bits(),
        math::round(x).to_bits(),
        math::rint(x).to_bits(),
        math::atan2(x, y).to_bits(),
        math::pow(x, y).to_bits(),
        math::hypot(x, y).to_bits(),
        math::fmin(x, y).to_bits(),
        math::fmax(x, y).to_bits(),
        math::fmod(x, y).to_bits(),
        math::remainder(x, y).to_bits(),
        math::copysign(x, y).to_bits(),
        math::fdim(x, y).to_bits(),
        math::fma(x, y, z).to_bits(),
        s.to_bits(),
        c.to_bits(),
        (x + y).to_bits(),
        (x - y).to_bits(),
        (x * y).to_bits(),
        (x / y).to_bits(),
        math::fast::exp(x).to_bits(),
        math::fast::exp10(x).to_bits(),
        math::fast::log(x).to_bits(),
        math::fast::log2(x).to_bits(),
        math::fast::log10(x).to_bits(),
        math::fast::sin(x).to_bits(),
        math::fast::cos(x).to_bits(),
        math::fast::tan(x).to_bits(),
        math::fast::tanh(x).to_bits(),
        math::fast::pow(x, y).to_bits(),
        math::fast::div(x, y).to_bits(),
        fs.to_bits(),
        fc.to_bits(),
        guide::fma_rn(x, y, z).to_bits(),
        __nv_fadd_rz(x, y).to_bits(),
        __nv_fmul_ru(x, y).to_bits(),
        __nv_fdiv_rd(x, y).to_bits(),
        __nv_fsqrt_ru(x).to_bits(),
        __nv_frcp_rn(x).to_bits(),
        __nv_fmaf_rz(x, y, z).to_bits(),
        __nv_float2int_rn(x) as u32,
        __nv_float2uint_rz(x),
        __nv_int2float_rd(x.to_bits() as i32).to_bits(),
        __nv_float2ll_ru(x) as u32,
    ];
    store(out, i, words);
}

/// libdevice's `f64` math, as [`rs_math_f32`].
#[kernel]
pub unsafe fn rs_math_f64(n: u32, x: *const f64, y: *const f64, z: *const f64, out: *mut u64) {
    let i = global_index();
    if i >= n as usize {
        return;
    }
    let (x, y, z) = (*x.add(i), *y.add(i), *z.add(i));
    let (s, c) = math::sincos(x);
    let words: [u64; F64_OPS] = [
        math::exp(x).to_bits(),
        math::exp2(x).to_bits(),
        math::exp10(x).to_bits(),
        math::expm1(x).to_bits(),
        math::log(x).to_bits(),
        math::log2(x).to_bits(),
        math::log10(x).to_bits(),
        math::log1p(x).to_bits(),
        math::sin(x).to_bits(),
        math::cos(x).to_bits(),
        math::tan(x).to_bits(),
        math::sinpi(x).to_bits(),
        math::cospi(x).to_bits(),
        math::asin(x).to_bits(),
        math::acos(x).to_bits(),
        math::atan(x).to_bits(),
        math::sinh(x).to_bits(),
        math::cosh(x).to_bits(),
        math::tanh(x).to_bits(),
        math::asinh(x).to_bits(),
        math::acosh(x).to_bits(),
        math::atanh(x).to_bits(),
        math::sqrt(x).to_bits(),
        math::rsqrt(x).to_bits(),
        math::cbrt(x).to_bits(),
        math::rcbrt(x).to_bits(),
        math::erf(x).to_bits(),
        math::erfc(x).to_bits(),
        math::erfinv(x).to_bits(),
        math::erfcinv(x).to_bits(),
        math::tgamma(x).to_bits(),
        math::lgamma(x).to_bits(),
        math::fabs(x).to_bits(),
        math::floor(x).to_bits(),
        math::ceil(x).to_bits(),
        math::trunc(x).to_bits(),
        math::round(x).to_bits(),
        math::rint(x).to_bits(),
        math::atan2(x, y).to_bits(),
        math::pow(x, y).to_bits(),
        math::hypot(x, y).to_bits(),
        math::fmin(x, y).to_bits(),
        math::fmax(x, y).to_bits(),
        math::fmod(x, y).to_bits(),
        math::remainder(x, y).to_bits(),
        math::copysign(x, y).to_bits(),
        math::fdim(x, y).to_bits(),
        math::fma(x, y, z).to_bits(),
        s.to_bits(),
        c.to_bits(),
        (x + y).to_bits(),
        (x - y).to_bits(),
        (x * y).to_bits(),
        (x / y).to_bits(),
        guide::fma_rn_f64(x, y, z).to_bits(),
        __nv_dadd_rz(x, y).to_bits(),
        __nv_dmul_ru(x, y).to_bits(),
        __nv_ddiv_rd(x, y).to_bits(),
        __nv_dsqrt_ru(x).to_bits(),
        __nv_drcp_rn(x).to_bits(),
        __nv_double2float_rz(x).to_bits() as u64,
        __nv_double2ll_rn(x) as u64,
        __nv_ull2double_ru(x.to_bits()).to_bits(),
    ];
    store(out, i, words);
}
