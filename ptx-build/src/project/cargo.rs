//! The parts of cargo's JSON that the engine reads: `cargo metadata --no-deps` (which packages
//! are kernel crates) and the `--message-format=json` stream of the nested build (diagnostics,
//! and where each crate's output landed).
//!
//! Written here rather than with `cargo_metadata`: these are a dozen fields of a stable format,
//! and that crate adds four packages (itself, camino, cargo-platform, semver) to the
//! build-dependency tree of every host crate, which made a host crate's no-op `cargo build` 5.9%
//! slower (`benches/dep_cost.py`, BENCHMARKS.md), over the 5% this project allows a convenience.
//! cargo-ptx, which no host crate builds, reads cargo's messages with `cargo_metadata`. Unknown
//! fields are ignored, so newer cargos keep working.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use crate::error::{Error, Result};
use crate::tools::process;

/// `cargo metadata --format-version 1 --no-deps`: the workspace's own packages only.
#[derive(Debug, Deserialize)]
pub struct Metadata {
    /// The workspace's members.
    pub packages: Vec<Package>,
    /// Its root folder.
    pub workspace_root: PathBuf,
    /// Its target dir.
    pub target_directory: PathBuf,
    /// `[workspace.metadata]` (null when absent).
    #[serde(default)]
    pub metadata: Value,
}

/// A package of the workspace.
#[derive(Debug, Deserialize)]
pub struct Package {
    /// Its name.
    pub name: String,
    /// Its Cargo.toml.
    pub manifest_path: PathBuf,
    /// Its lib, bins, tests, ...
    pub targets: Vec<Target>,
    /// `[package.metadata]` (null when absent).
    #[serde(default)]
    pub metadata: Value,
    /// What it depends on.
    #[serde(default)]
    pub dependencies: Vec<Dependency>,
}

impl Package {
    /// Whether its build script builds kernels: a build-dependency on ptx-build.
    pub fn builds_kernels_in_build_rs(&self) -> bool {
        self.dependencies.iter().any(|d| d.name == "ptx-build" && d.kind.as_deref() == Some("build"))
    }
}

/// One dependency of a package.
#[derive(Debug, Deserialize)]
pub struct Dependency {
    /// The package it names.
    pub name: String,
    /// `build`, `dev`, or none for a normal one.
    pub kind: Option<String>,
}

/// A target of a package.
#[derive(Debug, Deserialize)]
pub struct Target {
    /// Its name (`my-kernels`: cargo keeps the package's spelling).
    pub name: String,
    /// `lib`, `bin`, `proc-macro`, ...
    pub kind: Vec<String>,
    /// Its root file.
    pub src_path: PathBuf,
}

impl Target {
    /// A library target (the one that holds Rust kernels).
    pub fn is_lib(&self) -> bool {
        self.kind.iter().any(|k| matches!(k.as_str(), "lib" | "rlib" | "cdylib" | "staticlib"))
    }
}

/// The cargo that runs us (`CARGO` in a build script or under `cargo ptx`), else `cargo`.
pub fn cargo() -> OsString {
    std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into())
}

/// Asks cargo about the workspace of `manifest` (or of the current folder).
pub fn metadata(manifest: Option<&Path>) -> Result<Metadata> {
    let mut cmd = process::command(cargo());
    cmd.args(["metadata", "--format-version", "1", "--no-deps"]);
    if let Some(m) = manifest {
        cmd.arg("--manifest-path").arg(m);
    }
    let manifest = || manifest.map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("Cargo.toml"));
    let out = process::output("cargo", &mut cmd)?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        return Err(Error::Metadata { manifest: manifest(), message: stderr.trim().trim_start_matches("error: ").to_string() });
    }
    serde_json::from_slice(&out.stdout)
        .map_err(|e| Error::Metadata { manifest: manifest(), message: format!("cargo metadata printed what cargo-ptx cannot read: {e}") })
}

/// One line of `cargo build --message-format=json`. The variants keep cargo's `reason` names.
#[allow(clippy::enum_variant_names)]
#[derive(Debug, Deserialize)]
#[serde(tag = "reason")]
pub enum Message {
    /// A diagnostic of rustc.
    #[serde(rename = "compiler-message")]
    CompilerMessage {
        /// rustc's JSON diagnostic.
        message: RustcDiagnostic,
    },
    /// A unit cargo finished, with the files it wrote.
    #[serde(rename = "compiler-artifact")]
    CompilerArtifact {
        /// The unit's target.
        target: Target,
        /// What it wrote (`.rlib`, `.rmeta`, `.so`).
        filenames: Vec<PathBuf>,
    },
    /// Any other line (`build-script-executed`, `build-finished`, ...).
    #[serde(other)]
    Other,
}

impl Message {
    /// `None` for lines that are not a message (a build script may print anything).
    pub fn parse(line: &str) -> Option<Message> {
        serde_json::from_str(line).ok()
    }
}

/// rustc's JSON diagnostic, the fields a [`crate::Diagnostic`] needs.
#[derive(Debug, Deserialize)]
pub struct RustcDiagnostic {
    /// The message's first line.
    pub message: String,
    /// `error`, `warning`, `note`, `help`, `failure-note` or `error: internal compiler error`.
    pub level: String,
    #[serde(default)]
    /// Where it points.
    pub spans: Vec<Span>,
    /// rustc's human rendering.
    pub rendered: Option<String>,
}

impl RustcDiagnostic {
    /// An error (an internal compiler error too).
    pub fn is_error(&self) -> bool {
        self.level.starts_with("error")
    }
}

/// A source span of rustc's diagnostic.
#[derive(Debug, Deserialize)]
pub struct Span {
    /// The file, relative to where rustc ran (the workspace root) or absolute.
    pub file_name: String,
    /// 1-based.
    pub line_start: u32,
    /// 1-based.
    pub column_start: u32,
    /// The span the message is about (others are context).
    pub is_primary: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_artifacts_and_diagnostics_and_skips_the_rest() {
        let artifact = r#"{"reason":"compiler-artifact","package_id":"k 0.1.0","manifest_path":"/k/Cargo.toml","target":{"kind":["lib"],"crate_types":["lib"],"name":"my-k","src_path":"/k/src/lib.rs","edition":"2021","doc":true,"doctest":true,"test":true},"profile":{},"features":[],"filenames":["/t/deps/libmy_k-1.rlib"],"executable":null,"fresh":false}"#;
        let Some(Message::CompilerArtifact { target, filenames }) = Message::parse(artifact) else { panic!("not an artifact") };
        assert_eq!((target.name.as_str(), target.is_lib()), ("my-k", true));
        assert_eq!(filenames, [PathBuf::from("/t/deps/libmy_k-1.rlib")]);

        let msg = r#"{"reason":"compiler-message","package_id":"k","manifest_path":"/k/Cargo.toml","target":{"kind":["lib"],"name":"k","src_path":"/k/src/lib.rs"},"message":{"rendered":"error: x","$message_type":"diagnostic","children":[],"code":null,"level":"error","message":"x","spans":[{"file_name":"src/lib.rs","byte_start":1,"byte_end":2,"line_start":3,"line_end":3,"column_start":5,"column_end":6,"is_primary":true,"text":[],"label":null,"suggested_replacement":null,"suggestion_applicability":null,"expansion":null}]}}"#;
        let Some(Message::CompilerMessage { message }) = Message::parse(msg) else { panic!("not a message") };
        assert!(message.is_error());
        assert_eq!((message.spans[0].line_start, message.spans[0].column_start), (3, 5));

        assert!(matches!(Message::parse(r#"{"reason":"build-finished","success":true}"#), Some(Message::Other)));
        assert!(Message::parse("Compiling k v0.1.0").is_none());
    }

    #[test]
    fn a_bad_manifest_is_cargos_message_without_its_prefix() {
        let dir = tempfile::tempdir().unwrap();
        let manifest = dir.path().join("Cargo.toml");
        std::fs::write(&manifest, "[package\nname = ").unwrap();
        let err = metadata(Some(&manifest)).unwrap_err().to_string();
        assert!(err.contains("Cargo.toml") && !err.contains("error: error:"), "{err}");
    }

    #[test]
    fn reads_this_workspace() {
        let meta = metadata(Some(&Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml"))).unwrap();
        let me = meta.packages.iter().find(|p| p.name == "ptx-build").expect("ptx-build is a member");
        assert!(me.targets.iter().any(Target::is_lib));
        assert!(meta.workspace_root.join("Cargo.toml").is_file());
    }
}
