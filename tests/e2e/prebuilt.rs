//! Prebuilt kernels end to end: examples/prebuilt's library (`fastblur`, a Rust kernel crate and
//! CUDA C++ of its own) is packaged with `cargo ptx package` and `cargo package`, and its
//! dependent (`blur-app`) is built from the packaged `.crate` as a crates.io user builds it: on
//! stable, with no nvcc, no ptxas and an empty CARGO_PTX_HOME. Its embedded PTX and cubins are
//! the bytes a build from source embeds; a changed source byte is an error naming the fix.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::build_script;
use crate::common::{self, run, text};

fn repo() -> PathBuf {
    std::fs::canonicalize(Path::new(env!("CARGO_MANIFEST_DIR")).join("..")).unwrap()
}

/// cargo without this test run's CARGO_* variables, into one target dir kept between runs.
fn cargo(dir: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO"));
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy().into_owned();
        if (k.starts_with("CARGO_") && k != "CARGO_HOME") || k == "RUSTFLAGS" || k == "RUSTC_WRAPPER" {
            cmd.env_remove(k);
        }
    }
    cmd.current_dir(dir).env("CARGO_TARGET_DIR", Path::new(env!("CARGO_TARGET_TMPDIR")).join("prebuilt-target")).env("NO_COLOR", "1");
    cmd
}

/// As a machine with no kernel tools: stable Rust, PATH without nvcc or ptxas, no CUDA
/// variables, an empty CARGO_PTX_HOME (where `cargo ptx setup` would put them).
fn without_tools(cmd: &mut Command, empty_home: &Path) {
    for v in ["PTXAS", "NVCC", "LIBDEVICE", "CUDA_PATH", "CUDA_HOME", "CUDA_ROOT", "CARGO_PTX_CACHE_DIR"] {
        cmd.env_remove(v);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    let kept: Vec<PathBuf> = std::env::split_paths(&path).filter(|d| !d.join("nvcc").exists() && !d.join("ptxas").exists()).collect();
    cmd.env("PATH", std::env::join_paths(kept).unwrap()).env("CARGO_PTX_HOME", empty_home).env("RUSTUP_TOOLCHAIN", "stable");
}

/// `[patch.crates-io]` for our crates, which are not on crates.io yet.
fn patch_ours() -> String {
    let mut t = String::from("\n[patch.crates-io]\n");
    for c in ["ptx-build", "ptx-runtime", "ptx-device-macros"] {
        t += &format!("{c} = {{ path = {} }}\n", serde_json::to_string(&repo().join(c)).unwrap());
    }
    t
}

/// The same patches, as `--config` arguments (the ones `cargo package`'s verify step takes).
fn patch_config() -> Vec<String> {
    ["ptx-build", "ptx-runtime", "ptx-device-macros"]
        .iter()
        .flat_map(|c| ["--config".to_string(), format!("patch.crates-io.{c}.path={}", serde_json::to_string(&repo().join(c)).unwrap())])
        .collect()
}

/// fastblur's OUT_DIR in a `cargo build --message-format json` run.
fn out_dir(json: &str) -> PathBuf {
    json.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|m| m["reason"] == "build-script-executed" && m["package_id"].as_str().is_some_and(|p| p.contains("fastblur")))
        .and_then(|m| m["out_dir"].as_str().map(PathBuf::from))
        .unwrap_or_else(|| panic!("fastblur's build script did not run:\n{json}"))
}

/// Every file under `dir`, relative, sorted.
fn files(dir: &Path) -> Vec<PathBuf> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().map(Result::unwrap) {
            if e.file_type().unwrap().is_dir() {
                walk(root, &e.path(), out);
            } else {
                out.push(e.path().strip_prefix(root).unwrap().to_path_buf());
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

fn a_dependent_builds_from_the_packaged_crate_without_tools_with_the_same_bytes() {
    common::cuda();
    common::nvcc();
    let tmp = tempfile::Builder::new().prefix("cargo-ptx prebuilt ").tempdir().unwrap();
    let empty_home = tmp.path().join("empty home");
    std::fs::create_dir_all(&empty_home).unwrap();

    // The library's workspace, copied (no prebuilt set yet), our crates patched in by path.
    let src = tmp.path().join("src");
    let example = repo().join("examples/prebuilt");
    common::copy_dir(&example.join("fastblur"), &src.join("fastblur"));
    let _ = std::fs::remove_dir_all(src.join("fastblur/prebuilt"));
    std::fs::copy(example.join("Cargo.lock"), src.join("Cargo.lock")).unwrap();
    std::fs::write(src.join("Cargo.toml"), format!("[workspace]\nresolver = \"2\"\nmembers = [\"fastblur\"]\n{}", patch_ours())).unwrap();
    let kernels = src.join("fastblur/kernels/Cargo.toml");
    let device = serde_json::to_string(&repo().join("ptx-device")).unwrap();
    std::fs::write(&kernels, std::fs::read_to_string(&kernels).unwrap().replace("\"../../../../ptx-device\"", &device)).unwrap();

    // 1. `cargo ptx package`: built from source with the tools, the set written into the package.
    let log = run(common::cargo_ptx()
        .args(["package", "-p", "fastblur"])
        .current_dir(&src)
        .env("CARGO_TARGET_DIR", Path::new(env!("CARGO_TARGET_TMPDIR")).join("prebuilt-target")));
    assert!(log.contains("Packaged `fastblur`: 2 kernels for sm_80, sm_90 into"), "{log}");
    assert!(!log.contains("leaves"), "cargo package ships the set:\n{log}");
    assert!(!log.contains("wrote the prebuilt kernels"), "reported once, not also as a build script's warning:\n{log}");
    let set = src.join("fastblur/prebuilt/kernels");
    assert!(set.join("manifest.json").is_file() && set.join("fastblur/box_blur/sm_90.cubin").is_file());

    // 2. `cargo package`, verify step included, on a machine without the tools.
    let mut package = cargo(&src);
    package.args(["package", "--allow-dirty", "-p", "fastblur"]).args(patch_config());
    without_tools(&mut package, &empty_home);
    let log = run(&mut package);
    assert!(log.contains("Verifying fastblur v0.1.0"), "{log}");
    let crate_file = Path::new(env!("CARGO_TARGET_TMPDIR")).join("prebuilt-target/package/fastblur-0.1.0.crate");
    let crates = tmp.path().join("crates");
    std::fs::create_dir_all(&crates).unwrap();
    run(Command::new("tar").arg("-xzf").arg(&crate_file).arg("-C").arg(&crates));
    let unpacked = crates.join("fastblur-0.1.0");
    assert!(unpacked.join("prebuilt/kernels/manifest.json").is_file() && !unpacked.join("kernels").exists());

    // The reference: the library built from source.
    let mut source = cargo(&src);
    source.args(["build", "-p", "fastblur", "--message-format", "json"]).env("CARGO_PTX_PREBUILT", "never");
    let source_out = out_dir(&run(&mut source));

    // 3. The dependent, from the `.crate`, without the tools.
    let app = tmp.path().join("app");
    common::copy_dir(&example.join("blur-app"), &app);
    std::fs::copy(example.join("Cargo.lock"), app.join("Cargo.lock")).unwrap();
    let manifest = std::fs::read_to_string(app.join("Cargo.toml")).unwrap().replace(
        "fastblur = { path = \"../fastblur\", version = \"0.1.0\" }",
        &format!("fastblur = {{ path = {}, version = \"0.1.0\" }}", serde_json::to_string(&unpacked).unwrap()),
    );
    std::fs::write(app.join("Cargo.toml"), format!("{manifest}\n[workspace]\n{}", patch_ours())).unwrap();
    let dependent = |args: &[&str]| {
        let mut c = cargo(&app);
        c.args(args);
        without_tools(&mut c, &empty_home);
        c.output().unwrap()
    };
    let out = dependent(&["build", "--message-format", "json"]);
    assert!(out.status.success(), "{}", text(&out));
    let prebuilt_out = out_dir(&String::from_utf8_lossy(&out.stdout));
    let images = files(&source_out.join("ptx-build"));
    // The objects the images are linked from too: the same bytes make the same object.
    assert_eq!(images.len(), 10, "PTX and cubin, two archs, two modules, an image object each: {images:?}");
    assert_eq!(files(&prebuilt_out.join("ptx-build")), images);
    for f in &images {
        let (a, b) =
            (std::fs::read(source_out.join("ptx-build").join(f)).unwrap(), std::fs::read(prebuilt_out.join("ptx-build").join(f)).unwrap());
        assert!(a == b, "{} differs from the build from source", f.display());
    }
    // The generated module too, but for the package's folder in the kernels' doc comments.
    let module = |dir: &Path| std::fs::read_to_string(dir.join("kernels.rs")).unwrap();
    let from_source = module(&source_out).replace(&src.join("fastblur").display().to_string(), "<package>");
    assert_eq!(module(&prebuilt_out).replace(&unpacked.display().to_string(), "<package>"), from_source);

    // Its tests: the kernels embedded, and on a GPU checked against the CPU.
    let out = dependent(&["test"]);
    let log = text(&out);
    assert!(out.status.success(), "{log}");
    assert!(log.contains("test the_prebuilt_kernels_are_embedded_for_each_arch ... ok"), "{log}");
    let gpu = log.lines().find(|l| l.starts_with("test prebuilt_kernels_match_the_cpu ")).unwrap_or_else(|| panic!("not run:\n{log}"));
    assert!(gpu.ends_with("... ok") || gpu.contains("... ignored (no GPU: "), "{gpu}");

    // docs.rs builds the docs from the set.
    let mut docs = cargo(&app);
    docs.args(["doc", "--no-deps", "-p", "fastblur"]).env("DOCS_RS", "1");
    without_tools(&mut docs, &empty_home);
    run(&mut docs);

    // 4. One source byte changed in the package: an error naming the crate, the file and the fix.
    let cu = unpacked.join("cuda/box_blur.cu");
    let original = std::fs::read_to_string(&cu).unwrap();
    std::fs::write(&cu, original.replacen("sum / (2 * RADIUS + 1)", "sum / (2 * RADIUS + 2)", 1)).unwrap();
    let out = dependent(&["build"]);
    let log = text(&out);
    assert!(!out.status.success(), "{log}");
    assert!(
        log.contains("prebuilt kernels of `fastblur` (") && log.contains("the sources changed after packaging: cuda/box_blur.cu"),
        "{log}"
    );
    assert!(log.contains("building from source needs") && log.contains("help: rerun `cargo ptx package -p fastblur`"), "{log}");
    assert!(!log.contains("panicked"), "{log}");
    std::fs::write(&cu, original).unwrap();
}

/// `cargo ptx package` where there is nothing to package: each refusal names the fix.
fn package_refuses_a_package_without_a_builder_and_an_unknown_name() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = tmp.path().join("plain");
    std::fs::create_dir_all(pkg.join("src")).unwrap();
    std::fs::write(pkg.join("Cargo.toml"), "[package]\nname = \"plain\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n")
        .unwrap();
    std::fs::write(pkg.join("src/lib.rs"), "pub fn add(a: u32, b: u32) -> u32 { a + b }\n").unwrap();
    std::fs::write(pkg.join("build.rs"), "fn main() {}\n").unwrap();
    let package = |args: &[&str]| {
        let out = common::cargo_ptx()
            .arg("package")
            .args(args)
            .current_dir(&pkg)
            .env("CARGO_TARGET_DIR", tmp.path().join("target"))
            .output()
            .unwrap();
        assert!(!out.status.success(), "{}", text(&out));
        text(&out)
    };
    let log = package(&[]);
    assert!(
        log.contains(
            "could not package prebuilt kernels: the build of `plain` wrote no prebuilt set: its build.rs runs no `ptx_build::Builder`"
        ),
        "{log}"
    );
    assert!(log.contains("help: run `cargo ptx package` in the library whose build.rs builds the kernels"), "{log}");
    let log = package(&["-p", "fastblur"]);
    assert!(log.contains("no package named `fastblur` in the workspace") && log.contains("help: name one with `-p`: plain"), "{log}");
    assert!(!pkg.join("prebuilt").exists());
}

/// A library with CUDA C++ of its own, in its checkout (its author's view): `cargo ptx package`
/// reports the set itself, every file of the set is watched, a set that cannot be used is
/// passed over with the author's fix, and a build from source that fails after it names it.
fn a_packaged_set_in_a_checkout_is_watched_and_a_set_passed_over_is_named_with_the_fix() {
    common::cuda();
    common::nvcc();
    let kernel = "extern \"C\" __global__ void scale_pb(float a, float *x) { x[0] *= a; }\n";
    let p = build_script::cuda_host("host_pb", &[("cuda/scale.cu", kernel)], "");
    let host = p.path().join("host");
    let manifest = host.join("Cargo.toml");
    // An unanchored pattern that matches prebuilt/kernels/ too.
    let toml = std::fs::read_to_string(&manifest).unwrap().replace("edition = \"2021\"\n", "edition = \"2021\"\nexclude = [\"kernels\"]\n");
    build_script::write(&manifest, &toml);
    let cargo_ptx_package = |args: &[&str]| {
        let mut cmd = common::cargo_ptx();
        cmd.arg("package")
            .args(args)
            .current_dir(&host)
            .env("CARGO_TARGET_DIR", Path::new(env!("CARGO_TARGET_TMPDIR")).join("host-target"));
        cmd
    };
    let package = || {
        let out = cargo_ptx_package(&[]).output().unwrap();
        let log = text(&out);
        assert!(out.status.success(), "{log}");
        assert!(log.contains("Packaged `host_pb`: 1 kernels for sm_80 into"), "{log}");
        // Said once, by `cargo ptx package`: not also as a warning of the build script.
        assert!(!log.contains("wrote the prebuilt kernels"), "{log}");
        log
    };
    let log = package();
    assert!(log.contains("anchor it to the package root, `\"/kernels\"`"), "{log}");
    build_script::write(&manifest, &toml.replace("exclude = [\"kernels\"]", "exclude = [\"/kernels\"]"));
    let log = package();
    assert!(!log.contains("leaves"), "{log}");

    // `--check`, as CI runs it before publishing: no tool, nothing written.
    let empty_home = p.path().join("empty home");
    std::fs::create_dir_all(&empty_home).unwrap();
    let check = || {
        let mut cmd = cargo_ptx_package(&["--check"]);
        without_tools(&mut cmd, &empty_home);
        cmd.output().unwrap()
    };
    let written = std::fs::metadata(host.join("prebuilt/kernels/manifest.json")).unwrap().modified().unwrap();
    // A set no Builder reads (an old module's, left behind) is not reported as checked.
    crate::common::copy_dir(&host.join("prebuilt/kernels"), &host.join("prebuilt/old_module"));
    let out = check();
    let log = text(&out);
    assert!(out.status.success(), "{log}");
    assert!(
        log.contains("Checked `host_pb`: 1 kernels for sm_80 ") && log.contains("prebuilt/kernels matches the sources and options"),
        "{log}"
    );
    assert!(!log.contains("old_module"), "{log}");
    std::fs::remove_dir_all(host.join("prebuilt/old_module")).unwrap();
    assert_eq!(std::fs::metadata(host.join("prebuilt/kernels/manifest.json")).unwrap().modified().unwrap(), written);

    let set = host.join("prebuilt/kernels");
    let file = |ext: &str| {
        let found = files(&set).into_iter().find(|f| f.extension().is_some_and(|e| e == ext));
        set.join(found.unwrap_or_else(|| panic!("no .{ext} in the set: {:?}", files(&set))))
    };
    let (cubin, ptx) = (file("cubin"), file("ptx"));
    let (ok, log) = build_script::cargo_build(p.path());
    assert!(ok && !log.contains("not used"), "the set is used:\n{log}");
    let (ok, log) = build_script::cargo_build(p.path());
    assert!(ok && !build_script::build_script_ran(&log), "a no-op build does not run the build script:\n{log}");

    // A file of the set removed, then one edited: the next build sees it, names it and the fix.
    std::fs::remove_file(&cubin).unwrap();
    let (ok, log) = build_script::cargo_build(p.path());
    assert!(ok && build_script::build_script_ran(&log), "{log}");
    let rel = cubin.strip_prefix(&set).unwrap().display().to_string();
    assert!(
        log.contains(&format!("are not used (the set is damaged: {rel} is missing): building them from source; rerun `cargo ptx package -p host_pb` to update the set")),
        "{log}"
    );
    package();
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(3600);
    build_script::write_at(&ptx, &format!("{}// edited\n", std::fs::read_to_string(&ptx).unwrap()), later);
    let (ok, log) = build_script::cargo_build(p.path());
    assert!(ok && build_script::build_script_ran(&log), "{log}");
    let rel = ptx.strip_prefix(&set).unwrap().display().to_string();
    assert!(log.contains(&format!("(the set is damaged: {rel} does not match the hash manifest.json records)")), "{log}");

    // A source changed after packaging that does not build: nvcc's error, and the set named.
    package();
    build_script::write_at(host.join("cuda/scale.cu"), "extern \"C\" __global__ void scale_pb(float a, float *x) { x[0] *= a }\n", later);
    let (ok, log) = build_script::cargo_build(p.path());
    assert!(!ok, "{log}");
    assert!(log.contains("Error: nvcc could not compile cuda/scale.cu for sm_80 (1 error above)\n"), "{log}");
    let note = format!(
        "  note: built from source because the prebuilt kernels of `host_pb` ({}) are not used (the sources changed after packaging: cuda/scale.cu); the fix where `host_pb` is made: rerun `cargo ptx package -p host_pb`",
        set.join("manifest.json").display()
    );
    assert!(log.contains(&note), "{log}");
    assert!(!log.contains("panicked"), "{log}");
    // The check fails on it, naming the file and the fix.
    let out = check();
    let log = text(&out);
    assert!(!out.status.success(), "{log}");
    assert!(log.contains("manifest.json): the sources changed after packaging: cuda/scale.cu\n"), "{log}");
    assert!(
        log.contains("prebuilt kernels check failed: the prebuilt kernels of `host_pb` cannot be used, or its build failed (above)\n  help: fix what the error above names; `cargo ptx package -p host_pb` rewrites a stale or damaged set"),
        "{log}"
    );

    // A Builder with static libraries always builds from source: there is nothing to check. A
    // package of its own: a build.rs edited in place would outlive this test in the shared
    // target dir (cargo records build.rs relative to the package).
    let p = build_script::cuda_host("host_pb_static", &[("cuda/scale.cu", kernel)], "");
    let host = p.path().join("host");
    build_script::write(
        host.join("build.rs"),
        "fn main() -> Result<(), ptx_build::Error> {\n    ptx_build::Builder::new().cuda_static_lib(\"pbs\", \"cuda/*.cu\").arch(\"sm_80\").build()?;\n    Ok(())\n}\n",
    );
    let mut cmd = common::cargo_ptx();
    cmd.args(["package", "--check"]).current_dir(&host).env("CARGO_TARGET_DIR", Path::new(env!("CARGO_TARGET_TMPDIR")).join("host-target"));
    without_tools(&mut cmd, &empty_home);
    let out = cmd.output().unwrap();
    let log = text(&out);
    assert!(!out.status.success(), "{log}");
    assert!(
        log.contains("`cargo ptx package --check`: this Builder has static libraries (`.cuda_static_lib(..)`), so it always builds from source and uses no set"),
        "{log}"
    );
    assert!(log.contains("help: leave this package out of `cargo ptx package --check`"), "{log}");
}

pub fn tests() -> Vec<crate::harness::Test> {
    crate::tests![
        package_refuses_a_package_without_a_builder_and_an_unknown_name,
        a_packaged_set_in_a_checkout_is_watched_and_a_set_passed_over_is_named_with_the_fix;
        slow: a_dependent_builds_from_the_packaged_crate_without_tools_with_the_same_bytes
    ]
}
