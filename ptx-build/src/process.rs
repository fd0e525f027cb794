//! Running tools: argument vectors only (never a shell string), output captured, and errors
//! that name the tool, its path and what it printed.

use std::path::Path;
use std::process::{Command, Output};

use crate::error::{Error, Result};

/// Runs `cmd` to completion and returns its output, whatever its exit status.
pub fn output(tool: &str, cmd: &mut Command) -> Result<Output> {
    cmd.output().map_err(|source| spawn_error(tool, cmd.get_program().as_ref(), source))
}

/// Runs `cmd` and fails with what it printed when it exits non-zero.
pub fn checked(tool: &str, context: impl FnOnce() -> String, cmd: &mut Command) -> Result<Output> {
    let out = output(tool, cmd)?;
    if out.status.success() {
        Ok(out)
    } else {
        Err(Error::ToolFailed { tool: tool.to_string(), context: context(), output: combined(&out) })
    }
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

pub fn spawn_error(tool: &str, path: &Path, source: std::io::Error) -> Error {
    let help = if source.kind() == std::io::ErrorKind::NotFound {
        "the file does not exist any more; run `cargo ptx doctor` to see what is found".to_string()
    } else {
        "check that the file is an executable for this machine; `cargo ptx doctor` lists every tool".to_string()
    };
    Error::Spawn { tool: tool.to_string(), path: path.to_path_buf(), help, source }
}
