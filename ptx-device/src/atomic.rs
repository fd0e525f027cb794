//! Atomics on global and shared memory: CUDA's `atomicAdd`, `atomicMin`, .., `atomicCAS`.
//!
//! Each is one `atom` instruction on a generic address, so the same function works on global
//! memory and on shared memory ([`shared_array!`](crate::shared_array),
//! [`dynamic_shared`](crate::shared::dynamic_shared)). As CUDA's, they are relaxed and
//! device-scoped (`atom.OP.TYPE` without qualifiers: `.relaxed.gpu`): they order nothing else;
//! pair them with a [`fence`](crate::sync) to publish other data. Each returns the old value
//! (ptxas turns an `atom` whose result is unused into a `red`).
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

/// One trait and one generic function per `atom` operation, implemented for the types the
/// operation has, each with its PTX type and register class.
macro_rules! atomics {
    ($($(#[$doc:meta])* fn $name:ident: $trait:ident = $op:literal for $($t:ty: $ptx:literal $reg:ident),+;)*) => {$(
        #[doc = concat!("The types [`", stringify!($name), "`] takes.")]
        pub trait $trait: Copy + sealed::Sealed {
            #[doc(hidden)]
            unsafe fn $name(address: *mut Self, value: Self) -> Self;
        }
        $(
            impl $trait for $t {
                #[inline(always)]
                unsafe fn $name(address: *mut Self, value: Self) -> Self {
                    let old: $t;
                    asm!(
                        concat!("atom.", $op, ".", $ptx, " {old}, [{address}], {value};"),
                        old = out($reg) old, address = in(reg64) address, value = in($reg) value,
                        options(nostack, preserves_flags),
                    );
                    old
                }
            }
        )+
        $(#[$doc])*
        ///
        /// # Safety
        /// `address` points to a valid, aligned `T` in global or shared memory.
        #[inline(always)]
        pub unsafe fn $name<T: $trait>(address: *mut T, value: T) -> T {
            T::$name(address, value)
        }
    )*};
}

atomics! {
    /// `*address += value`, returning the old value (`atomicAdd`). `i64` adds as `u64`
    /// (two's complement; PTX has no `atom.add.s64`).
    fn atomic_add: AtomicAdd = "add" for u32: "u32" reg32, i32: "s32" reg32, u64: "u64" reg64, i64: "u64" reg64,
        f32: "f32" reg32, f64: "f64" reg64;
    /// `*address = min(*address, value)`, returning the old value (`atomicMin`).
    fn atomic_min: AtomicMin = "min" for u32: "u32" reg32, i32: "s32" reg32, u64: "u64" reg64, i64: "s64" reg64;
    /// `*address = max(*address, value)`, returning the old value (`atomicMax`).
    fn atomic_max: AtomicMax = "max" for u32: "u32" reg32, i32: "s32" reg32, u64: "u64" reg64, i64: "s64" reg64;
    /// `*address &= value`, returning the old value (`atomicAnd`).
    fn atomic_and: AtomicAnd = "and" for u32: "b32" reg32, i32: "b32" reg32, u64: "b64" reg64, i64: "b64" reg64;
    /// `*address |= value`, returning the old value (`atomicOr`).
    fn atomic_or: AtomicOr = "or" for u32: "b32" reg32, i32: "b32" reg32, u64: "b64" reg64, i64: "b64" reg64;
    /// `*address ^= value`, returning the old value (`atomicXor`).
    fn atomic_xor: AtomicXor = "xor" for u32: "b32" reg32, i32: "b32" reg32, u64: "b64" reg64, i64: "b64" reg64;
    /// `*address = value`, returning the old value (`atomicExch`).
    fn atomic_exch: AtomicExch = "exch" for u32: "b32" reg32, i32: "b32" reg32, u64: "b64" reg64, i64: "b64" reg64,
        f32: "b32" reg32, f64: "b64" reg64;
}

/// The types [`atomic_cas`] takes (compared by their bits).
pub trait AtomicCas: Copy + sealed::Sealed {
    #[doc(hidden)]
    unsafe fn atomic_cas(address: *mut Self, compare: Self, value: Self) -> Self;
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
