//! CUDA C++ that launches its own kernels from host code (`kernel<<<grid, block, smem,
//! stream>>>(...)` in `extern "C"` functions), compiled as candle's build compiles its MoE and
//! quantized-matmul files: `nvcc -c` to one object per file with device code for every arch,
//! `ar` into `lib<name>.a`, linked into the host crate with the CUDA runtime.
//!
//! Device code per object (a fatbin nvcc embeds): a cubin (`code=sm_XX`) for every requested
//! `sm_XX` arch, and the PTX of the highest plain arch (`code=compute_XX`). The cubins cover
//! every GPU of the listed archs (and newer minor revisions of each); the PTX serves GPUs newer
//! than all of them, which the driver JIT-compiles once. The highest arch's PTX is the one that
//! runs on the most of those GPUs with the best code; a lower one would run too, but without the
//! newer archs' instructions. A `compute_XX` arch in the list adds its PTX alone.
//!
//! Relocatable device code (`-rdc=true` or `-dc` in `nvcc-flags`) gets a device-link step
//! (`nvcc -dlink`) whose object joins the archive, and `cudadevrt` is linked too.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::{diagnostics, files_read, in_package, nvcc_failed, option_flags, Compiled, Nvcc};
use crate::arch::{Arch, Variant};
use crate::cache;
use crate::diag::Diagnostic;
use crate::error::{Error, Result};
use crate::options::Config;
use crate::project::CudaSource;
use crate::text::depfile;
use crate::tools::process;

/// The `-gencode` arguments of `archs` (see the module docs).
pub fn gencode(archs: &[Arch]) -> Vec<OsString> {
    let mut out = Vec::new();
    let mut push = |virt: String, code: String| {
        out.push("-gencode".into());
        out.push(format!("arch={virt},code={code}").into());
    };
    for a in archs {
        match a.makes_cubin() {
            true => push(a.compute_name(), a.to_string()),
            false => push(a.compute_name(), a.compute_name()),
        }
    }
    // Arch-specific PTX (`compute_90a`) runs on that exact GPU alone: no use for newer ones.
    if let Some(top) = archs.iter().filter(|a| a.makes_cubin() && a.variant == Variant::Plain).max() {
        if !archs.iter().any(|a| !a.makes_cubin() && a.capability >= top.capability) {
            push(top.compute_name(), top.compute_name());
        }
    }
    out
}

/// nvcc's `-O3` for the host code, as CMake's Release build passes it: nvcc leaves host code
/// unoptimised by default, and at `-O0` the host compiler keeps unused static functions, whose
/// calls into libcuda or cuBLAS (ggml's error helpers) then fail the host's link. Not under
/// `cuda-gdb`, nor where `nvcc-flags` holds an `-O` of its own (nvcc refuses two).
fn host_optimisation(config: &Config) -> Option<OsString> {
    // Only nvcc's own option: not `-Xptxas -O1`, `-Xcompiler=-O2` or `-Ofast-compile=max`.
    let flags = &config.nvcc_flags;
    let passed_on = |i: usize| i > 0 && (flags[i - 1].starts_with("-X") || flags[i - 1].ends_with("-options"));
    let own = flags.iter().enumerate().any(|(i, f)| {
        let level = f.strip_prefix("-O").is_some_and(|l| l.len() == 1 && l.bytes().all(|b| b.is_ascii_digit()));
        (level || f.starts_with("--optimize=") || f == "--optimize") && !passed_on(i)
    });
    (!own && !config.cuda_gdb).then(|| "-O3".into())
}

/// Whether the user's flags ask for relocatable device code.
pub fn relocatable(config: &Config) -> bool {
    config.nvcc_flags.iter().any(|f| {
        matches!(f.as_str(), "-rdc=true" | "--relocatable-device-code=true" | "-dc" | "--device-c" | "-rdc" | "--relocatable-device-code")
    })
}

/// One `nvcc -c` run: a .cu file to an object with device code for `archs`.
pub struct ObjectCompile<'a> {
    pub nvcc: &'a Nvcc,
    pub source: &'a CudaSource,
    pub config: &'a Config,
    /// nvcc runs here; paths below it are passed relative (see [`in_package`]).
    pub package_dir: &'a Path,
    /// Sorted, at least one.
    pub archs: &'a [Arch],
    pub out: &'a Path,
    /// A private folder for nvcc's dep file goes inside it.
    pub work_dir: &'a Path,
    pub launcher: Option<&'a Path>,
    /// Where the user adds an include folder (a missing header's note).
    pub include_help: String,
}

impl ObjectCompile<'_> {
    /// Every argument but the host compiler's and the paths: with `Nvcc::host_key` and the
    /// source, the cache key.
    pub fn flags(&self) -> Vec<OsString> {
        let mut a: Vec<OsString> = vec!["-c".into(), "-Xcompiler".into(), "-fPIC".into()];
        a.extend(host_optimisation(self.config));
        a.extend(gencode(self.archs));
        let c = self.config;
        a.extend(option_flags(c, self.package_dir, c.ftz, c.fmad, c.cuda_gdb));
        a
    }

    /// Compiles; returns the files nvcc read (the .cu and its headers), less the CUDA install's,
    /// and what nvcc said.
    pub fn run(&self) -> Result<Compiled> {
        if let Some(dir) = self.out.parent() {
            cache::create_dir_all(dir)?;
        }
        let scratch_dir = cache::ScratchDir::new(self.work_dir)?;
        let dep_file = scratch_dir.path().join(format!("{}.d", self.source.module));
        let scratch = cache::scratch_path(self.out);
        let mut cmd = process::compiler(&self.nvcc.tool.path, self.launcher);
        cmd.args(self.flags()).args(self.nvcc.host_args());
        cmd.arg("-MMD").arg("-MF").arg(&dep_file);
        cmd.arg("-o").arg(&scratch).arg(in_package(&self.source.path, self.package_dir)).current_dir(self.package_dir);
        let out = process::output("nvcc", &mut cmd)?;
        let text = format!("{}{}", String::from_utf8_lossy(&out.stderr), String::from_utf8_lossy(&out.stdout));
        if !out.status.success() {
            let _ = std::fs::remove_file(&scratch);
            let diagnostics = match self.ptxas_at_source(&text, &mut cmd, &scratch_dir) {
                Some(d) => d,
                None => diagnostics(&text, self.package_dir, self.archs[0], &self.nvcc.tool),
            };
            let archs: Vec<String> = self.archs.iter().map(Arch::to_string).collect();
            return Err(nvcc_failed(diagnostics, &self.include_help, &self.source.path, self.package_dir, archs.join(", ")));
        }
        cache::rename_into_place(&scratch, self.out)?;
        let dep = std::fs::read_to_string(&dep_file).map_err(|e| Error::io("read nvcc's dependency file", &dep_file, e))?;
        let deps: Vec<PathBuf> =
            depfile::parse(&dep).prerequisites.into_iter().map(|p| if p.is_relative() { self.package_dir.join(p) } else { p }).collect();
        let mut files = files_read(&self.source.path, deps);
        // The headers as the preprocessor reached them (`a/./b/../c`), named plainly.
        for f in files.iter_mut().skip(1) {
            *f = crate::diag::joined(f, Path::new(""));
        }
        Ok(Compiled { read: files, output: Compiled::kept_output(text), cooperative_groups: false })
    }
}

impl ObjectCompile<'_> {
    /// ptxas's errors of a failed `nvcc -c` at the source lines: ptxas names the PTX nvcc wrote
    /// to a temp file and deleted (`ptxas /tmp/tmpxft_..._lanes.compute_80.ptx, line 34`, an
    /// inline `asm` the PTX path would have shown at its `.cu` line). The failed command runs
    /// again keeping its intermediate files (`-keep`, only after a failure: it writes every
    /// stage's output), and the errors are read through the kept PTX's line table as the PTX
    /// path's ptxas step reads them. None where ptxas named no line, or the second run did not
    /// keep the file it names.
    fn ptxas_at_source(&self, text: &str, cmd: &mut std::process::Command, scratch_dir: &cache::ScratchDir) -> Option<Vec<Diagnostic>> {
        let names_ptx_line = |t: &str| t.lines().any(|l| l.starts_with("ptxas ") && l.contains(", line "));
        if !names_ptx_line(text) {
            return None;
        }
        let keep = scratch_dir.path().join("keep");
        cache::create_dir_all(&keep).ok()?;
        // cicc's and ptxas's temp files go with the scratch folder too.
        cmd.arg("-keep").arg("-keep-dir").arg(&keep).env("TMPDIR", &keep);
        let again = process::output("nvcc", cmd).ok()?;
        let text = format!("{}{}", String::from_utf8_lossy(&again.stderr), String::from_utf8_lossy(&again.stdout));
        let ptx_path = text.lines().find_map(|l| l.strip_prefix("ptxas ")?.split_once(", line ").map(|(p, _)| PathBuf::from(p)))?;
        let ptx_path = if ptx_path.is_relative() { self.package_dir.join(ptx_path) } else { ptx_path };
        let ptx = std::fs::read_to_string(&ptx_path).ok()?;
        // Named as the PTX of this source for its arch: the kept file goes with the scratch folder.
        let shown = self.package_dir.join(format!("{}.{}.ptx", self.source.path.display(), ptx_arch(&ptx_path)));
        let d = crate::backend::ptxas::diagnostics(&text, &ptx, &shown, self.package_dir, &self.nvcc.tool);
        (!d.is_empty()).then_some(d)
    }
}

/// The `compute_80` of nvcc's kept `lanes.compute_80.ptx`, else `ptx`.
fn ptx_arch(kept: &Path) -> String {
    let name = kept.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    name.rsplit('.').next().filter(|a| a.starts_with("compute_") || a.starts_with("sm_")).unwrap_or("ptx").to_string()
}

/// `nvcc -dlink` of relocatable objects into the one object that resolves their device calls.
pub fn device_link(nvcc: &Nvcc, archs: &[Arch], objects: &[PathBuf], out: &Path) -> Result<()> {
    let scratch = cache::scratch_path(out);
    let mut cmd = process::compiler(&nvcc.tool.path, None);
    cmd.arg("-dlink").arg("-Xcompiler").arg("-fPIC").args(gencode(archs)).args(nvcc.host_args()).args(objects).arg("-o").arg(&scratch);
    process::checked("nvcc", || " -dlink (the device link of a static library)".to_string(), &mut cmd)?;
    cache::rename_into_place(&scratch, out)
}

/// `ar` (the one `cc` picks, `AR` included) of `objects` into `out`, written under a temp name
/// and renamed. `D`: no timestamps or owners, so the same objects make the same archive.
pub fn archive(objects: &[PathBuf], out: &Path) -> Result<()> {
    let scratch = cache::scratch_path(out);
    let _ = std::fs::remove_file(&scratch);
    let mut cmd = archiver(&format!(" (to archive {})", out.display()))?;
    cmd.arg("crsD").arg(&scratch).args(objects);
    process::checked("ar", || format!(" (archiving {})", out.display()), &mut cmd)?;
    cache::rename_into_place(&scratch, out)
}

/// The archiver `cc` picks (`AR`, else `ar` for this target) as a command with the arguments
/// `AR` gives, once its program is found; else an error that names it (`detail`: what needed it).
pub fn archiver(detail: &str) -> Result<std::process::Command> {
    let mut build = cc::Build::new();
    build.cargo_metadata(false).cargo_warnings(false);
    if std::env::var_os("TARGET").is_none() {
        let host = crate::tools::host_triple();
        build.target(&host).host(&host);
    }
    let missing = |what: String, e: String| {
        let named = std::env::var_os("AR").is_some_and(|v| !v.is_empty());
        let help = match named {
            true => "set AR to an installed archiver, or unset it".to_string(),
            false => "install binutils (`apt-get install binutils`), or set AR to an archiver".to_string(),
        };
        Error::ToolMissing { what, detail: format!("{detail}{e}"), help }
    };
    let cmd = build.try_get_archiver().map_err(|e| missing("ar".into(), format!(": {e}")))?;
    let program = cmd.get_program().to_string_lossy().into_owned();
    // Named here, not by a failed start: `cc` names `ar` without looking for it.
    match crate::tools::find_program(&program) {
        Some(path) => {
            let mut found = process::command(path);
            found.args(cmd.get_args());
            Ok(found)
        }
        None => Err(missing(format!("the archiver `{program}`"), String::new())),
    }
}

/// The folder of `libcudart_static.a` (and `libcudadevrt.a`): the install nvcc belongs to first
/// (`lib/` of NVIDIA's wheels, `lib64/` or `targets/<arch>-linux/lib/` of a toolkit), then the
/// other installs discovery knows (an `NVCC` that is a wrapper script lies outside its install).
pub fn runtime_dir(nvcc: &Nvcc) -> Result<PathBuf> {
    let own = std::fs::canonicalize(&nvcc.tool.path).unwrap_or_else(|_| nvcc.tool.path.clone());
    let mut roots: Vec<PathBuf> = own.parent().and_then(Path::parent).map(Path::to_path_buf).into_iter().collect();
    roots.extend(crate::tools::install_roots());
    let arch = std::env::consts::ARCH;
    let mut candidates: Vec<PathBuf> = Vec::new();
    for dir in roots.iter().flat_map(|r| [r.join("lib"), r.join("lib64"), r.join("targets").join(format!("{arch}-linux")).join("lib")]) {
        if !candidates.contains(&dir) {
            candidates.push(dir);
        }
    }
    candidates.iter().find(|d| d.join("libcudart_static.a").is_file()).cloned().ok_or_else(|| Error::ToolMissing {
        what: "the CUDA runtime (libcudart_static.a)".into(),
        detail: format!(
            " (a static library of CUDA C++ links it; looked in {})",
            candidates.iter().map(|c| c.display().to_string()).collect::<Vec<_>>().join(", ")
        ),
        help: runtime_help(nvcc),
    })
}

/// The fix for a missing `libcudart_static.a`: setup's install gets it again; a toolkit's is a
/// package of its own (`cuda-cudart-dev-13-0`), and setup's wheel is found beside it too.
fn runtime_help(nvcc: &Nvcc) -> String {
    let v = &nvcc.tool.version;
    if nvcc.tool.source == "cargo ptx setup" {
        return format!("run `cargo ptx setup` (it installs nvidia-cuda-runtime {v} again beside nvcc)");
    }
    let package = match nvcc.tool.release() {
        Some((major, minor)) => format!("the `cuda-cudart-dev-{major}-{minor}` package"),
        None => "its cudart package".into(),
    };
    format!("install the CUDA runtime of the toolkit nvcc {v} belongs to ({package}), set CUDA_PATH to a toolkit that has it, or run `cargo ptx setup` (its nvidia-cuda-runtime wheel is found too)")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(archs: &[&str]) -> Vec<String> {
        let archs: Vec<Arch> = archs.iter().map(|a| a.parse().unwrap()).collect();
        gencode(&archs).into_iter().map(|a| a.to_string_lossy().into_owned()).filter(|a| a != "-gencode").collect()
    }

    #[test]
    fn a_cubin_per_arch_and_the_ptx_of_the_highest() {
        assert_eq!(
            args(&["sm_75", "sm_80", "sm_90"]),
            ["arch=compute_75,code=sm_75", "arch=compute_80,code=sm_80", "arch=compute_90,code=sm_90", "arch=compute_90,code=compute_90"]
        );
        // Arch-specific code runs on one GPU only: the PTX is the highest plain arch's.
        assert_eq!(
            args(&["sm_80", "sm_90a"]),
            ["arch=compute_80,code=sm_80", "arch=compute_90a,code=sm_90a", "arch=compute_80,code=compute_80"]
        );
        // A PTX-only arch is its own PTX; no second PTX below it.
        assert_eq!(args(&["sm_80", "compute_90"]), ["arch=compute_80,code=sm_80", "arch=compute_90,code=compute_90"]);
    }

    #[test]
    fn host_code_is_optimised_unless_the_flags_or_cuda_gdb_say_otherwise() {
        let mut c = Config::default();
        assert_eq!(host_optimisation(&c), Some("-O3".into()));
        c.nvcc_flags = vec!["-O1".into()];
        assert_eq!(host_optimisation(&c), None);
        c.nvcc_flags = vec!["--optimize=2".into()];
        assert_eq!(host_optimisation(&c), None);
        // Another tool's -O, or another option, leaves the host's.
        c.nvcc_flags = vec!["-Xptxas".into(), "-O1".into(), "-Xcompiler=-O2".into(), "-Ofast-compile=max".into()];
        assert_eq!(host_optimisation(&c), Some("-O3".into()));
        c = Config { cuda_gdb: true, ..Config::default() };
        assert_eq!(host_optimisation(&c), None);
    }

    #[test]
    fn relocatable_device_code_is_read_from_the_flags() {
        let mut c = Config::default();
        assert!(!relocatable(&c));
        c.nvcc_flags = vec!["--use_fast_math".into(), "-rdc=true".into()];
        assert!(relocatable(&c));
    }

    #[test]
    fn header_paths_are_normalized() {
        assert_eq!(crate::diag::joined(Path::new("/p/./cuda/moe/../common.cuh"), Path::new("")), Path::new("/p/cuda/common.cuh"));
    }
}
