//! `cargo ptx doctor` and `cargo ptx setup` end to end.

use std::os::unix::fs::PermissionsExt;

use crate::common;
use crate::common::{cargo_ptx, cuda, hide_cuda};

fn text(out: &std::process::Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

fn doctor_reports_every_component_and_is_ready_after_setup() {
    cuda();
    let out = cargo_ptx().arg("doctor").output().unwrap();
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    // Here, in this workspace, examples/cuda-static-lib builds a static library: the CUDA runtime
    // and `ar` get a line each.
    let components = ["toolchain `nightly`", "rust-src", "llvm-tools", "ptxas", "nvcc", "host C++ compiler", "CUDA runtime", "ar"];
    for component in components.into_iter().chain(["libdevice", "nvdisasm", "compute-sanitizer", "GPU"]) {
        assert!(t.contains(component), "doctor lists {component}:\n{t}");
    }
    assert!(t.contains("13.0.88"), "versions are read from the tools:\n{t}");
    assert!(t.contains("ready: a Rust kernel build can run") && t.contains("ready: a CUDA C++ (.cu) build can run"), "{t}");
    assert!(t.contains("archs these tools build:") && t.contains("sm_80") && !t.contains("sm_70,"), "ptxas 13 has no sm_70:\n{t}");

    let json = cargo_ptx().args(["doctor", "--message-format", "json"]).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).expect("one JSON object");
    assert_eq!((&v["ready"], &v["cuda_ready"], &v["static_lib_ready"]), (&true.into(), &true.into(), &true.into()));
    assert_eq!(v["static_lib_users"], serde_json::json!(["cuda-static-lib"]));
    assert!(v["checks"].as_array().unwrap().iter().any(|c| c["component"] == "ptxas" && c["status"] == "ok"));
}

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

/// In a project whose kernel crate has .cu files, nvcc is not optional.
fn doctor_in_a_cuda_project_without_nvcc_is_not_ready() {
    let k = common::KernelCrate::new("doctor_cu_kernels", "rust = false\narchs = [\"sm_80\"]\n", "");
    k.write("cuda/k.cu", "extern \"C\" __global__ void k(float *x) { x[0] = 1.0f; }\n");
    let empty = tempfile::tempdir().unwrap();
    let mut cmd = cargo_ptx();
    cmd.arg("doctor").current_dir(&k.dir);
    hide_cuda(&mut cmd, empty.path());
    let out = cmd.output().unwrap();
    let t = text(&out);
    assert!(!out.status.success(), "its kernels cannot be built: exit non-zero\n{t}");
    assert!(t.contains("not found: doctor_cu_kernels builds CUDA C++ (.cu) kernels"), "{t}");
    assert!(t.contains("not ready"), "{t}");
}

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

fn setup_is_idempotent() {
    cuda();
    let out = cargo_ptx().args(["setup", "--no-rust"]).output().unwrap();
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(t.contains("CUDA 13.0.88 already installed at"), "a second setup installs nothing:\n{t}");
    let out = cargo_ptx().args(["setup", "--no-cuda"]).output().unwrap();
    assert!(text(&out).contains("has rust-src and llvm-tools"), "{}", text(&out));
}

fn setup_refuses_an_unknown_release() {
    let out = cargo_ptx().args(["setup", "--cuda", "11.8", "--no-rust"]).output().unwrap();
    let t = text(&out);
    assert!(!out.status.success());
    assert!(t.contains("CUDA `11.8` is not a release setup knows") && t.contains("13.0, 13.1, 13.2"), "{t}");
}

fn setup_refuses_an_unknown_extra_before_installing_anything() {
    let home = tempfile::tempdir().unwrap();
    let out = cargo_ptx().args(["setup", "--no-rust", "--with", "sccache,cudnnn"]).env("CARGO_PTX_HOME", home.path()).output().unwrap();
    let t = text(&out);
    assert!(!out.status.success());
    assert!(t.contains("invalid value 'cudnnn' for '--with <TOOL>'") && t.contains("a similar value exists: 'cudnn'"), "{t}");
    assert!(t.contains("[possible values: sccache, cublas, cudnn, curand,"), "{t}");
    assert_eq!(std::fs::read_dir(home.path()).unwrap().count(), 0, "nothing was installed");
}

/// A lone .cu file that includes cuBLAS's and cuDNN's headers and one of its own (`-I`) builds
/// once `cargo ptx setup --with cublas,cudnn` has put the libraries' headers into the CUDA
/// install; without them the error says which setup command adds them.
fn a_lone_file_with_cublas_cudnn_and_an_include_folder_builds_after_setup_with_them() {
    cuda();
    let root = common::nvcc().parent().unwrap().parent().unwrap().to_path_buf();
    if !root.join("include/cublas_v2.h").is_file() || !root.join("include/cudnn.h").is_file() {
        crate::harness::missing("cuBLAS's and cuDNN's headers (`cargo ptx setup --with cublas,cudnn`)");
    }
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
    assert!(d["notes"][0].as_str().unwrap().contains("`common.h` is in inc/: pass `-I inc` to `cargo ptx build`"), "{d}");
}

/// DeepSpeed's dropout as a lone .cu file: `curand_kernel.h` (cuRAND's device API, not in the
/// compiler wheels) builds once `cargo ptx setup --with curand` has put the pinned cuRAND wheel's
/// headers beside the pinned nvcc's; a header of a library not installed gets the setup command
/// that installs it, not the include-folder help.
fn curand_builds_after_setup_with_it_and_a_missing_library_header_names_its_setup_command() {
    cuda();
    let root = common::nvcc().parent().unwrap().parent().unwrap().to_path_buf();
    if !root.join("include/curand_kernel.h").is_file() {
        crate::harness::missing("cuRAND's headers (`cargo ptx setup --with curand`)");
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("dropout.cu"),
        "#include <curand_kernel.h>\nextern \"C\" __global__ void dropout(float *x, int n, unsigned long long seed) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    curandStatePhilox4_32_10_t st;\n    curand_init(seed, i, 0, &st);\n    if (i < n && curand_uniform(&st) < 0.1f) x[i] = 0.f;\n}\n",
    )
    .unwrap();
    let build = |file: &str| {
        let out = cargo_ptx()
            .current_dir(dir.path())
            .args(["build", file, "--arch", "sm_80", "--target-dir", "target", "--message-format", "json"])
            .output()
            .unwrap();
        common::Run::from(out)
    };
    build("dropout.cu").assert_ok();
    // One the install lacks (CI installs none of these).
    let Some((header, lib)) = [("cusparse.h", "cusparse"), ("cufft.h", "cufft"), ("cusolverDn.h", "cusolver")]
        .into_iter()
        .find(|(h, _)| !root.join("include").join(h).exists())
    else {
        return;
    };
    std::fs::write(
        dir.path().join("sparse.cu"),
        format!("#include <{header}>\nextern \"C\" __global__ void k(float *x) {{ x[0] = 1.f; }}\n"),
    )
    .unwrap();
    let run = build("sparse.cu");
    run.assert_error(&[&format!("{header}: No such file or directory")]);
    let d = run.errors().into_iter().find(|d| d["message"].as_str().unwrap().contains(header)).unwrap().clone();
    let note = d["notes"][0].as_str().unwrap();
    assert!(
        note.contains("headers are not part of NVIDIA's CUDA compiler wheels: run `cargo ptx setup --with ")
            && note.contains(&format!("--with {lib}`")),
        "{d}"
    );
}

fn setup_in_a_project_installs_the_cuda_libraries_its_kernel_crates_list() {
    cuda();
    let k = common::KernelCrate::new("needs_cublas", "archs = [\"sm_80\"]\nrust = false\ncuda-libraries = [\"cublas\"]", "");
    let out = cargo_ptx().current_dir(&k.dir).args(["setup", "--no-rust"]).output().unwrap();
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(t.contains("cublas 13.0.2.14 headers"), "setup read `cuda-libraries`:\n{t}");
}

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

/// `--with cusolver` installs cuBLAS's and cuSPARSE's headers too (cuSOLVER's include them),
/// first, and says so; without the network: a CUDA install that `works` (the real ptxas) in a
/// fresh home, and a python3 whose `pip download` writes a wheel of one header per package.
fn setup_with_cusolver_installs_the_libraries_it_needs() {
    let ptxas = cuda().ptxas.unwrap().path;
    let python = crate::harness::require(ptx_build::internals::tools::on_path("python3"), "python3");
    let home = tempfile::tempdir().unwrap();
    let root = home.path().join("cuda/13.0.88/nvidia/cu13");
    for f in ["bin/nvdisasm", "lib/libcudart_static.a", "nvvm/libdevice/libdevice.10.bc", "include/nv/target"] {
        std::fs::create_dir_all(root.join(f).parent().unwrap()).unwrap();
        std::fs::write(root.join(f), "").unwrap();
    }
    std::os::unix::fs::symlink(&ptxas, root.join("bin/ptxas")).unwrap();
    let bin = tempfile::tempdir().unwrap();
    let log = bin.path().join("pip.log");
    let wheel = "import sys, zipfile\nd, spec = sys.argv[1], sys.argv[2]\nname = spec.split('==')[0]\n\
                 z = zipfile.ZipFile(f\"{d}/{name.replace('-', '_')}-1-py3-none-any.whl\", 'w')\n\
                 z.writestr(f'nvidia/cu13/include/{name}.h', '// ' + spec)\nz.close()\n";
    let fake = format!(
        "#!/bin/sh\nif [ \"$1\" = -m ]; then\n  echo \"$*\" >> '{log}'\n  for a; do dir=$spec; spec=$a; done\n  exec '{py}' -c \"{wheel}\" \"$dir\" \"$spec\"\nfi\nexec '{py}' \"$@\"\n",
        log = log.display(),
        py = python.display(),
        wheel = wheel.replace('"', "\\\""),
    );
    std::fs::write(bin.path().join("python3"), fake).unwrap();
    std::fs::set_permissions(bin.path().join("python3"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin.path().display(), std::env::var("PATH").unwrap());
    let out = cargo_ptx()
        .current_dir(home.path())
        .args(["setup", "--no-rust", "--with", "cusolver"])
        .env("CARGO_PTX_HOME", home.path())
        .env("PATH", path)
        .output()
        .unwrap();
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert_eq!(t.matches("cusolver needs cublas, cusparse: installing them too").count(), 1, "{t}");
    let pip = std::fs::read_to_string(&log).unwrap();
    let asked: Vec<&str> = pip.lines().filter_map(|l| l.split_whitespace().last()).collect();
    assert_eq!(asked, ["nvidia-cublas==13.0.2.14", "nvidia-cusparse==12.6.3.3", "nvidia-cusolver==12.0.4.66"], "{pip}");
    for h in ["nvidia-cublas.h", "nvidia-cusparse.h", "nvidia-cusolver.h"] {
        assert!(root.join("include").join(h).is_file(), "{h} in the install's include/:\n{t}");
    }
    // Asked for with what it needs, it adds nothing and says nothing (all three are in).
    let out = cargo_ptx()
        .current_dir(home.path())
        .args(["setup", "--no-rust", "--with", "cublas,cusparse,cusolver"])
        .env("CARGO_PTX_HOME", home.path())
        .output()
        .unwrap();
    let t = text(&out);
    assert!(out.status.success() && !t.contains("installing them too") && t.contains("cusolver 12.0.4.66 headers already in"), "{t}");
}

/// A kernel crate in a fresh folder: `metadata` for [package.metadata.ptx], and its files.
fn project(metadata: &str, files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::Builder::new().prefix("cargo-ptx doctor ").tempdir().unwrap();
    let manifest = format!(
        "[package]\nname = \"gpu\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[package.metadata.ptx]\n{metadata}\n\n[workspace]\n"
    );
    std::fs::write(dir.path().join("Cargo.toml"), manifest).unwrap();
    for (path, text) in files.iter().chain(&[("src/lib.rs", "#![no_std]\n")]) {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        if !p.exists() {
            std::fs::write(p, text).unwrap();
        }
    }
    dir
}

fn doctor_in_a_project_checks_the_toolchain_its_kernels_pin() {
    let p = project("archs = [\"sm_80\"]\ntoolchain = \"nightly-2020-01-01\"", &[]);
    let out = cargo_ptx().arg("doctor").current_dir(p.path()).output().unwrap();
    let t = text(&out);
    assert!(!out.status.success(), "the pinned toolchain is missing: exit non-zero\n{t}");
    assert!(t.contains("toolchain `nightly-2020-01-01`") && t.contains("used by gpu: the `nightly-2020-01-01` toolchain not found"), "{t}");
    assert!(t.contains("fix: cargo ptx setup --toolchain nightly-2020-01-01   (or: rustup toolchain install nightly-2020-01-01"), "{t}");
    assert!(t.contains("checked for the kernel crates here: gpu") && t.contains("not ready"), "{t}");
    // `--toolchain` still names the one to check.
    let out = cargo_ptx().args(["doctor", "--toolchain", "nightly"]).current_dir(p.path()).output().unwrap();
    assert!(!text(&out).contains("nightly-2020-01-01"), "{}", text(&out));
}

fn setup_in_a_project_installs_the_toolchain_its_kernels_pin() {
    // The installed nightly under its full name: setup must take it from the metadata.
    let full = format!("nightly-{}", ptx_build::internals::tools::host_triple());
    let p = project(&format!("archs = [\"sm_80\"]\ntoolchain = \"{full}\""), &[]);
    let out = cargo_ptx().args(["setup", "--no-cuda"]).current_dir(p.path()).output().unwrap();
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(t.contains(&format!("toolchain `{full}` has rust-src and llvm-tools")), "{t}");
}

fn doctor_in_a_project_whose_kernels_call_libdevice_requires_it() {
    let empty = tempfile::tempdir().unwrap();
    let doctor = |dir: &std::path::Path| {
        let mut cmd = cargo_ptx();
        cmd.arg("doctor").current_dir(dir);
        hide_cuda(&mut cmd, empty.path());
        cmd.output().unwrap()
    };
    // Without libdevice calls a missing libdevice is a warning, and a build can run.
    let plain = project("archs = [\"sm_80\"]", &[]);
    let out = doctor(plain.path());
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("warning  libdevice"), "{}", text(&out));

    let lib = "#![no_std]\n// __nv_expf in a comment is no call\nextern \"C\" {\n    fn __nv_expf(x: f32) -> f32;\n}\n";
    let calls = project("archs = [\"sm_80\"]", &[("src/lib.rs", lib)]);
    let out = doctor(calls.path());
    let t = text(&out);
    assert!(!out.status.success(), "the link would fail: exit non-zero\n{t}");
    assert!(t.contains("missing  libdevice") && t.contains("`gpu` calls it (src/lib.rs:4: `fn __nv_expf(x: f32) -> f32;`)"), "{t}");
    assert!(t.contains("fix: cargo ptx setup   (or set LIBDEVICE to a libdevice.10.bc)"), "{t}");

    // ptx-device's math functions are libdevice's.
    let lib = "#![no_std]\nuse ptx_device::{kernel, math};\n\npub fn f(x: f32) -> f32 {\n    math::exp(x)\n}\n";
    let math = project("archs = [\"sm_80\"]", &[("src/lib.rs", lib)]);
    let t = text(&doctor(math.path()));
    assert!(t.contains("`gpu` calls it (src/lib.rs:5: `math::exp(x)`)"), "{t}");
}

fn doctor_in_a_project_says_nvcc_needs_ptxas_for_sm_90() {
    cuda();
    let nvcc = common::nvcc();
    let bin = nvcc.parent().unwrap();
    // A toolkit like CUDA_PATH's without ptxas: everything of the installed one but ptxas.
    let toolkit = tempfile::tempdir().unwrap();
    std::fs::create_dir(toolkit.path().join("bin")).unwrap();
    for e in std::fs::read_dir(bin).unwrap().map(Result::unwrap) {
        if e.file_name() != "ptxas" {
            std::os::unix::fs::symlink(e.path(), toolkit.path().join("bin").join(e.file_name())).unwrap();
        }
    }
    for e in std::fs::read_dir(bin.parent().unwrap()).unwrap().map(Result::unwrap) {
        if e.file_name() != "bin" {
            std::os::unix::fs::symlink(e.path(), toolkit.path().join(e.file_name())).unwrap();
        }
    }
    let kernel = ("cuda/k.cu", "extern \"C\" __global__ void k(float *x) { x[0] = 1.0f; }\n");
    let doctor = |archs: &str| {
        let p = project(&format!("archs = {archs}\nrust = false"), &[kernel]);
        let out = cargo_ptx().arg("doctor").current_dir(p.path()).env("CUDA_PATH", toolkit.path()).env_remove("NVCC").output().unwrap();
        (out.status.success(), text(&out))
    };
    // sm_80 alone: nvcc writes PTX without ptxas.
    let (_, t) = doctor("[\"sm_80\"]");
    assert!(!t.contains("ptxas for nvcc"), "{t}");
    let (ok, t) = doctor("[\"sm_80\", \"sm_90\"]");
    assert!(!ok, "nvcc would fail: exit non-zero\n{t}");
    assert!(t.contains("missing  ptxas for nvcc") && t.contains("`gpu` builds .cu files for sm_90, where nvcc runs ptxas itself"), "{t}");
    assert!(t.contains(&format!("fix: unset CUDA_PATH && cargo ptx setup   (or put ptxas into {}/bin)", toolkit.path().display())), "{t}");
}

fn doctor_warns_when_the_kernels_toolchain_file_differs_from_the_build_toolchain() {
    let toolchain_file = ("rust-toolchain.toml", "[toolchain]\nchannel = \"nightly-2020-02-02\"\ncomponents = [\"rust-src\"]\n");
    let p = project("archs = [\"sm_80\"]", &[toolchain_file]);
    let t = text(&cargo_ptx().arg("doctor").current_dir(p.path()).output().unwrap());
    assert!(
        t.contains("warning  toolchain file")
            && t.contains("`gpu` builds with `nightly`")
            && t.contains("rust-toolchain.toml gives `cargo check` and rust-analyzer `nightly-2020-02-02`"),
        "{t}"
    );
    assert!(t.contains("fix: set `channel = \"nightly\"` in rust-toolchain.toml"), "{t}");
    // Alike: nothing to say.
    let p = project("archs = [\"sm_80\"]", &[("rust-toolchain.toml", "[toolchain]\nchannel = \"nightly\"\n")]);
    let t = text(&cargo_ptx().arg("doctor").current_dir(p.path()).output().unwrap());
    assert!(!t.contains("toolchain file"), "{t}");
}

/// An nvcc error every arch hits is shown once, the archs listed, its path as written from the
/// folder the command ran in, with the source line and a caret.
fn an_nvcc_error_is_shown_once_from_the_current_folder_with_its_line() {
    cuda();
    let dir = tempfile::tempdir().unwrap();
    let k = dir.path().join("k");
    std::fs::create_dir_all(k.join("cuda")).unwrap();
    std::fs::create_dir_all(k.join("src")).unwrap();
    std::fs::write(k.join("src/lib.rs"), "").unwrap();
    std::fs::write(
        k.join("Cargo.toml"),
        "[package]\nname = \"relk\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[package.metadata.ptx]\narchs = [\"sm_80\", \"sm_90\"]\nrust = false\n[workspace]\n",
    )
    .unwrap();
    std::fs::write(k.join("cuda/bad.cu"), "extern \"C\" __global__ void k(int *o) {\n  o[0] = undefined_name;\n}\n").unwrap();
    let out = cargo_ptx().current_dir(dir.path()).args(["build", "k", "--color", "never"]).output().unwrap();
    let t = text(&out);
    assert!(!out.status.success(), "{t}");
    assert!(t.contains(" --> k/cuda/bad.cu:2:10\n  |\n2 |   o[0] = undefined_name;\n  |          ^\n  = for sm_80, sm_90"), "{t}");
    assert_eq!(t.matches("is undefined").count(), 1, "once for both archs:\n{t}");
}

pub fn tests() -> Vec<crate::harness::Test> {
    crate::tests![
        doctor_reports_every_component_and_is_ready_after_setup,
        doctor_in_a_cuda_project_without_nvcc_is_not_ready,
        doctor_names_the_fix_for_what_is_missing_and_fails_without_a_toolchain,
        doctor_reports_the_step_cache_a_broken_tool_variable_and_a_missing_launcher,
        doctor_reports_a_mixed_cuda_install,
        setup_is_idempotent,
        setup_refuses_an_unknown_release,
        setup_refuses_an_unknown_extra_before_installing_anything,
        a_lone_file_with_cublas_cudnn_and_an_include_folder_builds_after_setup_with_them,
        curand_builds_after_setup_with_it_and_a_missing_library_header_names_its_setup_command,
        setup_in_a_project_installs_the_cuda_libraries_its_kernel_crates_list,
        a_failed_setup_leaves_no_half_install,
        setup_with_cusolver_installs_the_libraries_it_needs,
        doctor_in_a_project_checks_the_toolchain_its_kernels_pin,
        setup_in_a_project_installs_the_toolchain_its_kernels_pin,
        doctor_in_a_project_whose_kernels_call_libdevice_requires_it,
        doctor_in_a_project_says_nvcc_needs_ptxas_for_sm_90,
        doctor_warns_when_the_kernels_toolchain_file_differs_from_the_build_toolchain,
        an_nvcc_error_is_shown_once_from_the_current_folder_with_its_line,
    ]
}
