//! The embed stage, run for a Builder: kernel signatures read from the sources (`signature`,
//! by the engine when a Builder asks), bound to the PTX entries (`demangle` for C++ names) and
//! checked against them with host type paths (`host_types`), each module's images copied to
//! `OUT_DIR` (`unit`) or linked as an ELF object (`linked`, `elf`), and the generated module
//! (`codegen`).

pub mod codegen;
pub mod demangle;
pub mod elf;
pub mod functions;
pub mod host_scope;
pub mod host_types;
pub mod linked;
pub mod signature;
pub mod unit;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::cache;
use crate::error::{Error, Result};
use crate::report::{Artifact, Reporter};

/// What the embed stage needs of one kernel crate's build.
pub struct CrateModules<'a> {
    /// The lib target's crate name (names a module when two crates have one of the same name).
    pub lib_name: &'a str,
    /// Every PTX and cubin file.
    pub artifacts: &'a [Artifact],
    /// Each module's kernel signatures.
    pub signatures: &'a BTreeMap<String, Vec<signature::KernelSig>>,
    /// The crate's `untyped-kernels` option.
    pub untyped_kernels: crate::options::UntypedKernels,
}

/// Writes the generated module `out_file` (a file name in `out_dir`) for `crates`, their images
/// copied to `out_dir/ptx-build/<out_file>/`; returns its path.
///
/// A build script may run several Builders. Each file's images have a folder of their own, and
/// Builders that name the same file share it: each adds its modules to what the earlier ones
/// wrote (this process remembers them), and a module name two of them would put into one file
/// is an error naming both sources.
///
/// `host` holds the names the host crate's sources mention: a C/C++ kernel whose struct type is
/// not among them gets no typed method (see [`host_scope`]). With a `link` target, each module's
/// images are linked from an object of their own (see [`linked`]); the result names the objects
/// this call wrote, which the host crate must link.
pub fn write_module(
    crates: &[CrateModules<'_>],
    out_dir: &Path,
    out_file: &str,
    host: &host_scope::HostNames,
    link: Option<linked::Target>,
    reporter: &dyn Reporter,
) -> Result<Written> {
    /// The units this process wrote into each generated file, with the source each came from.
    static WRITTEN: Mutex<BTreeMap<PathBuf, Vec<(codegen::Unit, String)>>> = Mutex::new(BTreeMap::new());
    let path = out_dir.join(out_file);
    let images = format!("ptx-build/{}", out_file.replace(['/', '\\'], "_"));
    // An earlier Builder of this file may have written the file's list of several modules'
    // untyped kernels, which this one's report must not remove as stale.
    let first = WRITTEN.lock().unwrap_or_else(|e| e.into_inner()).get(&path).is_none_or(|e| e.is_empty());
    let new = units(crates, out_dir, &images, host, first, link, reporter)?;
    let objects = new.iter().filter_map(|(u, _)| u.object.clone()).collect();
    let mut written = WRITTEN.lock().unwrap_or_else(|e| e.into_inner());
    let earlier = written.entry(path.clone()).or_default();
    for (u, source) in &new {
        if let Some((_, first)) = earlier.iter().find(|(e, _)| e.name == u.name) {
            return Err(Error::SharedGeneratedFile { module: u.name.clone(), file: path, first: first.clone(), second: source.clone() });
        }
    }
    let mut all: Vec<codegen::Unit> = earlier.iter().chain(&new).map(|(u, _)| u.clone()).collect();
    codegen::prefix_shared_names(&mut all);
    let code = codegen::generate(&all)?;
    cache::write_atomic(&path, code.as_bytes())?;
    earlier.extend(new);
    Ok(Written { path, objects })
}

/// A generated module, and the image objects the host crate links for it.
#[derive(Debug)]
pub struct Written {
    pub path: PathBuf,
    pub objects: Vec<linked::ImageObject>,
}

/// One unit per PTX module of `crates` (the Rust crate's, one per .cu file), with the source
/// it came from; images copied to `out_dir/<images>/<module>/`.
fn units(
    crates: &[CrateModules<'_>],
    out_dir: &Path,
    images: &str,
    host: &host_scope::HostNames,
    first_of_file: bool,
    link: Option<linked::Target>,
    reporter: &dyn Reporter,
) -> Result<Vec<(codegen::Unit, String)>> {
    let mut units: Vec<(codegen::Unit, String)> = Vec::new();
    // Every crate's modules whose untyped kernels are reported: one line for the file.
    let mut untyped: Vec<unit::ModuleUntyped> = Vec::new();
    let verbose = unit::verbose();
    for c in crates {
        let reported = verbose || c.untyped_kernels == crate::options::UntypedKernels::Warn;
        // One unit per PTX module: the Rust crate's, and one per .cu file.
        let mut modules: Vec<&str> = Vec::new();
        for a in c.artifacts {
            if !modules.contains(&a.module.as_str()) {
                modules.push(&a.module);
            }
        }
        for module in modules {
            let artifacts: Vec<&Artifact> = c.artifacts.iter().filter(|a| a.module == module).collect();
            let sigs = c.signatures.get(module).cloned().unwrap_or_default();
            // Unit names are Rust modules of the generated file: unique across crates.
            let name = if units.iter().any(|u| u.0.name == module) { format!("{}_{}", c.lib_name, module) } else { module.to_string() };
            let source = match artifacts.first().and_then(|a| a.source.as_ref()) {
                Some(s) => s.display().to_string(),
                None => format!("kernel crate `{}`", c.lib_name),
            };
            let (u, list) = unit::unit(&name, sigs, &artifacts, host, out_dir, images, link)?;
            let total = u.kernels.iter().map(|k| k.ptx_names().len()).sum::<usize>() + u.untyped.len();
            if reported {
                untyped.push(unit::ModuleUntyped { name: name.clone(), total, list });
            }
            units.push((u, source));
        }
    }
    unit::report_untyped(&untyped, &out_dir.join(images), verbose, first_of_file, reporter)?;
    Ok(units)
}
