//! `cargo ptx build` end to end: real nightly, real LLVM, real ptxas (no GPU needed).

use crate::common;
use crate::common::{cargo_ptx, cuda, hide_cuda, KernelCrate};

const PANIC: &str = "#[panic_handler]\nfn panic(_: &core::panic::PanicInfo) -> ! {\n    unsafe { core::arch::nvptx::trap() }\n}\n";

fn kernel(name: &str, body: &str) -> KernelCrate {
    KernelCrate::new(
        name,
        "archs = [\"sm_80\"]",
        &format!("#![no_std]\n#![feature(abi_ptx, stdarch_nvptx, asm_experimental_arch)]\n{body}\n{PANIC}"),
    )
}

fn saxpy_example_builds_ptx_and_cubins_for_sm_80_and_sm_90() {
    cuda();
    let k = KernelCrate::example("saxpy");
    let run = k.build(&["--release", "--arch", "sm_80,sm_90"]);
    run.assert_ok();

    let artifacts = run.of("ptx-artifact");
    assert_eq!(artifacts.len(), 4, "PTX and cubin for two archs: {:#?}", artifacts);
    for arch in ["sm_80", "sm_90"] {
        let ptx = std::fs::read_to_string(k.artifact("release", arch, "ptx")).unwrap();
        assert!(ptx.contains(".visible .entry saxpy("), "{ptx}");
        assert!(ptx.contains(".visible .entry exp_kernel("));
        assert!(ptx.lines().any(|l| l.trim() == format!(".target {arch}")), "{ptx}");
        assert!(!ptx.contains("__nv_"), "libdevice calls are resolved and inlined");
        assert!(!ptx.contains("__nvvm_reflect"), "NVVMReflect ran");
        assert!(!ptx.contains(".func"), "only the kernels are left, not libdevice: {} lines", ptx.lines().count());
        // Seven kernels in about 420 lines; all of libdevice would be tens of thousands.
        assert!(ptx.lines().count() < 700, "the PTX holds only what the kernels need");
        let cubin = std::fs::read(k.artifact("release", arch, "cubin")).unwrap();
        assert_eq!(&cubin[..4], b"\x7fELF", "a cubin is an ELF file");
    }
    let cubin = artifacts.iter().find(|a| a["kind"] == "cubin" && a["arch"] == "sm_90").unwrap();
    let names: Vec<&str> = cubin["kernels"].as_array().unwrap().iter().map(|k| k["name"].as_str().unwrap()).collect();
    assert_eq!(names.len(), 7, "{names:?}");
    assert!(names.contains(&"saxpy") && names.contains(&"exp_kernel") && names.contains(&"empty"));
    // The generic kernel's instances and the macro-stamped kernels.
    assert!(["axpy_f32", "axpy_f64", "negate_f32", "negate_i32"].iter().all(|k| names.contains(k)), "{names:?}");
    for kernel in cubin["kernels"].as_array().unwrap() {
        assert!(kernel["registers"].as_u64().unwrap() > 0, "ptxas reported registers: {kernel}");
        for field in ["spill_stores", "spill_loads", "shared_bytes", "stack_bytes"] {
            assert!(kernel[field].is_u64(), "{field} in {kernel}");
        }
    }
    let paths: Vec<&str> = artifacts.iter().map(|a| a["path"].as_str().unwrap()).collect();
    assert!(paths.iter().all(|p| p.contains("e2e target ü/ptx/release/saxpy-kernels/sm_")), "{paths:?}");
}

fn a_second_build_reuses_everything_and_an_edit_rebuilds() {
    cuda();
    let k = kernel("rebuild_kernels", "#[no_mangle]\npub unsafe extern \"ptx-kernel\" fn scale(x: *mut f32) { *x *= 2.0; }\n");
    let first = k.build(&["--release"]);
    first.assert_ok();
    assert!(first.of("ptx-artifact").iter().all(|a| a["fresh"] == false));

    let work = std::fs::read_dir(common::shared_target().join("ptx/release/rebuild_kernels"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with(".work-"))
        .unwrap();
    let module = work.join("rebuild_kernels.bc");
    let mtime = || std::fs::metadata(&module).unwrap().modified().unwrap();
    let before = mtime();
    let second = k.build(&["--release"]);
    second.assert_ok();
    assert_eq!(mtime(), before, "a no-op build runs no compiler: the linked module is untouched");
    assert!(second.of("ptx-artifact").iter().all(|a| a["fresh"] == true), "{}", second.stdout);

    std::fs::write(
        k.dir.join("src/lib.rs"),
        format!("#![no_std]\n#![feature(abi_ptx, stdarch_nvptx)]\n#[no_mangle]\npub unsafe extern \"ptx-kernel\" fn scale(x: *mut f32) {{ *x *= 3.0; }}\n{PANIC}"),
    )
    .unwrap();
    // Run from another folder: source paths must not depend on the current directory.
    let third = k.build_with(&["--release"], |c| {
        c.current_dir(std::env::temp_dir());
    });
    third.assert_ok();
    assert!(third.of("ptx-artifact").iter().all(|a| a["fresh"] == false), "{}", third.stdout);
    let ptx = std::fs::read_to_string(k.artifact("release", "sm_80", "ptx")).unwrap();
    assert!(ptx.contains("0f40400000"), "the new constant 3.0 is in the PTX:\n{ptx}");
}

fn unknown_archs_are_refused_with_the_reason() {
    let k = kernel("arch_kernels", "");
    for (arch, why) in [
        ("sm_8", "needs major and minor digits"),
        ("sm_999", "no NVIDIA GPU has compute capability 99.9"),
        ("ptx_80", "an arch starts with `sm_`"),
    ] {
        k.build(&["--arch", arch]).assert_usage_error(&[&format!("invalid value '{arch}' for '--arch <ARCH>': "), why]);
    }
    assert!(!common::shared_target().join("ptx/release/arch_kernels").exists(), "nothing was written");
}

fn an_arch_ptxas_does_not_support_is_refused() {
    cuda();
    let k = kernel("old_arch_kernels", "");
    k.build(&["--arch", "sm_70"]).assert_error(&[
        "`sm_70` is not supported by ptxas 13.",
        "CUDA 13 dropped archs below sm_75",
        "compute_70",
    ]);
    // Below sm_70 rustc itself makes no PTX (from Rust 1.97): PTX only is no way out there.
    let rust = ptx_build::internals::tools::Rust::find(ptx_build::internals::tools::DEFAULT_TOOLCHAIN).unwrap();
    if rust.min_capability() == Some(70) {
        let run = k.build(&["--arch", "compute_60"]);
        run.assert_error(&["`compute_60` is not supported by rustc 1.", "for sm_70 and newer only", "choose sm_70 or newer"]);
        assert!(!run.error_text().contains("known but unsupported"), "{}", run.error_text());
    }
}

fn no_arch_and_no_gpu_says_how_to_choose() {
    let k = KernelCrate::new("noarch_kernels", "", "#![no_std]\n");
    k.build(&[]).assert_error(&["no GPU arch chosen for noarch_kernels", "--arch sm_80", "archs = [\"sm_80\"]"]);
    k.build(&["--arch", "native"]).assert_error(&["`--arch native` needs a GPU"]);
}

fn a_folder_without_kernel_crates_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("Cargo.toml"), "[package]\nname = \"host\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[workspace]\n")
        .unwrap();
    std::fs::write(dir.path().join("src/lib.rs"), "").unwrap();
    let out = cargo_ptx().arg("build").arg(dir.path()).args(["--arch", "sm_80", "--message-format", "json"]).output().unwrap();
    let run = common::Run::from(out);
    run.assert_error(&["no kernel crate found in", "[package.metadata.ptx]"]);
    // A host crate whose build.rs builds its kernels: `cargo build` is the way, not metadata on
    // it (which would build its host code for the GPU).
    let manifest =
        "[package]\nname = \"host\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[build-dependencies]\nptx-build = \"0.1\"\n[workspace]\n";
    std::fs::write(dir.path().join("Cargo.toml"), manifest).unwrap();
    let out = cargo_ptx().arg("build").current_dir(dir.path()).args(["--arch", "sm_80", "--message-format", "json"]).output().unwrap();
    common::Run::from(out).assert_error(&[
        "no kernel crate found in",
        "`host` builds its kernels in build.rs (ptx-build's Builder): `cargo build -p host` builds them",
        "`cargo ptx build path/to/file.cu --arch sm_80` compiles one .cu file alone",
    ]);
}

fn rustc_errors_come_through_unchanged_with_their_line() {
    let k = kernel("broken_kernels", "#[no_mangle]\npub unsafe extern \"ptx-kernel\" fn k(x: *mut u32) {\n    *x = 1.5;\n}\n");
    let run = k.build(&["--release"]);
    run.assert_error(&["could not compile kernel crate `broken_kernels` for nvptx64-nvidia-cuda (1 error above)"]);
    let e = run.errors().into_iter().find(|d| d["message"].as_str().unwrap().contains("mismatched types")).expect("rustc's error");
    assert!(e["file"].as_str().unwrap().ends_with("src/lib.rs"), "{e}");
    assert_eq!(e["line"], 5);
    // Human output prints rustc's own rendering.
    let human = cargo_ptx().arg("build").arg(&k.dir).arg("--target-dir").arg(common::shared_target()).arg("--release").output().unwrap();
    let stderr = String::from_utf8_lossy(&human.stderr);
    assert!(stderr.contains("error[E0308]: mismatched types") && stderr.contains("src/lib.rs:5:10"), "{stderr}");
    // A stray closing brace: the build shows rustc's error at it; `check`, which runs no
    // compiler, says the file does not parse and how to see where.
    let lib = std::fs::read_to_string(k.dir.join("src/lib.rs")).unwrap().replace("*x = 1.5;", "*x = 1;") + "}\n";
    k.write("src/lib.rs", &lib);
    let human = cargo_ptx().arg("build").arg(&k.dir).arg("--target-dir").arg(common::shared_target()).arg("--release").output().unwrap();
    let stderr = String::from_utf8_lossy(&human.stderr);
    assert!(stderr.contains("unexpected closing delimiter: `}`") && !stderr.contains("does not parse"), "{stderr}");
    let check = cargo_ptx().arg("check").arg(&k.dir).output().unwrap();
    let stderr = String::from_utf8_lossy(&check.stderr);
    assert!(!check.status.success() && stderr.contains("src/lib.rs:"), "{stderr}");
    assert!(stderr.contains("the kernel crate's Rust does not parse: its delimiters do not pair"), "{stderr}");
    assert!(stderr.contains("`cargo check` in the kernel crate shows rustc's error"), "{stderr}");
}

fn a_misspelled_libdevice_function_is_named() {
    cuda();
    let k = kernel(
        "nvtypo_kernels",
        "extern \"C\" { fn __nv_expff(x: f32) -> f32; }\n#[no_mangle]\npub unsafe extern \"ptx-kernel\" fn k(x: *mut f32) { *x = __nv_expff(*x); }\n",
    );
    k.build(&["--release"]).assert_error(&["calls `__nv_expff`, which libdevice", "does not define"]);
}

fn invalid_ptx_in_asm_points_at_the_rust_line() {
    cuda();
    let k = kernel(
        "asm_kernels",
        "use core::arch::asm;\n#[no_mangle]\npub unsafe extern \"ptx-kernel\" fn k(out: *mut u32, a: u32) {\n    let r: u32;\n    asm!(\"add.f64 {0}, {1}, {1};\", out(reg32) r, in(reg32) a);\n    *out = r;\n}\n",
    );
    let run = k.build(&["--release"]);
    run.assert_error(&["ptxas rejected the PTX of `asm_kernels` for sm_80"]);
    let d = run
        .errors()
        .into_iter()
        .find(|d| d["message"].as_str().unwrap().contains("ptxas: Arguments mismatch for instruction 'add'"))
        .expect("ptxas's error");
    assert_eq!(d["file"], "src/lib.rs", "{d}");
    assert_eq!(d["line"], 7, "the asm! line: {d}");
    assert!(d["notes"].as_array().unwrap().iter().any(|n| n.as_str().unwrap().contains("add.f64")), "{d}");
    assert!(!k.artifact("release", "sm_80", "cubin").exists(), "no cubin is left behind");
}

fn without_ptxas_the_build_makes_ptx_and_warns_once() {
    let empty = tempfile::tempdir().unwrap();
    let k = kernel("noptxas_kernels", "#[no_mangle]\npub unsafe extern \"ptx-kernel\" fn k(x: *mut f32) { *x += 1.0; }\n");
    let run = k.build_with(&["--release", "--arch", "sm_80,sm_90"], |c| hide_cuda(c, empty.path()));
    run.assert_ok();
    let warnings: Vec<_> =
        run.of("ptx-diagnostic").into_iter().filter(|d| d["message"].as_str().unwrap().contains("ptxas not found")).collect();
    assert_eq!(warnings.len(), 1, "{}", run.stdout);
    assert!(warnings[0]["notes"][0].as_str().unwrap().contains("cargo ptx setup"));
    assert!(run.of("ptx-artifact").iter().all(|a| a["kind"] == "ptx"));
    assert!(k.artifact("release", "sm_90", "ptx").is_file());
}

fn without_libdevice_only_kernels_that_need_it_fail() {
    let ptxas = cuda().ptxas.unwrap().path;
    let empty = tempfile::tempdir().unwrap();
    let plain = kernel("nolibdevice_plain", "#[no_mangle]\npub unsafe extern \"ptx-kernel\" fn k(x: *mut f32) { *x += 1.0; }\n");
    plain
        .build_with(&["--release"], |c| {
            hide_cuda(c, empty.path());
            c.env("PTXAS", &ptxas);
        })
        .assert_ok();
    let k = KernelCrate::example("saxpy");
    k.build_with(&["--release", "--arch", "sm_80"], |c| {
        hide_cuda(c, empty.path());
        c.env("PTXAS", &ptxas);
    })
    .assert_error(&["calls `__nv_expf` from NVIDIA's libdevice, and no libdevice was found", "cargo ptx setup", "LIBDEVICE="]);
}

fn a_corrupt_libdevice_is_reported_as_such() {
    let bad = tempfile::tempdir().unwrap();
    let path = bad.path().join("libdevice.10.bc");
    std::fs::write(&path, b"<html>not bitcode</html>").unwrap();
    let k = KernelCrate::example("saxpy");
    k.build_with(&["--release", "--arch", "sm_80"], |c| {
        c.env("LIBDEVICE", &path);
    })
    .assert_error(&["is not LLVM bitcode (corrupt or truncated file)", "cargo ptx setup --force"]);
}

fn an_unwritable_target_dir_is_reported() {
    let k = kernel("unwritable_kernels", "");
    let file = tempfile::NamedTempFile::new().unwrap();
    let target = file.path().join("target");
    let out = cargo_ptx()
        .arg("build")
        .arg(&k.dir)
        .arg("--target-dir")
        .arg(&target)
        .args(["--message-format", "json", "--release"])
        .output()
        .unwrap();
    common::Run::from(out).assert_error(&["could not create directory", "target"]);
}

fn a_missing_toolchain_names_setup_and_rustup() {
    let k = kernel("toolchain_kernels", "");
    k.build(&["--toolchain", "nightly-1999-01-01"]).assert_error(&[
        "the `nightly-1999-01-01` toolchain not found",
        "cargo ptx setup",
        "rustup toolchain install nightly-1999-01-01",
    ]);
}

fn human_output_lists_every_artifact_and_the_resource_table() {
    cuda();
    let k = KernelCrate::example("saxpy");
    let out =
        cargo_ptx().arg("build").arg(&k.dir).arg("--target-dir").arg(common::shared_target()).args(["--release", "-v"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    for arch in ["sm_80", "sm_90"] {
        for ext in ["ptx", "cubin"] {
            assert!(stderr.contains(&k.artifact("release", arch, ext).display().to_string()), "{stderr}");
        }
    }
    assert!(stderr.contains("Finished release [sm_80, sm_90]"), "{stderr}");
    let header = stderr.lines().find(|l| l.starts_with("kernel")).expect("resource table");
    for col in ["arch", "registers", "spill", "shared", "stack"] {
        assert!(header.contains(col), "{header}");
    }
    assert!(stderr.lines().any(|l| l.starts_with("exp_kernel") && l.contains("sm_90")), "{stderr}");
}

fn a_ptx_isa_llvm_cannot_write_is_refused() {
    let k = kernel("isa_kernels", "");
    k.build(&["--ptx-isa", "9.9"]).assert_error(&["PTX ISA 9.9 is not one LLVM", "set `ptx-isa` to one of:", "7.8"]);
    k.build(&["--ptx-isa", "seven"]).assert_usage_error(&["not a PTX ISA version"]);
}

fn an_edit_to_a_proc_macro_the_kernels_use_reruns_the_front_end() {
    cuda();
    // saxpy's kernels use #[ptx_device::kernel]: the macro crate's sources are kernel inputs too.
    let k = KernelCrate::example("saxpy");
    let front_end_ran = || {
        let out = cargo_ptx()
            .arg("build")
            .arg(&k.dir)
            .arg("--target-dir")
            .arg(common::shared_target())
            .args(["--release", "--arch", "sm_80"])
            .output()
            .unwrap();
        let log = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{log}");
        log.contains("Compiling saxpy-kernels (Rust")
    };
    front_end_ran();
    assert!(!front_end_ran(), "nothing changed, nothing is compiled");
    let macros = k.root.path().join("ptx-device-macros/src/lib.rs");
    let text = std::fs::read_to_string(&macros).unwrap();
    std::fs::write(&macros, format!("{text}\n// an edit\n")).unwrap();
    assert!(front_end_ran(), "the kernels were not recompiled after the macro crate changed");
}

pub fn tests() -> Vec<crate::harness::Test> {
    crate::tests![
        saxpy_example_builds_ptx_and_cubins_for_sm_80_and_sm_90,
        a_second_build_reuses_everything_and_an_edit_rebuilds,
        unknown_archs_are_refused_with_the_reason,
        an_arch_ptxas_does_not_support_is_refused,
        no_arch_and_no_gpu_says_how_to_choose,
        a_folder_without_kernel_crates_is_an_error,
        rustc_errors_come_through_unchanged_with_their_line,
        a_misspelled_libdevice_function_is_named,
        invalid_ptx_in_asm_points_at_the_rust_line,
        without_ptxas_the_build_makes_ptx_and_warns_once,
        without_libdevice_only_kernels_that_need_it_fail,
        a_corrupt_libdevice_is_reported_as_such,
        an_unwritable_target_dir_is_reported,
        a_missing_toolchain_names_setup_and_rustup,
        human_output_lists_every_artifact_and_the_resource_table,
        a_ptx_isa_llvm_cannot_write_is_refused,
        an_edit_to_a_proc_macro_the_kernels_use_reruns_the_front_end,
    ]
}
