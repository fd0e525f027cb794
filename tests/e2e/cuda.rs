//! CUDA C++ kernels end to end: real nvcc and ptxas from `cargo ptx setup` (no GPU needed).

use std::path::Path;

use crate::common;
use crate::common::{cargo_ptx, cuda, hide_cuda, KernelCrate, Run};

/// A kernel crate with only .cu files (the lib target stays empty).
fn cuda_crate(name: &str, metadata: &str, files: &[(&str, &str)]) -> KernelCrate {
    let k = KernelCrate::new(name, &format!("rust = false\narchs = [\"sm_80\"]\n{metadata}"), "");
    for (path, text) in files {
        k.write(path, text);
    }
    k
}

fn nvcc_ready() {
    cuda();
    common::nvcc();
}

/// NVIDIA's valid forms: a scoped temp register, the predicated `cond` with "+r", "n"
/// immediates, "h"/"l"/"f"/"d", a "memory" clobber, the "C" constraint with C++17 templates.
const REFERENCE_VALID: &str = r#"#include <cuda_fp16.h>
__device__ int cube(int x) {
  int y;
  asm("{\n\t"
      " .reg .u32 t1;\n\t"
      " mul.lo.u32 t1, %1, %1;\n\t"
      " mul.lo.u32 %0, t1, %1;\n\t"
      "}"
      : "=r"(y) : "r"(x));
  return y;
}
__device__ int cond(int x) {
  int y = 0;
  asm("{\n\t"
      " .reg .pred %p;\n\t"
      " setp.eq.s32 %p, %1, 34;\n\t"
      " @%p mov.s32 %0, 1;\n\t"
      "}"
      : "+r"(y) : "r"(x));
  return y;
}
constexpr char add_op[] = "add.s32";
template <const char *op> __device__ int apply(int a, int b) {
  int r;
  asm("%1 %0, %2, %3;" : "=r"(r) : "C"(op), "r"(a), "r"(b));
  return r;
}
extern "C" __global__ void valid(int *o, short *h, long long *l, float *f, double *d, __half *hf) {
  o[0] = cube(o[1]) + cube(o[2]) + cond(o[3]) + cond(o[4]) + apply<add_op>(o[5], o[6]);
  asm("add.s32 %0, %0, %1;" : "+r"(o[7]) : "n"(42));
  asm("add.s16 %0, %0, 1;" : "+h"(*h));
  asm("add.s64 %0, %0, 1;" : "+l"(*l));
  asm("add.f32 %0, %0, 0f3F800000;" : "+f"(*f));
  asm("add.f64 %0, %0, %1;" : "+d"(*d) : "d"(1.0));
  asm volatile("st.global.u32 [%0], %1;" :: "l"(o + 8), "r"(1) : "memory");
  hf[0] = __hadd(hf[0], hf[1]);
}
"#;

fn the_references_valid_forms_build_for_sm_80_and_sm_90_without_warnings() {
    nvcc_ready();
    let k = cuda_crate("ref_valid", "", &[("cuda/valid.cu", REFERENCE_VALID)]);
    let run = k.build(&["--arch", "sm_80,sm_90"]);
    run.assert_ok();
    assert!(run.of("ptx-diagnostic").is_empty(), "no warning for valid code: {:#?}", run.of("ptx-diagnostic"));
    let artifacts = run.of("ptx-artifact");
    assert_eq!(artifacts.len(), 4, "{artifacts:#?}");
    for a in &artifacts {
        assert_eq!(a["module"], "valid");
        assert_eq!(a["kernels"][0]["name"], "valid");
        assert!(a["source"].as_str().unwrap().ends_with("cuda/valid.cu"));
    }
    let ptx = std::fs::read_to_string(k.module_artifact("release", "sm_90", "valid", "ptx")).unwrap();
    assert!(ptx.contains(".target sm_90") && ptx.contains("mul.lo.u32"), "{ptx}");
    assert!(ptx.contains(".loc"), "-lineinfo: the PTX maps back to the .cu lines");
}

fn reference_error_examples_fail_at_their_line() {
    nvcc_ready();
    // Caught by our checker before nvcc runs: "rf" on one operand, and the %n1 modifier.
    let src = "extern \"C\" __global__ void k(int *o, int j) {\n  int x, n;\n  asm(\"mov.u32 %0, %1;\" : \"=r\"(x) : \"rf\"(j));\n  asm(\"mov.u32 %0, %n1;\" : \"=r\"(n) : \"r\"(1));\n  o[0] = x + n;\n}\n";
    let k = cuda_crate("ref_errors", "", &[("cuda/bad.cu", src)]);
    let run = k.build(&[]);
    run.assert_error(&["inline-PTX error", "`cargo ptx check` runs the checker alone"]);
    // `cargo ptx check` itself needs no pointer to itself.
    let out = crate::common::cargo_ptx().arg("check").arg(&k.dir).output().unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && text.contains("2 inline-PTX errors in `ref_errors`") && !text.contains("runs the checker alone"),
        "{text}"
    );
    // A folder of .cu files with no package in it (a Builder host's `csrc/`): its files.
    let out = crate::common::cargo_ptx().arg("check").arg(k.dir.join("cuda")).output().unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && text.contains("two constraint letters (\"rf\")") && !text.contains("no kernel crate found"), "{text}");
    let at = |needle: &str| {
        let d = run
            .errors()
            .into_iter()
            .find(|d| d["message"].as_str().unwrap().contains(needle))
            .unwrap_or_else(|| panic!("{needle}: {}", run.stdout))
            .clone();
        format!("{}:{}:{}", d["file"].as_str().unwrap(), d["line"], d["column"])
    };
    assert_eq!(at("two constraint letters (\"rf\")"), "cuda/bad.cu:3:37");
    assert_eq!(at("`%n1`: operand modifiers"), "cuda/bad.cu:4:20");

    // Caught by nvcc's front end, shown at nvcc's line and column: an int4 operand, a char
    // and a float with "r".
    let src = "extern \"C\" __global__ void k(int *o, int j, float f) {\n  int4 i4;\n  asm(\"mov.u32 %0, %1;\" : \"=r\"(i4) : \"r\"(j));\n  char c;\n  asm(\"mov.u32 %0, %1;\" : \"=r\"(c) : \"r\"(j));\n  int x;\n  asm(\"mov.u32 %0, %1;\" : \"=r\"(x) : \"r\"(f));\n  o[0] = i4.x + c + x;\n}\n";
    let k = cuda_crate("nvcc_errors", "", &[("cuda/types.cu", src)]);
    let run = k.build(&[]);
    run.assert_error(&["nvcc could not compile cuda/types.cu for sm_80 (3 errors above)"]);
    let errs: Vec<String> = run
        .errors()
        .iter()
        .filter(|d| d["line"].is_u64())
        .map(|d| format!("{}:{}:{} {}", d["file"].as_str().unwrap(), d["line"], d["column"], d["message"].as_str().unwrap()))
        .collect();
    assert_eq!(
        errs,
        [
            "cuda/types.cu:3:27 an asm operand must have scalar type",
            "cuda/types.cu:5:27 asm operand type size(1) does not match type/size implied by constraint 'r'",
            "cuda/types.cu:7:37 asm operand type size(4) does not match type/size implied by constraint 'r'",
        ]
    );
}

fn ptxas_errors_point_at_the_cu_line_of_the_asm() {
    nvcc_ready();
    // An "r" (32-bit) operand used in add.f64: only ptxas notices.
    let src = "extern \"C\" __global__ void k(int *o, int j) {\n  int x;\n  asm(\"add.f64 %0, %1, %1;\" : \"=r\"(x) : \"r\"(j));\n  o[0] = x;\n}\n";
    let k = cuda_crate("ptxas_f64", "", &[("cuda/f64.cu", src)]);
    let run = k.build(&[]);
    run.assert_error(&["ptxas rejected the PTX of `ptxas_f64` for sm_80"]);
    let d = run.errors().into_iter().find(|d| d["message"].as_str().unwrap().contains("Arguments mismatch")).unwrap().clone();
    assert_eq!((d["file"].as_str().unwrap(), d["line"].as_u64()), ("cuda/f64.cu", Some(3)), "{d}");
    assert!(d["notes"].as_array().unwrap().iter().any(|n| n.as_str().unwrap().contains("source: asm(\"add.f64")), "{d}");

    // An unscoped .reg in a __device__ function inlined twice: the checker warns, ptxas fails
    // on the second copy, both at the asm's line, with the call site it was inlined at.
    let src = "__device__ int cube(int x) {\n  int y;\n  asm(\".reg .u32 t1;\\n\\t\"\n      \"mul.lo.u32 t1, %1, %1;\\n\\t\"\n      \"mul.lo.u32 %0, t1, %1;\" : \"=r\"(y) : \"r\"(x));\n  return y;\n}\nextern \"C\" __global__ void k(int *o) {\n  o[0] = cube(o[1]) + cube(o[2]);\n}\n";
    let k = cuda_crate("ptxas_dup", "", &[("cuda/dup.cu", src)]);
    let run = k.build(&[]);
    run.assert_error(&["Duplicate definition of variable 't1'"]);
    let w = run.of("ptx-diagnostic").into_iter().find(|d| d["level"] == "warning").unwrap().clone();
    assert!(w["message"].as_str().unwrap().contains("outside `{ }` in an asm of `cube`"), "{w}");
    assert_eq!((w["file"].as_str().unwrap(), w["line"].as_u64()), ("cuda/dup.cu", Some(3)));
    let d = run.errors().into_iter().find(|d| d["message"].as_str().unwrap().contains("Duplicate definition")).unwrap().clone();
    assert_eq!(d["file"], "cuda/dup.cu");
    assert!((3..=5).contains(&d["line"].as_u64().unwrap()), "the asm spans lines 3-5: {d}");
    assert!(d["notes"].as_array().unwrap().iter().any(|n| n.as_str().unwrap().starts_with("inlined at cuda/dup.cu:9:")), "{d}");
}

fn rust_and_cuda_kernels_of_one_crate_land_in_one_artifact_set() {
    nvcc_ready();
    let k = KernelCrate::example("mixed/kernels");
    let run = k.build(&["--arch", "sm_80,sm_90"]);
    run.assert_ok();
    let mut got: Vec<String> = run.of("ptx-artifact").iter().map(|a| format!("{} {} {}", a["arch"], a["module"], a["kind"])).collect();
    got.sort();
    assert_eq!(
        got,
        [
            "\"sm_80\" \"leaky_relu\" \"cubin\"",
            "\"sm_80\" \"leaky_relu\" \"ptx\"",
            "\"sm_80\" \"mixed_kernels\" \"cubin\"",
            "\"sm_80\" \"mixed_kernels\" \"ptx\"",
            "\"sm_90\" \"leaky_relu\" \"cubin\"",
            "\"sm_90\" \"leaky_relu\" \"ptx\"",
            "\"sm_90\" \"mixed_kernels\" \"cubin\"",
            "\"sm_90\" \"mixed_kernels\" \"ptx\"",
        ]
    );
    // cuda-defines reached nvcc.
    let ptx = std::fs::read_to_string(k.module_artifact("release", "sm_80", "leaky_relu", "ptx")).unwrap();
    assert!(ptx.contains("0f3C23D70A"), "LEAK = 0.01f: {ptx}");

    // The same kernel name in Rust and in CUDA C++ is an error naming both definitions.
    k.write("cuda/twin.cu", "\n\nextern \"C\" __global__ void scale_add(int n) {}\n");
    let run = k.build(&["--arch", "sm_80"]);
    run.assert_error(&["kernel `scale_add` is defined twice", "src/lib.rs:11", "cuda/twin.cu:3"]);

    // The same C++ helper kernel (a mangled name, no method) in two .cu files is fine: each
    // file is its own loaded module.
    std::fs::remove_file(k.dir.join("cuda/twin.cu")).unwrap();
    let helper =
        "__global__ void permute_kernel(float *out, const float *in, int n) { int i = threadIdx.x; if (i < n) out[i] = in[n - 1 - i]; }\n";
    k.write("cuda/attention.cu", helper);
    k.write("cuda/layernorm.cu", helper);
    let run = k.build(&["--arch", "sm_80"]);
    run.assert_ok();
    for module in ["attention", "layernorm"] {
        let ptx = std::fs::read_to_string(k.module_artifact("release", "sm_80", module, "ptx")).unwrap();
        assert!(ptx.contains(".entry _Z14permute_kernelPfPKfi"), "{module}: {ptx}");
    }

    // So is an `extern "C"` kernel from a header both include (dfdx's `fill_with_*` in
    // cuda_utils.cuh); the same name defined in two .cu files is not.
    k.write(
        "cuda/inc/fill.cuh",
        "extern \"C\" __global__ void fill_ones(float *x, int n) { if (threadIdx.x < n) x[threadIdx.x] = 1.0f; }\n",
    );
    k.write("cuda/attention.cu", &format!("#include \"inc/fill.cuh\"\n{helper}"));
    k.write("cuda/layernorm.cu", &format!("#include \"inc/fill.cuh\"\n{helper}"));
    k.build(&["--arch", "sm_80"]).assert_ok();
    // One file with a definition of its own, one with the header's: two definitions.
    k.write("cuda/layernorm.cu", &format!("{helper}\nextern \"C\" __global__ void fill_ones(float *x, int n) {{}}\n"));
    k.build(&["--arch", "sm_80"]).assert_error(&["kernel `fill_ones` is defined twice", "cuda/layernorm.cu:3", "cuda/attention.cu"]);
    k.write("cuda/attention.cu", &format!("{helper}extern \"C\" __global__ void fill_ones(float *x, int n) {{}}\n"));
    let run = k.build(&["--arch", "sm_80"]);
    run.assert_error(&["kernel `fill_ones` is defined twice", "cuda/attention.cu:2", "cuda/layernorm.cu:3"]);
}

fn a_header_edit_rebuilds_its_includers_and_a_no_op_runs_no_nvcc_or_ptxas() {
    nvcc_ready();
    let k = cuda_crate(
        "headers",
        "",
        &[
            ("cuda/inc/tile.cuh", "#define TILE 4\n"),
            ("cuda/uses.cu", "#include \"inc/tile.cuh\"\nextern \"C\" __global__ void uses(int *o) { o[0] = TILE; }\n"),
            ("cuda/other.cu", "extern \"C\" __global__ void other(int *o) { o[0] = 1; }\n"),
        ],
    );
    k.build(&[]).assert_ok();
    let log = k.dir.join("tool-calls.log");
    let cuda = cuda();
    let wrap = |tool: &str, real: &Path| common::logging_wrapper(&k.dir.join(format!("{tool}-wrapper")), real, &log, &format!("{tool} "));
    let (nvcc, ptxas) = (wrap("nvcc", &cuda.nvcc.unwrap().path), wrap("ptxas", &cuda.ptxas.unwrap().path));
    let with_wrappers = |c: &mut std::process::Command| {
        c.env("NVCC", &nvcc).env("PTXAS", &ptxas);
    };
    k.build_with(&[], with_wrappers).assert_ok(); // new tool paths: a rebuild
    std::fs::write(&log, "").unwrap();
    let run = k.build_with(&[], with_wrappers);
    run.assert_ok();
    assert!(run.of("ptx-artifact").iter().all(|a| a["fresh"] == true));
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "", "a no-op build starts no CUDA tool");

    k.write("cuda/inc/tile.cuh", "#define TILE 8\n");
    let run = k.build_with(&[], with_wrappers);
    run.assert_ok();
    let calls = std::fs::read_to_string(&log).unwrap();
    assert!(calls.lines().any(|l| l.starts_with("nvcc ") && l.contains("uses.cu")), "{calls}");
    assert!(!calls.contains("other.cu"), "other.cu does not include the header: {calls}");
    let rebuilt: Vec<String> =
        run.of("ptx-artifact").iter().filter(|a| a["fresh"] == false).map(|a| a["module"].as_str().unwrap().to_string()).collect();
    assert_eq!(rebuilt, ["uses", "uses"]);
    let ptx = std::fs::read_to_string(k.module_artifact("release", "sm_80", "uses", "ptx")).unwrap();
    assert!(ptx.contains("8;"), "the new TILE reached the PTX: {ptx}");
}

fn a_lone_cu_file_builds_and_cuda_gdb_adds_g() {
    nvcc_ready();
    let dir = tempfile::Builder::new().prefix("cargo-ptx lone ").tempdir().unwrap();
    let file = dir.path().join("fill.cu");
    std::fs::write(&file, "extern \"C\" __global__ void fill(float *x, float v) { x[threadIdx.x] = v; }\n").unwrap();
    let target = dir.path().join("t");
    let run = |args: &[&str]| {
        Run::from(
            cargo_ptx()
                .arg("build")
                .arg(&file)
                .args(["--arch", "sm_90", "--message-format", "json", "--target-dir"])
                .arg(&target)
                .args(args)
                .output()
                .unwrap(),
        )
    };
    let r = run(&[]);
    r.assert_ok();
    let ptx = target.join("ptx/release/fill/sm_90/fill.ptx");
    assert!(std::fs::read_to_string(&ptx).unwrap().contains(".entry fill("));
    assert!(target.join("ptx/release/fill/sm_90/fill.cubin").is_file());
    run(&["--cuda-gdb"]).assert_ok();
    assert!(std::fs::read_to_string(&ptx).unwrap().contains(".target sm_90, debug"), "-G: debug PTX");
}

fn bad_cuda_input_gets_a_clear_error() {
    nvcc_ready();
    // A header that does not exist.
    let k = cuda_crate("no_header", "", &[("cuda/k.cu", "#include \"missing.cuh\"\nextern \"C\" __global__ void k() {}\n")]);
    let run = k.build(&[]);
    run.assert_error(&["missing.cuh: No such file or directory"]);
    let d = run.errors()[0].clone();
    assert_eq!(format!("{}:{}:{}", d["file"].as_str().unwrap(), d["line"], d["column"]), "cuda/k.cu:1:10");
    assert!(d["notes"][0].as_str().unwrap().contains("cuda-include"));

    // A .cu that does not compile.
    let k = cuda_crate("no_compile", "", &[("cuda/k.cu", "extern \"C\" __global__ void k(int *o) {\n  o[0] = undefined_name;\n}\n")]);
    // cicc's temporary files of a failed run do not stay behind in TMPDIR (a path with a space).
    let tmp = tempfile::Builder::new().prefix("tmp dir ").tempdir().unwrap();
    let run = k.build_with(&[], |c| {
        c.env("TMPDIR", tmp.path());
    });
    let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(left.is_empty(), "left in TMPDIR: {left:?}");
    run.assert_error(&["nvcc could not compile cuda/k.cu for sm_80"]);
    let d = run.errors()[0].clone();
    assert_eq!((d["line"].as_u64(), d["column"].as_u64()), (Some(2), Some(10)), "{d}");
    assert!(d["message"].as_str().unwrap().contains("identifier \"undefined_name\" is undefined"), "{d}");

    // An unreadable file (a link to nothing).
    let k = cuda_crate("unreadable", "", &[("cuda/ok.cu", "extern \"C\" __global__ void ok() {}\n")]);
    std::os::unix::fs::symlink(k.dir.join("nowhere.cu"), k.dir.join("cuda/gone.cu")).unwrap();
    k.build(&[]).assert_error(&["could not read", "cuda/gone.cu"]);

    // A glob that matches nothing: a warning, and the build goes on.
    let k = cuda_crate(
        "empty_glob",
        "cuda-sources = [\"kernels/*.cu\", \"cuda/*.cu\"]",
        &[("cuda/ok.cu", "extern \"C\" __global__ void ok() {}\n")],
    );
    let run = k.build(&[]);
    run.assert_ok();
    let w = run.of("ptx-diagnostic");
    assert!(
        w.iter().any(|d| d["level"] == "warning" && d["message"].as_str().unwrap().contains("`kernels/*.cu` matches no file")),
        "{w:#?}"
    );

    // A define with an invalid name.
    let k = cuda_crate("bad_define", "cuda-defines = { \"2FAST\" = true }", &[("cuda/ok.cu", "extern \"C\" __global__ void ok() {}\n")]);
    k.build(&[]).assert_error(&["invalid `cuda-defines`", "`2FAST` is not a valid macro name"]);

    // nvcc too old for an arch (CUDA 13 dropped sm_70).
    let k = cuda_crate("old_arch", "", &[("cuda/ok.cu", "extern \"C\" __global__ void ok() {}\n")]);
    k.build(&["--arch", "compute_70"]).assert_error(&["`compute_70` is not supported by nvcc 13.", "CUDA 13 dropped archs below sm_75"]);
}

fn missing_nvcc_fails_only_the_cu_files() {
    let k = KernelCrate::example("mixed/kernels");
    let home = tempfile::tempdir().unwrap();
    let run = k.build_with(&["--arch", "sm_80"], |c| hide_cuda(c, home.path()));
    run.assert_error(&["nvcc not found (needed for 1 .cu file of `mixed-kernels`, e.g. cuda/leaky_relu.cu)", "cargo ptx setup"]);
    let rust_ptx = k.module_artifact("release", "sm_80", "mixed_kernels", "ptx");
    assert!(std::fs::read_to_string(rust_ptx).unwrap().contains(".entry scale_add("), "the Rust kernels still built");
}

fn cargo_ptx_check_reports_rules_without_compiling() {
    let k = cuda_crate(
        "checked",
        "",
        &[("cuda/k.cu", "extern \"C\" __global__ void k(unsigned *o) {\n  unsigned c;\n  asm(\"mov.u32 %0, %%clock;\" : \"=r\"(c));\n  asm(\"add.u32 %0, %0, %3;\" : \"+r\"(c));\n  o[0] = c;\n}\n")],
    );
    // From the crate's folder: paths are named from where the command runs.
    let out = cargo_ptx().current_dir(&k.dir).arg("check").arg(&k.dir).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("warning: asm reads `%clock`") && err.contains("--> cuda/k.cu:3:"), "{err}");
    assert!(err.contains("error: `%3` refers to operand 3, but this asm has 1 operand") && err.contains("--> cuda/k.cu:4:"), "{err}");
    assert!(!k.dir.join("target").exists() && !common::shared_target().join("ptx/release/checked").exists(), "check compiles nothing");

    k.write("cuda/k.cu", "extern \"C\" __global__ void k(unsigned *o) {\n  unsigned c;\n  asm volatile(\"mov.u32 %0, %%clock;\" : \"=r\"(c));\n  o[0] = c;\n}\n");
    let out = cargo_ptx().arg("check").arg(&k.dir).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("Checked checked (1 file, 0 warnings)"), "{err}");
}

/// A store without a "memory" clobber in a header two .cu files include (one through `..`, one
/// through another header): the build and `cargo ptx check` report it once, at the header's line
/// (most projects keep their asm in headers: DeepSpeed's `memory_access_utils.h`, ggml-cuda's
/// `cp-async.cuh`). The CUDA install's headers are not checked; a clean header says nothing.
fn a_headers_asm_is_checked_once_at_its_line() {
    nvcc_ready();
    let store = "#pragma once\n__device__ __forceinline__ void store(float *p, float v) {\n  asm volatile(\"st.global.f32 [%0], %1;\" :: \"l\"(p), \"f\"(v));\n}\n";
    let k = cuda_crate(
        "header_asm",
        "",
        &[
            ("cuda/include/store.h", store),
            ("cuda/include/all.cuh", "#include \"store.h\"\n#include <cuda_fp16.h>\n"),
            ("cuda/a.cu", "#include \"include/store.h\"\nextern \"C\" __global__ void a(float *p) { store(p, 1.f); }\n"),
            ("cuda/sub/b.cu", "#include \"../include/all.cuh\"\nextern \"C\" __global__ void b(float *p) { store(p, 2.f); }\n"),
        ],
    );
    let at_header = |diags: Vec<&serde_json::Value>| -> Vec<String> {
        diags
            .iter()
            .map(|d| format!("{} {}:{}:{}", d["message"].as_str().unwrap(), d["file"].as_str().unwrap(), d["line"], d["column"]))
            .collect()
    };
    let want = ["asm writes memory (`st.global.f32`) without a \"memory\" clobber cuda/include/store.h:3:17".to_string()];
    let run = k.build(&[]);
    run.assert_ok();
    assert_eq!(at_header(run.of("ptx-diagnostic")), want, "{}", run.stderr);
    // A no-op build reads the headers from its steps' records: the same warning.
    let run = k.build(&[]);
    assert!(run.of("ptx-artifact").iter().all(|a| a["fresh"] == true));
    assert_eq!(at_header(run.of("ptx-diagnostic")), want, "{}", run.stderr);
    // `cargo ptx check` follows the #include lines: the crate, and its folder of .cu files.
    let out = cargo_ptx().current_dir(&k.dir).args(["check", "."]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(err.matches("without a \"memory\" clobber").count(), 1, "{err}");
    assert!(err.contains("--> cuda/include/store.h:3:17") && err.contains("3 |   asm volatile(\"st.global.f32"), "{err}");
    assert!(err.contains("Checked header_asm (4 files, 1 warning)"), "{err}");
    let out = cargo_ptx().current_dir(&k.dir).args(["check", "cuda"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--> cuda/include/store.h:3:17") && err.contains("Checked cuda (4 files, 1 warning)"), "{err}");

    // With the clobber: nothing from the build or the check.
    k.write("cuda/include/store.h", &store.replace("\"f\"(v));", "\"f\"(v) : \"memory\");"));
    let run = k.build(&[]);
    run.assert_ok();
    assert!(run.of("ptx-diagnostic").is_empty(), "{:#?}", run.of("ptx-diagnostic"));
    let out = cargo_ptx().current_dir(&k.dir).args(["check", "."]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && err.contains("Checked header_asm (4 files, 0 warnings)"), "{err}");
}

pub fn tests() -> Vec<crate::harness::Test> {
    crate::tests![
        the_references_valid_forms_build_for_sm_80_and_sm_90_without_warnings,
        reference_error_examples_fail_at_their_line,
        ptxas_errors_point_at_the_cu_line_of_the_asm,
        rust_and_cuda_kernels_of_one_crate_land_in_one_artifact_set,
        a_header_edit_rebuilds_its_includers_and_a_no_op_runs_no_nvcc_or_ptxas,
        a_lone_cu_file_builds_and_cuda_gdb_adds_g,
        bad_cuda_input_gets_a_clear_error,
        missing_nvcc_fails_only_the_cu_files,
        cargo_ptx_check_reports_rules_without_compiling,
        a_headers_asm_is_checked_once_at_its_line,
    ]
}
