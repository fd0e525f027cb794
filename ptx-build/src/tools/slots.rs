//! How many tools run at once: a pool's jobs hold a slot only while a tool of theirs runs.
//!
//! A job is more than its nvcc run: before it, the step's key (every input hashed); after it,
//! the PTX's line table rewritten, the kept unit read for signatures, the outputs hashed. When a
//! job held its share of `-j` from start to end, that work left a core idle between two nvcc
//! runs: 60-100 ms a file, 0.3 s of a ten-file build on two cores (BENCHMARKS.md, issue 25). So
//! the pool runs one thread more than it may run tools, and the limit is taken here, around each
//! process: the next nvcc starts as soon as the last one ends.
//!
//! Past the first slot (the token cargo gave the build script), each slot is a token of cargo's
//! jobserver where there is one, so a build script's tools share cargo's `-j` with the rest of
//! the build. Tokens are polled, never waited for: a thread that would wait while the first slot
//! drains the queue could wait forever when sibling build scripts hold every token the same way.

use std::cell::RefCell;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// The slots of one pool: `capacity` tools at once.
pub struct Slots {
    capacity: usize,
    jobserver: Option<jobserver::Client>,
    /// Slots in use, the first one (no token) among them when `first_taken`.
    state: Mutex<State>,
    freed: Condvar,
}

#[derive(Default)]
struct State {
    in_use: usize,
    first_taken: bool,
}

/// A slot held while one tool runs; given back when dropped.
pub struct Slot {
    slots: Arc<Slots>,
    first: bool,
    _token: Option<jobserver::Acquired>,
}

impl Slots {
    /// Slots for `capacity` tools at once; past the first, each needs a token of `jobserver`
    /// where there is one.
    pub fn new(capacity: usize, jobserver: Option<jobserver::Client>) -> Arc<Slots> {
        Arc::new(Slots { capacity: capacity.max(1), jobserver, state: Mutex::default(), freed: Condvar::new() })
    }

    /// Waits for a slot: the first if it is free, else one more while under capacity (with a
    /// jobserver token where there is a jobserver).
    fn acquire(self: &Arc<Self>) -> Slot {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if !state.first_taken {
                state.first_taken = true;
                state.in_use += 1;
                return Slot { slots: self.clone(), first: true, _token: None };
            }
            if state.in_use < self.capacity {
                let token = match &self.jobserver {
                    None => Ok(None),
                    Some(c) => match c.try_acquire() {
                        Ok(Some(t)) => Ok(Some(t)),
                        Ok(None) => Err(()),
                        Err(_) => Ok(None), // a jobserver we cannot read: run as if there were none
                    },
                };
                if let Ok(token) = token {
                    state.in_use += 1;
                    return Slot { slots: self.clone(), first: false, _token: token };
                }
                // No token yet: look again soon, or when a slot of ours is freed.
                state = self.freed.wait_timeout(state, Duration::from_millis(10)).unwrap_or_else(|e| e.into_inner()).0;
                continue;
            }
            state = self.freed.wait(state).unwrap_or_else(|e| e.into_inner());
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut state = self.slots.state.lock().unwrap_or_else(|e| e.into_inner());
        state.in_use -= 1;
        if self.first {
            state.first_taken = false;
        }
        self.slots.freed.notify_one();
    }
}

thread_local! {
    /// The slots of the pool this thread works for.
    static CURRENT: RefCell<Option<Arc<Slots>>> = const { RefCell::new(None) };
}

/// Runs `f` on this thread with its tools limited by `slots`.
pub fn within<T>(slots: &Arc<Slots>, f: impl FnOnce() -> T) -> T {
    let before = CURRENT.with(|c| c.replace(Some(slots.clone())));
    let out = f();
    CURRENT.with(|c| *c.borrow_mut() = before);
    out
}

/// A slot of this thread's pool for one tool run (`None` outside a pool: no limit).
pub fn hold() -> Option<Slot> {
    let slots = CURRENT.with(|c| c.borrow().clone())?;
    Some(slots.acquire())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn no_more_tools_run_at_once_than_there_are_slots() {
        let slots = Slots::new(2, None);
        let (running, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
        std::thread::scope(|s| {
            for _ in 0..5 {
                s.spawn(|| {
                    within(&slots, || {
                        for _ in 0..4 {
                            let _slot = hold();
                            let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                            most.fetch_max(now, Ordering::SeqCst);
                            std::thread::sleep(Duration::from_millis(2));
                            running.fetch_sub(1, Ordering::SeqCst);
                        }
                    })
                });
            }
        });
        assert_eq!(most.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn outside_a_pool_nothing_is_limited_and_a_slot_is_given_back_when_dropped() {
        assert!(hold().is_none());
        let slots = Slots::new(1, None);
        within(&slots, || {
            let slot = hold();
            assert_eq!(slots.state.lock().unwrap().in_use, 1);
            drop(slot);
            assert_eq!(slots.state.lock().unwrap().in_use, 0);
            drop(hold());
        });
        // Back outside the pool.
        assert!(hold().is_none());
    }
}
