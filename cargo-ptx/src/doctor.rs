//! `cargo ptx doctor`: every tool a build needs, found or missing, with the exact fix.

use std::path::PathBuf;

use ptx_build::toolchain::{Cuda, Rust};

use crate::tools::CudaTool;

/// How one component stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    /// Usable, with a caveat (a mixed install), or optional and missing.
    Warning,
    /// A build cannot run without it.
    Missing,
}

/// One line of the report.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Check {
    pub component: String,
    pub status: Status,
    pub version: Option<String>,
    pub path: Option<PathBuf>,
    /// Where it was found, or what it is for when missing.
    pub detail: String,
    /// The exact fix, when not ok.
    pub fix: Option<String>,
}

/// Every component, found or missing, and whether a build can run.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Report {
    pub checks: Vec<Check>,
    /// A Rust kernel build can run (PTX at least).
    pub ready: bool,
    /// Archs LLVM and ptxas can both build for.
    pub archs: Option<String>,
}

/// Looks at every component for kernels built with `toolchain`.
pub fn report(toolchain: &str) -> Report {
    let mut checks = Vec::new();
    let mut ready = true;
    let mut llvm_archs = None;
    let check = |component: &str, status, version: Option<String>, path: Option<PathBuf>, detail: String, fix: Option<String>| Check {
        component: component.to_string(),
        status,
        version,
        path,
        detail,
        fix,
    };

    match Rust::find(toolchain) {
        Ok(rust) => {
            checks.push(check(
                &format!("toolchain `{toolchain}`"),
                Status::Ok,
                Some(rust.version.clone()),
                Some(rust.rustc.clone()),
                format!("LLVM {}", rust.llvm_version),
                None,
            ));
            let fix = |c: &str| Some(format!("cargo ptx setup   (or: rustup component add {c} --toolchain {toolchain})"));
            match &rust.rust_src {
                Some(p) => checks.push(check("rust-src", Status::Ok, None, Some(p.clone()), "builds `core` for nvptx64".into(), None)),
                None => {
                    ready = false;
                    checks.push(check(
                        "rust-src",
                        Status::Missing,
                        None,
                        None,
                        "needed to build `core` for nvptx64 (-Zbuild-std)".into(),
                        fix("rust-src"),
                    ));
                }
            }
            match &rust.llvm {
                Some(l) => {
                    llvm_archs = Some(l.supported().clone());
                    checks.push(check(
                        "llvm-tools",
                        Status::Ok,
                        Some(rust.llvm_version.clone()),
                        Some(l.bin.clone()),
                        "llvm-link, opt, llc of the same LLVM".into(),
                        None,
                    ));
                }
                None => {
                    ready = false;
                    checks.push(check(
                        "llvm-tools",
                        Status::Missing,
                        None,
                        None,
                        "links the kernels' bitcode with libdevice and writes PTX".into(),
                        fix("llvm-tools"),
                    ));
                }
            }
        }
        Err(e) => {
            ready = false;
            checks.push(check(
                &format!("toolchain `{toolchain}`"),
                Status::Missing,
                None,
                None,
                first_line(&e.to_string()),
                Some(format!(
                    "cargo ptx setup   (or: rustup toolchain install {toolchain} --profile minimal --component rust-src,llvm-tools)"
                )),
            ));
        }
    }

    let cuda = Cuda::find();
    let cuda_fix = Some("cargo ptx setup   (or set CUDA_PATH to a CUDA toolkit)".to_string());
    match &cuda.ptxas {
        Some(t) => checks.push(check(
            "ptxas",
            Status::Ok,
            Some(t.version.clone()),
            Some(t.path.clone()),
            format!("found by {}; makes cubins", t.source),
            None,
        )),
        None => {
            checks.push(check("ptxas", Status::Warning, None, None, "not found: builds make PTX only, no cubins".into(), cuda_fix.clone()))
        }
    }
    match &cuda.nvcc {
        Some(t) => checks.push(check(
            "nvcc",
            Status::Ok,
            Some(t.version.clone()),
            Some(t.path.clone()),
            format!("found by {}; compiles CUDA C++ kernels", t.source),
            None,
        )),
        None => checks.push(check(
            "nvcc",
            Status::Warning,
            None,
            None,
            "not found: needed only for CUDA C++ (.cu) kernels".into(),
            cuda_fix.clone(),
        )),
    }
    match &cuda.libdevice {
        Some(l) if l.valid => checks.push(check(
            "libdevice",
            Status::Ok,
            cuda.components.get("nvvm").cloned(),
            Some(l.path.clone()),
            format!("found by {}; math functions (__nv_*)", l.source),
            None,
        )),
        Some(l) => checks.push(check(
            "libdevice",
            Status::Warning,
            None,
            Some(l.path.clone()),
            "not LLVM bitcode (corrupt file): kernels that call __nv_* functions fail".into(),
            Some("cargo ptx setup --force   (or set LIBDEVICE to a good libdevice.10.bc)".into()),
        )),
        None => checks.push(check(
            "libdevice",
            Status::Warning,
            None,
            None,
            "not found: kernels that call __nv_* math functions fail to link".into(),
            cuda_fix.clone(),
        )),
    }
    // Tools of two commands only; a build never needs them, so missing ones are warnings.
    for (tool, what) in [
        (CudaTool::Nvdisasm, "SASS for `cargo ptx inspect --sass`"),
        (CudaTool::ComputeSanitizer, "runs programs for `cargo ptx sanitize`"),
    ] {
        match tool.find() {
            Ok(path) => checks.push(check(tool.name(), Status::Ok, None, Some(path), what.into(), None)),
            Err(e) => {
                let text = e.to_string();
                let (message, help) = text.split_once("\n  help: ").unwrap_or((&text, ""));
                checks.push(check(tool.name(), Status::Warning, None, None, message.to_string(), Some(help.to_string())))
            }
        }
    }
    // A variable naming a tool that does not work stops every build (it is never skipped).
    for r in &cuda.rejected {
        ready = false;
        checks.push(check(r.var, Status::Missing, None, Some(r.path.clone()), r.problem.clone(), Some(r.help.clone())));
    }
    let env_options = ptx_build::Options::from_env();
    match env_options.as_ref().map(|o| o.shared_cache().dir()) {
        Ok(Some(dir)) => {
            let s = ptx_build::shared_cache::SharedCache::new(&dir).stats();
            let detail = format!(
                "shared step cache: {} entries, {:.1} MiB (set CARGO_PTX_CACHE_DIR to move it, `off` to disable)",
                s.entries,
                s.bytes as f64 / 1048576.0
            );
            checks.push(check("step cache", Status::Ok, None, Some(dir), detail, None));
        }
        Ok(None) => checks.push(check("step cache", Status::Ok, None, None, "off (CARGO_PTX_CACHE_DIR=off)".into(), None)),
        Err(e) => {
            ready = false;
            checks.push(check(
                "step cache",
                Status::Missing,
                None,
                None,
                first_line(&e.to_string()),
                Some("fix or unset CARGO_PTX_CACHE_DIR".into()),
            ));
        }
    }
    if let Some(launcher) = env_options.ok().and_then(|o| o.launcher).filter(|l| !l.trim().is_empty()) {
        match ptx_build::toolchain::find_program(&launcher) {
            Some(p) => checks.push(check(
                "launcher",
                Status::Ok,
                None,
                Some(p),
                format!("CARGO_PTX_LAUNCHER: nvcc and ptxas run through `{launcher}`"),
                None,
            )),
            None => {
                ready = false;
                checks.push(check(
                    "launcher",
                    Status::Missing,
                    None,
                    None,
                    format!("CARGO_PTX_LAUNCHER names `{launcher}`, which is not installed"),
                    Some("cargo ptx setup --with sccache   (or unset CARGO_PTX_LAUNCHER)".into()),
                ));
            }
        }
    }
    if let Some(mix) = &cuda.mixed {
        checks.push(check("CUDA release", Status::Warning, None, None, mix.clone(), Some("cargo ptx setup --force".into())));
    }
    match ptx_build::arch::native() {
        Ok(gpus) => checks.push(check(
            "GPU",
            Status::Ok,
            None,
            None,
            format!("{} (for `--arch native` and running kernels)", gpus.iter().map(|a| a.to_string()).collect::<Vec<_>>().join(", ")),
            None,
        )),
        Err(e) => checks.push(check(
            "GPU",
            Status::Warning,
            None,
            None,
            format!(
                "none found ({}): name archs with --arch; kernels cannot run here",
                first_line(&e.to_string()).trim_start_matches("`--arch native` needs a GPU, and none was found: ")
            ),
            None,
        )),
    }
    let archs = llvm_archs.map(|l| {
        let sup = cuda.ptxas_supported();
        let v: Vec<String> = l.all().into_iter().filter(|a| sup.as_ref().is_none_or(|s| s.contains(a))).map(|a| a.to_string()).collect();
        v.join(", ")
    });
    Report { checks, ready, archs }
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or_default().to_string()
}
