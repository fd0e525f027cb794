//! How the engine tells its front end what is happening. The CLI prints these as cargo-style
//! lines, progress bars or JSON; a build script turns warnings into `cargo:warning`.

use std::path::PathBuf;

use serde::Serialize;

use crate::arch::Arch;
use crate::diag::Diagnostic;

/// PTX (every arch) or a cubin (`sm_XX` archs, when ptxas is found).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ArtifactKind {
    /// A `.ptx` file.
    Ptx,
    /// A `.cubin` file from ptxas.
    Cubin,
}

/// One file the build produced.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Artifact {
    /// The kernel crate that made it.
    pub package: String,
    /// The PTX module: the Rust crate's name, or the .cu file's module name.
    pub module: String,
    /// The module's source: the Rust crate's root file or the .cu file.
    pub source: Option<PathBuf>,
    /// The arch it is for (`sm_90`, `compute_80`).
    pub arch: Arch,
    /// PTX or cubin.
    pub kind: ArtifactKind,
    /// Where it was written.
    pub path: PathBuf,
    /// Every kernel in the file; resource usage is filled in for cubins (ptxas ran).
    pub kernels: Vec<KernelInfo>,
    /// Nothing changed since the last build: the file was reused.
    #[serde(skip)]
    pub fresh: bool,
    /// The file's content hash (as the step cache spells it), where the step that made it
    /// knows it: the embed stage names linked images by it without reading them twice.
    #[serde(skip)]
    pub content_hash: Option<String>,
}

/// A kernel and, where ptxas ran, its resource usage.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct KernelInfo {
    /// The kernel's PTX name.
    pub name: String,
    /// Registers per thread.
    pub registers: Option<u32>,
    /// Bytes of register spill stores.
    pub spill_stores: Option<u32>,
    /// Bytes of register spill loads.
    pub spill_loads: Option<u32>,
    /// Static shared memory per block, in bytes.
    pub shared_bytes: Option<u32>,
    /// Stack frame per thread, in bytes.
    pub stack_bytes: Option<u32>,
    /// It syncs its whole grid (cooperative groups' `this_grid().sync()`): launched with
    /// `cuLaunchCooperativeKernel`, every block resident at once.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub cooperative: bool,
}

impl KernelInfo {
    /// A kernel whose resources are not known (no ptxas run).
    pub fn named(name: &str) -> Self {
        KernelInfo {
            name: name.to_string(),
            registers: None,
            spill_stores: None,
            spill_loads: None,
            shared_bytes: None,
            stack_bytes: None,
            cooperative: false,
        }
    }
}

/// Something worth telling the user.
#[derive(Debug)]
#[non_exhaustive]
pub enum Event<'a> {
    /// A stage begins, in cargo's words: `Compiling`, `Linking`, `Assembling`, `Fresh`.
    Status {
        /// Right-aligned like cargo's (`Compiling`, `Linking`).
        verb: &'static str,
        /// What the step is about.
        message: String,
    },
    /// Finer progress inside a stage (a crate the nested cargo is compiling).
    Progress {
        /// What the step is about.
        message: String,
    },
    /// How many steps the build has ahead (for a progress bar).
    Plan {
        /// How many steps the build will report done.
        steps: usize,
    },
    /// One step of the plan is done.
    StepDone,
    /// An error or warning with its location.
    Diagnostic(&'a Diagnostic),
    /// A file was written (or found fresh).
    Artifact(&'a Artifact),
}

/// Receives [`Event`]s. Called from several threads at once.
pub trait Reporter: Sync {
    /// Called for each event, from any thread of the build.
    fn report(&self, event: Event<'_>);
}

/// Drops every event.
pub struct Silent;

impl Reporter for Silent {
    fn report(&self, _: Event<'_>) {}
}

/// Passes events on, naming `origin` as the package of every diagnostic that names none (the
/// stages below the engine report diagnostics without knowing the package).
pub(crate) struct WithOrigin<'a> {
    pub(crate) inner: &'a dyn Reporter,
    pub(crate) origin: crate::diag::Origin,
}

impl Reporter for WithOrigin<'_> {
    fn report(&self, event: Event<'_>) {
        match event {
            Event::Diagnostic(d) if d.origin.is_none() => {
                let mut d = d.clone();
                d.origin = Some(self.origin.clone());
                self.inner.report(Event::Diagnostic(&d));
            }
            e => self.inner.report(e),
        }
    }
}

/// A Reporter for unit tests: the message of every diagnostic reported, in order.
#[cfg(test)]
#[derive(Default)]
pub(crate) struct Recorder(pub std::sync::Mutex<Vec<String>>);

#[cfg(test)]
impl Reporter for Recorder {
    fn report(&self, event: Event<'_>) {
        if let Event::Diagnostic(d) = event {
            self.0.lock().unwrap().push(d.message.clone());
        }
    }
}
