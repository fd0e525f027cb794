//! Which archs a crate is built for, and whether every tool of the crate can build them.

use super::BuildOptions;
use crate::arch::{Arch, ArchRequest};
use crate::cuda::Nvcc;
use crate::error::{Error, Result};
use crate::options::PtxIsa;
use crate::project::KernelCrate;
use crate::tools::{Cuda, Llvm, Rust};

/// The archs to build `krate` for: its `archs` (else the GPUs of this machine), `all` and
/// `native` expanded, each checked against every tool that will see it.
pub(super) fn resolve(
    opts: &BuildOptions,
    krate: &KernelCrate,
    rust: Option<&Rust>,
    llvm: Option<&Llvm>,
    cuda: &Cuda,
    nvcc: Option<&Nvcc>,
) -> Result<Vec<Arch>> {
    let requests = if let Some(a) = &krate.config.archs {
        a.clone()
    } else {
        match crate::tools::gpu::native() {
            Ok(native) => native.into_iter().map(ArchRequest::Arch).collect(),
            Err(Error::NoNativeGpu { why }) => {
                return Err(Error::NoArch {
                    package: krate.name.clone(),
                    why,
                    help: opts.source.no_arch_help(krate.options_table.as_ref()),
                })
            }
            Err(e) => return Err(e),
        }
    };
    let llvm_supported = llvm.map(Llvm::supported);
    let ptxas_supported = cuda.ptxas_supported();
    let uses_nvcc = nvcc.filter(|_| !krate.cuda_sources.is_empty());
    // The oldest arch this rustc builds Rust kernels for, where it has one.
    let rustc_min = rust.and_then(Rust::min_capability);
    let mut archs = Vec::new();
    for r in requests {
        match r {
            ArchRequest::Arch(a) => archs.push(a),
            ArchRequest::Native => archs.extend(crate::tools::gpu::native()?),
            ArchRequest::All => {
                // Every arch all the tools of this crate know.
                let candidates: Vec<Arch> = match (llvm_supported, uses_nvcc.and_then(Nvcc::archs)) {
                    (Some(l), _) => l.all(),
                    (None, Some(list)) => list.iter().filter_map(|a| a.replace("compute_", "sm_").parse().ok()).collect(),
                    (None, None) => ptxas_supported.as_ref().map(|p| p.all()).unwrap_or_default(),
                };
                archs.extend(candidates.into_iter().filter(|a| {
                    rustc_min.is_none_or(|m| a.capability >= m)
                        && ptxas_supported.as_ref().is_none_or(|p| p.contains(a))
                        && uses_nvcc.is_none_or(|n| n.supports(*a))
                }));
            }
        }
    }
    archs.sort();
    archs.dedup();
    if archs.is_empty() {
        return Err(Error::NoArch {
            package: krate.name.clone(),
            help: opts.source.no_arch_help(krate.options_table.as_ref()),
            why: "`all` matched no arch every tool supports".into(),
        });
    }
    for a in &archs {
        if let (Some(rust), Some(min)) = (rust, rustc_min.filter(|m| a.capability < *m)) {
            return Err(Error::UnsupportedArch {
                arch: a.to_string(),
                tool: "rustc",
                version: rust.version.trim_start_matches("rustc ").to_string(),
                path: rust.rustc.clone(),
                help: format!(
                    "Rust 1.97 and later build nvptx64 kernels for sm_{min} and newer only (rust-lang/rust#152443): choose sm_{min} or newer for this crate's Rust kernels; its .cu files can still target older GPUs with a CUDA 12 nvcc (`cuda-file-archs` gives a file archs of its own)"
                ),
            });
        }
        if let (Some(llvm), Some(sup)) = (llvm, llvm_supported) {
            if !sup.contains(a) {
                return Err(Error::UnsupportedArch {
                    arch: a.to_string(),
                    tool: "LLVM",
                    version: llvm.bin.display().to_string(),
                    path: llvm.tool("llc"),
                    help: format!("this nightly's LLVM knows: {}; a newer nightly may know more", sup.describe()),
                });
            }
        }
        if let Some(nvcc) = uses_nvcc {
            if !nvcc.supports(*a) {
                let dropped =
                    crate::arch::dropped_by(*a, nvcc.tool.release()).map(|d| format!("{d} nvcc (set NVCC), or ")).unwrap_or_default();
                return Err(Error::UnsupportedArch {
                    arch: a.to_string(),
                    tool: "nvcc",
                    version: nvcc.tool.version.clone(),
                    path: nvcc.tool.path.clone(),
                    help: format!("{dropped}choose an arch it lists: {}", nvcc.listed_like(*a)),
                });
            }
        }
        if let (Some(ptxas), Some(sup)) = (&cuda.ptxas, &ptxas_supported) {
            if a.makes_cubin() && !sup.contains(a) {
                // PTX only (`compute_XX`) is a way out, but not for .cu files where this CUDA
                // dropped the arch: its nvcc cannot make that PTX either.
                let ptx_only = format!("use `{}` for PTX only", a.compute_name());
                let supported = sup.describe();
                let help = match (crate::arch::dropped_by(*a, ptxas.release()), uses_nvcc.is_some()) {
                    (Some(d), true) => format!("{d} toolkit (set PTXAS to its ptxas), or choose an arch it supports: {supported}"),
                    (Some(d), false) => format!("{d} toolkit (set PTXAS to its ptxas), or {ptx_only}, or an arch it supports: {supported}"),
                    (None, _) => format!("{ptx_only}, or an arch it supports: {supported}"),
                };
                return Err(Error::UnsupportedArch {
                    arch: a.to_string(),
                    tool: "ptxas",
                    version: ptxas.version.clone(),
                    path: ptxas.path.clone(),
                    help,
                });
            }
        }
    }
    Ok(archs)
}

/// The archs of a .cu file with its own list (`cuda-file-archs`): `all` is the crate's archs,
/// `native` this machine's GPUs; each checked against nvcc.
pub(super) fn resolve_file(
    krate: &KernelCrate,
    src: &crate::project::CudaSource,
    requests: &[ArchRequest],
    crate_archs: &[Arch],
    nvcc: Option<&Nvcc>,
) -> Result<Vec<Arch>> {
    let mut archs = Vec::new();
    for r in requests {
        match r {
            ArchRequest::Arch(a) => archs.push(*a),
            ArchRequest::Native => archs.extend(crate::tools::gpu::native()?),
            ArchRequest::All => archs.extend_from_slice(crate_archs),
        }
    }
    archs.sort();
    archs.dedup();
    if let Some(nvcc) = nvcc {
        if let Some(a) = archs.iter().find(|a| !nvcc.supports(**a)) {
            return Err(Error::UnsupportedArch {
                arch: a.to_string(),
                tool: "nvcc",
                version: nvcc.tool.version.clone(),
                path: nvcc.tool.path.clone(),
                help: format!(
                    "`cuda-file-archs` asks for it for {} of `{}`; choose an arch it lists: {}",
                    crate::diag::relative(&src.path, &krate.dir).display(),
                    krate.name,
                    nvcc.listed_like(*a)
                ),
            });
        }
    }
    Ok(archs)
}

/// A pinned `ptx-isa` this nightly's LLVM cannot write is an error listing those it can.
pub(super) fn check_ptx_isa(isa: PtxIsa, llvm: &Llvm, rust: &Rust) -> Result<()> {
    let known = llvm.ptx_versions();
    if known.iter().any(|f| *f == isa.llvm_feature()) {
        return Ok(());
    }
    let list: Vec<String> =
        known.iter().filter_map(|f| f.strip_prefix("ptx")).map(|d| format!("{}.{}", &d[..d.len() - 1], &d[d.len() - 1..])).collect();
    Err(Error::UnsupportedPtxIsa {
        isa: isa.to_string(),
        llvm_version: rust.llvm_version.clone(),
        path: llvm.tool("llc"),
        help: format!("set `ptx-isa` to one of: {}, or remove it to let LLVM choose", list.join(", ")),
    })
}
