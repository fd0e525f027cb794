//! The host's name for a kernel's by-value struct parameter.
//!
//! The signature reader keeps a type as the kernel wrote it (`Affine`); the generated module
//! lives in the host crate, where that name means nothing unless the host happens to define a
//! twin. A type the kernel imports from another crate (`use shared::Affine;`) is named through
//! that crate (`::shared::Affine`), which the host depends on too; a type the kernel crate
//! defines itself is kept as written and reported, since no host can depend on a kernel crate
//! (it is built for nvptx64 only).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::diag::Diagnostic;
use crate::embed::signature::{KernelSig, ParamType};
use crate::error::Result;

/// Crates whose types the host cannot take from a path as the kernel names them: the
/// standard library's own and the device crate (nvptx64 only).
const NOT_SHARED: &[&str] = &["core", "std", "alloc", "ptx_device"];

/// Rewrites the struct types of `sigs` (by value or behind a pointer) (the Rust kernels of the crate rooted at `lib_rs`) to
/// paths the host can use, and returns a warning for each type the kernel crate defines itself
/// (once per type), at its definition, with the fix.
pub fn resolve(lib_rs: &Path, sigs: &mut [KernelSig]) -> Result<Vec<Diagnostic>> {
    let files = crate::rust::modules::module_files(lib_rs)?;
    let mut local_types: BTreeMap<String, (PathBuf, u32, u32)> = BTreeMap::new();
    let mut local_mods: Vec<String> = Vec::new();
    let mut uses: BTreeMap<PathBuf, Uses> = BTreeMap::new();
    for (file, parsed) in &files {
        collect_local(&parsed.items, file, &mut local_types, &mut local_mods);
        let u = uses.entry(file.clone()).or_default();
        collect_uses(&parsed.items, u);
    }
    let mut warnings: Vec<Diagnostic> = Vec::new();
    let mut warned: Vec<String> = Vec::new();
    for sig in sigs.iter_mut() {
        let empty = Uses::default();
        let file_uses = uses.get(&sig.file).unwrap_or(&empty);
        for p in &mut sig.params {
            // By value or behind a pointer: the generated module names the type either way.
            let (ParamType::ByValue { ty } | ParamType::Pointer { elem: ty, .. }) = &mut p.ty else { continue };
            match host_path(ty, file_uses, &local_types, &local_mods) {
                Resolved::Shared(path) => *ty = path,
                Resolved::AsWritten => {}
                Resolved::Local(name) => {
                    if warned.contains(&name) {
                        continue;
                    }
                    warned.push(name.clone());
                    let (file, line, column) = local_types.get(&name).cloned().unwrap_or_else(|| (sig.file.clone(), sig.line, 0));
                    warnings.push(
                        Diagnostic::warning(format!(
                            "`{name}` (parameter `{}` of kernel `{}`) is defined in the kernel crate, which the host cannot depend on: the generated `kernels.rs` names it `{ty}`, so `{}` gets a typed launch method only where the host has a type of that name in scope (without one it is launched by name)",
                            p.name, sig.name, sig.name
                        ))
                        .at(file, Some(line), Some(column).filter(|c| *c > 0))
                        .note(format!(
                            "fix: move `{name}` into a small `no_std` crate that both the kernel crate and the host depend on, with `#[derive(Clone, Copy, ptx_device_macros::DeviceRepr)]` and `#[repr(C)]`, and `use` it in the kernels (README: \"Struct parameters\"; examples/affine)"
                        )),
                    );
                }
            }
        }
    }
    Ok(warnings)
}

/// The names a file's `use` items bring in: `alias -> full path`, and the paths of glob imports.
#[derive(Default)]
struct Uses {
    names: BTreeMap<String, Vec<String>>,
    globs: Vec<Vec<String>>,
}

fn collect_uses(items: &[syn::Item], out: &mut Uses) {
    for item in items {
        match item {
            syn::Item::Use(u) => walk_tree(&u.tree, Vec::new(), out),
            // Kernels in inline modules: their imports count too (names rarely clash).
            syn::Item::Mod(syn::ItemMod { content: Some((_, inner)), .. }) => collect_uses(inner, out),
            _ => {}
        }
    }
}

fn walk_tree(tree: &syn::UseTree, mut prefix: Vec<String>, out: &mut Uses) {
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            walk_tree(&p.tree, prefix, out);
        }
        syn::UseTree::Name(n) => {
            let name = n.ident.to_string();
            prefix.push(name.clone());
            out.names.insert(name, prefix);
        }
        syn::UseTree::Rename(r) => {
            prefix.push(r.ident.to_string());
            out.names.insert(r.rename.to_string(), prefix);
        }
        syn::UseTree::Glob(_) => out.globs.push(prefix),
        syn::UseTree::Group(g) => g.items.iter().for_each(|t| walk_tree(t, prefix.clone(), out)),
    }
}

/// Types (`struct`, `enum`, `union`, `type`) and modules the kernel crate defines.
fn collect_local(items: &[syn::Item], file: &Path, types: &mut BTreeMap<String, (PathBuf, u32, u32)>, mods: &mut Vec<String>) {
    for item in items {
        let ident = match item {
            syn::Item::Struct(s) => &s.ident,
            syn::Item::Enum(e) => &e.ident,
            syn::Item::Union(u) => &u.ident,
            syn::Item::Type(t) => &t.ident,
            syn::Item::Mod(m) => {
                mods.push(m.ident.to_string());
                if let Some((_, inner)) = &m.content {
                    collect_local(inner, file, types, mods);
                }
                continue;
            }
            _ => continue,
        };
        // proc-macro2 columns count characters from 0; diagnostics count from 1.
        let start = ident.span().start();
        types.entry(ident.to_string()).or_insert_with(|| (file.to_path_buf(), start.line as u32, start.column as u32 + 1));
    }
}

enum Resolved {
    /// A path through another crate, which the host can depend on too.
    Shared(String),
    /// Left as the kernel wrote it (a standard or device type, or a name we cannot place).
    AsWritten,
    /// Defined in the kernel crate (the type's name).
    Local(String),
}

fn host_path(ty: &str, uses: &Uses, local_types: &BTreeMap<String, (PathBuf, u32, u32)>, local_mods: &[String]) -> Resolved {
    let Ok(path) = syn::parse_str::<syn::Path>(ty) else { return Resolved::AsWritten };
    if path.leading_colon.is_some() {
        return Resolved::AsWritten; // `::shared::Affine`: already a crate path
    }
    let written: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    let Some(first) = written.first() else { return Resolved::AsWritten };
    if written.len() == 1 && crate::embed::host_scope::PRIMITIVES.contains(&first.as_str()) {
        return Resolved::AsWritten; // `*mut f32` beside `use shared::*;`
    }
    let name = written.last().cloned().unwrap_or_default();
    let full: Vec<String> = match uses.names.get(first) {
        Some(imported) => imported.iter().chain(&written[1..]).cloned().collect(),
        None if written.len() == 1 && local_types.contains_key(first) => return Resolved::Local(name),
        None if written.len() == 1 => {
            // `use shared::*;` as the file's only glob: the name can come from nowhere else.
            match &uses.globs[..] {
                [g] if g.first().is_some_and(|c| !NOT_SHARED.contains(&c.as_str()) && !is_local_root(c, local_mods)) => {
                    g.iter().chain(&written).cloned().collect()
                }
                _ => return Resolved::AsWritten,
            }
        }
        None => written.clone(),
    };
    let root = full[0].as_str();
    if is_local_root(root, local_mods) {
        Resolved::Local(name)
    } else if NOT_SHARED.contains(&root) {
        Resolved::AsWritten
    } else {
        Resolved::Shared(format!("::{}", full.join("::")))
    }
}

/// `crate`, `self`, `super` or a module of the kernel crate: a path that stays inside it.
fn is_local_root(first: &str, local_mods: &[String]) -> bool {
    matches!(first, "crate" | "self" | "super") || local_mods.iter().any(|m| m == first)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve_src(src: &str) -> (Vec<String>, Vec<Diagnostic>) {
        let dir = tempfile::tempdir().unwrap();
        let lib = dir.path().join("lib.rs");
        std::fs::write(&lib, src).unwrap();
        let mut sigs = crate::embed::signature::rust_kernels(&lib).unwrap();
        let warnings = resolve(&lib, &mut sigs).unwrap();
        let types = sigs
            .iter()
            .flat_map(|s| s.params.iter())
            .filter_map(|p| match &p.ty {
                ParamType::ByValue { ty } => Some(ty.clone()),
                _ => None,
            })
            .collect();
        (types, warnings)
    }

    const K: &str = "#[no_mangle]\npub unsafe extern \"ptx-kernel\" fn";

    #[test]
    fn host_types_imported_types_are_named_through_their_crate() {
        let src = format!("use shared::Affine;\nuse shared::{{geo::Point as P, Other}};\nuse glob_crate::*;\n{K} a(p: Affine, q: P, r: shared::Direct, s: Globbed) {{}}\n");
        let (types, warnings) = resolve_src(&src);
        assert_eq!(types, ["::shared::Affine", "::shared::geo::Point", "::shared::Direct", "::glob_crate::Globbed"]);
        assert!(warnings.is_empty());
        // Two globs: a bare name may come from either (here the device crate's vector types).
        let src = format!(
            "use glob_crate::*;\nuse ptx_device::prelude::*;\nuse ptx_device::vector::f32x2;\n{K} a(s: Globbed, t: f32x4, u: f32x2) {{}}\n"
        );
        assert_eq!(resolve_src(&src).0, ["Globbed", "f32x4", "f32x2"]);
    }

    #[test]
    fn host_types_pointees_are_named_through_their_crate_and_primitives_stay() {
        let dir = tempfile::tempdir().unwrap();
        let lib = dir.path().join("lib.rs");
        std::fs::write(&lib, format!("use shared::*;\n{K} a(p: *const Affine, x: *mut f32, n: *mut u64) {{}}\n")).unwrap();
        let mut sigs = crate::embed::signature::rust_kernels(&lib).unwrap();
        resolve(&lib, &mut sigs).unwrap();
        let elems: Vec<&str> = sigs[0]
            .params
            .iter()
            .filter_map(|p| match &p.ty {
                ParamType::Pointer { elem, .. } => Some(elem.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(elems, ["::shared::Affine", "f32", "u64"]);
    }

    #[test]
    fn host_types_a_type_of_the_kernel_crate_is_a_warning_at_its_definition_with_the_fix() {
        let src = format!("mod types {{ #[repr(C)] pub struct Inner {{ pub x: f32 }} }}\nuse crate::types::Inner;\n#[repr(C)]\n#[derive(Clone, Copy)]\npub struct Affine {{ pub a: f32 }}\n{K} a(p: Affine, q: Inner, r: Affine) {{}}\n");
        let (types, warnings) = resolve_src(&src);
        assert_eq!(types, ["Affine", "Inner", "Affine"], "kept as written: a host twin still works");
        assert_eq!(warnings.len(), 2, "once per type: {warnings:?}");
        assert_eq!((warnings[0].line, warnings[0].column, warnings[1].line), (Some(5), Some(12), Some(1)));
        assert!(
            warnings[0].message.contains("`Affine` (parameter `p` of kernel `a`) is defined in the kernel crate"),
            "{}",
            warnings[0].message
        );
        assert!(warnings[0].notes[0].contains("move `Affine` into a small `no_std` crate"), "{:?}", warnings[0].notes);
    }
}
