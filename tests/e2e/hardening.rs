//! Inputs a demanding user feeds `cargo ptx build`: concurrent builds of one package, names that
//! clash, files that are not files, tools that do not work. Each gets a build that succeeds or
//! an error that says what, where and how to fix it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::common;
use crate::common::{cargo_ptx, cuda, KernelCrate, Run};

const PANIC: &str = "#[panic_handler]\nfn panic(_: &core::panic::PanicInfo) -> ! {\n    unsafe { core::arch::nvptx::trap() }\n}\n";

fn kernel(name: &str, body: &str) -> KernelCrate {
    KernelCrate::new(name, "archs = [\"sm_80\"]", &format!("#![no_std]\n#![feature(abi_ptx, stdarch_nvptx)]\n{body}\n{PANIC}"))
}

const SAXPY_CU: &str = "extern \"C\" __global__ void saxpy(int n, float a, const float *x, float *y) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) y[i] = a * x[i] + y[i];\n}\n";

/// A kernel crate of .cu files only.
fn cuda_crate(name: &str, files: &[(&str, &str)]) -> KernelCrate {
    let k = KernelCrate::new(name, "archs = [\"sm_80\"]\nrust = false", "");
    for (path, text) in files {
        k.write(path, text);
    }
    k
}

fn a_kernel_named_like_a_libdevice_function_is_refused_at_its_line() {
    cuda();
    let k = kernel(
        "nvname_kernels",
        "extern \"C\" { fn __nv_sinf(x: f32) -> f32; }\n#[no_mangle]\npub unsafe extern \"ptx-kernel\" fn __nv_cosf(x: *mut f32) {\n    *x = __nv_sinf(*x);\n}\n",
    );
    k.build(&["--release"]).assert_error(&["src/lib.rs:5: kernel `__nv_cosf` has the name of a libdevice function", "rename the kernel"]);
}

fn a_cuda_kernel_named_like_a_libdevice_function_is_refused_at_its_line() {
    cuda();
    let k = cuda_crate("nvname_cuda", &[("cuda/k.cu", "\nextern \"C\" __global__ void __nv_fast_k(float *x) { *x = 1.0f; }\n")]);
    k.build(&[]).assert_error(&["cuda/k.cu:2: kernel `__nv_fast_k` has the name of a libdevice function"]);
}

fn a_kernel_without_no_mangle_is_warned_about_at_its_line() {
    cuda();
    let k = kernel(
        "mangled_kernels",
        "#[no_mangle]\npub unsafe extern \"ptx-kernel\" fn ok(x: *mut f32) { *x = 0.0; }\npub unsafe extern \"ptx-kernel\" fn scale(x: *mut f32) {\n    *x *= 2.0;\n}\n",
    );
    let run = k.build(&["--release"]);
    run.assert_ok();
    let w = run
        .of("ptx-diagnostic")
        .into_iter()
        .find(|d| d["message"].as_str().unwrap().contains("`extern \"ptx-kernel\" fn scale` has no `#[no_mangle]`"))
        .unwrap_or_else(|| panic!("no warning:\n{}", run.stdout))
        .clone();
    assert_eq!(w["level"], "warning");
    assert_eq!((w["file"].as_str(), w["line"].as_u64()), (Some("src/lib.rs"), Some(5)), "{w}");
    assert!(w["notes"][0].as_str().unwrap().contains("#[no_mangle]"), "{w}");
}

fn two_cuda_files_that_make_one_module_name_are_an_error_naming_both() {
    for (a, b) in [("cuda/a-b.cu", "cuda/a_b.cu"), ("cuda/Foo.cu", "cuda/foo.cu")] {
        let k = cuda_crate("clash_cuda", &[(a, SAXPY_CU), (b, SAXPY_CU)]);
        let run = k.build(&[]);
        run.assert_error(&["both make the PTX module", "rename one of the files"]);
        let text = run.error_text();
        assert!(text.contains(a) && text.contains(b), "names both files:\n{text}");
    }
}

fn a_fifo_given_as_a_path_is_refused_instead_of_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("kernels.cu");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let mut child = cargo_ptx()
        .args(["build", "--arch", "sm_80", "--message-format", "json"])
        .arg(&fifo)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("cargo ptx build blocked on a FIFO");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Run::from(child.wait_with_output().unwrap()).assert_error(&["kernels.cu", "not a file or folder (a FIFO, socket or device)"]);
}

fn a_relative_target_dir_is_taken_from_the_current_folder() {
    cuda();
    let k = kernel("reltarget_kernels", "#[no_mangle]\npub unsafe extern \"ptx-kernel\" fn k(x: *mut f32) { *x += 1.0; }\n");
    let out = cargo_ptx()
        .current_dir(k.root.path())
        .arg("build")
        .arg(&k.dir)
        .args(["--target-dir", "rel target", "--release", "--message-format", "json"])
        .output()
        .unwrap();
    Run::from(out).assert_ok();
    assert!(k.root.path().join("rel target/ptx/release/reltarget_kernels/sm_80/reltarget_kernels.ptx").is_file());
}

fn a_missing_cuda_include_folder_is_an_error_naming_its_source() {
    let k = KernelCrate::new("inc_cuda", "archs = [\"sm_80\"]\nrust = false\ncuda-include = [\"no such include\"]", "");
    k.write("cuda/k.cu", SAXPY_CU);
    k.build(&[]).assert_error(&["invalid `cuda-include` in [package.metadata.ptx] of", "`no such include` does not exist"]);
    let k = cuda_crate("inc_cli_cuda", &[("cuda/k.cu", SAXPY_CU)]);
    k.build(&["-I", "/no/such/include"]).assert_error(&["invalid `cuda-include` in the command line", "`/no/such/include` does not exist"]);
}

/// A tool a variable names explicitly and that does not work stops the build with the variable.
fn an_explicit_tool_that_does_not_work_is_an_error() {
    let k = kernel("badtool_kernels", "#[no_mangle]\npub unsafe extern \"ptx-kernel\" fn k(x: *mut f32) { *x += 1.0; }\n");
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, PathBuf, &[&str]); 5] = [
        (
            "PTXAS",
            PathBuf::from("/bin/false"),
            &["PTXAS=/bin/false failed: `/bin/false --version` exited", "point PTXAS at a working ptxas"],
        ),
        ("PTXAS", PathBuf::from("/no/such/ptxas"), &["PTXAS=/no/such/ptxas does not exist", "or unset it"]),
        ("NVCC", PathBuf::from("/bin/true"), &["NVCC=/bin/true is not an NVIDIA CUDA tool", "point NVCC at a working nvcc"]),
        ("LIBDEVICE", dir.path().to_path_buf(), &["is a folder, not a file", "LIBDEVICE names the file itself"]),
        ("NVCC", dir.path().to_path_buf(), &["is a folder, not a program"]),
    ];
    for (var, value, needles) in cases {
        let run = k.build_with(&["--release"], |c| {
            c.env(var, &value);
        });
        run.assert_error(needles);
        assert!(run.of("ptx-artifact").is_empty(), "{var}: nothing built");
    }
}

fn files_a_killed_build_left_are_removed_by_the_next_build() {
    cuda();
    let k = kernel("leftover_kernels", "#[no_mangle]\npub unsafe extern \"ptx-kernel\" fn k(x: *mut f32) { *x += 1.0; }\n");
    k.build(&["--release"]).assert_ok();
    let arch_dir = k.artifact("release", "sm_80", "ptx").parent().unwrap().to_path_buf();
    // pid 4194304 is above Linux's pid_max limit: no running process has it.
    let stale = arch_dir.join(".tmp-4194304-0-leftover_kernels.ptx");
    std::fs::write(&stale, "half a PTX file").unwrap();
    k.build(&["--release"]).assert_ok();
    if cfg!(target_os = "linux") {
        assert!(!stale.exists(), "the killed build's scratch file is gone");
    }
    let names: Vec<_> = std::fs::read_dir(&arch_dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(names.iter().all(|n| !n.to_string_lossy().starts_with(".tmp-")), "{names:?}");
}

/// Every PTX and cubin under `dir`, by path relative to it, with their bytes.
fn artifacts(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if e.file_type().unwrap().is_dir() {
                if e.file_name() != "cargo" {
                    stack.push(p);
                }
            } else if p.extension().is_some_and(|x| x == "ptx" || x == "cubin") {
                out.push((p.strip_prefix(dir).unwrap().to_path_buf(), std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// `CARGO_PTX_STRESS_BUILDS` builds at once (default 8) on 4 packages sharing one cold target
/// dir; each succeeds and the artifacts equal a single clean build's. Slow (cold builds):
/// held back by default (`slow::`), run by CI with a bounded count.
fn concurrent_cold_builds_sharing_one_target_dir_all_succeed() {
    cuda();
    let builds: usize = std::env::var("CARGO_PTX_STRESS_BUILDS").ok().and_then(|n| n.parse().ok()).unwrap_or(8);
    let packages = [
        KernelCrate::example("saxpy"),
        {
            let both = kernel("stress_both", "#[no_mangle]\npub unsafe extern \"ptx-kernel\" fn k(x: *mut f32) { *x *= 3.0; }\n");
            both.write("cuda/saxpy.cu", SAXPY_CU);
            both
        },
        kernel("stress_rust", "#[no_mangle]\npub unsafe extern \"ptx-kernel\" fn k(x: *mut f32) { *x += 1.0; }\n"),
        cuda_crate("stress_cuda", &[("cuda/saxpy.cu", SAXPY_CU)]),
    ];
    let build = |k: &KernelCrate, target: &Path| {
        cargo_ptx()
            .arg("build")
            .arg(&k.dir)
            .arg("--target-dir")
            .arg(target)
            .args(["--release", "--arch", "sm_80,sm_90", "--message-format", "json"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };

    let reference = tempfile::tempdir().unwrap();
    for k in &packages {
        Run::from(build(k, reference.path()).wait_with_output().unwrap()).assert_ok();
    }
    let shared = tempfile::tempdir().unwrap();
    let children: Vec<_> = (0..builds).map(|i| build(&packages[i % packages.len()], shared.path())).collect();
    for (i, c) in children.into_iter().enumerate() {
        let run = Run::from(c.wait_with_output().unwrap());
        assert!(run.success, "build {i} of {} failed:\n{}\n{}", packages[i % packages.len()].name, run.error_text(), run.stderr);
    }
    let (want, got) = (artifacts(&reference.path().join("ptx")), artifacts(&shared.path().join("ptx")));
    assert!(!want.is_empty());
    let names = |v: &[(PathBuf, Vec<u8>)]| v.iter().map(|(p, _)| p.clone()).collect::<Vec<_>>();
    assert_eq!(names(&got), names(&want), "the same artifacts");
    for ((p, a), (_, b)) in want.iter().zip(&got) {
        assert!(a == b, "{} differs from a single clean build's", p.display());
    }
}

/// Two checkouts at different absolute paths give byte-identical PTX and cubins: `.file` lines
/// name sources relative to the workspace (Rust) or the package (CUDA). Path dependencies
/// outside the workspace: `shared_cache::two_clones_of_a_monorepo_...`.
fn two_checkouts_at_different_paths_build_identical_artifacts() {
    cuda();
    let checkout = || {
        let k = kernel("repro_kernels", "#[no_mangle]\npub unsafe extern \"ptx-kernel\" fn k(x: *mut f32) { *x *= 3.0; }\n");
        k.write("cuda/saxpy.cu", SAXPY_CU);
        k
    };
    let (a, b) = (checkout(), checkout());
    assert_ne!(a.dir, b.dir);
    // One target dir (so `core` is built once), one checkout after the other.
    let out = common::shared_target().join("ptx/release/repro_kernels");
    a.build(&["--release"]).assert_ok();
    let first = artifacts(&out);
    b.build(&["--release"]).assert_ok();
    let second = artifacts(&out);
    assert_eq!(first.len(), 4, "PTX and cubin of the Rust and the CUDA module");
    for ((p, x), (q, y)) in first.iter().zip(&second) {
        assert_eq!(p, q);
        assert!(x == y, "{} differs between the checkouts", p.display());
        if p.extension().is_some_and(|e| e == "ptx") {
            let text = String::from_utf8_lossy(x);
            assert!(text.contains(".file"), "line info is kept");
            assert!(!text.contains("cargo-ptx e2e"), "{} names the checkout's path:\n{text}", p.display());
        }
    }
}

/// Two checkouts of one crate name sharing a target dir, the second one's files older than the
/// first one's build: each build compiles its own sources (cargo alone would call the second
/// fresh and hand over the first one's bitcode).
fn a_second_checkout_with_older_files_builds_its_own_kernels() {
    cuda();
    let older = kernel("twin_checkout", "#[no_mangle]\npub unsafe extern \"ptx-kernel\" fn from_older(x: *mut f32) { *x = 1.0; }\n");
    std::thread::sleep(Duration::from_millis(50));
    let newer = kernel("twin_checkout", "#[no_mangle]\npub unsafe extern \"ptx-kernel\" fn from_newer(x: *mut f32) { *x = 2.0; }\n");
    newer.build(&["--release"]).assert_ok();
    older.build(&["--release"]).assert_ok();
    let ptx = std::fs::read_to_string(older.artifact("release", "sm_80", "ptx")).unwrap();
    assert!(ptx.contains(".entry from_older") && !ptx.contains("from_newer"), "{ptx}");
}

/// Two host crates of one workspace whose build scripts build the same kernel crate: cargo runs
/// the build scripts at once, so every round (a kernel edit) links, assembles and compiles the
/// same crate twice concurrently into one kernel target dir. Each round succeeds and both hosts
/// embed the same artifacts. Slow (a host build with cudarc): held back by default (`slow::`), run by CI.
fn two_build_scripts_building_one_kernel_crate_at_once_agree() {
    cuda();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf();
    let root = tempfile::Builder::new().prefix("cargo-ptx two hosts ").tempdir().unwrap();
    let write = |p: &str, text: &str| {
        let p = root.path().join(p);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    write("Cargo.toml", "[workspace]\nresolver = \"2\"\nmembers = [\"host_a\", \"host_b\"]\nexclude = [\"kernels\"]\n");
    write(
        "kernels/Cargo.toml",
        "[package]\nname = \"shared_kernels\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[package.metadata.ptx]\narchs = [\"sm_80\", \"sm_90\"]\n[workspace]\n",
    );
    write("kernels/cuda/saxpy.cu", SAXPY_CU);
    for host in ["host_a", "host_b"] {
        write(
            &format!("{host}/Cargo.toml"),
            &format!(
                "[package]\nname = \"{host}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[dependencies]\nptx-runtime = {{ path = {:?} }}\n[build-dependencies]\nptx-build = {{ path = {:?} }}\n",
                repo.join("ptx-runtime"),
                repo.join("ptx-build")
            ),
        );
        write(&format!("{host}/build.rs"), "fn main() -> Result<(), ptx_build::Error> {\n    ptx_build::Builder::new().kernel_crate(\"../kernels\").build()?;\n    Ok(())\n}\n");
        write(&format!("{host}/src/lib.rs"), "pub mod kernels {\n    ptx_runtime::include_kernels!();\n}\n");
    }
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("two-hosts-target");
    for round in 0..3 {
        write(
            "kernels/src/lib.rs",
            &format!("#![no_std]\n#![feature(abi_ptx, stdarch_nvptx)]\n#[no_mangle]\npub unsafe extern \"ptx-kernel\" fn k(x: *mut f32) {{ *x += {round}.5; }}\n{PANIC}"),
        );
        let out = Command::new(env!("CARGO"))
            .args(["build", "--workspace", "-j", "2", "--message-format", "json"])
            .current_dir(root.path())
            .env("CARGO_TARGET_DIR", &target)
            .env_remove("CARGO_PTX_ARCH")
            .output()
            .unwrap();
        assert!(out.status.success(), "round {round}:\n{}", String::from_utf8_lossy(&out.stderr));
        // Each host's generated module, from its build script's OUT_DIR.
        let generated: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(|m| m["reason"] == "build-script-executed")
            .filter_map(|m| m["out_dir"].as_str().map(PathBuf::from))
            .filter_map(|d| std::fs::read_to_string(d.join("kernels.rs")).ok())
            .collect();
        assert_eq!(generated.len(), 2, "round {round}: both build scripts ran");
        assert_eq!(generated[0], generated[1], "round {round}: both hosts embed the same kernels");
        assert!(
            generated[0].contains("\"saxpy\"") && generated[0].contains("\"k\""),
            "round {round}: both kernels typed:\n{}",
            generated[0]
        );
    }
}

/// `extern "gpu-kernel"` (the ABI of rustc's std::offload) builds like `extern "ptx-kernel"`: the
/// kernel is found, listed and its inline PTX checked.
fn gpu_kernel_abi_kernels_are_built_listed_and_checked() {
    cuda();
    let k = KernelCrate::new(
        "gpu_abi_kernels",
        "archs = [\"sm_80\"]",
        &format!("#![no_std]\n#![feature(abi_gpu_kernel, stdarch_nvptx)]\n#[no_mangle]\npub unsafe extern \"gpu-kernel\" fn offload(y: *mut f32) {{ *y *= 2.0; }}\n{PANIC}"),
    );
    let run = k.build(&["--release"]);
    run.assert_ok();
    let ptx = run.of("ptx-artifact").into_iter().find(|a| a["kind"] == "ptx").unwrap().clone();
    assert_eq!(ptx["kernels"][0]["name"], "offload", "{ptx}");
    // The inline-PTX checker treats it as a kernel (inlined nowhere): a `.reg` outside braces is
    // fine there and warned about in a helper that can be inlined twice.
    let asm = "core::arch::asm!(\".reg .u32 t; mov.u32 t, 1;\");";
    k.write(
        "src/lib.rs",
        &format!("#![no_std]\n#![feature(abi_gpu_kernel, stdarch_nvptx, asm_experimental_arch)]\npub unsafe fn helper() {{ {asm} }}\n#[no_mangle]\npub unsafe extern \"gpu-kernel\" fn offload(y: *mut u32) {{\n    {asm}\n    *y = 1;\n}}\n{PANIC}"),
    );
    let out = cargo_ptx().arg("check").arg(&k.dir).output().unwrap();
    let text = String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("in an asm! of `helper`"), "the helper is warned about:\n{text}");
    assert!(!text.contains("of `offload`"), "the gpu-kernel is a kernel:\n{text}");
    // A CUDA author's `__shared__` written as a `static mut` beside a block barrier: it builds
    // and races across blocks; the kernel lints say so at the static.
    let tile = "static mut TILE: [u32; 32] = [0; 32];\npub unsafe fn k() { TILE[0] = 1; ptx_device_sync::sync_threads() }\n";
    k.write("src/lib.rs", &format!("#![no_std]\n{tile}{PANIC}"));
    let out = cargo_ptx().arg("check").arg(&k.dir).output().unwrap();
    let text = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(text.contains("`static mut TILE` is global memory: one copy for the whole grid") && text.contains("src/lib.rs:2:12"), "{text}");
    assert!(text.contains("shared_array![u32; 32]"), "{text}");
    // A kernel without its attribute: not in the PTX, so the build says so at the function
    // instead of leaving the host's "no method named `fill`" to explain it.
    let fill = "pub unsafe fn fill(y: *mut f32) { *y.add(core::arch::nvptx::_thread_idx_x() as usize) = 1.0; }\n";
    k.write("src/lib.rs", &format!("#![no_std]\n#![feature(stdarch_nvptx)]\n{fill}{PANIC}"));
    let run = k.build(&[]);
    let warning =
        run.of("ptx-diagnostic").into_iter().find(|d| d["message"].as_str().unwrap().contains("`fill` reads the thread's position"));
    let warning = warning.unwrap_or_else(|| panic!("no warning at `fill`:\n{}", run.stdout));
    assert_eq!((warning["file"].as_str(), warning["line"].as_u64()), (Some("src/lib.rs"), Some(3)), "{warning}");
}

/// An nvcc error that every arch hits is reported once, naming the archs, at the file's line.
fn an_error_every_arch_hits_is_reported_once_with_its_archs() {
    let k = cuda_crate("once_cuda", &[("cuda/bad.cu", "extern \"C\" __global__ void k(float *x) {\n    x[0] = undefined_name;\n}\n")]);
    let run = k.build(&["--arch", "sm_80,sm_90"]);
    run.assert_error(&["nvcc could not compile cuda/bad.cu for sm_80, sm_90"]);
    let errors: Vec<_> = run.errors().into_iter().filter(|d| d["message"].as_str().unwrap().contains("undefined_name")).collect();
    assert_eq!(errors.len(), 1, "once, not once per arch:\n{}", run.stdout);
    assert_eq!((errors[0]["file"].as_str(), errors[0]["line"].as_u64()), (Some("cuda/bad.cu"), Some(2)));
    assert!(errors[0]["notes"].as_array().unwrap().iter().any(|n| n == "for sm_80, sm_90"), "{}", errors[0]);
}

/// `cuda-libraries` names what the .cu files need: an unknown name is refused where it is
/// written, and a listed library whose headers are missing stops the build before nvcc with the
/// setup command.
fn cuda_libraries_are_checked_before_nvcc_runs() {
    let k = KernelCrate::new("libs_cuda", "archs = [\"sm_80\"]\nrust = false\ncuda-libraries = [\"cublass\"]", "");
    k.write("cuda/k.cu", SAXPY_CU);
    k.build(&[]).assert_error(&[
        "invalid `cuda-libraries` in [package.metadata.ptx] of",
        "`cublass` is not a CUDA library setup can install (known: cublas, cudnn, curand, cusparse, cufft, cusolver, nvtx, profiler)",
    ]);

    let k = KernelCrate::new("libs2_cuda", "archs = [\"sm_80\"]\nrust = false\ncuda-libraries = [\"cublas\"]", "");
    k.write("cuda/k.cu", SAXPY_CU);
    cuda();
    let nvcc = common::nvcc();
    // An nvcc of an install without cuBLAS's headers: a copy of nvcc beside CUDA's own headers
    // alone (the check runs before nvcc, which could not run from there).
    let fake = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(fake.path().join("bin")).unwrap();
    std::fs::create_dir_all(fake.path().join("include")).unwrap();
    std::fs::copy(&nvcc, fake.path().join("bin/nvcc")).unwrap();
    std::fs::write(fake.path().join("include/cuda_runtime.h"), "").unwrap();
    k.build_with(&[], |c| {
        c.env("NVCC", fake.path().join("bin/nvcc"));
    })
    .assert_error(&["cublas's headers (cublas_v2.h in", "`cuda-libraries` of `libs2_cuda`", "cargo ptx setup --with cublas"]);
    // A symlink to the real nvcc in a folder of its own (`/usr/local/bin/nvcc`): nvcc looks for
    // its install beside the path it is started by, so the build starts the real one, whose
    // install has the headers.
    std::fs::create_dir_all(fake.path().join("links")).unwrap();
    std::os::unix::fs::symlink(&nvcc, fake.path().join("links/nvcc")).unwrap();
    k.build_with(&[], |c| {
        c.env("NVCC", fake.path().join("links/nvcc"));
    })
    .assert_ok();
    // With them (setup --with cublas, as CI runs it), the build goes on.
    k.build(&[]).assert_ok();
}

pub fn tests() -> Vec<crate::harness::Test> {
    crate::tests![
        a_kernel_named_like_a_libdevice_function_is_refused_at_its_line,
        a_cuda_kernel_named_like_a_libdevice_function_is_refused_at_its_line,
        a_kernel_without_no_mangle_is_warned_about_at_its_line,
        two_cuda_files_that_make_one_module_name_are_an_error_naming_both,
        a_fifo_given_as_a_path_is_refused_instead_of_blocking,
        a_relative_target_dir_is_taken_from_the_current_folder,
        a_missing_cuda_include_folder_is_an_error_naming_its_source,
        an_explicit_tool_that_does_not_work_is_an_error,
        files_a_killed_build_left_are_removed_by_the_next_build,
        two_checkouts_at_different_paths_build_identical_artifacts,
        a_second_checkout_with_older_files_builds_its_own_kernels,
        gpu_kernel_abi_kernels_are_built_listed_and_checked,
        an_error_every_arch_hits_is_reported_once_with_its_archs,
        cuda_libraries_are_checked_before_nvcc_runs;
        slow:
        concurrent_cold_builds_sharing_one_target_dir_all_succeed,
        two_build_scripts_building_one_kernel_crate_at_once_agree,
    ]
}
