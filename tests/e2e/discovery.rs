//! Finding kernel crates from anywhere in a project: `cargo ptx build`, `build .` and `check` at
//! the root (or in a subfolder) of a project made by `cargo ptx new`, whose `kernels/` is not a
//! workspace member; and the archs of a lone .cu file from the package around it.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common;
use crate::common::{cargo_ptx, shared_target, Run};

/// The root of this checkout, for `--path-deps`.
fn checkout() -> PathBuf {
    std::fs::canonicalize(Path::new(env!("CARGO_MANIFEST_DIR")).join("..")).unwrap()
}

/// `cargo ptx new demo --kernels both --arch sm_80` in a fresh folder; returns it and the project.
fn new_project() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::Builder::new().prefix("cargo-ptx discovery ").tempdir().unwrap();
    let root = checkout();
    let out = cargo_ptx()
        .args(["new", "demo", "--kernels", "both", "--arch", "sm_80", "--vcs", "none", "--path-deps", root.to_str().unwrap()])
        .current_dir(tmp.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let dir = tmp.path().join("demo");
    (tmp, dir)
}

/// `cargo ptx <args>` in `cwd`, JSON messages on stdout.
fn run_in(cwd: &Path, args: &[&str]) -> Run {
    let mut cmd: Command = cargo_ptx();
    cmd.args(args).current_dir(cwd);
    Run::from(cmd.output().unwrap())
}

fn target() -> String {
    shared_target().to_str().unwrap().to_string()
}

fn build_and_check_at_the_root_of_a_new_project_find_the_excluded_kernels() {
    common::cuda();
    let (_tmp, dir) = new_project();
    let t = target();
    for (cwd, args) in [
        (dir.clone(), vec!["build"]),
        (dir.clone(), vec!["build", "."]),
        // From a subfolder: the workspace around it is searched.
        (dir.join("src"), vec!["build"]),
    ] {
        let mut args = args.clone();
        args.extend(["--target-dir", &t, "--message-format", "json"]);
        let r = run_in(&cwd, &args);
        r.assert_ok();
        let packages: Vec<&str> = r.of("ptx-artifact").iter().map(|a| a["package"].as_str().unwrap()).collect();
        assert!(!packages.is_empty() && packages.iter().all(|p| *p == "demo-kernels"), "{args:?} in {}: {packages:?}", cwd.display());
    }
    // `check` also reads the .cu files the host's build.rs builds (`cuda/`).
    let out = cargo_ptx().arg("check").current_dir(&dir).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("Checked demo-kernels, demo (2 files, 0 warnings)"), "{stderr}");
    let bad = "__global__ void k(int *x) { asm(\"mov.u32 %0, %tid.x;\" : \"=r\"(x[0])); }\n";
    std::fs::write(dir.join("cuda/bad.cu"), bad).unwrap();
    let out = cargo_ptx().arg("check").current_dir(dir.join("src")).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("special register `%tid` should be written `%%tid`") && stderr.contains("cuda/bad.cu:1:"), "{stderr}");
    assert!(stderr.contains("Checked demo-kernels, demo (3 files, 1 warning)"), "{stderr}");
    // `inspect` builds kernel crates; a kernel of the host's .cu files is pointed at.
    let out = cargo_ptx().args(["inspect", "--kernel", "sigmoid", "--target-dir", &t]).current_dir(&dir).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && stderr.contains("no kernel named `sigmoid`"), "{stderr}");
    let hint = "`sigmoid` is in cuda/sigmoid.cu, which a build.rs builds: `cargo ptx inspect cuda/sigmoid.cu --kernel sigmoid";
    assert!(stderr.contains(hint), "{stderr}");
}

/// A host whose build.rs builds `csrc/` (llama.cpp's, DeepSpeed's layout) is checked there,
/// less what it excludes: the globs are read from its `.cuda(..)`, `.cuda_static_lib(..)` and
/// `.cuda_exclude(..)` calls, and a header that only its `.cuda_include(..)` folder finds
/// (`<ops/store.h>`) is checked as a build would.
fn check_reads_the_globs_a_build_script_gives_its_builder() {
    let (_tmp, dir) = new_project();
    std::fs::create_dir_all(dir.join("csrc/kernels")).unwrap();
    std::fs::rename(dir.join("cuda/sigmoid.cu"), dir.join("csrc/kernels/sigmoid.cu")).unwrap();
    let bad = "__global__ void k(int *x) { asm(\"mov.u32 %0, %tid.x;\" : \"=r\"(x[0])); }\n";
    std::fs::write(dir.join("csrc/launch.cu"), bad).unwrap();
    // Excluded: never checked, however wrong.
    std::fs::write(dir.join("csrc/kernels/skip_me.cu"), bad).unwrap();
    std::fs::create_dir_all(dir.join("csrc/include/ops")).unwrap();
    let store = "__device__ void st(float *p) { asm volatile(\"st.global.f32 [%0], 1.0;\" :: \"l\"(p)); }\n";
    std::fs::write(dir.join("csrc/include/ops/store.h"), store).unwrap();
    std::fs::write(dir.join("csrc/kernels/store.cu"), "#include <ops/store.h>\nextern \"C\" __global__ void k(float *p) { st(p); }\n")
        .unwrap();
    let build_rs = std::fs::read_to_string(dir.join("build.rs")).unwrap();
    let build_rs = build_rs.replace(
        ".cuda(\"cuda/*.cu\")",
        ".cuda(\"csrc/kernels/*.cu\")\n        .cuda_exclude(\"skip_*.cu\")\n        .cuda_static_lib(\"launch\", \"csrc/launch.cu\")\n        .cuda_include(\"csrc/include\")",
    );
    std::fs::write(dir.join("build.rs"), build_rs).unwrap();
    let out = cargo_ptx().arg("check").current_dir(&dir).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("special register `%tid` should be written `%%tid`") && stderr.contains("csrc/launch.cu:1:"), "{stderr}");
    assert!(!stderr.contains("skip_me.cu"), "an excluded file is not checked: {stderr}");
    assert!(stderr.contains("without a \"memory\" clobber") && stderr.contains("csrc/include/ops/store.h:1:"), "{stderr}");
    assert!(stderr.contains("Checked demo-kernels, demo (5 files, 2 warnings)"), "{stderr}");
}

fn a_broken_manifest_below_is_skipped_with_a_warning() {
    let (_tmp, dir) = new_project();
    std::fs::create_dir_all(dir.join("vendor/broken")).unwrap();
    std::fs::write(dir.join("vendor/broken/Cargo.toml"), "[package.metadata.ptx]\narchs = [\"sm_80\"]\n").unwrap();
    // A kernel crate inside a target dir (a copy cargo made) is not searched.
    std::fs::create_dir_all(dir.join("out/package/copy")).unwrap();
    std::fs::write(dir.join("out/CACHEDIR.TAG"), "Signature: 8a477f597d28d172789f06886806bc55\n").unwrap();
    std::fs::copy(dir.join("kernels/Cargo.toml"), dir.join("out/package/copy/Cargo.toml")).unwrap();
    let out = cargo_ptx().arg("check").current_dir(&dir).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let broken = dir.join("vendor/broken/Cargo.toml");
    assert!(stderr.contains(&format!("warning: skipped {}: could not read the cargo workspace", broken.display())), "{stderr}");
    assert!(stderr.contains("Checked demo-kernels, demo (2 files, 0 warnings)"), "only the real kernel crate and the host: {stderr}");
}

fn a_lone_cu_file_takes_the_archs_of_the_workspace_around_it() {
    common::cuda();
    let (_tmp, dir) = new_project();
    // No --arch and no archs around it: the help names the manifest to put them in, not the .cu
    // file (whether or not this machine has a GPU, `native` is not asked for then).
    if ptx_build::internals::tools::gpu::native().is_err() {
        let r = run_in(&dir, &["build", "cuda/sigmoid.cu", "--message-format", "json"]);
        let manifest = dir.join("Cargo.toml");
        r.assert_error(&[
            "no GPU arch chosen for sigmoid",
            "pass `--arch sm_80`",
            &format!("add `archs = [\"sm_80\"]` to [package.metadata.ptx] of {}", manifest.display()),
        ]);
        assert!(!r.error_text().contains("sigmoid.cu"), "the .cu file is not a manifest: {}", r.error_text());
    }
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    std::fs::write(
        dir.join("Cargo.toml"),
        manifest.replace("[workspace]\n", "[workspace]\n[workspace.metadata.ptx]\narchs = [\"sm_80\"]\n"),
    )
    .unwrap();
    let r = run_in(&dir, &["build", "cuda/sigmoid.cu", "--target-dir", &target(), "--message-format", "json"]);
    r.assert_ok();
    let archs: Vec<&str> = r.of("ptx-artifact").iter().map(|a| a["arch"].as_str().unwrap()).collect();
    assert!(!archs.is_empty() && archs.iter().all(|a| *a == "sm_80"), "{archs:?}");
}

fn a_lone_cu_file_outside_any_package_says_to_pass_an_arch() {
    if ptx_build::internals::tools::gpu::native().is_ok() {
        crate::harness::missing("a machine without a GPU (here `native` gives the archs)");
    }
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("k.cu"), "extern \"C\" __global__ void k() {}\n").unwrap();
    let r = run_in(tmp.path(), &["build", "k.cu", "--message-format", "json"]);
    r.assert_error(&["no GPU arch chosen for k", "pass `--arch sm_80`", "put the files in a package"]);
    assert!(!r.error_text().contains("k.cu"), "the .cu file is not a manifest: {}", r.error_text());
}

fn a_lone_cu_file_in_a_kernel_crate_takes_its_archs_and_a_bad_value_is_an_error() {
    let (_tmp, dir) = new_project();
    std::fs::copy(dir.join("cuda/sigmoid.cu"), dir.join("kernels/extra.cu")).unwrap();
    let kernels = dir.join("kernels/Cargo.toml");
    let manifest = std::fs::read_to_string(&kernels).unwrap();
    // The kernel crate's own table: its bad value is the error, named where it was written.
    std::fs::write(&kernels, manifest.replace("archs = [\"sm_80\"]", "archs = \"sm_80\"")).unwrap();
    let r = run_in(&dir, &["build", "kernels/extra.cu", "--message-format", "json"]);
    r.assert_error(&[&format!("invalid `archs` in [package.metadata.ptx] of {}", kernels.display()), "expected a list"]);
    // No archs there at all and no GPU: the help names the kernel crate's table.
    if ptx_build::internals::tools::gpu::native().is_err() {
        std::fs::write(&kernels, manifest.replace("archs = [\"sm_80\"]", "")).unwrap();
        let r = run_in(&dir, &["build", "kernels/extra.cu", "--message-format", "json"]);
        r.assert_error(&[&format!("add `archs = [\"sm_80\"]` to [package.metadata.ptx] of {}", kernels.display())]);
    }
}

pub fn tests() -> Vec<crate::harness::Test> {
    crate::tests![
        build_and_check_at_the_root_of_a_new_project_find_the_excluded_kernels,
        check_reads_the_globs_a_build_script_gives_its_builder,
        a_broken_manifest_below_is_skipped_with_a_warning,
        a_lone_cu_file_takes_the_archs_of_the_workspace_around_it,
        a_lone_cu_file_outside_any_package_says_to_pass_an_arch,
        a_lone_cu_file_in_a_kernel_crate_takes_its_archs_and_a_bad_value_is_an_error,
    ]
}
