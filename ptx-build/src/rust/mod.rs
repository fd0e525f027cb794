//! The Rust front end: a nested cargo that compiles a kernel crate for `nvptx64-nvidia-cuda`
//! to LLVM bitcode, once for every arch.
//!
//! Like spirv-builder, the nested cargo gets its own target dir (an outer cargo holds the lock
//! on the user's) and an environment scrubbed of the outer build's variables. No linker runs:
//! the crate is built as an rlib with `--emit=llvm-bc`, and [`crate::backend::bitcode`] links the
//! crates into one module that [`crate::backend::link`] takes to PTX per arch.

mod cargo;
mod expand;
pub mod lints;
pub mod modules;
pub mod sysroot;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::arch::{Arch, TARGET};
use crate::backend::bitcode;
use crate::cache::{self, CachedStep, Key, Outcome};
use crate::diag::{dir_prefix, Diagnostic};
use crate::error::{Error, Result};
use crate::options::Config;
use crate::project::KernelCrate;
use crate::report::{Event, Reporter};
use crate::text::depfile;
use crate::tools::{Llvm, Rust};

/// cargo's `--locked`, `--offline` and `--frozen`: what the nested cargo may do to Cargo.lock
/// and the network. A CI job that passes them to `cargo ptx build` means the kernel crate's
/// build too.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ManifestFlags {
    /// Fail if Cargo.lock would change.
    pub locked: bool,
    /// No network access.
    pub offline: bool,
    /// Both.
    pub frozen: bool,
}

impl ManifestFlags {
    /// The flags as cargo's arguments.
    pub fn args(&self) -> Vec<&'static str> {
        [(self.locked, "--locked"), (self.offline, "--offline"), (self.frozen, "--frozen")]
            .into_iter()
            .filter(|f| f.0)
            .map(|f| f.1)
            .collect()
    }
}

/// One kernel crate's front-end job.
pub struct Frontend<'a> {
    pub rust: &'a Rust,
    pub llvm: &'a Llvm,
    pub krate: &'a KernelCrate,
    /// The crate's options (features, profile).
    pub config: &'a Config,
    /// `-Ctarget-cpu`: the lowest arch of the build, so the bitcode is valid for every arch.
    pub cpu: Arch,
    /// The nested cargo's own target dir.
    pub cargo_target_dir: PathBuf,
    /// Where the linked module and the fingerprint go.
    pub work_dir: PathBuf,
    pub color: bool,
    /// The shared cache folder, where `core` is built once (`None`: `-Zbuild-std` in the
    /// nested cargo's target dir).
    pub shared_cache: Option<&'a Path>,
    /// `--locked`/`--offline`/`--frozen` for the nested cargo.
    pub manifest_flags: ManifestFlags,
}

/// The Rust kernels of a crate as one bitcode module, ready for per-arch linking.
#[derive(Clone, Debug)]
pub struct RustKernels {
    /// The crate and its dependencies linked into one module (only what the crate uses).
    pub module: PathBuf,
    /// Content hash of `module`.
    pub module_hash: String,
    /// Exported kernels (`extern "ptx-kernel"` functions), in source order.
    pub kernels: Vec<String>,
    /// Every source file the build read (for `cargo:rerun-if-changed`).
    pub sources: Vec<PathBuf>,
    /// True when nothing changed and no tool ran.
    pub fresh: bool,
}

/// What the front end's step records.
#[derive(Serialize, Deserialize)]
struct Record {
    /// Every source file the build read (outside the toolchain and the registries, which the
    /// key covers), with its content hash.
    inputs: Vec<(PathBuf, String)>,
    /// The variables `env!` read, with their values.
    env: Vec<(String, Option<String>)>,
    kernels: Vec<String>,
}

impl Frontend<'_> {
    /// The flags that key the front end: with the shared cache on, `--sysroot` and the shared
    /// sysroot's folder, whether this build finds it published or builds `core` itself (both
    /// give the same bitcode; the key does not change when the sysroot appears).
    fn rustflags(&self) -> Vec<String> {
        self.cargo_rustflags(true)
    }

    /// The flags the nested cargo gets: `--sysroot` when the shared sysroot is used.
    fn cargo_rustflags(&self, use_sysroot: bool) -> Vec<String> {
        let mut flags = self.base_rustflags();
        if let Some(dir) = self.sysroot_dir().filter(|_| use_sysroot) {
            flags.push("--sysroot".into());
            flags.push(dir.to_string_lossy().into_owned());
        }
        flags.extend(checkout_remaps(&self.krate.workspace_root, &self.rust.sysroot, &cargo_home()));
        flags
    }

    /// The shared sysroot's folder, when `core` is shared.
    fn sysroot_dir(&self) -> Option<PathBuf> {
        let root = self.shared_cache?;
        // Absolute: the nested cargo runs in another folder (see `command`).
        let root = &std::path::absolute(root).unwrap_or_else(|_| root.to_path_buf());
        Some(sysroot::dir_for(self.rust, self.config.profile, self.cpu, &self.base_rustflags(), root))
    }

    /// The flags `core` is built with too.
    fn base_rustflags(&self) -> Vec<String> {
        vec![
            "--emit=llvm-bc".into(),
            // One codegen unit: one .bc per crate.
            "-Ccodegen-units=1".into(),
            format!("-Ctarget-cpu={}", self.cpu.sm_name()),
            // `.loc`/`.file` line directives without DWARF sections, like nvcc's -lineinfo:
            // ptxas errors map back to the .rs line and the PTX target stays non-debug.
            "-Cdebuginfo=line-directives-only".into(),
            // Reproducible PTX: the standard library and registry sources under fixed roots.
            // The same for every kernel crate, so crates sharing a target dir share one `core`
            // build; the crate's own paths are made relative in the linked PTX instead
            // (`ptx::relative_file_lines`).
            format!("--remap-path-prefix={}=/rust-sysroot/", dir_prefix(&self.rust.sysroot)),
            format!("--remap-path-prefix={}=/cargo-home/", dir_prefix(&cargo_home())),
        ]
    }

    fn key(&self) -> String {
        let mut k = Key::new("rust-frontend-v6");
        k.str(&self.rust.version).str(&self.rust.rustc.to_string_lossy()).str(&self.krate.manifest_path.to_string_lossy());
        k.str(self.config.profile.dir_name()).str(&self.cpu.sm_name());
        for f in self.rustflags() {
            k.str(&f);
        }
        for f in &self.config.features {
            k.str(f);
        }
        k.str(&format!("{}{}", self.config.all_features, self.config.no_default_features));
        k.finish()
    }

    /// Builds the crate, or returns the last result when no input changed.
    pub fn compile(&self, reporter: &dyn Reporter) -> Result<RustKernels> {
        let module = self.work_dir.join(format!("{}.bc", self.krate.lib_name));
        let step =
            CachedStep { stamp: self.work_dir.join("rust.json"), key: self.key(), shared: None, outputs: vec![("bc", module.clone())] };
        let unchanged = |r: &Record| {
            r.inputs.iter().all(|(p, h)| cache::file_hash(p).as_deref() == Some(h.as_str()))
                && r.env.iter().all(|(v, val)| std::env::var(v).ok() == *val)
        };
        let done = step.run(unchanged, || self.build(reporter, &module))?;
        Ok(RustKernels {
            module,
            module_hash: done.hashes[0].clone(),
            kernels: done.meta.kernels,
            sources: done.meta.inputs.into_iter().map(|(p, _)| p).collect(),
            fresh: done.outcome == Outcome::Fresh,
        })
    }

    /// Runs the nested cargo and links the crate's bitcode with its dependencies into `module`.
    fn build(&self, reporter: &dyn Reporter, module: &Path) -> Result<Record> {
        reporter.report(Event::Status {
            verb: "Compiling",
            message: format!("{} (Rust, {}, {})", self.krate.name, self.rust.toolchain, TARGET),
        });
        let sysroot_dir = self.sysroot_dir();
        let shared_core = sysroot_dir.as_deref().and_then(sysroot::existing);
        let (units, host_dep_infos) = self.run_cargo(reporter, shared_core.is_some())?;
        if let (Some(dir), None, Some(root)) = (&sysroot_dir, &shared_core, self.shared_cache) {
            if !has_profile_settings(&self.krate.workspace_root) {
                let built: Vec<(String, PathBuf)> = units.iter().map(|u| (u.crate_name.clone(), u.bitcode.clone())).collect();
                // Not publishing only costs the next kernel build its own `core`.
                let _ = sysroot::publish(dir, &built, root);
            }
        }
        let kernel_bc = units.iter().rev().find(|u| u.crate_name == self.krate.lib_name).map(|u| u.bitcode.clone()).ok_or_else(|| {
            Error::ToolFailed {
                tool: "cargo".into(),
                context: format!(" for `{}`", self.krate.name),
                // cargo succeeded; what is missing is an output, not a failed command.
                command: String::new(),
                output: format!("  cargo built no bitcode for the lib target `{}`", self.krate.lib_name),
            }
        })?;
        // Sorted: cargo reports units in the order they finish, and a link in another order
        // writes the same module with its metadata numbered differently (a different hash, so
        // no step-cache hit for an identical build).
        let mut deps: Vec<PathBuf> = units.iter().map(|u| u.bitcode.clone()).filter(|b| *b != kernel_bc).collect();
        if let Some(core) = &shared_core {
            deps.extend(core.bitcode.iter().cloned());
        }
        deps.sort_by(|a, b| a.file_name().cmp(&b.file_name()));
        deps.dedup();

        cache::create_dir_all(&self.work_dir)?;
        let kernels = bitcode::kernel_names(self.llvm, &kernel_bc)?;
        if kernels.is_empty() {
            reporter.report(Event::Diagnostic(
                &Diagnostic::warning(format!("kernel crate `{}` defines no kernel", self.krate.name))
                    .at(&self.krate.manifest_path, None, None)
                    .note("a kernel is `#[ptx_device::kernel] pub unsafe fn name(..)`, or `#[no_mangle] pub unsafe extern \"ptx-kernel\" fn name(..)` under `#![feature(abi_ptx)]`, in the lib target"),
            ));
        }
        bitcode::crate_module(self.llvm, &kernel_bc, &deps, module)?;

        let mut sources = BTreeSet::new();
        let mut env = BTreeSet::new();
        for d in units.iter().map(|u| u.bitcode.with_extension("d")).chain(host_dep_infos) {
            read_dep_info(&d, &mut sources, &mut env);
        }
        // rustc runs in the workspace root and writes paths below it relative to it.
        let sources: BTreeSet<PathBuf> =
            sources.into_iter().map(|p| if p.is_relative() { self.krate.workspace_root.join(p) } else { p }).collect();
        let excluded = excluded_roots(self.rust);
        let mut inputs: Vec<PathBuf> = sources.into_iter().filter(|p| !excluded.iter().any(|r| p.starts_with(r))).collect();
        inputs.push(self.krate.manifest_path.clone());
        for extra in [self.krate.workspace_root.join("Cargo.toml"), self.krate.workspace_root.join("Cargo.lock")] {
            if extra.is_file() && !inputs.contains(&extra) {
                inputs.push(extra);
            }
        }
        Ok(Record {
            inputs: inputs.into_iter().map(|p| (cache::file_hash(&p).unwrap_or_default(), p)).map(|(h, p)| (p, h)).collect(),
            env: env.into_iter().map(|v| (v.clone(), std::env::var(&v).ok())).collect(),
            kernels,
        })
    }
}

/// Adds the sources and `env!` variables of rustc's dep-info file at `path` (none when the
/// file is missing: a crate that failed to build has none, and the stamp is not written then).
fn read_dep_info(path: &Path, sources: &mut BTreeSet<PathBuf>, env: &mut BTreeSet<String>) {
    let Ok(text) = std::fs::read_to_string(path) else {
        return;
    };
    let deps = depfile::parse(&text);
    sources.extend(deps.prerequisites);
    env.extend(deps.env);
}

/// Whether the workspace's manifest sets `[profile.*]` (which `-Zbuild-std` applies to `core`).
fn has_profile_settings(workspace_root: &Path) -> bool {
    std::fs::read_to_string(workspace_root.join("Cargo.toml"))
        .map(|t| t.lines().any(|l| l.trim_start().starts_with("[profile")))
        .unwrap_or(true)
}

/// Sources that never change under a fixed toolchain and lock file: the sysroot and registries.
fn excluded_roots(rust: &Rust) -> Vec<PathBuf> {
    let mut roots = vec![rust.sysroot.clone()];
    let home = cargo_home();
    roots.push(home.join("registry"));
    roots.push(home.join("git"));
    roots
}

/// `--remap-path-prefix` flags that name every file relative to the kernel workspace
/// (`../../ptx-device/src/lib.rs` for a path dependency two folders up, as in a monorepo), with
/// the toolchain's sources under `/rust-sysroot/` and registry sources under `/cargo-home/`.
///
/// For every crate the nested cargo compiles (RUSTFLAGS): a path dependency's absolute path
/// would otherwise reach the bitcode (line tables, panic locations) and give each checkout its
/// own link and ptxas steps. Each ancestor of the workspace root maps to the `../` that leads
/// to it, so no list of path dependencies is needed. rustc uses the last mapping that matches:
/// the flags go from the shortest prefix to the longest, so the most specific one wins.
fn checkout_remaps(workspace_root: &Path, sysroot: &Path, cargo_home: &Path) -> Vec<String> {
    let mut maps: Vec<(String, String)> = Vec::new();
    let mut up = String::new();
    for dir in workspace_root.ancestors() {
        maps.push((dir_prefix(dir), up.clone()));
        up.push_str("../");
    }
    maps.push((dir_prefix(sysroot), "/rust-sysroot/".into()));
    maps.push((dir_prefix(cargo_home), "/cargo-home/".into()));
    // Stable: a tie (the sysroot inside the workspace) keeps the toolchain's mapping last.
    maps.sort_by_key(|(from, _)| from.len());
    maps.into_iter().map(|(from, to)| format!("--remap-path-prefix={from}={to}")).collect()
}

/// Where cargo keeps registry and git sources.
fn cargo_home() -> PathBuf {
    std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .unwrap_or_else(|| PathBuf::from(".cargo"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_path_is_named_relative_to_the_workspace_and_the_most_specific_mapping_comes_last() {
        let flags = checkout_remaps(Path::new("/home/me/mono/kernels"), Path::new("/home/me/.rustup/tc"), Path::new("/home/me/.cargo"));
        assert_eq!(
            flags,
            [
                "--remap-path-prefix=/=../../../../",
                "--remap-path-prefix=/home/=../../../",
                "--remap-path-prefix=/home/me/=../../",
                "--remap-path-prefix=/home/me/mono/=../",
                "--remap-path-prefix=/home/me/.cargo/=/cargo-home/",
                "--remap-path-prefix=/home/me/.rustup/tc/=/rust-sysroot/",
                "--remap-path-prefix=/home/me/mono/kernels/=",
            ]
        );
    }

    #[test]
    fn reads_dep_info_with_spaces_and_env() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().join("k.d");
        std::fs::write(&d, "/t/k.bc: /src/my\\ dir/lib.rs /src/ä.rs\n\n/src/my\\ dir/lib.rs:\n# env-dep:KERNEL_N=4\n").unwrap();
        let (mut s, mut e) = (BTreeSet::new(), BTreeSet::new());
        read_dep_info(&d, &mut s, &mut e);
        assert_eq!(s.into_iter().collect::<Vec<_>>(), vec![PathBuf::from("/src/my dir/lib.rs"), PathBuf::from("/src/ä.rs")]);
        assert_eq!(e.into_iter().collect::<Vec<_>>(), vec!["KERNEL_N".to_string()]);
    }
}
