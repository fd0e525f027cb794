//! The nested cargo that builds a kernel crate for the GPU target: an environment scrubbed of
//! the outer build's variables, the crate's features and cargo's `--locked`-style flags, and
//! cargo's JSON messages read for diagnostics and the bitcode each unit left.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::Frontend;
use crate::arch::TARGET;
use crate::backend::bitcode::Profile;
use crate::diag::{dir_prefix, Diagnostic, Level};
use crate::error::{Error, Result};
use crate::project::cargo::{Message, RustcDiagnostic};
use crate::report::{Event, Reporter};
use crate::tools::process;

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

/// A crate the nested cargo compiled to bitcode.
pub(super) struct Unit {
    pub crate_name: String,
    pub bitcode: PathBuf,
}

impl Frontend<'_> {
    /// cargo with the outer build's variables scrubbed and the toolchain, flags and colour set.
    pub(super) fn scrubbed_cargo(&self, rustflags: &[String], color: bool) -> Command {
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
        if !self.config.features.is_empty() {
            cmd.arg("--features").arg(self.config.features.join(","));
        }
        if self.config.all_features {
            cmd.arg("--all-features");
        }
        if self.config.no_default_features {
            cmd.arg("--no-default-features");
        }
    }

    /// `cargo rustc` of the kernel crate's lib for the GPU target, in the nested target dir,
    /// with its features and cargo's `--locked`-style flags: what the build and the expansion share.
    pub(super) fn cargo_rustc(&self, rustflags: &[String], color: bool, use_sysroot: bool) -> Command {
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
        if self.config.profile == Profile::Release {
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
    pub(super) fn run_cargo(&self, reporter: &dyn Reporter, use_sysroot: bool) -> Result<(Vec<Unit>, Vec<PathBuf>)> {
        let mut cmd = self.command(use_sysroot);
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).stdin(Stdio::null());
        let mut child = process::spawn("cargo", &mut cmd)?;
        let stdout = child.stdout.take().expect("stdout is piped");
        let stderr = child.stderr.take().expect("stderr is piped");
        let target_root = self.cargo_target_dir.join(TARGET);

        // The unit cargo started last and when: a ticker says how long it has run, so a front
        // end that takes minutes (a large generated kernel) is not a frozen line.
        let current = Mutex::new((String::new(), Instant::now()));
        let done = AtomicBool::new(false);
        let (units, host_dep_infos, errors, stderr_text, disk_full) = std::thread::scope(|s| {
            let (current, done) = (&current, &done);
            s.spawn(move || {
                let mut shown = 0;
                while !done.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(250));
                    let (unit, since) = current.lock().unwrap_or_else(|e| e.into_inner()).clone();
                    let secs = since.elapsed().as_secs();
                    if !unit.is_empty() && secs >= 2 && secs != shown {
                        shown = secs;
                        reporter.report(Event::Progress { message: running_for(&unit, secs) });
                    }
                }
            });
            // cargo's own lines (Compiling, Downloading, manifest errors) come on stderr.
            let err_thread = s.spawn(move || {
                let mut text = String::new();
                for line in BufReader::new(stderr).lines().map_while(std::result::Result::ok) {
                    let t = line.trim_start();
                    if let Some(rest) = t.strip_prefix("Compiling ").or_else(|| t.strip_prefix("Downloaded ")) {
                        reporter.report(Event::Progress { message: rest.to_string() });
                        *current.lock().unwrap_or_else(|e| e.into_inner()) = (rest.to_string(), Instant::now());
                    }
                    text.push_str(&line);
                    text.push('\n');
                }
                text
            });
            let mut units = Vec::new();
            let mut host_dep_infos = Vec::new();
            let mut errors = 0;
            let mut disk_full = false;
            for line in BufReader::new(stdout).lines().map_while(std::result::Result::ok) {
                match Message::parse(&line) {
                    Some(Message::CompilerMessage { message }) => {
                        disk_full |= says_disk_full(message.rendered.as_deref().unwrap_or(&message.message));
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
            let stderr_text = err_thread.join().unwrap_or_default();
            done.store(true, Ordering::Relaxed);
            (units, host_dep_infos, errors, stderr_text, disk_full)
        });
        let status = process::wait("cargo", &cmd, &mut child)?;
        if status.success() {
            return Ok((units, host_dep_infos));
        }
        if disk_full || says_disk_full(&stderr_text) {
            return Err(Error::DiskFull {
                path: self.cargo_target_dir.clone(),
                what: format!("cargo building kernel crate `{}`", self.krate.name),
            });
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

/// The progress line while cargo compiles `unit` (`saxpy-kernels v0.1.0 (/path)`): its name and
/// version, and for how long it has run.
fn running_for(unit: &str, secs: u64) -> String {
    let name: Vec<&str> = unit.split_whitespace().take(2).collect();
    let time = if secs < 60 { format!("{secs}s") } else { format!("{}m {:02}s", secs / 60, secs % 60) };
    format!("{} (rustc, running for {time})", name.join(" "))
}

/// Whether a tool's output says the disk it wrote to is full: `No space left on device`
/// (ENOSPC), or a linker killed by SIGBUS, which is how `ld` dies when the file it maps in the
/// target dir cannot grow.
pub(crate) fn says_disk_full(text: &str) -> bool {
    text.contains("No space left on device")
        || text.contains("os error 28")
        || text.contains("signal 7 [Bus error]")
        || text.contains("(SIGBUS)")
}

/// The folder the nested cargo runs in: the one above the kernel crate's workspace (the
/// workspace itself at the file system's root).
fn config_dir(workspace_root: &Path) -> &Path {
    workspace_root.parent().unwrap_or(workspace_root)
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
    // A `shared_array!` of the kernel's type parameter: its `static` cannot name `T`.
    let generic_shared = m.message.starts_with("can't use generic parameters from outer item")
        && m.rendered.as_deref().is_some_and(|r| r.contains("shared_array!"))
        && m.rendered.as_deref().is_some_and(|r| r.contains("inner static item"));
    let help = match generic_shared {
        true => Some("`shared_array!` declares a `static`, which cannot name a generic kernel's type parameter: take the memory from `ptx_device::shared::dynamic_shared::<T>()` (and set the launch's `shared_mem_bytes`), or declare the array for the largest instance type and cast it: `shared_array![[f64; 16]; 16].cast::<[[T; 16]; 16]>()`".to_string()),
        false => gpu_target_help(&m.message),
    };
    if let Some(help) = help {
        d.notes.push(help.clone());
        // rustc's own rendering is what the user reads: the help goes under it, as rustc's would.
        if let Some(r) = &mut d.rendered {
            let body = r.trim_end().to_string();
            *r = format!("{body}\n  = help: {help}\n\n");
        }
    }
    d
}

/// What to do instead, for rustc errors that mean "this needs `alloc` or `std`", which the GPU
/// target does not have: kernels are `no_std` with `core` alone. Float math (`x.exp()`) is one
/// of them: `std` has it, `core` does not, and ptx-device's `math` calls NVIDIA's libdevice.
fn gpu_target_help(message: &str) -> Option<String> {
    let heap_types = ["Vec", "String", "Box", "Rc", "Arc", "BTreeMap", "VecDeque"];
    let needs_alloc = message.contains("can't find crate for `alloc`")
        || message.starts_with("cannot find macro `vec`")
        || heap_types.iter().any(|t| {
            message == format!("cannot find type `{t}` in this scope")
                || message == format!("failed to resolve: use of undeclared type `{t}`")
        });
    if needs_alloc {
        return Some("GPU kernels have `core` only: there is no heap (`alloc`: `Vec`, `Box`, `String`) on nvptx64-nvidia-cuda; use fixed-size arrays, `ptx_device::shared_array!`, or device memory the host allocates and passes as a pointer".into());
    }
    if message.contains("can't find crate for `std`") {
        return Some("GPU kernels have `core` only: add `#![no_std]` to the kernel crate (and to its dependencies), and use `core::` paths instead of `std::`".into());
    }
    // `std::f32::consts::PI` in a `no_std` crate (rustc's wording changed across nightlies).
    let std_path = ["cannot find module or crate `std`", "unresolved module or unlinked crate `std`", "undeclared crate or module `std`"];
    if std_path.iter().any(|m| message.contains(m)) {
        return Some(
            "kernel crates are `no_std`: write `core::` where the path says `std::` (`core::f32::consts::PI`, `core::mem`, `core::ptr`)"
                .into(),
        );
    }
    if ["println", "print", "eprintln", "eprint", "dbg", "format"]
        .iter()
        .any(|m| message == format!("cannot find macro `{m}` in this scope"))
    {
        return Some(
            "a kernel has no `std` to print or format with: write the values into device memory the host copies back and prints".into(),
        );
    }
    float_math_help(message)
}

/// `x.exp()` / `f32::sqrt(x)`: the libdevice function of `ptx_device::math` to call instead.
fn float_math_help(message: &str) -> Option<String> {
    let rest = message.strip_prefix("no method named `").or_else(|| {
        ["no associated function or constant named `", "no function or associated item named `"]
            .iter()
            .find_map(|p| message.strip_prefix(p))
    })?;
    let (name, rest) = rest.split_once('`')?;
    let ty = ["f32", "f64"].into_iter().find(|t| rest.starts_with(&format!(" found for type `{t}`")))?;
    let call = match name {
        "ln" => "log(x)".to_string(),
        "ln_1p" => "log1p(x)".into(),
        "exp_m1" => "expm1(x)".into(),
        "powf" => "pow(x, y)".into(),
        "powi" => format!("pow(x, n as {ty})"),
        "log" => "log(x) / math::log(base)".into(),
        "mul_add" => "fma(a, b, c)".into(),
        "abs" => "fabs(x)".into(),
        "sin_cos" => "sincos(x)".into(),
        "atan2" | "hypot" | "copysign" => format!("{name}(y, x)"),
        "exp" | "exp2" | "log2" | "log10" | "sin" | "cos" | "tan" | "asin" | "acos" | "atan" | "sinh" | "cosh" | "tanh" | "asinh"
        | "acosh" | "atanh" | "sqrt" | "cbrt" | "floor" | "ceil" | "trunc" | "round" => format!("{name}(x)"),
        _ => return None,
    };
    Some(format!(
        "`core` has no `{ty}::{name}` on nvptx64-nvidia-cuda: call `ptx_device::math::{call}` (NVIDIA's libdevice, as CUDA's math library; `math::fast` has the `__expf`-style approximations)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_front_end_says_what_runs_and_for_how_long() {
        assert_eq!(running_for("big-kernels v0.1.0 (/src/big kernels)", 7), "big-kernels v0.1.0 (rustc, running for 7s)");
        assert_eq!(running_for("big-kernels v0.1.0 (/src)", 86), "big-kernels v0.1.0 (rustc, running for 1m 26s)");
    }

    #[test]
    fn a_full_disk_is_recognised_in_what_cargo_and_the_linker_print() {
        assert!(says_disk_full("error: failed to write /t/deps/libk.rmeta: No space left on device (os error 28)"));
        assert!(says_disk_full("  = note: collect2: fatal error: ld terminated with signal 7 [Bus error]\n"));
        assert!(says_disk_full("error: linking with `cc` failed: exit status: 1 (signal: 7 (SIGBUS))"));
        assert!(!says_disk_full("error[E0308]: mismatched types"));
    }

    #[test]
    fn alloc_and_std_errors_say_kernels_have_core_only() {
        let m = |message: &str| RustcDiagnostic {
            message: message.into(),
            level: "error".into(),
            spans: Vec::new(),
            rendered: Some(format!("error[E0463]: {message}\n --> src/lib.rs:3:1\n\n")),
        };
        let d = from_rustc(&m("can't find crate for `alloc`"));
        assert!(d.notes[0].starts_with("GPU kernels have `core` only: there is no heap"), "{:?}", d.notes);
        let r = d.rendered.unwrap();
        assert!(r.ends_with("--> src/lib.rs:3:1\n  = help: GPU kernels have `core` only: there is no heap (`alloc`: `Vec`, `Box`, `String`) on nvptx64-nvidia-cuda; use fixed-size arrays, `ptx_device::shared_array!`, or device memory the host allocates and passes as a pointer\n\n"), "{r}");
        assert!(from_rustc(&m("cannot find type `Vec` in this scope")).notes[0].contains("no heap"));
        assert!(from_rustc(&m("cannot find macro `vec` in this scope")).notes[0].contains("no heap"));
        assert!(from_rustc(&m("can't find crate for `std`")).notes[0].contains("add `#![no_std]`"));
        assert!(from_rustc(&m("cannot find type `Foo` in this scope")).notes.is_empty());
    }

    #[test]
    fn a_shared_array_of_a_generic_kernels_type_says_what_to_use() {
        let rendered = "error[E0401]: can't use generic parameters from outer item\n   --> src/lib.rs:5:39\n    |\n5 |     let t = ptx_device::shared_array![T; 16];\n    |             --------------------------^-----\n    |             generic parameter used in this inner static item\n\n";
        let m = RustcDiagnostic {
            message: "can't use generic parameters from outer item".into(),
            level: "error".into(),
            spans: Vec::new(),
            rendered: Some(rendered.into()),
        };
        let d = from_rustc(&m);
        assert!(d.notes[0].contains("`ptx_device::shared::dynamic_shared::<T>()`"), "{:?}", d.notes);
        assert!(d.rendered.unwrap().contains("= help: `shared_array!` declares a `static`"));
        // Elsewhere (an inner fn using the outer `T`): rustc's own words are enough.
        let m = RustcDiagnostic { rendered: Some(rendered.replace("shared_array!", "inner_fn")), ..m };
        assert!(from_rustc(&m).notes.is_empty());
    }

    #[test]
    fn float_math_std_paths_and_printing_name_what_kernels_use_instead() {
        // The messages of the pinned nightly, and the older wording of the same errors.
        let help = |message: &str| gpu_target_help(message).unwrap_or_default();
        assert_eq!(
            help("no method named `exp` found for type `f32` in the current scope"),
            "`core` has no `f32::exp` on nvptx64-nvidia-cuda: call `ptx_device::math::exp(x)` (NVIDIA's libdevice, as CUDA's math library; `math::fast` has the `__expf`-style approximations)"
        );
        assert!(help("no associated function or constant named `sqrt` found for type `f64` in the current scope").contains("`f64::sqrt`"));
        assert!(help("no function or associated item named `ln` found for type `f32` in the current scope")
            .contains("`ptx_device::math::log(x)`"));
        assert!(help("no method named `powi` found for type `f64` in the current scope").contains("`ptx_device::math::pow(x, n as f64)`"));
        assert!(help("no method named `mul_add` found for type `f32` in the current scope").contains("math::fma(a, b, c)"));
        assert!(gpu_target_help("no method named `frobnicate` found for type `f32` in the current scope").is_none());
        assert!(gpu_target_help("no method named `exp` found for type `u32` in the current scope").is_none());
        for m in ["cannot find module or crate `std` in this scope", "failed to resolve: use of unresolved module or unlinked crate `std`"]
        {
            assert!(help(m).contains("`core::f32::consts::PI`"), "{m}");
        }
        assert!(help("cannot find macro `println` in this scope").starts_with("a kernel has no `std` to print"));
        assert!(gpu_target_help("cannot find macro `my_macro` in this scope").is_none());
    }

    #[test]
    fn the_nested_cargo_runs_above_the_kernel_workspace() {
        // kernels/.cargo/config.toml (for editors) stays out of the nested build.
        assert_eq!(config_dir(Path::new("/p/my-gpu/kernels")), Path::new("/p/my-gpu"));
        assert_eq!(config_dir(Path::new("/")), Path::new("/"));
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
}
