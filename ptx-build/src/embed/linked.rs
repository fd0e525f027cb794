//! Images linked into the host as an object file of their own, instead of `include_bytes!`.
//!
//! rustc keeps every file that `include_bytes!`/`include_str!` reads twice in the crate it
//! compiles: in its metadata and in its object code, both rewritten on every edit of the host
//! crate. A ggml-sized module (148 MB of PTX and cubins) made a 617 MB `.rlib` and a 7 s
//! rebuild for a one-line change of the host; a 202 MB file took 4.5-5.2 s a rebuild against
//! 0.25 s linked (BENCHMARKS.md, "Images linked as objects"). Here the build script writes each
//! module's images into one relocatable object, a symbol per image, and the generated module
//! declares them `extern`: rustc sees only their names and lengths, and the linker copies the
//! bytes once, into the final binary.
//!
//! Written as ELF (`embed::elf`; Linux is where this is tested; other targets keep
//! `include_bytes!`, as does a host package that may be built as a `staticlib`: rustc puts no
//! `-bundle` object into a static library). A `staticlib` of another crate that depends on the
//! host still lacks the objects: its link must add them (`native-static-libs` names them).
//! Each image is a COMDAT group of its own, so two crates embedding the same image (two host
//! crates of one kernel crate, linked into one binary) share one copy instead of clashing, and
//! a binary that names no image of an object drops it (`--gc-sections`).

use std::path::Path;

use super::elf::{self, Machine};
use crate::cache::{self, Key};
use crate::error::{Error, Result};

/// A target the build script can write an image object for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Target {
    arch: Machine,
}

impl Target {
    /// The target the build script builds for (cargo's `CARGO_CFG_TARGET_*`), where images can
    /// be linked as an object; `None` keeps `include_bytes!`.
    pub fn of_build() -> Option<Target> {
        let var = |k: &str| std::env::var(k).unwrap_or_default();
        // ELF64 only: x32 (`x86_64-unknown-linux-gnux32`) has 32-bit pointers.
        Target::new(&var("CARGO_CFG_TARGET_OS"), &var("CARGO_CFG_TARGET_ARCH")).filter(|_| var("CARGO_CFG_TARGET_POINTER_WIDTH") == "64")
    }

    /// [`Target::of_build`] for a host package whose manifest is `manifest` (its text): `None`
    /// where the package may be built as a `staticlib`, which links no object of a
    /// `-bundle` library into its archive (rustc only names it in `native-static-libs`, without
    /// the folder), so a C program linking the archive would lack every image. Any mention of
    /// `staticlib` counts: a false one costs only the `include_bytes!` of before.
    pub fn of_build_for(manifest: &str) -> Option<Target> {
        Target::of_build().filter(|_| !manifest.contains("staticlib"))
    }

    /// `os` and `arch` as cargo's `target_os` and `target_arch` spell them.
    pub fn new(os: &str, arch: &str) -> Option<Target> {
        // ELF with a little-endian 64-bit machine whose relocatable objects need no ABI flags:
        // what CUDA runs on (x86-64, Grace and Jetson's aarch64). ppc64le's and riscv's linkers
        // check ABI bits in the ELF header that a data-only object would have to copy right.
        if os != "linux" {
            return None;
        }
        let arch = match arch {
            "x86_64" => Machine::X86_64,
            "aarch64" => Machine::Aarch64,
            _ => return None,
        };
        Some(Target { arch })
    }
}

/// The symbol an image is linked as: its content hash, so that equal images are one symbol
/// (and one copy) and a changed image renames it, which recompiles the host crate.
pub fn symbol(bytes: &[u8]) -> String {
    symbol_of_hash(&cache::bytes_hash(bytes))
}

/// [`symbol`] of an image whose content hash (`cache::bytes_hash`) is known.
pub fn symbol_of_hash(hash: &str) -> String {
    format!("__ptx_build_{hash}")
}

/// An object file of images, and how to link it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImageObject {
    /// Its file name, unique to its content: `-l` looks for it in every crate's search folders.
    pub file_name: String,
    /// The folder it lies in.
    pub dir: std::path::PathBuf,
}

impl ImageObject {
    /// The build-script lines that link it into the crate and every crate that depends on it:
    /// not bundled into the `.rlib` (a copy per build), taken by its file name as it is.
    pub fn cargo_directives(&self) -> [String; 2] {
        [
            format!("cargo:rustc-link-search=native={}", self.dir.display()),
            format!("cargo:rustc-link-lib=static:-bundle,+verbatim={}", self.file_name),
        ]
    }
}

/// Writes `images` (symbol and bytes, as [`symbol`] names them) into one object in `dir`,
/// unless an object of the same content is there; other image objects in `dir` are removed.
pub fn write(target: Target, images: &[(&str, &[u8])], dir: &Path) -> Result<ImageObject> {
    // The name is the content's: an object already there is not written again, so the tag
    // changes with what `object_bytes` writes. Each symbol names its image's content already:
    // hashing the bytes again cost a cold build 30 ms of unoptimised xxh3 (3.3 MB of PTX).
    let mut key = Key::new("image-object-v3");
    key.str(&format!("{:?}", target.arch));
    for (name, bytes) in images {
        key.str(name).str(&bytes.len().to_string());
    }
    let file_name = format!("ptx-images-{}.o", &key.finish()[..16]);
    let path = dir.join(&file_name);
    if !path.is_file() {
        let bytes = object_bytes(target, images).map_err(|e| Error::io("write", &path, std::io::Error::other(e)))?;
        cache::write_atomic(&path, &bytes)?;
    }
    // The objects of earlier builds of this module: each is linked by name, so only one may stay.
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let name = e.file_name();
            let name = name.to_string_lossy();
            if name.starts_with("ptx-images-") && name.ends_with(".o") && name != file_name {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
    Ok(ImageObject { file_name, dir: dir.to_path_buf() })
}

fn object_bytes(target: Target, images: &[(&str, &[u8])]) -> std::result::Result<Vec<u8>, String> {
    // Equal images (`sm_80` and `compute_80` make the same PTX) are one symbol, defined once.
    let mut unique: Vec<(&str, &[u8])> = Vec::with_capacity(images.len());
    for &(name, bytes) in images {
        if !unique.iter().any(|(n, _)| *n == name) {
            unique.push((name, bytes));
        }
    }
    elf::relocatable(target.arch, &unique)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linux_x86_64_and_aarch64_link_objects_other_targets_include_bytes() {
        assert!(Target::new("linux", "x86_64").is_some());
        assert!(Target::new("linux", "aarch64").is_some());
        for (os, arch) in [("windows", "x86_64"), ("macos", "aarch64"), ("linux", "powerpc64"), ("linux", "riscv64"), ("", "")] {
            assert_eq!(Target::new(os, arch), None, "{os} {arch}");
        }
    }

    #[test]
    fn an_object_holds_each_image_at_its_symbol_and_a_new_content_replaces_the_old_file() {
        let dir = tempfile::tempdir().unwrap();
        let target = Target::new("linux", "x86_64").unwrap();
        let ptx = b".version 8.0\n.target sm_80\n".as_slice();
        let cubin = [0x7fu8, b'E', b'L', b'F', 2, 1, 1, 0].as_slice();
        let (s1, s2) = (symbol(ptx), symbol(cubin));
        let first = write(target, &[(&s1, ptx), (&s2, cubin)], dir.path()).unwrap();
        let bytes = std::fs::read(dir.path().join(&first.file_name)).unwrap();
        // An ELF relocatable object for x86-64 (e_type 1, e_machine 62).
        assert_eq!(&bytes[..4], b"\x7fELF");
        assert_eq!(u16::from_le_bytes([bytes[16], bytes[17]]), 1);
        assert_eq!(u16::from_le_bytes([bytes[18], bytes[19]]), 62);
        for needle in [ptx, cubin, s1.as_bytes(), s2.as_bytes(), b".note.GNU-stack".as_slice()] {
            assert!(bytes.windows(needle.len()).any(|w| w == needle), "{}", String::from_utf8_lossy(needle));
        }
        assert_eq!(
            first.cargo_directives(),
            [
                format!("cargo:rustc-link-search=native={}", dir.path().display()),
                format!("cargo:rustc-link-lib=static:-bundle,+verbatim={}", first.file_name),
            ]
        );
        // The same images again: the same file, untouched.
        let again = write(target, &[(&s1, ptx), (&s2, cubin)], dir.path()).unwrap();
        assert_eq!(again, first);
        // A changed image: a new name, and the old object gone (both would define `s1`).
        let changed = b".version 8.0\n.target sm_90\n".as_slice();
        let s3 = symbol(changed);
        let next = write(target, &[(&s3, changed), (&s2, cubin)], dir.path()).unwrap();
        assert_ne!(next.file_name, first.file_name);
        let names: Vec<String> =
            std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        assert_eq!(names, [next.file_name]);
    }
}
