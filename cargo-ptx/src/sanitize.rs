//! `cargo ptx sanitize [--tool T] -- <cargo command>`: builds the programs a cargo command
//! would run (cargo's JSON messages name the executables), runs each under NVIDIA's
//! compute-sanitizer, and reports every finding at the kernel's source line. The line comes
//! from the line tables every build embeds (Rust debug line info, nvcc `-lineinfo`), which
//! compute-sanitizer prints as `at kernel+0x70 in /path/file.rs:16`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use ptx_build::internals::tools::{self as toolchain, process};
use serde::Serialize;

use crate::error::{Error, Result};
use crate::tools::CudaTool;

pub(crate) mod sources;
pub use sources::{resolve_paths, LineTables};

/// compute-sanitizer's tools.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Tool {
    Memcheck,
    Racecheck,
    Synccheck,
    Initcheck,
}

impl Tool {
    pub fn name(self) -> &'static str {
        match self {
            Tool::Memcheck => "memcheck",
            Tool::Racecheck => "racecheck",
            Tool::Synccheck => "synccheck",
            Tool::Initcheck => "initcheck",
        }
    }
}

/// What to run.
#[derive(Clone, Debug)]
pub struct SanitizeOptions {
    pub tool: Tool,
    /// `test --release -- --ignored`: a cargo subcommand and its arguments; after `--`, the
    /// programs' own arguments.
    pub cargo_args: Vec<String>,
    /// Programs to run as they are (no cargo build); `cargo_args` are then their arguments.
    pub exes: Vec<PathBuf>,
}

/// One report of compute-sanitizer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub tool: Tool,
    /// `error` or `warning`, as compute-sanitizer classes it.
    pub level: String,
    /// Its first line: `Invalid __global__ write of size 4 bytes`.
    pub message: String,
    /// The kernel or device function (demangled).
    pub function: Option<String>,
    /// The source file and line of the access, when the image has line tables.
    pub file: Option<String>,
    pub line: Option<u32>,
    /// The rest: thread and block, address, the other access of a race (of the first report,
    /// when several threads made the same one).
    pub details: Vec<String>,
    /// How many threads reported this same access (memcheck reports each one).
    pub count: usize,
    /// The program it came from.
    pub program: PathBuf,
    /// What failed after it because of it: a kernel's fault leaves the context unusable, and
    /// compute-sanitizer reports every later API call's error
    /// (`CUDA_ERROR_LAUNCH_FAILED on cuMemFreeAsync`).
    pub consequences: Vec<String>,
}

/// Every program run and what was found.
#[derive(Clone, Debug, Default, Serialize)]
pub struct SanitizeReport {
    pub findings: Vec<Finding>,
    pub programs: Vec<ProgramRun>,
}

/// One program under compute-sanitizer.
#[derive(Clone, Debug, Serialize)]
pub struct ProgramRun {
    pub program: PathBuf,
    /// Its exit code under the sanitizer (`None`: killed by a signal).
    pub exit_code: Option<i32>,
    pub findings: usize,
}

impl SanitizeReport {
    /// Nothing found and every program succeeded.
    pub fn clean(&self) -> bool {
        self.findings.is_empty() && self.programs.iter().all(|p| p.exit_code == Some(0))
    }
}

/// How a cargo subcommand maps to a build that names executables and to how they are run.
#[derive(Debug, PartialEq, Eq)]
struct Plan {
    /// `cargo <build_args> --message-format=json-render-diagnostics`.
    build_args: Vec<String>,
    /// Passed to every program.
    program_args: Vec<String>,
    /// Keep only test harness executables (`cargo test`, `cargo bench`) or only bins/examples.
    tests: bool,
}

fn plan(cargo_args: &[String]) -> Result<Plan> {
    let (ours, program_args) = match cargo_args.iter().position(|a| a == "--") {
        Some(i) => (&cargo_args[..i], cargo_args[i + 1..].to_vec()),
        None => (cargo_args, Vec::new()),
    };
    let Some((sub, rest)) = ours.split_first() else {
        return Err(usage("no cargo command given"));
    };
    let mut build_args: Vec<String>;
    let tests = match sub.as_str() {
        "test" | "t" => {
            build_args = vec!["test".into(), "--no-run".into()];
            true
        }
        "bench" => {
            build_args = vec!["bench".into(), "--no-run".into()];
            true
        }
        // `cargo run` builds what it would run; `build` names every program it builds.
        "run" | "r" | "build" | "b" => {
            build_args = vec!["build".into()];
            false
        }
        other => return Err(usage(&format!("`{other}` is not a cargo command that runs programs"))),
    };
    if rest.iter().any(|a| a.starts_with("--message-format")) {
        return Err(usage("--message-format is set by sanitize itself (it reads cargo's JSON to find the programs)"));
    }
    build_args.extend(rest.iter().cloned());
    let mut program_args = program_args;
    if sub == "bench" {
        program_args.insert(0, "--bench".into());
    }
    Ok(Plan { build_args, program_args, tests })
}

fn usage(what: &str) -> Error {
    Error::Sanitize {
        message: format!("{what}: sanitize runs the programs of `test`, `bench`, `run` or `build`"),
        help: "for example `cargo ptx sanitize -- test --release`, or `cargo ptx sanitize -- run --release --example bench -- ARGS`".into(),
    }
}

/// Whether libcuda can be found where the dynamic loader looks: compute-sanitizer needs the
/// driver, and without one every program would fail in ways that hide the reason.
pub fn driver_present() -> bool {
    let mut dirs: Vec<PathBuf> = std::env::var_os("LD_LIBRARY_PATH").map(|v| std::env::split_paths(&v).collect()).unwrap_or_default();
    dirs.extend(
        ["/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/local/cuda/compat", "/usr/lib/wsl/lib"]
            .iter()
            .map(PathBuf::from),
    );
    if dirs.iter().any(|d| d.join("libcuda.so.1").exists()) {
        return true;
    }
    // The loader's cache covers the rest (`/etc/ld.so.conf.d`).
    let ldconfig = toolchain::on_path("ldconfig").or_else(|| Some(PathBuf::from("/sbin/ldconfig")).filter(|p| p.is_file()));
    ldconfig
        .and_then(|l| process::probe(Command::new(l).arg("-p")).ok())
        .is_some_and(|o| process::stdout_text(&o).contains("libcuda.so.1 "))
}

/// Builds, runs and parses; events go to `reporter` as the programs finish.
pub fn sanitize(opts: &SanitizeOptions, reporter: &dyn SanitizeReporter) -> Result<SanitizeReport> {
    let plan = if opts.exes.is_empty() {
        plan(&opts.cargo_args)?
    } else {
        if let Some(missing) = opts.exes.iter().find(|p| !p.is_file()) {
            return Err(Error::Sanitize {
                message: format!("--exe {}: no such program", missing.display()),
                help: "give the path of an executable, or leave --exe out and name a cargo command after `--`".into(),
            });
        }
        Plan { build_args: Vec::new(), program_args: opts.cargo_args.clone(), tests: false }
    };
    let sanitizer = CudaTool::ComputeSanitizer.find()?;
    if !driver_present() {
        return Err(Error::NoDriver);
    }
    let programs = if opts.exes.is_empty() { build(&plan, reporter)? } else { opts.exes.clone() };
    if programs.is_empty() {
        return Err(Error::Sanitize {
            message: format!("`cargo {}` built no program to run", plan.build_args.join(" ")),
            help: "name a package or target with programs (`-p NAME`, `--bins`, `--tests`, `--example NAME`)".into(),
        });
    }
    let logs = tempfile::tempdir().map_err(|e| Error::io("create a temporary folder in", std::env::temp_dir(), e))?;
    // Files are named from here, as the build's diagnostics name them.
    let cwd = std::env::current_dir().unwrap_or_default();
    let mut report = SanitizeReport::default();
    for (i, program) in programs.iter().enumerate() {
        reporter.status("Sanitizing", &format!("{} ({})", display(program), opts.tool.name()));
        let log = logs.path().join(format!("{i}.log"));
        let mut cmd = Command::new(&sanitizer);
        cmd.args(["--tool", opts.tool.name(), "--show-backtrace", "device", "--log-file"])
            .arg(&log)
            .arg(program)
            .args(&plan.program_args)
            // The program's own output goes to stderr: stdout is for `--message-format json`.
            .stdout(Stdio::from(std::io::stderr()))
            .stderr(Stdio::inherit());
        let status =
            process::spawn("compute-sanitizer", &mut cmd).and_then(|mut child| process::wait("compute-sanitizer", &cmd, &mut child))?;
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let mut findings = consequences(group(parse(&text, opts.tool, program)));
        resolve_paths(&mut findings, &LineTables::of_program(program), &cwd);
        for f in &findings {
            reporter.finding(f);
        }
        report.programs.push(ProgramRun { program: program.clone(), exit_code: status.code(), findings: findings.len() });
        report.findings.extend(findings);
        // compute-sanitizer's own failures (it could not start the program, or attach) are
        // only in its log: show them when nothing else explains a failed run.
        if !status.success() && report.programs.last().is_some_and(|p| p.findings == 0) {
            let own: Vec<&str> = text.lines().filter(|l| l.contains("Error") || l.contains("error")).collect();
            if !own.is_empty() {
                reporter.status("Failed", &format!("{}: {}", display(program), own.join(" | ").replace("========= ", "")));
            }
        }
    }
    Ok(report)
}

/// What the front end prints while sanitize runs.
pub trait SanitizeReporter: ptx_build::Reporter {
    fn status(&self, verb: &'static str, message: &str);
    fn finding(&self, finding: &Finding);
}

fn display(p: &Path) -> String {
    std::env::current_dir()
        .ok()
        .and_then(|c| p.strip_prefix(c).ok().map(|r| r.display().to_string()))
        .unwrap_or_else(|| p.display().to_string())
}

/// Runs the cargo build and returns the executables its JSON messages name.
fn build(plan: &Plan, reporter: &dyn SanitizeReporter) -> Result<Vec<PathBuf>> {
    let cargo = std::env::var_os("CARGO").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("cargo"));
    reporter.status("Building", &format!("cargo {}", plan.build_args.join(" ")));
    let mut cmd = Command::new(&cargo);
    // cargo's messages on stdout, read here; its progress and errors on the terminal.
    cmd.args(&plan.build_args).arg("--message-format=json-render-diagnostics").stdout(Stdio::piped()).stderr(Stdio::inherit());
    let out = process::spawn("cargo", &mut cmd).and_then(|child| process::wait_output("cargo", &cmd, child))?;
    if !out.status.success() {
        return Err(Error::Sanitize {
            message: format!("`cargo {}` failed (its errors are above)", plan.build_args.join(" ")),
            help: "fix the build, then run `cargo ptx sanitize` again".into(),
        });
    }
    Ok(executables(&process::stdout_text(&out), plan.tests))
}

/// Executables of `compiler-artifact` messages (read with `cargo_metadata`, as cargo-aware tools
/// read them): test harnesses for `test`/`bench`, bins and examples otherwise.
fn executables(json: &str, tests: bool) -> Vec<PathBuf> {
    use cargo_metadata::{Message, TargetKind};
    let mut out = Vec::new();
    for message in Message::parse_stream(json.as_bytes()).flatten() {
        let Message::CompilerArtifact(a) = message else { continue };
        let Some(exe) = a.executable else { continue };
        let runnable = a.target.kind.iter().any(|k| matches!(k, TargetKind::Bin | TargetKind::Example));
        let keep = if tests { a.profile.test } else { !a.profile.test && runnable };
        if keep && !out.iter().any(|p: &PathBuf| p.as_path() == exe.as_std_path()) {
            out.push(exe.into_std_path_buf());
        }
    }
    out
}

/// Reads compute-sanitizer's log: a finding starts at an unindented line after the `=========`
/// prefix; indented lines below it are its details (`at f+0x70 in file.rs:16`, `by thread ...`).
pub fn parse(log: &str, tool: Tool, program: &Path) -> Vec<Finding> {
    let mut findings: Vec<Finding> = Vec::new();
    for raw in log.lines() {
        let Some(body) = raw.strip_prefix("=========") else { continue };
        let body = body.strip_prefix(' ').unwrap_or(body);
        if body.trim().is_empty() {
            continue;
        }
        let indented = body.starts_with(' ');
        let text = body.trim();
        if !indented {
            if is_summary(text) {
                continue;
            }
            let (level, message) = match text.split_once(": ") {
                Some((l, m)) if l == "Error" || l == "Warning" => (l.to_lowercase(), m.to_string()),
                _ => ("error".to_string(), text.to_string()),
            };
            let mut f = Finding {
                tool,
                level,
                message,
                function: None,
                file: None,
                line: None,
                details: Vec::new(),
                count: 1,
                program: program.to_path_buf(),
                consequences: Vec::new(),
            };
            // Racecheck puts the first access on the heading line itself.
            locate(&mut f, text);
            findings.push(f);
            continue;
        }
        let Some(f) = findings.last_mut() else { continue };
        // Host backtraces say nothing about the kernel's source.
        if text.starts_with("Host Frame") || text.starts_with("Saved host backtrace") {
            continue;
        }
        if f.file.is_none() {
            locate(f, text);
        }
        f.details.push(crate::inspect::demangle_words(text));
    }
    findings
}

/// One finding per distinct (message, function, file, line), counting the threads that made it:
/// an out-of-bounds store in a kernel is reported once per thread.
pub fn group(findings: Vec<Finding>) -> Vec<Finding> {
    let mut out: Vec<Finding> = Vec::new();
    for f in findings {
        match out.iter_mut().find(|g| g.message == f.message && g.function == f.function && g.file == f.file && g.line == f.line) {
            Some(g) => g.count += f.count,
            None => out.push(f),
        }
    }
    out
}

/// compute-sanitizer's report of a failed API call, as (error, call): `Program hit
/// CUDA_ERROR_LAUNCH_FAILED (error 719) due to "unspecified launch failure" on CUDA API call to
/// cuMemFreeAsync.`
fn api_error(message: &str) -> Option<(&str, &str)> {
    let rest = message.strip_prefix("Program hit ")?;
    let error = rest.split_whitespace().next()?;
    let call = rest.rsplit_once(" on CUDA API call to ")?.1.trim().trim_end_matches('.');
    Some((error, call))
}

/// Errors after which the context is unusable: every later call returns the same error.
fn leaves_the_context_unusable(error: &str) -> bool {
    let driver = [
        "CUDA_ERROR_LAUNCH_FAILED",
        "CUDA_ERROR_ILLEGAL_ADDRESS",
        "CUDA_ERROR_MISALIGNED_ADDRESS",
        "CUDA_ERROR_INVALID_ADDRESS_SPACE",
        "CUDA_ERROR_INVALID_PC",
        "CUDA_ERROR_ILLEGAL_INSTRUCTION",
        "CUDA_ERROR_HARDWARE_STACK_ERROR",
        "CUDA_ERROR_ASSERT",
        "CUDA_ERROR_LAUNCH_TIMEOUT",
    ];
    let runtime = [
        "cudaErrorLaunchFailure",
        "cudaErrorIllegalAddress",
        "cudaErrorMisalignedAddress",
        "cudaErrorInvalidAddressSpace",
        "cudaErrorInvalidPc",
        "cudaErrorIllegalInstruction",
        "cudaErrorHardwareStackError",
        "cudaErrorAssert",
        "cudaErrorLaunchTimeout",
    ];
    driver.contains(&error) || runtime.contains(&error)
}

/// After a kernel's fault every later API call of the program fails with the same error, and
/// compute-sanitizer reports each one: those reports become consequences of the finding that
/// caused them (the kernel's, or the first report of that error), not findings of their own.
pub fn consequences(findings: Vec<Finding>) -> Vec<Finding> {
    let mut out: Vec<Finding> = Vec::new();
    for f in findings {
        if let Some((error, call)) = api_error(&f.message).filter(|(e, _)| leaves_the_context_unusable(e)) {
            let cause = out
                .iter_mut()
                .rev()
                .find(|g| g.program == f.program && (g.function.is_some() || api_error(&g.message).is_some_and(|(e, _)| e == error)));
            if let Some(cause) = cause {
                let times = if f.count > 1 { format!(" ({} times)", f.count) } else { String::new() };
                cause.consequences.push(format!("{error} on {call}{times}"));
                continue;
            }
        }
        out.push(f);
    }
    out
}

fn is_summary(text: &str) -> bool {
    text.starts_with("COMPUTE-SANITIZER") || text.contains(" SUMMARY:") || text.starts_with("Target application returned")
}

/// `at saxpy+0x70 in /p/src/lib.rs:16` (also `at 0x70 in saxpy`, without line tables).
fn locate(f: &mut Finding, text: &str) {
    let Some(at) = text.find("at ").map(|i| &text[i + 3..]) else { return };
    let (what, place) = match at.split_once(" in ") {
        Some((w, p)) => (w, Some(p)),
        None => (at, None),
    };
    let func = what.split('+').next().unwrap_or(what).trim();
    if !func.is_empty() && !func.starts_with("0x") && f.function.is_none() {
        f.function = Some(crate::inspect::demangle_words(func));
    }
    let Some(place) = place else { return };
    // `file.rs:16` possibly followed by ` [4 hazards]` or `:col`.
    let place = place.split(" [").next().unwrap_or(place).trim();
    let mut parts = place.rsplitn(2, ':');
    let (Some(line), Some(file)) = (parts.next(), parts.next()) else {
        if f.function.is_none() && !place.starts_with("0x") {
            f.function = Some(crate::inspect::demangle_words(place));
        }
        return;
    };
    if let Ok(line) = line.parse::<u32>() {
        f.file = Some(file.to_string());
        f.line = Some(line);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn cargo_commands_become_builds_that_name_programs() {
        let p = plan(&s(&["test", "--release", "-p", "demo", "--", "--ignored"])).unwrap();
        assert_eq!(p.build_args, s(&["test", "--no-run", "--release", "-p", "demo"]));
        assert_eq!(p.program_args, s(&["--ignored"]));
        assert!(p.tests);
        let p = plan(&s(&["run", "--example", "bench"])).unwrap();
        assert_eq!((p.build_args, p.tests), (s(&["build", "--example", "bench"]), false));
        assert_eq!(plan(&s(&["bench"])).unwrap().program_args, s(&["--bench"]));
        let e = plan(&s(&["check"])).unwrap_err().to_string();
        assert!(
            e.contains("`check` is not a cargo command that runs programs") && e.contains("cargo ptx sanitize -- test --release"),
            "{e}"
        );
        let e = plan(&s(&["test", "--message-format", "short"])).unwrap_err().to_string();
        assert!(e.contains("--message-format is set by sanitize itself"), "{e}");
        assert!(plan(&[]).unwrap_err().to_string().contains("no cargo command given"));
    }

    #[test]
    fn executables_are_read_from_cargo_json() {
        // What cargo 1.95 prints for `cargo test --no-run --message-format=json` of a bin and a test.
        let artifact = |kind: &str, test: bool, exe: &str| {
            let exe = if exe.is_empty() { "null".to_string() } else { format!("\"{exe}\"") };
            format!(
                r#"{{"reason":"compiler-artifact","package_id":"path+file:///src/demo#0.1.0","manifest_path":"/src/demo/Cargo.toml","target":{{"kind":["{kind}"],"crate_types":["{ct}"],"name":"demo","src_path":"/src/demo/src/main.rs","edition":"2021","doc":true,"doctest":false,"test":true}},"profile":{{"opt_level":"3","debuginfo":0,"debug_assertions":false,"overflow_checks":false,"test":{test}}},"features":[],"filenames":["/t/x"],"executable":{exe},"fresh":false}}"#,
                ct = if kind == "lib" { "lib" } else { "bin" }
            )
        };
        let json = [
            artifact("lib", false, ""),
            artifact("bin", false, "/t/release/demo"),
            artifact("test", true, "/t/release/deps/gpu-1234"),
            artifact("bin", true, "/t/release/deps/demo-99"),
            r#"{"reason":"build-finished","success":true}"#.to_string(),
            "a line a build script printed".to_string(),
        ]
        .join("\n");
        assert_eq!(executables(&json, true), [PathBuf::from("/t/release/deps/gpu-1234"), PathBuf::from("/t/release/deps/demo-99")]);
        assert_eq!(executables(&json, false), [PathBuf::from("/t/release/demo")]);
    }

    /// The shapes of compute-sanitizer 13's reports (memcheck, racecheck, a host API error).
    #[test]
    fn findings_carry_the_source_line() {
        let log = "\
========= COMPUTE-SANITIZER
========= Invalid __global__ write of size 4 bytes
=========     at oob_write+0x90 in /src/demo/cuda/bad.cu:9
=========     by thread (100,0,0) in block (0,0,0)
=========     Address 0x7f0000000190 is out of bounds
=========     Saved host backtrace up to driver entry point at kernel launch time
=========         Host Frame: cuLaunchKernel [0x2f2c4a] in libcuda.so.1
=========
========= Error: Race reported between Write access at race_rs+0x110 in /src/demo/kernels/src/lib.rs:31
=========     and Read access at race_rs+0x150 in /src/demo/kernels/src/lib.rs:33 [124 hazards]
=========
========= Program hit CUDA_ERROR_LAUNCH_FAILED (error 719) due to \"unspecified launch failure\" on CUDA API call to cuStreamSynchronize.
=========
========= ERROR SUMMARY: 3 errors
";
        let f = parse(log, Tool::Memcheck, Path::new("/t/demo"));
        assert_eq!(f.len(), 3, "{f:#?}");
        assert_eq!(f[0].message, "Invalid __global__ write of size 4 bytes");
        assert_eq!(
            (f[0].function.as_deref(), f[0].file.as_deref(), f[0].line),
            (Some("oob_write"), Some("/src/demo/cuda/bad.cu"), Some(9))
        );
        assert!(f[0].details.iter().any(|d| d == "by thread (100,0,0) in block (0,0,0)"), "{:?}", f[0].details);
        assert!(!f[0].details.iter().any(|d| d.contains("Host Frame")), "{:?}", f[0].details);
        assert_eq!((f[1].level.as_str(), f[1].file.as_deref(), f[1].line), ("error", Some("/src/demo/kernels/src/lib.rs"), Some(31)));
        assert_eq!(f[1].message, "Race reported between Write access at race_rs+0x110 in /src/demo/kernels/src/lib.rs:31");
        assert!(f[1].details[0].contains("lib.rs:33 [124 hazards]"));
        assert_eq!((f[2].file.as_deref(), f[2].line), (None, None));
        assert!(parse("========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n", Tool::Memcheck, Path::new("p")).is_empty());
    }

    /// Seen on an H100 (driver 580, compute-sanitizer 2025.3 of CUDA 13.0) with
    /// tests/fixtures/sanitize-demo: one report per thread, file names without folders.
    #[test]
    fn per_thread_reports_are_grouped_and_file_names_get_their_folder() {
        let log = "\
========= COMPUTE-SANITIZER
========= Invalid __global__ write of size 4 bytes
=========     at oob_write_rs+0x110 in lib.rs:11
=========     by thread (232,0,0) in block (3,0,0)
=========     Access to 0x2a9a000fa0 is out of bounds
=========     and is 1 bytes after the nearest allocation at 0x2a9a000000 of size 4,000 bytes
========= 
========= Invalid __global__ write of size 4 bytes
=========     at oob_write_rs+0x110 in lib.rs:11
=========     by thread (233,0,0) in block (3,0,0)
=========     Access to 0x2a9a000fa4 is out of bounds
=========     and is 5 bytes after the nearest allocation at 0x2a9a000000 of size 4,000 bytes
========= 
========= ERROR SUMMARY: 2 errors
";
        let mut f = group(parse(log, Tool::Memcheck, Path::new("p")));
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!((f[0].count, f[0].line), (2, Some(11)));
        assert!(f[0].details.contains(&"by thread (232,0,0) in block (3,0,0)".to_string()));

        // The embedded PTX's line table, as an executable holds it.
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("kernels ñ").join("src");
        std::fs::create_dir_all(&src).unwrap();
        std::fs::write(src.join("lib.rs"), "pub unsafe fn oob_write_rs() {}\n").unwrap();
        let exe = dir.path().join("demo");
        let escaped = src.join("lib.rs").display().to_string().replace('ñ', "\\303\\261");
        let body = format!(
            "\x7fELF\0junk\n.version 7.8\n\t.file\t1 \"/other/src/lib.rs\"\n\t.file\t2 \"{escaped}\"\n\t.file\t3 \"/x/cuda/bugs.cu\"\n"
        );
        std::fs::write(&exe, body).unwrap();
        let tables = LineTables::of_program(&exe);
        assert_eq!(tables.paths.len(), 3, "{:?}", tables.paths);
        assert_eq!(tables.paths[1], src.join("lib.rs").display().to_string());
        resolve_paths(&mut f, &tables, dir.path());
        assert_eq!(f[0].file.as_deref(), Some(tables.paths[1].as_str()), "of two lib.rs, the one defining the kernel");
        let mut cu = vec![Finding { file: Some("bugs.cu".into()), function: Some("race_cu".into()), ..f[0].clone() }];
        resolve_paths(&mut cu, &tables, dir.path());
        assert_eq!(cu[0].file.as_deref(), Some("/x/cuda/bugs.cu"), "the one file of that name");
    }

    /// One out-of-bounds write, then the context is lost: memcheck reports the failed API calls
    /// that follow (cudarc's synchronize, frees and unloads), which are consequences of the write.
    /// The log: compute-sanitizer 2025.3.1 (CUDA 13.0) on an H100, `sanitize-demo oob-rs`.
    #[test]
    fn api_errors_after_a_kernel_fault_are_its_consequences() {
        let log = include_str!("sanitize/testdata/oob-rs.memcheck.log");
        let f = consequences(group(parse(log, Tool::Memcheck, Path::new("p"))));
        assert_eq!(f.len(), 1, "one bug, one finding: {f:#?}");
        assert_eq!((f[0].message.as_str(), f[0].line, f[0].count), ("Invalid __global__ write of size 4 bytes", Some(11), 32));
        assert_eq!(
            f[0].consequences,
            [
                "CUDA_ERROR_LAUNCH_FAILED on cuStreamSynchronize",
                "CUDA_ERROR_LAUNCH_FAILED on cuMemFreeAsync",
                "CUDA_ERROR_LAUNCH_FAILED on cuEventDestroy_v2 (2 times)",
                "CUDA_ERROR_LAUNCH_FAILED on cuModuleUnload (2 times)"
            ]
        );
        // Before, each failed call was a finding of its own: 5 for one bug.
        assert_eq!(group(parse(log, Tool::Memcheck, Path::new("p"))).len(), 5);

        // Without a kernel's report before them, the first failed call is the finding and the
        // ones with its error follow from it; an error that leaves the context usable stands alone.
        let log = "\
========= Program hit CUDA_ERROR_INVALID_VALUE (error 1) due to \"invalid argument\" on CUDA API call to cuMemcpyHtoDAsync_v2.
========= Program hit CUDA_ERROR_ILLEGAL_ADDRESS (error 700) due to \"an illegal memory access was encountered\" on CUDA API call to cuStreamSynchronize.
=========     Saved host backtrace up to driver entry point at error
=========         Host Frame: cuStreamSynchronize [0x2f2c4a] in libcuda.so.1
========= Program hit CUDA_ERROR_ILLEGAL_ADDRESS (error 700) due to \"an illegal memory access was encountered\" on CUDA API call to cuMemFreeAsync.
========= Program hit CUDA_ERROR_ILLEGAL_ADDRESS (error 700) due to \"an illegal memory access was encountered\" on CUDA API call to cuMemFreeAsync.
";
        let f = consequences(group(parse(log, Tool::Memcheck, Path::new("p"))));
        let messages: Vec<&str> = f.iter().map(|f| f.message.split(" due to").next().unwrap()).collect();
        assert_eq!(messages, ["Program hit CUDA_ERROR_INVALID_VALUE (error 1)", "Program hit CUDA_ERROR_ILLEGAL_ADDRESS (error 700)"]);
        assert_eq!(f[1].consequences, ["CUDA_ERROR_ILLEGAL_ADDRESS on cuMemFreeAsync (2 times)"]);
        assert!(f[0].consequences.is_empty());
    }

    #[test]
    fn a_kernel_without_line_tables_is_named_without_a_line() {
        let f = parse("========= Invalid __global__ read of size 4 bytes\n=========     at k+0x30\n", Tool::Memcheck, Path::new("p"));
        assert_eq!((f[0].function.as_deref(), f[0].file.as_deref()), (Some("k"), None));
    }
}
