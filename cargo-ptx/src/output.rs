//! Printing: cargo-style status lines (a progress bar on a terminal), or JSON lines.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::Mutex;

use crate::doctor::{Report, Status};
use console::{style, Style};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use ptx_build::{Artifact, ArtifactKind, Event, Reporter};
use ptx_build::{BuildOutput, Diagnostic, Level};
use serde_json::json;

use crate::sanitize::{Finding, ProgramRun, SanitizeReport, SanitizeReporter};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Human,
    Json,
}

pub struct Printer {
    format: Format,
    quiet: bool,
    /// `-v` count: 1 lists each artifact and the resource table, 2 also tool command lines.
    verbose: u8,
    /// The artifacts of a human build without `-v`: summed up in one line before `Finished`.
    artifacts: Mutex<Vec<(ArtifactKind, std::path::PathBuf, bool)>>,
    bar: Option<ProgressBar>,
    /// Serialises JSON lines and bar updates written from several threads.
    lock: Mutex<()>,
    /// The diagnostics shown, by what they say and where: one finding reached twice (a header
    /// that `cargo ptx build x/a.cu y/b.cu -I inc` checks for both files) is shown once.
    shown: Mutex<std::collections::HashSet<String>>,
}

impl Printer {
    pub fn new(format: Format, quiet: bool, verbose: u8) -> Printer {
        let tty = std::io::stderr().is_terminal();
        let bar = (tty && !quiet).then(|| {
            let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template("{prefix:>12.cyan.bold} [{bar:27}] {pos}/{len}: {wide_msg}")
                    .expect("valid template")
                    .progress_chars("=> "),
            );
            bar.set_prefix("Building");
            bar
        });
        if verbose >= 2 {
            // `-vv`: each tool's command line, as cargo's `Running` lines (above the bar).
            let bar = bar.clone();
            ptx_build::internals::tools::process::echo_commands(move |line| {
                let text = format!("{} `{line}`", style(format!("{:>12}", "Running")).green().bold());
                match &bar {
                    Some(bar) => bar.println(text),
                    None => {
                        let _ = writeln!(std::io::stderr(), "{text}");
                    }
                }
            });
        }
        Printer { format, quiet, verbose, artifacts: Mutex::new(Vec::new()), bar, lock: Mutex::new(()), shown: Mutex::default() }
    }

    pub fn colors(&self) -> bool {
        console::colors_enabled_stderr()
    }

    fn eprint(&self, line: &str) {
        match &self.bar {
            Some(bar) => bar.println(line),
            None => {
                let _ = writeln!(std::io::stderr(), "{line}");
            }
        }
    }

    fn json(&self, value: serde_json::Value) {
        let _g = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{value}");
        let _ = out.flush();
    }

    /// `   Compiling foo`, the verb right-aligned in 12 columns, like cargo.
    pub fn status(&self, verb: &str, message: &str) {
        if self.quiet {
            return;
        }
        let verb = format!("{verb:>12}");
        let verb = if verb.trim() == "Fresh" { style(verb).dim().bold() } else { style(verb).green().bold() };
        self.eprint(&format!("{verb} {message}"));
    }

    fn diagnostic(&self, d: &Diagnostic) {
        // Paths as the user would write them from where the command ran.
        let cwd = std::env::current_dir().unwrap_or_default();
        let rendered = d.rendered_from(&cwd);
        let key = format!("{:?}|{}|{:?}|{:?}|{:?}", d.level, d.message, d.location_from(&cwd), d.notes, rendered);
        if !self.shown.lock().unwrap_or_else(|e| e.into_inner()).insert(key) {
            return;
        }
        if self.format == Format::Json {
            self.json(json!({
                "reason": "ptx-diagnostic",
                "level": d.level,
                "message": d.message,
                "file": d.file,
                "line": d.line,
                "column": d.column,
                "notes": d.notes,
            }));
            // The same in cargo's shape, which editors and CI annotators read.
            self.json(d.compiler_message());
            return;
        }
        if let Some(rendered) = rendered {
            self.eprint(&rendered);
            return;
        }
        let head = match d.level {
            Level::Error => style("error").red().bold(),
            Level::Warning => style("warning").yellow().bold(),
        };
        let mut text = format!("{head}{} {}", style(":").bold(), style(&d.message).bold());
        // rustc's layout: the gutter as wide as the line number.
        let pad = " ".repeat(d.line.map_or(1, |l| l.to_string().len()));
        if let Some(loc) = d.location_from(&cwd) {
            text.push_str(&format!("\n{pad}{} {loc}", style("-->").blue().bold()));
        }
        // The line and a caret, as the build script shows them; ptxas's `source:` note then
        // repeats it.
        let snippet = d.source_snippet();
        if let Some(s) = &snippet {
            text.push_str(&s.replace(" |", &style(" |").blue().bold().to_string()));
        }
        for n in d.notes.iter().filter(|n| snippet.is_none() || !n.starts_with("source: ")) {
            text.push_str(&format!("\n{pad} {} {n}", style("=").blue().bold()));
        }
        self.eprint(&text);
    }

    fn artifact(&self, a: &Artifact) {
        if self.format == Format::Json {
            self.json(json!({
                "reason": "ptx-artifact",
                "package": a.package,
                "module": a.module,
                "source": a.source,
                "arch": a.arch,
                "kind": a.kind,
                "path": a.path,
                "kernels": a.kernels,
                "fresh": a.fresh,
            }));
            return;
        }
        if self.verbose == 0 {
            self.artifacts.lock().unwrap_or_else(|e| e.into_inner()).push((a.kind, a.path.clone(), a.fresh));
            return;
        }
        let kind = match a.kind {
            ArtifactKind::Ptx => "PTX  ",
            ArtifactKind::Cubin => "cubin",
        };
        self.status(if a.fresh { "Fresh" } else { "Generated" }, &format!("{kind} {}", a.path.display()));
    }

    /// `warning: message`, for things that went wrong without stopping the command.
    pub fn warning(&self, message: &str) {
        self.eprint(&format!("{}{} {message}", style("warning").yellow().bold(), style(":").bold()));
    }

    pub fn error(&self, e: &dyn std::fmt::Display) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
        if self.format == Format::Json {
            self.json(
                json!({"reason": "ptx-diagnostic", "level": "error", "message": e.to_string(), "file": null, "line": null, "column": null}),
            );
            self.json(Diagnostic::error(e.to_string()).compiler_message());
            return;
        }
        let _ = writeln!(std::io::stderr(), "{}{} {e}", style("error").red().bold(), style(":").bold());
    }

    pub fn finish_check(&self, result: ptx_build::Result<ptx_build::CheckOutput>) -> ExitCode {
        let ok = result.is_ok();
        if let Err(e) = result {
            self.error(&e);
        }
        if self.format == Format::Json {
            self.json(json!({"reason": "check-finished", "success": ok}));
        }
        if ok {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        }
    }

    pub fn finish_build(&self, result: ptx_build::Result<BuildOutput>) -> ExitCode {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
        let ok = result.is_ok();
        match result {
            Ok(out) => {
                if self.verbose > 0 && self.format == Format::Human {
                    print_resources(&out);
                }
                if self.format == Format::Json {
                    for c in &out.crates {
                        self.json(compiler_artifact(c));
                    }
                }
            }
            Err(e) => self.error(&e),
        }
        if self.format == Format::Json {
            self.json(json!({"reason": "build-finished", "success": ok}));
        }
        if ok {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        }
    }
}

impl Printer {
    /// The last line of `cargo ptx sanitize`: a summary, and the exit code (1 when anything
    /// was found or a program failed).
    pub fn finish_sanitize(&self, report: &SanitizeReport) -> ExitCode {
        let failed: Vec<&ProgramRun> = report.programs.iter().filter(|p| p.exit_code != Some(0)).collect();
        let clean = report.clean();
        if self.format == Format::Json {
            self.json(json!({
                "reason": "sanitize-finished",
                "success": clean,
                "findings": report.findings.len(),
                "programs": report.programs,
            }));
        } else if clean {
            self.status("Finished", &format!("{} program(s) sanitized: nothing found", report.programs.len()));
        } else {
            let mut text = format!(
                "{}{} {} finding(s) in {} program(s)",
                style("error").red().bold(),
                style(":").bold(),
                report.findings.len(),
                report.programs.len()
            );
            for p in failed {
                let code = p.exit_code.map(|c| c.to_string()).unwrap_or_else(|| "a signal".into());
                text.push_str(&format!("; {} exited with {code}", p.program.display()));
            }
            self.eprint(&text);
        }
        if clean {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        }
    }
}

impl SanitizeReporter for Printer {
    fn status(&self, verb: &'static str, message: &str) {
        if self.format == Format::Human {
            Printer::status(self, verb, message);
        }
    }

    fn finding(&self, f: &Finding) {
        if self.format == Format::Json {
            self.json(json!({
                "reason": "sanitizer-finding",
                "tool": f.tool,
                "level": f.level,
                "message": f.message,
                "function": f.function,
                "file": f.file,
                "line": f.line,
                "details": f.details,
                "count": f.count,
                "program": f.program,
                "consequences": f.consequences,
            }));
            return;
        }
        let head = if f.level == "warning" { style("warning").yellow().bold() } else { style("error").red().bold() };
        let mut text = format!("{head}{}{} {}", style(format!("[{}]", f.tool.name())).bold(), style(":").bold(), style(&f.message).bold());
        if let (Some(file), Some(line)) = (&f.file, f.line) {
            let shown = std::env::current_dir()
                .ok()
                .and_then(|cwd| std::path::Path::new(file).strip_prefix(cwd).ok().map(|p| p.display().to_string()))
                .unwrap_or_else(|| file.clone());
            text.push_str(&format!("\n  {} {shown}:{line}", style("-->").blue().bold()));
            let source =
                std::fs::read_to_string(file).ok().and_then(|t| t.lines().nth(line.saturating_sub(1) as usize).map(str::to_string));
            if let Some(src) = source.filter(|s| !s.trim().is_empty()) {
                text.push_str(&format!("\n   {} {}", style("|").blue().bold(), src.trim_end()));
            }
        }
        if let Some(func) = &f.function {
            text.push_str(&format!("\n   {} in `{func}`", style("=").blue().bold()));
        }
        for d in &f.details {
            text.push_str(&format!("\n   {} {d}", style("=").blue().bold()));
        }
        if f.count > 1 {
            text.push_str(&format!("\n   {} {} threads made this same report; the first is shown", style("=").blue().bold(), f.count));
        }
        if !f.consequences.is_empty() {
            let eq = style("=").blue().bold();
            text.push_str(&format!("\n   {eq} then the context was unusable, and later API calls failed because of it:"));
            for c in &f.consequences {
                text.push_str(&format!("\n   {eq}   {c}"));
            }
        }
        self.eprint(&text);
    }
}

impl Printer {
    /// One line for every artifact of the build (`-v` lists them instead):
    /// `Generated 2 PTX + 2 cubin in target/ptx/release/k (-v lists each)`, `Fresh` when no
    /// file was rewritten.
    fn summary(&self) {
        let artifacts = std::mem::take(&mut *self.artifacts.lock().unwrap_or_else(|e| e.into_inner()));
        if artifacts.is_empty() {
            return;
        }
        let count = |k: ArtifactKind| artifacts.iter().filter(|a| a.0 == k).count();
        let fresh = artifacts.iter().filter(|a| a.2).count();
        let mut dir = artifacts[0].1.parent().map(std::path::Path::to_path_buf).unwrap_or_default();
        for (_, p, _) in &artifacts {
            while !p.starts_with(&dir) {
                if !dir.pop() {
                    break;
                }
            }
        }
        let shown = std::env::current_dir()
            .ok()
            .and_then(|cwd| dir.strip_prefix(cwd).ok().filter(|r| !r.as_os_str().is_empty()).map(std::path::Path::to_path_buf))
            .unwrap_or(dir);
        let mut what = format!("{} PTX", count(ArtifactKind::Ptx));
        if count(ArtifactKind::Cubin) > 0 {
            what.push_str(&format!(" + {} cubin", count(ArtifactKind::Cubin)));
        }
        let (verb, fresh_note) = match fresh {
            f if f == artifacts.len() => ("Fresh", String::new()),
            0 => ("Generated", String::new()),
            f => ("Generated", format!(" ({f} fresh)")),
        };
        self.status(verb, &format!("{what}{fresh_note} in {} (-v lists each)", shown.display()));
    }
}

impl Reporter for Printer {
    fn report(&self, event: Event<'_>) {
        match event {
            Event::Status { verb, message } => {
                if verb == "Finished" && self.format == Format::Human {
                    self.summary();
                }
                if self.format == Format::Human || verb == "Finished" || verb == "Checked" {
                    self.status(verb, &message);
                }
            }
            Event::Progress { message } => {
                if let Some(bar) = &self.bar {
                    bar.set_message(message);
                }
            }
            Event::Plan { steps } => {
                if let Some(bar) = &self.bar {
                    bar.inc_length(steps as u64);
                }
            }
            Event::StepDone => {
                if let Some(bar) = &self.bar {
                    bar.inc(1);
                }
            }
            Event::Diagnostic(d) => self.diagnostic(d),
            Event::Artifact(a) => self.artifact(a),
            _ => {}
        }
    }
}

/// cargo's `compiler-artifact` message for a kernel crate: its PTX and cubin files as
/// `filenames` (one message per crate, as cargo sends one per compiled unit), so tools that
/// read cargo's stream see what was built; the `ptx-artifact` lines give the per-file details.
fn compiler_artifact(c: &ptx_build::CrateOutput) -> serde_json::Value {
    let origin = c.origin();
    // Artifacts lie under `ptx/<profile>/`: debug kernels are unoptimised.
    let debug = c.artifacts.iter().any(|a| a.path.components().any(|p| p.as_os_str() == "debug"));
    json!({
        "reason": "compiler-artifact",
        "package_id": origin.package_id(),
        "manifest_path": c.manifest_path,
        "target": origin.target_json(),
        "profile": {"opt_level": if debug { "0" } else { "3" }, "debuginfo": 0, "debug_assertions": false, "overflow_checks": false, "test": false},
        "features": [],
        "filenames": c.artifacts.iter().map(|a| &a.path).collect::<Vec<_>>(),
        "executable": null,
        "fresh": c.artifacts.iter().all(|a| a.fresh),
    })
}

/// The `-v` table: one row per kernel and arch, from the cubins' ptxas reports.
fn print_resources(out: &BuildOutput) {
    let mut rows =
        vec![["kernel".to_string(), "arch".into(), "registers".into(), "spill st/ld (B)".into(), "shared (B)".into(), "stack (B)".into()]];
    for c in &out.crates {
        for a in c.artifacts.iter().filter(|a| a.kind == ArtifactKind::Cubin) {
            for k in &a.kernels {
                let n = |v: Option<u32>| v.map(|v| v.to_string()).unwrap_or_else(|| "-".into());
                rows.push([
                    k.name.clone(),
                    a.arch.to_string(),
                    n(k.registers),
                    format!("{}/{}", n(k.spill_stores), n(k.spill_loads)),
                    n(k.shared_bytes),
                    n(k.stack_bytes),
                ]);
            }
        }
    }
    let mut err = std::io::stderr().lock();
    if rows.len() == 1 {
        let _ = writeln!(err, "no resource usage: no cubin was built (ptxas not found, or only compute_XX archs)");
        return;
    }
    let widths: Vec<usize> = (0..6).map(|i| rows.iter().map(|r| r[i].len()).max().unwrap_or(0)).collect();
    for (i, r) in rows.iter().enumerate() {
        let line: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(j, c)| if j < 2 { format!("{c:<w$}", w = widths[j]) } else { format!("{c:>w$}", w = widths[j]) })
            .collect();
        let line = line.join("  ");
        let _ = writeln!(err, "{}", if i == 0 { Style::new().bold().apply_to(line).to_string() } else { line });
    }
}

pub fn print_doctor(report: &Report, format: Format) {
    if format == Format::Json {
        println!("{}", serde_json::to_string(report).unwrap_or_default());
        return;
    }
    let width = report.checks.iter().map(|c| c.component.len()).max().unwrap_or(0);
    for c in &report.checks {
        let mark = match c.status {
            Status::Ok => style("ok     ").green().bold(),
            Status::Warning => style("warning").yellow().bold(),
            Status::Missing => style("missing").red().bold(),
        };
        let mut line = format!("{mark}  {:<width$}  ", c.component);
        if let Some(v) = &c.version {
            line.push_str(v);
            line.push_str("  ");
        }
        if let Some(p) = &c.path {
            line.push_str(&p.display().to_string());
            line.push_str("  ");
        }
        line.push_str(&style(&c.detail).dim().to_string());
        println!("{}", line.trim_end());
        if let Some(fix) = &c.fix {
            println!("         {:<width$}  {} {fix}", "", style("fix:").cyan().bold());
        }
    }
    if let Some(archs) = &report.archs {
        println!("\narchs these tools build: {archs}");
    }
    if !report.project.is_empty() {
        println!("\nchecked for the kernel crates here: {}", report.project.join(", "));
    }
    if !report.static_lib_users.is_empty() {
        println!("\nchecked for the static libraries built here by: {}", report.static_lib_users.join(", "));
    }
    if report.ready {
        let (ready, note) = (style("ready:").green().bold(), style("note:").yellow().bold());
        println!("\n{ready} a Rust kernel build can run");
        // What is missing, by component: its line above has the fix.
        let pieces =
            |missing: &[String]| missing.iter().map(|m| m.split(':').next().unwrap_or(m).to_string()).collect::<Vec<_>>().join(", ");
        if report.cuda_ready {
            println!("{ready} a CUDA C++ (.cu) build can run");
        } else if report.cuda_missing.iter().all(|m| m.starts_with("nvcc:")) {
            println!("{note} CUDA C++ (.cu) builds need nvcc (`cargo ptx setup` installs it)");
        } else {
            println!("{note} CUDA C++ (.cu) builds need: {} (see the fix above)", pieces(&report.cuda_missing));
        }
        if report.static_lib_ready {
            println!("{ready} a static library of CUDA C++ (`.cuda_static_lib`) can be built and linked");
        } else if report.cuda_ready {
            println!(
                "{note} static libraries of CUDA C++ (`.cuda_static_lib`) need: {} (see the fixes above)",
                pieces(&report.static_lib_missing)
            );
        }
    } else {
        println!(
            "\n{} kernels cannot be built until the missing pieces above are installed (each `fix:` line says how)",
            style("not ready:").red().bold()
        );
    }
}
