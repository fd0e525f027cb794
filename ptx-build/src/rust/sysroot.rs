//! `core` for nvptx64, built once per (toolchain, profile, cpu, flags) and shared by every kernel
//! crate and target dir on the machine.
//!
//! The nightly serves no `rust-std` for nvptx64-nvidia-cuda, so a kernel crate needs
//! `-Zbuild-std=core`, and cargo builds `core` again in every target dir (about 15 s of the first
//! build on 2 cores). The first such build publishes the `core` and `compiler_builtins` it
//! built into a sysroot folder in the shared cache (`<cache>/sysroot/<key>/`: the rlibs where
//! rustc's `--sysroot` looks, their bitcode beside them for the link), with one rename; every
//! later kernel build with the same flags uses `--sysroot` and no `-Zbuild-std` (0.3 s for a
//! small crate instead of 15 s). Publishing from the build that had to compile `core` anyway
//! costs nothing (a separate build of `core` first took 13% longer on a cold build: cargo builds
//! `core` in parallel with the host's proc-macros, and a build before it cannot).
//!
//! A kernel workspace with `[profile.*]` settings does not publish: its `core` was built with
//! them, and the key holds only the profile's name.

use std::fs;
use std::path::{Path, PathBuf};

use crate::arch::Arch;
use crate::arch::TARGET;
use crate::backend::bitcode::Profile;
use crate::cache::{self, Key, ScratchDir};
use crate::error::{Error, Result};
use crate::tools::Rust;

/// The crates `-Zbuild-std=core` builds for the target.
const STD_CRATES: &[&str] = &["core", "compiler_builtins", "rustc_std_workspace_core"];

/// A published sysroot (the folder [`dir_for`] names): the bitcode of its crates.
#[derive(Clone, Debug)]
pub struct Sysroot {
    /// `core` and `compiler_builtins` as LLVM bitcode, for the link.
    pub bitcode: Vec<PathBuf>,
}

fn lib_dir(dir: &Path) -> PathBuf {
    dir.join("lib").join("rustlib").join(TARGET).join("lib")
}

/// Where the shared sysroot for these flags lives under `cache_root` (published or not): its
/// path is known before any build, so it keys the kernel crate's front end the same way
/// whether this build found it or built `core` itself.
pub fn dir_for(rust: &Rust, profile: Profile, cpu: Arch, rustflags: &[String], cache_root: &Path) -> PathBuf {
    let mut k = Key::new("sysroot-v1");
    k.str(&rust.version).str(&rust.rustc.to_string_lossy()).str(profile.dir_name()).str(&cpu.sm_name());
    for f in rustflags {
        k.str(f);
    }
    cache_root.join("sysroot").join(&k.finish()[..16])
}

/// The sysroot in `dir`, when one was published there.
pub fn existing(dir: &Path) -> Option<Sysroot> {
    // `complete` is written last: a folder without it was never published.
    if !dir.join("complete").is_file() {
        return None;
    }
    let mut bitcode: Vec<PathBuf> = fs::read_dir(dir.join("bc")).ok()?.flatten().map(|e| e.path()).collect();
    bitcode.sort();
    Some(Sysroot { bitcode })
}

/// Publishes, as the sysroot `dir`, the standard crates a `-Zbuild-std` build left in `deps`
/// (`bitcode`: their `.bc` files, as the build reported them). A failure to publish only means
/// the next build compiles `core` again, so the caller may ignore it.
pub fn publish(dir: &Path, bitcode: &[(String, PathBuf)], cache_root: &Path) -> Result<()> {
    let std_bc: Vec<&PathBuf> = bitcode.iter().filter(|(name, _)| STD_CRATES.contains(&name.as_str())).map(|(_, p)| p).collect();
    if !std_bc.iter().any(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("core-"))) {
        return Ok(());
    }
    let tmp_root = cache_root.join("tmp");
    cache::create_dir_all(&tmp_root)?;
    let scratch = ScratchDir::new(&tmp_root)?;
    let built = scratch.path().join("sysroot");
    let (libs, bc_dir) = (lib_dir(&built), built.join("bc"));
    cache::create_dir_all(&libs)?;
    cache::create_dir_all(&bc_dir)?;
    let copy = |from: &Path, to: PathBuf| fs::copy(from, &to).map(|_| ()).map_err(|e| Error::io("copy", to, e));
    for bc in std_bc {
        let Some(stem) = bc.file_stem().map(|s| s.to_string_lossy().into_owned()) else { continue };
        let deps = bc.parent().unwrap_or(Path::new("."));
        copy(bc, bc_dir.join(format!("{stem}.bc")))?;
        for ext in ["rlib", "rmeta"] {
            let lib = deps.join(format!("lib{stem}.{ext}"));
            if lib.is_file() {
                copy(&lib, libs.join(format!("lib{stem}.{ext}")))?;
            }
        }
    }
    cache::write_atomic(&built.join("complete"), b"")?;
    if let Some(parent) = dir.parent() {
        cache::create_dir_all(parent)?;
    }
    // Another build may have published the same sysroot meanwhile: either serves.
    let _ = fs::rename(&built, dir);
    Ok(())
}
