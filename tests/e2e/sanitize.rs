//! `cargo ptx sanitize` where it cannot run: each reason in one message; and compute-sanitizer's
//! reports captured on a GPU, read against the fixture's PTX as this checkout builds it.
//! (The run on a GPU: tests/fixtures/sanitize-demo and BENCHMARKS.md.)

use std::path::Path;

use crate::common::{cargo_ptx, cuda, hide_cuda, no_cuda_driver_here, shared_target, Run};

fn run(args: &[&str], env: impl FnOnce(&mut std::process::Command)) -> (Option<i32>, String, String) {
    let mut cmd = cargo_ptx();
    cmd.arg("sanitize").args(args);
    env(&mut cmd);
    let out = cmd.output().unwrap();
    (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// A folder laid out as a toolkit's compute-sanitizer (the executable and its launcher): these
/// runs stop before starting it.
struct FakeSanitizer(tempfile::TempDir);

impl FakeSanitizer {
    fn path(&self) -> std::path::PathBuf {
        self.0.path().join("compute-sanitizer")
    }
}

fn fake_sanitizer() -> FakeSanitizer {
    let dir = tempfile::tempdir().unwrap();
    for f in ["compute-sanitizer", "TreeLauncherSubreaper"] {
        std::fs::write(dir.path().join(f), "").unwrap();
    }
    FakeSanitizer(dir)
}

fn without_a_driver_it_says_so_in_one_line_before_building() {
    no_cuda_driver_here();
    let fake = fake_sanitizer();
    let (code, out, err) = run(&["--", "test", "-p", "no-such-package"], |c| {
        c.env("COMPUTE_SANITIZER", fake.path());
    });
    assert_eq!(code, Some(2), "{err}");
    assert!(out.is_empty());
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    assert!(err.starts_with("error: no CUDA driver here (libcuda.so.1 not found)"), "{err}");
    assert!(err.contains("on a machine with an NVIDIA GPU and its driver"), "{err}");
    assert!(!err.contains("no-such-package"), "nothing was built: {err}");

    let (code, out, _) = run(&["--message-format", "json", "--", "test"], |c| {
        c.env("COMPUTE_SANITIZER", fake.path());
    });
    assert_eq!(code, Some(2));
    // The error as our diagnostic line (and again in cargo's compiler-message shape).
    let v: serde_json::Value = serde_json::from_str(out.lines().next().unwrap_or_default()).unwrap();
    assert_eq!(v["reason"], "ptx-diagnostic");
    assert!(v["message"].as_str().unwrap().starts_with("no CUDA driver here"), "{v}");
}

fn a_missing_sanitizer_names_the_fix() {
    let empty = tempfile::tempdir().unwrap();
    let (code, _, err) = run(&["--", "test"], |c| {
        hide_cuda(c, empty.path());
        c.env_remove("COMPUTE_SANITIZER").env("PATH", "/usr/bin:/bin");
    });
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("compute-sanitizer not found: `cargo ptx sanitize` runs programs under it"), "{err}");
    assert!(err.contains("help: install the CUDA toolkit's compute-sanitizer") && err.contains("set COMPUTE_SANITIZER"), "{err}");

    let (_, _, err) = run(&["--", "test"], |c| {
        c.env("COMPUTE_SANITIZER", "/nonexistent/compute-sanitizer");
    });
    assert!(err.contains("COMPUTE_SANITIZER=/nonexistent/compute-sanitizer is not a file"), "{err}");
}

/// NVIDIA's sanitizer wheel has compute-sanitizer without the launcher it starts programs with.
fn a_sanitizer_without_its_launcher_is_refused_with_the_reason() {
    let fake = fake_sanitizer();
    std::fs::remove_file(fake.0.path().join("TreeLauncherSubreaper")).unwrap();
    let (code, _, err) = run(&["--", "test"], |c| {
        c.env("COMPUTE_SANITIZER", fake.path());
    });
    assert_eq!(code, Some(2));
    assert!(err.contains("cannot start programs: TreeLauncherSubreaper is not beside it"), "{err}");
    assert!(err.contains("nvidia-cuda-sanitizer-api wheel ships without it") && err.contains("cuda-sanitizer-13-0"), "{err}");
}

fn an_unknown_tool_lists_the_tools() {
    let (code, _, err) = run(&["--tool", "leakcheck", "--", "test"], |_| {});
    assert_eq!(code, Some(2));
    assert!(err.contains("invalid value 'leakcheck' for '--tool <TOOL>'"), "{err}");
    assert!(err.contains("[possible values: memcheck, racecheck, synccheck, initcheck]"), "{err}");
}

fn a_cargo_command_that_runs_nothing_is_refused() {
    let fake = fake_sanitizer();
    let (code, _, err) = run(&["--", "check"], |c| {
        c.env("COMPUTE_SANITIZER", fake.path());
    });
    assert_eq!(code, Some(2));
    assert!(
        err.contains("`check` is not a cargo command that runs programs: sanitize runs the programs of `test`, `bench`, `run` or `build`"),
        "{err}"
    );
    let (code, _, err) = run(&[], |_| {});
    assert_eq!(code, Some(2));
    assert!(err.contains("<CARGO ARGS>"), "the cargo command is required: {err}");
}

fn a_missing_exe_is_named() {
    let (code, _, err) = run(&["--exe", "/nonexistent/demo", "--", "oob"], |_| {});
    assert_eq!(code, Some(2));
    assert!(err.contains("--exe /nonexistent/demo: no such program"), "{err}");
}

/// A toolkit's bin/compute-sanitizer links into compute-sanitizer/, beside its launcher.
fn a_linked_sanitizer_is_checked_where_it_really_is() {
    let fake = fake_sanitizer();
    let bin = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(fake.path(), bin.path().join("compute-sanitizer")).unwrap();
    // With a driver, the run would not stop before building.
    no_cuda_driver_here();
    let (_, _, err) = run(&["--", "test"], |c| {
        c.env("COMPUTE_SANITIZER", bin.path().join("compute-sanitizer"));
    });
    assert!(err.contains("no CUDA driver here"), "got past the launcher check to the driver check: {err}");
    assert!(!err.contains("TreeLauncherSubreaper"), "{err}");
}

/// compute-sanitizer's reports of tests/fixtures/sanitize-demo, captured on an H100
/// (cargo-ptx/src/sanitize/testdata), read against the line tables of the fixture's PTX as this
/// checkout builds it: each finding is named from the folder the command runs in
/// (`kernels/src/lib.rs`, `cuda/bugs.cu`, from the project and from above it), and one bug is
/// one finding (the API errors that follow an out-of-bounds write are its consequences).
fn the_fixtures_findings_are_named_from_the_folder_the_command_runs_in() {
    use cargo_ptx::sanitize::{consequences, group, parse, resolve_paths, LineTables, Tool};
    cuda();
    crate::common::nvcc();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    // A copy at the fixture's depth, with the device crates where its relative paths look.
    let root = tempfile::Builder::new().prefix("cargo-ptx sanitize ").tempdir().unwrap();
    let demo = root.path().join("tests/fixtures/sanitize-demo");
    crate::common::copy_dir(&repo.join("tests/fixtures/sanitize-demo"), &demo);
    for krate in ["ptx-device", "ptx-device-macros"] {
        crate::common::copy_dir(&repo.join(krate), &root.path().join(krate));
    }
    // The program: its embedded PTX among other bytes, as an executable holds it.
    let mut program = b"\x7fELF\x02\x01\x01\0binary\n".to_vec();
    for what in [demo.join("kernels"), demo.join("cuda/bugs.cu")] {
        let out = cargo_ptx()
            .arg("build")
            .arg(&what)
            .args(["--arch", "sm_90", "--message-format", "json", "--target-dir"])
            .arg(shared_target())
            .output()
            .unwrap();
        let run = Run::from(out);
        run.assert_ok();
        for a in run.of("ptx-artifact").into_iter().filter(|a| a["kind"] == "ptx") {
            program.extend(std::fs::read(a["path"].as_str().unwrap()).unwrap());
            program.extend(b"\0\0\x13data\n");
        }
    }
    let exe = root.path().join("sanitize-demo");
    std::fs::write(&exe, &program).unwrap();
    let tables = LineTables::of_program(&exe);
    let logs = repo.join("cargo-ptx/src/sanitize/testdata");
    for (log, tool, file, line) in [
        ("oob-rs.memcheck.log", Tool::Memcheck, "kernels/src/lib.rs", 11),
        ("oob-cu.memcheck.log", Tool::Memcheck, "cuda/bugs.cu", 6),
        ("race-rs.racecheck.log", Tool::Racecheck, "kernels/src/lib.rs", 20),
        ("race-cu.racecheck.log", Tool::Racecheck, "cuda/bugs.cu", 13),
    ] {
        let text = std::fs::read_to_string(logs.join(log)).unwrap();
        for cwd in [demo.as_path(), root.path()] {
            let mut f = consequences(group(parse(&text, tool, &exe)));
            resolve_paths(&mut f, &tables, cwd);
            assert_eq!(f.len(), 1, "{log}: one bug, one finding: {f:#?}");
            assert_eq!(
                (f[0].file.as_deref(), f[0].line),
                (Some(demo.join(file).to_str().unwrap()), Some(line)),
                "{log} from {}",
                cwd.display()
            );
        }
    }
}

pub fn tests() -> Vec<crate::harness::Test> {
    crate::tests![
        without_a_driver_it_says_so_in_one_line_before_building,
        a_missing_sanitizer_names_the_fix,
        a_sanitizer_without_its_launcher_is_refused_with_the_reason,
        an_unknown_tool_lists_the_tools,
        a_cargo_command_that_runs_nothing_is_refused,
        a_missing_exe_is_named,
        a_linked_sanitizer_is_checked_where_it_really_is,
        the_fixtures_findings_are_named_from_the_folder_the_command_runs_in,
    ]
}
