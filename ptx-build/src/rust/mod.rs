//! The Rust front end: a nested cargo that compiles a kernel crate for `nvptx64-nvidia-cuda`
//! to LLVM bitcode, once for every arch.
//!
//! Like spirv-builder, the nested cargo gets its own target dir (an outer cargo holds the lock
//! on the user's) and an environment scrubbed of the outer build's variables. No linker runs:
//! the crate is built as an rlib with `--emit=llvm-bc`, and [`crate::backend::bitcode`] links the
//! crates into one module that [`crate::backend::link`] takes to PTX per arch.

pub mod modules;
pub mod sysroot;

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::{Deserialize, Serialize};

use crate::arch::Arch;
use crate::backend::bitcode::{self, Profile};
use crate::cache::{self, Key};
use crate::diag::{dir_prefix, Diagnostic, Level};
use crate::error::{Error, Result};
use crate::project::cargo::{Message, RustcDiagnostic};
use crate::project::{Features, KernelCrate};
use crate::report::{Event, Reporter};
use crate::text::depfile;
use crate::tools::process;
use crate::tools::{Llvm, Rust};

use crate::arch::TARGET;

/// Variables of an outer cargo or build script that must not leak into the nested cargo.
const SCRUBBED: &[&str] = &[
    "RUSTC",
    "RUSTC_WRAPPER",
    "RUSTC_WORKSPACE_WRAPPER",
    "RUSTFLAGS",
    "CARGO_ENCODED_RUSTFLAGS",
    "RUSTDOCFLAGS",
    "CARGO_TARGET_DIR",
    "CARGO_BUILD_TARGET",
    "CARGO_BUILD_TARGET_DIR",
    "CARGO_BUILD_RUSTFLAGS",
    "CARGO_BUILD_RUSTC",
    "CARGO_BUILD_RUSTC_WRAPPER",
    "RUSTUP_TOOLCHAIN",
    "OUT_DIR",
    "TARGET",
    "HOST",
    "PROFILE",
    "OPT_LEVEL",
    "DEBUG",
    "NUM_JOBS",
    "CARGO_MANIFEST_DIR",
    "CARGO_MANIFEST_PATH",
    "CARGO_PKG_NAME",
    "CARGO_PRIMARY_PACKAGE",
];
const SCRUBBED_PREFIXES: &[&str] = &["CARGO_CFG_", "CARGO_FEATURE_", "CARGO_PKG_", "DEP_"];

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
    pub profile: Profile,
    pub features: &'a Features,
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
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RustKernels {
    /// The crate and its dependencies linked into one module (only what the crate uses).
    pub module: PathBuf,
    /// Content hash of `module`.
    pub module_hash: String,
    /// Exported kernels (`extern "ptx-kernel"` functions), in source order.
    pub kernels: Vec<String>,
    /// Every source file the build read (for `cargo:rerun-if-changed`).
    pub sources: Vec<PathBuf>,
    /// The crate after macro expansion (`-Zunpretty=expanded`), written only when the source
    /// reader does not find every exported kernel (kernels stamped out by `macro_rules!`): their
    /// signatures are read from it. Kept in the stamp, so a no-op build does not expand again.
    #[serde(default)]
    pub expanded: Option<PathBuf>,
    /// Why the expansion failed, when it was needed: those kernels stay untyped.
    #[serde(default)]
    pub expand_error: Option<String>,
    /// True when nothing changed and no tool ran.
    #[serde(skip)]
    pub fresh: bool,
}

#[derive(Serialize, Deserialize)]
struct Stamp {
    key: String,
    inputs: Vec<(PathBuf, String)>,
    env: Vec<(String, Option<String>)>,
    output: RustKernels,
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
        flags
    }

    /// The shared sysroot's folder, when `core` is shared.
    fn sysroot_dir(&self) -> Option<PathBuf> {
        let root = self.shared_cache?;
        // Absolute: the nested cargo runs in another folder (see `command`).
        let root = &std::path::absolute(root).unwrap_or_else(|_| root.to_path_buf());
        Some(sysroot::dir_for(self.rust, self.profile, self.cpu, &self.base_rustflags(), root))
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
        let mut k = Key::new("rust-frontend-v4");
        k.str(&self.rust.version).str(&self.rust.rustc.to_string_lossy()).str(&self.krate.manifest_path.to_string_lossy());
        k.str(self.profile.dir_name()).str(&self.cpu.sm_name());
        for f in self.rustflags() {
            k.str(&f);
        }
        for f in &self.features.features {
            k.str(f);
        }
        k.str(&format!("{}{}", self.features.all_features, self.features.no_default_features));
        k.finish()
    }

    /// Builds the crate, or returns the last result when no input changed.
    pub fn compile(&self, reporter: &dyn Reporter) -> Result<RustKernels> {
        let stamp_path = self.work_dir.join("rust.json");
        let key = self.key();
        if let Some(stamp) = cache::read_stamp::<Stamp>(&stamp_path) {
            if stamp.key == key && still_fresh(&stamp) {
                let mut out = stamp.output;
                out.fresh = true;
                return Ok(out);
            }
        }
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
        // no shared-cache hit for an identical build).
        let mut deps: Vec<PathBuf> = units.iter().map(|u| u.bitcode.clone()).filter(|b| *b != kernel_bc).collect();
        if let Some(core) = &shared_core {
            deps.extend(core.bitcode.iter().cloned());
        }
        deps.sort_by(|a, b| a.file_name().cmp(&b.file_name()));
        deps.dedup();

        cache::create_dir_all(&self.work_dir)?;
        let module = self.work_dir.join(format!("{}.bc", self.krate.lib_name));
        let kernels = bitcode::kernel_names(self.llvm, &kernel_bc)?;
        if kernels.is_empty() {
            reporter.report(Event::Diagnostic(
                &Diagnostic::warning(format!("kernel crate `{}` defines no kernel", self.krate.name))
                    .at(&self.krate.manifest_path, None, None)
                    .note("a kernel is `#[ptx_device::kernel] pub unsafe fn name(..)`, or `#[no_mangle] pub unsafe extern \"ptx-kernel\" fn name(..)` under `#![feature(abi_ptx)]`, in the lib target"),
            ));
        }
        bitcode::crate_module(self.llvm, &kernel_bc, &deps, &module)?;

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
        let hashed: Vec<(PathBuf, String)> = inputs.iter().map(|p| (p.clone(), cache::file_hash(p).unwrap_or_default())).collect();
        let env: Vec<(String, Option<String>)> = env.into_iter().map(|v| (v.clone(), std::env::var(&v).ok())).collect();
        let (expanded, expand_error) = match self.macro_kernels(&kernels) {
            // The shared sysroot when there is one, published by this build too: with it the
            // expansion checks no `core` of its own (about 30 s on 2 cores).
            Some(missing) => match self.expand(sysroot_dir.as_deref().and_then(sysroot::existing).is_some(), &missing) {
                Ok(path) => (Some(path), None),
                Err(why) => (None, Some(why)),
            },
            None => (None, None),
        };
        let output = RustKernels {
            module_hash: cache::file_hash(&module).unwrap_or_default(),
            module,
            kernels,
            sources: inputs,
            expanded,
            expand_error,
            fresh: false,
        };
        cache::write_stamp(&stamp_path, &Stamp { key, inputs: hashed, env, output: output.clone() })?;
        Ok(output)
    }

    /// The exported kernels (from the bitcode) that the source reader does not see, when there
    /// are any: kernels stamped out by macros. `None` also when the sources cannot be read (the
    /// Builder reports that error itself).
    fn macro_kernels(&self, kernels: &[String]) -> Option<Vec<String>> {
        let sigs = crate::embed::signature::rust_kernels(self.krate.lib_src.as_deref()?).ok()?;
        let missing: Vec<String> = kernels.iter().filter(|k| !sigs.iter().any(|s| s.ptx_names().contains(&k.as_str()))).cloned().collect();
        (!missing.is_empty()).then_some(missing)
    }

    /// The crate expanded by rustc (`cargo rustc --profile check -- -Zunpretty=expanded`), written
    /// to the work dir; the error says why it could not be had. Check mode keeps its own units
    /// and fingerprints in the nested target dir, so the bitcode build stays fresh.
    fn expand(&self, use_sysroot: bool, missing: &[String]) -> std::result::Result<PathBuf, String> {
        let mut cmd = self.expand_command(use_sysroot);
        cmd.stdin(Stdio::null());
        let out = process::output("cargo", &mut cmd).map_err(|e| e.to_string())?;
        let text = expansion(out.status.success(), &out.stdout, &out.stderr, missing)?;
        let path = self.work_dir.join("expanded.rs");
        cache::write_atomic(&path, text.as_bytes()).map_err(|e| e.to_string())?;
        Ok(path)
    }

    fn expand_command(&self, use_sysroot: bool) -> Command {
        // No bitcode: check mode runs no codegen (`--emit=llvm-bc` would force it).
        let flags: Vec<String> =
            self.cargo_rustflags(use_sysroot).into_iter().filter(|f| !f.starts_with("--emit") && f != "-Ccodegen-units=1").collect();
        let mut cmd = self.cargo_rustc(&flags, false, use_sysroot);
        cmd.args(["--profile", "check"]);
        cmd.arg("--").arg("-Zunpretty=expanded");
        // The check profile has debug assertions on; a release build's `cfg(debug_assertions)` is off.
        if self.profile == Profile::Release {
            cmd.arg("-Cdebug-assertions=off");
        }
        cmd
    }

    /// cargo with the outer build's variables scrubbed and the toolchain, flags and colour set.
    fn scrubbed_cargo(&self, rustflags: &[String], color: bool) -> Command {
        let mut cmd = process::command(&self.rust.cargo);
        for (var, _) in std::env::vars_os() {
            let name = var.to_string_lossy();
            if SCRUBBED.contains(&name.as_ref()) || SCRUBBED_PREFIXES.iter().any(|p| name.starts_with(p)) {
                cmd.env_remove(&var);
            }
        }
        cmd.env("RUSTC", &self.rust.rustc)
            .env("RUSTUP_TOOLCHAIN", &self.rust.toolchain)
            .env("CARGO_ENCODED_RUSTFLAGS", rustflags.join("\x1f"))
            .env("CARGO_TERM_PROGRESS_WHEN", "never")
            .env("CARGO_TERM_COLOR", if color { "always" } else { "never" });
        // cargo reads `.cargo/config.toml` from its working folder up, not from the manifest's.
        // One folder whatever the caller's, so `cargo ptx build` in any folder and build.rs read
        // the same configuration, and one above the kernel workspace: the `.cargo/config.toml`
        // that `cargo ptx new` writes there (target and `build-std` for `cargo check` and
        // rust-analyzer) would otherwise add `-Zbuild-std` to a `--sysroot` build and compile
        // `core` again. The flags below set the target and `core` themselves.
        cmd.current_dir(config_dir(&self.krate.workspace_root));
        cmd
    }

    fn feature_args(&self, cmd: &mut Command) {
        if !self.features.features.is_empty() {
            cmd.arg("--features").arg(self.features.features.join(","));
        }
        if self.features.all_features {
            cmd.arg("--all-features");
        }
        if self.features.no_default_features {
            cmd.arg("--no-default-features");
        }
    }

    /// `cargo rustc` of the kernel crate's lib for the GPU target, in the nested target dir,
    /// with its features and cargo's `--locked`-style flags: what the build and the expansion share.
    fn cargo_rustc(&self, rustflags: &[String], color: bool, use_sysroot: bool) -> Command {
        let mut cmd = self.scrubbed_cargo(rustflags, color);
        cmd.arg("rustc").args(["--lib", "--target", TARGET]);
        if !use_sysroot {
            cmd.arg("-Zbuild-std=core");
        }
        cmd.arg("--manifest-path")
            .arg(&self.krate.manifest_path)
            .args(["-p", &self.krate.name])
            .arg("--target-dir")
            .arg(&self.cargo_target_dir)
            .args(self.manifest_flags.args());
        self.feature_args(&mut cmd);
        cmd
    }

    fn command(&self, use_sysroot: bool) -> Command {
        let mut cmd = self.cargo_rustc(&self.cargo_rustflags(use_sysroot), self.color, use_sysroot);
        cmd.args(["--crate-type", "rlib"]).arg(if self.color {
            "--message-format=json-diagnostic-rendered-ansi"
        } else {
            "--message-format=json"
        });
        if self.profile == Profile::Release {
            cmd.arg("--release");
        }
        // For the kernel crate alone (RUSTFLAGS would rebuild `core` per crate): its sources
        // named relative to the workspace in the PTX, as rustc's messages name them. The path
        // in the flag also keeps two checkouts of one crate apart in a shared target dir: cargo
        // fingerprints path packages by workspace-relative paths and mtimes, and without it
        // hands the second checkout the first one's bitcode when its files are older.
        cmd.arg("--").arg(format!("--remap-path-prefix={}=", dir_prefix(&self.krate.workspace_root)));
        cmd
    }

    /// The crates compiled to bitcode, and the dep-info files of proc-macros the kernels use
    /// (built for the host: their sources are inputs of the kernels too).
    fn run_cargo(&self, reporter: &dyn Reporter, use_sysroot: bool) -> Result<(Vec<Unit>, Vec<PathBuf>)> {
        let mut cmd = self.command(use_sysroot);
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).stdin(Stdio::null());
        let mut child = process::spawn("cargo", &mut cmd)?;
        let stdout = child.stdout.take().expect("stdout is piped");
        let stderr = child.stderr.take().expect("stderr is piped");
        let target_root = self.cargo_target_dir.join(TARGET);

        let (units, host_dep_infos, errors, stderr_text) = std::thread::scope(|s| {
            // cargo's own lines (Compiling, Downloading, manifest errors) come on stderr.
            let err_thread = s.spawn(move || {
                let mut text = String::new();
                for line in BufReader::new(stderr).lines().map_while(std::result::Result::ok) {
                    let t = line.trim_start();
                    if let Some(rest) = t.strip_prefix("Compiling ").or_else(|| t.strip_prefix("Downloaded ")) {
                        reporter.report(Event::Progress { message: rest.to_string() });
                    }
                    text.push_str(&line);
                    text.push('\n');
                }
                text
            });
            let mut units = Vec::new();
            let mut host_dep_infos = Vec::new();
            let mut errors = 0;
            for line in BufReader::new(stdout).lines().map_while(std::result::Result::ok) {
                match Message::parse(&line) {
                    Some(Message::CompilerMessage { message }) => {
                        let mut d = from_rustc(&message).rooted(&self.krate.workspace_root);
                        d.compiler_json = serde_json::from_str::<serde_json::Value>(&line).ok().map(|mut v| v["message"].take());
                        if d.level == Level::Error && !d.message.starts_with("aborting due to") {
                            errors += 1;
                        }
                        if !d.message.starts_with("aborting due to") {
                            reporter.report(Event::Diagnostic(&d));
                        }
                    }
                    Some(Message::CompilerArtifact { target, filenames }) => {
                        if target.kind.iter().any(|k| k == "proc-macro") {
                            host_dep_infos.extend(filenames.iter().filter_map(|f| dep_info_of_host_lib(f)));
                            continue;
                        }
                        let crate_name = target.name.replace('-', "_");
                        for f in &filenames {
                            if f.starts_with(&target_root) {
                                if let Some(bc) = bitcode_of(f) {
                                    if bc.is_file() && !units.iter().any(|u: &Unit| u.bitcode == bc) {
                                        units.push(Unit { crate_name: crate_name.clone(), bitcode: bc });
                                    }
                                }
                            }
                        }
                    }
                    _ => {}
                }
            }
            (units, host_dep_infos, errors, err_thread.join().unwrap_or_default())
        });
        let status = process::wait("cargo", &cmd, &mut child)?;
        if status.success() {
            return Ok((units, host_dep_infos));
        }
        if errors > 0 {
            return Err(Error::RustCompile { package: self.krate.name.clone(), errors, extra: String::new() });
        }
        let relevant: Vec<&str> =
            stderr_text.lines().filter(|l| !l.trim_start().starts_with("Compiling") && !l.trim_start().starts_with("Downloaded")).collect();
        Err(process::failed_with(
            "cargo",
            format!(" building kernel crate `{}` for {TARGET}", self.krate.name),
            &cmd,
            relevant.iter().map(|l| format!("  {l}")).collect::<Vec<_>>().join("\n"),
        ))
    }
}

/// The folder the nested cargo runs in: the one above the kernel crate's workspace (the
/// workspace itself at the file system's root).
fn config_dir(workspace_root: &Path) -> &Path {
    workspace_root.parent().unwrap_or(workspace_root)
}

/// The expanded crate cargo printed, or why there is none: the last lines cargo printed when it
/// failed, or a kernel the text does not name (then it is not the crate that was built).
fn expansion(success: bool, stdout: &[u8], stderr: &[u8], missing: &[String]) -> std::result::Result<String, String> {
    if !success {
        let stderr = String::from_utf8_lossy(stderr);
        let lines: Vec<&str> =
            stderr.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with("Compiling") && !l.starts_with("Checking")).collect();
        let tail = lines[lines.len().saturating_sub(4)..].join(" / ");
        return Err(format!("`cargo rustc -- -Zunpretty=expanded` failed: {tail}"));
    }
    let text = String::from_utf8_lossy(stdout).into_owned();
    if let Some(k) = missing.iter().find(|k| !text.contains(k.as_str())) {
        return Err(format!("the expanded crate has no kernel `{k}`"));
    }
    Ok(text)
}

/// The signatures of every Rust kernel of the crate rooted at `lib`, kernels stamped out by
/// macros included, when the front end expanded the crate (`Ok(None)` when it did not need to);
/// the error, for a warning, says why those kernels stay untyped.
pub(crate) fn expanded_kernels(
    lib: &Path,
    r: &RustKernels,
) -> std::result::Result<Option<Vec<crate::embed::signature::KernelSig>>, String> {
    if let Some(why) = &r.expand_error {
        return Err(format!("the crate could not be expanded ({why})"));
    }
    let Some(expanded) = r.expanded.as_deref() else { return Ok(None) };
    // A source the reader refuses is the Builder's error to report, as without expansion.
    let Ok(source) = crate::embed::signature::rust_kernels(lib) else { return Ok(None) };
    crate::embed::signature::rust_kernels_expanded(lib, source, expanded)
        .map(Some)
        .map_err(|e| format!("reading the expanded crate failed ({e})"))
}

struct Unit {
    crate_name: String,
    bitcode: PathBuf,
}

/// `deps/libcore-<hash>.rlib` or `.rmeta` -> `deps/core-<hash>.bc` (what `--emit=llvm-bc` wrote).
fn bitcode_of(file: &Path) -> Option<PathBuf> {
    let name = file.file_name()?.to_str()?;
    let stem = name.strip_suffix(".rlib").or_else(|| name.strip_suffix(".rmeta"))?;
    let stem = stem.strip_prefix("lib")?;
    if !stem.contains('-') {
        return None; // the uplifted copy without a hash
    }
    let dir = file.parent()?;
    let dir = if dir.ends_with("deps") { dir.to_path_buf() } else { dir.join("deps") };
    Some(dir.join(format!("{stem}.bc")))
}

/// `deps/libmy_macros-<hash>.so` -> `deps/my_macros-<hash>.d` (rustc's dep-info beside it).
fn dep_info_of_host_lib(file: &Path) -> Option<PathBuf> {
    let stem = file.file_stem()?.to_str()?;
    let stem = stem.strip_prefix("lib").unwrap_or(stem);
    let dir = file.parent()?;
    let dir = if dir.ends_with("deps") { dir.to_path_buf() } else { dir.join("deps") };
    Some(dir.join(format!("{stem}.d")))
}

fn from_rustc(m: &RustcDiagnostic) -> Diagnostic {
    let level = if m.is_error() { Level::Error } else { Level::Warning };
    let mut d = Diagnostic::new(level, m.message.clone());
    if let Some(span) = m.spans.iter().find(|s| s.is_primary) {
        d = d.at(span.file_name.clone(), Some(span.line_start), Some(span.column_start));
    }
    d.rendered = m.rendered.clone();
    d
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

/// Where cargo keeps registry and git sources.
fn cargo_home() -> PathBuf {
    std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .unwrap_or_else(|| PathBuf::from(".cargo"))
}

fn still_fresh(stamp: &Stamp) -> bool {
    stamp.output.module.is_file()
        && stamp.output.expanded.as_ref().is_none_or(|p| p.is_file())
        && cache::file_hash(&stamp.output.module).as_deref() == Some(stamp.output.module_hash.as_str())
        && stamp.inputs.iter().all(|(p, h)| cache::file_hash(p).as_deref() == Some(h.as_str()))
        && stamp.env.iter().all(|(v, val)| std::env::var(v).ok() == *val)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nested_cargo_runs_above_the_kernel_workspace() {
        // kernels/.cargo/config.toml (for editors) stays out of the nested build.
        assert_eq!(config_dir(Path::new("/p/my-gpu/kernels")), Path::new("/p/my-gpu"));
        assert_eq!(config_dir(Path::new("/")), Path::new("/"));
    }

    #[test]
    fn a_failed_expansion_leaves_macro_kernels_untyped_and_says_why() {
        let dir = tempfile::tempdir().unwrap();
        let lib = dir.path().join("lib.rs");
        std::fs::write(&lib, "//! Kernels.\nm!(k);\n").unwrap();
        let mut r = RustKernels {
            module: dir.path().join("k.bc"),
            module_hash: String::new(),
            kernels: vec!["k".into()],
            sources: Vec::new(),
            expanded: None,
            expand_error: None,
            fresh: false,
        };
        assert_eq!(expanded_kernels(&lib, &r), Ok(None), "nothing expanded: the source reader's kernels");
        r.expand_error = Some("`cargo rustc -- -Zunpretty=expanded` failed: error: no such command".into());
        let e = expanded_kernels(&lib, &r).unwrap_err();
        assert_eq!(e, "the crate could not be expanded (`cargo rustc -- -Zunpretty=expanded` failed: error: no such command)");
        r.expand_error = None;
        let expanded = dir.path().join("expanded.rs");
        r.expanded = Some(expanded.clone());
        let e = expanded_kernels(&lib, &r).unwrap_err();
        assert!(e.starts_with("reading the expanded crate failed (could not read") && e.contains("expanded.rs"), "{e}");
        std::fs::write(&expanded, "#[no_mangle]\npub unsafe extern \"ptx-kernel\" fn k(x: *mut f32) {}\n").unwrap();
        let k = expanded_kernels(&lib, &r).unwrap().unwrap();
        assert_eq!((k[0].name.as_str(), k[0].line), ("k", 2), "placed at the macro call `m!(k)`");
    }

    #[test]
    fn an_expansion_is_the_crate_that_was_built_or_a_reason() {
        let missing = vec!["neg_f32".to_string()];
        let text = "#[no_mangle]\npub unsafe extern \"ptx-kernel\" fn neg_f32() {}\n";
        assert_eq!(expansion(true, text.as_bytes(), b"", &missing).as_deref(), Ok(text));
        assert_eq!(expansion(true, b"fn other() {}", b"", &missing), Err("the expanded crate has no kernel `neg_f32`".to_string()));
        let stderr = b"   Compiling ptx-device-macros v0.1.0\n    Checking k v0.1.0\nerror: the option `Z` is only accepted on the nightly compiler\n\nerror: could not compile `k` (lib)\n";
        assert_eq!(
            expansion(false, b"", stderr, &missing),
            Err("`cargo rustc -- -Zunpretty=expanded` failed: error: the option `Z` is only accepted on the nightly compiler / error: could not compile `k` (lib)".to_string())
        );
    }

    #[test]
    fn finds_the_dep_info_of_a_proc_macro() {
        assert_eq!(
            dep_info_of_host_lib(Path::new("/t/release/deps/libptx_device_macros-9f1e.so")),
            Some(PathBuf::from("/t/release/deps/ptx_device_macros-9f1e.d"))
        );
        assert_eq!(
            dep_info_of_host_lib(Path::new("/t/release/deps/my_macros-1.dll")),
            Some(PathBuf::from("/t/release/deps/my_macros-1.d"))
        );
    }

    #[test]
    fn finds_bitcode_next_to_rlibs() {
        assert_eq!(
            bitcode_of(Path::new("/t/nvptx64-nvidia-cuda/release/deps/libcore-29de.rlib")),
            Some(PathBuf::from("/t/nvptx64-nvidia-cuda/release/deps/core-29de.bc"))
        );
        assert_eq!(bitcode_of(Path::new("/t/x/release/deps/libk_k-0d27.rmeta")), Some(PathBuf::from("/t/x/release/deps/k_k-0d27.bc")));
        assert_eq!(bitcode_of(Path::new("/t/x/release/libk.rlib")), None);
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
