//! `cargo ptx doctor` on what CUDA C++ needs beside nvcc: the host C++ compiler nvcc accepts
//! (every .cu build), and for a static library (`Builder::cuda_static_lib`) the CUDA runtime
//! (`libcudart_static.a`) and `ar`. Each piece is hidden in turn and its message checked: in a
//! project whose build script builds a static library (missing, exit 1), and outside one (a
//! warning, exit 0).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{cargo_ptx, hide_cuda, nvcc};

fn text(out: &std::process::Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// A host crate whose build script builds a static library (nothing is built: doctor reads it).
fn static_host() -> tempfile::TempDir {
    let dir = tempfile::Builder::new().prefix("cargo-ptx doctor static ").tempdir().unwrap();
    let ptx_build = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().join("ptx-build");
    let files = [
        (
            "Cargo.toml",
            format!(
                "[package]\nname = \"ggml-host\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[build-dependencies]\nptx-build = {{ path = {:?} }}\n[workspace]\n",
                ptx_build
            ),
        ),
        (
            "build.rs",
            "fn main() {\n    // ggml's CUDA backend: C++ launchers\n    ptx_build::Builder::new()\n        .cuda_static_lib(\"ggml-cuda\", \"ggml-cuda/*.cu\")\n        .build()\n        .unwrap();\n}\n"
                .into(),
        ),
        ("src/lib.rs", String::new()),
    ];
    for (path, body) in files {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, body).unwrap();
    }
    dir
}

/// `cargo ptx doctor` in `dir` (`--message-format json` too when `json`), with `env` applied.
fn doctor(dir: &Path, env: impl Fn(&mut Command)) -> (bool, String, serde_json::Value) {
    let run = |json: bool| {
        let mut cmd = cargo_ptx();
        cmd.arg("doctor").current_dir(dir);
        if json {
            cmd.args(["--message-format", "json"]);
        }
        env(&mut cmd);
        cmd.output().unwrap()
    };
    let out = run(false);
    let json = serde_json::from_slice(&run(true).stdout).expect("one JSON object");
    (out.status.success(), text(&out), json)
}

/// A `g++` that reports GNU 16 to nvcc's version check (the real one underneath), as a gcc too
/// new for nvcc 13.0 does.
fn gcc_16(dir: &Path) -> PathBuf {
    let real = ptx_build::internals::tools::on_path("g++").unwrap_or_else(|| crate::harness::missing("g++"));
    let fake = dir.join("g++");
    std::fs::write(&fake, format!("#!/bin/sh\nexec '{}' -U__GNUC__ -D__GNUC__=16 \"$@\"\n", real.display())).unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    fake
}

fn a_host_compiler_nvcc_refuses_is_named_with_one_it_accepts() {
    nvcc();
    let bin = tempfile::tempdir().unwrap();
    let fake = gcc_16(bin.path());
    let host = static_host();
    let (ok, t, json) = doctor(host.path(), |c| {
        c.env("CXX", &fake).env_remove("NVCC_APPEND_FLAGS").env_remove("NVCC_PREPEND_FLAGS");
    });
    assert!(!ok, "the static library cannot build: exit non-zero\n{t}");
    assert!(
        t.contains(&format!("missing  host C++ compiler    nvcc 13.0.88 does not accept the host C++ compiler {}", fake.display()))
            && t.contains("named by CXX): unsupported GNU version! gcc versions later than 15 are not supported\n"),
        "{t}"
    );
    // Another g++ on PATH that nvcc takes, and nvcc's own override.
    assert!(t.contains("fix: build with g++ (") && t.contains("which nvcc 13.0.88 accepts: `CXX=g++ cargo build`"), "{t}");
    assert!(t.contains("or pass nvcc `-allow-unsupported-compiler` (`nvcc-flags`, or NVCC_APPEND_FLAGS), at your own risk"), "{t}");
    assert!(t.contains("checked for the static libraries built here by: ggml-host") && t.contains("not ready"), "{t}");
    assert_eq!((&json["cuda_ready"], &json["static_lib_ready"], &json["ready"]), (&false.into(), &false.into(), &false.into()));
    let why = json["static_lib_missing"][0].as_str().unwrap();
    assert!(why.starts_with("host C++ compiler: nvcc 13.0.88 does not accept"), "{json}");
    assert_eq!(json["static_lib_users"], serde_json::json!(["ggml-host"]));

    // nvcc's override, where nvcc reads it: accepted.
    let (ok, t, _) = doctor(host.path(), |c| {
        c.env("CXX", &fake).env("NVCC_APPEND_FLAGS", "-allow-unsupported-compiler");
    });
    assert!(ok && t.contains("ok       host C++ compiler"), "{t}");

    // Outside a project: a warning; a Rust kernel build can still run.
    let empty = tempfile::tempdir().unwrap();
    let (ok, t, _) = doctor(empty.path(), |c| {
        c.env("CXX", &fake).env_remove("NVCC_APPEND_FLAGS").env_remove("NVCC_PREPEND_FLAGS");
    });
    assert!(ok, "{t}");
    assert!(
        t.contains("warning  host C++ compiler") && t.contains("note: CUDA C++ (.cu) builds need: host C++ compiler (see the fix above)"),
        "{t}"
    );
}

fn a_missing_host_compiler_is_named_with_the_variable_that_names_it() {
    nvcc();
    let host = static_host();
    let (ok, t, json) = doctor(host.path(), |c| {
        c.env("CXX", "/no/such/g++");
    });
    assert!(!ok, "{t}");
    assert!(
        t.contains(
            "missing  host C++ compiler    the host C++ compiler `/no/such/g++` not found (named by CXX; nvcc runs it for every .cu file)"
        ),
        "{t}"
    );
    assert!(t.contains("fix: set CXX to an installed C++ compiler that nvcc 13.0.88 supports, or unset it"), "{t}");
    assert_eq!(json["cuda_ready"], false);
}

fn a_missing_archiver_is_named_with_its_fix() {
    nvcc();
    let host = static_host();
    let (ok, t, json) = doctor(host.path(), |c| {
        c.env("AR", "/no/such/ar");
    });
    assert!(!ok, "`ar` archives the library: exit non-zero\n{t}");
    assert!(t.contains("missing  ar") && t.contains("the archiver `/no/such/ar` not found"), "{t}");
    assert!(t.contains("fix: set AR to an installed archiver, or unset it"), "{t}");
    // A CUDA C++ build of PTX does not need it.
    assert_eq!((&json["cuda_ready"], &json["static_lib_ready"]), (&true.into(), &false.into()));
    assert_eq!(json["static_lib_missing"], serde_json::json!(["ar: the archiver `/no/such/ar` not found"]));

    // Outside a project: one warning, said to be for static libraries only.
    let empty = tempfile::tempdir().unwrap();
    let (ok, t, _) = doctor(empty.path(), |c| {
        c.env("AR", "/no/such/ar");
    });
    assert!(ok, "{t}");
    assert!(t.contains("warning  ar") && t.contains("(needed by `.cuda_static_lib(..)` builds only: it archives their objects)"), "{t}");
    assert!(t.contains("note: static libraries of CUDA C++ (`.cuda_static_lib`) need: ar (see the fixes above)"), "{t}");
}

/// A CUDA install like setup's (or a toolkit) without `libcudart_static.a`: nvcc copied (the
/// runtime is looked for beside nvcc's real path), the rest linked.
fn install_without_runtime(root: &Path) {
    let nvcc = nvcc();
    let real = nvcc.parent().unwrap().parent().unwrap();
    for (dir, skip) in [("bin", "nvcc"), ("lib", "libcudart_static.a")] {
        std::fs::create_dir_all(root.join(dir)).unwrap();
        for e in std::fs::read_dir(real.join(dir)).unwrap().map(Result::unwrap) {
            if e.file_name() != skip {
                std::os::unix::fs::symlink(e.path(), root.join(dir).join(e.file_name())).unwrap();
            }
        }
    }
    std::fs::copy(&nvcc, root.join("bin/nvcc")).unwrap();
    for e in std::fs::read_dir(real).unwrap().map(Result::unwrap) {
        if !["bin", "lib", "lib64"].contains(&&*e.file_name().to_string_lossy()) {
            std::os::unix::fs::symlink(e.path(), root.join(e.file_name())).unwrap();
        }
    }
    // setup's `lib64 -> lib`, to this install's own `lib`.
    std::os::unix::fs::symlink("lib", root.join("lib64")).unwrap();
}

fn a_missing_cuda_runtime_is_named_with_the_fix_for_its_install() {
    let arch = std::env::consts::ARCH;
    let elsewhere =
        ["lib", "lib64", &format!("targets/{arch}-linux/lib")].map(|d| Path::new("/usr/local/cuda").join(d).join("libcudart_static.a"));
    if elsewhere.iter().any(|p| p.is_file()) {
        crate::harness::missing("a machine without /usr/local/cuda's libcudart_static.a (it cannot be hidden)");
    }
    let host = static_host();
    // setup's install: setup installs it again.
    let home = tempfile::tempdir().unwrap();
    install_without_runtime(&home.path().join("cuda/13.0.88/nvidia/cu13"));
    let (ok, t, json) = doctor(host.path(), |c| hide_cuda(c, home.path()));
    assert!(!ok, "the library cannot link: exit non-zero\n{t}");
    assert!(t.contains("missing  CUDA runtime         the CUDA runtime (libcudart_static.a) not found (a static library of CUDA C++ links it; looked in "), "{t}");
    assert!(t.contains("fix: run `cargo ptx setup` (it installs nvidia-cuda-runtime 13.0.88 again beside nvcc)"), "{t}");
    assert_eq!((&json["cuda_ready"], &json["static_lib_ready"]), (&true.into(), &false.into()));
    assert!(json["static_lib_missing"][0].as_str().unwrap().starts_with("CUDA runtime: the CUDA runtime (libcudart_static.a) not found"));

    // A toolkit's: its package.
    let toolkit = tempfile::tempdir().unwrap();
    install_without_runtime(toolkit.path());
    let empty = tempfile::tempdir().unwrap();
    let (ok, t, _) = doctor(empty.path(), |c| {
        hide_cuda(c, home.path());
        c.env("CARGO_PTX_HOME", empty.path()).env("CUDA_PATH", toolkit.path());
    });
    assert!(ok, "outside a project it is a warning:\n{t}");
    assert!(t.contains("warning  CUDA runtime") && t.contains(&format!("looked in {}/lib,", toolkit.path().display())), "{t}");
    assert!(t.contains("fix: install the CUDA runtime of the toolkit nvcc 13.0.88 belongs to (the `cuda-cudart-dev-13-0` package)"), "{t}");
}

/// Everything found: one line outside a project, a line a piece in one that builds a library.
fn everything_found_is_one_line_outside_a_project_and_a_line_a_piece_in_one() {
    nvcc();
    let empty = tempfile::tempdir().unwrap();
    let (ok, t, json) = doctor(empty.path(), |_| {});
    assert!(ok, "{t}");
    assert!(t.contains("ok       static libraries") && t.contains("libcudart_static.a) and ar ("), "{t}");
    assert!(t.contains("ready: a static library of CUDA C++ (`.cuda_static_lib`) can be built and linked"), "{t}");
    assert_eq!((&json["static_lib_ready"], &json["static_lib_missing"]), (&true.into(), &serde_json::json!([])));

    let host = static_host();
    let (ok, t, _) = doctor(host.path(), |_| {});
    assert!(ok, "{t}");
    assert!(t.contains("ok       host C++ compiler") && !t.contains("static libraries  "), "{t}");
    assert!(t.contains("cudart_static: linked with the static library of `ggml-host` (build.rs:4)"), "{t}");
    assert!(t.contains("archives the objects of the static library of `ggml-host` (build.rs:4)"), "{t}");
}

pub fn tests() -> Vec<crate::harness::Test> {
    crate::tests![
        a_host_compiler_nvcc_refuses_is_named_with_one_it_accepts,
        a_missing_host_compiler_is_named_with_the_variable_that_names_it,
        a_missing_archiver_is_named_with_its_fix,
        a_missing_cuda_runtime_is_named_with_the_fix_for_its_install,
        everything_found_is_one_line_outside_a_project_and_a_line_a_piece_in_one,
    ]
}
