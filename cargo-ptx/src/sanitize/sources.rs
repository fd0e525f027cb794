//! Where a finding is in the sources. compute-sanitizer names only a file (`lib.rs:11`); the line
//! tables of the PTX a program embeds name it as the build wrote it: relative to the kernel crate
//! (Rust: `src/lib.rs`), to the package nvcc ran in (CUDA: `cuda/bugs.cu`), or absolute (a path
//! dependency such as ptx-device). The folder the command runs in gives a relative path its
//! base, so a finding is named from there, as the build's own diagnostics are.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::Finding;

/// What the line tables of the PTX embedded in a program say: the source files, and which
/// lines of them each kernel or device function has code for.
#[derive(Debug, Default)]
pub struct LineTables {
    /// Every path of a `.file` directive, in order, without repeats.
    pub paths: Vec<String>,
    /// (function, path, line) of every `.loc` in a function's body.
    lines: HashSet<(String, String, u32)>,
}

/// One PTX module being read: its `.file` table comes after its code (LLVM) or before it (nvcc).
#[derive(Default)]
struct Module {
    files: Vec<(u32, String)>,
    locs: Vec<(String, u32, u32)>,
    function: Option<String>,
}

impl LineTables {
    /// The line tables of the PTX inside `program` (none when it cannot be read).
    pub fn of_program(program: &Path) -> LineTables {
        std::fs::read(program).map(|b| LineTables::from_bytes(&b)).unwrap_or_default()
    }

    /// Reads every PTX module in `bytes` (an executable holds them as text among its data).
    pub fn from_bytes(bytes: &[u8]) -> LineTables {
        let mut out = LineTables::default();
        let mut module = Module::default();
        for raw in bytes.split(|&b| b == b'\n') {
            let line = trim_start(raw);
            if line.first() != Some(&b'.') {
                continue;
            }
            let line = String::from_utf8_lossy(line);
            if line.starts_with(".version") {
                out.add(std::mem::take(&mut module));
            } else if let Some(rest) = line.strip_prefix(".file") {
                if let Some(f) = file_directive(rest) {
                    module.files.push(f);
                }
            } else if let Some(rest) = line.strip_prefix(".loc") {
                let mut n = rest.split(|c: char| c.is_whitespace() || c == ',').filter(|s| !s.is_empty()).map(str::parse::<u32>);
                if let (Some(f), Some(Ok(file)), Some(Ok(l))) = (module.function.clone(), n.next(), n.next()) {
                    module.locs.push((f, file, l));
                }
            } else if let Some(name) = function_name(&line) {
                module.function = Some(name);
            }
        }
        out.add(module);
        out
    }

    fn add(&mut self, m: Module) {
        for (_, path) in &m.files {
            if !self.paths.contains(path) {
                self.paths.push(path.clone());
            }
        }
        for (function, file, line) in m.locs {
            if let Some((_, path)) = m.files.iter().find(|(n, _)| *n == file) {
                self.lines.insert((function, path.clone(), line));
            }
        }
    }

    /// The paths of the file named `name` (`lib.rs`) that have code for `line` in `function`.
    fn with_code_at(&self, function: &str, name: &str, line: u32) -> Vec<&String> {
        let mut out: Vec<&String> = self
            .lines
            .iter()
            .filter(|(f, p, l)| *l == line && file_name(p) == name && same_function(f, function))
            .map(|(_, p, _)| p)
            .collect();
        out.sort();
        out.dedup();
        out
    }
}

fn trim_start(b: &[u8]) -> &[u8] {
    let n = b.iter().take_while(|c| **c == b' ' || **c == b'\t').count();
    &b[n..]
}

/// `\t1 "/abs/path"` (or `1 "dir" "name"`, the two-part form) after `.file`.
pub(crate) fn file_directive(rest: &str) -> Option<(u32, String)> {
    let rest = rest.strip_prefix(['\t', ' '])?.trim_start();
    let (n, quoted) = rest.split_once(char::is_whitespace)?;
    let n = n.parse().ok()?;
    let parts: Vec<&str> = quoted.trim().split('"').collect();
    // ["", dir, " ", name, ...] or ["", path, ...]
    let path = match parts.as_slice() {
        [_, dir, sep, name, ..] if sep.trim().is_empty() && !name.is_empty() => format!("{}/{}", dir.trim_end_matches('/'), name),
        [_, path, ..] => path.to_string(),
        _ => return None,
    };
    Some((n, crate::inspect::unescape(&path)))
}

/// The name a `.entry` or `.func` line declares: `.visible .entry saxpy(`,
/// `.func  (.param .b64 func_retval0) name(`.
pub(crate) fn function_name(line: &str) -> Option<String> {
    let at = line.find(".entry").map(|i| i + 6).or_else(|| line.find(".func").map(|i| i + 5))?;
    let mut rest = line[at..].trim_start();
    if rest.starts_with('(') {
        // The return value's parameter list.
        rest = rest[rest.find(')')? + 1..].trim_start();
    }
    let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '$' || *c == '.').collect();
    (!name.is_empty()).then_some(name)
}

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// A PTX name against compute-sanitizer's (demangled) one.
fn same_function(ptx: &str, reported: &str) -> bool {
    ptx == reported || crate::inspect::demangle_words(ptx) == reported
}

/// The identifier a source file defines for `function` (`void axpb<float>(float*)` -> `axpb`).
fn identifier(function: &str) -> &str {
    let head = function.split(['(', '<']).next().unwrap_or(function).trim();
    let head = head.rsplit(' ').next().unwrap_or(head);
    head.rsplit("::").next().unwrap_or(head)
}

/// Gives each finding's file its path, named from `cwd`:
/// 1. a bare name (`lib.rs`) becomes a line-table path: the only one of that name, or of several,
///    the one with code for the finding's line in its function;
/// 2. a relative path (`src/lib.rs`, `cuda/bugs.cu`) is looked for in `cwd` and the folders below
///    it (of several, the one that defines the function) and becomes absolute, which the report
///    shows from `cwd`; one not found stays as the line table wrote it.
pub fn resolve_paths(findings: &mut [Finding], tables: &LineTables, cwd: &Path) {
    for f in findings {
        let Some(file) = f.file.clone() else { continue };
        let function = f.function.as_deref().map(identifier).unwrap_or_default();
        let mut path = file.clone();
        if !file.contains('/') {
            let same: Vec<&String> = tables.paths.iter().filter(|p| file_name(p) == file).collect();
            let chosen = match same.as_slice() {
                [one] => Some((*one).clone()),
                [] => None,
                _ => {
                    let at = f.line.map(|l| tables.with_code_at(f.function.as_deref().unwrap_or_default(), &file, l)).unwrap_or_default();
                    match at.as_slice() {
                        [one] => Some((*one).clone()),
                        // Several with code there (or no line): the one whose text defines the function.
                        _ => same.iter().find(|p| defines(&base(p, cwd, function), function)).map(|p| (*p).clone()),
                    }
                }
            };
            match chosen {
                Some(p) => path = p,
                None => continue,
            }
        }
        if Path::new(&path).is_relative() {
            if let Some(found) = below(cwd, &path, function) {
                path = found.display().to_string();
            }
        }
        f.file = Some(path);
    }
}

/// Where `path` is for reading it: as it is when absolute, else as found below `cwd`.
fn base(path: &str, cwd: &Path, function: &str) -> PathBuf {
    if Path::new(path).is_absolute() {
        return PathBuf::from(path);
    }
    below(cwd, path, function).unwrap_or_else(|| cwd.join(path))
}

fn defines(path: &Path, function: &str) -> bool {
    !function.is_empty() && std::fs::read_to_string(path).is_ok_and(|t| t.contains(function))
}

/// `rel` in `cwd` or a folder below it (target dirs, hidden folders and deep trees left out); of
/// several, the one that defines `function`.
fn below(cwd: &Path, rel: &str, function: &str) -> Option<PathBuf> {
    const MAX_DEPTH: usize = 6;
    const MAX_FOLDERS: usize = 20_000;
    let mut found = Vec::new();
    let mut queue = vec![(cwd.to_path_buf(), 0)];
    let mut seen = 0;
    while let Some((dir, depth)) = queue.pop() {
        seen += 1;
        if seen > MAX_FOLDERS {
            break;
        }
        // `../../ptx-device/src/lib.rs`: a path dependency outside the kernel workspace, as the
        // PTX names it; found from several folders, it is one file.
        let candidate = crate::inspect::lexical(&dir.join(rel));
        if candidate.is_file() && !found.contains(&candidate) {
            found.push(candidate);
        }
        if depth == MAX_DEPTH || dir.join("CACHEDIR.TAG").exists() {
            continue;
        }
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for e in entries.flatten() {
            let name = e.file_name();
            let name = name.to_string_lossy();
            if name.starts_with('.') || name == "target" || name == "node_modules" {
                continue;
            }
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                queue.push((e.path(), depth + 1));
            }
        }
    }
    found.sort();
    match found.len() {
        0 => None,
        1 => found.pop(),
        _ => found.iter().find(|p| defines(p, function)).cloned().or_else(|| found.into_iter().next()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As LLVM writes a Rust kernel crate's PTX: the kernel's lines and ptx-device's inlined
    /// ones, the `.file` table at the end.
    const RUST_PTX: &str = "//\n// Generated by LLVM NVPTX Back-End\n//\n\n.version 7.8\n.target sm_90\n\n\t// .globl\trace_rs\n.visible .entry race_rs(\n\t.param .u64 race_rs_param_0\n)\n{\n\t.loc\t1 120 0\n\t.loc\t3 20 5\n\tst.shared.f32 [%rd1], %f1;\n\t.loc\t3 22 5\n}\n.func  (.param .b64 func_retval0) helper(\n)\n{\n\t.loc\t1 20 3, function_name $L__info_string0, inlined_at 3 9 3\n}\n\t.file\t1 \"/src/ptx-device/src/lib.rs\"\n\t.file\t2 \"/rust-sysroot/lib/rustlib/src/rust/library/core/src/ptr/mut_ptr.rs\"\n\t.file\t3 \"src/lib.rs\"\n";
    /// As nvcc writes a .cu file's PTX: the `.file` table first.
    const CUDA_PTX: &str = "//\n// Generated by NVIDIA NVVM Compiler\n.version 9.0\n.target sm_90\n.address_size 64\n\t.file\t1 \"cuda/bugs.cu\"\n.visible .entry race_cu(\n\t.param .u64 race_cu_param_0\n)\n{\n\t.loc\t1 13 5\n\t.loc\t1 14 5\n}\n";

    fn finding(file: &str, function: &str, line: u32) -> Finding {
        Finding {
            tool: super::super::Tool::Racecheck,
            level: "error".into(),
            message: "Race reported".into(),
            function: Some(function.into()),
            file: Some(file.into()),
            line: Some(line),
            details: Vec::new(),
            count: 1,
            program: PathBuf::from("p"),
            consequences: Vec::new(),
        }
    }

    #[test]
    fn line_tables_of_llvm_and_nvcc_ptx_in_one_program() {
        let program = format!("\x7fELF\0\x01binary\n{RUST_PTX}\0\0more binary\n\0{CUDA_PTX}\0");
        let t = LineTables::from_bytes(program.as_bytes());
        assert_eq!(
            t.paths,
            [
                "/src/ptx-device/src/lib.rs",
                "/rust-sysroot/lib/rustlib/src/rust/library/core/src/ptr/mut_ptr.rs",
                "src/lib.rs",
                "cuda/bugs.cu"
            ]
        );
        assert_eq!(t.with_code_at("race_rs", "lib.rs", 20), [&"src/lib.rs".to_string()]);
        assert_eq!(t.with_code_at("race_rs", "lib.rs", 120), [&"/src/ptx-device/src/lib.rs".to_string()]);
        assert_eq!(t.with_code_at("helper", "lib.rs", 20), [&"/src/ptx-device/src/lib.rs".to_string()]);
        assert_eq!(t.with_code_at("race_cu", "bugs.cu", 13), [&"cuda/bugs.cu".to_string()]);
        assert!(t.with_code_at("race_cu", "lib.rs", 20).is_empty());
        assert_eq!(file_directive("\t1 \"/dir\" \"name.cu\""), Some((1, "/dir/name.cu".into())));
        assert_eq!(function_name(".visible .entry _Z4axpbIfEvPT_i("), Some("_Z4axpbIfEvPT_i".into()));
        assert_eq!(identifier("void axpb<float>(float*, int)"), "axpb");
        assert_eq!(identifier("ns::scale"), "scale");
    }

    /// The sanitize-demo layout: the host package with cuda/, the kernel crate in kernels/.
    #[test]
    fn files_are_named_from_the_folder_the_command_runs_in() {
        let dir = tempfile::tempdir().unwrap();
        let demo = dir.path().join("demo ñ");
        for (p, text) in [
            ("kernels/src/lib.rs", "pub unsafe fn race_rs() {}\n"),
            ("shared/src/lib.rs", "pub struct Affine;\n"),
            ("src/main.rs", "fn main() {}\n"),
            ("cuda/bugs.cu", "extern \"C\" __global__ void race_cu() {}\n"),
            ("target/package/copy/kernels/src/lib.rs", "pub unsafe fn race_rs() {}\n"),
        ] {
            std::fs::create_dir_all(demo.join(p).parent().unwrap()).unwrap();
            std::fs::write(demo.join(p), text).unwrap();
        }
        let t = LineTables::from_bytes(format!("{RUST_PTX}\n{CUDA_PTX}").as_bytes());
        let mut f = vec![finding("lib.rs", "race_rs", 20), finding("bugs.cu", "race_cu", 13)];
        resolve_paths(&mut f, &t, &demo);
        assert_eq!(f[0].file.as_deref(), Some(demo.join("kernels/src/lib.rs").to_str().unwrap()), "{f:#?}");
        assert_eq!(f[1].file.as_deref(), Some(demo.join("cuda/bugs.cu").to_str().unwrap()));

        // Run from above the project: the same files.
        let mut f = vec![finding("lib.rs", "race_rs", 20)];
        resolve_paths(&mut f, &t, dir.path());
        assert_eq!(f[0].file.as_deref(), Some(demo.join("kernels/src/lib.rs").to_str().unwrap()));

        // Where the sources are not (binaries carried to a GPU machine): the line table's path,
        // the kernel crate's lib.rs rather than ptx-device's.
        let elsewhere = tempfile::tempdir().unwrap();
        let mut f = vec![finding("lib.rs", "race_rs", 20), finding("bugs.cu", "race_cu", 13), finding("lib.rs", "race_rs", 120)];
        resolve_paths(&mut f, &t, elsewhere.path());
        let files: Vec<_> = f.iter().map(|f| f.file.as_deref().unwrap()).collect();
        assert_eq!(files, ["src/lib.rs", "cuda/bugs.cu", "/src/ptx-device/src/lib.rs"]);

        // A name no line table has stays as compute-sanitizer printed it.
        let mut f = vec![finding("other.rs", "race_rs", 20)];
        resolve_paths(&mut f, &t, &demo);
        assert_eq!(f[0].file.as_deref(), Some("other.rs"));
    }

    /// A path dependency outside the kernel workspace, as the PTX names it since issue 25
    /// (`../ptx-device/src/lib.rs`): found from the project's folder, named as the real file.
    #[test]
    fn a_path_dependency_outside_the_workspace_is_found_as_one_file() {
        let dir = tempfile::tempdir().unwrap();
        let demo = dir.path().join("demo ñ");
        for p in ["kernels/src/lib.rs", "ptx-device/src/lib.rs", "host/src/main.rs"] {
            std::fs::create_dir_all(demo.join(p).parent().unwrap()).unwrap();
            std::fs::write(demo.join(p), "pub fn thread_id() {}\n").unwrap();
        }
        let ptx = ".visible .entry k()\n{\n\t.loc\t1 1 3\n}\n\t.file\t1 \"../ptx-device/src/lib.rs\"\n";
        let t = LineTables::from_bytes(ptx.as_bytes());
        let mut f = vec![finding("../ptx-device/src/lib.rs", "thread_id", 1)];
        resolve_paths(&mut f, &t, &demo);
        assert_eq!(f[0].file.as_deref(), Some(demo.join("ptx-device/src/lib.rs").to_str().unwrap()), "{f:#?}");
    }
}
