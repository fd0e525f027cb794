//! `core` for nvptx64, built once per (toolchain, profile, cpu, flags) and shared by every kernel
//! crate and target dir on the machine.
//!
//! The nightly serves no `rust-std` for nvptx64-nvidia-cuda, so a kernel crate needs
//! `-Zbuild-std=core`, and cargo builds `core` again in every target dir (about 15 s of the first
//! build on 2 cores). Instead the engine builds it once, with the same flags a kernel build
//! uses, into a sysroot folder in the shared cache (`<cache>/sysroot/<key>/`: the rlibs where
//! rustc's `--sysroot` looks, their bitcode beside them for the link), published with one
//! rename; kernel crates then build with `--sysroot` and no `-Zbuild-std` (0.3 s for a small
//! crate). With the shared cache off, kernel crates keep `-Zbuild-std=core`.
//!
//! `core` is built with cargo's default profile settings for the kernels' profile: a kernel
//! workspace's `[profile.*]` changes (opt-level, overflow-checks) apply to its own crates, not to
//! `core`. (The bitcode is optimised again by the link stage's `opt` either way.)

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use crate::arch::Arch;
use crate::bitcode::Profile;
use crate::cache::{self, Key, ScratchDir};
use crate::error::{Error, Result};
use crate::process;
use crate::report::{Event, Reporter};
use crate::rust::TARGET;
use crate::toolchain::Rust;

/// A built sysroot (the folder [`dir_for`] names): the bitcode of its crates.
#[derive(Clone, Debug)]
pub struct Sysroot {
    /// `core` and `compiler_builtins` as LLVM bitcode, for the link.
    pub bitcode: Vec<PathBuf>,
}

impl Sysroot {
    fn lib_dir(dir: &Path) -> PathBuf {
        dir.join("lib").join("rustlib").join(TARGET).join("lib")
    }

    fn read(dir: &Path) -> Option<Sysroot> {
        // `complete` is written last: a folder without it was never published.
        if !dir.join("complete").is_file() {
            return None;
        }
        let bc_dir = dir.join("bc");
        let mut bitcode: Vec<PathBuf> = fs::read_dir(&bc_dir).ok()?.flatten().map(|e| e.path()).collect();
        bitcode.sort();
        Some(Sysroot { bitcode })
    }
}

/// Where the shared sysroot for these flags lives under `cache_root` (built or not): its path
/// is known before the build, so it can key the kernel crate's front end.
pub fn dir_for(rust: &Rust, profile: Profile, cpu: Arch, rustflags: &[String], cache_root: &Path) -> PathBuf {
    cache_root.join("sysroot").join(&key(rust, profile, cpu, rustflags)[..16])
}

fn key(rust: &Rust, profile: Profile, cpu: Arch, rustflags: &[String]) -> String {
    let mut k = Key::new("sysroot-v1");
    k.str(&rust.version).str(&rust.rustc.to_string_lossy()).str(profile.dir_name()).str(&cpu.sm_name());
    for f in rustflags {
        k.str(f);
    }
    k.finish()
}

/// The shared sysroot for these flags under `cache_root`, built first when missing.
pub fn ensure(
    rust: &Rust,
    profile: Profile,
    cpu: Arch,
    rustflags: &[String],
    cache_root: &Path,
    reporter: &dyn Reporter,
) -> Result<Sysroot> {
    let key = key(rust, profile, cpu, rustflags);
    let dest = dir_for(rust, profile, cpu, rustflags, cache_root);
    if let Some(s) = Sysroot::read(&dest) {
        return Ok(s);
    }
    reporter.report(Event::Status {
        verb: "Compiling",
        message: format!("core for {TARGET} ({}, {}; once, shared by every kernel crate)", rust.toolchain, cpu.sm_name()),
    });
    let tmp_root = cache_root.join("tmp");
    cache::create_dir_all(&tmp_root)?;
    cache::remove_stale(&tmp_root);
    let scratch = ScratchDir::new(&tmp_root)?;
    let krate = scratch.path().join("core-build");
    cache::create_dir_all(&krate.join("src"))?;
    cache::write_atomic(
        &krate.join("Cargo.toml"),
        b"[package]\nname = \"cargo_ptx_sysroot\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\n[workspace]\n",
    )?;
    cache::write_atomic(&krate.join("src/lib.rs"), b"#![no_std]\n")?;
    let target_dir = scratch.path().join("target");
    let mut cmd = process::command(&rust.cargo);
    cmd.current_dir(&krate)
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_BUILD_TARGET")
        .env("RUSTC", &rust.rustc)
        .env("RUSTUP_TOOLCHAIN", &rust.toolchain)
        .env("CARGO_ENCODED_RUSTFLAGS", rustflags.join("\x1f"))
        .env("CARGO_TERM_PROGRESS_WHEN", "never")
        .args(["rustc", "--lib", "--crate-type", "rlib", "--target", TARGET, "-Zbuild-std=core", "--quiet"])
        .arg("--target-dir")
        .arg(&target_dir)
        .stdin(Stdio::null());
    if profile == Profile::Release {
        cmd.arg("--release");
    }
    process::checked("cargo", || format!(" building `core` for {TARGET}"), &mut cmd)?;

    let deps = target_dir.join(TARGET).join(profile.dir_name()).join("deps");
    let built = scratch.path().join("sysroot");
    let lib_dir = Sysroot::lib_dir(&built);
    let bc_dir = built.join("bc");
    cache::create_dir_all(&lib_dir)?;
    cache::create_dir_all(&bc_dir)?;
    let mut found_core = false;
    for e in fs::read_dir(&deps).map_err(|e| Error::io("read", &deps, e))?.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.contains("cargo_ptx_sysroot") {
            continue;
        }
        let to = if name.ends_with(".rlib") || name.ends_with(".rmeta") {
            found_core |= name.starts_with("libcore-");
            lib_dir.join(&name)
        } else if name.ends_with(".bc") {
            bc_dir.join(&name)
        } else {
            continue;
        };
        fs::copy(e.path(), &to).map_err(|err| Error::io("copy", &to, err))?;
    }
    if !found_core {
        return Err(Error::ToolFailed {
            tool: "cargo".into(),
            context: format!(" building `core` for {TARGET}"),
            command: process::command_line(&cmd),
            output: format!("  no libcore rlib in {}", deps.display()),
        });
    }
    fs::write(built.join("complete"), &key).map_err(|e| Error::io("write", built.join("complete"), e))?;
    if let Some(parent) = dest.parent() {
        cache::create_dir_all(parent)?;
    }
    // Another process may have published the same sysroot meanwhile: either copy serves.
    if fs::rename(&built, &dest).is_err() && Sysroot::read(&dest).is_none() {
        return Err(Error::io("move into place", &dest, std::io::Error::other("could not publish the built sysroot")));
    }
    Sysroot::read(&dest).ok_or_else(|| Error::io("read", &dest, std::io::Error::other("the published sysroot is incomplete")))
}
