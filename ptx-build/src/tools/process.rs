//! Running tools: the one place where the engine starts a process.
//!
//! Commands are argument vectors only (never a shell string), output is captured, and errors
//! name the tool, its path, the command line that failed and what it printed. Keeping every
//! start here means one policy for all of them: a grep for `Command::new`, `.output()`,
//! `.spawn()` or `.status()` in the engine finds this file only.
//!
//! A front end that owns its process tree (`cargo ptx`, after [`own_process_tree`]) has every
//! tool started in a process group of its own, so that [`terminate_all`] (its SIGINT and SIGTERM
//! handler) ends each tool together with what that tool started (the nested cargo's rustc,
//! nvcc's cicc and ptxas), at once. Inside a build script the tools stay in cargo's group: a
//! Ctrl-C at the terminal reaches them with cargo.

use std::ffi::OsStr;
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::Mutex;

use crate::error::{Error, Result};

/// A new command for `program` (an argument vector: add arguments with `.arg`/`.args`).
///
/// Tools run without the user's `RUST_BACKTRACE`: a set backtrace makes rustc's and lld's own
/// crash reports (a full disk, say) bury the one-line cause under frames of the tool.
pub fn command(program: impl AsRef<OsStr>) -> Command {
    let mut cmd = Command::new(program);
    cmd.env_remove("RUST_BACKTRACE").env_remove("RUST_LIB_BACKTRACE");
    #[cfg(unix)]
    if RUNNING.lock().unwrap_or_else(|e| e.into_inner()).is_some() {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    cmd
}

/// The process groups of the tools running now, while a front end owns the process tree.
static RUNNING: Mutex<Option<Vec<u32>>> = Mutex::new(None);

/// From now on, every tool runs in a process group of its own, ended by [`terminate_all`]. For a
/// front end that handles SIGINT and SIGTERM itself (`cargo ptx`); a build script must not call
/// it (a terminal's Ctrl-C would no longer reach the tools).
pub fn own_process_tree() {
    RUNNING.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert_with(Vec::new);
}

/// Set once [`terminate_all`] ran: the tools' failures that follow are its doing.
static INTERRUPTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether [`terminate_all`] ended the tools.
pub fn interrupted() -> bool {
    INTERRUPTED.load(std::sync::atomic::Ordering::SeqCst)
}

/// Ends every tool started since [`own_process_tree`], each with everything it started: SIGTERM
/// to each process group, then SIGKILL to what is left after a second.
pub fn terminate_all() {
    INTERRUPTED.store(true, std::sync::atomic::Ordering::SeqCst);
    let groups: Vec<u32> = RUNNING.lock().unwrap_or_else(|e| e.into_inner()).clone().unwrap_or_default();
    #[cfg(unix)]
    {
        let signal_all = |sig| groups.iter().filter(|g| **g > 1).for_each(|g| unsafe_kill_group(*g, sig));
        signal_all(libc::SIGTERM);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
        while std::time::Instant::now() < deadline && groups.iter().any(|g| group_alive(*g)) {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        signal_all(libc::SIGKILL);
    }
    #[cfg(not(unix))]
    let _ = groups;
}

/// Sends `sig` to the process group `pgid`.
#[cfg(unix)]
fn unsafe_kill_group(pgid: u32, sig: libc::c_int) {
    // SAFETY: kill(2) with a negative pid signals that group; it touches no memory of ours.
    unsafe {
        libc::kill(-(pgid as libc::pid_t), sig);
    }
}

/// Whether any process of group `pgid` is still there (signal 0 checks without sending).
#[cfg(unix)]
fn group_alive(pgid: u32) -> bool {
    // SAFETY: as in `unsafe_kill_group`; signal 0 only checks.
    unsafe { libc::kill(-(pgid as libc::pid_t), 0) == 0 }
}

fn track(id: u32) {
    if let Some(groups) = RUNNING.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
        groups.push(id);
    }
}

fn untrack(id: u32) {
    if let Some(groups) = RUNNING.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
        groups.retain(|g| *g != id);
    }
}

/// Runs `cmd` to completion with its output captured (stdin closed, as `Command::output`), as a
/// tracked tool.
fn run_to_end(cmd: &mut Command) -> std::io::Result<Output> {
    let _slot = super::slots::hold();
    let child = cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn()?;
    let id = child.id();
    track(id);
    let out = child.wait_with_output();
    untrack(id);
    out
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

/// Shows every tool's command line (quoted for a shell, after `cd DIR && ` where the tool runs
/// in a folder of its own, so that the line reruns the step as pasted) to `show` before it
/// starts, for the rest of the process: a process-wide setting, as `-vv` is for the whole
/// command. Version probes are not shown. A second call is ignored.
pub fn echo_commands(show: impl Fn(&str) + Send + Sync + 'static) {
    let _ = ECHO.set(Box::new(show));
}

fn echo(cmd: &Command) {
    if let Some(show) = ECHO.get() {
        show(&echoed(cmd));
    }
}

/// [`command_line`], after `cd DIR && ` where `cmd` runs in a folder of its own.
fn echoed(cmd: &Command) -> String {
    match cmd.get_current_dir() {
        Some(dir) => format!("cd {} && {}", shell_quote(&dir.to_string_lossy()), command_line(cmd)),
        None => command_line(cmd),
    }
}

/// Runs `cmd` to completion and returns its output, whatever its exit status.
pub fn output(tool: &str, cmd: &mut Command) -> Result<Output> {
    echo(cmd);
    run_to_end(cmd).map_err(|source| spawn_error(tool, cmd, source))
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
    run_to_end(cmd)
}

/// Starts `cmd` for a caller that reads its output while it runs (set up the pipes first). Not
/// counted against a job pool's slots (see [`super::slots`]): such tools run outside the pool
/// (the Rust front end's cargo, which shares cargo's jobserver itself; `compute-sanitizer`).
pub fn spawn(tool: &str, cmd: &mut Command) -> Result<Child> {
    echo(cmd);
    let child = cmd.spawn().map_err(|source| spawn_error(tool, cmd, source))?;
    track(child.id());
    Ok(child)
}

/// Waits for a child that [`spawn`] started from `cmd`.
pub fn wait(tool: &str, cmd: &Command, child: &mut Child) -> Result<ExitStatus> {
    let status = child.wait().map_err(|source| spawn_error(tool, cmd, source));
    untrack(child.id());
    status
}

/// Waits for a child that [`spawn`] started from `cmd` and collects the output it was set up to
/// pipe (what it was not, such as an inherited stderr, is empty).
pub fn wait_output(tool: &str, cmd: &Command, child: Child) -> Result<Output> {
    let id = child.id();
    let out = child.wait_with_output().map_err(|source| spawn_error(tool, cmd, source));
    untrack(id);
    out
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

    #[test]
    fn an_echoed_line_reruns_the_tool_in_its_folder() {
        let mut cmd = command("/cuda/bin/nvcc");
        cmd.args(["-c", "cuda/moe.cu"]);
        assert_eq!(echoed(&cmd), "/cuda/bin/nvcc -c cuda/moe.cu");
        cmd.current_dir("/home/me/my crate");
        assert_eq!(echoed(&cmd), "cd '/home/me/my crate' && /cuda/bin/nvcc -c cuda/moe.cu");
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
