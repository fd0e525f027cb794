//! `cargo ptx doctor`: every tool a build needs, found or missing, with the exact fix.
//!
//! In a project it answers for that project's kernel crates (found as `cargo ptx build` finds
//! them): the toolchain they pin, libdevice when their Rust kernels call it, and ptxas beside
//! nvcc when their .cu files are built for archs where nvcc runs ptxas itself. What CUDA C++
//! needs beside nvcc (the host C++ compiler it accepts; a static library's CUDA runtime and
//! `ar`) is `static_lib`'s.

use std::path::{Path, PathBuf};

use ptx_build::arch::ArchRequest;
use ptx_build::internals::project::KernelCrate;
use ptx_build::internals::tools::{self, Cuda, Rust};

use crate::tools::CudaTool;

mod static_lib;

/// How one component stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    /// Usable, with a caveat (a mixed install), or optional and missing.
    Warning,
    /// A build cannot run without it.
    Missing,
}

/// One line of the report.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Check {
    pub component: String,
    pub status: Status,
    pub version: Option<String>,
    pub path: Option<PathBuf>,
    /// Where it was found, or what it is for when missing.
    pub detail: String,
    /// The exact fix, when not ok.
    pub fix: Option<String>,
}

impl Check {
    /// One line of the report.
    pub fn new(
        component: &str,
        status: Status,
        version: Option<String>,
        path: Option<PathBuf>,
        detail: String,
        fix: Option<String>,
    ) -> Check {
        Check { component: component.to_string(), status, version, path, detail, fix }
    }
}

/// Every component, found or missing, and whether a build can run.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Report {
    pub checks: Vec<Check>,
    /// A Rust kernel build can run (PTX at least), and the project's .cu files can be built.
    pub ready: bool,
    /// A CUDA C++ build can run: nvcc was found, and it accepts the host C++ compiler.
    pub cuda_ready: bool,
    /// Why `cuda_ready` is false, one line a piece.
    pub cuda_missing: Vec<String>,
    /// A static library of CUDA C++ (`Builder::cuda_static_lib`) can be built and linked: a CUDA
    /// C++ build can run, and the CUDA runtime (`libcudart_static.a`) and `ar` were found.
    pub static_lib_ready: bool,
    /// Why `static_lib_ready` is false, one line a piece.
    pub static_lib_missing: Vec<String>,
    /// The workspace members here whose build script builds a static library.
    pub static_lib_users: Vec<String>,
    /// Archs LLVM and ptxas can both build for.
    pub archs: Option<String>,
    /// The kernel crates of the project in the current folder that the checks answered for.
    pub project: Vec<String>,
}

/// The kernel crates of the project in the current folder, as `cargo ptx build` there finds
/// them (none outside a project, or where cargo cannot read it: the build says why).
pub fn project_crates() -> Vec<KernelCrate> {
    let front = ptx_build::Options::from_env().unwrap_or_default();
    ptx_build::internals::project::find_kernel_crates(None, &[], &[], &front, &ptx_build::options::Source::CommandLine).unwrap_or_default()
}

/// The toolchains to check: `--toolchain`, else those the project's Rust kernel crates use
/// (metadata, CARGO_PTX_TOOLCHAIN or the default), else the default; each with its crates.
pub fn toolchains(given: Option<&str>, crates: &[KernelCrate]) -> Vec<(String, Vec<String>)> {
    if let Some(t) = given {
        return vec![(t.to_string(), Vec::new())];
    }
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for k in crates.iter().filter(|k| has_rust_kernels(k)) {
        match out.iter_mut().find(|(t, _)| *t == k.config.toolchain) {
            Some((_, users)) => users.push(k.name.clone()),
            None => out.push((k.config.toolchain.clone(), vec![k.name.clone()])),
        }
    }
    if out.is_empty() {
        out.push((tools::DEFAULT_TOOLCHAIN.to_string(), Vec::new()));
    }
    out
}

fn has_rust_kernels(k: &KernelCrate) -> bool {
    k.config.rust && k.lib_src.is_some()
}

/// `cargo ptx setup`, naming the toolchain when it is not the default one.
fn setup_command(toolchain: &str) -> String {
    if toolchain == tools::DEFAULT_TOOLCHAIN {
        "cargo ptx setup".into()
    } else {
        format!("cargo ptx setup --toolchain {toolchain}")
    }
}

/// Looks at every component for kernels built with `toolchain` (`None`: the toolchains of the
/// project here, else the default), and at what the project's kernel crates need.
pub fn report(toolchain: Option<&str>) -> Report {
    let crates = project_crates();
    let mut checks = Vec::new();
    let mut ready = true;
    let mut llvm_archs = None;
    let check = Check::new;

    for (toolchain, users) in toolchains(toolchain, &crates) {
        let toolchain = toolchain.as_str();
        let setup = setup_command(toolchain);
        // Which crates pin it, so a toolchain other than the default is explained.
        let used_by = if users.is_empty() { String::new() } else { format!("used by {}: ", users.join(", ")) };
        match Rust::find(toolchain) {
            Ok(rust) => {
                checks.push(check(
                    &format!("toolchain `{toolchain}`"),
                    Status::Ok,
                    Some(rust.version.clone()),
                    Some(rust.rustc.clone()),
                    format!("{used_by}LLVM {}", rust.llvm_version),
                    None,
                ));
                let fix = |c: &str| Some(format!("{setup}   (or: rustup component add {c} --toolchain {toolchain})"));
                match &rust.rust_src {
                    Some(p) => checks.push(check("rust-src", Status::Ok, None, Some(p.clone()), "builds `core` for nvptx64".into(), None)),
                    None => {
                        ready = false;
                        checks.push(check(
                            "rust-src",
                            Status::Missing,
                            None,
                            None,
                            format!("needed to build `core` for nvptx64 (-Zbuild-std) with `{toolchain}`"),
                            fix("rust-src"),
                        ));
                    }
                }
                match &rust.llvm {
                    Some(l) => {
                        llvm_archs.get_or_insert_with(|| l.supported().clone());
                        checks.push(check(
                            "llvm-tools",
                            Status::Ok,
                            Some(rust.llvm_version.clone()),
                            Some(l.bin.clone()),
                            "llvm-link, opt, llc of the same LLVM".into(),
                            None,
                        ));
                    }
                    None => {
                        ready = false;
                        checks.push(check(
                            "llvm-tools",
                            Status::Missing,
                            None,
                            None,
                            format!("links the kernels' bitcode with libdevice and writes PTX (`{toolchain}`)"),
                            fix("llvm-tools"),
                        ));
                    }
                }
            }
            Err(e) => {
                ready = false;
                checks.push(check(
                    &format!("toolchain `{toolchain}`"),
                    Status::Missing,
                    None,
                    None,
                    format!("{used_by}{}", first_line(&e.to_string())),
                    Some(format!("{setup}   (or: rustup toolchain install {toolchain} --profile minimal --component rust-src,llvm-tools)")),
                ));
            }
        }
    }

    // The toolchain file beside a kernel crate picks the toolchain of `cargo check` and
    // rust-analyzer there; builds take theirs from the metadata. Apart, the editor checks the
    // code with another compiler than the one that builds it.
    for k in crates.iter().filter(|k| has_rust_kernels(k)) {
        let Some((file, channel)) = toolchain_file(k) else { continue };
        let host = tools::host_triple();
        let short = |t: &str| t.strip_suffix(&format!("-{host}")).unwrap_or(t).to_string();
        if short(&channel) != short(&k.config.toolchain) {
            let cwd = std::env::current_dir().unwrap_or_default();
            let shown = file.strip_prefix(&cwd).unwrap_or(&file).display().to_string();
            checks.push(check(
                "toolchain file",
                Status::Warning,
                None,
                Some(file.clone()),
                format!(
                    "`{}` builds with `{}` ([package.metadata.ptx] or CARGO_PTX_TOOLCHAIN), but {shown} gives `cargo check` and rust-analyzer `{channel}`",
                    k.name, k.config.toolchain
                ),
                Some(format!("set `channel = \"{}\"` in {shown}", k.config.toolchain)),
            ));
        }
    }

    let cuda = Cuda::find();
    // Whose build fails without nvcc and a host compiler it accepts: the kernel crates with .cu
    // files, and the members whose build script builds a static library of them.
    let static_users = static_lib::users();
    let mut cuda_users: Vec<String> = crates.iter().filter(|k| !k.cuda_sources.is_empty()).map(|k| k.name.clone()).collect();
    cuda_users.extend(static_users.iter().map(|u| u.name.clone()).filter(|n| !cuda_users.contains(n)).collect::<Vec<_>>());
    let cuda_fix = Some("cargo ptx setup   (or set CUDA_PATH to a CUDA toolkit)".to_string());
    match &cuda.ptxas {
        Some(t) => checks.push(check(
            "ptxas",
            Status::Ok,
            Some(t.version.clone()),
            Some(t.path.clone()),
            format!("found by {}; makes cubins", t.source),
            None,
        )),
        None => {
            checks.push(check("ptxas", Status::Warning, None, None, "not found: builds make PTX only, no cubins".into(), cuda_fix.clone()))
        }
    }
    match &cuda.nvcc {
        Some(t) => checks.push(check(
            "nvcc",
            Status::Ok,
            Some(t.version.clone()),
            Some(t.path.clone()),
            format!("found by {}; compiles CUDA C++ kernels", t.source),
            None,
        )),
        None => {
            // The project's own .cu files cannot be built without it.
            let users: Vec<&str> = cuda_users.iter().map(String::as_str).collect();
            ready &= users.is_empty();
            let (status, detail) = match users.is_empty() {
                true => (Status::Warning, "not found: needed only for CUDA C++ (.cu) kernels".to_string()),
                false => {
                    let verb = if users.len() == 1 { "builds" } else { "build" };
                    (Status::Missing, format!("not found: {} {verb} CUDA C++ (.cu) kernels", users.join(", ")))
                }
            };
            checks.push(check("nvcc", status, None, None, detail, cuda_fix.clone()))
        }
    }
    let cuda_found = static_lib::checks(cuda.nvcc.as_ref(), &cuda_users, &static_users);
    ready &= !cuda_found.blocks_project;
    checks.extend(cuda_found.checks);
    // A Rust kernel that calls libdevice does not link without it: missing, not a warning.
    let caller = crates.iter().filter(|k| has_rust_kernels(k)).find_map(|k| libdevice_call(k).map(|at| (k.name.clone(), at)));
    let calls = caller.as_ref().map(|(name, at)| format!("; `{name}` calls it ({at})")).unwrap_or_default();
    let needed = if caller.is_some() { Status::Missing } else { Status::Warning };
    match &cuda.libdevice {
        Some(l) if l.valid => checks.push(check(
            "libdevice",
            Status::Ok,
            cuda.components.get("nvvm").cloned(),
            Some(l.path.clone()),
            format!("found by {}; math functions (__nv_*){calls}", l.source),
            None,
        )),
        Some(l) => {
            ready &= caller.is_none();
            checks.push(check(
                "libdevice",
                needed,
                None,
                Some(l.path.clone()),
                format!("not LLVM bitcode (corrupt file): kernels that call __nv_* functions fail{calls}"),
                Some("cargo ptx setup --force   (or set LIBDEVICE to a good libdevice.10.bc)".into()),
            ))
        }
        None => {
            ready &= caller.is_none();
            checks.push(check(
                "libdevice",
                needed,
                None,
                None,
                format!("not found: kernels that call __nv_* math functions fail to link{calls}"),
                Some("cargo ptx setup   (or set LIBDEVICE to a libdevice.10.bc)".into()),
            ))
        }
    }
    // nvcc runs ptxas itself for compute_90 and newer (checked with nvcc 13.0: `sh: 1: ptxas: not
    // found` for -ptx -arch=compute_90, none for compute_89), looking beside itself and on PATH,
    // not where our own ptxas step found one.
    if let Some(nvcc) = &cuda.nvcc {
        let dir = nvcc.path.parent().map(Path::to_path_buf).unwrap_or_default();
        let reachable = dir.join("ptxas").is_file() || tools::on_path("ptxas").is_some();
        if let (false, Some((name, arch))) = (reachable, crates.iter().find_map(|k| nvcc_runs_ptxas(k).map(|a| (k.name.clone(), a)))) {
            ready = false;
            let is_var = nvcc.source != "PATH" && nvcc.source.chars().all(|c| c.is_ascii_uppercase() || c == '_');
            let fix = if is_var {
                format!("unset {} && cargo ptx setup   (or put ptxas into {})", nvcc.source, dir.display())
            } else if nvcc.source == "cargo ptx setup" {
                "cargo ptx setup --force".to_string()
            } else {
                format!("put ptxas into {} (a CUDA toolkit has it beside nvcc), or set CUDA_PATH to a toolkit that has both", dir.display())
            };
            checks.push(check(
                "ptxas for nvcc",
                Status::Missing,
                None,
                Some(nvcc.path.clone()),
                format!(
                    "`{name}` builds .cu files for {arch}, where nvcc runs ptxas itself, and none is beside nvcc (found by {}) or on PATH: nvcc fails with `ptxas: not found`",
                    nvcc.source
                ),
                Some(fix),
            ));
        }
    }
    // Tools of two commands only; a build never needs them, so missing ones are warnings.
    for (tool, what) in [
        (CudaTool::Nvdisasm, "SASS for `cargo ptx inspect --sass`"),
        (CudaTool::ComputeSanitizer, "runs programs for `cargo ptx sanitize`"),
    ] {
        match tool.find() {
            Ok(path) => checks.push(check(tool.name(), Status::Ok, None, Some(path), what.into(), None)),
            Err(e) => {
                let text = e.to_string();
                let (message, help) = text.split_once("\n  help: ").unwrap_or((&text, ""));
                checks.push(check(tool.name(), Status::Warning, None, None, message.to_string(), Some(help.to_string())))
            }
        }
    }
    // A variable naming a tool that does not work stops every build (it is never skipped).
    if let Err(ptx_build::Error::BadToolVariable { var, path, problem, help }) = ptx_build::internals::tools::check_home() {
        ready = false;
        checks.push(check(&var, Status::Missing, None, Some(path), problem, Some(help)));
    }
    for r in &cuda.rejected {
        ready = false;
        checks.push(check(r.var, Status::Missing, None, Some(r.path.clone()), r.problem.clone(), Some(r.help.clone())));
    }
    let env_options = ptx_build::Options::from_env();
    match env_options.as_ref().map(|o| o.resolve().shared_cache.dir()) {
        Ok(Some(dir)) => {
            let s = ptx_build::internals::cache::StepCache::new(&dir).stats();
            let detail = format!(
                "shared step cache: {} entries, {:.1} MiB (set CARGO_PTX_CACHE_DIR to move it, `off` to disable)",
                s.entries,
                s.bytes as f64 / 1048576.0
            );
            checks.push(check("step cache", Status::Ok, None, Some(dir), detail, None));
        }
        Ok(None) => checks.push(check("step cache", Status::Ok, None, None, "off (CARGO_PTX_CACHE_DIR=off)".into(), None)),
        Err(e) => {
            ready = false;
            checks.push(check(
                "step cache",
                Status::Missing,
                None,
                None,
                first_line(&e.to_string()),
                Some("fix or unset CARGO_PTX_CACHE_DIR".into()),
            ));
        }
    }
    if let Some(launcher) = env_options.ok().and_then(|o| o.launcher).filter(|l| !l.trim().is_empty()) {
        match ptx_build::internals::tools::find_program(&launcher) {
            Some(p) => checks.push(check(
                "launcher",
                Status::Ok,
                None,
                Some(p),
                format!("CARGO_PTX_LAUNCHER: nvcc and ptxas run through `{launcher}`"),
                None,
            )),
            None => {
                ready = false;
                checks.push(check(
                    "launcher",
                    Status::Missing,
                    None,
                    None,
                    format!("CARGO_PTX_LAUNCHER names `{launcher}`, which is not installed"),
                    Some("cargo ptx setup --with sccache   (or unset CARGO_PTX_LAUNCHER)".into()),
                ));
            }
        }
    }
    if let Some(mix) = &cuda.mixed {
        checks.push(check("CUDA release", Status::Warning, None, None, mix.clone(), Some("cargo ptx setup --force".into())));
    }
    match ptx_build::internals::tools::gpu::native() {
        Ok(gpus) => checks.push(check(
            "GPU",
            Status::Ok,
            None,
            None,
            format!("{} (for `--arch native` and running kernels)", gpus.iter().map(|a| a.to_string()).collect::<Vec<_>>().join(", ")),
            None,
        )),
        Err(e) => checks.push(check(
            "GPU",
            Status::Warning,
            None,
            None,
            format!(
                "none found ({}): name archs with --arch; kernels cannot run here",
                first_line(&e.to_string()).trim_start_matches("`--arch native` needs a GPU, and none was found: ")
            ),
            None,
        )),
    }
    let archs = llvm_archs.map(|l| {
        let sup = cuda.ptxas_supported();
        let v: Vec<String> = l.all().into_iter().filter(|a| sup.as_ref().is_none_or(|s| s.contains(a))).map(|a| a.to_string()).collect();
        v.join(", ")
    });
    Report {
        checks,
        ready,
        cuda_ready: cuda_found.cuda_missing.is_empty(),
        cuda_missing: cuda_found.cuda_missing,
        static_lib_ready: cuda_found.static_lib_missing.is_empty(),
        static_lib_missing: cuda_found.static_lib_missing,
        static_lib_users: static_users.into_iter().map(|u| u.name).collect(),
        archs,
        project: crates.iter().map(|k| k.name.clone()).collect(),
    }
}

/// The first place a Rust kernel crate's own sources call libdevice: a `__nv_*` function, or
/// ptx-device's `math` or `libdevice` module (libdevice's functions). Read from the sources,
/// since doctor runs where a build may not; the link step decides from the bitcode.
fn libdevice_call(k: &KernelCrate) -> Option<String> {
    libdevice_call_under(k.lib_src.as_ref()?.parent()?, &std::env::current_dir().unwrap_or_default())
}

/// [`libdevice_call`] in the `.rs` files under `src`, named relative to `cwd`.
fn libdevice_call_under(src: &Path, cwd: &Path) -> Option<String> {
    rust_files(src).into_iter().find_map(|file| {
        let text = std::fs::read_to_string(&file).ok()?;
        let device = text.contains("ptx_device");
        let (n, line) = text.lines().enumerate().find(|(_, l)| {
            let l = l.trim_start();
            !l.starts_with("//")
                && (l.contains("__nv_")
                    || l.contains("ptx_device::math")
                    || l.contains("ptx_device::libdevice")
                    || (device && (l.contains("math::") || l.contains("libdevice::"))))
        })?;
        let shown = file.strip_prefix(cwd).unwrap_or(&file);
        Some(format!("{}:{}: `{}`", shown.display(), n + 1, line.trim()))
    })
}

/// The toolchain file rustup reads in a kernel crate's folder (searched up to its workspace
/// root, where the kernel workspace ends), and the channel it names.
fn toolchain_file(k: &KernelCrate) -> Option<(PathBuf, String)> {
    for dir in k.dir.ancestors() {
        for name in ["rust-toolchain.toml", "rust-toolchain"] {
            let file = dir.join(name);
            if let Ok(text) = std::fs::read_to_string(&file) {
                return channel_of(&text).map(|c| (file, c));
            }
        }
        if dir == k.workspace_root {
            break;
        }
    }
    None
}

/// `channel = "X"` of a toolchain file, or the bare name of a legacy `rust-toolchain` file.
fn channel_of(text: &str) -> Option<String> {
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#'));
    let quoted = |v: &str| v.trim().trim_matches('"').trim_matches('\'').to_string();
    if !text.contains('[') {
        return lines.next().map(quoted).filter(|c| !c.is_empty());
    }
    lines.find_map(|l| l.strip_prefix("channel").and_then(|r| r.trim_start().strip_prefix('=')).map(quoted))
}

/// The `.rs` files under `dir`, sorted, to a few levels.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        paths.sort();
        for p in paths {
            if p.is_dir() && depth < 8 {
                walk(&p, depth + 1, out);
            } else if p.extension().is_some_and(|e| e == "rs") {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, 0, &mut out);
    out
}

/// An arch this crate builds .cu files for where nvcc runs ptxas itself (compute_90 and newer).
fn nvcc_runs_ptxas(k: &KernelCrate) -> Option<String> {
    if k.cuda_sources.is_empty() {
        return None;
    }
    let native = || ptx_build::internals::tools::gpu::native().unwrap_or_default();
    match &k.config.archs {
        None => native().into_iter().find(|a| a.capability >= 90).map(|a| a.to_string()),
        Some(requests) => requests.iter().find_map(|r| match r {
            ArchRequest::Arch(a) => (a.capability >= 90).then(|| a.to_string()),
            ArchRequest::All => Some("`all` (sm_90 and newer among them)".to_string()),
            ArchRequest::Native => native().into_iter().find(|a| a.capability >= 90).map(|a| a.to_string()),
        }),
    }
}

fn first_line(s: &str) -> String {
    let mut line = s.lines().next().unwrap_or_default().to_string();
    // A parenthesis the message closes on a later line.
    if line.matches('(').count() > line.matches(')').count() {
        line.push(')');
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_channel_of_a_toolchain_file() {
        assert_eq!(
            channel_of("# x\n[toolchain]\nchannel = \"nightly-2026-05-19\"\ncomponents = [\"rust-src\"]\n").as_deref(),
            Some("nightly-2026-05-19")
        );
        assert_eq!(channel_of("nightly\n").as_deref(), Some("nightly"));
        assert_eq!(channel_of("[toolchain]\ncomponents = []\n"), None);
    }

    #[test]
    fn the_fix_names_a_toolchain_other_than_the_default() {
        assert_eq!(setup_command("nightly"), "cargo ptx setup");
        assert_eq!(setup_command("nightly-2020-01-01"), "cargo ptx setup --toolchain nightly-2020-01-01");
    }

    #[test]
    fn a_parenthesis_cut_at_the_first_line_is_closed() {
        assert_eq!(first_line("not found (toolchain 'x' is not installed\n  help: ..)"), "not found (toolchain 'x' is not installed)");
        assert_eq!(first_line("plain\nmore"), "plain");
    }

    #[test]
    fn libdevice_calls_are_found_in_the_sources_and_comments_do_not_count() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("src");
        std::fs::create_dir_all(src.join("sub")).unwrap();
        std::fs::write(src.join("lib.rs"), "#![no_std]\n// calls __nv_expf? no\nmod sub;\n").unwrap();
        assert_eq!(libdevice_call_under(&src, dir.path()), None);
        // ptx-device's modules count only in a file that uses ptx-device.
        std::fs::write(src.join("sub/mod.rs"), "fn f(x: f32) -> f32 {\n    math::exp(x)\n}\n").unwrap();
        assert_eq!(libdevice_call_under(&src, dir.path()), None);
        std::fs::write(src.join("sub/mod.rs"), "use ptx_device::math;\n").unwrap();
        assert_eq!(libdevice_call_under(&src, dir.path()).as_deref(), Some("src/sub/mod.rs:1: `use ptx_device::math;`"));
    }
}
