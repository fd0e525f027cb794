//! `cargo ptx new` / `init` end to end: each flavour is scaffolded, then built and tested by
//! cargo inside it, as a user would on the first try; bad input fails and leaves nothing.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::cargo_ptx;
use crate::common::{self, text};

fn new(args: &[&str], cwd: &Path) -> Output {
    cargo_ptx().arg("new").args(args).current_dir(cwd).output().expect("run cargo-ptx")
}

/// The root of this checkout: what `--path-deps` takes. Projects built here depend on its
/// crates, which are not on a registry before a release (tests/install.rs builds against the
/// packaged ones).
fn checkout() -> PathBuf {
    std::fs::canonicalize(Path::new(env!("CARGO_MANIFEST_DIR")).join("..")).unwrap()
}

/// Every file under `dir`, `.git` and `target` left out.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().map(Result::unwrap) {
        let p = e.path();
        if p.is_dir() {
            if !matches!(e.file_name().to_str(), Some(".git" | "target")) {
                out.extend(files(&p));
            }
        } else {
            out.push(p);
        }
    }
    out.sort();
    out
}

/// `cargo <args>` in `dir` with one target dir for all projects, so the host dependencies
/// (cudarc, ptx-build) are compiled once.
fn cargo(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO"))
        .args(args)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", Path::new(env!("CARGO_TARGET_TMPDIR")).join("new-projects"))
        .env_remove("CARGO_PTX_ARCH")
        .output()
        .unwrap()
}

fn scaffold_build_and_test(kernels: &str, expect_files: &[&str], tests: &[&str]) {
    common::cuda();
    let tmp = tempfile::Builder::new().prefix("cargo-ptx new ").tempdir().unwrap();
    let name = format!("gpu-{kernels}-demo");
    let root = checkout();
    let out = new(&[&name, "--kernels", kernels, "--arch", "sm_80", "--arch", "sm_90", "--path-deps", root.to_str().unwrap()], tmp.path());
    assert!(out.status.success(), "{}", text(&out));
    let dir = tmp.path().join(&name);
    assert!(text(&out).contains(&format!("Created GPU project `{name}`")), "{}", text(&out));
    assert!(dir.join(".git").is_dir(), "a repository was started");

    let all = files(&dir);
    let rel: Vec<String> = all.iter().map(|p| p.strip_prefix(&dir).unwrap().to_string_lossy().into_owned()).collect();
    for f in expect_files.iter().chain(&[
        "Cargo.toml",
        ".gitignore",
        "README.md",
        "build.rs",
        "src/lib.rs",
        "src/main.rs",
        "tests/embedded.rs",
        "tests/gpu.rs",
    ]) {
        assert!(rel.iter().any(|r| r == f), "{f} is missing from {rel:?}");
    }
    for p in &all {
        let t = std::fs::read_to_string(p).unwrap();
        assert!(!t.contains("{{") && !t.contains("{{/"), "a template placeholder is left in {}:\n{t}", p.display());
    }
    let build_rs = std::fs::read_to_string(dir.join("build.rs")).unwrap();
    assert!(build_rs.contains("const ARCHS: &str = \"sm_80,sm_90\";"), "{build_rs}");

    let b = cargo(&dir, &["build"]);
    assert!(b.status.success(), "cargo build of a new {kernels} project:\n{}", text(&b));
    if kernels != "cuda" {
        // The struct parameter is named through the shared crate (not as a twin the host would
        // need), and its layout is checked: no warning about a kernel-crate type.
        let generated = std::fs::read_to_string(generated_kernels_rs(&name)).unwrap();
        let shared = format!("::{}_shared::Affine", name.replace('-', "_"));
        assert!(generated.contains(&shared), "kernels.rs does not name {shared}:\n{generated}");
        assert!(!text(&b).contains("defined in the kernel crate"), "{}", text(&b));
    }
    let t = cargo(&dir, &["test"]);
    let log = text(&t);
    assert!(t.status.success(), "cargo test of a new {kernels} project:\n{log}");
    for name in tests {
        assert!(log.contains(&format!("test {name} ... ok")), "{name} did not run:\n{log}");
    }
    // The GPU tests run on a GPU; elsewhere each is reported as ignored with the reason.
    for name in GPU_TESTS {
        let line = log.lines().find(|l| l.starts_with(&format!("test {name} "))).unwrap_or_else(|| panic!("{name} is not listed:\n{log}"));
        assert!(line.ends_with("... ok") || line.contains("... ignored (no GPU: "), "{line}");
    }
    let no_gpu = log.contains("... ignored (no GPU: ");
    assert!(!no_gpu || log.contains("test result: ok. 0 passed; 0 failed; 2 ignored;"), "the summary counts them:\n{log}");
    if kernels == "both" {
        // A user's first edit: one more kernel in each language. The project's tests take it
        // in without an edit of theirs, and the host gets its methods.
        let lib = dir.join("kernels/src/lib.rs");
        let rust = "\n/// `y[i] *= a`.\n///\n/// # Safety\n/// `y` points to `n` floats.\n#[kernel]\npub unsafe fn scale(n: u32, a: f32, y: *mut f32) {\n    let i = global_index();\n    if i < n as usize {\n        *y.add(i) *= a;\n    }\n}\n";
        std::fs::write(&lib, std::fs::read_to_string(&lib).unwrap() + rust).unwrap();
        // A new .cu file is a new module of the generated `kernels`.
        let relu = "extern \"C\" __global__ void relu(unsigned n, float *y) {\n  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) y[i] = fmaxf(y[i], 0.0f);\n}\n";
        std::fs::write(dir.join("cuda/relu.cu"), relu).unwrap();
        let t = cargo(&dir, &["test", "--test", "embedded"]);
        assert!(t.status.success(), "the tests of a project with a kernel added:\n{}", text(&t));
        let generated = std::fs::read_to_string(generated_kernels_rs(&name)).unwrap();
        assert!(generated.contains("pub unsafe fn scale(") && generated.contains("pub unsafe fn relu("), "{generated}");
        assert_eq!(
            generated.matches("/// # Safety").count(),
            generated.matches("pub unsafe fn ").count(),
            "one Safety section a method:\n{generated}"
        );
    }
    // main.rs runs on a GPU, and elsewhere says why it cannot, with the fix.
    let r = cargo(&dir, &["run", "-q"]);
    if !r.status.success() {
        assert!(text(&r).contains("Error: no CUDA driver: libcuda could not be loaded\n  help: install the NVIDIA driver"), "{}", text(&r));
    }
}

/// The `kernels.rs` that the newest build of package `name` generated.
fn generated_kernels_rs(name: &str) -> PathBuf {
    let build = Path::new(env!("CARGO_TARGET_TMPDIR")).join("new-projects/debug/build");
    let mut found: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(&build)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|d| d.file_name().and_then(|f| f.to_str()).and_then(|f| f.strip_prefix(name)).is_some_and(|rest| rest.starts_with('-')))
        .map(|d| d.join("out/kernels.rs"))
        .filter_map(|f| Some((std::fs::metadata(&f).ok()?.modified().ok()?, f)))
        .collect();
    found.sort();
    found.pop().unwrap_or_else(|| panic!("no out/kernels.rs of {name} under {}", build.display())).1
}

const TESTS: &[&str] = &["every_kernel_is_embedded_for_every_arch"];
/// tests/gpu.rs, on ptx-runtime's test harness.
const GPU_TESTS: &[&str] = &["the_kernels_load_on_this_machines_gpu", "kernels_match_the_cpu"];

fn a_new_rust_project_builds_and_tests() {
    scaffold_build_and_test("rust", &["kernels/Cargo.toml", "kernels/src/lib.rs", "shared/Cargo.toml", "shared/src/lib.rs"], TESTS);
}

fn a_new_cuda_project_builds_and_tests() {
    scaffold_build_and_test("cuda", &["cuda/sigmoid.cu"], TESTS);
}

fn a_new_project_with_both_languages_builds_and_tests() {
    scaffold_build_and_test("both", &["kernels/src/lib.rs", "shared/src/lib.rs", "cuda/sigmoid.cu"], TESTS);
}

fn init_fills_the_current_empty_folder_without_a_nested_repository() {
    let tmp = tempfile::Builder::new().prefix("cargo-ptx init ").tempdir().unwrap();
    let repo = tmp.path().join("outer");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    let dir = repo.join("my_gpu");
    std::fs::create_dir(&dir).unwrap();
    let out = cargo_ptx().args(["init", "--kernels", "cuda"]).current_dir(&dir).output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert!(dir.join("cuda/sigmoid.cu").is_file() && !dir.join("kernels").exists() && !dir.join("shared").exists());
    assert!(!dir.join(".git").exists(), "inside a repository, no second one is started");
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    assert!(manifest.contains("name = \"my_gpu\""), "named after the folder:\n{manifest}");
    assert!(text(&out).contains("Next cargo run --release") || text(&out).contains("cargo run --release"), "{}", text(&out));
}

fn registry_dependencies_once_published_and_path_dependencies_when_asked() {
    let tmp = tempfile::tempdir().unwrap();
    // As a binary installed from crates.io: no checkout beside it, the crates on the registry.
    let out = cargo_ptx()
        .args(["new", "reg", "--kernels", "both", "--vcs", "none"])
        .current_dir(tmp.path())
        .env("CARGO_PTX_CHECKOUT", "")
        .env("CARGO_PTX_CRATES_PUBLISHED", "yes")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let version = env!("CARGO_PKG_VERSION");
    let manifest = std::fs::read_to_string(tmp.path().join("reg/Cargo.toml")).unwrap();
    assert!(
        manifest.contains(&format!("ptx-build = \"{version}\"")) && manifest.contains(&format!("ptx-runtime = \"{version}\"")),
        "{manifest}"
    );
    let kernels = std::fs::read_to_string(tmp.path().join("reg/kernels/Cargo.toml")).unwrap();
    assert!(kernels.contains(&format!("ptx-device = \"{version}\"")), "{kernels}");
    let shared = std::fs::read_to_string(tmp.path().join("reg/shared/Cargo.toml")).unwrap();
    assert!(shared.contains(&format!("ptx-runtime = \"{version}\"")), "{shared}");
    // Nothing points back at the checkout the binary was built from, or at any other path
    // than the project's own shared/ crate.
    for f in files(&tmp.path().join("reg")) {
        let t = std::fs::read_to_string(&f).unwrap();
        let own = t.replace("reg-shared = { path = \"shared\" }", "").replace("reg-shared = { path = \"../shared\" }", "");
        assert!(!own.contains("path =") && !t.contains(checkout().to_str().unwrap()), "{} has a path:\n{t}", f.display());
    }
    assert!(!tmp.path().join("reg/.git").exists(), "--vcs none");

    let out = new(&["bypath", "--vcs", "none", "--path-deps", checkout().to_str().unwrap()], tmp.path());
    assert!(out.status.success(), "{}", text(&out));
    let kernels = std::fs::read_to_string(tmp.path().join("bypath/kernels/Cargo.toml")).unwrap();
    assert!(kernels.contains(&format!("ptx-device = {{ path = \"{}\" }}", checkout().join("ptx-device").display())), "{kernels}");
    let manifest = std::fs::read_to_string(tmp.path().join("bypath/Cargo.toml")).unwrap();
    assert!(manifest.contains(&format!("ptx-build = {{ path = \"{}\" }}", checkout().join("ptx-build").display())), "{manifest}");
    let shared = std::fs::read_to_string(tmp.path().join("bypath/shared/Cargo.toml")).unwrap();
    assert!(shared.contains(&format!("ptx-runtime = {{ path = \"{}\" }}", checkout().join("ptx-runtime").display())), "{shared}");
}

/// `cargo install --path cargo-ptx; cargo ptx new my-gpu && cd my-gpu && cargo build`, before our
/// crates are on crates.io: the project depends on the checkout the binary was built from, says
/// so, and its dependencies resolve (cargo finds every package, offline).
fn a_new_project_depends_on_the_checkout_it_was_built_from_and_resolves() {
    let tmp = tempfile::tempdir().unwrap();
    let out = cargo_ptx()
        .args(["new", "my-gpu", "--kernels", "both", "--vcs", "none"])
        .current_dir(tmp.path())
        .env_remove("CARGO_PTX_CHECKOUT")
        .env("CARGO_PTX_CRATES_PUBLISHED", "no")
        .output()
        .unwrap();
    let log = text(&out);
    assert!(out.status.success(), "{log}");
    let root = checkout();
    assert!(log.contains(&format!("ptx-build, ptx-runtime and ptx-device by path from {}", root.display())), "it says so:\n{log}");
    let dir = tmp.path().join("my-gpu");
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    assert!(manifest.contains(&format!("ptx-runtime = {{ path = \"{}\" }}", root.join("ptx-runtime").display())), "{manifest}");
    for project in [dir.clone(), dir.join("kernels")] {
        let out = cargo(&project, &["generate-lockfile", "--offline"]);
        assert!(out.status.success(), "the dependencies of {} do not resolve:\n{}", project.display(), text(&out));
    }
}

/// Neither a checkout nor published crates: one line naming `--path-deps`, and nothing written.
fn without_a_checkout_or_published_crates_new_stops_naming_path_deps() {
    let tmp = tempfile::tempdir().unwrap();
    let out = cargo_ptx()
        .args(["new", "my-gpu"])
        .current_dir(tmp.path())
        .env("CARGO_PTX_CHECKOUT", "")
        .env("CARGO_PTX_CRATES_PUBLISHED", "no")
        .output()
        .unwrap();
    let log = text(&out);
    assert!(!out.status.success(), "{log}");
    assert_eq!(log.trim().lines().count(), 1, "one line:\n{log}");
    assert!(log.contains("are not on crates.io") && log.contains("pass `--path-deps DIR`"), "{log}");
    assert!(!tmp.path().join("my-gpu").exists(), "nothing is written");
}

/// Runs `cargo ptx <args>` in a fresh folder; it must fail, say each of `needles`, and leave
/// the folder as it was.
#[track_caller]
fn refused(args: &[&str], setup: impl FnOnce(&Path), needles: &[&str]) {
    let tmp = tempfile::tempdir().unwrap();
    setup(tmp.path());
    let before = files(tmp.path());
    let dirs_before = std::fs::read_dir(tmp.path()).unwrap().count();
    let out = cargo_ptx().args(args).current_dir(tmp.path()).output().unwrap();
    let log = text(&out);
    assert!(!out.status.success(), "expected a failure: {log}");
    for n in needles {
        assert!(log.contains(n), "the error does not say {n:?}:\n{log}");
    }
    assert!(!log.contains("panicked"), "{log}");
    assert_eq!(files(tmp.path()), before, "nothing is left behind");
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), dirs_before, "no folder is left behind");
}

fn bad_names_are_refused_with_the_rule() {
    refused(&["new", "2fast"], |_| {}, &["invalid package name `2fast`", "cannot start with a digit", "--name"]);
    refused(&["new", "ok", "--name", "fn"], |_| {}, &["`fn` is a Rust keyword", "choose another --name"]);
    refused(&["new", "ok", "--name", "my app"], |_| {}, &["` ` is not allowed"]);
    refused(&["new", "core"], |_| {}, &["built-in `core` crate"]);
    refused(&["new", "ptx-runtime"], |_| {}, &["clash"]);
}

fn an_existing_folder_that_is_not_empty_is_refused() {
    refused(&["new", "taken"], |d| std::fs::create_dir_all(d.join("taken/src")).unwrap(), &["taken: the folder is not empty", "help:"]);
    refused(&["new", "file"], |d| std::fs::write(d.join("file"), "x").unwrap(), &["a file of that name exists"]);
    refused(
        &["init", "busy"],
        |d| {
            std::fs::create_dir(d.join("busy")).unwrap();
            std::fs::write(d.join("busy/notes.txt"), "mine").unwrap();
        },
        &["the folder is not empty", "cargo ptx new"],
    );
    refused(&["init", "missing"], |_| {}, &["the folder does not exist"]);
}

fn an_unwritable_parent_is_refused_and_leaves_nothing() {
    // A file where a folder should be: no one, root included, can create a folder in it.
    refused(&["new", "a-file/sub/proj"], |d| std::fs::write(d.join("a-file"), "x").unwrap(), &["could not create a project", "a-file"]);
    // A read-only folder; root writes anywhere, so where tests run as root, a read-only file system.
    let tmp = tempfile::tempdir().unwrap();
    let ro = tmp.path().join("read-only");
    std::fs::create_dir(&ro).unwrap();
    let mut perms = std::fs::metadata(&ro).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o555);
    std::fs::set_permissions(&ro, perms).unwrap();
    let parent = if std::fs::create_dir(ro.join("probe")).is_err() { ro.clone() } else { PathBuf::from("/sys") };
    if !parent.exists() {
        crate::harness::missing("a read-only folder (running as root without /sys)");
    }
    let out = new(&[parent.join("proj").to_str().unwrap()], tmp.path());
    let log = text(&out);
    assert!(!out.status.success() && log.contains("cannot write in") && log.contains("choose a folder you can write to"), "{log}");
    assert!(!parent.join("proj").exists());
}

fn bad_archs_and_checkouts_are_refused_before_anything_is_written() {
    refused(&["new", "demo", "--arch", "sm_81"], |_| {}, &["invalid arch `sm_81`"]);
    // The error names the folder given to --path-deps (not the project) and how to fix it.
    let missing = &["--path-deps /nonexistent/checkout: the folder cannot be read", "help: pass the root of a cargo-ptx checkout"];
    refused(&["new", "demo", "--path-deps", "/nonexistent/checkout"], |_| {}, missing);
    let not_a_checkout = &["--path-deps .: it is not a cargo-ptx checkout: it has no ptx-build/Cargo.toml", "leave out --path-deps"];
    refused(&["new", "demo", "--path-deps", "."], |_| {}, not_a_checkout);
    // A crate folder of the checkout instead of its root: the fix names the root.
    let crate_dir = checkout().join("ptx-build");
    let root_hint = format!("pass the checkout's root instead: `--path-deps {}`", checkout().display());
    refused(&["new", "demo", "--path-deps", crate_dir.to_str().unwrap()], |_| {}, &["it has no ptx-build/Cargo.toml", &root_hint]);
}

/// cargo as the user runs it: rustup's proxy, which takes the toolchain from a
/// `rust-toolchain.toml`, with none of the variables the test harness runs under.
fn user_cargo(dir: &Path, args: &[&str]) -> Output {
    let home =
        std::env::var_os("CARGO_HOME").map(PathBuf::from).or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")));
    let proxy = home.map(|h| h.join("bin/cargo")).filter(|p| p.is_file()).unwrap_or_else(|| PathBuf::from("cargo"));
    let mut cmd = Command::new(proxy);
    cmd.args(args).current_dir(dir);
    for v in
        ["RUSTUP_TOOLCHAIN", "CARGO_TARGET_DIR", "CARGO_BUILD_TARGET", "RUSTC", "RUSTC_WRAPPER", "RUSTFLAGS", "CARGO_ENCODED_RUSTFLAGS"]
    {
        cmd.env_remove(v);
    }
    cmd.output().unwrap()
}

fn cargo_check_and_clippy_work_inside_kernels_and_the_root_build_stays_fresh() {
    common::cuda();
    let tmp = tempfile::Builder::new().prefix("cargo-ptx new ").tempdir().unwrap();
    let root = checkout();
    let out = new(&["gpu-editor", "--vcs", "none", "--path-deps", root.to_str().unwrap()], tmp.path());
    assert!(out.status.success(), "{}", text(&out));
    let dir = tmp.path().join("gpu-editor");
    let kernels = dir.join("kernels");
    let toolchain = std::fs::read_to_string(kernels.join("rust-toolchain.toml")).unwrap();
    assert!(toolchain.contains("channel = \"nightly\"") && toolchain.contains("\"rust-src\""), "{toolchain}");
    let config = std::fs::read_to_string(kernels.join(".cargo/config.toml")).unwrap();
    assert!(config.contains("target = \"nvptx64-nvidia-cuda\"") && config.contains("build-std = [\"core\"]"), "{config}");

    let b = cargo(&dir, &["build"]);
    assert!(b.status.success(), "cargo build at the root:\n{}", text(&b));

    // In kernels/, as an editor or a user there runs it: the nightly, the GPU target, `core`.
    let c = user_cargo(&kernels, &["check"]);
    assert!(c.status.success(), "cargo check in kernels/:\n{}", text(&c));
    assert!(!text(&c).contains("warning:"), "the kernel template checks without warnings:\n{}", text(&c));
    if user_cargo(&kernels, &["clippy", "--version"]).status.success() {
        let c = user_cargo(&kernels, &["clippy", "--", "-D", "warnings"]);
        assert!(c.status.success(), "cargo clippy in kernels/:\n{}", text(&c));
    } else {
        eprintln!("clippy is not installed for the kernels' toolchain: only `cargo check` ran");
    }
    let d = user_cargo(&kernels, &["doc", "--no-deps"]);
    assert!(d.status.success(), "cargo doc in kernels/:\n{}", text(&d));

    // What the check left in kernels/ (target/, Cargo.lock) does not rebuild the host.
    let again = cargo(&dir, &["build"]);
    assert!(again.status.success(), "{}", text(&again));
    assert!(!text(&again).contains("Compiling"), "a second root build is a no-op:\n{}", text(&again));

    // The nested cargo does not read kernels/.cargo/config.toml, whichever folder `cargo ptx
    // build` runs in (its build-std would build `core` again beside the shared one): a key that
    // stops any cargo reading it proves it.
    std::fs::write(kernels.join(".cargo/config.toml"), config.replace("[build]\n", "[build]\njobs = 0\n")).unwrap();
    assert!(!user_cargo(&kernels, &["check"]).status.success(), "cargo reads the file in kernels/");
    let target = tmp.path().join("ptx-target");
    let p = cargo_ptx().args(["build", "--arch", "sm_80", "--target-dir"]).arg(&target).current_dir(&kernels).output().unwrap();
    assert!(p.status.success(), "cargo ptx build in kernels/:\n{}", text(&p));
    assert!(target.join("ptx/release/gpu-editor-kernels/sm_80/gpu_editor_kernels.ptx").is_file(), "{}", text(&p));
}

fn new_projects_are_rustfmt_clean_in_every_flavour() {
    // rustfmt's defaults, as `cargo fmt` applies them in a project with no rustfmt.toml.
    let rustfmt = || {
        let mut cmd = Command::new("rustfmt");
        cmd.env_remove("RUSTUP_TOOLCHAIN");
        cmd
    };
    if !rustfmt().arg("--version").output().is_ok_and(|o| o.status.success()) {
        crate::harness::missing("rustfmt (`rustup component add rustfmt`)");
    }
    let tmp = tempfile::tempdir().unwrap();
    for kernels in ["rust", "cuda", "both"] {
        let name = format!("gpu-{kernels}-demo");
        let out = new(&[&name, "--kernels", kernels, "--vcs", "none"], tmp.path());
        assert!(out.status.success(), "{}", text(&out));
        let rs: Vec<PathBuf> = files(&tmp.path().join(&name)).into_iter().filter(|p| p.extension().is_some_and(|e| e == "rs")).collect();
        assert!(rs.len() >= 5, "{rs:?}");
        let f = rustfmt().args(["--check", "--edition", "2021", "--color", "never"]).args(&rs).current_dir(tmp.path()).output().unwrap();
        assert!(f.status.success(), "`cargo ptx new --kernels {kernels}` writes code rustfmt would change:\n{}", text(&f));
        // `--arch all` builds a dozen archs; it does not list them.
        let readme = std::fs::read_to_string(tmp.path().join(&name).join("README.md")).unwrap();
        assert!(!readme.contains("lists every arch") && readme.contains("`cargo ptx doctor` lists them"), "{readme}");
    }
}

pub fn tests() -> Vec<crate::harness::Test> {
    crate::tests![
        init_fills_the_current_empty_folder_without_a_nested_repository,
        registry_dependencies_once_published_and_path_dependencies_when_asked,
        a_new_project_depends_on_the_checkout_it_was_built_from_and_resolves,
        without_a_checkout_or_published_crates_new_stops_naming_path_deps,
        bad_names_are_refused_with_the_rule,
        an_existing_folder_that_is_not_empty_is_refused,
        an_unwritable_parent_is_refused_and_leaves_nothing,
        bad_archs_and_checkouts_are_refused_before_anything_is_written,
        new_projects_are_rustfmt_clean_in_every_flavour;
        slow:
        a_new_rust_project_builds_and_tests,
        a_new_cuda_project_builds_and_tests,
        a_new_project_with_both_languages_builds_and_tests,
        cargo_check_and_clippy_work_inside_kernels_and_the_root_build_stays_fresh,
    ]
}
