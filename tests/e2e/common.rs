//! Helpers for the end-to-end tests: scratch kernel crates, the `cargo-ptx` binary, JSON output.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// A command's stdout and stderr, one after the other.
pub fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// Runs `cmd`, fails the test with its output unless it succeeds, and returns that output.
#[track_caller]
pub fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(out.status.success(), "{cmd:?} failed:\n{}", text(&out));
    text(&out)
}

/// One target dir for every test, so `core` is built for nvptx64 once, not once per test.
/// Its name has a space and a non-ASCII letter on purpose.
pub fn shared_target() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("e2e target ü")
}

pub fn cargo_ptx() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cargo-ptx"));
    cmd.env_remove("CARGO_PTX_ARCH").env("NO_COLOR", "1");
    cmd
}

/// A kernel crate in a fresh temporary folder (whose path has a space and non-ASCII letters).
pub struct KernelCrate {
    pub root: tempfile::TempDir,
    pub dir: PathBuf,
    pub name: String,
}

impl KernelCrate {
    pub fn new(name: &str, metadata: &str, lib_rs: &str) -> KernelCrate {
        let root = tempfile::Builder::new().prefix("cargo-ptx e2e ").tempdir().expect("temp dir");
        let dir = root.path().join("kernels ñ").join(name);
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::write(
            dir.join("Cargo.toml"),
            format!("[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[package.metadata.ptx]\n{metadata}\n\n[workspace]\n"),
        )
        .unwrap();
        std::fs::write(dir.join("src/lib.rs"), lib_rs).unwrap();
        KernelCrate { root, dir, name: name.to_string() }
    }

    /// A copy of one of the repository's examples, with the device crates beside it where its
    /// relative `ptx-device` path looks (`examples/x` -> `../../ptx-device`).
    pub fn example(name: &str) -> KernelCrate {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let root = tempfile::Builder::new().prefix("cargo-ptx e2e ").tempdir().expect("temp dir");
        let dir = root.path().join("examples ñ").join(name);
        copy_dir(&repo.join("examples").join(name), &dir);
        for krate in ["ptx-device", "ptx-device-macros"] {
            copy_dir(&repo.join(krate), &root.path().join(krate));
        }
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        let name = manifest.lines().find_map(|l| l.strip_prefix("name = ")).unwrap().trim_matches('"').to_string();
        KernelCrate { root, dir, name }
    }

    /// `cargo ptx build <dir> --target-dir <shared> --message-format json <args>`.
    pub fn build(&self, args: &[&str]) -> Run {
        self.build_with(args, |_| {})
    }

    pub fn build_with(&self, args: &[&str], env: impl FnOnce(&mut Command)) -> Run {
        let mut cmd = cargo_ptx();
        cmd.arg("build").arg(&self.dir).arg("--target-dir").arg(shared_target()).args(["--message-format", "json"]).args(args);
        env(&mut cmd);
        Run::from(cmd.output().expect("run cargo-ptx"))
    }

    /// Writes a file of the crate (folders made as needed).
    pub fn write(&self, path: &str, text: &str) {
        let p = self.dir.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    /// Where a PTX module (a .cu file's, or the Rust crate's) lands.
    pub fn module_artifact(&self, profile: &str, arch: &str, module: &str, ext: &str) -> PathBuf {
        shared_target().join("ptx").join(profile).join(&self.name).join(arch).join(format!("{module}.{ext}"))
    }

    /// Where the artifacts of this crate land for `profile` and `arch`.
    pub fn artifact(&self, profile: &str, arch: &str, ext: &str) -> PathBuf {
        shared_target().join("ptx").join(profile).join(&self.name).join(arch).join(format!("{}.{ext}", self.name.replace('-', "_")))
    }
}

/// Copies a folder (its `target` left out).
pub fn copy_dir(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for e in std::fs::read_dir(src).unwrap() {
        let e = e.unwrap();
        let name = e.file_name();
        if name == "target" {
            continue;
        }
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dst.join(&name));
        } else {
            std::fs::copy(e.path(), dst.join(&name)).unwrap();
        }
    }
}

/// A finished `cargo ptx` run with its JSON lines parsed.
pub struct Run {
    pub success: bool,
    pub code: Option<i32>,
    pub messages: Vec<Value>,
    pub stdout: String,
    pub stderr: String,
}

impl From<Output> for Run {
    fn from(o: Output) -> Run {
        let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
        let messages = stdout.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}"))).collect();
        Run {
            success: o.status.success(),
            code: o.status.code(),
            messages,
            stdout,
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

impl Run {
    pub fn of(&self, reason: &str) -> Vec<&Value> {
        self.messages.iter().filter(|m| m["reason"] == reason).collect()
    }

    pub fn errors(&self) -> Vec<&Value> {
        self.of("ptx-diagnostic").into_iter().filter(|d| d["level"] == "error").collect()
    }

    /// Every error message, joined, for assertions and failure output.
    pub fn error_text(&self) -> String {
        self.errors().iter().map(|d| d["message"].as_str().unwrap_or_default().to_string()).collect::<Vec<_>>().join("\n---\n")
    }

    #[track_caller]
    pub fn assert_ok(&self) -> &Self {
        assert!(self.success, "cargo ptx failed:\nstdout:\n{}\nstderr:\n{}", self.stdout, self.stderr);
        assert_eq!(self.messages.last().map(|m| m["reason"].clone()), Some("build-finished".into()));
        self
    }

    /// Fails, the last JSON line says so, and an error mentions every one of `needles`.
    #[track_caller]
    /// A flag value refused by the argument parser, before any build starts (exit 2, like cargo).
    pub fn assert_usage_error(&self, needles: &[&str]) -> &Self {
        assert_eq!(self.code, Some(2), "expected a usage error:\nstdout:\n{}\nstderr:\n{}", self.stdout, self.stderr);
        for n in needles {
            assert!(self.stderr.contains(n), "error does not mention {n:?}:\n{}", self.stderr);
        }
        self
    }

    pub fn assert_error(&self, needles: &[&str]) -> &Self {
        assert!(!self.success, "expected a failure:\nstdout:\n{}\nstderr:\n{}", self.stdout, self.stderr);
        assert_eq!(self.messages.last().cloned(), Some(serde_json::json!({"reason": "build-finished", "success": false})));
        let text = self.error_text();
        for n in needles {
            assert!(text.contains(n), "error does not mention {n:?}:\n{text}\nstderr:\n{}", self.stderr);
        }
        assert!(!self.stderr.contains("panicked"), "{}", self.stderr);
        self
    }
}

/// The CUDA tools the build tests rely on, found the way `cargo ptx` finds them: ptxas and
/// libdevice (the test is ignored without them, and fails in CI).
pub fn cuda() -> ptx_build::internals::tools::Cuda {
    let cuda = ptx_build::internals::tools::Cuda::find();
    if cuda.ptxas.is_none() || cuda.libdevice.is_none() {
        crate::harness::missing("ptxas and libdevice (run `cargo ptx setup`)");
    }
    cuda
}

/// Writes `script`, a shell script that appends `prefix` and its arguments to `log`, then runs
/// `real` with them: what the tests that count tool starts put in front of nvcc or ptxas.
pub fn logging_wrapper(script: &Path, real: &Path, log: &Path, prefix: &str) -> PathBuf {
    std::fs::write(script, format!("#!/bin/sh\necho \"{prefix}$*\" >> '{}'\nexec '{}' \"$@\"\n", log.display(), real.display())).unwrap();
    std::fs::set_permissions(script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    script.to_path_buf()
}

/// nvcc, as `cargo ptx` finds it (the test is ignored without it, and fails in CI).
pub fn nvcc() -> PathBuf {
    crate::harness::require(ptx_build::internals::tools::Cuda::find().nvcc, "nvcc (run `cargo ptx setup`)").path
}

/// Stops a test of what happens without a CUDA driver, where there is one.
pub fn no_cuda_driver_here() {
    if cargo_ptx::sanitize::driver_present() {
        crate::harness::missing("a machine without a CUDA driver (this one has one)");
    }
}

/// Hides every CUDA install from discovery.
pub fn hide_cuda(cmd: &mut Command, empty_home: &Path) {
    for v in ["PTXAS", "NVCC", "LIBDEVICE", "CUDA_PATH", "CUDA_HOME", "CUDA_ROOT"] {
        cmd.env_remove(v);
    }
    // The shared step cache (and its `core`) stays where it was: hiding CUDA is not about it.
    if let Some(steps) = ptx_build::internals::tools::home().map(|h| h.join("steps")) {
        cmd.env("CARGO_PTX_CACHE_DIR", steps);
    }
    cmd.env("CARGO_PTX_HOME", empty_home);
}
