#![doc = include_str!("../docs/inline-ptx.md")]
//!
//! ## The examples

use core::arch::asm;

/// `h`: a 16-bit register. Swaps the two bytes of `x` (`prmt` would need 32 bits; a 16-bit
/// rotate shows the class).
#[inline]
pub fn byte_swap16(x: u16) -> u16 {
    let r: u16;
    // SAFETY: registers only.
    unsafe {
        asm!(
            "{{ .reg .b16 hi, lo;\nshl.b16 hi, {x}, 8;\nshr.u16 lo, {x}, 8;\nor.b16 {r}, hi, lo; }}",
            r = out(reg16) r, x = in(reg16) x, options(pure, nomem, nostack),
        )
    };
    r
}

/// `r`: 32-bit registers; `pure`, so the compiler may merge two calls with equal operands.
#[inline]
pub fn add3(a: u32, b: u32, c: u32) -> u32 {
    let r: u32;
    // SAFETY: registers only.
    unsafe { asm!("{{ .reg .b32 t;\nadd.u32 t, {a}, {b};\nadd.u32 {r}, t, {c}; }}", r = out(reg32) r, a = in(reg32) a, b = in(reg32) b, c = in(reg32) c, options(pure, nomem, nostack)) };
    r
}

/// `l`: a 64-bit register (`popc.b64` writes a 32-bit result).
#[inline]
pub fn popc64(x: u64) -> u32 {
    let r: u32;
    // SAFETY: registers only.
    unsafe { asm!("popc.b64 {r}, {x};", r = out(reg32) r, x = in(reg64) x, options(pure, nomem, nostack)) };
    r
}

/// `f`: `f32` in `reg32`. `a * b + c` with one rounding, to nearest even.
#[inline]
pub fn fma_rn(a: f32, b: f32, c: f32) -> f32 {
    let r: f32;
    // SAFETY: registers only.
    unsafe { asm!("fma.rn.f32 {r}, {a}, {b}, {c};", r = out(reg32) r, a = in(reg32) a, b = in(reg32) b, c = in(reg32) c, options(pure, nomem, nostack)) };
    r
}

/// `d`: `f64` in `reg64`.
#[inline]
pub fn fma_rn_f64(a: f64, b: f64, c: f64) -> f64 {
    let r: f64;
    // SAFETY: registers only.
    unsafe { asm!("fma.rn.f64 {r}, {a}, {b}, {c};", r = out(reg64) r, a = in(reg64) a, b = in(reg64) b, c = in(reg64) c, options(pure, nomem, nostack)) };
    r
}

/// `n`: an immediate, as a `const` operand (here a const generic).
#[inline]
pub fn shift_left_const<const N: u32>(x: u32) -> u32 {
    let r: u32;
    // SAFETY: registers only.
    unsafe { asm!("shl.b32 {r}, {x}, {n};", r = out(reg32) r, x = in(reg32) x, n = const N, options(pure, nomem, nostack)) };
    r
}

/// `C`: the instruction name spliced into the template by a macro, the Rust way to build a
/// template from compile-time strings.
macro_rules! min_max {
    ($($name:ident = $op:literal;)*) => {$(
        #[inline]
        fn $name(a: i32, b: i32) -> i32 {
            let r: i32;
            // SAFETY: registers only.
            unsafe { asm!(concat!($op, ".s32 {r}, {a}, {b};"), r = out(reg32) r, a = in(reg32) a, b = in(reg32) b, options(pure, nomem, nostack)) };
            r
        }
    )*};
}
min_max! {
    min_s32 = "min";
    max_s32 = "max";
}

/// `C` (see `min_max!` in the source): `min(a, b)` or `max(a, b)`.
#[inline]
pub fn min_or_max(a: i32, b: i32, max: bool) -> i32 {
    if max {
        max_s32(a, b)
    } else {
        min_s32(a, b)
    }
}

/// Braces: the predicate `p` is a temporary declared in a `{ }` scope, so this function can be
/// inlined any number of times into one kernel.
#[inline]
pub fn min_u32(a: u32, b: u32) -> u32 {
    let r: u32;
    // SAFETY: registers only.
    unsafe {
        asm!(
            "{{ .reg .pred p;\nsetp.lt.u32 p, {a}, {b};\nselp.u32 {r}, {a}, {b}, p; }}",
            r = out(reg32) r, a = in(reg32) a, b = in(reg32) b, options(pure, nomem, nostack),
        )
    };
    r
}

/// `+`: `x` is written only when `x > limit`, so it is `inout`, not `out`.
#[inline]
pub fn clamp_above(mut x: u32, limit: u32) -> u32 {
    // SAFETY: registers only.
    unsafe {
        asm!(
            "{{ .reg .pred p;\nsetp.gt.u32 p, {x}, {limit};\n@p mov.u32 {x}, {limit}; }}",
            x = inout(reg32) x, limit = in(reg32) limit, options(pure, nomem, nostack),
        )
    };
    x
}

/// The `"memory"` clobber: a store, so neither `nomem` nor `readonly` (and not `pure`: it has
/// no outputs, a `pure` asm without outputs would be deleted). `st.volatile` is never merged
/// or dropped by ptxas either.
///
/// # Safety
/// `p` points to a valid, aligned `u32` the caller may write.
#[inline]
pub unsafe fn store_volatile(p: *mut u32, v: u32) {
    asm!("st.volatile.u32 [{p}], {v};", p = in(reg64) p, v = in(reg32) v, options(nostack));
}

/// No 8-bit registers: the byte is loaded by `ld.u8` into a 16-bit register and narrowed in
/// Rust.
///
/// # Safety
/// `p` points to a readable byte.
#[inline]
pub unsafe fn load_byte(p: *const u8) -> u8 {
    let v: u16;
    asm!("ld.u8 {v}, [{p}];", v = out(reg16) v, p = in(reg64) p, options(pure, readonly, nostack));
    v as u8
}
