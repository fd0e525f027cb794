//! A Rust crate's source files as rustc finds them: `mod x;` followed into `x.rs` / `x/mod.rs`
//! (or its `#[path]`), inline modules searched too. The signature reader, the inline-PTX
//! checker and the host-type resolver all walk a kernel crate this way.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Where `mod child;` of the module in `file` looks: beside `lib.rs`/`mod.rs`, else in a folder
/// named after the file.
fn module_dir(file: &Path, is_root: bool) -> PathBuf {
    let parent = file.parent().unwrap_or(Path::new(".")).to_path_buf();
    let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
    if is_root || stem == "mod" || stem == "lib" || stem == "main" {
        parent
    } else {
        parent.join(stem)
    }
}

/// Every file of the crate rooted at `lib_rs`, parsed: `mod x;` followed into `x.rs` /
/// `x/mod.rs` (or its `#[path]`), in source order.
pub fn module_files(lib_rs: &Path) -> Result<Vec<(PathBuf, syn::File)>> {
    let mut out = Vec::new();
    walk_file(lib_rs, &module_dir(lib_rs, true), &mut out)?;
    Ok(out)
}

fn walk_file(file: &Path, dir: &Path, out: &mut Vec<(PathBuf, syn::File)>) -> Result<()> {
    let text = std::fs::read_to_string(file).map_err(|e| Error::io("read", file, e))?;
    let parsed = syn::parse_file(&text).map_err(|e| {
        let line = Some(e.span().start().line as u32).filter(|l| *l > 0);
        // proc-macro2's one lexer error, whose text says nothing of the cause.
        let message = match e.to_string().as_str() {
            "cannot parse string into token stream" => {
                "its delimiters do not pair (a `{`, `(` or `[` without its closing one, or one closed too often), or a literal is not closed".to_string()
            }
            other => other.to_string(),
        };
        Error::RustSyntax { file: file.to_path_buf(), line, message }
    })?;
    let children = child_files(&parsed.items, file, dir);
    out.push((file.to_path_buf(), parsed));
    for (child, child_dir) in children {
        walk_file(&child, &child_dir, out)?;
    }
    Ok(())
}

/// The files of the out-of-line modules declared in `items` (inline modules searched too).
fn child_files(items: &[syn::Item], file: &Path, dir: &Path) -> Vec<(PathBuf, PathBuf)> {
    let mut out = Vec::new();
    for item in items {
        let syn::Item::Mod(m) = item else { continue };
        let name = m.ident.to_string();
        let path_attr = m.attrs.iter().find(|a| a.path().is_ident("path")).and_then(|a| match &a.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        });
        match &m.content {
            Some((_, inner)) => out.extend(child_files(inner, file, &dir.join(&name))),
            None => {
                let candidates = match &path_attr {
                    Some(p) => vec![file.parent().unwrap_or(Path::new(".")).join(p)],
                    None => vec![dir.join(format!("{name}.rs")), dir.join(&name).join("mod.rs")],
                };
                if let Some(child) = candidates.into_iter().find(|c| c.is_file()) {
                    let child_dir = module_dir(&child, false);
                    out.push((child, child_dir));
                }
            }
        }
    }
    out
}

/// `extern "ptx-kernel"`, or `extern "gpu-kernel"` (feature `abi_gpu_kernel`, the ABI rustc's
/// std::offload uses; on nvptx64 it emits the same `.visible .entry`).
pub fn is_kernel_abi(abi: &str) -> bool {
    abi == "ptx-kernel" || abi == "gpu-kernel"
}
