//! One PTX module's unit of the generated module: its signatures bound to the PTX entries and
//! checked against them, its images copied to `OUT_DIR`, the layouts of its by-value struct
//! parameters, and the kernels that stay untyped.

use std::path::Path;

use super::codegen::{EmbeddedImage, StructLayout, Unit};
use super::demangle;
use super::signature::{self, KernelSig, ParamType};
use crate::backend::ptx;
use crate::cache;
use crate::diag::Diagnostic;
use crate::error::{Error, Result};
use crate::report::{Artifact, ArtifactKind, Event, Reporter};

/// One PTX module's unit: its signatures checked against its PTX, its images copied to
/// `OUT_DIR`. Kernels that cannot be typed (C++ mangled names, untypeable parameters, and
/// PTX entries the source does not show, such as kernels stamped out by macros) are
/// embedded without a typed method, with a warning.
/// `images_dir` is the folder of this generated file's images, relative to `out_dir`
/// (`ptx-build/<file>`): each module's images go below it.
pub fn unit(
    name: &str,
    sigs: Vec<KernelSig>,
    artifacts: &[&Artifact],
    out_dir: &Path,
    images_dir: &str,
    reporter: &dyn Reporter,
) -> Result<Unit> {
    // C++ kernels are bound to their mangled entries (templates become generic kernels).
    let entries: Vec<&str> = artifacts
        .iter()
        .find(|a| a.kind == ArtifactKind::Ptx)
        .map(|a| a.kernels.iter().map(|k| k.name.as_str()).collect())
        .unwrap_or_default();
    let sigs = demangle::bind(sigs, &entries);
    let (sigs, untypeable): (Vec<_>, Vec<_>) = sigs.into_iter().partition(|s| s.untyped.is_none() && !s.mangled);
    for s in &untypeable {
        let why = match &s.untyped {
            Some(reason) => reason.clone(),
            None => "no mangled PTX name matches this C++ declaration's parameters; declare it `extern \"C\"` for a typed method".into(),
        };
        println!(
            "cargo:warning={}:{}: kernel `{}` has no typed launch method ({why}); it is embedded: launch it with `kernels.launch_builder(&stream, NAME)`",
            s.file.display(),
            s.line,
            s.name
        );
    }
    let mut untyped: Vec<String> = Vec::new();
    let mut images = Vec::new();
    let mut struct_layouts: Vec<StructLayout> = Vec::new();
    let mut launch_bounds: Vec<(String, u32)> = Vec::new();
    for a in artifacts {
        let ext = match a.kind {
            ArtifactKind::Ptx => "ptx",
            ArtifactKind::Cubin => "cubin",
        };
        let rel = format!("{images_dir}/{name}/{}.{ext}", a.arch);
        let bytes = std::fs::read(&a.path).map_err(|e| Error::io("read", &a.path, e))?;
        let mut ptx_isa = None;
        if a.kind == ArtifactKind::Ptx {
            let module = ptx::Module::parse(&String::from_utf8_lossy(&bytes));
            if untyped.is_empty() {
                untyped = module
                    .entries
                    .iter()
                    .map(|e| e.name.clone())
                    .filter(|n| !sigs.iter().any(|s| s.ptx_names().contains(&n.as_str())))
                    .collect();
            }
            for (entry, instance) in sigs.iter().flat_map(|s| s.monomorphic()) {
                signature::check(&instance, module.entry(&entry))?;
            }
            for sig in &sigs {
                if struct_layouts.iter().any(|l| l.kernel == sig.name) {
                    continue;
                }
                // A generic kernel's non-generic struct parameters are the same in every instance.
                if let Some(entry) = sig.ptx_names().first().and_then(|n| module.entry(n)) {
                    for (i, (p, e)) in sig.params.iter().zip(&entry.params).enumerate() {
                        if matches!(p.ty, ParamType::ByValue { .. }) {
                            struct_layouts.push(StructLayout { kernel: sig.name.clone(), param: i, size: e.size, align: e.align });
                        }
                    }
                }
            }
            ptx_isa = module.version.clone();
            // Every arch's PTX has the same bounds, but keep the largest: never refuse a launch the driver takes.
            for (name, bound) in module.entries.iter().filter_map(|e| Some((&e.name, e.max_threads?))) {
                match launch_bounds.iter_mut().find(|(n, _)| n == name) {
                    Some((_, b)) => *b = (*b).max(bound),
                    None => launch_bounds.push((name.clone(), bound)),
                }
            }
        }
        cache::write_atomic(&out_dir.join(&rel), &bytes)?;
        images.push(EmbeddedImage { arch: a.arch, kind: a.kind, file: rel, ptx_isa });
    }
    if !untyped.is_empty() {
        let typed = sigs.iter().map(|s| s.ptx_names().len()).sum::<usize>();
        let total = typed + untyped.len();
        let text = format!(
            "ptx-build: {typed} of {total} kernels of `{name}` have typed launch methods; the other {} are embedded and listed in KERNEL_NAMES: launch them with `kernels.launch_builder(&stream, NAME)`",
            untyped.len()
        );
        reporter.report(Event::Diagnostic(&Diagnostic::warning(text)));
    }
    Ok(Unit { name: name.to_string(), kernels: sigs, images, struct_layouts, untyped, launch_bounds })
}
