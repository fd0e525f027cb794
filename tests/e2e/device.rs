//! ptx-device in CI (no GPU): every helper compiled into one kernel crate for sm_80 and sm_90
//! and accepted by ptxas, the obvious-way twins compiled as nvcc compiles their C++, the
//! libdevice declarations against the .bc's symbol table, the inline-PTX checker over the crate's
//! own `asm!`, and typed launch methods for `#[kernel]`s.

use std::path::Path;
use std::process::Command;

use crate::common::{cuda, KernelCrate};

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

fn every_helper_builds_for_sm_80_and_sm_90_without_a_warning() {
    cuda();
    let k = KernelCrate::example("device-tour/kernels");
    let run = k.build(&["--release", "--arch", "sm_80,sm_90"]);
    run.assert_ok();
    let warnings: Vec<_> = run.of("ptx-diagnostic").into_iter().filter(|d| d["level"] != "error").collect();
    assert!(warnings.is_empty(), "{warnings:#?}");
    for arch in ["sm_80", "sm_90"] {
        for module in ["device_tour_kernels", "ops", "tour"] {
            let cubin = std::fs::read(k.module_artifact("release", arch, module, "cubin")).unwrap();
            assert_eq!(&cubin[..4], b"\x7fELF", "{module} for {arch}");
        }
        let ptx = std::fs::read_to_string(k.module_artifact("release", arch, "device_tour_kernels", "ptx")).unwrap();
        for needle in [
            "shfl.sync.down.b32",
            "shfl.sync.bfly.b32",
            "shfl.sync.up.b32",
            "shfl.sync.idx.b32",
            "vote.sync.ballot.b32",
            "activemask.b32",
            "match.any.sync.b32",
            "match.all.sync.b64",
            "bar.warp.sync",
            "fence.acq_rel.sys",
            "cp.async.ca.shared.global",
            "cp.async.wait_group 0",
            // The generic atomics, LLVM's now: the state space inferred, CAS at device scope.
            "atom.relaxed.gpu.global.cas.b64",
            "atom.global.add.f64",
            "atom.global.min.s64",
            "atom.shared.add.f32",
            "atom.global.inc.u32",
            "atom.shared.dec.u32",
            "%clock64",
            "%globaltimer",
            "___PTX_SHARED[",
            ".extern .shared .align 16 .b8 __ptx_device_dynamic_shared[]",
            // The helpers of issue 12, each compiled and accepted by ptxas for both archs.
            "cp.async.cg.shared.global",
            "ld.global.nc.v4.f32",
            "ld.global.nc.v2.f32",
            "ld.global.v4.f32",
            "st.global.v4.u32",
            "st.shared.v4.f32",
            "ld.shared.v4.f32",
            "st.shared.v2.f64",
            "ld.shared.v2.u32",
            "atom.shared.add.u32",
            "red.shared.add.u32",
            "red.shared.or.b32",
            "atom.shared.max.u32",
            "atom.shared.cas.b32",
            "atom.shared.exch.b32",
            "atom.global.add.u32",
            "atom.relaxed.cta.add.u32",
            "atom.relaxed.sys.add.u32",
            "red.add.u32",
        ] {
            assert!(ptx.contains(needle), "{arch}: no `{needle}` in the PTX");
        }
        // A shuffle in 8-lane segments packs (32 - 8) << 8 | 31 into its `c` operand.
        assert!(entry(&ptx, "rs_helpers").contains(", 6175, -1;"), "{arch}: no width-8 shuffle");
        shared_memory_twins_use_the_shared_state_space(arch, &ptx);
        obvious_twins_compile_as_nvccs(arch, &ptx);
        let cuda = std::fs::read_to_string(k.module_artifact("release", arch, "obvious", "ptx")).unwrap();
        let bounded = entry_header(&cuda, "cu_histogram16");
        assert!(
            bounded.contains(".maxntid 256, 1, 1") && bounded.contains(".minnctapersm 4"),
            "{arch}: nvcc's __launch_bounds__:\n{bounded}"
        );
    }
    let cubin = run
        .of("ptx-artifact")
        .into_iter()
        .find(|a| a["kind"] == "cubin" && a["arch"] == "sm_90" && a["path"].as_str().unwrap().ends_with("device_tour_kernels.cubin"))
        .unwrap()
        .clone();
    let names: Vec<&str> = cubin["kernels"].as_array().unwrap().iter().map(|k| k["name"].as_str().unwrap()).collect();
    assert_eq!(names.len(), 23, "{names:?}");
}

/// The body of `.entry name` in a PTX text.
fn entry<'a>(ptx: &'a str, name: &str) -> &'a str {
    let start = ptx.find(&format!(".entry {name}(")).unwrap_or_else(|| panic!("no kernel {name}"));
    let end = ptx[start..].find("\n}\n").map_or(ptx.len(), |e| start + e);
    &ptx[start..end]
}

/// Issue 12's CI check: the Rust twins that use shared memory reach it through the shared state
/// space (`ld.shared`/`st.shared`, `red.shared`/`atom.shared`), with no `cvta` between generic and
/// shared addresses for their arrays, and FMA contraction (fmad, on by default) in SGEMM.
fn shared_memory_twins_use_the_shared_state_space(arch: &str, ptx: &str) {
    for kernel in ["rs_sgemm", "rs_transpose", "rs_histogram", "rs_helpers", "rs_reduce_shared"] {
        let body = entry(ptx, kernel);
        assert!(body.contains("ld.shared.") && body.contains("st.shared."), "{arch} {kernel}: no ld.shared/st.shared:\n{body}");
        assert!(!body.contains("cvta.shared") && !body.contains("cvta.to.shared"), "{arch} {kernel}: a cvta round trip:\n{body}");
        assert!(!body.contains("ld.u32") && !body.contains("ld.f32") && !body.contains("ld.b32\t"), "{arch} {kernel}: a generic load");
    }
    assert!(entry(ptx, "rs_histogram").contains("red.shared.add.u32"), "{arch}: the histogram's shared atomics");
    let sgemm = entry(ptx, "rs_sgemm");
    assert_eq!(sgemm.matches("fma.rn.f32").count(), 512, "{arch}: 8 x 8 x 8 unrolled FMAs in SGEMM");
    assert_eq!(sgemm.matches("ld.shared.v4").count(), 32, "{arch}: 16-byte shared loads in SGEMM");
    assert!(!sgemm.contains("cvta.global"), "{arch}: a global pointer went back to generic for the asm");
}

/// From `.entry name(` to the body's `{`: the parameters and the tuning directives.
fn entry_header<'a>(ptx: &'a str, name: &str) -> &'a str {
    let body = entry(ptx, name);
    &body[..body.find("\n{").unwrap_or(body.len())]
}

/// Issue 23's CI check: the twins written the obvious way (`src/obvious.rs`) compile to what
/// nvcc makes of the same C++: shared atomics in the shared state space (never a generic `atom`
/// on a shared array), no local frame for the by-value loops, the fixed-trip loops unrolled, and
/// `launch_bounds` as `.maxntid`/`.minnctapersm`.
fn obvious_twins_compile_as_nvccs(arch: &str, ptx: &str) {
    for kernel in ["rs_histogram_obvious", "rs_histogram16_obvious"] {
        let body = entry(ptx, kernel);
        let shared = body.lines().filter(|l| l.trim_start().starts_with("atom.shared.add.u32")).count();
        let generic = body.lines().filter(|l| l.trim_start().starts_with("atom.add.") || l.trim_start().starts_with("red.add.")).count();
        let per_load = if kernel == "rs_histogram_obvious" { 4 } else { 16 };
        assert_eq!((shared, generic), (per_load, 0), "{arch} {kernel}: one atom.shared per byte, unrolled, no generic atom:\n{body}");
        assert!(body.contains("atom.global.add.u32") && !body.contains("cvta.shared"), "{arch} {kernel}: the flush to global memory");
    }
    for kernel in [
        "rs_histogram_obvious",
        "rs_histogram16_obvious",
        "rs_sgemm_obvious",
        "rs_transpose_obvious",
        "rs_conv5_obvious",
        "rs_dense16_obvious",
    ] {
        let body = entry(ptx, kernel);
        assert!(!body.contains(".local") && !body.contains("__local_depot"), "{arch} {kernel}: a local-memory frame:\n{body}");
    }
    let fmas = |kernel: &str| entry(ptx, kernel).matches("fma.rn.f32").count();
    assert_eq!(fmas("rs_sgemm_obvious"), 512, "{arch}: the 8-step loop over 8 x 8 FMAs unrolled, as nvcc's build unrolls it");
    assert_eq!(fmas("rs_conv5_obvious"), 25, "{arch}: the 5 x 5 taps unrolled");
    // nvcc unrolls the 32 x 16 loop only by four: left rolled here, as the default's upper bound.
    assert_eq!(fmas("rs_dense16_obvious"), 16, "{arch}: the 32-step loop of 16 FMAs stays a loop");
    let transpose = entry(ptx, "rs_transpose_obvious");
    assert_eq!(transpose.matches("ld.shared.").count(), 4, "{arch}: the step_by loop unrolled");
    let header = entry_header(ptx, "rs_histogram16_obvious");
    assert!(header.contains(".maxntid 256") && header.contains(".minnctapersm 4"), "{arch}: launch_bounds(256, 4):\n{header}");
    assert!(!entry_header(ptx, "rs_histogram_obvious").contains(".maxntid"), "{arch}: no bound where none was asked");
}

fn a_shared_array_over_48_kib_is_an_error_at_its_line() {
    cuda();
    let k = KernelCrate::new(
        "big_shared_kernels",
        "archs = [\"sm_90\"]",
        "#![no_std]\nuse ptx_device::prelude::*;\n\n#[kernel]\npub unsafe fn k(out: *mut f32) {\n    let s = shared_array![f32; 16384].cast::<f32>();\n    *s.add(thread_idx().x as usize) = 1.0;\n    sync_threads();\n    *out = *s.add(3);\n}\n",
    );
    let device = root().join("ptx-device");
    let manifest = std::fs::read_to_string(k.dir.join("Cargo.toml")).unwrap();
    k.write(
        "Cargo.toml",
        &manifest.replace(
            "[package.metadata.ptx]",
            &format!("[dependencies]\nptx-device = {{ path = {:?} }}\n\n[package.metadata.ptx]", device.display().to_string()),
        ),
    );
    let run = k.build(&["--release"]);
    run.assert_error(&[
        "src/lib.rs:6:13: this `shared_array!` of kernel crate `big_shared_kernels` takes 65536 bytes of shared memory, more than the 49152 bytes",
        "dynamic_shared",
    ]);
}

fn fmad_and_unroll_threshold_change_the_code() {
    cuda();
    let k = KernelCrate::new(
        "fmad_kernels",
        "archs = [\"sm_80\"]",
        "#![no_std]\n#![feature(abi_ptx, stdarch_nvptx)]\n#[no_mangle]\npub unsafe extern \"ptx-kernel\" fn k(x: *mut f32, a: f32, b: f32) { *x = *x * a + b; }\n#[no_mangle]\npub unsafe extern \"ptx-kernel\" fn l(out: *mut f32, a: f32) {\n    let mut x = a;\n    for i in 0..128 {\n        x = x * a + 1.0;\n        *out.add(i) = x;\n    }\n}\n#[panic_handler]\nfn panic(_: &core::panic::PanicInfo) -> ! {\n    unsafe { core::arch::nvptx::trap() }\n}\n",
    );
    let ptx = |args: &[&str]| {
        k.build(args).assert_ok();
        std::fs::read_to_string(k.artifact("release", "sm_80", "ptx")).unwrap()
    };
    let body = |ptx: &str, name: &str| entry(ptx, name).to_string();
    let default = ptx(&["--release"]);
    assert!(body(&default, "k").contains("fma.rn.f32"), "{default}");
    // The default budget unrolls the 128-step loop completely, as nvcc does the same C++.
    let l = body(&default, "l");
    assert!(!l.contains("bra") && l.matches("fma.rn.f32").count() == 128, "{l}");
    let no_fmad = ptx(&["--release", "--fmad=false"]);
    assert!(!body(&no_fmad, "k").contains("fma.rn.f32") && body(&no_fmad, "k").contains("mul.rn.f32"), "{no_fmad}");
    // LLVM's own budget leaves it rolled (partly unrolled, with a branch back).
    let rolled = ptx(&["--release", "--unroll-threshold", "300"]);
    assert!(body(&rolled, "l").contains("bra"), "{rolled}");
}

fn an_atomic_on_a_type_ptx_lacks_and_bad_launch_bounds_are_errors_at_the_line() {
    cuda();
    let k = KernelCrate::new(
        "bad_atomic_kernels",
        "archs = [\"sm_90\"]",
        "#![no_std]\nuse ptx_device::prelude::*;\n\n#[kernel]\npub unsafe fn k(out: *mut u8) {\n    atomic_add(out, 1u8);\n}\n\n#[kernel(launch_bounds(2048, 2))]\npub unsafe fn b(out: *mut u32) {\n    atomic_add(out, 1u32);\n}\n",
    );
    let device = root().join("ptx-device");
    let manifest = std::fs::read_to_string(k.dir.join("Cargo.toml")).unwrap();
    k.write(
        "Cargo.toml",
        &manifest.replace(
            "[package.metadata.ptx]",
            &format!("[dependencies]\nptx-device = {{ path = {:?} }}\n\n[package.metadata.ptx]", device.display().to_string()),
        ),
    );
    let run = k.build(&["--release"]);
    run.assert_error(&[
        "PTX has no atomic add for `u8`: `atomic_add` takes `u32`, `i32`, `u64`, `i64`, `f32` or `f64`",
        "`launch_bounds(2048)`: a block has at most 1024 threads on every GPU",
    ]);
    // Each at its own token: the call, and the number in the attribute.
    let at = |needle: &str| {
        let e = run.errors().into_iter().find(|e| e["message"].as_str().unwrap_or_default().contains(needle)).unwrap();
        (e["file"].as_str().unwrap_or_default().to_string(), e["line"].as_u64(), e["column"].as_u64())
    };
    assert_eq!(at("atomic add for `u8`"), ("src/lib.rs".to_string(), Some(6), Some(5)));
    assert_eq!(at("launch_bounds(2048)"), ("src/lib.rs".to_string(), Some(9), Some(24)));
}

fn bad_fmad_and_unroll_threshold_values_are_refused() {
    let k = KernelCrate::new("badopt_kernels", "archs = [\"sm_80\"]", "#![no_std]\n");
    k.build(&["--unroll-threshold", "lots"]).assert_usage_error(&["`lots` is not an unroll threshold", "e.g. `2000`"]);
    k.build(&["--fmad=sometimes"]).assert_usage_error(&["--fmad", "sometimes"]);
    let manifest = std::fs::read_to_string(k.dir.join("Cargo.toml")).unwrap();
    k.write("Cargo.toml", &manifest.replace("archs = [\"sm_80\"]", "archs = [\"sm_80\"]\nunroll-threshold = -3"));
    k.build(&[]).assert_error(&["invalid `unroll-threshold` in [package.metadata.ptx]", "`-3` is not an unroll threshold"]);
}

fn libdevice_declarations_match_the_bitcode_exactly() {
    let cuda = cuda();
    let libdevice = &cuda.libdevice.as_ref().unwrap().path;
    let rust = ptx_build::internals::tools::Rust::find("nightly").unwrap();
    let nm = rust.require().unwrap().tool("llvm-nm");
    let out = Command::new(nm).args(["--defined-only", "--extern-only", "--format=just-symbols"]).arg(libdevice).output().unwrap();
    assert!(out.status.success());
    let mut defined: Vec<String> =
        String::from_utf8_lossy(&out.stdout).lines().filter(|l| l.starts_with("__nv_")).map(String::from).collect();
    defined.sort();
    let src = std::fs::read_to_string(root().join("ptx-device/src/libdevice.rs")).unwrap();
    let mut declared: Vec<String> =
        src.lines().filter_map(|l| l.trim().strip_prefix("pub fn ")).map(|l| l.split('(').next().unwrap().to_string()).collect();
    declared.sort();
    assert_eq!(declared.len(), 349);
    assert_eq!(declared, defined, "regenerate with ptx-device/tools/gen-libdevice.py");
}

fn the_device_crate_passes_the_inline_ptx_checker() {
    let mut diagnostics = Vec::new();
    for (file, parsed) in ptx_build::internals::rust_modules::module_files(&root().join("ptx-device/src/lib.rs")).unwrap() {
        ptx_build::internals::inline_ptx::check_rust_file(&file, &parsed, &mut diagnostics);
    }
    assert!(diagnostics.is_empty(), "{diagnostics:#?}");
}

pub fn tests() -> Vec<crate::harness::Test> {
    crate::tests![
        every_helper_builds_for_sm_80_and_sm_90_without_a_warning,
        a_shared_array_over_48_kib_is_an_error_at_its_line,
        fmad_and_unroll_threshold_change_the_code,
        bad_fmad_and_unroll_threshold_values_are_refused,
        libdevice_declarations_match_the_bitcode_exactly,
        the_device_crate_passes_the_inline_ptx_checker,
        an_atomic_on_a_type_ptx_lacks_and_bad_launch_bounds_are_errors_at_the_line,
    ]
}
