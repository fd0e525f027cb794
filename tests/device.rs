//! ptx-device in CI (no GPU): every helper compiled into one kernel crate for sm_80 and sm_90
//! and accepted by ptxas, the libdevice declarations against the .bc's symbol table, the
//! inline-PTX checker over the crate's own `asm!`, and typed launch methods for `#[kernel]`s.

mod common;

use std::path::Path;
use std::process::Command;

use common::{cuda, KernelCrate};

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

#[test]
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
            "atom.cas.b64",
            "atom.add.f64",
            "atom.min.s64",
            "%clock64",
            "%globaltimer",
            ".shared .align 4 .b8 __ptx_shared_device_tour_kernels_",
            ".extern .shared .align 16 .b8 __ptx_device_dynamic_shared[]",
        ] {
            assert!(ptx.contains(needle), "{arch}: no `{needle}` in the PTX");
        }
    }
    let cubin = run
        .of("ptx-artifact")
        .into_iter()
        .find(|a| a["kind"] == "cubin" && a["arch"] == "sm_90" && a["path"].as_str().unwrap().ends_with("device_tour_kernels.cubin"))
        .unwrap()
        .clone();
    let names: Vec<&str> = cubin["kernels"].as_array().unwrap().iter().map(|k| k["name"].as_str().unwrap()).collect();
    assert_eq!(names.len(), 11, "{names:?}");
}

#[test]
fn libdevice_declarations_match_the_bitcode_exactly() {
    let cuda = cuda();
    let libdevice = &cuda.libdevice.as_ref().unwrap().path;
    let rust = ptx_build::toolchain::Rust::find("nightly").unwrap();
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

#[test]
fn the_device_crate_passes_the_inline_ptx_checker() {
    let mut diagnostics = Vec::new();
    for (file, parsed) in ptx_build::signature::module_files(&root().join("ptx-device/src/lib.rs")).unwrap() {
        ptx_build::inline_ptx::check_rust_file(&file, &parsed, &mut diagnostics);
    }
    assert!(diagnostics.is_empty(), "{diagnostics:#?}");
}
