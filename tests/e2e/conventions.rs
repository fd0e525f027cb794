//! cargo's command-line conventions end to end: help headings, `--color` and
//! `CARGO_TERM_COLOR`/`NO_COLOR`, counted `-v` and `-q`, `--locked`/`--offline`/`--frozen`
//! reaching the nested cargo, and the one-line summary of artifacts.

use std::process::Output;

use crate::common;
use crate::common::{cargo_ptx, cuda, shared_target, KernelCrate};

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `cargo ptx build <saxpy copy> --arch sm_80 --target-dir <shared> <args>`, in human format.
fn build_human(k: &KernelCrate, args: &[&str]) -> Output {
    cargo_ptx().arg("build").arg(&k.dir).arg("--target-dir").arg(shared_target()).args(["--arch", "sm_80"]).args(args).output().unwrap()
}

/// The text of `cargo ptx build -h`, compared with tests/snapshots/build-help.txt; with
/// `UPDATE_SNAPSHOTS=1` the file is rewritten instead (review the diff, then commit it).
fn build_help_groups_flags_under_cargos_headings() {
    // clap wraps at COLUMNS; a fixed width keeps the text the same on every terminal.
    let out = cargo_ptx().args(["build", "-h"]).env("COLUMNS", "100").output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let help = String::from_utf8_lossy(&out.stdout).into_owned();
    let headings: Vec<&str> = help.lines().filter(|l| !l.starts_with(' ') && l.ends_with(':')).collect();
    assert_eq!(
        headings,
        [
            "Arguments:",
            "Options:",
            "Package Selection:",
            "Manifest Options:",
            "Kernel options:",
            "CUDA C++ options:",
            "Cache options:",
            "Compilation Options:"
        ],
        "{help}"
    );
    let snapshot = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/snapshots/build-help.txt");
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::create_dir_all(snapshot.parent().unwrap()).unwrap();
        std::fs::write(&snapshot, &help).unwrap();
    }
    let expected = std::fs::read_to_string(&snapshot).unwrap_or_default();
    assert!(help == expected, "`cargo ptx build -h` changed; rerun with UPDATE_SNAPSHOTS=1 if that is intended:\n{help}");
    // `--color` is global, as cargo's: every subcommand takes it.
    let check = cargo_ptx().args(["check", "--help"]).env("COLUMNS", "100").output().unwrap();
    assert!(String::from_utf8_lossy(&check.stdout).contains("--color <WHEN>"));
}

fn color_follows_the_flag_then_cargo_term_color_then_no_color() {
    // A missing PATH fails at once: its `error:` is the colored text.
    let run = |args: &[&str], env: &[(&str, &str)]| {
        let mut cmd = cargo_ptx();
        cmd.args(["build", "/nonexistent/kernels"]).args(args).env_remove("CARGO_TERM_COLOR");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        stderr(&out).contains("\u{1b}[")
    };
    // cargo_ptx() sets NO_COLOR=1.
    assert!(!run(&[], &[]), "auto with NO_COLOR and no terminal: plain");
    assert!(run(&["--color", "always"], &[]), "--color always beats NO_COLOR");
    assert!(run(&[], &[("CARGO_TERM_COLOR", "always")]), "CARGO_TERM_COLOR=always");
    assert!(!run(&["--color", "never"], &[("CARGO_TERM_COLOR", "always")]), "the flag beats the variable");
    assert!(!run(&["--color", "auto"], &[]), "auto");
    let bad = cargo_ptx().args(["build", "--color", "sometimes"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("invalid value 'sometimes' for '--color <WHEN>'"), "{}", stderr(&bad));
    let bad_env = cargo_ptx().arg("build").env("CARGO_TERM_COLOR", "sometimes").output().unwrap();
    assert_eq!(bad_env.status.code(), Some(2), "{}", stderr(&bad_env));
}

fn one_summary_line_by_default_each_artifact_at_v_and_nothing_at_q() {
    cuda();
    let k = KernelCrate::example("saxpy");
    let first = build_human(&k, &[]);
    assert!(first.status.success(), "{}", stderr(&first));
    let dir = shared_target().join("ptx/release/saxpy-kernels/sm_80");
    // Nothing changed: the whole output, exactly (the time left out).
    let again = build_human(&k, &[]);
    let text = stderr(&again);
    assert!(again.status.success(), "{text}");
    let lines: Vec<String> =
        text.lines().map(|l| l.split_once(" in ").filter(|_| l.contains("Finished")).map_or(l, |(head, _)| head).to_string()).collect();
    assert_eq!(
        lines,
        [
            "       Fresh saxpy-kernels".to_string(),
            format!("       Fresh 1 PTX + 1 cubin in {} (-v lists each)", dir.display()),
            "    Finished release [sm_80]".to_string(),
        ],
        "{text}"
    );
    // -v: each artifact and the resource table instead of the summary.
    let v = stderr(&build_human(&k, &["-v"]));
    assert!(v.contains(&format!("       Fresh PTX   {}", dir.join("saxpy_kernels.ptx").display())), "{v}");
    assert!(v.contains(&format!("       Fresh cubin {}", dir.join("saxpy_kernels.cubin").display())), "{v}");
    assert!(!v.contains("(-v lists each)") && v.lines().any(|l| l.starts_with("kernel ")), "{v}");
    // -vv: also the tools' command lines; a fresh build runs only cargo metadata and probes.
    let vv = stderr(&build_human(&k, &["-vv"]));
    assert!(vv.contains("     Running `") && vv.contains("metadata --format-version 1 --no-deps"), "{vv}");
    // -q: nothing on success; -q and -v together are refused.
    let q = build_human(&k, &["-q"]);
    assert!(q.status.success() && stderr(&q).is_empty(), "{}", stderr(&q));
    let both = build_human(&k, &["-q", "-v"]);
    assert_eq!(both.status.code(), Some(2), "{}", stderr(&both));
    // JSON is unchanged: one ptx-artifact message per file, no summary line on stdout.
    let json = k.build(&["--arch", "sm_80"]);
    json.assert_ok();
    assert_eq!(json.of("ptx-artifact").len(), 2);
}

fn locked_offline_and_frozen_reach_the_nested_cargo() {
    cuda();
    let k = KernelCrate::example("saxpy");
    // A kernel crate without a Cargo.lock: the nested cargo must write one, which --frozen forbids.
    let _ = std::fs::remove_file(k.dir.join("Cargo.lock"));
    let out = build_human(&k, &["--frozen"]);
    let text = stderr(&out);
    assert!(!out.status.success(), "{text}");
    assert!(text.contains("cannot create the lock file") && text.contains("--frozen"), "{text}");
    assert!(text.contains(" --frozen"), "the failing command line shows the flag: {text}");
    assert!(!k.dir.join("Cargo.lock").exists());
    let ok = build_human(&k, &["--offline"]);
    assert!(ok.status.success(), "--offline with every dependency a path: {}", stderr(&ok));
    assert!(k.dir.join("Cargo.lock").exists(), "without --locked the nested cargo writes Cargo.lock");
    let locked = build_human(&k, &["--locked"]);
    assert!(locked.status.success(), "{}", stderr(&locked));
}

/// The `compiler-message` lines of a JSON build, read with cargo_metadata's `Message`, the
/// type cargo-aware tools use.
fn compiler_messages(run: &common::Run) -> Vec<cargo_metadata::CompilerMessage> {
    run.stdout
        .lines()
        .filter(|l| l.contains("\"compiler-message\""))
        .map(|l| match serde_json::from_str::<cargo_metadata::Message>(l) {
            Ok(cargo_metadata::Message::CompilerMessage(m)) => m,
            other => panic!("not a compiler-message ({other:?}): {l}"),
        })
        .collect()
}

fn json_diagnostics_are_cargos_compiler_messages() {
    cuda();
    let k = KernelCrate::new(
        "json_diag_kernels",
        "archs = [\"sm_80\"]",
        "#![no_std]\n#![feature(abi_ptx)]\n#[no_mangle]\npub unsafe extern \"ptx-kernel\" fn k(x: *mut u32) {\n    *x = 1.5;\n}\n#[panic_handler]\nfn p(_: &core::panic::PanicInfo) -> ! { loop {} }\n",
    );
    let run = k.build(&[]);
    assert!(!run.success);
    let messages = compiler_messages(&run);
    let rustc = messages.iter().find(|m| m.message.message.contains("mismatched types")).unwrap_or_else(|| panic!("{}", run.stdout));
    let span = rustc.message.spans.iter().find(|s| s.is_primary).expect("a primary span");
    assert_eq!(span.file_name, k.dir.join("src/lib.rs").display().to_string(), "absolute: the kernel crate is not the caller's workspace");
    assert_eq!((span.line_start, span.column_start), (5, 10));
    assert_eq!(rustc.message.level, cargo_metadata::diagnostic::DiagnosticLevel::Error);
    assert_eq!(rustc.message.code.as_ref().map(|c| c.code.as_str()), Some("E0308"), "rustc's own JSON, forwarded");
    assert_eq!(rustc.package_id.repr, format!("path+file://{}#json_diag_kernels", k.dir.display()));
    assert_eq!(rustc.target.name, "json_diag_kernels");
    assert!(rustc.message.rendered.as_deref().unwrap_or_default().contains(&format!("--> {}:5:10", k.dir.join("src/lib.rs").display())));

    // An nvcc error: built from the location, with the source line in the span.
    let k = KernelCrate::new("json_cu_kernels", "archs = [\"sm_80\", \"sm_90\"]\nrust = false", "");
    k.write("cuda/k.cu", "extern \"C\" __global__ void fill(float *x) {\n    x[0] = undefined_cu;\n}\n");
    let run = k.build(&[]);
    assert!(!run.success);
    let messages = compiler_messages(&run);
    let nvcc: Vec<_> = messages.iter().filter(|m| m.message.message.contains("\"undefined_cu\" is undefined")).collect();
    assert_eq!(nvcc.len(), 1, "one message for both archs: {}", run.stdout);
    let span = &nvcc[0].message.spans[0];
    assert_eq!(span.file_name, k.dir.join("cuda/k.cu").display().to_string());
    assert_eq!((span.line_start, span.column_start, span.is_primary), (2, 12, true));
    assert_eq!(span.text[0].text, "    x[0] = undefined_cu;");
    let text = std::fs::read_to_string(k.dir.join("cuda/k.cu")).unwrap();
    assert_eq!(&text[span.byte_start as usize..], &text[text.find("undefined_cu").unwrap()..], "byte offsets point at the column");
    assert!(nvcc[0].message.children.iter().any(|c| c.message == "for sm_80, sm_90"), "{:?}", nvcc[0].message.children);
    assert_eq!(nvcc[0].message.level, cargo_metadata::diagnostic::DiagnosticLevel::Error);
    assert!(nvcc[0].package_id.repr.ends_with("#json_cu_kernels"), "{}", nvcc[0].package_id);
}

fn json_builds_report_each_kernel_crate_as_cargos_compiler_artifact() {
    cuda();
    let k = KernelCrate::new(
        "json_artifact_kernels",
        "archs = [\"sm_80\"]",
        "#![no_std]\n#![feature(abi_ptx)]\n#[no_mangle]\npub unsafe extern \"ptx-kernel\" fn k(x: *mut u32) {\n    *x = 1;\n}\n#[panic_handler]\nfn p(_: &core::panic::PanicInfo) -> ! { loop {} }\n",
    );
    let run = k.build(&[]);
    run.assert_ok();
    let artifacts: Vec<cargo_metadata::Artifact> = run
        .stdout
        .lines()
        .filter_map(|l| match serde_json::from_str::<cargo_metadata::Message>(l) {
            Ok(cargo_metadata::Message::CompilerArtifact(a)) => Some(a),
            _ => None,
        })
        .collect();
    assert_eq!(artifacts.len(), 1, "one per kernel crate:\n{}", run.stdout);
    let a = &artifacts[0];
    assert_eq!(a.target.name, "json_artifact_kernels");
    assert_eq!(a.manifest_path, k.dir.join("Cargo.toml").display().to_string());
    let ptx = k.artifact("release", "sm_80", "ptx");
    assert!(a.filenames.iter().any(|f| f.as_std_path() == ptx), "{:?}", a.filenames);
    assert_eq!(a.profile.opt_level, "3");
    // The per-file lines stay.
    assert!(!run.of("ptx-artifact").is_empty());
}

fn human_diagnostics_show_the_source_line_and_a_caret_once_for_every_arch() {
    cuda();
    let k = KernelCrate::new("human_cu_kernels", "archs = [\"sm_80\", \"sm_90\"]\nrust = false", "");
    k.write("cuda/k.cu", "extern \"C\" __global__ void fill(float *x) {\n    x[0] = undefined_cu;\n}\n");
    // Run in the crate's folder: paths are named from where the command runs.
    let out = cargo_ptx()
        .current_dir(&k.dir)
        .arg("build")
        .arg(&k.dir)
        .arg("--target-dir")
        .arg(shared_target())
        .args(["--color", "never"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("error: identifier \"undefined_cu\" is undefined\n --> cuda/k.cu:2:12\n  |\n2 |     x[0] = undefined_cu;\n  |            ^\n  = for sm_80, sm_90\n"),
        "{err}"
    );
    assert_eq!(err.matches("is undefined").count(), 1, "{err}");
}

pub fn tests() -> Vec<crate::harness::Test> {
    crate::tests![
        build_help_groups_flags_under_cargos_headings,
        color_follows_the_flag_then_cargo_term_color_then_no_color,
        one_summary_line_by_default_each_artifact_at_v_and_nothing_at_q,
        locked_offline_and_frozen_reach_the_nested_cargo,
        json_diagnostics_are_cargos_compiler_messages,
        json_builds_report_each_kernel_crate_as_cargos_compiler_artifact,
        human_diagnostics_show_the_source_line_and_a_caret_once_for_every_arch,
    ]
}
