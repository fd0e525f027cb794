//! What a registry user gets: cargo-ptx installed from its packaged `.crate` (not from the
//! workspace) scaffolds a project that builds and tests against the packaged crates.
//!
//! The `.crate` files are unpacked and reached through `[patch.crates-io]` (cargo has no local
//! registry without a plugin), so a file missing from a package, or a path that only resolves in
//! the checkout, fails here as it would after `cargo publish`.

use crate::common::{self, run};
use std::path::Path;
use std::process::Command;

const PUBLISHED: &[&str] = &["cargo-ptx", "ptx-build", "ptx-runtime", "ptx-device", "ptx-device-macros"];
/// Workspace members that are not published (`publish = false`, build scripts that reach
/// outside their folders).
const EXAMPLES: &[&str] = &["saxpy", "cuda-kernels", "mixed", "device-tour", "cuda-static-lib"];

/// cargo with the environment of this test run's cargo taken out, and one target dir for the
/// packaging, the install and the project: their dependencies compile once, and are kept between
/// runs under CARGO_TARGET_TMPDIR.
fn cargo(target: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO"));
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy().into_owned();
        if (k.starts_with("CARGO_") && k != "CARGO_HOME") || k == "RUSTFLAGS" || k == "RUSTC_WRAPPER" {
            cmd.env_remove(k);
        }
    }
    cmd.env("CARGO_TARGET_DIR", target).env("NO_COLOR", "1");
    cmd
}

/// The unpacked package of `krate`, as a TOML string.
fn toml_path(unpacked: &Path, krate: &str) -> String {
    let dir = unpacked.join(format!("{krate}-{}", env!("CARGO_PKG_VERSION")));
    // A JSON string is a valid TOML basic string.
    serde_json::to_string(&dir.to_string_lossy()).unwrap()
}

/// `[patch.crates-io]` entries that point our crates at their unpacked packages.
fn patch(unpacked: &Path, crates: &[&str]) -> String {
    let mut t = String::from("\n# Added by tests/install.rs: the packaged crates stand in for the registry.\n[patch.crates-io]\n");
    for c in crates {
        t += &format!("{c} = {{ path = {} }}\n", toml_path(unpacked, c));
    }
    t
}

fn append(file: &Path, text: &str) {
    let mut t = std::fs::read_to_string(file).unwrap();
    t += text;
    std::fs::write(file, t).unwrap();
}

fn cargo_ptx_installed_from_its_packages_scaffolds_a_project_that_builds_and_tests() {
    common::cuda();
    let repo = std::fs::canonicalize(Path::new(env!("CARGO_MANIFEST_DIR")).join("..")).unwrap();
    // Dependencies compile once into a target dir kept between runs; packages, the install and
    // the project go outside the checkout, where cargo would take them for its members.
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("install-target");
    let packages = target.join("package");
    let _ = std::fs::remove_dir_all(&packages);
    let tmp = tempfile::Builder::new().prefix("cargo-ptx install ").tempdir().unwrap();
    let work = tmp.path();
    let unpacked = work.join("crates");
    let root = work.join("root");
    std::fs::create_dir_all(&unpacked).unwrap();

    // 1. Package every published crate; CI's `cargo package` verifies them (.ci/run). Dirty
    //    files are allowed: the test runs on a working tree under edit too.
    let mut pkg = cargo(&target);
    pkg.current_dir(&repo).args(["package", "--no-verify", "--allow-dirty", "--workspace"]);
    for e in EXAMPLES {
        pkg.args(["--exclude", e]);
    }
    run(&mut pkg);
    let unpack = |c: &str| {
        let file = packages.join(format!("{c}-{}.crate", env!("CARGO_PKG_VERSION")));
        assert!(file.is_file(), "{} was not packaged", file.display());
        run(Command::new("tar").arg("-xzf").arg(&file).arg("-C").arg(&unpacked));
    };
    for c in PUBLISHED.iter().filter(|c| **c != "ptx-device") {
        unpack(c);
    }
    // ptx-device stands outside the workspace: its ptx-device-macros is the packaged one.
    let macros = format!("patch.crates-io.ptx-device-macros.path={}", toml_path(&unpacked, "ptx-device-macros"));
    run(cargo(&target)
        .current_dir(&repo)
        .args(["package", "--no-verify", "--allow-dirty", "--manifest-path", "ptx-device/Cargo.toml"])
        .args(["--config", &macros]));
    unpack("ptx-device");

    // 2. Install cargo-ptx from its package, its ptx-build the packaged one. Debug: a release
    //    build would compile every dependency a second time, for no difference here.
    let install_patch = format!("patch.crates-io.ptx-build.path={}", toml_path(&unpacked, "ptx-build"));
    let mut install = cargo(&target);
    install.args(["install", "--debug", "--path"]).arg(unpacked.join(format!("cargo-ptx-{}", env!("CARGO_PKG_VERSION"))));
    install.arg("--root").arg(&root).args(["--config", &install_patch]);
    let log = run(&mut install);
    assert!(log.contains("ptx-build v") && log.contains(&unpacked.display().to_string()), "ptx-build came from elsewhere:\n{log}");
    let installed = root.join("bin/cargo-ptx");
    assert!(installed.is_file(), "{log}");

    // 3. Scaffold with the installed binary, as `cargo ptx new` runs it (cargo passes `ptx`).
    let projects = work.join("projects");
    std::fs::create_dir_all(&projects).unwrap();
    // The unpacked crates stand in for crates.io, which `new` would ask whether it has them.
    let out = run(Command::new(&installed)
        .args(["ptx", "new", "demo", "--kernels", "both", "--vcs", "none"])
        .current_dir(&projects)
        .env("CARGO_PTX_CRATES_PUBLISHED", "yes"));
    assert!(out.contains("Created GPU project `demo`"), "{out}");
    let demo = projects.join("demo");
    let manifest = std::fs::read_to_string(demo.join("Cargo.toml")).unwrap();
    assert!(manifest.contains(&format!("ptx-build = \"{}\"", env!("CARGO_PKG_VERSION"))), "registry versions by default:\n{manifest}");
    assert!(!manifest.contains(repo.to_str().unwrap()), "no path into the checkout:\n{manifest}");

    // 4. Build and test it against the packages. The kernel crate is a workspace of its own
    //    (built by ptx-build's nested cargo), so it takes its own patch.
    // ptx-runtime's `#[derive(DeviceRepr)]` comes from ptx-device-macros; the kernels' shared
    // crate names ptx-runtime as a host-only dependency, which their lock file resolves too.
    append(&demo.join("Cargo.toml"), &patch(&unpacked, &["ptx-build", "ptx-runtime", "ptx-device-macros"]));
    append(&demo.join("kernels/Cargo.toml"), &patch(&unpacked, &["ptx-device", "ptx-device-macros", "ptx-runtime"]));
    let project_cargo = |args: &[&str]| {
        let mut c = cargo(&target);
        c.args(args).current_dir(&demo).env_remove("CARGO_PTX_ARCH");
        run(&mut c)
    };
    let build = project_cargo(&["build", "-v"]);
    for c in ["ptx-build", "ptx-runtime"] {
        let from = unpacked.join(format!("{c}-{}", env!("CARGO_PKG_VERSION")));
        assert!(build.contains(&from.display().to_string()), "{c} was not built from its package:\n{build}");
    }
    let test = project_cargo(&["test"]);
    assert!(test.contains("test every_kernel_is_embedded_for_every_arch ... ok"), "{test}");
    // tests/gpu.rs runs on a GPU and elsewhere reports its tests as ignored, with the reason.
    let gpu = test.lines().find(|l| l.starts_with("test kernels_match_the_cpu ")).unwrap_or_else(|| panic!("not run:\n{test}"));
    assert!(gpu.ends_with("... ok") || gpu.contains("... ignored (no GPU: "), "{gpu}");
}

pub fn tests() -> Vec<crate::harness::Test> {
    crate::tests![; slow: cargo_ptx_installed_from_its_packages_scaffolds_a_project_that_builds_and_tests]
}
