//! Make-style dependency files: rustc's dep-info (`--emit=dep-info`, the `.d` beside each
//! crate's output) and nvcc's `-MD -MF` file, read by one parser.
//!
//! Both are make rules, `targets: prerequisites`, with the escapes of GCC's `-M` output:
//! `\ ` for a space in a path, `\#` for `#`, `$$` for `$`, and a trailing `\` that continues the
//! rule on the next line. rustc adds phony rules (`src/lib.rs:`) and `# env-dep:VAR=value`
//! comments for the variables `env!` read; nvcc adds phony rules under `-MP`.

use std::path::PathBuf;

/// What a dependency file says.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DepFile {
    /// The targets of every rule, in file order (a rule can name several).
    pub targets: Vec<PathBuf>,
    /// The prerequisites of every rule, in file order, each once.
    pub prerequisites: Vec<PathBuf>,
    /// Names of the variables of `# env-dep:` lines (rustc's `env!`/`option_env!` reads).
    pub env: Vec<String>,
}

/// Parses the text of a dependency file. Lines that are not rules are skipped: a file that a
/// tool wrote half of yields what it has, and the caller's cache then misses at worst.
pub fn parse(text: &str) -> DepFile {
    let mut out = DepFile::default();
    // Each prerequisite once, in a set, so a file naming many thousands stays linear.
    let (mut seen, mut seen_env) = (std::collections::HashSet::new(), std::collections::HashSet::new());
    for line in logical_lines(text) {
        if let Some(comment) = line.trim_start().strip_prefix('#') {
            if let Some(var) = comment.strip_prefix(" env-dep:") {
                let name = var.split('=').next().unwrap_or(var).to_string();
                if seen_env.insert(name.clone()) {
                    out.env.push(name);
                }
            }
            continue;
        }
        let Some(colon) = rule_colon(&line) else { continue };
        out.targets.extend(words(&line[..colon]));
        for p in words(&line[colon + 1..]) {
            if seen.insert(p.clone()) {
                out.prerequisites.push(p);
            }
        }
    }
    out
}

/// Joins continued lines (`\` at the end of a line, LF or CRLF) into one line each.
fn logical_lines(text: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut cur = String::new();
    for raw in text.split('\n') {
        let raw = raw.strip_suffix('\r').unwrap_or(raw);
        // A `\` ends a continued line only when it is not itself escaped (`\\` at the end is
        // a path that ends in a backslash, which make leaves alone).
        let trailing = raw.len() - raw.trim_end_matches('\\').len();
        if trailing % 2 == 1 {
            cur.push_str(&raw[..raw.len() - 1]);
            cur.push(' ');
        } else {
            cur.push_str(raw);
            lines.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        lines.push(cur);
    }
    lines
}

/// The `:` that separates targets from prerequisites: the first one followed by whitespace or
/// the end of the line, so a Windows drive (`C:\src\lib.rs`) is part of a path.
fn rule_colon(line: &str) -> Option<usize> {
    let b = line.as_bytes();
    (0..b.len()).find(|&i| b[i] == b':' && (i > 0 && b[i - 1] != b'\\') && b.get(i + 1).is_none_or(|c| c.is_ascii_whitespace()))
}

/// The paths of a list separated by whitespace, with make's escapes undone.
fn words(list: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = list.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if matches!(chars.peek(), Some(' ' | '#' | ':')) => cur.push(chars.next().unwrap_or(' ')),
            '$' if chars.peek() == Some(&'$') => {
                chars.next();
                cur.push('$');
            }
            c if c.is_whitespace() => {
                if !cur.is_empty() {
                    out.push(PathBuf::from(std::mem::take(&mut cur)));
                }
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(PathBuf::from(cur));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(v: &[&str]) -> Vec<PathBuf> {
        v.iter().map(PathBuf::from).collect()
    }

    #[test]
    fn reads_rustc_dep_info_with_phony_rules_and_env() {
        let d = parse(
            "/t/k.bc: /src/my\\ dir/lib.rs /src/ä.rs\n\n/src/my\\ dir/lib.rs:\n/src/ä.rs:\n\n# env-dep:KERNEL_N=4\n# env-dep:EMPTY\n",
        );
        assert_eq!(d.prerequisites, paths(&["/src/my dir/lib.rs", "/src/ä.rs"]));
        assert_eq!(d.targets, paths(&["/t/k.bc", "/src/my dir/lib.rs", "/src/ä.rs"]));
        assert_eq!(d.env, ["KERNEL_N", "EMPTY"]);
    }

    #[test]
    fn reads_nvcc_rules_with_continuations_and_escapes() {
        let d = parse("/t/k.ptx : /p/cuda/k.cu \\\n    /p/my\\ dir/h.cuh \\\r\n    /p/cost$$.h /p/\\#1.h\n");
        assert_eq!(d.targets, paths(&["/t/k.ptx"]));
        assert_eq!(d.prerequisites, paths(&["/p/cuda/k.cu", "/p/my dir/h.cuh", "/p/cost$.h", "/p/#1.h"]));
    }

    #[test]
    fn several_targets_and_rules_each_prerequisite_once() {
        // `-MP` adds a phony rule per header; two targets share one rule.
        let d = parse("a.o b.o: a.cu h.cuh\nc.o: h.cuh\th2.cuh\nh.cuh:\n");
        assert_eq!(d.targets, paths(&["a.o", "b.o", "c.o", "h.cuh"]));
        assert_eq!(d.prerequisites, paths(&["a.cu", "h.cuh", "h2.cuh"]));
    }

    #[test]
    fn windows_drives_and_empty_or_broken_files() {
        let d = parse("C:\\t\\k.bc: C:\\src\\lib.rs D:\\x\\y.rs\n");
        assert_eq!(d.targets, paths(&["C:\\t\\k.bc"]));
        assert_eq!(d.prerequisites, paths(&["C:\\src\\lib.rs", "D:\\x\\y.rs"]));
        assert_eq!(parse(""), DepFile::default());
        assert_eq!(parse("no rule here\n").prerequisites, Vec::<PathBuf>::new());
        // A file cut off after a continuation still gives what it has.
        assert_eq!(parse("k.ptx: a.cu \\").prerequisites, paths(&["a.cu"]));
    }
}
