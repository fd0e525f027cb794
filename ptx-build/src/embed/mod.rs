//! The embed stage, run for a Builder: kernel signatures read from the sources (`signature`,
//! by the engine when a Builder asks), bound to the PTX entries (`demangle` for C++ names) and
//! checked against them with host type paths (`host_types`), each module's images copied to
//! `OUT_DIR` (`unit`), and the generated module (`codegen`).

pub mod codegen;
pub mod demangle;
pub mod host_types;
pub mod signature;
pub mod unit;

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::Result;
use crate::report::{Artifact, Reporter};

/// What the embed stage needs of one kernel crate's build.
pub struct CrateModules<'a> {
    /// The lib target's crate name (names a module when two crates have one of the same name).
    pub lib_name: &'a str,
    /// Every PTX and cubin file.
    pub artifacts: &'a [Artifact],
    /// Each module's kernel signatures.
    pub signatures: &'a BTreeMap<String, Vec<signature::KernelSig>>,
}

/// The generated module's text for `crates`, their images copied under `out_dir`.
pub fn generate(crates: &[CrateModules<'_>], out_dir: &Path, reporter: &dyn Reporter) -> Result<String> {
    let mut units: Vec<codegen::Unit> = Vec::new();
    for c in crates {
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
            let name = if units.iter().any(|u| u.name == module) { format!("{}_{}", c.lib_name, module) } else { module.to_string() };
            units.push(unit::unit(&name, sigs, &artifacts, out_dir, reporter)?);
        }
    }
    codegen::prefix_shared_cxx_names(&mut units);
    codegen::generate(&units)
}
