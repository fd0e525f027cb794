//! The example's GPU tests as a user runs them (`cargo test -p saxpy --test gpu`): without a
//! driver each GPU test reports `ignored` with the reason, and the summary counts them; with
//! one they run and pass.

use std::path::Path;
use std::process::Command;

#[test]
fn gpu_tests_report_as_ignored_with_the_reason_or_run_on_a_gpu() {
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    let out = Command::new(env!("CARGO"))
        .args(["test", "-p", "saxpy", "--test", "gpu"])
        .current_dir(root)
        .env_remove("CARGO_PTX_ARCH")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let gpu_tests = [
        "kernels_match_the_cpu_from_the_cubin",
        "kernels_match_the_cpu_through_the_ptx_jit",
        "a_device_without_a_fitting_image_gets_a_load_error",
        "occupancy_configs_reach_the_drivers_best_occupancy",
        "generic_and_macro_stamped_kernels_match_the_cpu",
    ];
    let line = |name: &str| stdout.lines().find(|l| l.starts_with(&format!("test {name} "))).map(str::to_string);
    // Whether this machine has a GPU is what the harness decides; every GPU test must agree.
    let no_driver = line(gpu_tests[0]).is_some_and(|l| l.contains("... ignored"));
    for name in gpu_tests {
        let l = line(name).unwrap_or_else(|| panic!("{name} did not run:\n{stdout}"));
        if no_driver {
            assert!(l.contains("... ignored (no GPU: ") && l.ends_with(')'), "the reason is on the line: {l}");
        } else {
            assert!(l.ends_with("... ok"), "{l}");
        }
    }
    assert!(line("the_generated_module_lists_kernels_and_images").is_some_and(|l| l.ends_with("... ok")), "{stdout}");
    let summary =
        if no_driver { "test result: ok. 1 passed; 0 failed; 5 ignored;" } else { "test result: ok. 6 passed; 0 failed; 0 ignored;" };
    assert!(stdout.contains(summary), "{stdout}");
}
