//! The shared step cache: a second checkout of a workspace, in another target dir, starts no
//! compiler for kernels the first one built, gets byte-identical artifacts, and a damaged
//! entry is rebuilt, not used.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common;
use crate::common::{cargo_ptx, cuda, KernelCrate};

const PANIC: &str = "#[panic_handler]\nfn panic(_: &core::panic::PanicInfo) -> ! {\n    unsafe { core::arch::nvptx::trap() }\n}\n";
const HEADER: &str = "#pragma once\n__device__ inline float twice(float x) { return 2.0f * x; }\n";
const KERNEL_CU: &str = "#include \"common.cuh\"\nextern \"C\" __global__ void scale(int n, float *x) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) x[i] = twice(x[i]);\n}\n";

/// A checkout of a kernel crate with Rust and CUDA kernels and a shared header.
fn checkout(name: &str) -> KernelCrate {
    let k = KernelCrate::new(
        name,
        "archs = [\"sm_80\"]",
        &format!("#![no_std]\n#![feature(abi_ptx, stdarch_nvptx)]\n#[no_mangle]\npub unsafe extern \"ptx-kernel\" fn inc(x: *mut f32) {{ *x += 1.0; }}\n{PANIC}"),
    );
    k.write("cuda/scale.cu", KERNEL_CU);
    k.write("cuda/common.cuh", HEADER);
    k
}

/// `PTXAS` and `NVCC` wrappers that log each run (not the `--version`/`--help` probes) to a file.
struct Tools {
    dir: tempfile::TempDir,
}

impl Tools {
    fn new() -> Tools {
        let cuda = cuda();
        let dir = tempfile::tempdir().unwrap();
        let nvcc = common::nvcc();
        for (name, real) in [("ptxas", cuda.ptxas.unwrap().path), ("nvcc", nvcc)] {
            let log = dir.path().join("starts.log");
            let script = format!(
                "#!/bin/sh\ncase \"$1\" in --version|--help|--list-gpu-arch) ;; *) echo {name} \"$*\" >> '{}' ;; esac\nexec '{}' \"$@\"\n",
                log.display(),
                real.display()
            );
            let path = dir.path().join(name);
            std::fs::write(&path, script).unwrap();
            Command::new("chmod").arg("+x").arg(&path).status().unwrap();
        }
        Tools { dir }
    }

    /// The compiles since the last call, by tool (the `cc` crate's own probes of nvcc, `-?`
    /// and `-E`, write no output file and are not counted).
    fn starts(&self) -> Vec<String> {
        let log = std::fs::read_to_string(self.dir.path().join("starts.log")).unwrap_or_default();
        std::fs::remove_file(self.dir.path().join("starts.log")).ok();
        log.lines().filter(|l| l.contains(" -o ")).map(|l| l.split(' ').next().unwrap_or_default().to_string()).collect()
    }

    /// `cargo ptx build` of `k` into `target`, with these tools and `cache` (human output).
    fn build(&self, k: &KernelCrate, target: &Path, cache: &Path) -> String {
        let out = cargo_ptx()
            .arg("build")
            .arg(&k.dir)
            .arg("--target-dir")
            .arg(target)
            .arg("--release")
            .env("PTXAS", self.dir.path().join("ptxas"))
            .env("NVCC", self.dir.path().join("nvcc"))
            .env("CARGO_PTX_CACHE_DIR", cache)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "build failed:\n{stderr}");
        stderr
    }
}

fn artifacts(target: &Path, name: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = target.join("ptx/release").join(name).join("sm_80");
    let mut v: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "ptx" || x == "cubin"))
        .map(|p| (p.file_name().unwrap().into(), std::fs::read(&p).unwrap()))
        .collect();
    v.sort();
    v
}

fn a_second_checkout_in_a_fresh_target_dir_starts_no_compiler() {
    let tools = Tools::new();
    let cache = tempfile::tempdir().unwrap();
    let (first, second) = (checkout("cached_kernels"), checkout("cached_kernels"));
    let (t1, t2) = (common::shared_target(), tempfile::tempdir().unwrap());
    // The machine's first kernel build publishes `core` to the cache; the checkouts after it
    // build against that (their crates' hashes differ from a `-Zbuild-std` build's).
    let warmup = KernelCrate::new(
        "warmup_kernels",
        "archs = [\"sm_80\"]",
        &format!("#![no_std]\n#![feature(abi_ptx, stdarch_nvptx)]\n#[no_mangle]\npub unsafe extern \"ptx-kernel\" fn other(x: *mut u32) {{ *x = 7; }}\n{PANIC}"),
    );
    tools.build(&warmup, &t1, cache.path());
    tools.starts();

    tools.build(&first, &t1, cache.path());
    let mut started = tools.starts();
    started.sort();
    assert_eq!(started, ["nvcc", "ptxas", "ptxas"], "the first checkout compiles");

    let stderr = tools.build(&second, t2.path(), cache.path());
    assert_eq!(tools.starts(), Vec::<String>::new(), "no nvcc or ptxas for the second checkout:\n{stderr}");
    for verb in ["Linking", "Assembling", "(CUDA,"] {
        assert!(!stderr.contains(verb), "no `{verb}` step ran:\n{stderr}");
    }
    let want = artifacts(&t1, "cached_kernels");
    assert_eq!(want.len(), 4);
    assert_eq!(artifacts(t2.path(), "cached_kernels"), want, "byte-identical artifacts");

    // A header edit in the second checkout: nvcc runs again for it (the entry records the
    // header), and only for it.
    second.write("cuda/common.cuh", &HEADER.replace("2.0f", "3.0f"));
    tools.build(&second, t2.path(), cache.path());
    let mut started = tools.starts();
    started.sort();
    assert_eq!(started, ["nvcc", "ptxas"], "the edited header's module is rebuilt");
}

/// A checkout of a monorepo: kernel crate `kernels/mono_kernels` with a path dependency two
/// folders up (`shared/gpu-math`, as this repository's examples use `ptx-device`) and a .cu file
/// that includes a header outside the package (`include/common.cuh`).
fn monorepo() -> (tempfile::TempDir, PathBuf) {
    let root = tempfile::Builder::new().prefix("cargo-ptx e2e ").tempdir().unwrap();
    let mono = root.path().join("mono ñ");
    let files = [
        ("shared/gpu-math/Cargo.toml", "[package]\nname = \"gpu-math\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n".to_string()),
        (
            "shared/gpu-math/src/lib.rs",
            // Not inlined: a `.func` named with the crate's id; the panic holds its file's path.
            "#![no_std]\n/// `x * k`, clamped to `limit`.\n#[inline(never)]\npub fn scaled(x: f32, k: f32, limit: f32) -> f32 {\n    let y = x * k;\n    if y > limit { limit } else { y }\n}\n\n#[track_caller]\npub fn checked(i: usize, n: usize) -> usize {\n    if i >= n {\n        panic!(\"index out of range\");\n    }\n    i\n}\n".into(),
        ),
        (
            "kernels/mono_kernels/Cargo.toml",
            "[package]\nname = \"mono_kernels\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\ngpu-math = { path = \"../../shared/gpu-math\" }\n\n[package.metadata.ptx]\narchs = [\"sm_80\"]\n\n[workspace]\n".into(),
        ),
        (
            "kernels/mono_kernels/src/lib.rs",
            format!("#![no_std]\n#![feature(abi_ptx, stdarch_nvptx)]\n\n#[no_mangle]\npub unsafe extern \"ptx-kernel\" fn scale_clamped(n: usize, x: *mut f32, k: f32) {{\n    let i = core::arch::nvptx::_thread_idx_x() as usize;\n    let i = gpu_math::checked(i, n);\n    *x.add(i) = gpu_math::scaled(*x.add(i), k, 1.0e6);\n}}\n{PANIC}"),
        ),
        ("include/common.cuh", HEADER.to_string()),
        ("kernels/mono_kernels/cuda/twice.cu", KERNEL_CU.replace("\"common.cuh\"", "\"../../../include/common.cuh\"")),
    ];
    for (path, text) in files {
        let p = mono.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    (root, mono)
}

/// Two clones of a monorepo at different paths share one step cache: the second starts no
/// link, nvcc or ptxas and gets byte-identical artifacts, which name no path of either clone;
/// a build with the cache off makes the same bytes (ptxas gets no file times).
fn two_clones_of_a_monorepo_share_every_step_and_build_identical_artifacts() {
    let tools = Tools::new();
    let cache = tempfile::tempdir().unwrap();
    let ((a_root, a), (b_root, b)) = (monorepo(), monorepo());
    let (t1, t2, t3) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let crate_of = |mono: &Path| KernelCrate {
        root: tempfile::tempdir().unwrap(),
        dir: mono.join("kernels/mono_kernels"),
        name: "mono_kernels".into(),
    };
    tools.build(&crate_of(&a), t1.path(), cache.path());
    let mut started = tools.starts();
    started.sort();
    assert_eq!(started, ["nvcc", "ptxas", "ptxas"], "the first clone compiles");

    let stderr = tools.build(&crate_of(&b), t2.path(), cache.path());
    assert_eq!(tools.starts(), Vec::<String>::new(), "no nvcc or ptxas for the second clone:\n{stderr}");
    for verb in ["Linking", "Assembling", "(CUDA,"] {
        assert!(!stderr.contains(verb), "no `{verb}` step ran for the second clone:\n{stderr}");
    }
    let want = artifacts(t1.path(), "mono_kernels");
    assert_eq!(want.len(), 4, "PTX and cubin of the Rust and the CUDA module");
    assert_eq!(artifacts(t2.path(), "mono_kernels"), want, "byte-identical artifacts");
    for (name, bytes) in &want {
        let text = String::from_utf8_lossy(bytes);
        for root in [a_root.path(), b_root.path()] {
            let escaped = root.display().to_string().replace('ñ', "\\303\\261");
            assert!(!text.contains(&*root.display().to_string()) && !text.contains(&escaped), "{} names a clone's path", name.display());
        }
    }
    let ptx = |name: &str| String::from_utf8_lossy(&want.iter().find(|(n, _)| n.to_str() == Some(name)).unwrap().1).into_owned();
    let rust = ptx("mono_kernels.ptx");
    assert!(rust.contains("\"../../shared/gpu-math/src/lib.rs\""), "the path dependency, named from the workspace:\n{rust}");
    assert!(rust.contains(".func") && rust.contains("gpu_math6scaled"), "the dependency's function stays a call:\n{rust}");
    assert!(ptx("twice.ptx").contains("\"../../include/common.cuh\""), "{}", ptx("twice.ptx"));

    // The cache off: the same bytes, from nothing cached (`core` built with -Zbuild-std), run
    // in the kernel crate's folder, where the PTX's relative `.file` names are real files with
    // their own times (the builds above ran in this package's folder: its `src/lib.rs` is
    // another file of the same name).
    let out = cargo_ptx()
        .current_dir(b.join("kernels/mono_kernels"))
        .arg("build")
        .arg(b.join("kernels/mono_kernels"))
        .arg("--target-dir")
        .arg(t3.path())
        .arg("--release")
        .env("CARGO_PTX_CACHE_DIR", "off")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(artifacts(t3.path(), "mono_kernels"), want, "the cache off builds the same bytes");
}

fn a_damaged_entry_is_rebuilt_not_used() {
    let tools = Tools::new();
    let cache = tempfile::tempdir().unwrap();
    let (first, second) = (checkout("damaged_kernels"), checkout("damaged_kernels"));
    let t2 = tempfile::tempdir().unwrap();
    tools.build(&first, &common::shared_target(), cache.path());
    tools.starts();
    // Flip bytes of every cached cubin.
    let mut damaged = 0;
    for entry in walk(cache.path()) {
        if entry.file_name().is_some_and(|n| n == "cubin") {
            let mut bytes = std::fs::read(&entry).unwrap();
            for b in bytes.iter_mut().take(64) {
                *b ^= 0xff;
            }
            std::fs::write(&entry, bytes).unwrap();
            damaged += 1;
        }
    }
    assert_eq!(damaged, 2);
    tools.build(&second, t2.path(), cache.path());
    assert_eq!(tools.starts(), ["ptxas", "ptxas"], "both cubins are assembled again");
    assert_eq!(artifacts(t2.path(), "damaged_kernels"), artifacts(&common::shared_target(), "damaged_kernels"));
}

fn a_bad_cache_setting_names_its_source() {
    let k = checkout("blankcache_kernels");
    let run = k.build_with(&[], |c| {
        c.env("CARGO_PTX_CACHE_DIR", " ");
    });
    // Blank means unset: the build goes on with the default cache.
    run.assert_ok();
    let k = KernelCrate::new("badcache_kernels", "archs = [\"sm_80\"]\nshared-cache = \"\"", "");
    k.build(&[]).assert_error(&["invalid `shared-cache` in [package.metadata.ptx] of", "expected a folder or `off`"]);
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        if e.file_type().unwrap().is_dir() {
            out.extend(walk(&e.path()));
        } else {
            out.push(e.path());
        }
    }
    out
}

pub fn tests() -> Vec<crate::harness::Test> {
    crate::tests![
        a_second_checkout_in_a_fresh_target_dir_starts_no_compiler,
        two_clones_of_a_monorepo_share_every_step_and_build_identical_artifacts,
        a_damaged_entry_is_rebuilt_not_used,
        a_bad_cache_setting_names_its_source,
    ]
}
