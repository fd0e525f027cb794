//! Checks of a crate's sources and results that no compiler makes: inline PTX, kernel names
//! that clash or that the link would bind to something else, missing CUDA libraries.

use std::path::Path;

use super::job::CrateJob;
use crate::diag::{relative, Diagnostic, Level};
use crate::embed::signature;
use crate::error::{Error, Result};
use crate::inline_ptx;
use crate::report::{Artifact, ArtifactKind, Event, Reporter};

impl CrateJob<'_> {
    /// Runs the inline-PTX checker over the crate's .cu files and Rust sources (their headers
    /// once nvcc has read them: [`CrateJob::check_header_asm`]).
    pub(super) fn check_inline_ptx(&self, reporter: &dyn Reporter) -> Result<()> {
        let (_, diags) =
            inline_ptx::check_crate_with(self.krate, inline_ptx::Headers::AfterCompile, &mut Default::default(), self.included_headers())?;
        self.report_inline_ptx(diags, reporter)
    }

    /// The inline-PTX checker over the user's headers among the files the crate's nvcc runs
    /// read (`inputs`: what the steps record for rebuilds, so a fresh build checks them too):
    /// those below the package or an include folder, not the CUDA install's, the system's or
    /// another repository's, each once however many .cu files include it, at its own lines.
    pub(super) fn check_header_asm(&self, inputs: &std::collections::BTreeSet<std::path::PathBuf>, reporter: &dyn Reporter) -> Result<()> {
        let Some(nvcc) = self.nvcc else { return Ok(()) };
        let roots = crate::cuda::install_roots(&nvcc.tool.path);
        let sources: Vec<std::path::PathBuf> = self.krate.cuda_sources.iter().map(|s| s.path.clone()).collect();
        let dirs = inline_ptx::include_dirs(self.krate);
        let mut headers = inline_ptx::user_headers(inputs, &self.krate.dir, &dirs, &roots, &sources);
        // A header the sources reach by quoted `#include`s from outside the package and the
        // include folders (a monorepo's `../common/x.cuh`, a lone file's `../include/`) is the
        // user's too, where nvcc read it.
        for h in self.included_headers() {
            if inputs.contains(h) && !headers.contains(h) && !roots.iter().any(|r| h.starts_with(r)) {
                headers.push(h.clone());
            }
        }
        let headers = inline_ptx::own_headers(headers, &self.krate.dir);
        self.report_inline_ptx(inline_ptx::check_headers(&headers, &self.krate.dir), reporter)
    }

    fn report_inline_ptx(&self, diags: Vec<Diagnostic>, reporter: &dyn Reporter) -> Result<()> {
        for d in &diags {
            reporter.report(Event::Diagnostic(d));
        }
        let count = diags.iter().filter(|d| d.level == Level::Error).count();
        if count > 0 {
            return Err(Error::InlinePtx { package: self.krate.name.clone(), in_build: true, count, diagnostics: diags });
        }
        Ok(())
    }

    /// A kernel name in two modules of the crate (Rust and CUDA, or two .cu files) would make
    /// launching by name ambiguous. Two .cu modules may share one: a C++ (mangled) helper kernel
    /// (llm.c's), or an `extern "C"` kernel that no module's own source names, which then comes
    /// from a header they include (dfdx's `fill_with_*` in `cuda_utils.cuh`, in 44 of its
    /// files): one definition, loaded once per module. A module whose source defines it, or
    /// names it (a macro that stamps it out), has a definition of its own: with the name in
    /// another module too, that is two. Where a Builder embeds them, the signature stage also
    /// compares the places of the definitions (`codegen`).
    pub(super) fn check_unique_kernels(&self, artifacts: &[Artifact]) -> Result<()> {
        let ptx = super::job::first_ptx(artifacts);
        let mut modules_of: std::collections::BTreeMap<&str, Vec<&Artifact>> = Default::default();
        for a in &ptx {
            for k in a.kernels.iter().filter(|k| !k.name.starts_with("_Z")) {
                modules_of.entry(k.name.as_str()).or_default().push(a);
            }
        }
        // Each module's source, read once: a name shared by 44 modules is 946 pairs.
        let mut sources: std::collections::HashMap<&str, Option<OwnSource>> = Default::default();
        for (name, modules) in modules_of.iter().filter(|(_, m)| m.len() > 1) {
            let mut own = None;
            for a in modules {
                let source = sources.entry(a.module.as_str()).or_insert_with(|| self.own_source(a));
                if let Some(at) = source.as_ref().map_or(Some(self.definition(a, name)), |s| s.defines(name, &self.krate.dir)) {
                    own = Some((a, at));
                    break;
                }
            }
            let Some((a, first)) = own else { continue };
            if let Some(other) = modules.iter().find(|b| b.module != a.module) {
                return Err(Error::DuplicateKernel { name: name.to_string(), first, second: self.definition(other, name) });
            }
        }
        Ok(())
    }

    /// The source of `artifact`'s module, for [`OwnSource::defines`]; `None` when it cannot be
    /// read or parsed (or there is none): then every kernel counts as its own.
    fn own_source(&self, artifact: &Artifact) -> Option<OwnSource> {
        let src = artifact.source.as_ref()?;
        let cuda = src.extension().is_some_and(|e| e == "cu");
        if !cuda {
            return Some(OwnSource { path: src.clone(), cuda, sigs: signature::rust_kernels(src).ok()?, text: String::new() });
        }
        // Read once: the signatures and the names come from the same text.
        let text = std::fs::read_to_string(src).ok()?;
        Some(OwnSource { path: src.clone(), cuda, sigs: signature::cuda_kernels_in(src, &text).ok()?, text })
    }

    /// A Rust kernel named like a libdevice function or an LLVM intrinsic is refused at its line:
    /// the link would bind the crate's own calls of that function to the kernel (a kernel that
    /// calls `math::sin` and is named `__nv_sinf` calls itself).
    pub(super) fn check_rust_kernel_names(&self, kernels: &[String]) -> Result<()> {
        let sigs = || self.krate.lib_src.as_deref().and_then(|src| signature::rust_kernels(src).ok()).unwrap_or_default();
        let root = &self.krate.dir;
        let at = |sig: Option<&signature::KernelSig>| match sig {
            Some(s) => format!("{}:{}", relative(&s.file, root).display(), s.line),
            None => relative(self.krate.lib_src.as_deref().unwrap_or(&self.krate.manifest_path), root).display().to_string(),
        };
        for name in kernels {
            if let Some(reason) = reserved_name(name) {
                let sigs = sigs();
                return Err(Error::ReservedKernelName {
                    name: name.clone(),
                    location: at(sigs.iter().find(|s| &s.name == name)),
                    reason: reason.into(),
                });
            }
        }
        Ok(())
    }

    /// Warns (when the front end ran) about `extern "ptx-kernel"` functions without
    /// `#[no_mangle]`: rustc drops them or exports them under a mangled name, and either way the
    /// host cannot launch them by name.
    pub(super) fn warn_unexported_kernels(&self, reporter: &dyn Reporter) {
        let Some(src) = self.krate.lib_src.as_deref() else { return };
        let found = signature::unexported_rust_kernels(src).unwrap_or_default();
        // One warning per crate, at the first (a build script's warnings are replayed on every
        // build: one per kernel would flood a crate that stamps them out by macro).
        let Some((name, file, line)) = found.first() else { return };
        let message = match found.len() {
            1 => format!("`extern \"ptx-kernel\" fn {name}` has no `#[no_mangle]`, so it is not exported as kernel `{name}`"),
            n => {
                let names: Vec<String> = found.iter().map(|(n, ..)| format!("`{n}`")).collect();
                format!(
                    "{n} `extern \"ptx-kernel\"` functions have no `#[no_mangle]`, so they are not exported as kernels: {}",
                    names.join(", ")
                )
            }
        };
        let d = Diagnostic::warning(message)
            .at(relative(file, &self.krate.dir), Some(*line), None)
            .rooted(&self.krate.dir)
            .note("hosts load kernels by name: add `#[no_mangle]` to the function, or use `#[ptx_device::kernel]`");
        reporter.report(Event::Diagnostic(&d));
    }

    /// The CUDA libraries the crate lists (`cuda-libraries`) must have their headers in the
    /// CUDA install nvcc comes from, or nvcc would fail on the `#include` once per file and arch.
    pub(super) fn check_cuda_libraries(&self) -> Result<()> {
        let Some(nvcc) = self.nvcc.filter(|_| !self.krate.cuda_sources.is_empty()) else { return Ok(()) };
        // The install of the real nvcc (`NVCC` may be a symlink: nvcc finds its headers from
        // where it really is). An `NVCC` that is a wrapper script sits in no install: nvcc's
        // own error on the `#include` then says it, with the same setup command.
        let real = std::fs::canonicalize(&nvcc.tool.path).unwrap_or_else(|_| nvcc.tool.path.clone());
        let Some(include) = real.parent().and_then(Path::parent).map(|r| r.join("include")) else { return Ok(()) };
        if !include.join("cuda_runtime.h").is_file() {
            return Ok(());
        }
        for lib in &self.krate.config.cuda_libraries {
            let header = crate::tools::CUDA_LIBRARIES.iter().find(|c| c.name == lib.as_str()).map(|c| c.header).unwrap_or("");
            if !include.join(header).is_file() {
                return Err(Error::ToolMissing {
                    what: format!("{lib}'s headers ({header} in {})", include.display()),
                    detail: format!(" (`cuda-libraries` of `{}`)", self.krate.name),
                    help: format!(
                        "run `cargo ptx setup` in the project (it installs what `cuda-libraries` lists), or `cargo ptx setup --with {lib}`"
                    ),
                });
            }
        }
        Ok(())
    }

    /// The same rule for the kernels of .cu files, at their definition.
    pub(super) fn check_cuda_kernel_names(&self, artifacts: &[Artifact]) -> Result<()> {
        for a in artifacts.iter().filter(|a| a.kind == ArtifactKind::Ptx && a.module != self.krate.lib_name) {
            if let Some((k, reason)) = a.kernels.iter().find_map(|k| Some((k, reserved_name(&k.name)?))) {
                return Err(Error::ReservedKernelName {
                    name: k.name.clone(),
                    location: self.definition(a, &k.name),
                    reason: reason.into(),
                });
            }
        }
        Ok(())
    }

    /// `file:line` of a kernel's definition, as far as the sources tell.
    pub(super) fn definition(&self, artifact: &Artifact, kernel: &str) -> String {
        let root = &self.krate.dir;
        match self.own_source(artifact).and_then(|s| s.sigs.into_iter().find(|s| s.name == kernel)) {
            Some(s) => format!("{}:{}", relative(&s.file, root).display(), s.line),
            None => artifact.source.as_ref().map(|p| relative(p, root).display().to_string()).unwrap_or_else(|| artifact.module.clone()),
        }
    }
}

/// A module's own source: its kernels as the signature reader sees them and, for a .cu file,
/// its text.
struct OwnSource {
    path: std::path::PathBuf,
    cuda: bool,
    sigs: Vec<signature::KernelSig>,
    text: String,
}

impl OwnSource {
    /// Where this source defines kernel `name` (`file:line`): a definition the reader sees, or,
    /// in a .cu file, the first line that names it (`UNARY_OP(float, relu_f32, ..)`); `None`
    /// when the name comes from elsewhere (a header). A Rust module's kernels are all its own.
    fn defines(&self, name: &str, dir: &Path) -> Option<String> {
        if let Some(s) = self.sigs.iter().find(|s| s.name == name) {
            return Some(format!("{}:{}", relative(&s.file, dir).display(), s.line));
        }
        if !self.cuda {
            return Some(relative(&self.path, dir).display().to_string());
        }
        let line = self.text.lines().position(|l| names(l.split("//").next().unwrap_or(l), name))?;
        Some(format!("{}:{}", relative(&self.path, dir).display(), line + 1))
    }
}

/// Whether `line` has `name` as a whole identifier.
fn names(line: &str, name: &str) -> bool {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    line.match_indices(name)
        .any(|(i, _)| !line[..i].chars().next_back().is_some_and(ident) && !line[i + name.len()..].chars().next().is_some_and(ident))
}

/// Why a kernel may not have this name, if it may not.
fn reserved_name(name: &str) -> Option<&'static str> {
    if name.starts_with("__nv_") {
        Some("has the name of a libdevice function (`__nv_*`): linking libdevice would make calls of that function call the kernel instead")
    } else if name.starts_with("llvm.") {
        Some("has the name of an LLVM intrinsic (`llvm.*`), which LLVM reserves")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kernel_named_in_a_cu_file_is_its_own() {
        // candle's and dfdx's macros stamp kernels out by name: the file defines them.
        let src = OwnSource {
            path: "/p/cuda/relu.cu".into(),
            cuda: true,
            sigs: Vec::new(),
            text: "#include \"ops.cuh\"\n// fill_f32 comes from ops.cuh\nUNARY_OP(float, relu_f32, relu_bwd_f32)\n".into(),
        };
        assert_eq!(src.defines("relu_f32", Path::new("/p")).as_deref(), Some("cuda/relu.cu:3"));
        assert_eq!(src.defines("relu", Path::new("/p")), None, "a whole identifier only");
        assert_eq!(src.defines("fill_f32", Path::new("/p")), None, "a comment names no kernel");
        let rust = OwnSource { path: "/p/src/lib.rs".into(), cuda: false, sigs: Vec::new(), text: String::new() };
        assert_eq!(rust.defines("k", Path::new("/p")).as_deref(), Some("src/lib.rs"));
    }
}
