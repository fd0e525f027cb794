//! The build.rs path end to end: a host crate with `ptx_build::Builder` in its build script,
//! built by stable cargo.

use crate::common;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Writes a file dated an hour back. Cargo compares modification times with its own record of
/// the last build; on machines whose clock is stepped (VMs syncing time) a file written just
/// before a build can look newer than it, and the test would see a spurious rebuild.
pub(crate) fn write(path: impl AsRef<Path>, text: &str) {
    write_at(path, text, std::time::SystemTime::now() - std::time::Duration::from_secs(3600));
}

pub(crate) fn write_at(path: impl AsRef<Path>, text: &str, time: std::time::SystemTime) {
    std::fs::write(&path, text).unwrap();
    std::fs::File::options().write(true).open(&path).unwrap().set_modified(time).unwrap();
}

pub(crate) fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// A host crate `host/` and a kernel crate `kernels/` in a temp folder. Each test names its
/// packages differently: they share a target dir, where artifacts are laid out by name.
pub(crate) fn project(host: &str, kernel_src: &str) -> tempfile::TempDir {
    let root = tempfile::Builder::new().prefix("cargo-ptx host ").tempdir().unwrap();
    let k = root.path().join("kernels");
    std::fs::create_dir_all(k.join("src")).unwrap();
    write(k.join("Cargo.toml"), &format!("[package]\nname = \"{host}_kernels\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[package.metadata.ptx]\narchs = [\"sm_80\"]\n[workspace]\n"));
    write(k.join("src/lib.rs"), kernel_src);
    let h = root.path().join("host");
    std::fs::create_dir_all(h.join("src")).unwrap();
    write(
        h.join("Cargo.toml"),
        &format!(
            "[package]\nname = \"{host}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[dependencies]\nptx-runtime = {{ path = {:?} }}\n[build-dependencies]\nptx-build = {{ path = {:?} }}\n[workspace]\n",
            repo().join("ptx-runtime"),
            repo().join("ptx-build")
        ),
    );
    write(h.join("build.rs"), "fn main() -> Result<(), ptx_build::Error> {\n    ptx_build::Builder::new().kernel_crate(\"../kernels\").build()?;\n    Ok(())\n}\n");
    write(h.join("src/lib.rs"), "pub mod kernels {\n    ptx_runtime::include_kernels!();\n}\n");
    root
}

pub(crate) fn cargo_build(dir: &Path) -> (bool, String) {
    let out = Command::new(env!("CARGO"))
        .args(["build", "-v"])
        .current_dir(dir.join("host"))
        .env("CARGO_TARGET_DIR", Path::new(env!("CARGO_TARGET_TMPDIR")).join("host-target"))
        .env_remove("CARGO_PTX_ARCH")
        .env_remove("CARGO_PTX_VERBOSE")
        .env_remove("CARGO_PTX_UNTYPED_KERNELS")
        .output()
        .unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stderr).into_owned())
}

pub(crate) fn build_script_ran(log: &str) -> bool {
    log.lines().any(|l| l.contains("Running") && l.contains("build-script-build"))
}

const KERNEL: &str = "#![no_std]\n#![feature(abi_ptx)]\n#[no_mangle]\npub unsafe extern \"ptx-kernel\" fn scale(n: u32, a: f32, x: *mut f32) {}\n#[panic_handler]\nfn p(_: &core::panic::PanicInfo) -> ! { loop {} }\n";

fn the_build_script_reruns_exactly_when_a_kernel_input_changes() {
    common::cuda();
    let p = project("host_rerun", KERNEL);
    let (ok, log) = cargo_build(p.path());
    assert!(ok, "{log}");
    assert!(build_script_ran(&log));

    let (ok, log) = cargo_build(p.path());
    assert!(ok && !build_script_ran(&log), "a no-op build does not run the build script:\n{log}");

    write_at(p.path().join("kernels/NOTES.txt"), "not an input", std::time::SystemTime::now() + std::time::Duration::from_secs(3600));
    let (ok, log) = cargo_build(p.path());
    assert!(ok && !build_script_ran(&log), "an unrelated file does not rebuild:\n{log}");

    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(3600);
    write_at(p.path().join("kernels/src/lib.rs"), &KERNEL.replacen("{}", "{ *x = a * n as f32; }", 1), later);
    let (ok, log) = cargo_build(p.path());
    assert!(ok && build_script_ran(&log), "a kernel edit reruns the build script:\n{log}");
}

fn a_build_script_error_is_readable() {
    let p = project("host_error", "#![no_std]\n#![feature(abi_ptx)]\n#[no_mangle]\npub unsafe extern \"ptx-kernel\" fn sum(xs: &[f32]) {}\n#[panic_handler]\nfn p(_: &core::panic::PanicInfo) -> ! { loop {} }\n");
    let (ok, log) = cargo_build(p.path());
    assert!(!ok);
    assert!(
        log.contains("Error: ") && log.contains("src/lib.rs:4: kernel `sum`: parameter `xs`: `&[f32]`: a kernel cannot take a reference"),
        "{log}"
    );
    assert!(!log.contains("Signature {"), "the error is shown as text, not as a struct: {log}");
}

/// A host crate whose own .cu files come in through `.cuda("cuda/*.cu")`.
pub(crate) fn cuda_host(host: &str, files: &[(&str, &str)], main_rs: &str) -> tempfile::TempDir {
    let p = project(host, KERNEL);
    let h = p.path().join("host");
    write(h.join("build.rs"), "fn main() -> Result<(), ptx_build::Error> {\n    ptx_build::Builder::new().cuda(\"cuda/*.cu\").arch(\"sm_80\").build()?;\n    Ok(())\n}\n");
    std::fs::create_dir_all(h.join("cuda")).unwrap();
    for (f, text) in files {
        std::fs::create_dir_all(h.join(f).parent().unwrap()).unwrap();
        write(h.join(f), text);
    }
    write(h.join("src/lib.rs"), &format!("pub mod kernels {{\n    ptx_runtime::include_kernels!();\n}}\n{main_rs}"));
    p
}

fn cuda_files_of_the_host_get_typed_methods_and_header_edits_rerun() {
    common::cuda();
    // C types map to Rust ones; the calls below only compile if each parameter has the right type.
    let uses = "#[allow(dead_code)]\nunsafe fn call(k: &kernels::Kernels, s: &ptx_runtime::cudarc::driver::CudaStream, cfg: ptx_runtime::cudarc::driver::LaunchConfig,\n    x: &ptx_runtime::cudarc::driver::CudaSlice<f32>, y: &mut ptx_runtime::cudarc::driver::CudaSlice<f32>,\n    h: &ptx_runtime::cudarc::driver::CudaSlice<ptx_runtime::half::f16>, o: &mut ptx_runtime::cudarc::driver::CudaSlice<u64>) {\n    unsafe { k.axpy(s, cfg, 3i32, 2u32, -1i64, 4usize, 1.5f32, x, y).unwrap() };\n    unsafe { k.widen(s, cfg, h, o).unwrap() };\n}\n";
    let p = cuda_host(
        "host_cuda",
        &[
            ("cuda/tile.cuh", "#define SCALE 2\n"),
            (
                "cuda/axpy.cu",
                "#include \"tile.cuh\"\nextern \"C\" __global__ void axpy(int n, unsigned m, long long k, size_t len, float a, const float *x, float *y) {\n  y[0] = a * x[0] * SCALE + n + m + k + len;\n}\n",
            ),
            ("cuda/widen.cu", "#include <cuda_fp16.h>\nextern \"C\" __global__ void widen(const __half *h, unsigned long long *o) { o[0] = (unsigned long long)__half2float(h[0]); }\n"),
        ],
        uses,
    );
    let (ok, log) = cargo_build(p.path());
    assert!(ok, "{log}");
    let (ok, log) = cargo_build(p.path());
    assert!(ok && !build_script_ran(&log), "a no-op build does not run the build script:\n{log}");
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(3600);
    write_at(p.path().join("host/cuda/tile.cuh"), "#define SCALE 3\n", later);
    let (ok, log) = cargo_build(p.path());
    assert!(ok && build_script_ran(&log), "a header edit reruns the build script:\n{log}");
}

fn kernels_that_cannot_be_typed_are_embedded_with_a_warning_and_an_untyped_launcher() {
    // A C++ kernel (mangled name, typed by its C++ name), one taking a struct the host lacks, a
    // template over a template, one named like a method of `Kernels` (`load`: a library's file
    // cannot be renamed), and a typed one beside them: the build succeeds, the typed methods
    // stay, and the untyped ones launch through cudarc's builder.
    let uses = "#[allow(dead_code)]\nunsafe fn launchers(k: &kernels::Kernels, s: &ptx_runtime::cudarc::driver::CudaStream, cfg: ptx_runtime::cudarc::driver::LaunchConfig, x: &mut ptx_runtime::cudarc::driver::CudaSlice<f32>) -> bool {\n    unsafe { k.scale(s, cfg, 2.0f32, x).unwrap() };\n    unsafe { k.fill(s, cfg, x).unwrap() };\n    k.launch_builder(s, \"_Z4fillPf\").is_some() && k.launch_builder(s, \"raw\").is_some() && k.launch_builder(s, \"load\").is_some() && k.function(\"scale\").is_some()\n}\n";
    let p = cuda_host(
        "host_untyped",
        &[(
            "cuda/k.cu",
            "\n__global__ void fill(float *x) { x[0] = 1.0f; }\nstruct Pair { float a, b; };\nextern \"C\" __global__ void raw(Pair p, float *dst) { dst[0] = p.a; }\nextern \"C\" __global__ void scale(float a, float *x) { x[0] *= a; }\ntemplate <typename T> struct V2 { T x; };\ntemplate <template <typename> class V> __global__ void tile(float *x) { x[0] = sizeof(V<float>); }\ntemplate __global__ void tile<V2>(float *);\nextern \"C\" __global__ void load(float *x) { x[0] = 0.0f; }\n",
        )],
        uses,
    );
    let (ok, log) = cargo_build(p.path());
    assert!(ok, "{log}");
    // One line for the module: the count, the file with the list, the way to silence it.
    let lines: Vec<&str> = log.lines().filter(|l| l.starts_with("warning: host_untyped@0.1.0:")).collect();
    assert_eq!(lines.len(), 1, "one warning line:\n{log}");
    assert!(lines[0].contains("3 of 5 kernels of `k` have no typed launch methods"), "{log}");
    assert!(lines[0].contains("CARGO_PTX_VERBOSE=1") && lines[0].contains("`untyped-kernels = \"allow\"`"), "{log}");
    let list = lines[0].split(" in ").nth(1).and_then(|r| r.split(" (or set").next()).expect("the list's path");
    assert!(list.ends_with("ptx-build/kernels.rs/k/untyped-kernels.txt"), "{list}");
    let text = std::fs::read_to_string(list).unwrap();
    assert!(text.contains("`raw` (") && text.contains("k.cu:4): parameter `p`: the host crate has no type `Pair`"), "{text}");
    assert!(text.contains("`_Z4tileI2V2EvPf`"), "the template over a template, by its PTX name:\n{text}");
    assert!(
        text.contains("`load` (") && text.contains("k.cu:9): its method would be `load`, a method of the generated `Kernels` itself"),
        "{text}"
    );
    assert!(!text.contains("fill") && !text.contains("scale"), "typed kernels are not listed:\n{text}");
}

fn a_builder_over_the_kernel_crates_table_warns_for_options_but_not_archs() {
    common::cuda();
    // `cargo ptx new`'s layout: archs in build.rs for the host's build, and in the kernel
    // crate's table for `cargo ptx build kernels`. Editing build.rs's, as its comment says to,
    // is no conflict; an option that changes the code built is.
    let p = project("host_over", KERNEL);
    write(p.path().join("host/build.rs"), "fn main() -> Result<(), ptx_build::Error> {\n    ptx_build::Builder::new().kernel_crate(\"../kernels\").arch(\"sm_90\").ftz(true).build()?;\n    Ok(())\n}\n");
    let manifest = p.path().join("kernels/Cargo.toml");
    let text = std::fs::read_to_string(&manifest).unwrap().replace("archs = [\"sm_80\"]", "archs = [\"sm_80\"]\nftz = false");
    write(&manifest, &text);
    let (ok, log) = cargo_build(p.path());
    assert!(ok, "{log}");
    assert!(!log.contains("overrides `archs`"), "{log}");
    assert!(log.contains("`ftz` of the Builder in") && log.contains("overrides `ftz` in [package.metadata.ptx] of"), "{log}");
}

fn a_struct_by_value_must_have_the_kernels_layout_on_the_host() {
    common::cuda();
    let kernel = "#![no_std]\n#![feature(abi_ptx)]\n#[repr(C)]\n#[derive(Clone, Copy)]\npub struct Affine { pub a: f32, pub b: f64 }\n#[no_mangle]\npub unsafe extern \"ptx-kernel\" fn affine(p: Affine, x: *mut f32) { *x = p.a * *x + p.b as f32; }\n#[panic_handler]\nfn p(_: &core::panic::PanicInfo) -> ! { loop {} }\n";
    let p = project("host_struct", kernel);
    let host = |attrs: &str| {
        format!("#[repr({attrs})]\n#[derive(Clone, Copy)]\npub struct Affine {{ pub a: f32, pub b: f64 }}\nunsafe impl ptx_runtime::cudarc::driver::DeviceRepr for Affine {{}}\npub mod kernels {{\n    ptx_runtime::include_kernels!();\n}}\n")
    };
    write(p.path().join("host/src/lib.rs"), &host("C"));
    let (ok, log) = cargo_build(p.path());
    assert!(ok, "the same #[repr(C)] type on both sides builds:\n{log}");
    // A type of the kernel crate itself: the build says where it is and how to share it, once.
    let warning = "warning: host_struct@0.1.0: `Affine` (parameter `p` of kernel `affine`) is defined in the kernel crate, which the host cannot depend on";
    assert_eq!(log.matches(warning).count(), 1, "{log}");
    assert!(log.contains(&format!("--> {}:5:12", p.path().canonicalize().unwrap().join("kernels/src/lib.rs").display())), "{log}");
    assert!(log.contains("fix: move `Affine` into a small `no_std` crate that both the kernel crate and the host depend on"), "{log}");

    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(3600);
    write_at(p.path().join("host/src/lib.rs"), &host("C, align(16)"), later);
    let (ok, log) = cargo_build(p.path());
    assert!(!ok, "another alignment on the host must not compile:\n{log}");
    assert!(
        log.contains("`Affine` (parameter `p` of kernel `affine`) has another size or alignment on the host than in the PTX (16 bytes, aligned to 8)"),
        "{log}"
    );

    // No twin on the host at all: the kernel is launched by name, not a rustc error in the
    // generated file; the file that had the twin is watched, so removing it reruns the script.
    let by_name = "pub mod kernels {\n    ptx_runtime::include_kernels!();\n}\n#[allow(dead_code)]\nfn launch(k: &kernels::Kernels, s: &ptx_runtime::cudarc::driver::CudaStream) -> bool {\n    k.launch_builder(s, \"affine\").is_some()\n}\n";
    write_at(p.path().join("host/src/lib.rs"), by_name, later + std::time::Duration::from_secs(60));
    let (ok, log) = cargo_build(p.path());
    assert!(ok, "a kernel whose type the host lacks is launched by name:\n{log}");
    assert!(log.contains("1 of 1 kernels of `host_struct_kernels` has no typed launch method"), "{log}");
    assert!(!log.contains("cannot find type"), "{log}");
}

fn rust_kernels_stamped_out_by_macro_rules_are_typed_and_launchable_by_name() {
    common::cuda();
    // candle's style, in Rust: one macro, several kernels. The source reader sees no `fn` for
    // them; the PTX has them, so they are read from the expanded crate: typed, and listed.
    let kernel = "#![no_std]\n#![feature(abi_ptx)]\nmacro_rules! unary {\n    ($name:ident, $op:expr) => {\n        #[no_mangle]\n        pub unsafe extern \"ptx-kernel\" fn $name(x: *mut f32) { *x = $op(*x); }\n    };\n}\nunary!(neg_f32, |v: f32| -v);\nunary!(twice_f32, |v: f32| v * 2.0);\n#[no_mangle]\npub unsafe extern \"ptx-kernel\" fn typed(x: *mut f32) { *x = 0.0; }\n#[panic_handler]\nfn p(_: &core::panic::PanicInfo) -> ! { loop {} }\n";
    let p = project("host_stamped", kernel);
    write(
        p.path().join("host/src/lib.rs"),
        "pub mod kernels {\n    ptx_runtime::include_kernels!();\n}\n#[allow(dead_code)]\nfn names() -> bool {\n    kernels::KERNEL_NAMES.contains(&\"neg_f32\") && kernels::KERNEL_NAMES.contains(&\"twice_f32\")\n}\n#[allow(dead_code)]\nfn launch(k: &kernels::Kernels, s: &ptx_runtime::cudarc::driver::CudaStream) -> bool {\n    k.launch_builder(s, \"neg_f32\").is_some()\n}\n",
    );
    let (ok, log) = cargo_build(p.path());
    assert!(ok, "{log}");
    assert!(!log.contains("no typed launch method") && !log.contains("stamped out by macros"), "every kernel is typed:\n{log}");
    let generated = std::fs::read_dir(Path::new(env!("CARGO_TARGET_TMPDIR")).join("host-target/debug/build"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("host_stamped-"))
        .filter_map(|e| std::fs::read_to_string(e.path().join("out/kernels.rs")).ok())
        .next()
        .expect("the generated module");
    assert!(
        generated.contains("\"neg_f32\"")
            && generated.contains("\"twice_f32\"")
            && generated.contains("pub unsafe fn typed(")
            && generated.contains("pub unsafe fn neg_f32(")
            && generated.contains("pub unsafe fn twice_f32("),
        "{generated}"
    );
    // Doc comments name the sources from the host package, not by this checkout's path.
    assert!(generated.contains("Launches `typed` (../kernels/src/lib.rs:"), "{generated}");
    let root = p.path().display().to_string();
    assert!(generated.lines().filter(|l| l.contains("Launches")).all(|l| !l.contains(&root)), "{generated}");
}

fn cuda_vendor_types_get_ptx_runtime_host_types() {
    common::cuda();
    let uses = "#[allow(dead_code)]\nunsafe fn call(k: &kernels::Kernels, s: &ptx_runtime::cudarc::driver::CudaStream, cfg: ptx_runtime::cudarc::driver::LaunchConfig,\n    h: &ptx_runtime::cudarc::driver::CudaSlice<ptx_runtime::cuda_types::Half2>, o: &mut ptx_runtime::cudarc::driver::CudaSlice<f32>) {\n    use ptx_runtime::cuda_types::{Fp8E4M3, Half2};\n    unsafe { k.fp8_scale(s, cfg, Fp8E4M3(0x38), Half2::default(), h, o).unwrap() };\n}\n";
    let p = cuda_host(
        "host_vendor",
        &[(
            "cuda/fp8.cu",
            "#include <cuda_fp8.h>\n#include <cuda_fp16.h>\nextern \"C\" __global__ void fp8_scale(__nv_fp8_e4m3 s, __half2 bias, const __half2 *in, float *out) {\n    out[0] = float(s) * (__low2float(in[0]) + __low2float(bias));\n}\n",
        )],
        uses,
    );
    let (ok, log) = cargo_build(p.path());
    assert!(ok, "fp8 and half2 parameters have host types and pass the layout checks:\n{log}");
    assert!(!log.contains("no typed launch method"), "{log}");
}

/// A kernel crate using ptx-device (`#[kernel]`), beside the host crate of [`project`].
fn device_project(host: &str, kernel_src: &str) -> tempfile::TempDir {
    let p = project(host, kernel_src);
    write(
        p.path().join("kernels/Cargo.toml"),
        &format!(
            "[package]\nname = \"{host}_kernels\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[dependencies]\nptx-device = {{ path = {:?} }}\n[package.metadata.ptx]\narchs = [\"sm_80\"]\n[workspace]\n",
            repo().join("ptx-device")
        ),
    );
    p
}

/// The part of a failed build's log after cargo's `--- stderr` line, indentation and the
/// temp folder's path taken out, for comparing with tests/snapshots/NAME (`UPDATE_SNAPSHOTS=1`
/// rewrites it).
fn assert_stderr_snapshot(name: &str, log: &str, root: &Path) {
    let section = log.split("--- stderr\n").nth(1).unwrap_or_else(|| panic!("no stderr section:\n{log}"));
    // Up to the script's `Error:` line; cargo's own lines after it depend on its other jobs.
    let lines: Vec<&str> = section.lines().collect();
    let end = lines.iter().position(|l| l.starts_with("  Error: ")).map_or(lines.len(), |i| i + 1);
    let text: String =
        lines[..end].iter().map(|l| l.strip_prefix("  ").unwrap_or(l).replace(&root.display().to_string(), "[ROOT]") + "\n").collect();
    let snapshot = repo().join("tests/snapshots").join(name);
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(&snapshot, &text).unwrap();
    }
    let expected = std::fs::read_to_string(&snapshot).unwrap_or_default();
    assert!(text == expected, "{name} changed; rerun with UPDATE_SNAPSHOTS=1 if that is intended:\n{text}");
}

fn kernel_diagnostics_through_cargo_build_name_the_file_show_the_line_and_come_once() {
    common::cuda();
    // A Rust error, then (fixed, a warning left) an nvcc error for two archs, then success.
    let broken = "#![no_std]\n#![feature(abi_ptx)]\n#[no_mangle]\npub unsafe extern \"ptx-kernel\" fn scale(a: f32, x: *mut f32) {\n    let unused = 3;\n    *x = a * undefined_thing;\n}\n#[panic_handler]\nfn p(_: &core::panic::PanicInfo) -> ! { loop {} }\n";
    let p = cuda_host("host_diag", &[], "");
    let root = p.path().canonicalize().unwrap();
    write(p.path().join("kernels/src/lib.rs"), broken);
    write(
        p.path().join("host/build.rs"),
        "fn main() -> Result<(), ptx_build::Error> {\n    ptx_build::Builder::new().kernel_crate(\"../kernels\").cuda(\"cuda/*.cu\").arch(\"sm_80,sm_90\").build()?;\n    Ok(())\n}\n",
    );
    write(p.path().join("kernels/Cargo.toml"), "[package]\nname = \"host_diag_kernels\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[package.metadata.ptx]\narchs = [\"sm_80\", \"sm_90\"]\n[workspace]\n");
    write(p.path().join("host/cuda/k.cu"), "extern \"C\" __global__ void fill(float *x) { x[0] = 1.0f; }\n");
    let (ok, log) = cargo_build(p.path());
    assert!(!ok, "{log}");
    // The path names the kernel crate's file from anywhere (not `src/lib.rs`, the host's own).
    assert!(log.contains(&format!(" --> {}:6:14", root.join("kernels/src/lib.rs").display())), "{log}");
    assert_eq!(log.matches("cannot find value `undefined_thing`").count(), 1, "once:\n{log}");
    assert!(!log.contains("cargo:rerun-if") && !log.contains("--- stdout"), "no directives in a failed build's output:\n{log}");
    assert_stderr_snapshot("build-script-rust-error.txt", &log, &root);

    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(3600);
    write_at(p.path().join("kernels/src/lib.rs"), &broken.replace("undefined_thing", "2.0"), later);
    write_at(p.path().join("host/cuda/k.cu"), "extern \"C\" __global__ void fill(float *x) {\n    x[0] = undefined_cu + 1.0f;\n}\n", later);
    let (ok, log) = cargo_build(p.path());
    assert!(!ok, "{log}");
    assert!(log.contains(&format!(" --> {}:2:12", root.join("host/cuda/k.cu").display())), "{log}");
    assert_eq!(log.matches("identifier \"undefined_cu\" is undefined").count(), 1, "one error for both archs:\n{log}");
    assert!(log.contains("for sm_80, sm_90"), "{log}");
    assert_eq!(log.matches("unused variable: `unused`").count(), 1, "the kernel warning beside the error, once:\n{log}");
    assert!(!log.contains("cargo:"), "{log}");
    assert_stderr_snapshot("build-script-nvcc-error.txt", &log, &root);

    // Warnings come when the kernel crate compiles (a fresh one is not recompiled): edit it too.
    let later = later + std::time::Duration::from_secs(60);
    write_at(p.path().join("host/cuda/k.cu"), "extern \"C\" __global__ void fill(float *x) { x[0] = 1.0f; }\n", later);
    write_at(p.path().join("kernels/src/lib.rs"), &broken.replace("undefined_thing", "3.0"), later);
    let (ok, log) = cargo_build(p.path());
    assert!(ok, "{log}");
    assert_eq!(
        log.matches("warning: host_diag@0.1.0: unused variable: `unused`").count(),
        1,
        "shown once, as cargo shows warnings:\n{log}"
    );
    assert!(log.contains(&format!("warning: host_diag@0.1.0:  --> {}:5:9", root.join("kernels/src/lib.rs").display())), "{log}");
    assert!(!log.contains("@0.1.0: warning:"), "no doubled prefix:\n{log}");
}

/// `project` plus a crate `shared/` that kernels and host both depend on, holding `Affine`
/// (`derive` is the struct's attributes).
fn shared_struct_project(host: &str, derive: &str) -> tempfile::TempDir {
    let kernel = format!("#![no_std]\n#![feature(abi_ptx)]\nuse {host}_shared::Affine;\n#[no_mangle]\npub unsafe extern \"ptx-kernel\" fn affine(p: Affine, x: *mut f32) {{ *x = p.scale * *x + p.shift; }}\n#[panic_handler]\nfn p(_: &core::panic::PanicInfo) -> ! {{ loop {{}} }}\n");
    let p = project(host, &kernel);
    let s = p.path().join("shared");
    std::fs::create_dir_all(s.join("src")).unwrap();
    write(
        s.join("Cargo.toml"),
        &format!(
            "[package]\nname = \"{host}_shared\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[dependencies]\nptx-device-macros = {{ path = {:?} }}\n[target.'cfg(not(target_arch = \"nvptx64\"))'.dependencies]\nptx-runtime = {{ path = {:?} }}\n",
            repo().join("ptx-device-macros"),
            repo().join("ptx-runtime")
        ),
    );
    write(s.join("src/lib.rs"), &format!("#![no_std]\n{derive}\npub struct Affine {{\n    pub scale: f32,\n    pub shift: f32,\n}}\n"));
    for side in ["kernels", "host"] {
        let manifest = p.path().join(side).join("Cargo.toml");
        let text = std::fs::read_to_string(&manifest).unwrap();
        let dep = format!("{host}_shared = {{ path = \"../shared\" }}\n");
        let text = match text.find("[dependencies]\n") {
            Some(i) => format!("{}{dep}{}", &text[..i + 15], &text[i + 15..]),
            None => text.replacen("[package.metadata.ptx]", &format!("[dependencies]\n{dep}[package.metadata.ptx]"), 1),
        };
        write(&manifest, &text);
    }
    write(
        p.path().join("host/src/lib.rs"),
        &format!("pub mod kernels {{\n    ptx_runtime::include_kernels!();\n}}\n#[allow(dead_code)]\nunsafe fn call(k: &kernels::Kernels, s: &ptx_runtime::cudarc::driver::CudaStream, cfg: ptx_runtime::cudarc::driver::LaunchConfig, x: &mut ptx_runtime::cudarc::driver::CudaSlice<f32>) {{\n    unsafe {{ k.affine(s, cfg, {host}_shared::Affine {{ scale: 2.0, shift: 1.0 }}, x).unwrap() }};\n}}\n"),
    );
    p
}

fn a_struct_from_a_crate_shared_with_the_kernels_needs_no_host_twin() {
    common::cuda();
    let p = shared_struct_project("host_shared", "#[derive(Clone, Copy, ptx_device_macros::DeviceRepr)]\n#[repr(C)]");
    let (ok, log) = cargo_build(p.path());
    assert!(ok, "the host names `Affine` through the shared crate, which implements DeviceRepr:\n{log}");
    assert!(!log.contains("is defined in the kernel crate"), "{log}");
}

fn a_shared_struct_without_repr_c_gets_the_derives_error() {
    common::cuda();
    let p = shared_struct_project("host_norepr", "#[derive(Clone, Copy, ptx_device_macros::DeviceRepr)]");
    let (ok, log) = cargo_build(p.path());
    assert!(!ok, "{log}");
    assert!(
        log.contains("#[derive(DeviceRepr)]: `Affine` needs `#[repr(C)]`") && log.contains("add `#[repr(C)]` above `struct Affine`"),
        "{log}"
    );
    assert!(log.contains("shared/src/lib.rs:3:12"), "at the struct's name:\n{log}");
}

fn an_engine_warning_is_shown_once_without_a_doubled_prefix() {
    // Without ptxas the build makes PTX only and says so: once, as cargo shows a build
    // script's warnings, not `warning: pkg@ver: warning: ...`.
    let p = project("host_noptxas", KERNEL);
    let empty = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO"));
    cmd.args(["build", "-v"])
        .current_dir(p.path().join("host"))
        .env("CARGO_TARGET_DIR", Path::new(env!("CARGO_TARGET_TMPDIR")).join("host-target"))
        .env_remove("CARGO_PTX_ARCH");
    common::hide_cuda(&mut cmd, empty.path());
    let out = cmd.output().unwrap();
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{log}");
    assert_eq!(log.matches("warning: host_noptxas@0.1.0: ptxas not found: built PTX only").count(), 1, "{log}");
    assert!(log.contains("warning: host_noptxas@0.1.0:   = run `cargo ptx setup`"), "the fix, on its own line:\n{log}");
    assert!(!log.contains("@0.1.0: warning:"), "{log}");
}

fn a_shared_struct_with_a_field_that_is_not_copy_is_refused_at_the_field() {
    common::cuda();
    // `Affine` is not `Copy` itself here, so only the derive's check stands between the host
    // and copying a non-`Copy` value's bytes to the GPU.
    let p = shared_struct_project("host_notcopy", "pub struct Tag(pub u8);\n#[derive(ptx_device_macros::DeviceRepr)]\n#[repr(C)]");
    let s = p.path().join("shared/src/lib.rs");
    let text = std::fs::read_to_string(&s).unwrap().replace("    pub shift: f32,\n", "    pub shift: f32,\n    pub tag: Tag,\n");
    write(&s, &text);
    let (ok, log) = cargo_build(p.path());
    assert!(!ok, "{log}");
    assert!(log.contains("the trait bound `Tag: Copy` is not satisfied") && log.contains("shared/src/lib.rs:8:14"), "{log}");
}

/// The generated module of host package `host` (in the shared test target dir).
pub(crate) fn generated_module(host: &str) -> String {
    std::fs::read_dir(Path::new(env!("CARGO_TARGET_TMPDIR")).join("host-target/debug/build"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&format!("{host}-")))
        .filter_map(|e| std::fs::read_to_string(e.path().join("out/kernels.rs")).ok())
        .next()
        .expect("the generated module")
}

const GENERIC_AND_STAMPED: &str = "#![no_std]\nuse ptx_device::{index::global_index, kernel};\n\n/// `y[i] += x[i]`.\n#[kernel(instances(f32, f64))]\npub unsafe fn add<T: Copy + core::ops::Add<Output = T>>(n: u32, x: *const T, y: *mut T) {\n    let i = global_index();\n    if i < n as usize {\n        *y.add(i) = *y.add(i) + *x.add(i);\n    }\n}\n\nmacro_rules! unary {\n    ($name:ident, $t:ty) => {\n        #[kernel]\n        pub unsafe fn $name(n: u32, x: *const $t, y: *mut $t) {\n            let i = global_index();\n            if i < n as usize {\n                *y.add(i) = -*x.add(i);\n            }\n        }\n    };\n}\nunary!(neg_f32, f32);\nunary!(neg_f64, f64);\n";

fn generic_and_macro_stamped_rust_kernels_get_typed_methods() {
    common::cuda();
    let p = device_project("host_generic", GENERIC_AND_STAMPED);
    // Compiles only if `add` is generic over exactly its instances and the stamped kernels are
    // typed (a `CudaSlice<f64>` to `neg_f32` would not compile).
    let host = "pub mod kernels {\n    ptx_runtime::include_kernels!();\n}\nuse ptx_runtime::cudarc::driver::{CudaSlice, CudaStream, LaunchConfig};\n#[allow(dead_code)]\nunsafe fn call(k: &kernels::Kernels, s: &CudaStream, cfg: LaunchConfig, x: &CudaSlice<f32>, y: &mut CudaSlice<f32>, xd: &CudaSlice<f64>, yd: &mut CudaSlice<f64>) {\n    unsafe {\n        k.add::<f32>(s, cfg, 4, x, y).unwrap();\n        k.add::<f64>(s, cfg, 4, xd, yd).unwrap();\n        k.neg_f32(s, cfg, 4, x, y).unwrap();\n        k.neg_f64(s, cfg, 4, xd, yd).unwrap();\n    }\n}\n";
    write(p.path().join("host/src/lib.rs"), host);
    let (ok, log) = cargo_build(p.path());
    assert!(ok, "{log}");
    assert!(!log.contains("no typed launch method"), "every kernel is typed:\n{log}");
    let generated = generated_module("host_generic");
    assert!(generated.contains("pub unsafe fn add<") && generated.contains("pub unsafe fn neg_f64("), "{generated}");
    // A type the kernel was not instantiated for does not compile.
    write_at(
        p.path().join("host/src/lib.rs"),
        &host.replace("k.add::<f64>(s, cfg, 4, xd, yd)", "k.add::<i32>(s, cfg, 4, xd, yd)"),
        std::time::SystemTime::now(),
    );
    let (ok, log) = cargo_build(p.path());
    assert!(!ok && log.contains("the trait bound `i32: AddTypes` is not satisfied"), "{log}");
}

fn macro_stamped_and_template_cuda_kernels_get_typed_methods() {
    common::cuda();
    // candle's style: unary ops stamped out by a macro from a header, for three types; a
    // template with explicit instantiations; C++ overloads. The calls only compile with the
    // exact types.
    let uses = r#"
#[allow(dead_code)]
unsafe fn call(k: &kernels::Kernels, s: &ptx_runtime::cudarc::driver::CudaStream, cfg: ptx_runtime::cudarc::driver::LaunchConfig,
    x: &ptx_runtime::cudarc::driver::CudaSlice<f32>, y: &mut ptx_runtime::cudarc::driver::CudaSlice<f32>,
    xd: &ptx_runtime::cudarc::driver::CudaSlice<f64>, yd: &mut ptx_runtime::cudarc::driver::CudaSlice<f64>,
    xh: &ptx_runtime::cudarc::driver::CudaSlice<ptx_runtime::half::f16>, yh: &mut ptx_runtime::cudarc::driver::CudaSlice<ptx_runtime::half::f16>) {
    unsafe {
        k.uneg_f32(s, cfg, 4usize, x, y).unwrap();
        k.uneg_f64(s, cfg, 4usize, xd, yd).unwrap();
        k.usqr_f16(s, cfg, 4usize, xh, yh).unwrap();
        k.axpb::<f32>(s, cfg, y, x, 2.0f32, 1.0f32, 4i32).unwrap();
        k.axpb::<f64>(s, cfg, yd, xd, 2.0f64, 1.0f64, 4i32).unwrap();
        k.axpb::<ptx_runtime::half::f16>(s, cfg, yh, xh, ptx_runtime::half::f16::ONE, ptx_runtime::half::f16::ZERO, 4i32).unwrap();
        k.scale_f32_i32(s, cfg, y, 4i32).unwrap();
        k.scale_f64_i32(s, cfg, yd, 4i32).unwrap();
        k.uneg_f32(s, ptx_runtime::Grid::elements(4), 4usize, x, y).unwrap();
        let _ = k.config_of("uneg_f32", ptx_runtime::Grid::resident().shared(64));
    }
}
"#;
    let p = cuda_host(
        "host_stamped_cuda",
        &[
            (
                "cuda/unary.cuh",
                "#include <cuda_fp16.h>\n#define UNARY_OP(TYPENAME, FN_NAME, FUNC) \\\nextern \"C\" __global__ void FN_NAME(const size_t numel, const TYPENAME *inp, TYPENAME *out) { \\\n  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < numel; i += blockDim.x * gridDim.x) { \\\n    TYPENAME x = inp[i]; out[i] = FUNC; } }\n",
            ),
            (
                "cuda/ops.cu",
                "#include \"unary.cuh\"\n\nUNARY_OP(float, uneg_f32, -x)\nUNARY_OP(double, uneg_f64, -x)\nUNARY_OP(__half, usqr_f16, x * x)\n\ntemplate <typename T>\n__global__ void axpb(T *y, const T *x, T a, T b, int n) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) y[i] = a * x[i] + b;\n}\ntemplate __global__ void axpb<float>(float *, const float *, float, float, int);\ntemplate __global__ void axpb<double>(double *, const double *, double, double, int);\ntemplate __global__ void axpb<__half>(__half *, const __half *, __half, __half, int);\n\n__global__ void scale(float *x, int n) { x[0] *= n; }\n__global__ void scale(double *x, int n) { x[0] *= n; }\n",
            ),
        ],
        uses,
    );
    let (ok, log) = cargo_build(p.path());
    assert!(ok, "{log}");
    assert!(!log.contains("typed launch method"), "every kernel is typed:\n{log}");
    let generated = generated_module("host_stamped_cuda");
    // The macro's kernels are documented at the line of the macro's use.
    assert!(generated.contains("ops.cu:3)") && generated.contains("ops.cu:5)"), "{generated}");
    assert!(generated.contains("impl AxpbTypes for f64"), "{generated}");

    // (examples/cuda-kernels/tests/ui: a type the template was not instantiated for does not compile.)
}

fn builder_cuda_files_take_the_host_crates_metadata_and_a_missing_header_names_the_builder() {
    common::cuda();
    let uses = "#[allow(dead_code)]\nunsafe fn call(k: &kernels::Kernels, s: &ptx_runtime::cudarc::driver::CudaStream, cfg: ptx_runtime::cudarc::driver::LaunchConfig, x: &mut ptx_runtime::cudarc::driver::CudaSlice<f32>) {\n    unsafe { k.tiled(s, cfg, x).unwrap() };\n}\n";
    let p = cuda_host(
        "host_cuda_meta",
        &[
            ("cuda/k.cu", "#include \"tile.cuh\"\nextern \"C\" __global__ void tiled(float *x) { x[0] *= TILE * FACTOR; }\n"),
            ("inc/tile.cuh", "#define TILE 16\n"),
        ],
        uses,
    );
    let manifest = p.path().join("host/Cargo.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    // The host's own metadata applies to its `.cuda(..)` files as to a kernel crate's.
    // Its `archs` differ from the Builder's `.arch("sm_80")`: the Builder wins, and says so.
    write(
        &manifest,
        &format!("{text}[package.metadata.ptx]\ncuda-include = [\"inc\"]\ncuda-defines = {{ FACTOR = 2 }}\narchs = [\"sm_90\"]\n"),
    );
    let (ok, log) = cargo_build(p.path());
    assert!(ok, "cuda-include and cuda-defines of the host crate reach nvcc:\n{log}");
    assert!(log.contains("`archs` of the Builder in") && log.contains("overrides `archs` in [package.metadata.ptx] of"), "{log}");

    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(3600);
    write_at(&manifest, &format!("{text}[package.metadata.ptx]\ncuda-defines = {{ FACTOR = 2 }}\n"), later);
    let (ok, log) = cargo_build(p.path());
    assert!(!ok && log.contains("tile.cuh: No such file or directory"), "{log}");
    assert!(
        log.contains("`tile.cuh` is in inc/: add the header's folder with `.cuda_include(\"inc\")` on the Builder in")
            && log.contains("build.rs"),
        "the help names the build script:\n{log}"
    );
}

/// A host crate that is a member of a workspace: its `.cuda(..)` files take the archs of the
/// root's `[workspace.metadata.ptx]`, the help for none names that manifest, and an edit of it
/// reruns the build script (cargo watches no other package's manifest by itself).
fn builder_cuda_files_of_a_workspace_member_take_and_watch_the_workspace_options() {
    common::nvcc();
    let neg =
        "extern \"C\" __global__ void neg(float *x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = -x[i]; }\n";
    let p = cuda_host("host_member", &[("cuda/neg.cu", neg)], "");
    let (host, root) = (p.path().join("host/Cargo.toml"), p.path().join("Cargo.toml"));
    write(&host, &std::fs::read_to_string(&host).unwrap().replace("[workspace]\n", ""));
    write(
        p.path().join("host/build.rs"),
        "fn main() -> Result<(), ptx_build::Error> {\n    ptx_build::Builder::new().cuda(\"cuda/*.cu\").build()?;\n    Ok(())\n}\n",
    );
    let members = "[workspace]\nmembers = [\"host\"]\nexclude = [\"kernels\"]\nresolver = \"2\"\n";
    write(&root, members);
    if ptx_build::internals::tools::gpu::native().is_err() {
        let (ok, log) = cargo_build(p.path());
        assert!(!ok && log.contains("no GPU arch chosen for host_member"), "{log}");
        assert!(log.contains(&format!("add `archs = [\"sm_80\"]` to [workspace.metadata.ptx] of {}", root.display())), "{log}");
    }
    let archs = |list: &str| format!("{members}[workspace.metadata.ptx]\narchs = [{list}]\n");
    // The failed build script reruns whatever the date; the edit after a good build is dated
    // now: newer than that build, older than the next (a later date would look changed to every
    // build until then).
    write(&root, &archs("\"compute_80\""));
    let (ok, log) = cargo_build(p.path());
    assert!(ok && build_script_ran(&log), "{log}");
    assert!(generated_module("host_member").contains("COMPUTE_80"), "{}", generated_module("host_member"));
    let (ok, log) = cargo_build(p.path());
    assert!(ok && !build_script_ran(&log), "a no-op build:\n{log}");
    write_at(&root, &archs("\"compute_80\", \"compute_90\""), std::time::SystemTime::now());
    let (ok, log) = cargo_build(p.path());
    assert!(ok && build_script_ran(&log), "the workspace's options changed:\n{log}");
    assert!(generated_module("host_member").contains("COMPUTE_90"), "{}", generated_module("host_member"));
}

fn a_header_kernel_in_two_cu_modules_gets_one_method_per_module() {
    common::cuda();
    // llm.c's style: the same (mangled) helper kernel in two files, each its own module.
    let helper = "#include \"permute.cuh\"\n__global__ void fill(float *x, int n) { if (threadIdx.x < n) x[threadIdx.x] = 1.0f; }\n";
    let uses = "#[allow(dead_code)]\nunsafe fn call(k: &kernels::Kernels, s: &ptx_runtime::cudarc::driver::CudaStream, cfg: ptx_runtime::cudarc::driver::LaunchConfig, x: &mut ptx_runtime::cudarc::driver::CudaSlice<f32>, y: &ptx_runtime::cudarc::driver::CudaSlice<f32>) {\n    unsafe { k.attention_permute(s, cfg, x, y, 4).unwrap() };\n    unsafe { k.layernorm_permute(s, cfg, x, y, 4).unwrap() };\n    unsafe { k.attention_fill(s, cfg, x, 4).unwrap() };\n    unsafe { k.attention_fill_with(s, cfg, x, 2.0, 4).unwrap() };\n    unsafe { k.layernorm_fill_with(s, cfg, x, 2.0, 4).unwrap() };\n}\n";
    let p = cuda_host(
        "host_shared_helper",
        &[
            // ... and dfdx's: an `extern "C"` kernel in a header most of its files include.
            ("cuda/permute.cuh", "#include <cstdint>\n__global__ void permute(float *out, const float *in, int n) { if (threadIdx.x < n) out[threadIdx.x] = in[n - 1 - threadIdx.x]; }\nextern \"C\" __global__ void fill_with(float *x, float v, uintptr_t n) { if (threadIdx.x < n) x[threadIdx.x] = v; }\n"),
            ("cuda/attention.cu", helper),
            ("cuda/layernorm.cu", helper),
        ],
        uses,
    );
    let (ok, log) = cargo_build(p.path());
    assert!(ok, "{log}");
    // Each module loads the entry by its PTX name; only the methods carry the module's.
    let generated = generated_module("host_shared_helper");
    assert_eq!(generated.matches("\"fill_with\",").count(), 6, "KERNEL_NAMES, each module's KERNELS and FUNCTIONS:\n{generated}");
    assert!(!generated.contains("\"attention_fill_with\""), "{generated}");
}

fn nvcc_warnings_come_once_per_message_and_a_missing_header_once_with_its_folder() {
    common::cuda();
    // dfdx's style: a macro in a header stamps out kernels that leave a variable unused, so
    // nvcc warns at every use of the macro, in every file.
    let op = "#define UNARY(NAME) extern \"C\" __global__ void NAME(float *x, int n) { float unused = 0.0f; if (threadIdx.x < n) x[threadIdx.x] = 1.0f; }\n";
    let p = cuda_host(
        "host_nvcc_warn",
        &[
            ("cuda/utils/op.cuh", op),
            ("cuda/relu.cu", "#include \"utils/op.cuh\"\nUNARY(relu_a)\nUNARY(relu_b)\n"),
            ("cuda/tanh.cu", "#include \"utils/op.cuh\"\nUNARY(tanh_a)\n"),
        ],
        "",
    );
    let (ok, log) = cargo_build(p.path());
    assert!(ok, "{log}");
    let warning = "variable \"unused\" was declared but never referenced";
    assert_eq!(log.matches(warning).count(), 1, "one warning for its three places:\n{log}");
    assert!(log.contains("cuda/relu.cu:2"), "{log}");
    assert!(log.contains("the same at cuda/relu.cu:3, cuda/tanh.cu:2"), "{log}");
    // Said as a build script adds an nvcc flag.
    assert!(log.contains("`.nvcc_flag(\"-diag-suppress=177\")` in build.rs silences this warning"), "{log}");
    // A header edit reruns the build script: the unchanged files' steps are reused, their
    // warnings are not lost.
    let h = p.path().join("host");
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(3600);
    write_at(h.join("cuda/tanh.cu"), "#include \"utils/op.cuh\"\nUNARY(tanh_a)\n\n", later);
    let (ok, log) = cargo_build(p.path());
    assert!(ok && build_script_ran(&log), "{log}");
    assert_eq!(log.matches(warning).count(), 1, "{log}");
    assert!(log.contains("the same at cuda/relu.cu:3, cuda/tanh.cu:2"), "{log}");
    // Where the workspace's table sets the nvcc flags, the note adds to that list: a Builder's
    // `.nvcc_flag(..)` would replace it.
    let manifest = std::fs::read_to_string(h.join("Cargo.toml")).unwrap();
    write(h.join("Cargo.toml"), &format!("{manifest}[workspace.metadata.ptx]\nnvcc-flags = [\"-DTABLE_FLAG\"]\n"));
    let (ok, log) = cargo_build(p.path());
    assert!(ok && build_script_ran(&log), "{log}");
    let note = format!("`-diag-suppress=177` added to `nvcc-flags` in [workspace.metadata.ptx] of {}", h.join("Cargo.toml").display());
    assert!(log.contains(&note), "{log}");

    // Without the header's folder: one error for both files, naming the folder that has it.
    for f in ["relu", "tanh"] {
        write_at(h.join(format!("cuda/{f}.cu")), &format!("#include \"op.cuh\"\nUNARY({f})\n"), later + std::time::Duration::from_secs(60));
    }
    let (ok, log) = cargo_build(p.path());
    assert!(!ok, "{log}");
    assert_eq!(log.matches("op.cuh: No such file or directory").count(), 1, "{log}");
    assert!(log.contains("`op.cuh` is in cuda/utils/: add the header's folder with `.cuda_include(\"cuda/utils\")`"), "{log}");
    assert!(log.contains("the same at cuda/"), "{log}");
    assert!(log.contains("and 1 other file for sm_80 (1 error above)"), "what is above: one error, with its other place:\n{log}");
}

/// A Builder's .cu files share a header with a store lacking its "memory" clobber (DeepSpeed's
/// and ggml-cuda's asm lives in headers): `cargo build` warns once, at the header's line with
/// the line shown; a clean header beside it says nothing, and so does the same store in a
/// library's header (another repository, behind `.cuda_include`, as CUTLASS's are).
fn a_builders_header_asm_is_checked_once_at_its_line() {
    common::cuda();
    let asm = |clobber: &str| {
        format!("__device__ __forceinline__ void st(float *p) {{\n  asm volatile(\"st.global.f32 [%0], 1.0;\" :: \"l\"(p){clobber});\n}}\n")
    };
    let p = cuda_host(
        "host_header_asm",
        &[
            ("cuda/include/store.h", &format!("#pragma once\n{}", asm(""))),
            ("cuda/include/clean.h", &format!("#pragma once\n#define st st_clean\n{}#undef st\n", asm(" : \"memory\""))),
            (
                "cuda/a.cu",
                "#include \"include/clean.h\"\n#include \"include/store.h\"\nextern \"C\" __global__ void a(float *p) { st(p); }\n",
            ),
            (
                "cuda/b.cu",
                "#include \"include/store.h\"\n#include <lib/store.h>\nextern \"C\" __global__ void b(float *p) { st(p); lib::st(p); }\n",
            ),
        ],
        "",
    );
    let lib = p.path().join("cutlass");
    std::fs::create_dir_all(lib.join("include/lib")).unwrap();
    write(lib.join(".git"), "gitdir: ../.git/modules/cutlass\n");
    write(lib.join("include/lib/store.h"), &format!("#pragma once\nnamespace lib {{\n{}}}\n", asm("")));
    write(
        p.path().join("host/build.rs"),
        "fn main() -> Result<(), ptx_build::Error> {\n    ptx_build::Builder::new().cuda(\"cuda/*.cu\").cuda_include(\"../cutlass/include\").arch(\"sm_80\").build()?;\n    Ok(())\n}\n",
    );
    let (ok, log) = cargo_build(p.path());
    assert!(ok, "{log}");
    assert_eq!(log.matches("without a \"memory\" clobber").count(), 1, "{log}");
    assert!(!log.contains("lib/store.h"), "a library's header is not the user's to fix:\n{log}");
    let at = format!(" --> {}:3:17", p.path().join("host/cuda/include/store.h").display());
    assert!(log.contains(&at) && log.contains("3 |   asm volatile(\"st.global.f32"), "{log}");
    assert!(!log.contains("clean.h") && !log.contains("the same warning"), "{log}");
}

pub fn tests() -> Vec<crate::harness::Test> {
    crate::tests![
        the_build_script_reruns_exactly_when_a_kernel_input_changes,
        a_build_script_error_is_readable,
        cuda_files_of_the_host_get_typed_methods_and_header_edits_rerun,
        kernels_that_cannot_be_typed_are_embedded_with_a_warning_and_an_untyped_launcher,
        a_struct_by_value_must_have_the_kernels_layout_on_the_host,
        a_builder_over_the_kernel_crates_table_warns_for_options_but_not_archs,
        rust_kernels_stamped_out_by_macro_rules_are_typed_and_launchable_by_name,
        cuda_vendor_types_get_ptx_runtime_host_types,
        kernel_diagnostics_through_cargo_build_name_the_file_show_the_line_and_come_once,
        a_struct_from_a_crate_shared_with_the_kernels_needs_no_host_twin,
        a_shared_struct_without_repr_c_gets_the_derives_error,
        an_engine_warning_is_shown_once_without_a_doubled_prefix,
        a_shared_struct_with_a_field_that_is_not_copy_is_refused_at_the_field,
        generic_and_macro_stamped_rust_kernels_get_typed_methods,
        macro_stamped_and_template_cuda_kernels_get_typed_methods,
        builder_cuda_files_take_the_host_crates_metadata_and_a_missing_header_names_the_builder,
        a_header_kernel_in_two_cu_modules_gets_one_method_per_module,
        builder_cuda_files_of_a_workspace_member_take_and_watch_the_workspace_options,
        nvcc_warnings_come_once_per_message_and_a_missing_header_once_with_its_folder,
        a_builders_header_asm_is_checked_once_at_its_line,
    ]
}
