//! Finding and versioning every tool a build needs, in one place and one report.
//!
//! Rust kernels need a rustup nightly with `rust-src` (for `-Zbuild-std=core`) and `llvm-tools`
//! (llvm-link, opt, llc of the same LLVM that compiled the bitcode). CUDA pieces are looked up
//! component by component, in this order:
//!
//! 1. the variables naming one file: `PTXAS`, `NVCC`, `LIBDEVICE`;
//! 2. the variables naming a toolkit root: `CUDA_PATH`, `CUDA_HOME`, `CUDA_ROOT`;
//! 3. `PATH`, then `/usr/local/cuda`;
//! 4. the copy `cargo ptx setup` installed under the cargo-ptx home.
//!
//! A variable naming one file wins over a root because it is the more specific request.

mod cuda;
pub mod gpu;
pub mod process;
mod rust;
pub mod slots;

use std::fs;
use std::path::{Path, PathBuf};

pub use cuda::{install_roots, Cuda, Libdevice, Rejected, Tool};
pub use rust::{Llvm, Rust};

/// Every environment variable tool discovery reads (a build script reruns when one changes).
pub const ENV_VARS: &[&str] = &[
    "PTXAS",
    "NVCC",
    "LIBDEVICE",
    "CUDA_PATH",
    "CUDA_HOME",
    "CUDA_ROOT",
    "PATH",
    "CARGO_PTX_HOME",
    "XDG_CACHE_HOME",
    "HOME",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
];

/// The rustup toolchain kernels use unless the crate or the command line says otherwise.
pub const DEFAULT_TOOLCHAIN: &str = "nightly";

/// The host's target triple: `TARGET` inside a build script, else what `rustc -vV` says.
pub fn host_triple() -> String {
    if let Ok(t) = std::env::var("TARGET") {
        return t;
    }
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    process::probe(process::command(rustc).arg("-vV"))
        .ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).lines().find_map(|l| l.strip_prefix("host: ").map(str::to_string)))
        .unwrap_or_else(|| "x86_64-unknown-linux-gnu".to_string())
}

/// Where `cargo ptx setup` installs, and other per-user state of cargo-ptx.
pub fn home() -> Option<PathBuf> {
    if let Some(h) = std::env::var_os("CARGO_PTX_HOME").filter(|h| !h.is_empty()) {
        return Some(PathBuf::from(h));
    }
    if let Some(x) = std::env::var_os("XDG_CACHE_HOME").filter(|h| !h.is_empty()) {
        return Some(PathBuf::from(x).join("cargo-ptx"));
    }
    std::env::var_os("HOME").filter(|h| !h.is_empty()).map(|h| PathBuf::from(h).join(".cache").join("cargo-ptx"))
}

/// `CARGO_PTX_HOME`, when it is set to something that is not a folder: an error naming the
/// variable (otherwise nothing installed is found, and setup fails to install there).
pub fn check_home() -> crate::error::Result<()> {
    let Some(h) = std::env::var_os("CARGO_PTX_HOME").filter(|h| !h.is_empty()).map(PathBuf::from) else { return Ok(()) };
    if h.exists() && !h.is_dir() {
        return Err(crate::error::Error::BadToolVariable {
            var: "CARGO_PTX_HOME".into(),
            path: h,
            problem: "is not a folder".into(),
            help: "point it at a folder (where `cargo ptx setup` installs NVIDIA's tools and the step cache lives), or unset it to use ~/.cache/cargo-ptx".into(),
        });
    }
    Ok(())
}

pub(crate) fn setup_help(toolchain: &str) -> String {
    format!("run `cargo ptx setup`, or `rustup toolchain install {toolchain} --profile minimal --component rust-src,llvm-tools`")
}

/// A CUDA library whose headers a CUDA toolkit has and NVIDIA's compiler wheels (nvcc, crt,
/// runtime, CCCL) do not: each comes in a wheel of its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CudaLibrary {
    /// As `cargo ptx setup --with` and `cuda-libraries` name it (the `cuda-toolkit` PyPI
    /// package's extra of the same wheel).
    pub name: &'static str,
    /// As NVIDIA writes it, for messages (`cuRAND`).
    pub title: &'static str,
    /// A header that shows the library's headers are there.
    pub header: &'static str,
    /// How the names of its headers start, as an `#include` writes them (`curand.h`, `curand_`).
    /// Not the libraries of other wheels or none with a like name: cuSPARSELt's `cusparseLt.h`,
    /// MathDx's `cublasdx.hpp` and `curanddx.hpp`, cudnn-frontend's `cudnn_frontend.h`.
    pub prefixes: &'static [&'static str],
}

/// CUDA libraries `cargo ptx setup --with NAME` can put into the CUDA install, and
/// `cuda-libraries` can name.
pub const CUDA_LIBRARIES: &[CudaLibrary] = &[
    CudaLibrary {
        name: "cublas",
        title: "cuBLAS",
        header: "cublas_v2.h",
        prefixes: &["cublas.h", "cublas_", "cublasLt", "cublasXt", "nvblas.h"],
    },
    CudaLibrary {
        name: "cudnn",
        title: "cuDNN",
        header: "cudnn.h",
        prefixes: &["cudnn.h", "cudnn_v", "cudnn_adv", "cudnn_backend", "cudnn_cnn", "cudnn_graph", "cudnn_ops"],
    },
    CudaLibrary { name: "curand", title: "cuRAND", header: "curand_kernel.h", prefixes: &["curand.h", "curand_"] },
    CudaLibrary { name: "cusparse", title: "cuSPARSE", header: "cusparse.h", prefixes: &["cusparse.h", "cusparse_v2.h"] },
    CudaLibrary { name: "cufft", title: "cuFFT", header: "cufft.h", prefixes: &["cufft.h", "cufftXt.h", "cufftw.h", "cudalibxt.h"] },
    CudaLibrary {
        name: "cusolver",
        title: "cuSOLVER",
        header: "cusolverDn.h",
        prefixes: &["cusolverDn", "cusolverMg", "cusolverRf", "cusolverSp", "cusolver_common"],
    },
    // NVTX 3 is headers only, in a folder of its own (`<nvtx3/nvToolsExt.h>`).
    CudaLibrary { name: "nvtx", title: "NVTX", header: "nvtx3/nvToolsExt.h", prefixes: &["nvtx3/", "nvToolsExt"] },
    CudaLibrary {
        name: "profiler",
        title: "the CUDA profiler API",
        header: "cuda_profiler_api.h",
        prefixes: &["cuda_profiler_api.h", "cudaProfiler.h"],
    },
];

/// The library of [`CUDA_LIBRARIES`] a header belongs to, by its name as the `#include` wrote
/// it (`curand_kernel.h` -> cuRAND).
pub fn cuda_library_of_header(header: &str) -> Option<&'static CudaLibrary> {
    let header = header.trim_start_matches("./");
    CUDA_LIBRARIES.iter().find(|l| l.prefixes.iter().any(|p| header.starts_with(p)))
}

/// A program named by an option (`launcher`): a path as written, else on PATH, else one
/// `cargo ptx setup --with NAME` installed.
pub fn find_program(name: &str) -> Option<PathBuf> {
    let as_path = Path::new(name);
    if as_path.components().count() > 1 {
        return Some(as_path.to_path_buf()).filter(|p| p.is_file());
    }
    on_path(name).or_else(|| installed_tool(name))
}

/// A tool `cargo ptx setup --with NAME` installed: `<cargo-ptx home>/tools/NAME/bin/NAME`.
pub fn installed_tool(name: &str) -> Option<PathBuf> {
    Some(home()?.join("tools").join(name).join("bin").join(name)).filter(|p| p.is_file())
}

/// The first executable file named `name` in `PATH`, as a shell would find it.
///
/// Written here rather than with the `which` crate: a PATH walk is a few lines, and every
/// package in ptx-build's tree slows each no-op build of a host crate (see `cache`).
pub fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(name)).find(|p| is_executable(p))
}

#[cfg(unix)]
fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(p: &Path) -> bool {
    p.is_file()
}

/// The newest CUDA release `cargo ptx setup` installed: `<home>/cuda/<version>/nvidia/cu<major>`.
pub fn setup_root() -> Option<PathBuf> {
    let base = home()?.join("cuda");
    let mut installs: Vec<(Vec<u32>, PathBuf)> = fs::read_dir(&base)
        .ok()?
        .filter_map(|e| e.ok())
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let key: Vec<u32> = name.split('.').filter_map(|p| p.parse().ok()).collect();
            let nvidia = e.path().join("nvidia");
            let cu = fs::read_dir(&nvidia).ok()?.filter_map(|d| d.ok()).map(|d| d.path()).find(|p| p.join("bin").is_dir())?;
            Some((key, cu))
        })
        .collect();
    installs.sort();
    installs.pop().map(|(_, p)| p)
}

/// `ptxas --version` / `nvcc --version` end with `Cuda compilation tools, release 13.0, V13.0.88`.
pub(crate) fn tool_version(path: &Path) -> Option<String> {
    parse_tool_version(&tool_output(path, &["--version"])?)
}

/// What `path args` prints on stdout when it succeeds, remembered per binary (path, size and
/// modification time, as cargo remembers `rustc -vV`), so a no-op build starts no CUDA tool.
pub(crate) fn tool_output(path: &Path, args: &[&str]) -> Option<String> {
    let meta = fs::metadata(path).ok()?;
    let modified = meta.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()).map(|d| d.as_nanos()).unwrap_or(0);
    let key = crate::cache::Key::new("tool-output-v1")
        .str(&path.to_string_lossy())
        .str(&args.join("\u{1f}"))
        .str(&format!("{}:{modified}", meta.len()))
        .finish();
    let ask = || {
        let out = process::probe(process::command(path).args(args)).ok()?;
        out.status.success().then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    };
    remembered(&key, |_| true, ask)
}

/// The answer to a question about this machine's tools, kept in the tool cache under `key`
/// (a [`crate::cache::Key`] of everything the answer depends on) while `holds` takes it (a
/// program it names is still there); `ask` when it is not there or no longer holds.
pub(crate) fn remembered(key: &str, holds: impl Fn(&str) -> bool, ask: impl FnOnce() -> Option<String>) -> Option<String> {
    remembered_in(home().map(|h| h.join("tool-cache")).as_deref(), key, holds, ask)
}

fn remembered_in(dir: Option<&Path>, key: &str, holds: impl Fn(&str) -> bool, ask: impl FnOnce() -> Option<String>) -> Option<String> {
    let file = dir.map(|d| d.join(&key[..32]));
    if let Some(text) = file.as_ref().and_then(|f| fs::read_to_string(f).ok()).filter(|t| holds(t)) {
        return Some(text);
    }
    let text = ask()?;
    if let Some(f) = &file {
        // A cache that cannot be written only costs the next build one more run.
        let _ = crate::cache::write_atomic(f, text.as_bytes());
    }
    Some(text)
}

pub(crate) fn parse_tool_version(text: &str) -> Option<String> {
    text.lines().find_map(|l| l.split(", V").nth(1)).map(|v| v.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_executables_on_path_only() {
        assert!(on_path("sh").is_some_and(|p| p.is_absolute()), "sh is on every PATH");
        assert_eq!(on_path("no-such-tool-for-cargo-ptx"), None);
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("data"), "not a program").unwrap();
        fs::create_dir(dir.path().join("folder")).unwrap();
        let path = std::env::join_paths([dir.path()]).unwrap();
        let found = |name: &str| which::which_in(name, Some(&path), dir.path()).ok();
        assert_eq!(found("data"), None, "a file without the x bit is not a tool");
        assert_eq!(found("folder"), None, "nor is a folder");
    }

    #[test]
    fn an_answer_is_asked_once_per_key_while_it_holds() {
        let dir = tempfile::tempdir().unwrap();
        let at = |key: &str, holds: fn(&str) -> bool, ask: &dyn Fn() -> Option<String>| remembered_in(Some(dir.path()), key, holds, ask);
        let key = crate::cache::Key::new("tool-cache-test").finish();
        assert_eq!(at(&key, |_| true, &|| Some("c++".into())).as_deref(), Some("c++"));
        assert_eq!(at(&key, |_| true, &|| panic!("asked again")).as_deref(), Some("c++"));
        let other = crate::cache::Key::new("tool-cache-test").str("CXX=clang++").finish();
        assert_eq!(at(&other, |_| true, &|| None), None, "another key is asked; no answer is not kept");
        assert_eq!(at(&other, |_| true, &|| Some("clang++".into())).as_deref(), Some("clang++"));
        // A compiler that is gone: asked again, and the new answer kept.
        assert_eq!(at(&key, |c| c != "c++", &|| Some("g++".into())).as_deref(), Some("g++"));
        assert_eq!(at(&key, |_| true, &|| panic!("asked again")).as_deref(), Some("g++"));
    }

    #[test]
    fn reads_versions_from_tool_banners() {
        let banner = "ptxas: NVIDIA (R) Ptx optimizing assembler\nCuda compilation tools, release 13.0, V13.0.88\nBuild cuda_13.0.r13.0/compiler.36424714_0\n";
        assert_eq!(parse_tool_version(banner).as_deref(), Some("13.0.88"));
        assert_eq!(cuda::release_of("13.0.88"), Some((13, 0)));
    }
}
