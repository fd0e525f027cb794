//! Hardening, round two (issue 27): the bad inputs found from outside, each fed to the tool with
//! the message or behaviour a user must get.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{cargo_ptx, shared_target, KernelCrate};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn write(path: impl AsRef<Path>, text: &str) {
    let path = path.as_ref();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A host crate `host/` with `build_rs` in a temp folder, beside kernel crates the test writes.
fn host(name: &str, build_rs: &str, lib_rs: &str) -> tempfile::TempDir {
    let root = tempfile::Builder::new().prefix("cargo-ptx hardening ").tempdir().unwrap();
    let h = root.path().join("host");
    write(
        h.join("Cargo.toml"),
        &format!(
            "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[dependencies]\nptx-runtime = {{ path = {:?} }}\n[build-dependencies]\nptx-build = {{ path = {:?} }}\n[workspace]\n",
            repo().join("ptx-runtime"),
            repo().join("ptx-build")
        ),
    );
    write(h.join("build.rs"), build_rs);
    write(h.join("src/lib.rs"), lib_rs);
    root
}

/// A Rust kernel crate `dir` with one kernel `saxpy` that scales by `factor`.
fn saxpy_crate(dir: &Path, name: &str, factor: &str) {
    write(dir.join("Cargo.toml"), &format!("[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[package.metadata.ptx]\narchs = [\"sm_80\"]\n[workspace]\n"));
    write(
        dir.join("src/lib.rs"),
        &format!("#![no_std]\n#![feature(abi_ptx)]\n#[no_mangle]\npub unsafe extern \"ptx-kernel\" fn saxpy(n: u32, x: *mut f32) {{\n    if n > 0 {{ *x *= {factor}; }}\n}}\n#[panic_handler]\nfn p(_: &core::panic::PanicInfo) -> ! {{ loop {{}} }}\n"),
    );
}

/// `cargo build --message-format json` of `dir/host`: success, stderr, and the host's build
/// script's OUT_DIR.
fn cargo_build(dir: &Path) -> (bool, String, Option<PathBuf>) {
    let host_dir = format!("{}", dir.join("host").display());
    let out = Command::new(env!("CARGO"))
        .args(["build", "--message-format", "json"])
        .current_dir(dir.join("host"))
        .env("CARGO_TARGET_DIR", Path::new(env!("CARGO_TARGET_TMPDIR")).join("hardening-host-target"))
        .env_remove("CARGO_PTX_ARCH")
        .output()
        .unwrap();
    let out_dir = String::from_utf8_lossy(&out.stdout).lines().find_map(|l| {
        let v: serde_json::Value = serde_json::from_str(l).ok()?;
        let ours = v["package_id"].as_str().is_some_and(|id| id.contains(&host_dir.replace(' ', "%20")) || id.contains(&host_dir));
        v["out_dir"].as_str().filter(|_| v["reason"] == "build-script-executed" && ours).map(PathBuf::from)
    });
    (out.status.success(), String::from_utf8_lossy(&out.stderr).into_owned(), out_dir)
}

/// The files a generated module embeds (each linked image's doc names its file,
/// `` `$OUT_DIR/ptx-build/…` ``), in the folder it lies in.
fn embedded(module: &Path) -> Vec<PathBuf> {
    let text = std::fs::read_to_string(module).unwrap();
    let dir = module.parent().unwrap();
    text.split("`$OUT_DIR/ptx-build/").skip(1).filter_map(|s| s.split('`').next()).map(|rel| dir.join("ptx-build").join(rel)).collect()
}

fn two_builders_with_their_own_out_files_embed_their_own_kernels() {
    crate::common::cuda();
    let build_rs = "fn main() -> Result<(), ptx_build::Error> {\n    ptx_build::Builder::new().kernel_crate(\"../k1\").out_file(\"k1.rs\").build()?;\n    ptx_build::Builder::new().kernel_crate(\"../k2\").out_file(\"k2.rs\").build()?;\n    Ok(())\n}\n";
    let lib = "pub mod k1 { include!(concat!(env!(\"OUT_DIR\"), \"/k1.rs\")); }\npub mod k2 { include!(concat!(env!(\"OUT_DIR\"), \"/k2.rs\")); }\n";
    let p = host("two_builders_own", build_rs, lib);
    // Both crates name their kernel `saxpy` and their lib `k`: only the factor tells them apart.
    saxpy_crate(&p.path().join("k1"), "k", "3.0");
    saxpy_crate(&p.path().join("k2"), "k", "5.0");
    let (ok, log, out_dir) = cargo_build(p.path());
    assert!(ok, "{log}");
    let out_dir = out_dir.unwrap();
    let ptx_of = |module: &str| -> String {
        let files = embedded(&out_dir.join(module));
        let ptx = files.iter().find(|f| f.extension().is_some_and(|e| e == "ptx")).unwrap_or_else(|| panic!("{module} embeds PTX"));
        std::fs::read_to_string(ptx).unwrap()
    };
    // 3.0f32 is 0f40400000 in PTX, 5.0f32 is 0f40A00000.
    let (one, two) = (ptx_of("k1.rs"), ptx_of("k2.rs"));
    assert!(one.contains("0f40400000") && !one.contains("0f40A00000"), "k1.rs embeds k1's kernel:\n{one}");
    assert!(two.contains("0f40A00000") && !two.contains("0f40400000"), "k2.rs embeds k2's kernel:\n{two}");
}

fn two_builders_writing_one_file_add_their_modules_and_a_module_both_make_is_an_error_naming_both() {
    crate::common::cuda();
    // The default `kernels.rs` twice: one Rust crate and a .cu file of the host make two modules.
    let build_rs = "fn main() -> Result<(), ptx_build::Error> {\n    ptx_build::Builder::new().kernel_crate(\"../k1\").build()?;\n    ptx_build::Builder::new().cuda(\"cuda/*.cu\").arch(\"sm_80\").build()?;\n    Ok(())\n}\n";
    let lib = "pub mod kernels { ptx_runtime::include_kernels!(); }\n#[allow(dead_code)]\nfn both(k: &kernels::Kernels) -> bool { kernels::KERNEL_NAMES.contains(&\"saxpy\") && kernels::KERNEL_NAMES.contains(&\"scale\") && k.function(\"scale\").is_some() }\n";
    let p = host("two_builders_shared", build_rs, lib);
    saxpy_crate(&p.path().join("k1"), "k_one", "2.0");
    write(p.path().join("host/cuda/other.cu"), "extern \"C\" __global__ void scale(float a, float *x) { x[0] *= a; }\n");
    let (ok, log, _) = cargo_build(p.path());
    assert!(ok, "both Builders' modules are in kernels.rs:\n{log}");

    // The same .cu file name in both Builders: one module name, two sources.
    let build_rs = "fn main() -> Result<(), ptx_build::Error> {\n    ptx_build::Builder::new().cuda(\"a/*.cu\").arch(\"sm_80\").build()?;\n    ptx_build::Builder::new().cuda(\"b/*.cu\").arch(\"sm_80\").build()?;\n    Ok(())\n}\n";
    let p = host("two_builders_clash", build_rs, "pub mod kernels { ptx_runtime::include_kernels!(); }\n");
    write(p.path().join("host/a/saxpy.cu"), "extern \"C\" __global__ void saxpy(float *x) { x[0] = 1.0f; }\n");
    write(p.path().join("host/b/saxpy.cu"), "extern \"C\" __global__ void saxpy2(float *x) { x[0] = 2.0f; }\n");
    let (ok, log, _) = cargo_build(p.path());
    assert!(!ok, "{log}");
    let a = p.path().join("host/a/saxpy.cu").display().to_string();
    let b = p.path().join("host/b/saxpy.cu").display().to_string();
    assert!(log.contains("two Builders put a module `saxpy` into ") && log.contains(&format!("one built from {a}, one from {b}")), "{log}");
    assert!(log.contains("give one of the Builders a file of its own, `.out_file(\"more_kernels.rs\")`"), "{log}");
}

fn cu_files_named_like_an_option_build_alone_and_through_a_glob() {
    crate::common::cuda();
    let dir = tempfile::Builder::new().prefix("cargo-ptx dash ").tempdir().unwrap();
    write(dir.path().join("-o.cu"), "extern \"C\" __global__ void k(float *x) { x[0] = 1.0f; }\n");
    let out = cargo_ptx()
        .args(["build", "./-o.cu", "--arch", "sm_80", "--message-format", "json", "--target-dir"])
        .arg(shared_target())
        .current_dir(dir.path())
        .output()
        .unwrap();
    let run = crate::common::Run::from(out);
    run.assert_ok();
    assert!(run.of("ptx-artifact").iter().any(|a| a["path"].as_str().is_some_and(|p| p.ends_with("_o.ptx"))), "{}", run.stdout);

    // `cuda-sources = ["*.cu"]` at the package root matching `-x.cu`.
    let k = KernelCrate::new("dash-glob", "archs = [\"sm_80\"]\nrust = false\ncuda-sources = [\"*.cu\"]", "");
    k.write("-x.cu", "extern \"C\" __global__ void x(float *p) { p[0] = 2.0f; }\n");
    k.build(&[]).assert_ok();
    assert!(k.module_artifact("release", "sm_80", "_x", "ptx").is_file());
}

fn rust_kernels_in_a_folder_named_like_an_option_build() {
    // cargo, llvm-link, opt, llc and ptxas all see paths below `-kernels`.
    let k = KernelCrate::new("dash-folder", "archs = [\"sm_80\"]", "#![no_std]\n#![feature(abi_ptx)]\n#[no_mangle]\npub unsafe extern \"ptx-kernel\" fn k(x: *mut f32) { *x = 1.0; }\n#[panic_handler]\nfn p(_: &core::panic::PanicInfo) -> ! { loop {} }\n");
    let dashed = k.dir.parent().unwrap().join("-kernels");
    std::fs::rename(&k.dir, &dashed).unwrap();
    let out = cargo_ptx()
        .args(["build", "./-kernels", "--message-format", "json", "--target-dir"])
        .arg(shared_target())
        .current_dir(dashed.parent().unwrap())
        .output()
        .unwrap();
    crate::common::Run::from(out).assert_ok();
}

fn cu_files_named_after_rust_keywords_build_into_a_host_crate() {
    crate::common::cuda();
    let build_rs = "fn main() -> Result<(), ptx_build::Error> {\n    ptx_build::Builder::new().cuda(\"cuda/*.cu\").arch(\"sm_80\").build()?;\n    Ok(())\n}\n";
    let lib = "pub mod kernels { ptx_runtime::include_kernels!(); }\n#[allow(dead_code)]\nunsafe fn call(k: &kernels::Kernels, s: &ptx_runtime::cudarc::driver::CudaStream, cfg: ptx_runtime::cudarc::driver::LaunchConfig, x: &mut ptx_runtime::cudarc::driver::CudaSlice<f32>) {\n    unsafe { k.in_self(s, cfg, x).unwrap() };\n    unsafe { k.in_match(s, cfg, x).unwrap() };\n    unsafe { k.in_crate(s, cfg, x).unwrap() };\n}\n";
    let p = host("keyword_modules", build_rs, lib);
    for (file, kernel) in [("self", "in_self"), ("match", "in_match"), ("crate", "in_crate")] {
        write(
            p.path().join(format!("host/cuda/{file}.cu")),
            &format!("extern \"C\" __global__ void {kernel}(float *x) {{ x[0] = 1.0f; }}\n"),
        );
    }
    let (ok, log, out_dir) = cargo_build(p.path());
    assert!(ok, "{log}");
    let module = std::fs::read_to_string(out_dir.unwrap().join("kernels.rs")).unwrap();
    for m in ["self_cu", "match_cu", "crate_cu"] {
        assert!(module.contains(&format!("pub mod {m} ")), "module `{m}`:\n{module}");
    }
}

fn empty_items_in_an_arch_list_are_skipped() {
    crate::common::cuda();
    let k = KernelCrate::new("empty-arch-items", "rust = false", "");
    k.write("cuda/k.cu", "extern \"C\" __global__ void k(float *x) { x[0] = 1.0f; }\n");
    let run = k.build(&["--arch", "sm_80,,sm_90,"]);
    run.assert_ok();
    let mut archs: Vec<String> = run.of("ptx-artifact").iter().filter_map(|a| a["arch"].as_str().map(str::to_string)).collect();
    archs.sort();
    archs.dedup();
    assert_eq!(archs, ["sm_80", "sm_90"]);
    k.build(&["--arch", ","]).assert_usage_error(&["invalid value '' for '--arch <ARCH>': the list is empty"]);
}

fn an_empty_folder_outside_any_workspace_is_named() {
    let dir = tempfile::Builder::new().prefix("cargo-ptx empty ").tempdir().unwrap();
    let empty = dir.path().join("nothing here");
    std::fs::create_dir(&empty).unwrap();
    let out = cargo_ptx().arg("build").arg(&empty).current_dir(dir.path()).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains(&format!("no kernel crate found in {}", empty.display())), "{stderr}");
    assert!(!stderr.contains("could not find `Cargo.toml`"), "{stderr}");
}

fn a_kernel_that_needs_alloc_is_told_kernels_have_core_only() {
    let k = KernelCrate::new(
        "needs-alloc",
        "archs = [\"sm_80\"]",
        "#![no_std]\n#![feature(abi_ptx)]\nextern crate alloc;\nuse alloc::vec::Vec;\n#[no_mangle]\npub unsafe extern \"ptx-kernel\" fn k(x: *mut f32) { let v: Vec<f32> = Vec::new(); *x = v.len() as f32; }\n#[panic_handler]\nfn p(_: &core::panic::PanicInfo) -> ! { loop {} }\n",
    );
    let out = cargo_ptx().arg("build").arg(&k.dir).arg("--target-dir").arg(shared_target()).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("can't find crate for `alloc`"), "{stderr}");
    assert!(stderr.contains("= help: GPU kernels have `core` only: there is no heap (`alloc`: `Vec`, `Box`, `String`)"), "{stderr}");
}

fn cargo_ptx_home_that_is_not_a_folder_is_named_by_build_doctor_and_setup() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("home-file");
    std::fs::write(&file, "").unwrap();
    let k = KernelCrate::new("home-file", "archs = [\"sm_80\"]", "");
    let expected = format!("CARGO_PTX_HOME={} is not a folder", file.display());
    for args in [vec!["build", k.dir.to_str().unwrap()], vec!["setup"], vec!["doctor"]] {
        let out = cargo_ptx().args(&args).env("CARGO_PTX_HOME", &file).output().unwrap();
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(!out.status.success(), "{args:?} fails:\n{text}");
        let named = text.contains(&expected) || text.contains(&format!("CARGO_PTX_HOME       {}  is not a folder", file.display()));
        assert!(named, "{args:?} names the variable:\n{text}");
        assert!(text.contains("point it at a folder"), "{args:?}: {text}");
    }
}

/// A 2 MiB tmpfs as the target dir, when this machine lets us mount one.
fn small_disk() -> Option<(tempfile::TempDir, PathBuf)> {
    let dir = tempfile::tempdir().ok()?;
    let mnt = dir.path().join("small disk");
    std::fs::create_dir(&mnt).ok()?;
    let ok = Command::new("mount").args(["-t", "tmpfs", "-o", "size=2m", "tmpfs"]).arg(&mnt).status().is_ok_and(|s| s.success());
    ok.then_some((dir, mnt))
}

fn a_full_disk_is_named_as_a_full_disk() {
    let (_dir, mnt) = crate::harness::require(small_disk(), "permission to mount a tmpfs (root)");
    let k = KernelCrate::example("saxpy");
    let out = cargo_ptx()
        .arg("build")
        .arg(&k.dir)
        .arg("--arch")
        .arg("sm_80")
        .arg("--target-dir")
        .arg(&mnt)
        .env("CARGO_PTX_CACHE_DIR", "off")
        .output()
        .unwrap();
    let _ = Command::new("umount").arg(&mnt).status();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("error: the disk is full: cargo building kernel crate `saxpy-kernels` could not write into "), "{stderr}");
    assert!(stderr.contains("free some space"), "{stderr}");
}

/// The PIDs of processes whose command line mentions `needle`.
fn processes_mentioning(needle: &str) -> Vec<u32> {
    let mut pids = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|p| p.parse::<u32>().ok()) else { continue };
        if let Ok(cmd) = std::fs::read(e.path().join("cmdline")) {
            if String::from_utf8_lossy(&cmd).contains(needle) && pid != std::process::id() {
                pids.push(pid);
            }
        }
    }
    pids
}

fn sigint_to_cargo_ptx_alone_ends_every_tool_of_the_build_and_the_rebuild_is_identical() {
    let k = KernelCrate::example("saxpy");
    let target = k.root.path().join("interrupted target");
    // A cold build with `core` built in the target dir: long enough to be stopped mid-way.
    let start = |target: &Path| {
        let mut cmd = cargo_ptx();
        cmd.arg("build").arg(&k.dir).args(["--arch", "sm_80", "--target-dir"]).arg(target).env("CARGO_PTX_CACHE_DIR", "off");
        cmd
    };
    let mut child = start(&target).stdout(std::process::Stdio::null()).stderr(std::process::Stdio::piped()).spawn().unwrap();
    let marker = target.display().to_string();
    // Wait until rustc runs for the nested cargo.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while std::time::Instant::now() < deadline && processes_mentioning(&marker).len() < 3 {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(processes_mentioning(&marker).len() >= 3, "the build's tools started");
    // To cargo-ptx's pid alone, as an IDE or a CI runner stops a build.
    assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
    let status = child.wait().unwrap();
    std::thread::sleep(std::time::Duration::from_secs(3));
    assert_eq!(status.code(), Some(130));
    assert_eq!(processes_mentioning(&marker), Vec::<u32>::new(), "no process of the build remains");
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert!(!err.contains("error"), "an interrupted build reports no error of its tools:\n{err}");
    let scratch: Vec<PathBuf> =
        walk(&target).into_iter().filter(|p| p.to_string_lossy().contains(&format!(".tmp-{}-", child.id()))).collect();
    assert!(scratch.is_empty(), "no scratch file of the interrupted build is left: {scratch:?}");

    // The rebuild completes and gives what an uninterrupted build gives.
    let out = start(&target).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let clean = k.root.path().join("clean target");
    let out = start(&clean).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for ext in ["ptx", "cubin"] {
        let a = std::fs::read(target.join(format!("ptx/release/saxpy-kernels/sm_80/saxpy_kernels.{ext}"))).unwrap();
        let b = std::fs::read(clean.join(format!("ptx/release/saxpy-kernels/sm_80/saxpy_kernels.{ext}"))).unwrap();
        assert!(a == b, "the rebuilt {ext} is the uninterrupted build's");
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        }
        out.push(p);
    }
    out
}

pub fn tests() -> Vec<crate::harness::Test> {
    crate::tests![
        two_builders_with_their_own_out_files_embed_their_own_kernels,
        two_builders_writing_one_file_add_their_modules_and_a_module_both_make_is_an_error_naming_both,
        cu_files_named_like_an_option_build_alone_and_through_a_glob,
        rust_kernels_in_a_folder_named_like_an_option_build,
        cu_files_named_after_rust_keywords_build_into_a_host_crate,
        empty_items_in_an_arch_list_are_skipped,
        an_empty_folder_outside_any_workspace_is_named,
        a_kernel_that_needs_alloc_is_told_kernels_have_core_only,
        cargo_ptx_home_that_is_not_a_folder_is_named_by_build_doctor_and_setup,
        a_full_disk_is_named_as_a_full_disk;
        slow: sigint_to_cargo_ptx_alone_ends_every_tool_of_the_build_and_the_rebuild_is_identical
    ]
}
