//! Atomics on global and shared memory: CUDA's `atomicAdd`, `atomicMin`, .., `atomicCAS`.
//!
//! [`atomic_add`] and its kin are one `atom` instruction on a generic address, so the same
//! function works on global memory and on shared memory ([`shared_array!`](crate::shared_array),
//! [`dynamic_shared`](crate::shared::dynamic_shared)). As CUDA's, they are relaxed and
//! device-scoped (`atom.OP.TYPE` without qualifiers: `.relaxed.gpu`): they order nothing else;
//! pair them with a [`fence`](crate::sync) to publish other data. Each returns the old value.
//!
//! A generic atomic on shared memory compiles to a generic `ATOM` that the hardware must route;
//! where the state space is known, say it:
//!
//! | form | PTX | when |
//! |---|---|---|
//! | `atomic_add` | `atom.add` | any address, device scope (`atomicAdd`) |
//! | `atomic_add_shared` | `atom.shared.add` | shared memory (`ATOMS`) |
//! | `atomic_add_global` | `atom.global.add` | global memory |
//! | `atomic_add_block` | `atom.relaxed.cta.add` | only this block touches it (`atomicAdd_block`) |
//! | `atomic_add_system` | `atom.relaxed.sys.add` | host or peer GPUs too (`atomicAdd_system`) |
//! | `red_add`, `red_add_shared` | `red.add`, `red.shared.add` | the old value is not needed |
//!
//! The same forms exist for `min`, `max`, `and`, `or`, `xor` (and `exch`, which has no `red`);
//! [`atomic_cas_shared`] is CAS on shared memory.
//!
//! The `asm!` has no `nomem`/`readonly`: it writes memory, so the compiler must keep it, in
//! order, with the loads and stores around it.

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

/// Which `atom` instruction a call becomes: its state space and scope.
#[doc(hidden)]
#[derive(Clone, Copy)]
pub enum Form {
    /// `atom.OP`: generic address, device scope (CUDA's `atomicAdd`).
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
/// `$form`. A shared address comes from [`shared_addr`](crate::shared::shared_addr), which the
/// link stage folds to the array's symbol: no `cvta` in the PTX; a global one from
/// [`global_addr`](crate::shared::global_addr).
macro_rules! atom_asm {
    (atom $form:expr, $op:literal, $ptx:literal, $reg:ident, $address:expr, $value:expr) => {{
        let old;
        match $form {
            Form::Generic => asm!(concat!("atom.", $op, ".", $ptx, " {old}, [{a}], {v};"),
                old = out($reg) old, a = in(reg64) $address, v = in($reg) $value, options(nostack, preserves_flags)),
            Form::Shared => asm!(concat!("atom.shared.", $op, ".", $ptx, " {old}, [{a}], {v};"),
                old = out($reg) old, a = in(reg64) crate::shared::shared_addr($address), v = in($reg) $value, options(nostack, preserves_flags)),
            Form::Global => asm!(concat!("atom.global.", $op, ".", $ptx, " {old}, [{a}], {v};"),
                old = out($reg) old, a = in(reg64) crate::shared::global_addr($address), v = in($reg) $value, options(nostack, preserves_flags)),
            Form::Block => asm!(concat!("atom.relaxed.cta.", $op, ".", $ptx, " {old}, [{a}], {v};"),
                old = out($reg) old, a = in(reg64) $address, v = in($reg) $value, options(nostack, preserves_flags)),
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
/// PTX type and register class) and its functions: generic, shared, global, block- and
/// system-scoped, and where PTX has one, the `red` forms that return nothing.
macro_rules! atomics {
    ($($(#[$doc:meta])* $cuda:literal fn $name:ident, $shared:ident, $global:ident, $block:ident, $system:ident,
        $has_red:ident $(($red:ident, $red_shared:ident))?: $trait:ident = $op:literal for $($t:ty: $ptx:literal $reg:ident),+;)*) => {$(
        #[doc = concat!("The types [`", stringify!($name), "`] and its forms take.")]
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
        #[doc = concat!("One `atom.", $op, "` on a generic address (`", $cuda, "`): relaxed, device-scoped.")]
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
        /// As [`atomic_add`]; threads of other blocks must not access `*address` meanwhile.
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
    /// `*address += value`, returning the old value (`atomicAdd`). `i64` adds as `u64`
    /// (two's complement; PTX has no `atom.add.s64`).
    "atomicAdd" fn atomic_add, atomic_add_shared, atomic_add_global, atomic_add_block, atomic_add_system, red(red_add, red_add_shared): AtomicAdd = "add"
        for u32: "u32" reg32, i32: "s32" reg32, u64: "u64" reg64, i64: "u64" reg64, f32: "f32" reg32, f64: "f64" reg64;
    /// `*address = min(*address, value)`, returning the old value (`atomicMin`).
    "atomicMin" fn atomic_min, atomic_min_shared, atomic_min_global, atomic_min_block, atomic_min_system, red(red_min, red_min_shared): AtomicMin = "min"
        for u32: "u32" reg32, i32: "s32" reg32, u64: "u64" reg64, i64: "s64" reg64;
    /// `*address = max(*address, value)`, returning the old value (`atomicMax`).
    "atomicMax" fn atomic_max, atomic_max_shared, atomic_max_global, atomic_max_block, atomic_max_system, red(red_max, red_max_shared): AtomicMax = "max"
        for u32: "u32" reg32, i32: "s32" reg32, u64: "u64" reg64, i64: "s64" reg64;
    /// `*address &= value`, returning the old value (`atomicAnd`).
    "atomicAnd" fn atomic_and, atomic_and_shared, atomic_and_global, atomic_and_block, atomic_and_system, red(red_and, red_and_shared): AtomicAnd = "and"
        for u32: "b32" reg32, i32: "b32" reg32, u64: "b64" reg64, i64: "b64" reg64;
    /// `*address |= value`, returning the old value (`atomicOr`).
    "atomicOr" fn atomic_or, atomic_or_shared, atomic_or_global, atomic_or_block, atomic_or_system, red(red_or, red_or_shared): AtomicOr = "or"
        for u32: "b32" reg32, i32: "b32" reg32, u64: "b64" reg64, i64: "b64" reg64;
    /// `*address ^= value`, returning the old value (`atomicXor`).
    "atomicXor" fn atomic_xor, atomic_xor_shared, atomic_xor_global, atomic_xor_block, atomic_xor_system, red(red_xor, red_xor_shared): AtomicXor = "xor"
        for u32: "b32" reg32, i32: "b32" reg32, u64: "b64" reg64, i64: "b64" reg64;
    /// `*address = value`, returning the old value (`atomicExch`).
    "atomicExch" fn atomic_exch, atomic_exch_shared, atomic_exch_global, atomic_exch_block, atomic_exch_system, no_red: AtomicExch = "exch"
        for u32: "b32" reg32, i32: "b32" reg32, u64: "b64" reg64, i64: "b64" reg64, f32: "b32" reg32, f64: "b64" reg64;
}

/// The types [`atomic_cas`] takes (compared by their bits).
pub trait AtomicCas: Copy + sealed::Sealed {
    #[doc(hidden)]
    unsafe fn atomic_cas(address: *mut Self, compare: Self, value: Self) -> Self;
    #[doc(hidden)]
    unsafe fn atomic_cas_shared(address: *mut Self, compare: Self, value: Self) -> Self;
}

macro_rules! cas {
    ($($t:ty: $ptx:literal $reg:ident),+) => {$(
        impl AtomicCas for $t {
            #[inline(always)]
            unsafe fn atomic_cas(address: *mut Self, compare: Self, value: Self) -> Self {
                let old: $t;
                asm!(
                    concat!("atom.cas.", $ptx, " {old}, [{address}], {compare}, {value};"),
                    old = out($reg) old, address = in(reg64) address, compare = in($reg) compare, value = in($reg) value,
                    options(nostack, preserves_flags),
                );
                old
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

cas!(u32: "b32" reg32, i32: "b32" reg32, u64: "b64" reg64, i64: "b64" reg64, f32: "b32" reg32, f64: "b64" reg64);

/// `if *address == compare { *address = value }`, returning the old value (`atomicCAS`): the
/// building block of any other read-modify-write.
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
