//! CUDA C++ that launches its own kernels, built into a static library by a host crate's
//! build.rs (`Builder::cuda_static_lib`) and linked with the CUDA runtime; and per-file archs
//! (`cuda-file-archs`) on the PTX path. Real nvcc, ar and the system linker; no GPU needed.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{self, copy_dir, KernelCrate};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// Writes a file dated an hour back (see build_script.rs: a stepped clock must not make it look
/// newer than the build that follows).
fn write(path: impl AsRef<Path>, text: &str) {
    write_at(path, text, std::time::SystemTime::now() - std::time::Duration::from_secs(3600));
}

fn write_at(path: impl AsRef<Path>, text: &str, time: std::time::SystemTime) {
    std::fs::create_dir_all(path.as_ref().parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    std::fs::File::options().write(true).open(&path).unwrap().set_modified(time).unwrap();
}

/// examples/cuda-static-lib's CUDA files and Rust sources (candle's style: host launchers with
/// `<<<>>>`, a template kernel for f32 and f16, wmma under `__CUDA_ARCH__ >= 700`, a `-D` switch
/// and an arch switch, a `const void *` quantized mat-vec) in a host crate of their own, with
/// `build_rs` as its build script.
fn host(name: &str, build_rs: &str) -> tempfile::TempDir {
    let root = tempfile::Builder::new().prefix("cargo-ptx static ").tempdir().unwrap();
    let h = root.path().join("host");
    let example = repo().join("examples/cuda-static-lib");
    copy_dir(&example.join("cuda"), &h.join("cuda"));
    copy_dir(&example.join("src"), &h.join("src"));
    let lib = std::fs::read_to_string(h.join("src/lib.rs")).unwrap();
    write(h.join("src/lib.rs"), &lib);
    let main = std::fs::read_to_string(h.join("src/main.rs")).unwrap().replace("cuda_static_lib::", &format!("{name}::"));
    write(h.join("src/main.rs"), &main);
    write(
        h.join("Cargo.toml"),
        &format!(
            "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[build-dependencies]\nptx-build = {{ path = {:?} }}\n[workspace]\n",
            repo().join("ptx-build")
        ),
    );
    write(h.join("build.rs"), build_rs);
    root
}

fn target() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("host-target")
}

fn cargo(dir: &Path, cmd: &str) -> (bool, String, String) {
    cargo_with(dir, cmd, |_| {})
}

fn cargo_with(dir: &Path, cmd: &str, env: impl FnOnce(&mut Command)) -> (bool, String, String) {
    let mut command = Command::new(env!("CARGO"));
    env(&mut command);
    let out = command
        .args([cmd, "-v"])
        .current_dir(dir.join("host"))
        .env("CARGO_TARGET_DIR", target())
        .env_remove("CARGO_PTX_ARCH")
        .env_remove("CARGO_PTX_CUDA_FILE_ARCHS")
        .output()
        .unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn build_script_ran(log: &str) -> bool {
    log.lines().any(|l| l.contains("Running") && l.contains("build-script-build"))
}

/// Two archs (not the example's three) to spare this machine's cores; the wmma file sm_80 only.
const BUILD_RS: &str = r#"fn main() -> Result<(), ptx_build::Error> {
    ptx_build::Builder::new()
        .cuda_static_lib("moe", "cuda/moe/*.cu")
        .cuda_static_lib("moe", "cuda/mmvq.cu")
        .arch("sm_75")
        .arch("sm_80")
        .cuda_file_archs("moe_wmma.cu", "sm_80")
        .cuda_file_archs("cuda/nothing/*.cu", "sm_90")
        .cuda_define("MOE_BLOCK", Some("256"))
        .build()?;
    Ok(())
}
"#;

/// The `out` folder of the newest build of `name`'s build script that wrote `lib<lib>.a`.
fn out_dir(name: &str, lib: &str) -> PathBuf {
    let build = target().join("debug/build");
    let mut outs: Vec<PathBuf> = std::fs::read_dir(&build)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name().unwrap().to_string_lossy().starts_with(&format!("{name}-")) && p.join(format!("out/lib{lib}.a")).is_file()
        })
        .map(|p| p.join("out"))
        .collect();
    outs.sort_by_key(|p| std::fs::metadata(p.join(format!("lib{lib}.a"))).and_then(|m| m.modified()).ok());
    outs.pop().unwrap_or_else(|| panic!("no lib{lib}.a under {}", build.display()))
}

fn a_static_library_of_host_launchers_links_runs_and_rebuilds_on_a_header_edit() {
    common::nvcc();
    // A stand-in file for GPUs without wmma, left out as mistral.rs's build leaves out its
    // `*_dummy.cu` files (cudaforge's `exclude`): nvcc would stop on it.
    let build_rs = BUILD_RS
        .replace(".cuda_define(", ".cuda_exclude(\"*_dummy.cu\")\n        .cuda_exclude(\"cuda/none_*.cu\")\n        .cuda_define(");
    let p = host("host_static_moe", &build_rs);
    write(p.path().join("host/cuda/moe/moe_wmma_dummy.cu"), "this is not C++\n");
    let (ok, _, log) = cargo(p.path(), "build");
    assert!(ok, "{log}");
    // The globs that match nothing are named, once each.
    let warning = "`cuda-file-archs` glob `cuda/nothing/*.cu` matches no .cu file of `moe`";
    assert_eq!(log.matches(warning).count(), 1, "{log}");
    assert_eq!(log.matches("`cuda-exclude` glob `cuda/none_*.cu` matches no .cu file of `moe`").count(), 1, "{log}");
    assert!(!log.contains("`*_dummy.cu` matches no"), "{log}");

    // One object per file in the archive, named in `ar t`.
    let lib = out_dir("host_static_moe", "moe").join("libmoe.a");
    let listed = Command::new("ar").arg("t").arg(&lib).output().unwrap();
    let listed = String::from_utf8_lossy(&listed.stdout);
    let mut objects: Vec<&str> = listed.lines().collect();
    objects.sort();
    assert_eq!(objects, ["mmvq.o", "moe_gather.o", "moe_wmma.o"]);
    // The wmma file was built for its own arch alone, the others for both: each cubin's ELF
    // names its arch.
    let work = work_dir(&out_dir("host_static_moe", "moe").join("ptx-target/libmoe/ptx/release/moe")).join("obj");
    let archs = |o: &str| {
        let bytes = std::fs::read(work.join(o)).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        ["sm_75", "sm_80", "sm_90"].into_iter().filter(|a| text.contains(&format!(".target {a}"))).collect::<Vec<_>>()
    };
    assert_eq!(archs("moe_wmma.o"), ["sm_80"]);
    assert_eq!(archs("moe_gather.o"), ["sm_75", "sm_80"]);

    // The binary links (libcudart_static needs no GPU to link) and calls into the library: the
    // runtime answers with a count or an error code, never a crash.
    let (ok, stdout, log) = cargo(p.path(), "run");
    assert!(ok, "{log}");
    let line = stdout.lines().find(|l| l.starts_with("cudaGetDeviceCount")).unwrap_or_else(|| panic!("{stdout}\n{log}"));
    if !cargo_ptx::sanitize::driver_present() {
        assert!(line.starts_with("cudaGetDeviceCount failed: cudaError"), "{line}");
    }

    let (ok, _, log) = cargo(p.path(), "build");
    assert!(ok && !build_script_ran(&log), "a no-op build does not run the build script:\n{log}");
    // A header every file includes: the build script reruns.
    let header = p.path().join("host/cuda/common.cuh");
    let text = std::fs::read_to_string(&header).unwrap().replace("#define MOE_BLOCK 128", "#define MOE_BLOCK 64");
    write_at(&header, &text, std::time::SystemTime::now() + std::time::Duration::from_secs(3600));
    let (ok, _, log) = cargo(p.path(), "build");
    assert!(ok && build_script_ran(&log), "a header edit reruns the build script:\n{log}");
}

/// The `.work-*` folder of a crate's artifacts.
fn work_dir(dir: &Path) -> PathBuf {
    let found = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with(".work-"));
    found.unwrap_or_else(|| panic!("no .work-* under {}", dir.display()))
}

fn an_nvcc_error_in_a_static_library_file_names_the_file_line_and_archs_once() {
    common::nvcc();
    let build_rs = r#"fn main() -> Result<(), ptx_build::Error> {
    ptx_build::Builder::new().cuda_static_lib("bad", "cuda/*.cu").arch("sm_75").arch("sm_80").build()?;
    Ok(())
}
"#;
    let p = host("host_static_bad", build_rs);
    write(
        p.path().join("host/cuda/launch.cu"),
        "#include <cuda_runtime.h>\n__global__ void k(float *x) { x[0] = 1.0f; }\nextern \"C\" int launch(float *x, cudaStream_t s) {\n  k<<<1, 1, 0, s>>>(x, 2);\n  return (int)cudaGetLastError();\n}\n",
    );
    let (ok, _, log) = cargo(p.path(), "build");
    assert!(!ok, "{log}");
    assert!(log.contains("cuda/launch.cu:4:"), "the error names the file and line:\n{log}");
    assert_eq!(log.matches("too many arguments in function call").count(), 1, "once, not once per arch:\n{log}");
    assert!(log.contains("nvcc could not compile cuda/launch.cu for sm_75, sm_80"), "{log}");
    assert!(!log.contains("panicked"), "{log}");
}

/// One .cu file in both `.cuda(..)` and `.cuda_static_lib(..)` (the README allows it) is
/// compiled twice, by the PTX path per arch and by `nvcc -c` for both: its warning is shown once,
/// for both archs, with no line naming "1 more place" that is the same place; on a failed build
/// too.
fn a_warning_of_a_file_in_both_the_ptx_and_the_static_library_build_is_shown_once() {
    common::nvcc();
    let root = tempfile::Builder::new().prefix("cargo-ptx static ").tempdir().unwrap();
    let h = root.path().join("host");
    write(
        h.join("Cargo.toml"),
        &format!(
            "[package]\nname = \"host_static_both\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[build-dependencies]\nptx-build = {{ path = {:?} }}\n[workspace]\n",
            repo().join("ptx-build")
        ),
    );
    write(h.join("src/lib.rs"), "");
    write(
        h.join("build.rs"),
        "fn main() -> Result<(), ptx_build::Error> {\n    ptx_build::Builder::new().cuda(\"cuda/k.cu\").cuda_static_lib(\"k\", \"cuda/*.cu\").arch(\"sm_75\").arch(\"sm_80\").build()?;\n    Ok(())\n}\n",
    );
    write(
        h.join("cuda/k.cu"),
        "extern \"C\" __global__ void k(float *y)\n{\n    int unused = 3;\n    y[threadIdx.x] = 1.f;\n}\nextern \"C\" int launch_k(float *y, void *s) { k<<<1, 32, 0, (cudaStream_t)s>>>(y); return (int)cudaGetLastError(); }\n",
    );
    let unused = "variable \"unused\" was declared but never referenced";
    let (ok, _, log) = cargo(root.path(), "build");
    assert!(ok, "{log}");
    let warnings: Vec<&str> = log.lines().filter(|l| l.starts_with("warning: host_static_both@")).collect();
    assert_eq!(warnings.iter().filter(|l| l.ends_with(unused)).count(), 1, "{log}");
    assert!(warnings.iter().any(|l| l.ends_with("cuda/k.cu:3:9")) && warnings.iter().any(|l| l.ends_with("= for sm_75, sm_80")), "{log}");
    assert!(!log.contains("the same warning at"), "{log}");

    // Another file of the library fails: the warning is on stderr once, with its archs.
    write(h.join("cuda/bad.cu"), "extern \"C\" __global__ void bad(float *y) { y[0] = undefined_name; }\n");
    let (ok, _, log) = cargo(root.path(), "build");
    assert!(!ok, "{log}");
    assert_eq!(log.matches(unused).count(), 1, "{log}");
    assert!(log.contains("  = for sm_75, sm_80\n") && log.contains("cuda/bad.cu:1:"), "{log}");
}

/// ptxas runs inside `nvcc -c` on a PTX file nvcc deletes: its error about an inline `asm` is
/// shown at the `.cu` line of the instruction, as the PTX path shows it, not at nvcc's temp file.
fn a_ptxas_error_inside_a_static_library_file_is_shown_at_its_source_line() {
    common::nvcc();
    let build_rs = r#"fn main() -> Result<(), ptx_build::Error> {
    ptx_build::Builder::new().cuda_static_lib("lanes", "cuda/*.cu").arch("sm_80").build()?;
    Ok(())
}
"#;
    let p = host("host_static_ptxas", build_rs);
    write(
        p.path().join("host/cuda/lanes.cu"),
        "#include <cuda_runtime.h>\n__device__ __forceinline__ unsigned lane() {\n  unsigned id;\n  asm volatile(\"mov.u23 %0, %%laneid;\" : \"=r\"(id));\n  return id;\n}\n__global__ void lanes(unsigned *out) { out[threadIdx.x] = lane(); }\nextern \"C\" int launch_lanes(unsigned *out, cudaStream_t s) {\n  lanes<<<1, 32, 0, s>>>(out);\n  return (int)cudaGetLastError();\n}\n",
    );
    let (ok, _, log) = cargo(p.path(), "build");
    assert!(!ok, "{log}");
    assert!(log.contains("error: ptxas: Unknown modifier '.u23'"), "{log}");
    assert!(log.contains("cuda/lanes.cu:4:"), "at the asm's line:\n{log}");
    assert!(log.contains("asm volatile(\"mov.u23 %0, %%laneid;\""), "the line is shown:\n{log}");
    assert!(log.contains("inlined at cuda/lanes.cu:7"), "and where it was inlined into the kernel:\n{log}");
    assert!(!log.contains("tmpxft"), "nvcc's deleted temp file is not named:\n{log}");
    assert!(log.contains("nvcc could not compile cuda/lanes.cu for sm_80"), "{log}");
}

fn a_static_library_whose_globs_match_nothing_or_a_bad_name_is_an_error_naming_it() {
    common::nvcc();
    let build_rs = r#"fn main() -> Result<(), ptx_build::Error> {
    ptx_build::Builder::new().cuda_static_lib("none", "kernels/*.cu").arch("sm_80").build()?;
    Ok(())
}
"#;
    let p = host("host_static_none", build_rs);
    // Newer than the build script cargo built for the last run of this test (same package, same
    // target dir): its two versions of build.rs alternate.
    let (soon, later) = (std::time::Duration::from_secs(3600), std::time::Duration::from_secs(7200));
    write_at(p.path().join("host/build.rs"), build_rs, std::time::SystemTime::now() + soon);
    let (ok, _, log) = cargo(p.path(), "build");
    assert!(!ok, "{log}");
    assert!(log.contains("`libnone.a` has no .cu file: its globs (kernels/*.cu) match nothing under"), "{log}");
    assert!(log.contains("invalid `.cuda_static_lib(..)` in the Builder in"), "{log}");
    assert!(!log.contains("matches no file"), "said once, by the error, not also by a warning:\n{log}");
    // A folder of a near name: named.
    let near = build_rs.replace("\"kernels/*.cu\"", "\"cudaa/*.cu\"");
    write_at(p.path().join("host/build.rs"), &near, std::time::SystemTime::now() + soon / 2);
    let (ok, _, log) = cargo(p.path(), "build");
    assert!(!ok && log.contains("match nothing under") && log.contains("(did you mean `cuda/*.cu`?)"), "{log}");
    // The archive's file name for the library's.
    write_at(p.path().join("host/build.rs"), &build_rs.replace("\"none\"", "\"libmoe.a\""), std::time::SystemTime::now() + soon * 3 / 2);
    let (ok, _, log) = cargo(p.path(), "build");
    assert!(!ok && log.contains("invalid `.cuda_static_lib(..)` in the Builder in"), "{log}");
    assert!(log.contains("`libmoe.a` names the archive: the library's name is `moe` (the file is `libmoe.a`)"), "{log}");

    write_at(p.path().join("host/build.rs"), &build_rs.replace("\"none\"", "\"lib moe\""), std::time::SystemTime::now() + later);
    let (ok, _, log) = cargo(p.path(), "build");
    assert!(!ok, "{log}");
    assert!(log.contains("`lib moe` is not a library name: use letters, digits, `_` and `-`"), "{log}");

    // The same for `.cuda(..)` globs when the Builder has nothing else: an error in the build
    // script, not a missing launch method in the crate's code.
    let cuda_only = build_rs.replace(".cuda_static_lib(\"none\", \"kernels/*.cu\")", ".cuda(\"kernels/*.cuh\")");
    write_at(p.path().join("host/build.rs"), &cuda_only, std::time::SystemTime::now() + 3 * soon);
    let (ok, _, log) = cargo(p.path(), "build");
    assert!(!ok, "{log}");
    assert!(log.contains("invalid `.cuda(..)` in the Builder in"), "{log}");
    assert!(log.contains("its globs (kernels/*.cuh) match no file under"), "{log}");
    assert!(log.contains("the Builder has no kernel to build"), "{log}");
}

/// A glob of a folder that does not exist beside one that matches: a warning naming a near
/// folder, and no watch on the missing path (cargo would rerun the build script every time).
fn a_glob_of_a_missing_folder_is_named_and_does_not_rerun_every_build() {
    common::nvcc();
    let build_rs = r#"fn main() -> Result<(), ptx_build::Error> {
    ptx_build::Builder::new()
        .cuda_static_lib("moe", "cuda/moe/*.cu")
        .cuda_static_lib("moe", "cuda/mmvq.cu")
        .cuda_static_lib("moe", "cuda/extra/*.cu")
        .cuda_static_lib("moe", "cuda/mo/*.cu")
        .cuda_static_lib("moe", "csrc/*.cu")
        .arch("sm_80")
        .build()?;
    Ok(())
}
"#;
    let p = host("host_static_missing", build_rs);
    // The build script of an earlier run of this test (same package and target dir) is not
    // rebuilt for a build.rs written in a new folder: start without it.
    for e in std::fs::read_dir(target().join("debug/build")).into_iter().flatten().flatten() {
        if e.file_name().to_string_lossy().starts_with("host_static_missing-") {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
    let (ok, _, log) = cargo(p.path(), "build");
    assert!(ok, "{log}");
    assert!(log.contains("`.cuda_static_lib(\"moe\", \"cuda/extra/*.cu\")` matches no file under"), "{log}");
    assert!(
        log.contains("`.cuda_static_lib(\"moe\", \"cuda/mo/*.cu\")` matches no file under")
            && log.contains("(did you mean `cuda/moe/*.cu`?)"),
        "{log}"
    );
    // A missing folder at the package root: no watch (the root holds target/), and the fix.
    assert!(
        log.contains("`.cuda_static_lib(\"moe\", \"csrc/*.cu\")` matches no file under")
            && log.contains("once it does, touch build.rs to rebuild"),
        "{log}"
    );
    let (ok, _, log) = cargo(p.path(), "build");
    assert!(ok && !build_script_ran(&log), "a no-op build reruns nothing:\n{log}");
    // Creating the folder is seen.
    write(p.path().join("host/cuda/extra/more.cu"), "extern \"C\" int more_answer() { return 42; }\n");
    let (ok, _, log) = cargo(p.path(), "build");
    assert!(ok && build_script_ran(&log), "{log}");
}

/// Relocatable device code: a kernel in one file calls a device function of another; without
/// the device-link step the binary would not link (`__cudaRegisterLinkedBinary_*` undefined).
fn relocatable_device_code_gets_a_device_link_step_and_the_binary_links() {
    common::nvcc();
    let build_rs = r#"fn main() -> Result<(), ptx_build::Error> {
    ptx_build::Builder::new().cuda_static_lib("rdc", "cuda/*.cu").arch("sm_80").nvcc_flag("-rdc=true").build()?;
    Ok(())
}
"#;
    let p = host("host_static_rdc", build_rs);
    let h = p.path().join("host");
    std::fs::remove_dir_all(h.join("cuda")).unwrap();
    write(h.join("cuda/twice.cu"), "__device__ float twice(float x) { return 2.0f * x; }\n");
    write(
        h.join("cuda/launch.cu"),
        "#include <cuda_runtime.h>\nextern __device__ float twice(float x);\n__global__ void k(float *x) { x[threadIdx.x] = twice(x[threadIdx.x]); }\nextern \"C\" int launch_twice(float *x, int n, cudaStream_t s) {\n  k<<<1, n, 0, s>>>(x);\n  return (int)cudaGetLastError();\n}\nextern \"C\" int rdc_device_count(int *n) { return (int)cudaGetDeviceCount(n); }\n",
    );
    write(
        h.join("src/lib.rs"),
        "extern \"C\" {\n    pub fn launch_twice(x: *mut f32, n: i32, s: *mut std::ffi::c_void) -> i32;\n    pub fn rdc_device_count(n: *mut i32) -> i32;\n}\n",
    );
    write(
        h.join("src/main.rs"),
        "fn main() {\n    let mut n = 0;\n    let code = unsafe { host_static_rdc::rdc_device_count(&mut n) };\n    println!(\"device count: {code} {n}\");\n    if code == 0 && n > 0 {\n        println!(\"launch: {}\", unsafe { host_static_rdc::launch_twice(std::ptr::null_mut(), 0, std::ptr::null_mut()) });\n    }\n}\n",
    );
    let (ok, stdout, log) = cargo(p.path(), "run");
    assert!(ok, "{log}");
    assert!(stdout.contains("device count: "), "{stdout}");
    let lib = out_dir("host_static_rdc", "rdc").join("librdc.a");
    let listed = Command::new("ar").arg("t").arg(&lib).output().unwrap();
    let mut objects: Vec<String> = String::from_utf8_lossy(&listed.stdout).lines().map(str::to_string).collect();
    objects.sort();
    assert_eq!(objects, ["device-link.o", "launch.o", "twice.o"]);
}

/// A second checkout at another path with the same shared step cache starts no nvcc for the
/// objects (their keys hold no path of the checkout) and writes the same archive, byte for byte.
fn a_second_checkout_fetches_every_object_from_the_shared_cache() {
    let real = common::nvcc();
    let scratch = tempfile::tempdir().unwrap();
    let (log, cache) = (scratch.path().join("nvcc.log"), scratch.path().join("steps"));
    let wrapper = common::logging_wrapper(&scratch.path().join("nvcc"), &real, &log, "");
    // A header outside the package (a monorepo's shared folder), beside each checkout's host.
    let build_rs = BUILD_RS
        .replace(".cuda_file_archs(\"cuda/nothing/*.cu\", \"sm_90\")\n", "")
        .replace(".arch(\"sm_75\")\n", "")
        .replace(".cuda_define(", ".cuda_include(\"../shared\")\n        .cuda_define(");
    let checkout = |scale: &str| {
        let c = host("host_static_share", &build_rs);
        write(c.path().join("shared/scale.cuh"), &format!("#define SHARED_SCALE {scale}\n"));
        write(
            c.path().join("host/cuda/moe/shared_scale.cu"),
            "#include \"scale.cuh\"\n__global__ void shared_scale_kernel(float *x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= SHARED_SCALE; }\nextern \"C\" int shared_scale(float *x, int n) { shared_scale_kernel<<<(n + 255) / 256, 256>>>(x, n); return 0; }\n",
        );
        c
    };
    let compiles = || std::fs::read_to_string(&log).unwrap_or_default().lines().filter(|l| l.split(' ').any(|a| a == "-c")).count();
    let mut libs = Vec::new();
    // The third checkout's shared header differs: its includer is compiled again, checked
    // against its own header, not the first checkout's (which is still there).
    let checkouts = [checkout("2.0f"), checkout("2.0f"), checkout("3.0f")];
    for (i, (checkout, want)) in checkouts.iter().zip([4, 4, 5]).enumerate() {
        let (ok, _, out) = cargo_with(checkout.path(), "build", |c| {
            c.env("NVCC", &wrapper).env("CARGO_PTX_CACHE_DIR", &cache);
        });
        assert!(ok, "{out}");
        assert_eq!(compiles(), want, "checkout {i}: the first compiles each of the 4 files once, the second none, the third one");
        libs.push(std::fs::read(out_dir("host_static_share", "moe").join("libmoe.a")).unwrap());
    }
    assert!(libs[0] == libs[1], "the same archive from both checkouts");
    assert!(libs[2] != libs[1], "another header, another archive");
}

fn cuda_file_archs_build_a_file_for_its_own_archs_and_warn_about_a_glob_that_matches_nothing() {
    common::cuda();
    common::nvcc();
    let k = KernelCrate::new(
        "file-archs",
        "rust = false\narchs = [\"sm_75\", \"sm_80\"]\ncuda-file-archs = { \"cuda/tc/*.cu\" = [\"sm_80\"], \"cuda/none/*.cu\" = [\"sm_90\"] }",
        "",
    );
    k.write("cuda/scale.cu", "extern \"C\" __global__ void scale(float *x, float a) { x[threadIdx.x] *= a; }\n");
    k.write("cuda/tc/bf16.cu", "#include <cuda_bf16.h>\nextern \"C\" __global__ void widen_bf16(const __nv_bfloat16 *x, float *y) { y[threadIdx.x] = __bfloat162float(x[threadIdx.x]); }\n");
    let run = k.build(&[]);
    run.assert_ok();
    // The (module, arch, kind) of every artifact the build reported.
    let built = |run: &common::Run| {
        let mut v: Vec<String> = run
            .of("ptx-artifact")
            .iter()
            .map(|a| format!("{} {} {}", a["module"].as_str().unwrap(), a["arch"].as_str().unwrap(), a["kind"].as_str().unwrap()))
            .collect();
        v.sort();
        v
    };
    assert_eq!(
        built(&run),
        ["bf16 sm_80 cubin", "bf16 sm_80 ptx", "scale sm_75 cubin", "scale sm_75 ptx", "scale sm_80 cubin", "scale sm_80 ptx"],
        "bf16.cu for sm_80 alone, scale.cu for the crate's archs"
    );
    assert!(k.module_artifact("release", "sm_80", "bf16", "cubin").is_file());
    let warnings: Vec<String> = run
        .of("ptx-diagnostic")
        .iter()
        .filter(|d| d["level"] == "warning")
        .map(|d| d["message"].as_str().unwrap_or_default().to_string())
        .collect();
    assert!(
        warnings.iter().any(|w| w.contains("`cuda-file-archs` glob `cuda/none/*.cu` matches no .cu file of `file-archs`")),
        "{warnings:?}"
    );
    // The same per-file list from the command line wins over the metadata's.
    let run = k.build(&["--cuda-file-archs", "cuda/tc/*.cu=sm_75"]);
    run.assert_ok();
    assert!(
        built(&run).contains(&"bf16 sm_75 ptx".to_string()) && !built(&run).contains(&"bf16 sm_80 ptx".to_string()),
        "the flag's list: {:?}",
        built(&run)
    );
}

/// With `CARGO_PTX_VERBOSE=1`, the build script shows each step, each tool's command line (`cd`
/// into the folder it runs in, as `cargo ptx build -vv` shows the PTX path's) and the link into
/// the crate on stderr, which `cargo build -vv` prints; without it, none of them.
fn verbose_shows_each_nvcc_and_ar_command_and_the_link_of_a_static_library() {
    let nvcc = common::nvcc();
    let build_rs = r#"fn main() -> Result<(), ptx_build::Error> {
    ptx_build::Builder::new().cuda_static_lib("launch", "cuda/launch.cu").arch("sm_80").build()?;
    Ok(())
}
"#;
    let p = host("host_static_verbose", build_rs);
    let launch = "#include <cuda_runtime.h>\n__global__ void k(float *x) { x[0] = 1.0f; }\nextern \"C\" int launch(float *x, cudaStream_t s) {\n  k<<<1, 1, 0, s>>>(x);\n  return (int)cudaGetLastError();\n}\n";
    write(p.path().join("host/cuda/launch.cu"), launch);
    // `--lib`: the example's binary calls launchers this library does not have. No step cache:
    // each run compiles (a cached object runs no nvcc).
    let build = |verbose: bool| {
        let mut cmd = Command::new(env!("CARGO"));
        cmd.args(["build", "--lib", "-vv"])
            .current_dir(p.path().join("host"))
            .env("CARGO_TARGET_DIR", target())
            .env("CARGO_PTX_CACHE_DIR", "off")
            .env_remove("CARGO_PTX_ARCH")
            .env_remove("CARGO_PTX_CUDA_FILE_ARCHS")
            .env_remove("CARGO_PTX_VERBOSE");
        if verbose {
            cmd.env("CARGO_PTX_VERBOSE", "1");
        }
        let out = cmd.output().unwrap();
        let log = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{log}");
        log
    };
    let ours = |log: &str| -> Vec<String> {
        log.lines()
            .filter_map(|l| l.strip_prefix("[host_static_verbose 0.1.0] "))
            .filter(|l| !l.starts_with("cargo:"))
            .map(String::from)
            .collect()
    };
    let quiet = build(false);
    assert!(ours(&quiet).is_empty(), "nothing without CARGO_PTX_VERBOSE:\n{quiet}");

    // An edit, so that nvcc and ar run again.
    write_at(
        p.path().join("host/cuda/launch.cu"),
        &format!("{launch}extern \"C\" int verbose_probe(void) {{ return 7; }}\n"),
        std::time::SystemTime::now(),
    );
    let log = build(true);
    let lines = ours(&log);
    let out = out_dir("host_static_verbose", "launch");
    let host = p.path().join("host");
    let nvcc_line = format!(
        "     Running `cd '{}' && {} -c -Xcompiler -fPIC -O3 -gencode arch=compute_80,code=sm_80 -gencode arch=compute_80,code=compute_80 -lineinfo -std=c++17 -ccbin=",
        host.display(),
        nvcc.display()
    );
    let i = lines.iter().position(|l| l.starts_with(&nvcc_line)).unwrap_or_else(|| panic!("no `{nvcc_line}...` in:\n{log}"));
    assert!(lines[i].contains(" -MMD -MF ") && lines[i].contains(" -o ") && lines[i].ends_with(" ./cuda/launch.cu`"), "{}", lines[i]);
    assert_eq!(lines[i - 1], "   Compiling launch (CUDA, cuda/launch.cu) for sm_80", "{log}");
    let ar = lines.iter().find(|l| l.contains(" crsD ")).unwrap_or_else(|| panic!("no ar line in:\n{log}"));
    assert!(ar.starts_with("     Running `/") && ar.contains(&format!(" {}/.tmp-", out.display())), "{ar}");
    assert!(ar.ends_with("/obj/launch.o`"), "{ar}");
    let cuda = ptx_build::internals::tools::Cuda::find();
    let runtime = ptx_build::internals::cuda::runtime_dir(&ptx_build::internals::cuda::Nvcc::new(cuda.nvcc.unwrap())).unwrap();
    let link = format!(
        "     Linking liblaunch.a into `host_static_verbose` (`rustc -L native={} -l static=launch -L native={} -l static=cudart_static -l dylib=stdc++ -l dylib=dl -l dylib=rt -l dylib=pthread`)",
        out.display(),
        runtime.display()
    );
    assert!(lines.contains(&link), "no `{link}` in:\n{log}");
}

/// What other crates' build scripts do with the nvcc of `cargo ptx setup`: sppark's compiles
/// and links a program with the CUDA runtime (`nvcc cuda_available.cpp -o ..`). The wheels put
/// the runtime in `lib`, their nvcc looks in `lib64`: this failed with `cannot find
/// -lcudart_static` until setup linked the one to the other.
fn nvcc_links_a_program_with_the_cuda_runtime_as_other_crates_build_scripts_do() {
    let nvcc = common::nvcc();
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("cuda_available.cpp");
    std::fs::write(&src, "#include <cuda_runtime.h>\nint main() { int n = 0; return cudaGetDeviceCount(&n) == cudaSuccess ? 0 : 1; }\n")
        .unwrap();
    let exe = dir.path().join("cuda_available");
    let out = Command::new(&nvcc).arg("-x").arg("cu").arg(&src).arg("-o").arg(&exe).output().unwrap();
    assert!(out.status.success(), "{} could not link:\n{}", nvcc.display(), String::from_utf8_lossy(&out.stderr));
    assert!(exe.is_file());
}

pub fn tests() -> Vec<crate::harness::Test> {
    crate::tests![
        a_static_library_of_host_launchers_links_runs_and_rebuilds_on_a_header_edit,
        an_nvcc_error_in_a_static_library_file_names_the_file_line_and_archs_once,
        a_warning_of_a_file_in_both_the_ptx_and_the_static_library_build_is_shown_once,
        a_ptxas_error_inside_a_static_library_file_is_shown_at_its_source_line,
        relocatable_device_code_gets_a_device_link_step_and_the_binary_links,
        a_static_library_whose_globs_match_nothing_or_a_bad_name_is_an_error_naming_it,
        a_glob_of_a_missing_folder_is_named_and_does_not_rerun_every_build,
        a_second_checkout_fetches_every_object_from_the_shared_cache,
        cuda_file_archs_build_a_file_for_its_own_archs_and_warn_about_a_glob_that_matches_nothing,
        verbose_shows_each_nvcc_and_ar_command_and_the_link_of_a_static_library,
        nvcc_links_a_program_with_the_cuda_runtime_as_other_crates_build_scripts_do,
    ]
}
