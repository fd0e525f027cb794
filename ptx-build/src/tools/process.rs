//! Running tools: the one place where the engine starts a process.
//!
//! Commands are argument vectors only (never a shell string), output is captured, and errors
//! name the tool, its path, the command line that failed and what it printed. Keeping every
//! start here means one policy for all of them: a grep for `Command::new`, `.output()`,
//! `.spawn()` or `.status()` in the engine finds this file only.

use std::ffi::OsStr;
use std::process::{Child, Command, ExitStatus, Output};

use crate::error::{Error, Result};

/// A new command for `program` (an argument vector: add arguments with `.arg`/`.args`).
///
/// Tools run without the user's `RUST_BACKTRACE`: a set backtrace makes rustc's and lld's own
/// crash reports (a full disk, say) bury the one-line cause under frames of the tool.
pub fn command(program: impl AsRef<OsStr>) -> Command {
    let mut cmd = Command::new(program);
    cmd.env_remove("RUST_BACKTRACE").env_remove("RUST_LIB_BACKTRACE");
    cmd
}

/// A command for a compiler, through `launcher` (`sccache`) when one is set: `sccache nvcc ..`.
pub fn compiler(program: &std::path::Path, launcher: Option<&std::path::Path>) -> Command {
    match launcher {
        Some(l) => {
            let mut cmd = command(l);
            cmd.arg(program);
            cmd
        }
        None => command(program),
    }
}

/// Where each command line goes before it runs, once a front end asks (`cargo ptx build -vv`).
static ECHO: std::sync::OnceLock<Box<Echo>> = std::sync::OnceLock::new();

type Echo = dyn Fn(&str) + Send + Sync;

/// Shows every tool's command line (quoted for a shell) to `show` before it starts, for the
/// rest of the process: a process-wide setting, as `-vv` is for the whole command. Version
/// probes are not shown. A second call is ignored.
pub fn echo_commands(show: impl Fn(&str) + Send + Sync + 'static) {
    let _ = ECHO.set(Box::new(show));
}

fn echo(cmd: &Command) {
    if let Some(show) = ECHO.get() {
        show(&command_line(cmd));
    }
}

/// Runs `cmd` to completion and returns its output, whatever its exit status.
pub fn output(tool: &str, cmd: &mut Command) -> Result<Output> {
    echo(cmd);
    cmd.output().map_err(|source| spawn_error(tool, cmd, source))
}

/// Runs `cmd` and fails with what it printed when it exits non-zero.
pub fn checked(tool: &str, context: impl FnOnce() -> String, cmd: &mut Command) -> Result<Output> {
    let out = output(tool, cmd)?;
    if out.status.success() {
        Ok(out)
    } else {
        Err(failed(tool, context(), cmd, &out))
    }
}

/// Runs `cmd` to ask a tool something optional (a version, a list of archs): the caller treats
/// a tool that cannot start as an answer, not as an error.
pub fn probe(cmd: &mut Command) -> std::io::Result<Output> {
    cmd.output()
}

/// Starts `cmd` for a caller that reads its output while it runs (set up the pipes first).
pub fn spawn(tool: &str, cmd: &mut Command) -> Result<Child> {
    echo(cmd);
    cmd.spawn().map_err(|source| spawn_error(tool, cmd, source))
}

/// Waits for a child that [`spawn`] started from `cmd`.
pub fn wait(tool: &str, cmd: &Command, child: &mut Child) -> Result<ExitStatus> {
    child.wait().map_err(|source| spawn_error(tool, cmd, source))
}

/// The error of a tool that ran and exited non-zero: `context` says for what (" for `k`
/// (sm_80)"), the output is what it printed.
pub fn failed(tool: &str, context: String, cmd: &Command, out: &Output) -> Error {
    failed_with(tool, context, cmd, combined(out))
}

/// Like [`failed`], with the printed text already chosen (indented lines).
pub fn failed_with(tool: &str, context: String, cmd: &Command, output: String) -> Error {
    Error::ToolFailed { tool: tool.to_string(), context, command: command_line(cmd), output }
}

/// The first line of what a tool printed, for version strings.
pub fn stdout_text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// stderr then stdout, trimmed, indented for display under an error line.
pub fn combined(out: &Output) -> String {
    let mut text = String::from_utf8_lossy(&out.stderr).into_owned();
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !stdout.trim().is_empty() {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&stdout);
    }
    if text.trim().is_empty() {
        text = format!("(no output; exit status {})", out.status);
    }
    text.trim_end().lines().map(|l| format!("  {l}")).collect::<Vec<_>>().join("\n")
}

fn spawn_error(tool: &str, cmd: &Command, source: std::io::Error) -> Error {
    let help = if source.kind() == std::io::ErrorKind::NotFound {
        "the file does not exist any more; run `cargo ptx doctor` to see what is found".to_string()
    } else {
        "check that the file is an executable for this machine; `cargo ptx doctor` lists every tool".to_string()
    };
    Error::Spawn { tool: tool.to_string(), path: cmd.get_program().into(), command: command_line(cmd), help, source }
}

/// `cmd`'s program and arguments as a POSIX shell would read them, for display only: the user
/// can copy the line to rerun the step by hand (the environment is not shown).
pub fn command_line(cmd: &Command) -> String {
    std::iter::once(cmd.get_program()).chain(cmd.get_args()).map(|a| shell_quote(&a.to_string_lossy())).collect::<Vec<_>>().join(" ")
}

fn shell_quote(arg: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c);
    if !arg.is_empty() && arg.chars().all(plain) {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_only_what_a_shell_would_split() {
        let mut cmd = command("/opt/llvm/bin/opt");
        cmd.args(["-passes=internalize,default<O3>", "my file.bc", "", "it's", "-o", "/t/out.bc"]);
        assert_eq!(command_line(&cmd), r"/opt/llvm/bin/opt '-passes=internalize,default<O3>' 'my file.bc' '' 'it'\''s' -o /t/out.bc");
    }

    #[cfg(unix)]
    #[test]
    fn a_failing_tool_shows_its_command_line() {
        let mut cmd = command("sh");
        cmd.args(["-c", "echo broken input >&2; exit 3", "x y"]);
        let e = checked("sh", || " on k.bc".to_string(), &mut cmd).unwrap_err().to_string();
        assert!(e.starts_with("sh failed on k.bc:\n  broken input\n"), "{e}");
        assert!(e.contains("\n  command: sh -c 'echo broken input >&2; exit 3' 'x y'"), "{e}");
    }

    #[test]
    fn a_tool_that_cannot_start_shows_its_command_line() {
        let mut cmd = command("/no/such/dir/llc");
        cmd.args(["-mcpu=sm_80", "in put.bc"]);
        let e = output("llc", &mut cmd).unwrap_err().to_string();
        assert!(e.starts_with("could not run llc (/no/such/dir/llc): "), "{e}");
        assert!(e.contains("\n  command: /no/such/dir/llc -mcpu=sm_80 'in put.bc'\n  help: the file does not exist any more"), "{e}");
    }
}
