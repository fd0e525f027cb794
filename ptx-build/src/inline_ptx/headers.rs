//! The user's headers of .cu files: where their asm is checked. Real projects keep their inline
//! PTX in headers (DeepSpeed's `includes/memory_access_utils.h`, ggml-cuda's `mma.cuh` and
//! `cp-async.cuh`), so checking the .cu files alone misses most of it.
//!
//! Two ways to find them: a build knows the files nvcc read ([`user_headers`] picks the user's
//! out of them: below the package or an include folder, not the CUDA install's or the
//! system's); `cargo ptx check` runs no compiler and follows the `#include` lines instead
//! ([`included_headers`]). Either way each header is checked once, however many files include
//! it, and its diagnostics name it at its own line.
//!
//! A header of another repository ([`own_headers`]) is a library's: CUTLASS's `cute/arch/`
//! behind `-I`, a vendored submodule. Its asm is not the user's to fix, so it is not checked,
//! as cargo caps the lints of a dependency it did not take from the workspace.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use super::cuda::check_cuda_with;
use super::qualifiers::Qualifiers;
use crate::diag::{joined, relative, Diagnostic};
use crate::text::c_lex::{self, Kind};

/// How deep a folder walk for [`HeaderIndex`] goes.
const INDEX_DEPTH: usize = 8;

/// One `#include` line: the name as written, and whether it was quoted (`"x.h"`, searched
/// from the including file's folder first) or bracketed (`<x.h>`, the include folders only).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Include {
    pub name: String,
    pub quoted: bool,
}

/// The `#include` lines of a C/C++ source, in order. Comments are no includes; an include
/// inside `#if` counts (which branch the compiler takes is its business: a name that
/// resolves to no file is skipped by the caller), but not one in a branch no CUDA device pass
/// takes (`#if defined(USE_ROCM)`, `#ifndef __CUDA_ARCH__`), whose asm the build never reads.
pub(crate) fn includes(src: &str) -> Vec<Include> {
    let toks = c_lex::tokens(src);
    let never = super::preproc::never_taken(&toks);
    let mut out = Vec::new();
    for (i, t) in toks.iter().enumerate() {
        // `#` first on its line, then `include`.
        let starts_line = i == 0 || toks[i - 1].line != t.line || !toks[i - 1].directive;
        if !(t.directive && t.is_punct(b'#') && starts_line) || never.contains(t.line) {
            continue;
        }
        let Some(word) = toks.get(i + 1).filter(|w| w.line == t.line && w.kind == Kind::Ident && w.text == "include") else {
            continue;
        };
        let mut rest = toks[i + 2..].iter().take_while(|r| r.line == word.line && r.directive);
        match rest.next() {
            Some(s) if s.kind == Kind::Str => out.push(Include { name: s.literal_body().to_string(), quoted: true }),
            Some(lt) if lt.is_punct(b'<') => {
                let name: String = rest.take_while(|r| !r.is_punct(b'>')).map(|r| r.text).collect();
                if !name.is_empty() {
                    out.push(Include { name, quoted: false });
                }
            }
            _ => {}
        }
    }
    out
}

/// The headers under a folder that a `cargo ptx check` of it was given, for includes that
/// name a header by a path the folder's own include flags would resolve (DeepSpeed's .cu files
/// in `csrc/transformer/` include `"custom_cuda_layers.h"` from `csrc/includes/`, given with
/// `-I` in its setup.py, which the check cannot read).
#[derive(Debug, Default)]
pub(crate) struct HeaderIndex {
    files: Vec<PathBuf>,
}

impl HeaderIndex {
    /// The C/C++ headers at or below `dir` (hidden folders and `target` left out).
    pub fn of(dir: &Path) -> HeaderIndex {
        fn walk(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
            let mut entries: Vec<PathBuf> = std::fs::read_dir(dir).into_iter().flatten().flatten().map(|e| e.path()).collect();
            entries.sort();
            for p in entries {
                let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                if p.is_dir() {
                    if depth > 0 && !name.starts_with('.') && name != "target" {
                        walk(&p, depth - 1, out);
                    }
                } else if is_header(&p) {
                    out.push(p);
                }
            }
        }
        let mut files = Vec::new();
        walk(dir, INDEX_DEPTH, &mut files);
        HeaderIndex { files }
    }

    /// The one header whose path ends with `name` (as whole components); none where several do.
    fn find(&self, name: &str) -> Option<&Path> {
        let name = Path::new(name);
        let mut found = self.files.iter().filter(|f| f.ends_with(name));
        match (found.next(), found.next()) {
            (Some(one), None) => Some(one),
            _ => None,
        }
    }
}

fn is_header(p: &Path) -> bool {
    p.extension().is_some_and(|e| matches!(e.to_str(), Some("h" | "hh" | "hpp" | "hxx" | "cuh" | "inl" | "inc")))
}

/// The files that `sources` include, transitively, each once, in the order they are reached:
/// a quoted name from the including file's folder, then from `include_dirs`, then (where given)
/// the one header of `index` with that path; a bracketed name from `include_dirs` only (the
/// system's and the CUDA install's headers are nobody's to check here). Names that resolve to
/// no file are skipped; so are `sources` themselves.
pub(crate) fn included_headers(sources: &[PathBuf], include_dirs: &[PathBuf], index: Option<&HeaderIndex>) -> Vec<PathBuf> {
    let mut seen: BTreeSet<PathBuf> = sources.iter().map(|s| identity(s)).collect();
    let mut out = Vec::new();
    let mut queue: Vec<PathBuf> = sources.to_vec();
    let mut next = 0;
    while let Some(file) = queue.get(next).cloned() {
        next += 1;
        let Ok(bytes) = std::fs::read(&file) else { continue };
        let dir = file.parent().unwrap_or(Path::new(""));
        for inc in includes(&String::from_utf8_lossy(&bytes)) {
            let local = inc.quoted.then(|| dir.join(&inc.name));
            let from_dirs = include_dirs.iter().map(|d| d.join(&inc.name));
            let found = local.into_iter().chain(from_dirs).find(|p| p.is_file()).map(|p| joined(&p, Path::new("")));
            let found = found.or_else(|| inc.quoted.then(|| index?.find(&inc.name).map(Path::to_path_buf)).flatten());
            let Some(header) = found else { continue };
            if seen.insert(identity(&header)) {
                out.push(header.clone());
                queue.push(header);
            }
        }
    }
    out
}

/// Of the files an nvcc run read (`read`, absolute), the user's headers: below `package_dir`
/// or one of `include_dirs`, not below `skip_roots` (the CUDA install, the system's headers)
/// and not one of `sources` (checked as .cu files). Each once, in the order given.
pub(crate) fn user_headers<'a>(
    read: impl IntoIterator<Item = &'a PathBuf>,
    package_dir: &Path,
    include_dirs: &[PathBuf],
    skip_roots: &[&Path],
    sources: &[PathBuf],
) -> Vec<PathBuf> {
    let mut seen: BTreeSet<PathBuf> = sources.iter().map(|s| identity(s)).collect();
    let mut out = Vec::new();
    for p in read {
        let p = joined(p, Path::new(""));
        let user = p.starts_with(package_dir) || include_dirs.iter().any(|d| p.starts_with(d));
        // An include folder inside the CUDA install (`-I$CUDA/include/cccl`) is still NVIDIA's.
        if !user || (!p.starts_with(package_dir) && skip_roots.iter().any(|r| p.starts_with(r))) || !p.is_file() {
            continue;
        }
        if seen.insert(identity(&p)) {
            out.push(p);
        }
    }
    out
}

/// Of `headers`, those of the package's own project: headers in the repository the package
/// lies in, or (the package in none) in no repository either. A header in another one (the
/// nearest folder above it with `.git`, a folder or a submodule's file, or `.hg` is another
/// than the package's) is a library's. Measured from outside: CUTLASS 4.2's headers behind
/// `-I` gave 16 warnings of 40 stores of its own design (`cp.async`, `stmatrix` with no
/// `"memory"`), on every build of a crate that includes `cute/tensor.hpp`.
pub(crate) fn own_headers(headers: Vec<PathBuf>, package_dir: &Path) -> Vec<PathBuf> {
    let mut roots = RepositoryRoots::default();
    // `cargo ptx check k.cu` names its files relative to the current folder.
    let absolute = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let own = roots.of(&absolute(package_dir));
    headers.into_iter().filter(|h| absolute(h).parent().is_some_and(|d| roots.of(d) == own)).collect()
}

/// The repository each folder lies in, each folder looked up once.
#[derive(Default)]
struct RepositoryRoots {
    known: HashMap<PathBuf, Option<PathBuf>>,
}

impl RepositoryRoots {
    fn of(&mut self, dir: &Path) -> Option<PathBuf> {
        if let Some(root) = self.known.get(dir) {
            return root.clone();
        }
        let root = if [".git", ".hg"].iter().any(|m| dir.join(m).exists()) {
            Some(dir.to_path_buf())
        } else {
            dir.parent().and_then(|up| self.of(up))
        };
        self.known.insert(dir.to_path_buf(), root.clone());
        root
    }
}

/// What makes two paths one file: the real path where it resolves (`a/../b.h` and a link to it
/// are one header).
fn identity(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| joined(p, Path::new("")))
}

/// Checks the asm of each header, named relative to `root` where it lies below it (else by its
/// absolute path), with the qualifier macros of the files read with them (`quals`). A header
/// that cannot be read is skipped: it was there when found, and the compiler says more about
/// one that vanished.
pub(super) fn check_headers(headers: &[PathBuf], root: &Path, quals: &Qualifiers) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for h in headers {
        let Ok(bytes) = std::fs::read(h) else { continue };
        out.extend(check_cuda_with(&relative(h, root), &String::from_utf8_lossy(&bytes), quals));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inc(name: &str, quoted: bool) -> Include {
        Include { name: name.into(), quoted }
    }

    #[test]
    fn include_lines_are_read_and_comments_and_strings_are_not() {
        let src = "#include \"a.h\"\n  #  include <cute/tensor.hpp>\n// #include \"commented.h\"\n/* #include \"block.h\" */\n\
                   const char *s = \"#include \\\"in_string.h\\\"\";\n#if defined(X)\n#include \"../common/b.cuh\" // why\n#endif\n\
                   #define INC \"c.h\"\n#pragma once\n#includex \"no.h\"\n";
        assert_eq!(includes(src), [inc("a.h", true), inc("cute/tensor.hpp", false), inc("../common/b.cuh", true)]);
    }

    /// A header included by two files, one of which reaches it through `..` and the other
    /// through another header, is one header; its asm is checked once at its own line, and
    /// the rules that skip `#if` inside an asm and host functions' asm hold there too.
    /// An include only a HIP build or the host pass reaches is not followed: its asm is not PTX.
    #[test]
    fn includes_in_branches_no_device_pass_takes_are_not_followed() {
        let src = "#if defined(USE_ROCM)\n#include \"amd.h\"\n#else\n#include \"nv.h\"\n#endif\n#ifndef __CUDA_ARCH__\n#include \"x86.h\"\n#endif\n";
        let names: Vec<String> = includes(src).into_iter().map(|i| i.name).collect();
        assert_eq!(names, ["nv.h"]);
    }

    #[test]
    fn headers_are_followed_transitively_once_each_and_checked_at_their_lines() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let w = |p: &str, text: &str| {
            let p = root.join(p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, text).unwrap();
            p
        };
        let store = "#pragma once\n__device__ __forceinline__ void st(float *p, float v) {\n  asm volatile(\"st.global.f32 [%0], %1;\" :: \"l\"(p), \"f\"(v));\n}\n\
                     __device__ void cp(void *s, const void *g) {\n  asm volatile(\n#if defined(NEW)\n    \"cp.async.cg.shared.global [%0], [%1], 16;\\n\" :: \"r\"(s), \"l\"(g));\n#else\n    \"x;\" :: \"r\"(s));\n#endif\n}\n\
                     inline unsigned long long ticks() { unsigned lo, hi; asm volatile(\"rdtsc\" : \"=a\"(lo), \"=d\"(hi)); return lo; }\n";
        let a = w("csrc/a.cu", "#include \"include/store.h\"\n#include \"util.cuh\"\n#include <cuda_fp16.h>\n#include \"missing.h\"\n");
        let b = w("csrc/sub/b.cu", "#include \"../include/store.h\"\n#include <inc2.h>\n");
        w("csrc/include/store.h", store);
        w("csrc/util.cuh", "#include \"include/store.h\"\n#include \"a.cu\"\n");
        w("extra/inc2.h", "// nothing here\n");
        let sources = [a.clone(), b.clone()];
        let found = included_headers(&sources, &[root.join("extra")], None);
        let names: Vec<PathBuf> = found.iter().map(|p| relative(p, &root)).collect();
        assert_eq!(names, [Path::new("csrc/include/store.h"), Path::new("csrc/util.cuh"), Path::new("extra/inc2.h")]);
        let d = check_headers(&found, &root, &Qualifiers::default());
        assert_eq!(super::super::one(&d, "without a \"memory\" clobber"), "csrc/include/store.h:3:17");

        // nvcc's list of what it read: the same header by two spellings, the CUDA install's
        // and the system's headers, the sources themselves.
        let read = [
            a.clone(),
            root.join("csrc/sub/../include/store.h"),
            root.join("csrc/include/store.h"),
            root.join("cuda/include/cuda_fp16.h"),
            PathBuf::from("/usr/include/stdio.h"),
            root.join("extra/inc2.h"),
        ];
        w("cuda/include/cuda_fp16.h", "");
        let cuda = root.join("cuda");
        let picked = user_headers(&read, &root.join("csrc"), &[root.join("extra")], &[&cuda, Path::new("/usr")], &sources);
        assert_eq!(picked, [root.join("csrc/include/store.h"), root.join("extra/inc2.h")]);
    }

    /// A package in a git repository: its headers and a monorepo neighbour's are its own; a
    /// submodule's (a `.git` file) below the package, a clone's and an unversioned install's
    /// outside it are a library's. A package in no repository owns what is in none either.
    #[test]
    fn headers_of_another_repository_are_a_librarys() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let w = |p: &str| {
            let p = root.join(p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, "").unwrap();
            p
        };
        std::fs::create_dir_all(root.join("repo/.git")).unwrap();
        w("repo/crates/k/third_party/cutlass/.git");
        w("clone/.hg/store");
        let own = [w("repo/crates/k/cuda/a.cuh"), w("repo/common/b.cuh")];
        let library = [w("repo/crates/k/third_party/cutlass/include/cute/x.hpp"), w("clone/include/y.h"), w("site-packages/z.h")];
        let all: Vec<PathBuf> = own.iter().chain(&library).cloned().collect();
        assert_eq!(own_headers(all.clone(), &root.join("repo/crates/k")), own);
        // No repository: only what lies in none.
        let lone = w("lone/k.cu");
        assert_eq!(own_headers(all, lone.parent().unwrap()), [root.join("site-packages/z.h")]);
    }

    #[test]
    fn a_loose_folder_finds_a_header_its_include_flags_would() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for (p, text) in [
            ("csrc/transformer/k.cu", "#include \"custom.h\"\n#include \"dup.h\"\n"),
            ("csrc/includes/custom.h", ""),
            ("csrc/x/dup.h", ""),
            ("csrc/y/dup.h", ""),
        ] {
            std::fs::create_dir_all(root.join(p).parent().unwrap()).unwrap();
            std::fs::write(root.join(p), text).unwrap();
        }
        let index = HeaderIndex::of(&root.join("csrc"));
        let found = included_headers(&[root.join("csrc/transformer/k.cu")], &[], Some(&index));
        assert_eq!(found, [root.join("csrc/includes/custom.h")], "an ambiguous name is left alone");
        assert!(included_headers(&[root.join("csrc/transformer/k.cu")], &[], None).is_empty());
    }
}
