//! Whether cargo must be asked for a package's options: a scan of the manifests' text that
//! answers "no table here can hold any" without starting `cargo metadata` (52-68 ms, the
//! largest part of a build script's start before its first nvcc; BENCHMARKS.md).

use std::path::{Path, PathBuf};

/// The workspace root manifest of package `manifest` when no manifest that could be its
/// workspace's (its own and every one above it) can set options: none has both the words
/// `metadata` and `ptx` (an options table, however its keys are split, spaced or quoted, has
/// both; a host crate's `ptx-build` dependency only the second) or a backslash (an escape can
/// spell any key), the package does not name its root (`package.workspace = "../root"`, however
/// spelled), and the nearest root does not exclude members (cargo would look further up).
/// `None`: ask cargo. The root is the nearest manifest at or above the package's with a
/// `[workspace]` table, as cargo finds it then.
pub(super) fn workspace_without_options(manifest: &Path) -> Option<PathBuf> {
    let mut root = None;
    for m in manifest.parent()?.ancestors().map(|d| d.join("Cargo.toml")) {
        let Ok(text) = std::fs::read_to_string(&m) else { continue };
        if text.contains('\\') || (text.contains("metadata") && text.contains("ptx")) {
            return None;
        }
        if m == manifest && keys(&text).any(|l| names_a_root(&l)) {
            return None;
        }
        if root.is_none() && is_workspace_root(&text) {
            if keys(&text).any(|l| l.starts_with("exclude=") || l.contains("exclude=[")) {
                return None;
            }
            root = Some(m);
        }
    }
    Some(root.unwrap_or_else(|| manifest.to_path_buf()))
}

/// A manifest's lines without comments and blanks, for telling tables and keys apart.
fn keys(text: &str) -> impl Iterator<Item = String> + '_ {
    text.lines().map(|l| l.split('#').next().unwrap_or_default().replace([' ', '\t'], ""))
}

/// Whether a manifest line gives `workspace` a string (the path of the package's root), as a
/// key of `[package]`, dotted, quoted or in an inline table; `workspace = true` (inheritance)
/// does not.
fn names_a_root(line: &str) -> bool {
    ["workspace=", "workspace\"=", "workspace'="]
        .iter()
        .any(|k| line.match_indices(k).any(|(i, _)| line[i + k.len()..].starts_with(['"', '\''])))
}

/// Whether a manifest has a `workspace` table (`[workspace]`, `[workspace.dependencies]`,
/// `workspace.members = ..`, quoted or not).
fn is_workspace_root(text: &str) -> bool {
    keys(text)
        .map(|l| l.replace(['"', '\''], ""))
        .any(|l| l == "[workspace]" || l.starts_with("[workspace.") || l.starts_with("workspace.") || l.starts_with("workspace={"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cargo_is_not_asked_where_no_manifest_can_hold_options() {
        let tmp = tempfile::tempdir().unwrap();
        // A manifest above the temp folder would take part in every answer.
        if let Some(m) = tmp.path().ancestors().map(|a| a.join("Cargo.toml")).find(|m| m.is_file()) {
            panic!("{} is above the temp folder: point TMPDIR elsewhere", m.display());
        }
        let root = tmp.path().join("ws");
        let host = root.join("crates/host");
        std::fs::create_dir_all(&host).unwrap();
        let write = |m: &Path, text: &str| std::fs::write(m, text).unwrap();
        let (root_toml, host_toml) = (root.join("Cargo.toml"), host.join("Cargo.toml"));
        let package = "[package]\nname = \"host\"\nversion.workspace = true # inherited\n[build-dependencies]\nptx-build = \"0.1\"\n";
        write(&host_toml, package);
        // A package of no workspace is its own root.
        assert_eq!(workspace_without_options(&host_toml), Some(host_toml.clone()));
        write(&root_toml, "[workspace]\nmembers = [\"crates/*\"]\n");
        assert_eq!(workspace_without_options(&host_toml), Some(root_toml.clone()), "the nearest [workspace] above");
        write(&root_toml, "[workspace.dependencies]\nptx-runtime = \"0.1\"\n");
        assert_eq!(workspace_without_options(&host_toml), Some(root_toml.clone()), "a table below `workspace` makes a root");
        write(&host_toml, &format!("{package}[workspace]\n"));
        assert_eq!(workspace_without_options(&host_toml), Some(host_toml.clone()), "its own [workspace]");
        // Inheritance is no root's path.
        write(&host_toml, &format!("{package}[lints]\nworkspace = true\n[dependencies]\nhalf = {{ workspace = true }}\n"));
        assert_eq!(workspace_without_options(&host_toml), Some(root_toml.clone()), "`workspace = true`");
        write(&root_toml, "workspace.members = [\"crates/*\"]\n");
        assert_eq!(workspace_without_options(&host_toml), Some(root_toml.clone()), "a dotted `workspace` key makes a root");
        // Every way a manifest could set options, or name a root cargo would look for elsewhere.
        for (m, text) in [
            (&host_toml, format!("{package}[package.metadata.ptx]\narchs = [\"sm_80\"]\n")),
            (&host_toml, format!("{package}[package.metadata]\n\"ptx\" = {{ archs = [\"sm_80\"] }}\n")),
            (&host_toml, format!("package . metadata . ptx . archs = [\"sm_80\"]\n{package}")),
            (&host_toml, format!("{package}[package.metadata]\n\"\\u0070tx\" = {{}}\n")),
            (&host_toml, "[package]\nname = \"host\"\nworkspace = \"../..\"\n".to_string()),
            (&root_toml, "[workspace]\nmembers = [\"crates/*\"]\n[workspace.metadata.ptx]\narchs = [\"sm_80\"]\n".to_string()),
            // Other metadata beside the `ptx-build` dependency: cargo says whether options are there.
            (&host_toml, format!("{package}[package.metadata.docs.rs]\nall-features = true\n")),
            // A TOML 1.1 escape spells `ptx` without the word.
            (&host_toml, format!("{package}[package.metadata]\n\"\\x70tx\" = {{}}\n")),
            // The root named elsewhere, however spelled.
            (&host_toml, format!("package.workspace = \"../elsewhere\"\n{package}")),
            (&host_toml, "[package]\nname = \"host\"\n\"workspace\" = '../elsewhere'\n".to_string()),
            (&host_toml, "package = { name = \"host\", workspace = \"../elsewhere\" }\n".to_string()),
            // A root that excludes members: cargo may look further up.
            (&root_toml, "[workspace]\nmembers = [\"crates/*\"]\nexclude = [\"crates/other\"]\n".to_string()),
        ] {
            write(&host_toml, package);
            write(&root_toml, "[workspace]\nmembers = [\"crates/*\"]\n");
            write(m, &text);
            assert_eq!(workspace_without_options(&host_toml), None, "{text}");
        }
    }
}
