//! `cargo ptx doctor` and `cargo ptx setup` end to end.

mod common;

use std::os::unix::fs::PermissionsExt;

use common::{cargo_ptx, cuda, hide_cuda};

fn text(out: &std::process::Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

#[test]
fn doctor_reports_every_component_and_is_ready_after_setup() {
    cuda();
    let out = cargo_ptx().arg("doctor").output().unwrap();
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    for component in ["toolchain `nightly`", "rust-src", "llvm-tools", "ptxas", "nvcc", "libdevice", "nvdisasm", "compute-sanitizer", "GPU"]
    {
        assert!(t.contains(component), "doctor lists {component}:\n{t}");
    }
    assert!(t.contains("13.0.88"), "versions are read from the tools:\n{t}");
    assert!(t.contains("ready: a Rust kernel build can run"), "{t}");
    assert!(t.contains("archs these tools build:") && t.contains("sm_80") && !t.contains("sm_70,"), "ptxas 13 has no sm_70:\n{t}");

    let json = cargo_ptx().args(["doctor", "--message-format", "json"]).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).expect("one JSON object");
    assert_eq!(v["ready"], true);
    assert!(v["checks"].as_array().unwrap().iter().any(|c| c["component"] == "ptxas" && c["status"] == "ok"));
}

#[test]
fn doctor_names_the_fix_for_what_is_missing_and_fails_without_a_toolchain() {
    let empty = tempfile::tempdir().unwrap();
    let mut cmd = cargo_ptx();
    cmd.args(["doctor", "--toolchain", "nightly-1999-01-01"]);
    hide_cuda(&mut cmd, empty.path());
    let out = cmd.output().unwrap();
    let t = text(&out);
    assert!(!out.status.success(), "a build cannot run: exit non-zero\n{t}");
    assert!(
        t.contains("missing")
            && t.contains("rustup toolchain install nightly-1999-01-01 --profile minimal --component rust-src,llvm-tools"),
        "{t}"
    );
    assert!(t.contains("ptxas") && t.contains("not found: builds make PTX only, no cubins"), "{t}");
    assert!(t.contains("fix: cargo ptx setup"), "{t}");
    assert!(t.contains("not ready"), "{t}");
}

#[test]
fn doctor_reports_the_step_cache_a_broken_tool_variable_and_a_missing_launcher() {
    let cache = tempfile::tempdir().unwrap();
    let out = cargo_ptx()
        .arg("doctor")
        .env("CARGO_PTX_CACHE_DIR", cache.path())
        .env("PTXAS", "/no/such/ptxas")
        .env("CARGO_PTX_LAUNCHER", "no-such-launcher")
        .output()
        .unwrap();
    let t = text(&out);
    assert!(!out.status.success(), "a build would fail: exit non-zero\n{t}");
    assert!(t.contains("step cache") && t.contains("shared step cache: 0 entries") && t.contains(&*cache.path().to_string_lossy()), "{t}");
    assert!(t.contains("PTXAS") && t.contains("does not exist") && t.contains("or unset it"), "{t}");
    assert!(
        t.contains("CARGO_PTX_LAUNCHER names `no-such-launcher`, which is not installed") && t.contains("cargo ptx setup --with sccache"),
        "{t}"
    );
}

#[test]
fn doctor_reports_a_mixed_cuda_install() {
    let ptxas = cuda().ptxas.unwrap().path;
    let home = tempfile::tempdir().unwrap();
    let install = home.path().join("cuda/13.0.88");
    std::fs::create_dir_all(install.join("nvidia/cu13/bin")).unwrap();
    std::os::unix::fs::symlink(&ptxas, install.join("nvidia/cu13/bin/ptxas")).unwrap();
    std::fs::create_dir_all(install.join("nvidia_nvvm-13.5.37.dist-info")).unwrap();
    std::fs::create_dir_all(install.join("nvidia_cuda_nvcc-13.0.88.dist-info")).unwrap();
    let mut cmd = cargo_ptx();
    cmd.arg("doctor");
    hide_cuda(&mut cmd, home.path());
    let t = text(&cmd.output().unwrap());
    assert!(t.contains("ptxas 13.0.88 is mixed with nvvm 13.5.37"), "{t}");
    assert!(t.contains("cargo ptx setup --cuda 13.0 --force"), "{t}");
}

#[test]
fn setup_is_idempotent() {
    cuda();
    let out = cargo_ptx().args(["setup", "--no-rust"]).output().unwrap();
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(t.contains("CUDA 13.0.88 already installed at"), "a second setup installs nothing:\n{t}");
    let out = cargo_ptx().args(["setup", "--no-cuda"]).output().unwrap();
    assert!(text(&out).contains("has rust-src and llvm-tools"), "{}", text(&out));
}

#[test]
fn setup_refuses_an_unknown_release() {
    let out = cargo_ptx().args(["setup", "--cuda", "11.8", "--no-rust"]).output().unwrap();
    let t = text(&out);
    assert!(!out.status.success());
    assert!(t.contains("CUDA `11.8` is not a release setup knows") && t.contains("13.0, 13.1, 13.2"), "{t}");
}

#[test]
fn setup_refuses_an_unknown_extra_before_installing_anything() {
    let home = tempfile::tempdir().unwrap();
    let out = cargo_ptx().args(["setup", "--no-rust", "--with", "sccache,cudnnn"]).env("CARGO_PTX_HOME", home.path()).output().unwrap();
    let t = text(&out);
    assert!(!out.status.success());
    assert!(t.contains("`--with cudnnn`: setup knows no such tool") && t.contains("choose from: sccache, cublas, cudnn"), "{t}");
    assert_eq!(std::fs::read_dir(home.path()).unwrap().count(), 0, "nothing was installed");
}

/// A lone .cu file that includes cuBLAS's and cuDNN's headers and one of its own (`-I`) builds
/// once `cargo ptx setup --with cublas,cudnn` has put the libraries' headers into the CUDA
/// install; without them the error says which setup command adds them.
#[test]
fn a_lone_file_with_cublas_cudnn_and_an_include_folder_builds_after_setup_with_them() {
    let cuda = cuda();
    let root = cuda.nvcc.as_ref().expect("nvcc: run `cargo ptx setup`").path.parent().unwrap().parent().unwrap().to_path_buf();
    assert!(
        root.join("include/cublas_v2.h").is_file() && root.join("include/cudnn.h").is_file(),
        "these tests need cuBLAS's and cuDNN's headers: run `cargo ptx setup --with sccache,cublas,cudnn` first (README)"
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("inc")).unwrap();
    std::fs::write(dir.path().join("inc/common.h"), "#define SCALE 2.0f\n").unwrap();
    std::fs::write(
        dir.path().join("gemv.cu"),
        "#include <cublas_v2.h>\n#include <cudnn.h>\n#include \"common.h\"\nextern \"C\" __global__ void scale(cublasStatus_t *st, float *x) { x[0] *= SCALE; st[0] = CUBLAS_STATUS_SUCCESS; x[1] = CUDNN_MAJOR; }\n",
    )
    .unwrap();
    let build = |extra: &[&str]| {
        let out = cargo_ptx()
            .current_dir(dir.path())
            .args(["build", "gemv.cu", "--arch", "sm_80", "--target-dir", "target", "--message-format", "json"])
            .args(extra)
            .output()
            .unwrap();
        common::Run::from(out)
    };
    build(&["-I", "inc"]).assert_ok();
    let run = build(&[]);
    run.assert_error(&["common.h: No such file or directory"]);
    let d = run.errors().into_iter().find(|d| d["message"].as_str().unwrap().contains("common.h")).unwrap().clone();
    assert!(d["notes"][0].as_str().unwrap().contains("pass `-I DIR` to `cargo ptx build`"), "{d}");
}

#[test]
fn setup_in_a_project_installs_the_cuda_libraries_its_kernel_crates_list() {
    cuda();
    let k = common::KernelCrate::new("needs_cublas", "archs = [\"sm_80\"]\nrust = false\ncuda-libraries = [\"cublas\"]", "");
    let out = cargo_ptx().current_dir(&k.dir).args(["setup", "--no-rust"]).output().unwrap();
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(t.contains("cublas 13.0.2.14 headers"), "setup read `cuda-libraries`:\n{t}");
}

#[test]
fn a_failed_setup_leaves_no_half_install() {
    let home = tempfile::tempdir().unwrap();
    let bin = tempfile::tempdir().unwrap();
    let python = bin.path().join("python3");
    std::fs::write(&python, "#!/bin/sh\necho 'ERROR: No matching distribution found for nvidia-cuda-nvcc==13.0.88' >&2\nexit 1\n").unwrap();
    std::fs::set_permissions(&python, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin.path().display(), std::env::var("PATH").unwrap());
    let out = cargo_ptx().args(["setup", "--no-rust"]).env("CARGO_PTX_HOME", home.path()).env("PATH", path).output().unwrap();
    let t = text(&out);
    assert!(!out.status.success(), "{t}");
    assert!(t.contains("pip could not install NVIDIA's CUDA 13.0.88 wheels") && t.contains("No matching distribution"), "{t}");
    let left: Vec<_> = std::fs::read_dir(home.path().join("cuda"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n != ".lock")
        .collect();
    assert!(left.is_empty(), "nothing that discovery could pick up: {left:?}");
}
