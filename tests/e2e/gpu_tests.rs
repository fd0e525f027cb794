//! The examples' GPU tests as a user runs them (`cargo test --test gpu`), on ptx-runtime's
//! harness: without a driver each GPU test reports `ignored` with the reason, and the summary
//! counts them; with `CARGO_PTX_REQUIRE_GPU=1` (a GPU run: the GPU bundle's `.gpu/run` sets it)
//! they fail instead, naming the variable; with a driver they run and pass.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::no_cuda_driver_here;

const SAXPY_GPU_TESTS: [&str; 8] = [
    "kernels_match_the_cpu_from_the_cubin",
    "kernels_match_the_cpu_through_the_ptx_jit",
    "a_device_without_a_fitting_image_gets_a_load_error",
    "a_function_the_image_lacks_fails_the_load_unless_some_images_lack_it",
    "occupancy_configs_reach_the_drivers_best_occupancy",
    "grids_are_resolved_for_the_kernel_they_launch",
    "generic_and_macro_stamped_kernels_match_the_cpu",
    "a_launch_the_driver_refuses_is_a_driver_error",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The `gpu` test binaries of the workspace's examples (saxpy's among them), with
/// `CARGO_PTX_REQUIRE_GPU` set to `require` or unset. The whole workspace, as `cargo test
/// --workspace` builds it: the same features, so nothing is compiled again after that run.
fn saxpy_gpu_tests(require: Option<&str>) -> (Output, String) {
    let mut cmd = Command::new(env!("CARGO"));
    cmd.args(["test", "--workspace", "--no-fail-fast", "--test", "gpu"]).current_dir(root()).env_remove("CARGO_PTX_ARCH");
    match require {
        Some(v) => cmd.env("CARGO_PTX_REQUIRE_GPU", v),
        None => cmd.env_remove("CARGO_PTX_REQUIRE_GPU"),
    };
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    (out, stdout)
}

fn line<'a>(stdout: &'a str, name: &str) -> Option<&'a str> {
    stdout.lines().find(|l| l.starts_with(&format!("test {name} ")))
}

fn gpu_tests_report_as_ignored_with_the_reason_or_run_on_a_gpu() {
    let (out, stdout) = saxpy_gpu_tests(None);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    // Whether this machine has a GPU is what the harness decides; every GPU test must agree.
    let no_driver = line(&stdout, SAXPY_GPU_TESTS[0]).is_some_and(|l| l.contains("... ignored"));
    for name in SAXPY_GPU_TESTS {
        let l = line(&stdout, name).unwrap_or_else(|| panic!("{name} did not run:\n{stdout}"));
        if no_driver {
            assert!(l.contains("... ignored (no GPU: ") && l.ends_with(')'), "the reason is on the line: {l}");
        } else {
            assert!(l.ends_with("... ok"), "{l}");
        }
    }
    assert!(line(&stdout, "the_generated_module_lists_kernels_and_images").is_some_and(|l| l.ends_with("... ok")), "{stdout}");
    let gpu = SAXPY_GPU_TESTS.len();
    let summary = if no_driver {
        format!("test result: ok. 1 passed; 0 failed; {gpu} ignored;")
    } else {
        format!("test result: ok. {} passed; 0 failed; 0 ignored;", gpu + 1)
    };
    assert!(stdout.contains(&summary), "{stdout}");
}

/// A GPU run (the variable set) on a machine without a driver fails every GPU test, saying why
/// and naming the variable; the tests that need no GPU still pass.
fn a_gpu_run_without_a_gpu_fails_instead_of_skipping() {
    no_cuda_driver_here();
    let (out, stdout) = saxpy_gpu_tests(Some("1"));
    assert!(!out.status.success(), "a GPU run without a GPU passed:\n{stdout}");
    // Every GPU test of every example fails (and nothing is ignored).
    assert!(!stdout.contains("... ignored"), "{stdout}");
    for name in SAXPY_GPU_TESTS.iter().chain(&[
        "rust_then_cuda_matches_the_cpu",
        "cuda_kernels_match_the_cpu_from_the_cubin",
        "integer_operations_are_bit_exact",
    ]) {
        let l = line(&stdout, name).unwrap_or_else(|| panic!("{name} did not run:\n{stdout}"));
        assert!(l.ends_with("... FAILED"), "{l}");
    }
    assert!(line(&stdout, "the_generated_module_lists_kernels_and_images").is_some_and(|l| l.ends_with("... ok")), "{stdout}");
    assert!(
        stdout.contains(
            "no GPU: no CUDA driver: libcuda could not be loaded; CARGO_PTX_REQUIRE_GPU=1 asks for a GPU run, where a GPU test must not be skipped"
        ),
        "the failure says why:\n{stdout}"
    );
    let gpu = SAXPY_GPU_TESTS.len();
    assert!(stdout.contains(&format!("test result: FAILED. 1 passed; {gpu} failed; 0 ignored;")), "{stdout}");
    // `0` is unset.
    let (out, stdout) = saxpy_gpu_tests(Some("0"));
    assert!(out.status.success() && stdout.contains(&format!("test result: ok. 1 passed; 0 failed; {gpu} ignored;")), "{stdout}");
}

/// The Rust source files of the test targets of the examples and of `cargo ptx new`'s template.
fn example_test_files() -> Vec<PathBuf> {
    let mut dirs = vec![root().join("cargo-ptx/templates/tests")];
    for e in std::fs::read_dir(root().join("examples")).unwrap().map(|e| e.unwrap().path()) {
        dirs.extend([e.join("tests"), e.join("host/tests")]);
    }
    let mut out = Vec::new();
    for d in dirs.iter().filter(|d| d.is_dir()) {
        out.extend(std::fs::read_dir(d).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "rs")));
    }
    out.sort();
    out
}

/// Every test that loads kernels onto a GPU runs on the harness: a `#[test]` that needs one would
/// pass without it, and a `#[test]` in a `harness = false` target is never compiled.
fn every_gpu_test_of_the_examples_runs_on_the_harness() {
    let files = example_test_files();
    let gpu: Vec<&PathBuf> = files.iter().filter(|f| std::fs::read_to_string(f).unwrap().contains("harness::gpu(")).collect();
    // saxpy, device-tour (gpu, twins), cuda-kernels, mixed, affine and the template at least.
    assert!(gpu.len() >= 7, "{gpu:?}");
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let on_harness = text.contains("harness::run(");
        if on_harness || text.contains("Kernels::load") || text.contains("ptx_runtime::context(") {
            assert!(on_harness, "{} needs a GPU: run its tests with ptx_runtime::harness", f.display());
            assert!(
                !text.lines().any(|l| l.trim() == "#[test]"),
                "{}: a #[test] in a harness = false target is never compiled",
                f.display()
            );
            let manifest = f.parent().unwrap().parent().unwrap().join("Cargo.toml");
            let manifest = if manifest.is_file() { manifest } else { f.parent().unwrap().parent().unwrap().join("Cargo.toml.tmpl") };
            let toml = std::fs::read_to_string(&manifest).unwrap();
            let stem = f.file_stem().unwrap().to_str().unwrap();
            assert!(
                toml.contains(&format!("[[test]]\nname = \"{stem}\"\nharness = false")),
                "{} has no `harness = false` target for tests/{stem}.rs",
                manifest.display()
            );
        }
    }
    assert!(!files.iter().any(|f| std::fs::read_to_string(f).unwrap().contains("context_or_skip")));
}

/// The suite's own modules list their tests: none carries `#[test]`, which this harness would
/// never compile.
fn no_end_to_end_test_is_a_libtest_test() {
    let dir = root().join("tests/e2e");
    for f in std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()) {
        let text = std::fs::read_to_string(&f).unwrap();
        assert!(!text.lines().any(|l| l.trim() == "#[test]"), "{}: list the test in its module's `tests![...]` instead", f.display());
    }
}

pub fn tests() -> Vec<crate::harness::Test> {
    crate::tests![
        gpu_tests_report_as_ignored_with_the_reason_or_run_on_a_gpu,
        a_gpu_run_without_a_gpu_fails_instead_of_skipping,
        every_gpu_test_of_the_examples_runs_on_the_harness,
        no_end_to_end_test_is_a_libtest_test,
    ]
}
