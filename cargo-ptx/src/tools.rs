//! NVIDIA's tools that only the command line uses: `nvdisasm` (`cargo ptx inspect --sass`, from
//! `cargo ptx setup` or a toolkit) and `compute-sanitizer` (`cargo ptx sanitize`, from a CUDA
//! toolkit: see `setup` for why not from a wheel). Found here rather than in the engine's
//! `toolchain`: build scripts never need them.

use std::path::{Path, PathBuf};

use ptx_build::internals::tools;

use crate::error::{Error, Result};

/// A tool of the CUDA install, with the environment variable that overrides where it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CudaTool {
    Nvdisasm,
    ComputeSanitizer,
}

impl CudaTool {
    pub fn name(self) -> &'static str {
        match self {
            CudaTool::Nvdisasm => "nvdisasm",
            CudaTool::ComputeSanitizer => "compute-sanitizer",
        }
    }

    pub fn env_var(self) -> &'static str {
        match self {
            CudaTool::Nvdisasm => "NVDISASM",
            CudaTool::ComputeSanitizer => "COMPUTE_SANITIZER",
        }
    }

    /// What the command needs it for, for the error when it is missing.
    fn purpose(self) -> &'static str {
        match self {
            CudaTool::Nvdisasm => "`cargo ptx inspect --sass` disassembles cubins with it",
            CudaTool::ComputeSanitizer => "`cargo ptx sanitize` runs programs under it",
        }
    }

    /// Where the tool lives below a CUDA root: toolkits keep compute-sanitizer in a folder of its
    /// own, NVIDIA's wheels put it in `bin/`.
    fn relative_paths(self) -> &'static [&'static str] {
        match self {
            CudaTool::Nvdisasm => &["bin/nvdisasm"],
            CudaTool::ComputeSanitizer => &["compute-sanitizer/compute-sanitizer", "bin/compute-sanitizer"],
        }
    }

    /// What else must be beside the executable for it to work: compute-sanitizer starts every
    /// program through `TreeLauncherSubreaper` in its own folder (seen with strace: it execs
    /// `<dir>/TreeLauncherSubreaper`), which NVIDIA's sanitizer wheel lacks.
    fn companion(self) -> Option<&'static str> {
        match self {
            CudaTool::Nvdisasm => None,
            CudaTool::ComputeSanitizer => Some("TreeLauncherSubreaper"),
        }
    }

    /// Looks in order: the tool's variable, `CUDA_PATH`/`CUDA_HOME`/`CUDA_ROOT`, the install
    /// that holds the ptxas builds use, `cargo ptx setup`'s install, `PATH`, `/usr/local/cuda`.
    pub fn find(self) -> Result<PathBuf> {
        // A toolkit's `bin/compute-sanitizer` is a link into `compute-sanitizer/`, where the
        // launcher lives: look beside the real file.
        let found = self.locate()?;
        let found = std::fs::canonicalize(&found).unwrap_or(found);
        if let Some(companion) = self.companion() {
            let dir = found.parent().unwrap_or(Path::new("."));
            if !dir.join(companion).is_file() {
                return Err(Error::MissingTool {
                    tool: self.name(),
                    message: format!(
                        "{} cannot start programs: {companion} is not beside it in {} (NVIDIA's nvidia-cuda-sanitizer-api wheel ships without it)",
                        found.display(),
                        dir.display()
                    ),
                    help: self.install_help(),
                });
            }
        }
        Ok(found)
    }

    fn install_help(self) -> String {
        match self {
            CudaTool::Nvdisasm => format!("run `cargo ptx setup` (it installs NVIDIA's nvdisasm wheel), or set {} to the executable", self.env_var()),
            CudaTool::ComputeSanitizer => format!(
                "install the CUDA toolkit's compute-sanitizer (`cuda-sanitizer-13-0` in NVIDIA's apt/dnf repositories, or the toolkit installer) and put it on PATH, set CUDA_PATH to the toolkit, or set {} to the executable",
                self.env_var()
            ),
        }
    }

    fn locate(self) -> Result<PathBuf> {
        if let Some(p) = std::env::var_os(self.env_var()).filter(|v| !v.is_empty()).map(PathBuf::from) {
            return if p.is_file() {
                Ok(p)
            } else {
                Err(Error::MissingTool {
                    tool: self.name(),
                    message: format!("{}={} is not a file", self.env_var(), p.display()),
                    help: format!("point {} at the {} executable, or unset it", self.env_var(), self.name()),
                })
            };
        }
        let mut roots: Vec<PathBuf> = ["CUDA_PATH", "CUDA_HOME", "CUDA_ROOT"]
            .iter()
            .filter_map(|v| std::env::var_os(v).filter(|v| !v.is_empty()).map(PathBuf::from))
            .collect();
        // The same install as the ptxas that built the cubins, so the disassembler knows their archs.
        if let Some(ptxas) = tools::Cuda::find().ptxas {
            if let Some(root) = ptxas.path.parent().and_then(Path::parent) {
                roots.push(root.to_path_buf());
            }
        }
        roots.extend(tools::setup_root());
        for root in &roots {
            if let Some(p) = self.relative_paths().iter().map(|rel| root.join(rel)).find(|p| p.is_file()) {
                return Ok(p);
            }
        }
        if let Some(p) = tools::on_path(self.name()) {
            return Ok(p);
        }
        let default = Path::new("/usr/local/cuda");
        if let Some(p) = self.relative_paths().iter().map(|rel| default.join(rel)).find(|p| p.is_file()) {
            return Ok(p);
        }
        Err(Error::MissingTool {
            tool: self.name(),
            message: format!("{} not found: {}", self.name(), self.purpose()),
            help: self.install_help(),
        })
    }
}
