//! What CUDA C++ needs beside nvcc, in `cargo ptx doctor`: the host C++ compiler nvcc runs
//! (`-ccbin`: every .cu file goes through it, PTX builds too, and a static library's host code
//! is compiled by it), and for a static library (`Builder::cuda_static_lib`) the CUDA runtime
//! (`libcudart_static.a`) and the archiver.
//!
//! Where a workspace member's build script calls `cuda_static_lib` (read from build.rs: doctor
//! runs where a build may not), each piece is a line of its own and a missing one fails the
//! report, as a missing nvcc does for a project with .cu files. Elsewhere the two pieces that
//! only static libraries need take one line while they are found (doctor also runs before any
//! project exists: after `cargo ptx setup`, in CI), and a missing one is a warning with its fix.

use std::path::{Path, PathBuf};

use ptx_build::internals::cuda::{archiver, host_compiler, runtime_dir, Nvcc};
use ptx_build::internals::tools::Tool;

use super::{Check, Status};

/// A workspace member whose build script builds a static library of CUDA C++, and where.
#[derive(Clone, Debug)]
pub struct User {
    pub name: String,
    /// `host/build.rs:5`.
    pub at: String,
}

/// The members of the workspace here that build-depend on ptx-build and whose build script
/// calls `cuda_static_lib` (none outside a workspace).
pub fn users() -> Vec<User> {
    let Ok(meta) = ptx_build::internals::project::cargo::metadata(None) else { return Vec::new() };
    let cwd = std::env::current_dir().unwrap_or_default();
    meta.packages
        .iter()
        .filter(|p| p.builds_kernels_in_build_rs())
        .filter_map(|p| {
            let script = p.targets.iter().find(|t| t.kind.iter().any(|k| k == "custom-build"))?;
            let at = call_in(&script.src_path, &cwd)?;
            Some(User { name: p.name.clone(), at })
        })
        .collect()
}

/// The line of `file` that first calls `cuda_static_lib` (as `cargo ptx check` reads a build
/// script's Builder calls), named from `cwd`.
fn call_in(file: &Path, cwd: &Path) -> Option<String> {
    let line = ptx_build::internals::project::builder_globs(&std::fs::read_to_string(file).ok()?).static_lib_line?;
    let shown = file.strip_prefix(cwd).unwrap_or(file);
    Some(format!("{}:{line}", shown.display()))
}

/// What the CUDA C++ and static-library part of the report found.
pub struct Found {
    pub checks: Vec<Check>,
    /// Why a CUDA C++ build cannot run (nvcc, the host compiler), one line each.
    pub cuda_missing: Vec<String>,
    /// Why a static library cannot be built and linked (the above, the runtime, the archiver).
    pub static_lib_missing: Vec<String>,
    /// Whether the project here cannot build: a piece its crates need is missing.
    pub blocks_project: bool,
}

/// The host compiler, the runtime and the archiver; `nvcc` as discovery found it, `cuda_users`
/// the project's crates that build .cu files (kernel crates and static-library hosts alike).
pub fn checks(nvcc: Option<&Tool>, cuda_users: &[String], users: &[User]) -> Found {
    let mut found = Found { checks: Vec::new(), cuda_missing: Vec::new(), static_lib_missing: Vec::new(), blocks_project: false };
    let check = Check::new;
    let needed = if cuda_users.is_empty() { Status::Warning } else { Status::Missing };
    let nvcc = nvcc.map(|t| Nvcc::new(t.clone()));
    match &nvcc {
        None => {
            found.cuda_missing.push("nvcc: not found".into());
            found.static_lib_missing.push("nvcc: not found".into());
        }
        Some(n) => match host_compiler(n) {
            Ok(h) => found.checks.push(check(
                "host C++ compiler",
                Status::Ok,
                h.version.as_deref().and_then(version_of),
                Some(h.path.clone()),
                format!("{}; nvcc {} accepts it (it runs it for every .cu file)", h.origin(), n.tool.version),
                None,
            )),
            Err(e) => {
                let (message, help) = split(&e.to_string());
                found.blocks_project |= !cuda_users.is_empty();
                found.cuda_missing.push(format!("host C++ compiler: {message}"));
                found.static_lib_missing.push(format!("host C++ compiler: {message}"));
                found.checks.push(check("host C++ compiler", needed, None, None, message, Some(help)));
            }
        },
    }

    // The pieces only a static library needs.
    let runtime = nvcc.as_ref().map(|n| runtime_dir(n).map(|d| d.join("libcudart_static.a")).map_err(|e| split(&e.to_string())));
    let ar = archiver("").map(|c| PathBuf::from(c.get_program())).map_err(|e| split(&e.to_string()));
    let for_whom = match users.iter().map(|u| format!("`{}` ({})", u.name, u.at)).collect::<Vec<_>>() {
        v if v.is_empty() => "`.cuda_static_lib(..)` builds".to_string(),
        v => format!("the static library of {}", v.join(", ")),
    };
    if let Some(Err((message, _))) = &runtime {
        found.static_lib_missing.push(format!("CUDA runtime: {message}"));
    }
    if let Err((message, _)) = &ar {
        found.static_lib_missing.push(format!("ar: {message}"));
    }
    if !users.is_empty() {
        found.blocks_project |= matches!(runtime, Some(Err(_))) || ar.is_err();
        match runtime {
            Some(Ok(lib)) => found.checks.push(check(
                "CUDA runtime",
                Status::Ok,
                None,
                Some(lib),
                format!("cudart_static: linked with {for_whom}"),
                None,
            )),
            Some(Err((message, help))) => found.checks.push(check("CUDA runtime", Status::Missing, None, None, message, Some(help))),
            None => {}
        }
        match ar {
            Ok(path) => found.checks.push(check("ar", Status::Ok, None, Some(path), format!("archives the objects of {for_whom}"), None)),
            Err((message, help)) => found.checks.push(check("ar", Status::Missing, None, None, message, Some(help))),
        }
        return found;
    }
    match (runtime, ar) {
        // Nothing to say of the pieces a build cannot reach without nvcc.
        (None, Ok(_)) => {}
        (Some(Ok(lib)), Ok(ar)) => found.checks.push(check(
            "static libraries",
            Status::Ok,
            None,
            None,
            format!("CUDA runtime ({}) and ar ({}) found for `.cuda_static_lib(..)`", lib.display(), ar.display()),
            None,
        )),
        (runtime, ar) => {
            // The runtime's message says what links it.
            if let Some(Err((message, help))) = runtime {
                found.checks.push(check("CUDA runtime", Status::Warning, None, None, message, Some(help)));
            }
            if let Err((message, help)) = ar {
                let only = " (needed by `.cuda_static_lib(..)` builds only: it archives their objects)";
                found.checks.push(check("ar", Status::Warning, None, None, format!("{message}{only}"), Some(help)));
            }
        }
    }
    found
}

/// An error's message and its `help:` line.
fn split(text: &str) -> (String, String) {
    let (message, help) = text.split_once("\n  help: ").unwrap_or((text, ""));
    (message.to_string(), help.to_string())
}

/// The version in a compiler's `--version` line: its last word of digits and dots
/// (`g++ (Debian 12.2.0-14+deb12u1) 12.2.0` -> `12.2.0`, `clang version 18.1.3 (1ubuntu1)` ->
/// `18.1.3`).
fn version_of(line: &str) -> Option<String> {
    line.split_whitespace().rfind(|w| w.contains('.') && w.chars().all(|c| c.is_ascii_digit() || c == '.')).map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_compilers_version() {
        assert_eq!(version_of("g++ (Debian 12.2.0-14+deb12u1) 12.2.0").as_deref(), Some("12.2.0"));
        assert_eq!(version_of("Ubuntu clang version 18.1.3 (1ubuntu1)").as_deref(), Some("18.1.3"));
        assert_eq!(version_of("c++ of no version"), None);
    }

    #[test]
    fn a_static_library_call_is_found_in_build_rs_and_comments_do_not_count() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("build.rs");
        std::fs::write(
            &file,
            "// .cuda_static_lib(\"x\", ..) later\nfn main() {\n    ptx_build::Builder::new().cuda(\"a.cu\").build().unwrap();\n}\n",
        )
        .unwrap();
        assert_eq!(call_in(&file, dir.path()), None);
        std::fs::write(&file, "fn main() {\n    ptx_build::Builder::new()\n        .cuda_static_lib(\"moe\", \"cuda/*.cu\")\n}\n").unwrap();
        assert_eq!(call_in(&file, dir.path()).as_deref(), Some("build.rs:3"));
    }
}
