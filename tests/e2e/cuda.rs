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
    // Lone .cu files of two folders, the header's through `-I`: its finding once, not per file.
    let out = cargo_ptx()
        .current_dir(k.dir.join("cuda"))
        .args(["build", "a.cu", "sub/b.cu", "-I", "include", "--arch", "sm_80"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(err.matches("without a \"memory\" clobber").count(), 1, "{err}");
    // Without `-I`: sub/b.cu reaches the header through `../include/`, outside its folder.
    let out = cargo_ptx().current_dir(k.dir.join("cuda")).args(["build", "sub/b.cu", "--arch", "sm_80"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(err.matches("without a \"memory\" clobber").count(), 1, "{err}");
    assert!(err.contains("include/store.h:3:17"), "{err}");

    // With the clobber: nothing from the build or the check.
    k.write("cuda/include/store.h", &store.replace("\"f\"(v));", "\"f\"(v) : \"memory\");"));
    let run = k.build(&[]);
    run.assert_ok();
    assert!(run.of("ptx-diagnostic").is_empty(), "{:#?}", run.of("ptx-diagnostic"));
    let out = cargo_ptx().current_dir(&k.dir).args(["check", "."]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && err.contains("Checked header_asm (4 files, 0 warnings)"), "{err}");
}

/// A folder of .cu files whose headers lie outside it, found with nvcc's `-I`: DeepSpeed's
/// `csrc/transformer/*.cu` include `"memory_access_utils.h"` from `csrc/includes` (where
/// `DS_D_INLINE` is defined), and a kernel includes CUTLASS from `third_party/cutlass/include`
/// (`CUTLASS_DEVICE` from its helper_macros.hpp). Without `-I` neither header is found;
/// with it, their asm is checked at the headers' lines; a folder that is not there is named.
fn check_finds_headers_through_include_folders() {
    let dir = tempfile::Builder::new().prefix("cargo-ptx check -I ").tempdir().unwrap();
    let root = dir.path();
    for (path, text) in [
        ("csrc/includes/ds_kernel_utils.h", "#pragma once\n#include <cuda.h>\n\n#define DS_HD_INLINE __host__ __device__ __forceinline__\n#define DS_D_INLINE __device__ __forceinline__\n\n#ifdef __HIP_PLATFORM_AMD__\nconstexpr int hw_warp_size = ROCM_WAVEFRONT_SIZE;\n#else\nconstexpr int hw_warp_size = 32;\n#endif\n"),
        ("csrc/includes/memory_access_utils.h", "#pragma once\n#include \"ds_kernel_utils.h\"\n\nnamespace mem_access {\n\nDS_D_INLINE void store_global_cs(void* dst, const float4& v)\n{\n    asm volatile(\"st.global.cs.v4.f32 [%0], {%1, %2, %3, %4};\\n\"\n                 :\n                 : \"l\"(dst), \"f\"(v.x), \"f\"(v.y), \"f\"(v.z), \"f\"(v.w));\n}\n\n}  // namespace mem_access\n"),
        ("csrc/transformer/dropout_kernels.cu", "#include \"memory_access_utils.h\"\n#include <cutlass/arch/memory_sm75.h>\n\n__global__ void dropout(float4 *out, float4 v) { mem_access::store_global_cs(out, v); }\n"),
        ("third_party/cutlass/include/cutlass/detail/helper_macros.hpp", "#pragma once\n\n#if defined(__CUDACC__) || defined(_NVHPC_CUDA)\n#define CUTLASS_HOST_DEVICE __forceinline__ __device__ __host__\n#define CUTLASS_DEVICE __forceinline__ __device__\n#else\n#define CUTLASS_HOST_DEVICE inline\n#define CUTLASS_DEVICE inline\n#endif\n"),
        ("third_party/cutlass/include/cutlass/arch/memory_sm75.h", "#pragma once\n#include \"cutlass/detail/helper_macros.hpp\"\n\nnamespace cutlass {\nnamespace arch {\n\nCUTLASS_DEVICE\nvoid ldsm_x1(unsigned &d, unsigned addr) {\n  asm volatile (\"ldmatrix.sync.aligned.x1.m8n8.shared.b16 {%0}, [%2];\" : \"=r\"(d) : \"r\"(addr));\n}\n\n} // namespace arch\n} // namespace cutlass\n"),
    ] {
        std::fs::create_dir_all(root.join(path).parent().unwrap()).unwrap();
        std::fs::write(root.join(path), text).unwrap();
    }
    let check = |args: &[&str]| {
        let out = cargo_ptx().current_dir(root).arg("check").args(args).output().unwrap();
        (out.status.success(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (ok, err) = check(&["csrc/transformer"]);
    assert!(ok && err.contains("Checked csrc/transformer (1 file, 0 warnings)"), "no header found without -I:\n{err}");

    let (ok, err) =
        check(&["csrc/transformer", "-I", "csrc/includes", "--include", &root.join("third_party/cutlass/include").display().to_string()]);
    assert!(!ok, "{err}");
    assert!(err.contains("warning: asm writes memory (`st.global.cs.v4.f32`) without a \"memory\" clobber"), "{err}");
    assert!(err.contains("--> csrc/includes/memory_access_utils.h:8:19"), "named as the include folder was given:\n{err}");
    assert!(err.contains("error: `%2` refers to operand 2, but this asm has 2 operands"), "{err}");
    assert!(err.contains("third_party/cutlass/include/cutlass/arch/memory_sm75.h:9:"), "{err}");
    assert!(err.contains("1 inline-PTX error"), "{err}");

    let (ok, err) = check(&["csrc/transformer", "-I", "csrc/include"]);
    assert!(!ok, "{err}");
    assert!(err.contains("invalid `cuda-include` in the command line: `csrc/include` does not exist (relative paths start at"), "{err}");
}

/// CUDA's own headers, checked as a user's through `-I` (1,216 files of CUDA 13.0 from these
/// includes): functions qualified by CUDA's macros (`__SM_32_INTRINSICS_DECL__`, `_CCCL_DEVICE`)
/// are device code now, and give no error and no warning but the known ones: cccl's
/// non-volatile `%smid` read (the PTX ISA calls `%smid` volatile), and three asm outside device
/// code the checker reads as PTX (an `asm("clock32")` label under `__QNX__`, and ARM's `yield`
/// and x86's `pause` in macros under host-arch `#if`s).
fn check_of_cudas_own_headers_finds_only_the_known() {
    let nvcc = common::nvcc();
    let include = nvcc.parent().and_then(Path::parent).unwrap().join("include");
    let dir = tempfile::tempdir().unwrap();
    let includes = [
        "cuda_runtime.h",
        "cuda_fp16.h",
        "cuda_bf16.h",
        "cuda_fp8.h",
        "cuda_pipeline.h",
        "cooperative_groups.h",
        "cooperative_groups/memcpy_async.h",
        "cooperative_groups/reduce.h",
        "mma.h",
        "cuda/ptx",
        "cuda/pipeline",
        "cuda/barrier",
        "cuda/atomic",
        "cub/cub.cuh",
        "thrust/device_vector.h",
    ];
    let src: String = includes.iter().map(|h| format!("#include <{h}>\n")).collect();
    std::fs::write(dir.path().join("all.cu"), src).unwrap();
    let out = cargo_ptx()
        .args(["check", "--message-format", "json"])
        .arg(dir.path())
        .arg("-I")
        .arg(&include)
        .arg("-I")
        .arg(include.join("cccl"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let known = [
        ("crt/common_functions.h", "a PTX instruction in this asm does not end in `;`"),
        ("cuda/__ptx/instructions/generated/get_sreg.h", "asm reads `%smid`, which changes while the thread runs, but is not `volatile`"),
        ("cuda/std/__thread/threading_support.h", "a PTX instruction in this asm does not end in `;`"),
    ];
    let diags: Vec<serde_json::Value> = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["reason"] == "ptx-diagnostic")
        .collect();
    for d in &diags {
        let (file, message) = (d["file"].as_str().unwrap_or_default(), d["message"].as_str().unwrap_or_default());
        assert!(
            known.iter().any(|(f, m)| file.ends_with(f) && message == *m),
            "a new finding in CUDA's headers at {file}:{}: {message}",
            d["line"]
        );
    }
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
        check_finds_headers_through_include_folders,
        check_of_cudas_own_headers_finds_only_the_known,
    ]
}
