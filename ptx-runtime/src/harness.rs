//! A test harness for GPU tests (feature `harness`), so a run says what it checked.
//!
//! libtest's `#[test]` cannot decide at run time that a test did not run: a GPU test that returns
//! early without a GPU reports `ok` having checked nothing. A test target with `harness = false`
//! and this module's `main` reports such a test as `ignored (no GPU: <reason>)` instead, counted
//! as ignored in the summary; on a GPU it runs. Where a GPU run is expected (a CI job on a GPU
//! machine, a bundle of test binaries carried to one), set `CARGO_PTX_REQUIRE_GPU=1`: a missing
//! GPU then fails every GPU test, naming the variable, so that run cannot pass by skipping.
//! Filters, `--list`, `--ignored`, `--exact`, `--skip` and `--test-threads` work as with libtest
//! (it is [libtest-mimic](https://docs.rs/libtest-mimic)).
//!
//! ```toml
//! [dev-dependencies]
//! ptx-runtime = { version = "0.1", features = ["harness"] }
//!
//! [[test]]
//! name = "gpu"
//! harness = false
//! ```
//!
//! ```no_run
//! // tests/gpu.rs
//! use ptx_runtime::harness::{self, Context};
//!
//! fn main() {
//!     harness::run(vec![
//!         harness::gpu("kernels_match_the_cpu", kernels_match_the_cpu),
//!         harness::test("the_module_lists_its_kernels", || assert!(true)),
//!     ]);
//! }
//!
//! fn kernels_match_the_cpu(ctx: &Context) {
//!     let stream = ctx.default_stream();
//!     // load the kernels, launch, compare with the CPU; a failed assertion fails the test
//! #   let _ = stream;
//! }
//! ```

use std::ffi::OsStr;
use std::sync::Arc;

use crate::LoadError;
use cudarc::driver::CudaContext;
pub use libtest_mimic::{Arguments, Conclusion, Trial};
use libtest_mimic::{Completion, Failed};

/// The environment variable that makes a missing GPU a failure rather than `ignored`.
pub const REQUIRE_GPU: &str = "CARGO_PTX_REQUIRE_GPU";

/// What a GPU test receives: a context on device 0.
pub type Context = Arc<CudaContext>;

/// A test that needs a GPU: it runs with a context on device 0. Where there is none (no driver,
/// no device), it is ignored with the one-line reason, or fails when [`REQUIRE_GPU`] is set. A
/// panic (a failed assertion) fails it.
pub fn gpu<F>(name: impl Into<String>, test: F) -> Trial
where
    F: FnOnce(&Context) + Send + 'static,
{
    Trial::ignorable_test(name, move || outcome(crate::context(0), test, std::env::var_os(REQUIRE_GPU).as_deref()))
}

/// A GPU test for GPUs that have what `lacks` checks (an arch, an amount of memory): `lacks`
/// returns what this GPU lacks, and the test is then ignored with that reason (with
/// [`REQUIRE_GPU`] set too: there is a GPU, and it is not one this test is for). Without a GPU
/// it is [`gpu`]'s.
pub fn gpu_where<L, F>(name: impl Into<String>, lacks: L, test: F) -> Trial
where
    L: FnOnce(&Context) -> Option<String> + Send + 'static,
    F: FnOnce(&Context) + Send + 'static,
{
    Trial::ignorable_test(name, move || {
        let ctx = match crate::context(0) {
            Ok(ctx) => ctx,
            Err(e) => return no_gpu(&e.to_string(), std::env::var_os(REQUIRE_GPU).as_deref()),
        };
        if let Some(why) = lacks(&ctx) {
            return Ok(Completion::ignored_with(why));
        }
        test(&ctx);
        Ok(Completion::Completed)
    })
}

/// Runs `test` on the context, or says why it cannot run (see [`gpu`]).
fn outcome(ctx: Result<Context, LoadError>, test: impl FnOnce(&Context), require: Option<&OsStr>) -> Result<Completion, Failed> {
    match ctx {
        Ok(ctx) => {
            test(&ctx);
            Ok(Completion::Completed)
        }
        Err(e) => no_gpu(&e.to_string(), require),
    }
}

/// A test that needs no GPU (plain data, the generated module's constants).
pub fn test<F>(name: impl Into<String>, test: F) -> Trial
where
    F: FnOnce() + Send + 'static,
{
    Trial::test(name, move || {
        test();
        Ok(())
    })
}

/// Runs `trials` with the command line's arguments, prints libtest's report and exits: 0 when
/// nothing failed, 101 otherwise (as libtest).
pub fn run(trials: Vec<Trial>) -> ! {
    libtest_mimic::run(&Arguments::from_args(), trials).exit()
}

/// Whether `value` (of [`REQUIRE_GPU`]) asks for a GPU: set, and neither empty nor `0`.
pub fn gpu_required(value: Option<&OsStr>) -> bool {
    value.is_some_and(|v| !v.is_empty() && v != "0")
}

/// The outcome of a GPU test that found no GPU, for the reason `error` (its first line is kept).
fn no_gpu(error: &str, require: Option<&OsStr>) -> Result<Completion, Failed> {
    let reason = error.lines().next().unwrap_or_default();
    if gpu_required(require) {
        let value = require.unwrap_or_default().to_string_lossy();
        Err(format!("no GPU: {reason}; {REQUIRE_GPU}={value} asks for a GPU run, where a GPU test must not be skipped (unset it to report GPU tests as ignored)").into())
    } else {
        Ok(Completion::ignored_with(format!("no GPU: {reason}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NO_DRIVER: &str = "no CUDA driver: libcuda could not be loaded\n  help: install the NVIDIA driver";

    #[test]
    fn without_the_variable_a_missing_gpu_is_ignored_with_the_first_line_of_the_reason() {
        for unset in [None, Some(OsStr::new("")), Some(OsStr::new("0"))] {
            match no_gpu(NO_DRIVER, unset) {
                Ok(Completion::Ignored { reason }) => {
                    assert_eq!(reason.as_deref(), Some("no GPU: no CUDA driver: libcuda could not be loaded"))
                }
                Ok(Completion::Completed) => panic!("{unset:?}: completed"),
                Err(e) => panic!("{unset:?}: {e:?}"),
            }
        }
    }

    #[test]
    fn with_the_variable_a_missing_gpu_fails_naming_it() {
        for set in ["1", "yes"] {
            let e = no_gpu(NO_DRIVER, Some(OsStr::new(set))).err().expect("a failure");
            let msg = e.message().unwrap_or_default().to_string();
            assert!(msg.starts_with("no GPU: no CUDA driver: libcuda could not be loaded; "), "{msg}");
            assert!(msg.contains(&format!("CARGO_PTX_REQUIRE_GPU={set} asks for a GPU run")) && msg.contains("unset it"), "{msg}");
            assert!(!msg.contains("help:"), "one line: {msg}");
        }
    }

    /// A GPU test without a GPU does not run: ignored with the reason, or failed when required.
    #[test]
    fn a_gpu_test_without_a_gpu_does_not_run() {
        let ran = std::cell::Cell::new(false);
        let r = outcome(Err(LoadError::NoDriver), |_| ran.set(true), None);
        assert!(
            matches!(r, Ok(Completion::Ignored { reason: Some(ref why) }) if why == "no GPU: no CUDA driver: libcuda could not be loaded")
        );
        let r = outcome(Err(LoadError::NoDriver), |_| ran.set(true), Some(OsStr::new("1")));
        assert!(r.err().expect("a failure").message().unwrap_or_default().contains("CARGO_PTX_REQUIRE_GPU=1 asks for a GPU run"));
        assert!(!ran.get());
    }
}
