//! Integer instructions CUDA reaches through intrinsics or inline PTX: carry chains, wide and
//! high multiplies, byte permutes, bit-field extract and insert.
//!
//! Each is one `asm!` with `options(pure, nomem, nostack)`: a function of its operands only,
//! which the compiler may merge, hoist or drop like an `add`. A carry chain is one `asm!`
//! statement on purpose: the carry flag (`CC`) does not survive from one asm statement to the
//! next, so `add.cc` and the `addc` that reads it must sit in the same template.

use core::arch::asm;

macro_rules! carry_chains {
    ($($(#[$doc:meta])* $name:ident: $t:ty, $reg:ident = $first:literal, $next:literal, $ty:literal;)*) => {$(
        $(#[$doc])*
        #[inline(always)]
        pub fn $name(a: [$t; 2], b: [$t; 2]) -> ([$t; 2], bool) {
            let (lo, hi, carry): ($t, $t, $t);
            // SAFETY: arithmetic on registers only.
            unsafe {
                asm!(
                    concat!($first, ".cc.", $ty, " {lo}, {a0}, {b0};\n", $next, ".cc.", $ty, " {hi}, {a1}, {b1};\n", $next, ".", $ty, " {carry}, 0, 0;"),
                    lo = out($reg) lo, hi = out($reg) hi, carry = out($reg) carry,
                    a0 = in($reg) a[0], a1 = in($reg) a[1], b0 = in($reg) b[0], b1 = in($reg) b[1],
                    options(pure, nomem, nostack),
                )
            };
            ([lo, hi], carry != 0)
        }
    )*};
}

carry_chains! {
    /// `a + b` over two 32-bit limbs (least significant first), with the carry out: the
    /// `add.cc.u32` / `addc.cc.u32` / `addc.u32` chain of a 64-bit add.
    add_carry_u32x2: u32, reg32 = "add", "addc", "u32";
    /// `a + b` over two 64-bit limbs (a 128-bit add), with the carry out
    /// (`add.cc.u64` / `addc.cc.u64`).
    add_carry_u64x2: u64, reg64 = "add", "addc", "u64";
    /// `a - b` over two 32-bit limbs, with the borrow out (`sub.cc.u32` / `subc`).
    sub_borrow_u32x2: u32, reg32 = "sub", "subc", "u32";
    /// `a - b` over two 64-bit limbs (a 128-bit subtract), with the borrow out
    /// (`sub.cc.u64` / `subc`).
    sub_borrow_u64x2: u64, reg64 = "sub", "subc", "u64";
}

/// `a + b` on 128 bits, wrapping, through [`add_carry_u64x2`].
#[inline(always)]
pub fn add_u128(a: u128, b: u128) -> u128 {
    join(add_carry_u64x2(split(a), split(b)).0)
}

/// `a - b` on 128 bits, wrapping, through [`sub_borrow_u64x2`].
#[inline(always)]
pub fn sub_u128(a: u128, b: u128) -> u128 {
    join(sub_borrow_u64x2(split(a), split(b)).0)
}

#[inline(always)]
fn split(v: u128) -> [u64; 2] {
    [v as u64, (v >> 64) as u64]
}

#[inline(always)]
fn join([lo, hi]: [u64; 2]) -> u128 {
    (hi as u128) << 64 | lo as u128
}

macro_rules! binary {
    ($($(#[$doc:meta])* $name:ident($($arg:ident: $t:ident in $reg:ident),+) -> $tr:ident in $rr:ident = $ptx:literal;)*) => {$(
        $(#[$doc])*
        #[inline(always)]
        pub fn $name($($arg: $t),+) -> $tr {
            let r: $tr;
            // SAFETY: arithmetic on registers only.
            unsafe {
                asm!(
                    $ptx, r = out($rr) r, $($arg = in($reg) $arg),+,
                    options(pure, nomem, nostack, preserves_flags),
                )
            };
            r
        }
    )*};
}

binary! {
    /// The full 64-bit product of two `u32` (`mul.wide.u32`; `(u64)a * b` in CUDA).
    mul_wide_u32(a: u32 in reg32, b: u32 in reg32) -> u64 in reg64 = "mul.wide.u32 {r}, {a}, {b};";
    /// The full 64-bit product of two `i32` (`mul.wide.s32`).
    mul_wide_i32(a: i32 in reg32, b: i32 in reg32) -> i64 in reg64 = "mul.wide.s32 {r}, {a}, {b};";
    /// The high 32 bits of the 64-bit product (`__umulhi`, `mul.hi.u32`).
    mul_hi_u32(a: u32 in reg32, b: u32 in reg32) -> u32 in reg32 = "mul.hi.u32 {r}, {a}, {b};";
    /// The high 32 bits of the signed 64-bit product (`__mulhi`, `mul.hi.s32`).
    mul_hi_i32(a: i32 in reg32, b: i32 in reg32) -> i32 in reg32 = "mul.hi.s32 {r}, {a}, {b};";
    /// The high 64 bits of the 128-bit product (`__umul64hi`, `mul.hi.u64`).
    mul_hi_u64(a: u64 in reg64, b: u64 in reg64) -> u64 in reg64 = "mul.hi.u64 {r}, {a}, {b};";
    /// The high 64 bits of the signed 128-bit product (`__mul64hi`, `mul.hi.s64`).
    mul_hi_i64(a: i64 in reg64, b: i64 in reg64) -> i64 in reg64 = "mul.hi.s64 {r}, {a}, {b};";
    /// Picks four bytes out of the eight of `b:a`: nibble `i` of `selector` is the byte index
    /// (0..=7) for result byte `i`, bit 3 of a nibble replicates the sign (`__byte_perm`,
    /// `prmt.b32`).
    prmt(a: u32 in reg32, b: u32 in reg32, selector: u32 in reg32) -> u32 in reg32 = "prmt.b32 {r}, {a}, {b}, {selector};";
    /// `len` bits of `x` from bit `pos`, zero-extended (`bfe.u32`).
    bfe_u32(x: u32 in reg32, pos: u32 in reg32, len: u32 in reg32) -> u32 in reg32 = "bfe.u32 {r}, {x}, {pos}, {len};";
    /// `len` bits of `x` from bit `pos`, sign-extended from the field's top bit (`bfe.s32`).
    bfe_i32(x: i32 in reg32, pos: u32 in reg32, len: u32 in reg32) -> i32 in reg32 = "bfe.s32 {r}, {x}, {pos}, {len};";
    /// `len` bits of `x` from bit `pos`, zero-extended (`bfe.u64`).
    bfe_u64(x: u64 in reg64, pos: u32 in reg32, len: u32 in reg32) -> u64 in reg64 = "bfe.u64 {r}, {x}, {pos}, {len};";
    /// `len` bits of `x` from bit `pos`, sign-extended (`bfe.s64`).
    bfe_i64(x: i64 in reg64, pos: u32 in reg32, len: u32 in reg32) -> i64 in reg64 = "bfe.s64 {r}, {x}, {pos}, {len};";
    /// `base` with its `len` bits from bit `pos` replaced by the low bits of `insert`
    /// (`bfi.b32`).
    bfi_u32(insert: u32 in reg32, base: u32 in reg32, pos: u32 in reg32, len: u32 in reg32) -> u32 in reg32 = "bfi.b32 {r}, {insert}, {base}, {pos}, {len};";
    /// `base` with its `len` bits from bit `pos` replaced by the low bits of `insert`
    /// (`bfi.b64`).
    bfi_u64(insert: u64 in reg64, base: u64 in reg64, pos: u32 in reg32, len: u32 in reg32) -> u64 in reg64 = "bfi.b64 {r}, {insert}, {base}, {pos}, {len};";
}
