//! Atomics on global and shared memory: CUDA's `atomicAdd`, `atomicMin`, .., `atomicCAS`,
//! `atomicInc`, `atomicDec`.
//!
//! [`atomic_add`] and its kin are what CUDA's `atomicAdd` is: relaxed, device-scoped, on any
//! address, returning the old value; they order nothing else, so pair them with a
//! [`fence`](crate::sync) to publish other data. They are LLVM atomic instructions
//! (`atomicrmw`/`cmpxchg`, defined by `cargo ptx`'s link stage), not inline PTX, so LLVM sees
//! where the pointer comes from, exactly as nvcc does for `atomicAdd`: on a pointer into a
//! [`shared_array!`](crate::shared_array) or [`dynamic_shared`](crate::shared::dynamic_shared)
//! the call is `atom.shared.add` (SASS `ATOMS`), on a kernel parameter `atom.global.add`, and
//! where the old value is never used ptxas makes it a reduction (`RED`, or `ATOMS` with no
//! result register), as for nvcc's PTX. Only where the origin is out of LLVM's sight (a pointer
//! read from memory) is it a generic `atom.add`, which the hardware routes.
//!
//! The explicit forms say the state space or the scope themselves (inline PTX):
//!
//! | form | PTX | when |
//! |---|---|---|
//! | `atomic_add` | `atom.add`, state space inferred | any address, device scope (`atomicAdd`) |
//! | `atomic_add_shared` | `atom.shared.add` | shared memory (`ATOMS`) |
//! | `atomic_add_global` | `atom.global.add` | global memory |
//! | `atomic_add_block` | `atom.relaxed.cta.add` | only this block touches it (`atomicAdd_block`) |
//! | `atomic_add_system` | `atom.relaxed.sys.add` | host or peer GPUs too (`atomicAdd_system`) |
//! | `red_add`, `red_add_shared` | `red.add`, `red.shared.add` | the old value is not needed |
//!
//! The same forms exist for `min`, `max`, `and`, `or`, `xor`, `inc` and `dec` (and `exch`,
//! which has no `red`); [`atomic_cas_shared`] is CAS on shared memory. A type PTX has no atomic
//! for (`u8`, `u16`, `f32` min, ..) is a compile error that names the type and the operation.
//!
//! The `asm!` of the explicit forms has no `nomem`/`readonly`: it writes memory, so the
//! compiler must keep it, in order, with the loads and stores around it.

use core::arch::asm;

mod sealed {
    pub trait Sealed {}
    impl Sealed for u32 {}
    impl Sealed for i32 {}
    impl Sealed for u64 {}
    impl Sealed for i64 {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// The LLVM atomics of the generic forms. `cargo ptx`'s link stage defines each declaration
/// named `__ptx_device_atomicrmw_OP_TYPE` as one `atomicrmw OP` (`__ptx_device_cmpxchg_TYPE`:
/// one `cmpxchg`), `syncscope("device") monotonic`: CUDA's relaxed, device-scoped atomics.
/// Rust has no atomic float add and no scope other than the system's, hence declarations
/// rather than `core::intrinsics`.
mod rmw {
    unsafe extern "C" {
        #[link_name = "__ptx_device_atomicrmw_add_i32"]
        pub fn add_i32(p: *mut u32, v: u32) -> u32;
        #[link_name = "__ptx_device_atomicrmw_add_i64"]
        pub fn add_i64(p: *mut u64, v: u64) -> u64;
        #[link_name = "__ptx_device_atomicrmw_fadd_float"]
        pub fn fadd_float(p: *mut f32, v: f32) -> f32;
        #[link_name = "__ptx_device_atomicrmw_fadd_double"]
        pub fn fadd_double(p: *mut f64, v: f64) -> f64;
        #[link_name = "__ptx_device_atomicrmw_min_i32"]
        pub fn min_i32(p: *mut u32, v: u32) -> u32;
        #[link_name = "__ptx_device_atomicrmw_min_i64"]
        pub fn min_i64(p: *mut u64, v: u64) -> u64;
        #[link_name = "__ptx_device_atomicrmw_umin_i32"]
        pub fn umin_i32(p: *mut u32, v: u32) -> u32;
        #[link_name = "__ptx_device_atomicrmw_umin_i64"]
        pub fn umin_i64(p: *mut u64, v: u64) -> u64;
        #[link_name = "__ptx_device_atomicrmw_max_i32"]
        pub fn max_i32(p: *mut u32, v: u32) -> u32;
        #[link_name = "__ptx_device_atomicrmw_max_i64"]
        pub fn max_i64(p: *mut u64, v: u64) -> u64;
        #[link_name = "__ptx_device_atomicrmw_umax_i32"]
        pub fn umax_i32(p: *mut u32, v: u32) -> u32;
        #[link_name = "__ptx_device_atomicrmw_umax_i64"]
        pub fn umax_i64(p: *mut u64, v: u64) -> u64;
        #[link_name = "__ptx_device_atomicrmw_and_i32"]
        pub fn and_i32(p: *mut u32, v: u32) -> u32;
        #[link_name = "__ptx_device_atomicrmw_and_i64"]
        pub fn and_i64(p: *mut u64, v: u64) -> u64;
        #[link_name = "__ptx_device_atomicrmw_or_i32"]
        pub fn or_i32(p: *mut u32, v: u32) -> u32;
        #[link_name = "__ptx_device_atomicrmw_or_i64"]
        pub fn or_i64(p: *mut u64, v: u64) -> u64;
        #[link_name = "__ptx_device_atomicrmw_xor_i32"]
        pub fn xor_i32(p: *mut u32, v: u32) -> u32;
        #[link_name = "__ptx_device_atomicrmw_xor_i64"]
        pub fn xor_i64(p: *mut u64, v: u64) -> u64;
        #[link_name = "__ptx_device_atomicrmw_xchg_i32"]
        pub fn xchg_i32(p: *mut u32, v: u32) -> u32;
        #[link_name = "__ptx_device_atomicrmw_xchg_i64"]
        pub fn xchg_i64(p: *mut u64, v: u64) -> u64;
        #[link_name = "__ptx_device_atomicrmw_uinc_wrap_i32"]
        pub fn uinc_wrap_i32(p: *mut u32, v: u32) -> u32;
        #[link_name = "__ptx_device_atomicrmw_udec_wrap_i32"]
        pub fn udec_wrap_i32(p: *mut u32, v: u32) -> u32;
        #[link_name = "__ptx_device_cmpxchg_i32"]
        pub fn cmpxchg_i32(p: *mut u32, compare: u32, v: u32) -> u32;
        #[link_name = "__ptx_device_cmpxchg_i64"]
        pub fn cmpxchg_i64(p: *mut u64, compare: u64, v: u64) -> u64;
    }
}

/// A generic form's call of its [`rmw`] declaration: `same` where the declaration takes the
/// type itself, `int` for the signed integers (the same bits as the unsigned ones), `bits` for
/// the floats' exchange.
macro_rules! generic_rmw {
    (same $t:ty, $helper:ident, $address:expr, $value:expr) => {
        rmw::$helper($address, $value)
    };
    (int $t:ty, $helper:ident, $address:expr, $value:expr) => {
        rmw::$helper($address.cast(), $value as _) as $t
    };
    (bits $t:ty, $helper:ident, $address:expr, $value:expr) => {
        <$t>::from_bits(rmw::$helper($address.cast(), $value.to_bits()))
    };
}

/// Which `atom` instruction an explicit form becomes: its state space and scope.
#[doc(hidden)]
#[derive(Clone, Copy)]
pub enum Form {
    /// LLVM's `atomicrmw`: the state space inferred, device scope (CUDA's `atomicAdd`).
    Generic,
    /// `atom.shared.OP`: a shared-memory address (`ATOMS`).
    Shared,
    /// `atom.global.OP`: a global-memory address.
    Global,
    /// `atom.relaxed.cta.OP`: generic address, block scope (`atomicAdd_block`).
    Block,
    /// `atom.relaxed.sys.OP`: generic address, system scope (`atomicAdd_system`).
    System,
}

/// One `atom` (returns the old value) or `red` (no result) in the state space and scope of
/// `$form`. A shared address comes from
/// [`shared_addr`](crate::shared::shared_addr), which the link stage folds to the array's
/// symbol: no `cvta` in the PTX; a global one from [`global_addr`](crate::shared::global_addr).
macro_rules! atom_asm {
    (atom $form:expr, $op:literal, $ptx:literal, $reg:ident, $address:expr, $value:expr) => {{
        let old;
        match $form {
            // Not reached from `atom` (the generic form is LLVM's), but correct if it were.
            Form::Generic => asm!(concat!("atom.", $op, ".", $ptx, " {old}, [{a}], {v};"),
                old = out($reg) old, a = in(reg64) $address, v = in($reg) $value, options(nostack, preserves_flags)),
            Form::Block => asm!(concat!("atom.relaxed.cta.", $op, ".", $ptx, " {old}, [{a}], {v};"),
                old = out($reg) old, a = in(reg64) $address, v = in($reg) $value, options(nostack, preserves_flags)),
            Form::Shared => asm!(concat!("atom.shared.", $op, ".", $ptx, " {old}, [{a}], {v};"),
                old = out($reg) old, a = in(reg64) crate::shared::shared_addr($address), v = in($reg) $value, options(nostack, preserves_flags)),
            Form::Global => asm!(concat!("atom.global.", $op, ".", $ptx, " {old}, [{a}], {v};"),
                old = out($reg) old, a = in(reg64) crate::shared::global_addr($address), v = in($reg) $value, options(nostack, preserves_flags)),
            Form::System => asm!(concat!("atom.relaxed.sys.", $op, ".", $ptx, " {old}, [{a}], {v};"),
                old = out($reg) old, a = in(reg64) $address, v = in($reg) $value, options(nostack, preserves_flags)),
        }
        old
    }};
    (red $form:expr, $op:literal, $ptx:literal, $reg:ident, $address:expr, $value:expr) => {
        match $form {
            Form::Shared => asm!(concat!("red.shared.", $op, ".", $ptx, " [{a}], {v};"),
                a = in(reg64) crate::shared::shared_addr($address), v = in($reg) $value, options(nostack, preserves_flags)),
            _ => asm!(concat!("red.", $op, ".", $ptx, " [{a}], {v};"),
                a = in(reg64) $address, v = in($reg) $value, options(nostack, preserves_flags)),
        }
    };
}

/// The `red` form where PTX has one (`red`), nothing where it has not (`no_red`: `exch`, whose
/// public functions have no `red` form to call this).
macro_rules! red_body {
    (red $($args:tt)*) => { atom_asm!(red $($args)*) };
    (no_red $($args:tt)*) => { () };
}

/// One trait per `atom` operation (implemented for the types the operation has, each with its
/// PTX type, register class and LLVM atomic) and its functions: generic, shared, global, block-
/// and system-scoped, and where PTX has one, the `red` forms that return nothing.
macro_rules! atomics {
    ($($(#[$doc:meta])* $cuda:literal fn $name:ident, $shared:ident, $global:ident, $block:ident, $system:ident,
        $has_red:ident $(($red:ident, $red_shared:ident))?: $trait:ident = $op:literal, $unimplemented:literal
        for $($t:ty: $ptx:literal $reg:ident $conv:ident $helper:ident),+;)*) => {$(
        #[doc = concat!("The types [`", stringify!($name), "`] and its forms take.")]
        #[diagnostic::on_unimplemented(message = $unimplemented)]
        pub trait $trait: Copy + sealed::Sealed {
            #[doc(hidden)]
            unsafe fn atom(address: *mut Self, value: Self, form: Form) -> Self;
            #[doc(hidden)]
            unsafe fn red(address: *mut Self, value: Self, form: Form);
        }
        $(
            impl $trait for $t {
                #[inline(always)]
                unsafe fn atom(address: *mut Self, value: Self, form: Form) -> Self {
                    if let Form::Generic = form {
                        return generic_rmw!($conv $t, $helper, address, value);
                    }
                    let old: $t = atom_asm!(atom form, $op, $ptx, $reg, address, value);
                    old
                }
                #[inline(always)]
                #[allow(unused_variables)]
                unsafe fn red(address: *mut Self, value: Self, form: Form) {
                    red_body!($has_red form, $op, $ptx, $reg, address, value)
                }
            }
        )+
        $(#[$doc])*
        ///
        #[doc = concat!("`", $cuda, "`: relaxed, device-scoped, on any address; `atom.shared.", $op, "` on a pointer into shared memory, `atom.global.", $op, "` on one into global memory (see [the module](self)).")]
        ///
        /// # Safety
        /// `address` points to a valid, aligned `T` in global or shared memory.
        #[inline(always)]
        pub unsafe fn $name<T: $trait>(address: *mut T, value: T) -> T {
            T::atom(address, value, Form::Generic)
        }
        #[doc = concat!("[`", stringify!($name), "`] on shared memory: `atom.shared.", $op, "` (SASS `ATOMS`), returning the old value.")]
        ///
        /// # Safety
        /// `address` points to a valid, aligned `T` in this block's shared memory
        /// ([`shared_array!`](crate::shared_array), [`dynamic_shared`](crate::shared::dynamic_shared)).
        #[inline(always)]
        pub unsafe fn $shared<T: $trait>(address: *mut T, value: T) -> T {
            T::atom(address, value, Form::Shared)
        }
        #[doc = concat!("[`", stringify!($name), "`] on global memory: `atom.global.", $op, "`, returning the old value.")]
        ///
        /// # Safety
        /// `address` points to a valid, aligned `T` in global memory.
        #[inline(always)]
        pub unsafe fn $global<T: $trait>(address: *mut T, value: T) -> T {
            T::atom(address, value, Form::Global)
        }
        #[doc = concat!("[`", stringify!($name), "`] atomic only with respect to this block (`", $cuda, "_block`, `atom.relaxed.cta.", $op, "`).")]
        ///
        /// # Safety
        #[doc = concat!("As [`", stringify!($name), "`]; threads of other blocks must not access `*address` meanwhile.")]
        #[inline(always)]
        pub unsafe fn $block<T: $trait>(address: *mut T, value: T) -> T {
            T::atom(address, value, Form::Block)
        }
        #[doc = concat!("[`", stringify!($name), "`] atomic with respect to the host and other GPUs too (`", $cuda, "_system`, `atom.relaxed.sys.", $op, "`): for mapped or managed memory.")]
        ///
        /// # Safety
        /// `address` points to a valid, aligned `T` in memory the GPU can reach.
        #[inline(always)]
        pub unsafe fn $system<T: $trait>(address: *mut T, value: T) -> T {
            T::atom(address, value, Form::System)
        }
        $(
            #[doc = concat!("[`", stringify!($name), "`] without the old value: `red.", $op, "`, which need not wait for the memory's answer.")]
            ///
            /// # Safety
            /// `address` points to a valid, aligned `T` in global or shared memory.
            #[inline(always)]
            pub unsafe fn $red<T: $trait>(address: *mut T, value: T) {
                T::red(address, value, Form::Generic)
            }
            #[doc = concat!("[`", stringify!($name), "`] on shared memory without the old value: `red.shared.", $op, "` (SASS `ATOMS` with no result register): the histogram's update.")]
            ///
            /// # Safety
            /// `address` points to a valid, aligned `T` in this block's shared memory.
            #[inline(always)]
            pub unsafe fn $red_shared<T: $trait>(address: *mut T, value: T) {
                T::red(address, value, Form::Shared)
            }
        )?
    )*};
}

atomics! {
    /// `*address += value`, returning the old value. `i64` adds as `u64` (two's complement;
    /// PTX has no `atom.add.s64`).
    "atomicAdd" fn atomic_add, atomic_add_shared, atomic_add_global, atomic_add_block, atomic_add_system, red(red_add, red_add_shared): AtomicAdd = "add", "PTX has no atomic add for `{Self}`: `atomic_add` takes `u32`, `i32`, `u64`, `i64`, `f32` or `f64`"
        for u32: "u32" reg32 same add_i32, i32: "s32" reg32 int add_i32, u64: "u64" reg64 same add_i64, i64: "u64" reg64 int add_i64,
            f32: "f32" reg32 same fadd_float, f64: "f64" reg64 same fadd_double;
    /// `*address = min(*address, value)`, returning the old value.
    "atomicMin" fn atomic_min, atomic_min_shared, atomic_min_global, atomic_min_block, atomic_min_system, red(red_min, red_min_shared): AtomicMin = "min", "PTX has no atomic min for `{Self}`: `atomic_min` takes `u32`, `i32`, `u64` or `i64`"
        for u32: "u32" reg32 same umin_i32, i32: "s32" reg32 int min_i32, u64: "u64" reg64 same umin_i64, i64: "s64" reg64 int min_i64;
    /// `*address = max(*address, value)`, returning the old value.
    "atomicMax" fn atomic_max, atomic_max_shared, atomic_max_global, atomic_max_block, atomic_max_system, red(red_max, red_max_shared): AtomicMax = "max", "PTX has no atomic max for `{Self}`: `atomic_max` takes `u32`, `i32`, `u64` or `i64`"
        for u32: "u32" reg32 same umax_i32, i32: "s32" reg32 int max_i32, u64: "u64" reg64 same umax_i64, i64: "s64" reg64 int max_i64;
    /// `*address &= value`, returning the old value.
    "atomicAnd" fn atomic_and, atomic_and_shared, atomic_and_global, atomic_and_block, atomic_and_system, red(red_and, red_and_shared): AtomicAnd = "and", "PTX has no atomic and for `{Self}`: `atomic_and` takes `u32`, `i32`, `u64` or `i64`"
        for u32: "b32" reg32 same and_i32, i32: "b32" reg32 int and_i32, u64: "b64" reg64 same and_i64, i64: "b64" reg64 int and_i64;
    /// `*address |= value`, returning the old value.
    "atomicOr" fn atomic_or, atomic_or_shared, atomic_or_global, atomic_or_block, atomic_or_system, red(red_or, red_or_shared): AtomicOr = "or", "PTX has no atomic or for `{Self}`: `atomic_or` takes `u32`, `i32`, `u64` or `i64`"
        for u32: "b32" reg32 same or_i32, i32: "b32" reg32 int or_i32, u64: "b64" reg64 same or_i64, i64: "b64" reg64 int or_i64;
    /// `*address ^= value`, returning the old value.
    "atomicXor" fn atomic_xor, atomic_xor_shared, atomic_xor_global, atomic_xor_block, atomic_xor_system, red(red_xor, red_xor_shared): AtomicXor = "xor", "PTX has no atomic xor for `{Self}`: `atomic_xor` takes `u32`, `i32`, `u64` or `i64`"
        for u32: "b32" reg32 same xor_i32, i32: "b32" reg32 int xor_i32, u64: "b64" reg64 same xor_i64, i64: "b64" reg64 int xor_i64;
    /// `*address = value`, returning the old value.
    "atomicExch" fn atomic_exch, atomic_exch_shared, atomic_exch_global, atomic_exch_block, atomic_exch_system, no_red: AtomicExch = "exch", "PTX has no atomic exchange for `{Self}`: `atomic_exch` takes `u32`, `i32`, `u64`, `i64`, `f32` or `f64`"
        for u32: "b32" reg32 same xchg_i32, i32: "b32" reg32 int xchg_i32, u64: "b64" reg64 same xchg_i64, i64: "b64" reg64 int xchg_i64,
            f32: "b32" reg32 bits xchg_i32, f64: "b64" reg64 bits xchg_i64;
    /// `*address = if *address >= value { 0 } else { *address + 1 }`, returning the old value: a
    /// counter that wraps at `value` (a ring buffer's index).
    "atomicInc" fn atomic_inc, atomic_inc_shared, atomic_inc_global, atomic_inc_block, atomic_inc_system, red(red_inc, red_inc_shared): AtomicInc = "inc", "PTX has no atomic increment for `{Self}`: `atomic_inc` takes `u32`"
        for u32: "u32" reg32 same uinc_wrap_i32;
    /// `*address = if *address == 0 || *address > value { value } else { *address - 1 }`,
    /// returning the old value: [`atomic_inc`]'s counter run backwards.
    "atomicDec" fn atomic_dec, atomic_dec_shared, atomic_dec_global, atomic_dec_block, atomic_dec_system, red(red_dec, red_dec_shared): AtomicDec = "dec", "PTX has no atomic decrement for `{Self}`: `atomic_dec` takes `u32`"
        for u32: "u32" reg32 same udec_wrap_i32;
}

/// The types [`atomic_cas`] takes (compared by their bits).
#[diagnostic::on_unimplemented(message = "PTX has no atomic compare-and-swap for `{Self}`: `atomic_cas` takes `u32`, `i32`, `u64`, `i64`, `f32` or `f64`")]
pub trait AtomicCas: Copy + sealed::Sealed {
    #[doc(hidden)]
    unsafe fn atomic_cas(address: *mut Self, compare: Self, value: Self) -> Self;
    #[doc(hidden)]
    unsafe fn atomic_cas_shared(address: *mut Self, compare: Self, value: Self) -> Self;
}

macro_rules! cas {
    ($($t:ty: $ptx:literal $reg:ident $bits:ty, $helper:ident),+) => {$(
        impl AtomicCas for $t {
            #[inline(always)]
            unsafe fn atomic_cas(address: *mut Self, compare: Self, value: Self) -> Self {
                // By bits: the declaration takes the unsigned type of the same width.
                let old = rmw::$helper(address.cast(), <$t as Bits<$bits>>::to(compare), <$t as Bits<$bits>>::to(value));
                <$t as Bits<$bits>>::from(old)
            }
            #[inline(always)]
            unsafe fn atomic_cas_shared(address: *mut Self, compare: Self, value: Self) -> Self {
                let old: $t;
                asm!(
                    concat!("atom.shared.cas.", $ptx, " {old}, [{address}], {compare}, {value};"),
                    old = out($reg) old, address = in(reg64) crate::shared::shared_addr(address), compare = in($reg) compare, value = in($reg) value,
                    options(nostack, preserves_flags),
                );
                old
            }
        }
    )+};
}

/// A type's bits as the unsigned integer `U` of its width, and back.
trait Bits<U> {
    fn to(self) -> U;
    fn from(bits: U) -> Self;
}

macro_rules! bits {
    ($($t:ty => $u:ty: |$x:ident| $to:expr, |$b:ident| $from:expr;)+) => {$(
        impl Bits<$u> for $t {
            #[inline(always)]
            fn to(self) -> $u {
                let $x = self;
                $to
            }
            #[inline(always)]
            fn from($b: $u) -> Self {
                $from
            }
        }
    )+};
}

bits! {
    u32 => u32: |x| x, |b| b;
    i32 => u32: |x| x as u32, |b| b as i32;
    f32 => u32: |x| x.to_bits(), |b| f32::from_bits(b);
    u64 => u64: |x| x, |b| b;
    i64 => u64: |x| x as u64, |b| b as i64;
    f64 => u64: |x| x.to_bits(), |b| f64::from_bits(b);
}

cas!(u32: "b32" reg32 u32, cmpxchg_i32, i32: "b32" reg32 u32, cmpxchg_i32, u64: "b64" reg64 u64, cmpxchg_i64,
     i64: "b64" reg64 u64, cmpxchg_i64, f32: "b32" reg32 u32, cmpxchg_i32, f64: "b64" reg64 u64, cmpxchg_i64);

/// `if *address == compare { *address = value }`, returning the old value (`atomicCAS`):
/// relaxed, device-scoped, the state space inferred as for [`atomic_add`]. The building block
/// of any other read-modify-write.
///
/// # Safety
/// `address` points to a valid, aligned `T` in global or shared memory.
#[inline(always)]
pub unsafe fn atomic_cas<T: AtomicCas>(address: *mut T, compare: T, value: T) -> T {
    T::atomic_cas(address, compare, value)
}

/// [`atomic_cas`] on shared memory: `atom.shared.cas` (SASS `ATOMS.CAS`).
///
/// # Safety
/// `address` points to a valid, aligned `T` in this block's shared memory.
#[inline(always)]
pub unsafe fn atomic_cas_shared<T: AtomicCas>(address: *mut T, compare: T, value: T) -> T {
    T::atomic_cas_shared(address, compare, value)
}
