//! `mbarrier`: barriers in shared memory that count arrivals and bytes, what TMA copies complete
//! on and what producer and consumer warps of a pipeline wait on (CUDA's `cuda::barrier`,
//! CUTLASS's `ClusterTransactionBarrier`).
//!
//! | PTX | ptx-device |
//! |---|---|
//! | `mbarrier.init.shared.b64 [bar], count` (sm_80) | [`mbarrier_init`] |
//! | `mbarrier.arrive.shared.b64 state, [bar]` (sm_80) | [`mbarrier_arrive`] |
//! | `mbarrier.arrive.expect_tx.shared.b64 state, [bar], bytes` (sm_90) | [`mbarrier_arrive_expect_tx`] |
//! | `mbarrier.expect_tx.relaxed.cta.shared.b64 [bar], bytes` (sm_90) | [`mbarrier_expect_tx`] |
//! | `mbarrier.try_wait.parity.shared.b64 p, [bar], phase` (sm_90) | [`mbarrier_try_wait_parity`], [`mbarrier_wait_parity`] |
//! | `mbarrier.test_wait.shared.b64 p, [bar], state` (sm_80) | [`mbarrier_test_wait`] |
//! | `fence.mbarrier_init.release.cluster` (sm_90) | [`fence_mbarrier_init`] |
//! | `fence.proxy.async.shared::cta` (sm_90) | [`fence_proxy_async_shared`] |
//!
//! A barrier completes a phase when its pending arrivals reach zero and the bytes it expects
//! have landed; then it rearms with the count it was initialised with. Waiters name the phase by
//! its parity: the first phase is 0, the next 1, and so on.

use core::arch::asm;

use crate::shared::shared_addr;

/// A barrier's 8 bytes; it lives in shared memory (`shared_array![Mbarrier; 4]`).
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(8))]
pub struct Mbarrier(pub u64);

/// Sets `bar` to expect `count` arrivals a phase, in phase 0.
///
/// # Safety
/// `bar` is in shared memory; no thread uses it until a barrier (and, for TMA,
/// [`fence_mbarrier_init`]) after this.
#[inline(always)]
pub unsafe fn mbarrier_init(bar: *mut Mbarrier, count: u32) {
    asm!("mbarrier.init.shared.b64 [{b}], {c};", b = in(reg64) shared_addr(bar), c = in(reg32) count, options(nostack, preserves_flags))
}

/// Counts this thread's arrival; returns the phase state token for [`mbarrier_test_wait`].
///
/// # Safety
/// `bar` is an initialised barrier in shared memory.
#[inline(always)]
pub unsafe fn mbarrier_arrive(bar: *mut Mbarrier) -> u64 {
    let s: u64;
    asm!("mbarrier.arrive.shared.b64 {s}, [{b}];", s = out(reg64) s, b = in(reg64) shared_addr(bar), options(nostack, preserves_flags));
    s
}

/// Arrives and adds `bytes` to the bytes this phase waits for (what the TMA copies issued next
/// will deliver; sm_90).
///
/// # Safety
/// As [`mbarrier_arrive`].
#[inline(always)]
pub unsafe fn mbarrier_arrive_expect_tx(bar: *mut Mbarrier, bytes: u32) -> u64 {
    let s: u64;
    asm!("mbarrier.arrive.expect_tx.shared.b64 {s}, [{b}], {n};", s = out(reg64) s, b = in(reg64) shared_addr(bar), n = in(reg32) bytes,
        options(nostack, preserves_flags));
    s
}

/// Adds `bytes` to the bytes this phase waits for, without arriving (sm_90).
///
/// # Safety
/// As [`mbarrier_arrive`].
#[inline(always)]
pub unsafe fn mbarrier_expect_tx(bar: *mut Mbarrier, bytes: u32) {
    asm!("mbarrier.expect_tx.relaxed.cta.shared.b64 [{b}], {n};", b = in(reg64) shared_addr(bar), n = in(reg32) bytes, options(nostack, preserves_flags))
}

/// Whether the phase of parity `parity` has completed, after waiting a while for it in
/// hardware (`mbarrier.try_wait.parity`, sm_90).
///
/// # Safety
/// As [`mbarrier_arrive`].
#[inline(always)]
pub unsafe fn mbarrier_try_wait_parity(bar: *mut Mbarrier, parity: u32) -> bool {
    let done: u32;
    asm!(
        "{{ .reg .pred p; mbarrier.try_wait.parity.shared.b64 p, [{b}], {ph}; selp.u32 {d}, 1, 0, p; }}",
        d = out(reg32) done, b = in(reg64) shared_addr(bar), ph = in(reg32) parity, options(nostack, preserves_flags),
    );
    done != 0
}

/// Waits until the phase of parity `parity` has completed (sm_90). What the phase's copies and
/// arrivals wrote is visible to this thread afterwards.
///
/// # Safety
/// As [`mbarrier_arrive`].
#[inline(always)]
pub unsafe fn mbarrier_wait_parity(bar: *mut Mbarrier, parity: u32) {
    while !mbarrier_try_wait_parity(bar, parity) {}
}

/// Whether the phase `state` (from [`mbarrier_arrive`]) has completed, without waiting (sm_80).
///
/// # Safety
/// As [`mbarrier_arrive`].
#[inline(always)]
pub unsafe fn mbarrier_test_wait(bar: *mut Mbarrier, state: u64) -> bool {
    let done: u32;
    asm!(
        "{{ .reg .pred p; mbarrier.test_wait.shared.b64 p, [{b}], {s}; selp.u32 {d}, 1, 0, p; }}",
        d = out(reg32) done, b = in(reg64) shared_addr(bar), s = in(reg64) state, options(nostack, preserves_flags),
    );
    done != 0
}

/// Makes barrier initialisations visible to the async proxy (TMA) and the cluster
/// (`fence.mbarrier_init.release.cluster`, sm_90).
#[inline(always)]
pub fn fence_mbarrier_init() {
    // SAFETY: a fence.
    unsafe { asm!("fence.mbarrier_init.release.cluster;", options(nostack, preserves_flags)) }
}

/// Orders this thread's ordinary shared-memory writes before later reads by the async proxy
/// (`wgmma`, TMA stores): `fence.proxy.async.shared::cta` (sm_90). Each writing thread runs
/// it before the barrier the reader waits on.
#[inline(always)]
pub fn fence_proxy_async_shared() {
    // SAFETY: a fence.
    unsafe { asm!("fence.proxy.async.shared::cta;", options(nostack, preserves_flags)) }
}
