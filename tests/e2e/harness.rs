//! The suite's harness (libtest-mimic; `harness = false`): a run says what it checked.
//!
//! - A test that needs something this machine lacks (nvcc, redis-server, a machine without a
//!   GPU, ...) calls [`missing`] or [`require`]: it reports `ignored (needs <what>)` here, and
//!   fails where `CARGO_PTX_REQUIRE_TOOLS=1` (`.ci/run` sets it), so CI cannot pass by skipping.
//! - Slow tests (cold builds of several crates, installs, stress runs) are listed as `slow` and
//!   named `slow::<area>::<test>`: without a filter that starts with `slow` they report
//!   `ignored (slow: ...)`; `cargo test -p cargo-ptx --test e2e -- slow::` runs them (CI does).
//!
//! Everything else is libtest's: filters, `--exact`, `--skip`, `--list`, `--test-threads`.

use std::panic::{self, AssertUnwindSafe};

use libtest_mimic::{Arguments, Completion, Failed, Trial};

/// Turns a missing tool into a failure.
pub const REQUIRE_TOOLS: &str = "CARGO_PTX_REQUIRE_TOOLS";

/// One test as its module lists it (see [`tests!`](crate::tests)).
pub struct Test {
    pub area: &'static str,
    pub name: &'static str,
    pub run: fn(),
    pub slow: bool,
}

/// `tests![a, b; slow: c]`: the tests of the calling module, by function name; those after
/// `slow:` run only when asked for by name.
#[macro_export]
macro_rules! tests {
    ($($name:ident),* $(,)? $(; slow: $($slow:ident),* $(,)?)?) => {{
        let area = module_path!().rsplit("::").next().unwrap_or_default();
        let v: Vec<$crate::harness::Test> = vec![
            $($crate::harness::Test { area, name: stringify!($name), run: $name, slow: false },)*
            $($($crate::harness::Test { area, name: stringify!($slow), run: $slow, slow: true },)*)?
        ];
        v
    }};
}

/// The panic payload of [`missing`]: what the test needs.
struct Missing(String);

/// Stops the running test: this machine lacks `what` (say what and how to get it, e.g. "nvcc
/// (run `cargo ptx setup`)").
pub fn missing(what: impl Into<String>) -> ! {
    panic::panic_any(Missing(what.into()))
}

/// The value, or [`missing`]`(what)` when there is none.
pub fn require<T>(found: Option<T>, what: &str) -> T {
    found.unwrap_or_else(|| missing(what))
}

/// Whether `value` (of [`REQUIRE_TOOLS`]) asks for every tool: set, and neither empty nor `0`.
fn required(value: Option<&std::ffi::OsStr>) -> bool {
    value.is_some_and(|v| !v.is_empty() && v != "0")
}

/// Runs every listed test with the command line's arguments and exits with libtest's status.
pub fn main(areas: &[fn() -> Vec<Test>]) -> ! {
    let args = Arguments::from_args();
    // Slow tests run when the filter names them.
    let run_slow = args.filter.as_deref().is_some_and(|f| f.starts_with("slow"));
    let require_tools = required(std::env::var_os(REQUIRE_TOOLS).as_deref());
    // A missing tool is an outcome, not a crash: no panic message for it.
    let default_hook = panic::take_hook();
    panic::set_hook(Box::new(move |info| {
        if !info.payload().is::<Missing>() {
            default_hook(info)
        }
    }));
    let trials = areas.iter().flat_map(|area| area()).map(|t| trial(t, run_slow, require_tools)).collect();
    libtest_mimic::run(&args, trials).exit()
}

fn trial(t: Test, run_slow: bool, require_tools: bool) -> Trial {
    let name = if t.slow { format!("slow::{}::{}", t.area, t.name) } else { format!("{}::{}", t.area, t.name) };
    let (run, slow) = (t.run, t.slow);
    Trial::ignorable_test(name, move || outcome(run, slow && !run_slow, require_tools))
}

/// Runs the test unless it is `held_back` (slow, not asked for); a panic other than
/// [`missing`]'s goes on to libtest-mimic, which reports its message as the failure.
fn outcome(run: fn(), held_back: bool, require_tools: bool) -> Result<Completion, Failed> {
    if held_back {
        return Ok(Completion::ignored_with("slow: CI runs it; here `cargo test -p cargo-ptx --test e2e -- slow::`"));
    }
    match panic::catch_unwind(AssertUnwindSafe(run)) {
        Ok(()) => Ok(Completion::Completed),
        Err(payload) => match payload.downcast::<Missing>() {
            Ok(m) => outcome_of_missing(&m.0, require_tools),
            Err(other) => panic::resume_unwind(other),
        },
    }
}

fn outcome_of_missing(what: &str, require_tools: bool) -> Result<Completion, Failed> {
    if require_tools {
        Err(format!("needs {what}; {REQUIRE_TOOLS}=1 (CI) does not let a test be skipped for a missing tool").into())
    } else {
        Ok(Completion::ignored_with(format!("needs {what}")))
    }
}

/// The harness checks itself here: these run with the suite.
mod checks {
    use super::*;

    fn ignored_reason(r: Result<Completion, Failed>) -> Option<String> {
        match r {
            Ok(Completion::Ignored { reason }) => reason,
            _ => None,
        }
    }

    fn a_missing_tool_is_ignored_here_and_a_failure_in_ci() {
        assert_eq!(
            ignored_reason(outcome_of_missing("nvcc (run `cargo ptx setup`)", false)).as_deref(),
            Some("needs nvcc (run `cargo ptx setup`)")
        );
        let e = outcome_of_missing("redis-server", true).err().expect("a failure");
        assert_eq!(
            e.message(),
            Some("needs redis-server; CARGO_PTX_REQUIRE_TOOLS=1 (CI) does not let a test be skipped for a missing tool")
        );
        for (v, want) in [(None, false), (Some(""), false), (Some("0"), false), (Some("1"), true), (Some("true"), true)] {
            assert_eq!(required(v.map(std::ffi::OsStr::new)), want, "{v:?}");
        }
    }

    /// Each outcome as the summary counts it: a missing tool ignored (failed in CI), a slow
    /// test ignored unless asked for, anything else run.
    fn tests_report_what_ran() {
        fn needs_a_tool() {
            missing("a tool this machine lacks")
        }
        static RAN: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        fn passes() {
            RAN.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
        let ignored = |r| ignored_reason(r).unwrap_or_else(|| "not ignored".into());
        assert_eq!(ignored(outcome(needs_a_tool, false, false)), "needs a tool this machine lacks");
        assert!(outcome(needs_a_tool, false, true).is_err());
        assert!(ignored(outcome(passes, true, false)).starts_with("slow: CI runs it"));
        assert_eq!(RAN.load(std::sync::atomic::Ordering::SeqCst), 0, "held back: not run");
        assert!(matches!(outcome(passes, false, true), Ok(Completion::Completed)));
        assert_eq!(RAN.load(std::sync::atomic::Ordering::SeqCst), 1);
    }

    pub fn tests() -> Vec<Test> {
        crate::tests![a_missing_tool_is_ignored_here_and_a_failure_in_ci, tests_report_what_ran]
    }
}

pub use checks::tests;
