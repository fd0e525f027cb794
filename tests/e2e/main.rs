//! cargo-ptx end to end, in one test binary as cargo's own test suite: one module per area,
//! linked once. Real nightly, LLVM, nvcc and ptxas from `cargo ptx setup`; no GPU needed.
//!
//! It runs on its own harness (harness.rs): a test that needs a tool this machine lacks reports
//! `ignored (needs ...)` (a failure with `CARGO_PTX_REQUIRE_TOOLS=1`, as in CI), and slow tests
//! (`slow::...`) run only when the filter asks for them:
//!
//! ```sh
//! cargo test -p cargo-ptx --test e2e                     # everything but the slow tests
//! cargo test -p cargo-ptx --test e2e -- build::          # one area
//! cargo test -p cargo-ptx --test e2e -- slow::           # the slow tests (CI runs them)
//! ```

mod common;
mod harness;

mod build;
mod build_script;
mod cli;
mod conventions;
mod cuda;
mod device;
mod discovery;
mod doctor;
mod gpu_tests;
mod hardening;
mod hardening2;
mod inspect;
mod install;
mod linked;
mod new;
mod prebuilt;
mod quantized;
mod sanitize;
mod sccache;
mod shared_cache;
mod static_lib;
mod tensor_cores;

fn main() {
    // The longest areas first: two threads share the work until the end.
    harness::main(&[
        build_script::tests,
        quantized::tests,
        new::tests,
        build::tests,
        hardening::tests,
        hardening2::tests,
        cli::tests,
        doctor::tests,
        cuda::tests,
        conventions::tests,
        shared_cache::tests,
        static_lib::tests,
        tensor_cores::tests,
        inspect::tests,
        linked::tests,
        device::tests,
        discovery::tests,
        install::tests,
        sanitize::tests,
        prebuilt::tests,
        sccache::tests,
        gpu_tests::tests,
        harness::tests,
    ])
}
