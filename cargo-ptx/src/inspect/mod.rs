//! `cargo ptx inspect --kernel NAME`: one kernel's PTX or SASS with the source lines it came
//! from, and its resource usage. No GPU is needed: the build writes the PTX and the cubin, and
//! `nvdisasm` reads the cubin's line table (`.loc` in PTX, `.debug_line` in the cubin; both come
//! from the line info every build emits: Rust debug line tables, nvcc `-lineinfo`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use ptx_build::arch::{Arch, Variant};
use ptx_build::internals::tools::process;
use ptx_build::{Artifact, ArtifactKind, BuildOptions, BuildOutput, KernelInfo, Reporter};

use crate::error::{Error, Result};
use crate::tools::CudaTool;

mod listing;
mod panics;

pub(crate) use listing::{demangle_words, lexical, unescape};
use listing::{ptx_listing, sass_listing, Sources};
use panics::panic_sites;

/// Which listing to print.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Listing {
    Ptx,
    Sass,
}

/// What to inspect.
#[derive(Clone, Debug)]
pub struct InspectOptions {
    pub build: BuildOptions,
    pub kernel: String,
    pub listing: Listing,
    /// Archs named with `--arch`: each is printed; none means the highest arch the build made.
    pub archs_requested: bool,
}

/// Builds (or finds fresh) the kernels and returns the listing of `opts.kernel`.
pub fn inspect(opts: &InspectOptions, reporter: &dyn Reporter) -> Result<String> {
    let out = opts.build.run(reporter)?;
    render(&out, opts)
}

/// The listing for a finished build.
pub fn render(out: &BuildOutput, opts: &InspectOptions) -> Result<String> {
    let name = opts.kernel.as_str();
    let wanted = match opts.listing {
        Listing::Ptx => ArtifactKind::Ptx,
        Listing::Sass => ArtifactKind::Cubin,
    };
    let all: Vec<&Artifact> = out.crates.iter().flat_map(|c| c.artifacts.iter()).collect();
    let with_kernel: Vec<&Artifact> = all.iter().copied().filter(|a| a.kernels.iter().any(|k| k.name == name)).collect();
    if with_kernel.is_empty() {
        let project = (opts.build.paths.is_empty() && opts.build.cuda_files.is_empty()).then_some(opts.build.manifest_path.as_deref());
        return Err(unknown_kernel(name, out, project));
    }
    let mut chosen: Vec<&Artifact> = with_kernel.iter().copied().filter(|a| a.kind == wanted).collect();
    if chosen.is_empty() {
        let mut archs: Vec<ptx_build::Arch> = with_kernel.iter().map(|a| a.arch).collect();
        archs.sort();
        archs.dedup();
        let archs: Vec<String> = archs.iter().map(|a| a.to_string()).collect();
        return Err(Error::Inspect {
            message: format!("no cubin of kernel `{name}` to disassemble: the build made PTX only (archs: {})", archs.join(", ")),
            help: "name a real GPU arch (`--arch sm_90`; `compute_XX` is PTX only) and make sure ptxas is found (`cargo ptx doctor`)"
                .into(),
        });
    }
    // Highest arch first; without --arch only that one is shown.
    chosen.sort_by_key(|a| std::cmp::Reverse(arch_key(&a.arch)));
    if !opts.archs_requested {
        chosen.truncate(1);
    }
    let mut text = String::new();
    let mut sources = Sources::default();
    for a in chosen {
        let resources = with_kernel.iter().find(|c| c.kind == ArtifactKind::Cubin && c.arch == a.arch && c.module == a.module);
        let info = resources.and_then(|c| c.kernels.iter().find(|k| k.name == name));
        let _ = writeln!(
            text,
            "// kernel `{name}`, {} {} of module `{}` ({})",
            a.arch,
            if wanted == ArtifactKind::Ptx { "PTX" } else { "SASS" },
            a.module,
            a.path.display()
        );
        let _ = writeln!(text, "// resources: {}", describe_resources(info));
        sources.roots =
            a.source.as_deref().and_then(Path::parent).map(|d| d.ancestors().map(Path::to_path_buf).collect()).unwrap_or_default();
        // The kernel crate's own files: the package folder of the module's source.
        sources.package = a.source.as_deref().and_then(|s| s.ancestors().find(|d| d.join("Cargo.toml").is_file())).map(Path::to_path_buf);
        // Where it can panic, from the PTX of the same module (a cubin's SASS has the calls too,
        // but the PTX names them and their lines without a tool).
        let ptx_of =
            with_kernel.iter().find(|c| c.kind == ArtifactKind::Ptx && c.arch.capability == a.arch.capability && c.module == a.module);
        if let Some(ptx) = ptx_of.and_then(|p| std::fs::read_to_string(&p.path).ok()) {
            let sites = panic_sites(&ptx, name, &|path: &str| sources.is_user(path));
            if !sites.is_empty() {
                let _ = writeln!(
                    text,
                    "// can panic at {} place{}; a panic on the GPU traps, and the launch fails with no message:",
                    sites.len(),
                    if sites.len() == 1 { "" } else { "s" }
                );
                for (place, kind) in &sites {
                    let at = match place {
                        Some((path, line)) => sources.annotation(path, *line).trim_start_matches("// ").to_string(),
                        None => "a place the compiler merged from several (no source line)".into(),
                    };
                    let _ = writeln!(text, "//   {kind}: {at}");
                }
                let _ = writeln!(
                    text,
                    "//   (a check the compiler can see, or `get_unchecked` where an index is known good, takes a bounds check out)"
                );
            }
        }
        let body = match opts.listing {
            Listing::Ptx => {
                let ptx = std::fs::read_to_string(&a.path).map_err(|e| Error::io("read", &a.path, e))?;
                ptx_listing(&ptx, name, &mut sources).ok_or_else(|| Error::Inspect {
                    message: format!("`.entry {name}` not found in {}", a.path.display()),
                    help: "rebuild (`cargo ptx build`): the file does not match the build's kernel list".into(),
                })?
            }
            Listing::Sass => {
                let nvdisasm = CudaTool::Nvdisasm.find()?;
                let mut cmd = process::command(&nvdisasm);
                cmd.args(["--print-line-info", "--print-code"]).arg(&a.path);
                let out = process::checked("nvdisasm", || format!(" for `{name}` ({})", a.arch), &mut cmd)?;
                let sass = process::stdout_text(&out);
                sass_listing(&sass, name, &mut sources).ok_or_else(|| Error::Inspect {
                    message: format!("nvdisasm printed no code section for `{name}` from {}", a.path.display()),
                    help: format!("run `{} --print-code {}` to see what it holds", nvdisasm.display(), a.path.display()),
                })?
            }
        };
        text.push_str(&body);
        text.push('\n');
    }
    Ok(text)
}

/// `sm_90a` > `sm_90` > `compute_90` > `sm_89`.
/// Newer first; of one capability, the variants before the plain arch and a cubin arch before
/// PTX alone.
fn arch_key(arch: &Arch) -> (u32, bool, bool) {
    (arch.capability, arch.variant != Variant::Plain, arch.makes_cubin())
}

fn describe_resources(info: Option<&KernelInfo>) -> String {
    match info {
        Some(KernelInfo {
            registers: Some(r),
            spill_stores: Some(ss),
            spill_loads: Some(sl),
            shared_bytes: Some(sh),
            stack_bytes: Some(st),
            ..
        }) => format!("{r} registers, {ss} B spill stores, {sl} B spill loads, {sh} B static shared memory, {st} B stack (ptxas)"),
        _ => "unknown: no cubin for this arch (ptxas not found, or a compute_XX arch)".into(),
    }
}

/// `project`: the workspace searched (its manifest, or the current folder's), when no PATH was
/// given.
fn unknown_kernel(name: &str, out: &BuildOutput, project: Option<Option<&Path>>) -> Error {
    let mut names: Vec<&str> =
        out.crates.iter().flat_map(|c| c.artifacts.iter()).flat_map(|a| a.kernels.iter().map(|k| k.name.as_str())).collect();
    names.sort();
    names.dedup();
    let packages: Vec<&str> = out.crates.iter().map(|c| c.name.as_str()).collect();
    let place = match packages.as_slice() {
        [] => "the build (it found no kernel crate)".to_string(),
        [one] => format!("`{one}`"),
        many => format!("{} packages ({})", many.len(), many.join(", ")),
    };
    let suggestion = closest(name, &names).map(str::to_string);
    let help = match (project.and_then(|m| builder_file_defining(name, m)), names.is_empty()) {
        // A kernel of a .cu file that a host's build.rs builds: not a kernel crate's.
        (Some(file), _) => format!(
            "`{name}` is in {}, which a build.rs builds: `cargo ptx inspect {0} --kernel {name} --arch sm_80` shows it",
            file.display()
        ),
        (None, true) => "point inspect at a kernel crate (`cargo ptx inspect PATH --kernel NAME`)".to_string(),
        (None, false) => format!("the kernels are: {}", names.join(", ")),
    };
    Error::UnknownKernel { name: name.to_string(), place, suggestion, help }
}

/// The `cuda/` file of a build.rs host in the workspace of `manifest` whose text has a kernel
/// `name`: a file with `__global__` in which the name is followed by `(` (relative to the
/// current folder).
fn builder_file_defining(name: &str, manifest: Option<&Path>) -> Option<PathBuf> {
    let cwd = std::env::current_dir().ok()?;
    let groups = ptx_build::internals::project::builder_cuda_files(manifest);
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let names = |text: &str| {
        text.contains("__global__")
            && text
                .match_indices(name)
                .any(|(at, _)| !text[..at].ends_with(is_word) && text[at + name.len()..].trim_start().starts_with('('))
    };
    let file = groups.into_iter().flat_map(|g| g.files.files).find(|f| std::fs::read_to_string(f).is_ok_and(|t| names(&t)))?;
    Some(file.strip_prefix(&cwd).map(Path::to_path_buf).unwrap_or(file))
}

/// The name within a third of its length in edits (at least 1), or one that contains it.
fn closest<'a>(name: &str, names: &[&'a str]) -> Option<&'a str> {
    let best = names.iter().map(|n| (edit_distance(name, n), *n)).min()?;
    let limit = (name.chars().count() / 3).max(1);
    if best.0 <= limit {
        return Some(best.1);
    }
    names.iter().copied().find(|n| n.contains(name) || name.contains(n))
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for j in 0..b.len() {
            let cur = row[j + 1];
            row[j + 1] = (prev + (ca != b[j]) as usize).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions_are_close_names() {
        assert_eq!(closest("saxpi", &["saxpy", "exp_kernel", "empty"]), Some("saxpy"));
        assert_eq!(closest("exp", &["saxpy", "exp_kernel", "empty"]), Some("exp_kernel"));
        assert_eq!(closest("reduce", &["saxpy", "exp_kernel"]), None);
    }

    #[test]
    fn highest_arch_first() {
        let mut v: Vec<Arch> = ["sm_80", "compute_90", "sm_90", "sm_90a", "sm_89"].iter().map(|a| a.parse().unwrap()).collect();
        v.sort_by_key(|a| std::cmp::Reverse(arch_key(a)));
        assert_eq!(v.iter().map(Arch::to_string).collect::<Vec<_>>(), ["sm_90a", "sm_90", "compute_90", "sm_89", "sm_80"]);
    }
}
