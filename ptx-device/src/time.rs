//! Cycle and wall-clock counters: `clock()`, `clock64()` and `%globaltimer`.
//!
//! These registers change while the thread runs, so each read is a volatile `asm!` without
//! `pure` or `nomem`, as NVIDIA's inline-PTX reference requires of `asm volatile(.. "memory")`:
//! the compiler may neither merge two reads, nor drop one, nor move memory accesses across
//! it; the code between two reads is what gets timed.

use core::arch::asm;

macro_rules! counters {
    ($($(#[$doc:meta])* $name:ident -> $t:ty = $ptx:literal, $reg:ident;)*) => {$(
        $(#[$doc])*
        #[inline(always)]
        pub fn $name() -> $t {
            let v: $t;
            // SAFETY: reading a special register has no preconditions.
            unsafe { asm!($ptx, v = out($reg) v, options(nostack, preserves_flags)) };
            v
        }
    )*};
}

counters! {
    /// The SM's 32-bit cycle counter (`clock()`, `%clock`); wraps in seconds.
    clock -> u32 = "mov.u32 {v}, %clock;", reg32;
    /// The SM's 64-bit cycle counter (`clock64()`, `%clock64`).
    clock64 -> u64 = "mov.u64 {v}, %clock64;", reg64;
    /// The GPU's nanosecond timer (`%globaltimer`), comparable across SMs; it ticks in steps
    /// of about a microsecond on most GPUs.
    globaltimer -> u64 = "mov.u64 {v}, %globaltimer;", reg64;
}
