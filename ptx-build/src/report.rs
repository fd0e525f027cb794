//! How the engine tells its front end what is happening. The CLI prints these as cargo-style
//! lines, progress bars or JSON; a build script turns warnings into `cargo:warning`.

use std::path::PathBuf;

use serde::Serialize;

use crate::diag::Diagnostic;
use crate::ptxas::Resources;

/// PTX (every arch) or a cubin (`sm_XX` archs, when ptxas is found).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ArtifactKind {
    Ptx,
    Cubin,
}

/// One file the build produced.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Artifact {
    pub package: String,
    /// The PTX module: the Rust crate's name, or the .cu file's module name.
    pub module: String,
    /// The module's source: the Rust crate's root file or the .cu file.
    pub source: Option<PathBuf>,
    pub arch: String,
    pub kind: ArtifactKind,
    pub path: PathBuf,
    /// Every kernel in the file; resource usage is filled in for cubins (ptxas ran).
    pub kernels: Vec<KernelInfo>,
    /// Nothing changed since the last build: the file was reused.
    #[serde(skip)]
    pub fresh: bool,
}

/// A kernel and, where ptxas ran, its resource usage.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct KernelInfo {
    pub name: String,
    pub registers: Option<u32>,
    pub spill_stores: Option<u32>,
    pub spill_loads: Option<u32>,
    pub shared_bytes: Option<u32>,
    pub stack_bytes: Option<u32>,
}

impl KernelInfo {
    pub fn named(name: &str) -> Self {
        KernelInfo { name: name.to_string(), registers: None, spill_stores: None, spill_loads: None, shared_bytes: None, stack_bytes: None }
    }
}

impl From<&Resources> for KernelInfo {
    fn from(r: &Resources) -> Self {
        KernelInfo {
            name: r.name.clone(),
            registers: Some(r.registers),
            spill_stores: Some(r.spill_stores),
            spill_loads: Some(r.spill_loads),
            shared_bytes: Some(r.shared_bytes),
            stack_bytes: Some(r.stack_bytes),
        }
    }
}

/// Something worth telling the user.
#[derive(Debug)]
pub enum Event<'a> {
    /// A stage begins, in cargo's words: `Compiling`, `Linking`, `Assembling`, `Fresh`.
    Status {
        verb: &'static str,
        message: String,
    },
    /// Finer progress inside a stage (a crate the nested cargo is compiling).
    Progress {
        message: String,
    },
    /// How many steps the build has ahead (for a progress bar).
    Plan {
        steps: usize,
    },
    /// One step of the plan is done.
    StepDone,
    Diagnostic(&'a Diagnostic),
    Artifact(&'a Artifact),
}

/// Receives [`Event`]s. Called from several threads at once.
pub trait Reporter: Sync {
    fn report(&self, event: Event<'_>);
}

/// Drops every event.
pub struct Silent;

impl Reporter for Silent {
    fn report(&self, _: Event<'_>) {}
}
