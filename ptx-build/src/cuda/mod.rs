//! The CUDA C++ front end: nvcc turns each .cu file into PTX for one virtual arch
//! (`-ptx -arch=compute_XX -lineinfo`), writes the headers it read (`-MD -MF`), and its errors
//! become diagnostics at `file:line:col`. The PTX then takes the same ptxas step as Rust
//! kernels.
//!
//! The host compiler (`-ccbin`) and the `NVCC` variable come from the `cc` crate, so a build
//! here picks the same compilers as any `cc::Build::cuda(true)` build script.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::arch::{Arch, Variant};
use crate::cache;
use crate::diag::{relative, Diagnostic, Level};
use crate::error::{Error, Result};
use crate::options::Config;
use crate::project::CudaSource;
use crate::text::depfile;

mod output;
use crate::tools::process;
use crate::tools::Tool;
use output::INCLUDE_HELP;
pub use output::{diagnostics, warnings};

pub(crate) mod host_compiler;
pub(crate) mod static_lib;

/// Variables that change what nvcc does (besides those of tool discovery).
pub const ENV_VARS: &[&str] = &["CXX", "NVCC_CCBIN", "NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS", "CUDAFLAGS"];

/// nvcc and the host-compiler arguments `cc` chooses for it.
#[derive(Debug)]
pub struct Nvcc {
    /// nvcc itself.
    pub tool: Tool,
    /// Asked of `cc` only when nvcc runs: `cc` may start compilers to detect their family.
    host_args: OnceLock<Vec<String>>,
    archs: OnceLock<Option<Vec<String>>>,
}

/// `cc`'s C++ build as nvcc's host compiler is asked of it: quiet, no flags of its own; for
/// `target` (also the host) when given, else for cargo's `TARGET`.
fn cc_build(target: Option<&str>) -> cc::Build {
    let mut build = cc::Build::new();
    build.cpp(true).cargo_metadata(false).cargo_warnings(false).warnings(false).opt_level(0).debug(false);
    if let Some(t) = target {
        build.target(t).host(t);
    }
    build
}

impl Nvcc {
    /// nvcc at `tool`; the host compiler and the archs are asked when first needed.
    pub fn new(tool: Tool) -> Nvcc {
        Nvcc { tool, host_args: OnceLock::new(), archs: OnceLock::new() }
    }

    /// `-ccbin=<C++ compiler>` as `cc` derives it from `CXX` and the target.
    ///
    /// `cc` is asked for the C++ compiler alone: `cuda(true)` passes that same compiler's path as
    /// `-ccbin`, but first runs `nvcc -E` and `nvcc -?` to learn nvcc's family, which it then
    /// replaces with the C++ compiler's (150 of the 240 ms the question took, before the first
    /// nvcc of every cold build could start; BENCHMARKS.md, issue 25).
    pub fn host_args(&self) -> &[String] {
        self.host_args.get_or_init(|| {
            // Outside a build script: the host's triple (asking rustc costs a process start, so
            // only when nvcc is about to run).
            let host = std::env::var_os("TARGET").is_none().then(crate::tools::host_triple);
            // `cc` learns the compiler's family by running it twice (65 ms on the way to the
            // first nvcc of every build-script run; BENCHMARKS.md), to answer with a path that
            // only the variables below decide: remembered per machine, as tool versions are.
            let mut key = crate::cache::Key::new("host-compiler-v1");
            key.str(env!("CARGO_PKG_VERSION")).str(host.as_deref().unwrap_or_default());
            // `vars_os`: `vars` panics on a variable that is not UTF-8.
            let mut vars: Vec<(String, String)> = std::env::vars_os()
                .map(|(k, v)| (k.to_string_lossy().into_owned(), v.to_string_lossy().into_owned()))
                .filter(|(k, _)| k.contains("CXX") || ["CROSS_COMPILE", "TARGET", "HOST", "PATH"].contains(&k.as_str()))
                .collect();
            vars.sort();
            for (k, v) in &vars {
                key.str(k).str(v);
            }
            let ask = || cc_build(host.as_deref()).try_get_compiler().ok().map(|t| t.path().display().to_string());
            // A compiler removed since is asked about again, not handed to nvcc.
            let holds = |c: &str| which::which(c).is_ok();
            crate::tools::remembered(&key.finish(), holds, ask).map(|c| vec![format!("-ccbin={c}")]).unwrap_or_default()
        })
    }

    /// What decides `host_args` (for cache keys, without asking `cc` or rustc).
    pub fn host_key(&self) -> String {
        let mut k = std::env::var("TARGET").unwrap_or_default();
        for v in ENV_VARS {
            k.push_str(&format!(";{v}={}", std::env::var(v).unwrap_or_default()));
        }
        k
    }

    /// The virtual archs nvcc accepts (`nvcc --list-gpu-arch`: `compute_75` ...).
    pub fn archs(&self) -> Option<&[String]> {
        self.archs
            .get_or_init(|| {
                let text = crate::tools::tool_output(&self.tool.path, &["--list-gpu-arch"])?;
                Some(text.split_whitespace().map(str::to_string).collect())
            })
            .as_deref()
    }

    /// The archs nvcc lists, in order and spelt as `like` is (`sm_75, sm_80, ...` for an `sm_`
    /// arch): what an error offers instead of one it cannot compile for.
    pub fn listed_like(&self, like: Arch) -> String {
        let mut listed: Vec<(u32, String)> = self
            .archs()
            .unwrap_or_default()
            .iter()
            .map(|name| match name.parse::<Arch>() {
                Ok(a) => (a.capability, if like.virtual_only { a.compute_name() } else { a.sm_name() }),
                // An arch newer than this crate knows: as nvcc spells it.
                Err(_) => (name.trim_start_matches(|c: char| !c.is_ascii_digit()).parse().unwrap_or(u32::MAX), name.clone()),
            })
            .collect();
        listed.sort();
        listed.into_iter().map(|(_, name)| name).collect::<Vec<_>>().join(", ")
    }

    /// Whether nvcc can compile for `arch` (unknown: assume yes and let nvcc say).
    pub fn supports(&self, arch: Arch) -> bool {
        self.archs().is_none_or(|list| lists(list, arch, self.tool.release()))
    }
}

/// Whether `nvcc --list-gpu-arch`'s `list` covers `arch`. The list names plain archs only, yet
/// the nvcc that prints it compiles the arch-specific `compute_90a`/`compute_100a` (CUDA 12.0+)
/// and the family `compute_100f` (12.9+) of the archs it lists, and its ptxas assembles them.
fn lists(list: &[String], arch: Arch, release: Option<(u32, u32)>) -> bool {
    let plain = format!("compute_{}", arch.capability);
    let named = |name: &str| list.iter().any(|a| a == name);
    match arch.variant {
        Variant::Plain => named(&arch.compute_name()),
        Variant::Specific => named(&arch.compute_name()) || named(&plain),
        Variant::Family => named(&arch.compute_name()) || (named(&plain) && release.is_none_or(|r| r >= (12, 9))),
    }
}

/// One nvcc run: a .cu file to PTX for one arch.
pub struct CudaCompile<'a> {
    pub nvcc: &'a Nvcc,
    pub source: &'a CudaSource,
    /// The crate's options (includes, defines, flags, standard).
    pub config: &'a Config,
    /// The package folder: `cuda-include` is relative to it, diagnostics name files below it
    /// relative to it.
    pub package_dir: &'a Path,
    pub arch: Arch,
    pub ftz: bool,
    /// nvcc's `-fmad` (its default is true: only `false` is passed).
    pub fmad: bool,
    /// `-G`: device debug info, optimisations off.
    pub device_debug: bool,
    pub out: &'a Path,
    /// The arch's work folder; nvcc's dep file goes to a private folder inside it.
    pub work_dir: &'a Path,
    /// Runs nvcc when set (`sccache`).
    pub launcher: Option<&'a Path>,
    /// Where the user adds an include folder, for how this build was started (a missing
    /// header's note).
    pub include_help: String,
    /// Where to keep the user's parts of the translation unit nvcc preprocessed for the device
    /// (`-keep`), for reading kernels that macros stamp out: cheaper than a second, `-E` run of
    /// nvcc.
    pub keep_preprocessed: Option<&'a Path>,
}

impl CudaCompile<'_> {
    /// Every argument but the host compiler's and the paths (with `Nvcc::host_key`, they key
    /// the cache).
    pub fn flags(&self) -> Vec<OsString> {
        let mut a: Vec<OsString> = vec!["-ptx".into(), format!("-arch={}", self.arch.compute_name()).into()];
        a.extend(option_flags(self.config, self.package_dir, self.ftz, self.fmad, self.device_debug));
        a
    }

    fn in_package(&self, path: &Path) -> PathBuf {
        in_package(path, self.package_dir)
    }

    /// Compiles; returns the files nvcc read (the .cu and its headers), less the CUDA install's
    /// own headers (the nvcc version in the cache key covers them), and what nvcc said.
    pub fn run(&self) -> Result<Compiled> {
        if let Some(dir) = self.out.parent() {
            cache::create_dir_all(dir)?;
        }
        let scratch_dir = cache::ScratchDir::new(self.work_dir)?;
        let dep_file = scratch_dir.path().join(format!("{}.d", self.source.module));
        let scratch = cache::scratch_path(self.out);
        let mut cmd = process::compiler(&self.nvcc.tool.path, self.launcher);
        cmd.args(self.flags()).args(self.nvcc.host_args());
        // The files nvcc read: from the line markers of the translation unit it keeps on the
        // way (`-keep`, 7% of a compile), not from `-MMD`, which preprocesses the whole unit a
        // second time (12% of nvcc's time on macro-heavy files: BENCHMARKS.md). sccache caches
        // `-MMD` compiles but not `-keep` ones, so a launcher keeps `-MMD`.
        let kept = self.launcher.is_none().then(|| {
            let stem = self.source.path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            scratch_dir.path().join(format!("{stem}.cpp1.ii"))
        });
        match &kept {
            // cicc leaves an empty `<stem>-<hash>..lgenfe.bc` in TMPDIR when a `-keep` run stops
            // on a front-end error (about 100 a CI run): its TMPDIR is the scratch folder, which
            // goes with the step. Not under a launcher, whose server would inherit it.
            Some(_) => cmd.arg("-keep").arg("-keep-dir").arg(scratch_dir.path()).env("TMPDIR", scratch_dir.path()),
            None => cmd.arg("-MMD").arg("-MF").arg(&dep_file),
        };
        cmd.arg("-o").arg(&scratch).arg(self.in_package(&self.source.path)).current_dir(self.package_dir);
        let out = process::output("nvcc", &mut cmd)?;
        let text = format!("{}{}", String::from_utf8_lossy(&out.stderr), String::from_utf8_lossy(&out.stdout));
        if !out.status.success() {
            // For some archs nvcc runs ptxas on the PTX it wrote: map those errors through the
            // PTX's line table like our own ptxas step does.
            let diagnostics = match std::fs::read_to_string(&scratch) {
                Ok(ptx) if text.lines().any(|l| l.starts_with("ptxas ") && l.contains(", line ")) => {
                    crate::backend::ptxas::diagnostics(&text, &ptx, self.out, self.package_dir, &self.nvcc.tool)
                }
                _ => diagnostics(&text, self.package_dir, self.arch, &self.nvcc.tool),
            };
            let _ = std::fs::remove_file(&scratch);
            return Err(nvcc_failed(diagnostics, &self.include_help, &self.source.path, self.package_dir, self.arch.to_string()));
        }
        // Left absolute under `cuda-gdb`, where the debugger must find the sources.
        if !self.device_debug {
            crate::backend::ptx::relative_file_lines(&scratch, self.package_dir, Some(&self.fixed_roots()))?;
        }
        cache::rename_into_place(&scratch, self.out)?;
        // Seen among the unit's headers, system ones too (a distribution's CUDA in /usr/include).
        let cooperative_header = |file: &Path| file.file_name().is_some_and(|n| n == "cooperative_groups.h");
        let cooperative_groups = std::cell::Cell::new(false);
        let prerequisites = match &kept {
            // nvcc names its intermediate files after the source's stem.
            Some(ii) => {
                let text = std::fs::read_to_string(ii).map_err(|e| Error::io("read nvcc's preprocessed unit", ii, e))?;
                let roots = self.fixed_roots();
                let (files, user) = crate::text::line_markers::user_parts(&text, |file, system| {
                    if cooperative_header(Path::new(file)) {
                        cooperative_groups.set(true);
                    }
                    crate::embed::signature::cuda::not_user_code(file, system, &roots)
                });
                if let Some(keep) = self.keep_preprocessed {
                    // The kernels stamped out by macros are read from its user parts.
                    let _ = cache::write_atomic(keep, user.as_bytes());
                }
                files
            }
            None => std::fs::read_to_string(&dep_file).map(|d| depfile::parse(&d).prerequisites).unwrap_or_default(),
        };
        let deps: Vec<PathBuf> = prerequisites.into_iter().map(|p| if p.is_relative() { self.package_dir.join(p) } else { p }).collect();
        let cooperative_groups = cooperative_groups.get() || deps.iter().any(|d| cooperative_header(d));
        Ok(Compiled { read: files_read(&self.source.path, deps), output: Compiled::kept_output(text), cooperative_groups })
    }
}

/// A successful nvcc run.
#[derive(Debug)]
pub struct Compiled {
    /// The files it read (the .cu first, then its headers), less the CUDA install's.
    pub read: Vec<PathBuf>,
    /// What it printed when that holds a warning (see [`warnings`]), else empty: the step
    /// records it, so a build that reuses the step shows the warnings again, as cargo does
    /// for rustc's.
    pub output: String,
    /// It included `cooperative_groups.h`: its PTX may have kernels that sync their grid.
    pub cooperative_groups: bool,
}

impl Compiled {
    pub(crate) fn kept_output(text: String) -> String {
        if text.contains("warning") {
            text
        } else {
            String::new()
        }
    }
}

impl CudaCompile<'_> {
    /// Folders whose files the PTX names by absolute path: the CUDA install nvcc belongs to and
    /// the system's headers, the same for every checkout on a machine.
    pub(crate) fn fixed_roots(&self) -> Vec<&Path> {
        install_roots(&self.nvcc.tool.path)
    }

    /// The translation unit after the preprocessor (`nvcc -E` with the compile's flags): what
    /// the compiler saw, so kernels stamped out by macros can be read with their types.
    pub fn preprocess(&self) -> Result<String> {
        let scratch_dir = cache::ScratchDir::new(self.work_dir)?;
        let out = scratch_dir.path().join(format!("{}.ii", self.source.module));
        let mut cmd = process::compiler(&self.nvcc.tool.path, None);
        // `-ptx` becomes `-E`; the rest (arch, includes, defines, flags) decides what the
        // preprocessor keeps, so it stays.
        cmd.arg("-E")
            .args(self.flags().into_iter().filter(|f| f != "-ptx"))
            .args(self.nvcc.host_args())
            .arg("-o")
            .arg(&out)
            .arg(self.in_package(&self.source.path))
            .current_dir(self.package_dir);
        let context = || format!(" -E (reading the kernels of {})", relative(&self.source.path, self.package_dir).display());
        process::checked("nvcc", context, &mut cmd)?;
        std::fs::read_to_string(&out).map_err(|e| Error::io("read", &out, e))
    }
}

/// The CUDA install `nvcc` belongs to and the system's headers: folders whose files are the same
/// for every checkout on a machine, and no user's kernels.
pub(crate) fn install_roots(nvcc: &Path) -> Vec<&Path> {
    // `<install>/bin/nvcc`; nothing for nvcc elsewhere (a wrapper script in a project's
    // folder must not make the project's files "the install's").
    let bin = nvcc.parent().filter(|b| b.file_name().is_some_and(|n| n == "bin"));
    bin.and_then(Path::parent).into_iter().chain([Path::new("/usr")]).collect()
}

/// The flags every nvcc run of a crate shares, from its options: debug info, standard, math,
/// includes, defines and the user's own flags.
pub(crate) fn option_flags(config: &Config, package_dir: &Path, ftz: bool, fmad: bool, device_debug: bool) -> Vec<OsString> {
    let mut a: Vec<OsString> = vec![if device_debug { "-G" } else { "-lineinfo" }.into()];
    a.push(format!("-std={}", config.cuda_std.as_str()).into());
    if ftz {
        a.push("-ftz=true".into());
    }
    if !fmad {
        a.push("-fmad=false".into());
    }
    for inc in &config.cuda_include {
        a.push("-I".into());
        a.push(in_package(&package_dir.join(inc), package_dir).into());
    }
    for d in &config.cuda_defines {
        let (name, value) = (&d.name, &d.value);
        a.push(match value {
            Some(v) => format!("-D{name}={v}").into(),
            None => format!("-D{name}").into(),
        });
    }
    a.extend(config.nvcc_flags.iter().map(OsString::from));
    a
}

/// `path` relative to the package when it lies below it, as `./path`. nvcc runs in the package
/// folder with such paths, so its command line (and a compiler launcher's cache key, which
/// sccache takes from the command line and the preprocessed source) is the same in every
/// checkout; the `./` keeps a file named `-o.cu` from being read as an option.
pub(crate) fn in_package(path: &Path, package_dir: &Path) -> PathBuf {
    match path.strip_prefix(package_dir) {
        Ok(rel) => Path::new(".").join(rel),
        Err(_) => path.to_path_buf(),
    }
}

/// How the note on a missing header starts before the build says which place applies.
/// nvcc's failure on `source` as one error: its diagnostics, the include-path note rewritten for
/// how the build was started (`include_help`), and the error count.
fn nvcc_failed(diagnostics: Vec<Diagnostic>, include_help: &str, source: &Path, package_dir: &Path, arch: String) -> Error {
    let diagnostics: Vec<Diagnostic> = diagnostics
        .into_iter()
        .map(|mut d| {
            let header = d.message.split_once(": No such file or directory").map(|(h, _)| h.to_string());
            for note in d.notes.iter_mut().filter(|n| n.starts_with(INCLUDE_HELP)) {
                // Where the package has a file of that name, its folder is the likely fix.
                *note = match header.as_deref().and_then(|h| find_in_package(package_dir, h)) {
                    Some(dir) => {
                        let dir = if dir.as_os_str().is_empty() { ".".to_string() } else { dir.display().to_string() };
                        format!("`{}` is in {dir}/: {}", header.as_deref().unwrap_or_default(), include_help.replace("DIR", &dir))
                    }
                    None => format!("{include_help}, or fix the #include path"),
                };
            }
            d
        })
        .collect();
    let count = diagnostics.iter().filter(|d| d.level == Level::Error).count().max(1);
    Error::Nvcc { file: relative(source, package_dir), others: 0, arch, count, diagnostics }
}

/// The folder (relative to `package_dir`) of a file named like `header` (`x.cuh`,
/// `sub/x.cuh`) below `package_dir`, outside `target` and hidden folders; the shallowest.
fn find_in_package(package_dir: &Path, header: &str) -> Option<PathBuf> {
    // A bounded breadth-first walk: a package with a large data folder must not stall the error.
    const MAX_ENTRIES: usize = 20_000;
    let mut queue = std::collections::VecDeque::from([package_dir.to_path_buf()]);
    let mut seen = 0;
    while let Some(dir) = queue.pop_front() {
        if dir.join(header).is_file() {
            return Some(relative(&dir, package_dir));
        }
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        // Sorted: the same folder on every machine when two have the header.
        let mut entries: Vec<std::fs::DirEntry> = entries.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            seen += 1;
            if seen > MAX_ENTRIES {
                return None;
            }
            let name = e.file_name();
            let skip = name.to_string_lossy().starts_with('.') || (dir == package_dir && name == "target");
            if !skip && e.file_type().is_ok_and(|t| t.is_dir()) {
                queue.push_back(e.path());
            }
        }
    }
    None
}

/// The files nvcc read for `source`: the source first, then the headers in `deps` less the CUDA
/// install's (the nvcc version in the cache key covers those). The install's include folder is
/// where nvcc found cuda_runtime.h (it includes it first).
fn files_read(source: &Path, deps: Vec<PathBuf>) -> Vec<PathBuf> {
    let cuda_include =
        deps.iter().find(|d| d.file_name().is_some_and(|n| n == "cuda_runtime.h")).and_then(|d| d.parent()).map(Path::to_path_buf);
    let mut files = vec![source.to_path_buf()];
    files.extend(deps.into_iter().filter(|d| d != source && !cuda_include.as_ref().is_some_and(|i| d.starts_with(i))));
    files
}

/// An nvcc 13.0.88 for tests that read its output.
#[cfg(test)]
pub(crate) fn test_tool() -> Tool {
    Tool { path: "/cuda/bin/nvcc".into(), version: "13.0.88".into(), source: "PATH".into() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::Source;

    fn tool() -> Tool {
        test_tool()
    }

    #[test]
    fn a_missing_header_the_package_has_names_its_folder_in_the_fix() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        // A copy in the target folder, shallower than the real one, is not the answer.
        for f in ["kernels/tensor_ops/utilities/cuda_utils.cuh", "target/cuda_utils.cuh", "kernels/abs.cu"] {
            std::fs::create_dir_all(root.join(f).parent().unwrap()).unwrap();
            std::fs::write(root.join(f), "").unwrap();
        }
        let text = "kernels/abs.cu:1:10: fatal error: cuda_utils.cuh: No such file or directory\n    1 | #include \"cuda_utils.cuh\"\ncompilation terminated.\n";
        let help = Source::Builder(root.join("build.rs")).include_help(None, false);
        let e = nvcc_failed(diagnostics(text, root, Arch::sm(80), &tool()), &help, &root.join("kernels/abs.cu"), root, "sm_80".into());
        let Error::Nvcc { diagnostics: ds, .. } = e else { panic!("{e}") };
        assert!(
            ds[0].notes[0].starts_with(
                "`cuda_utils.cuh` is in kernels/tensor_ops/utilities/: add the header's folder with `.cuda_include(\"kernels/tensor_ops/utilities\")`"
            ),
            "{:?}",
            ds[0].notes
        );
        // A header nowhere in the package: the general fix.
        let text = text.replace("cuda_utils.cuh", "nowhere.cuh");
        let e = nvcc_failed(diagnostics(&text, root, Arch::sm(80), &tool()), &help, &root.join("kernels/abs.cu"), root, "sm_80".into());
        let Error::Nvcc { diagnostics: ds, .. } = e else { panic!("{e}") };
        assert!(ds[0].notes[0].ends_with(", or fix the #include path"), "{:?}", ds[0].notes);
    }

    #[test]
    fn the_host_compiler_is_the_one_cc_would_pass_to_nvcc() {
        // What `cc::Build::cuda(true)` would run nvcc with, for the same target (asking it
        // starts nvcc, which may be missing: its `-ccbin` does not depend on that).
        let host = crate::tools::host_triple();
        let mut build = cc_build(Some(&host));
        build.cuda(true);
        let theirs: Vec<String> =
            build.get_compiler().args().iter().map(|a| a.to_string_lossy().into_owned()).filter(|a| a.starts_with("-ccbin")).collect();
        let nvcc = Nvcc::new(tool());
        assert_eq!(nvcc.host_args(), theirs.as_slice());
        assert!(theirs.len() == 1 && theirs[0].len() > "-ccbin=".len(), "{theirs:?}");
    }

    #[test]
    fn an_unsupported_arch_is_offered_the_listed_ones_in_order_and_in_its_spelling() {
        let nvcc = Nvcc::new(tool());
        // nvcc 13.0's order, and an arch newer than this crate knows.
        let listed = "compute_75 compute_80 compute_100 compute_110 compute_103 compute_120 compute_130";
        nvcc.archs.set(Some(listed.split(' ').map(String::from).collect())).unwrap();
        assert_eq!(nvcc.listed_like(Arch::sm(70)), "sm_75, sm_80, sm_100, sm_103, sm_110, sm_120, compute_130");
        assert_eq!(
            nvcc.listed_like("compute_70".parse().unwrap()),
            "compute_75, compute_80, compute_100, compute_103, compute_110, compute_120, compute_130"
        );
    }

    #[test]
    fn arch_specific_and_family_variants_of_listed_archs_are_supported() {
        // What nvcc 13.0.88 prints for `--list-gpu-arch`: no `a` or `f` variant.
        let list: Vec<String> = "compute_75 compute_80 compute_86 compute_87 compute_88 compute_89 compute_90 compute_100 compute_110 compute_103 compute_120 compute_121"
            .split(' ')
            .map(String::from)
            .collect();
        let ok = |a: &str, r| lists(&list, a.parse().unwrap(), Some(r));
        for a in ["sm_80", "sm_90", "sm_90a", "sm_100a", "sm_100f", "compute_90a", "sm_120a"] {
            assert!(ok(a, (13, 0)), "{a}");
        }
        assert!(!ok("sm_101a", (13, 0)), "CUDA 13 renamed sm_101 to sm_110: not listed");
        assert!(!ok("sm_70", (13, 0)));
        assert!(!ok("sm_100f", (12, 8)), "family variants came with CUDA 12.9");
    }
}
