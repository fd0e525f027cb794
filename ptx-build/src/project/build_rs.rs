//! The CUDA C++ globs a build script gives its `Builder`, read from build.rs as Rust tokens:
//! what `cargo ptx check` checks in a host crate without building it, and where `cargo ptx
//! doctor` says a static library is built. A build script is code,
//! so this reads the common form only: string literals passed to `.cuda(..)`,
//! `.cuda_static_lib(name, ..)`, `.cuda_exclude(..)` and `.cuda_include(..)`; a glob built at
//! run time is not seen.

use std::path::{Path, PathBuf};

use proc_macro2::{Delimiter, TokenStream, TokenTree};

use super::{glob_files, matches_in, metadata, CudaFiles};
use crate::options::Options;

/// The .cu files of one build script's Builders, with the options its build.rs gives them.
#[derive(Debug)]
pub struct BuilderGroup {
    /// The files, as the globs find them.
    pub files: CudaFiles,
    /// `.cuda_include(..)`'s folders (relative to the package, as the Builder takes them).
    pub options: Options,
}

/// The .cu files that build scripts of the workspace around `manifest_path` (or the current
/// folder) give a Builder, one group a member that build-depends on ptx-build: the globs its
/// build.rs passes to `.cuda(..)` and `.cuda_static_lib(..)` less its `.cuda_exclude(..)` (read
/// as tokens, see [`builder_globs`]), else `cuda/**/*.cu`, where `cargo ptx new` puts them, and
/// its `.cuda_include(..)` folders, which find the headers to check. What `cargo ptx check`
/// checks beside the kernel crates.
pub fn builder_cuda_files(manifest_path: Option<&Path>) -> Vec<BuilderGroup> {
    let Ok(meta) = metadata(manifest_path) else { return Vec::new() };
    let hosts = meta.packages.iter().filter(|p| p.builds_kernels_in_build_rs());
    hosts
        .filter_map(|p| {
            let dir = p.manifest_path.parent()?.to_path_buf();
            let script = p.targets.iter().find(|t| t.kind.iter().any(|k| k == "custom-build")).map(|t| t.src_path.clone());
            let globs = script.and_then(|s| std::fs::read_to_string(s).ok()).map(|t| builder_globs(&t)).unwrap_or_default();
            let sources = if globs.sources.is_empty() { vec!["cuda/**/*.cu".to_string()] } else { globs.sources };
            let files: std::collections::BTreeSet<PathBuf> = sources.iter().filter_map(|g| glob_files(&dir, g).ok()).flatten().collect();
            let files: Vec<PathBuf> = files.into_iter().filter(|f| !globs.excludes.iter().any(|g| matches_in(&dir, g, f))).collect();
            let files = Some(files).filter(|f| !f.is_empty())?;
            let cuda_include = (!globs.includes.is_empty()).then(|| globs.includes.iter().map(PathBuf::from).collect());
            Some(BuilderGroup {
                files: CudaFiles { name: p.name.clone(), dir, files, target_dir: None, static_lib: None, siblings: Vec::new() },
                options: Options { cuda_include, ..Options::default() },
            })
        })
        .collect()
}

/// The globs of a build script's Builder calls, as written.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct BuilderGlobs {
    /// `.cuda("kernels/*.cu")` and the file globs of `.cuda_static_lib("moe", "cuda/moe/*.cu")`.
    pub sources: Vec<String>,
    /// `.cuda_exclude("*_dummy.cu")`.
    pub excludes: Vec<String>,
    /// `.cuda_include("csrc/include")`.
    pub includes: Vec<String>,
    /// The line of the first `.cuda_static_lib(..)` call, whatever its arguments.
    pub static_lib_line: Option<usize>,
}

/// The Builder globs of build script `text`; empty where it does not parse as Rust tokens or
/// names none.
pub fn builder_globs(text: &str) -> BuilderGlobs {
    let mut out = BuilderGlobs::default();
    if let Ok(tokens) = text.parse::<TokenStream>() {
        walk(tokens, &mut out);
    }
    out
}

fn walk(tokens: TokenStream, out: &mut BuilderGlobs) {
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    for (i, tree) in trees.iter().enumerate() {
        match tree {
            TokenTree::Group(g) => walk(g.stream(), out),
            // `.NAME(args)`: a method call of one of the Builder's file setters.
            TokenTree::Ident(name) if i > 0 && matches!(&trees[i - 1], TokenTree::Punct(p) if p.as_char() == '.') => {
                let Some(TokenTree::Group(args)) = trees.get(i + 1) else { continue };
                if args.delimiter() != Delimiter::Parenthesis {
                    continue;
                }
                let args = string_arguments(args.stream());
                let arg = |n: usize| args.get(n).cloned().flatten();
                match name.to_string().as_str() {
                    "cuda" => out.sources.extend(arg(0)),
                    // The library's name first (a literal or a constant), then the files.
                    "cuda_static_lib" => {
                        out.sources.extend(arg(1));
                        out.static_lib_line = out.static_lib_line.or(Some(name.span().start().line));
                    }
                    "cuda_exclude" => out.excludes.extend(arg(0)),
                    "cuda_include" => out.includes.extend(arg(0)),
                    _ => {}
                }
            }
            _ => {}
        }
    }
}

/// A call's arguments, split at its commas: each one that is a lone string literal (`"a/*.cu"`,
/// `r"a\b.cu"`) unquoted, any other (a constant, `&glob`) none.
fn string_arguments(tokens: TokenStream) -> Vec<Option<String>> {
    let mut args: Vec<Vec<TokenTree>> = vec![Vec::new()];
    for t in tokens {
        match t {
            TokenTree::Punct(p) if p.as_char() == ',' => args.push(Vec::new()),
            t => args.last_mut().into_iter().for_each(|a| a.push(t.clone())),
        }
    }
    args.into_iter()
        .map(|a| match a.as_slice() {
            [TokenTree::Literal(l)] => syn::parse_str::<syn::LitStr>(&l.to_string()).ok().map(|s| s.value()),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_globs_of_builder_calls_are_read_from_the_build_script() {
        let text = r#"
fn main() -> Result<(), ptx_build::Error> {
    // .cuda("commented/*.cu") is not a call
    ptx_build::Builder::new()
        .cuda("csrc/src/ggml-cuda/*.cu")
        .cuda_exclude("fattn*.cu")
        .cuda_static_lib("moe", r"csrc/moe/*.cu")
        .cuda_static_lib(GGML, "csrc/ggml/*.cu")
        .cuda_static_lib("x", GLOB)
        .cuda_include("csrc/include")
        .arch("sm_80")
        .build()?;
    let glob = format!("{}/*.cu", "x");
    ptx_build::Builder::new().cuda(&glob).build()?;
    Ok(())
}
"#;
        assert_eq!(
            builder_globs(text),
            BuilderGlobs {
                sources: vec!["csrc/src/ggml-cuda/*.cu".into(), "csrc/moe/*.cu".into(), "csrc/ggml/*.cu".into()],
                excludes: vec!["fattn*.cu".into()],
                includes: vec!["csrc/include".into()],
                static_lib_line: Some(7),
            }
        );
        assert_eq!(builder_globs("fn main() { let x = \"unterminated; }"), BuilderGlobs::default());
        assert_eq!(builder_globs("fn main() {}"), BuilderGlobs::default());
    }
}
