//! Reading PTX: the ISA version, the target, every `.entry` with its parameters, and the
//! `.file`/`.loc` line table that maps a PTX line back to the source line it came from.
//!
//! Hand-written: PTX is a line-oriented assembly with no maintained Rust parser, and we need
//! only these directives.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// A parsed PTX module.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Module {
    /// `.version` as written, e.g. `7.8`.
    pub version: Option<String>,
    /// `.target` names, e.g. `["sm_80"]`.
    pub target: Vec<String>,
    /// The kernels, in the file's order.
    pub entries: Vec<Entry>,
    files: HashMap<u32, PathBuf>,
    /// (PTX line, 1-based) -> location, in line order.
    locs: Vec<(usize, Loc)>,
    /// PTX line where each function body starts, so a lookup never crosses into another function.
    function_starts: Vec<usize>,
}

/// A kernel (`.entry`) and its parameters, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub name: String,
    pub params: Vec<Param>,
    /// PTX line of the `.entry` directive (1-based); 0 from [`Module::parse_entries`], which
    /// does not count lines (31 ms of 10 MB of PTX in a build script).
    pub line: usize,
    /// The most threads a block: `.maxntid` (or `.reqntid`), x * y * z, where the entry has it
    /// (`#[kernel(launch_bounds(..))]`, CUDA's `__launch_bounds__`).
    pub max_threads: Option<u32>,
}

/// One `.param`: its PTX type, size and alignment in bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    pub name: String,
    /// `.u32`, `.f32`, `.u64`, or `.b8` for a byte array (structs by value).
    pub ty: String,
    pub size: u32,
    pub align: u32,
    /// `.ptr` was written: the parameter is a pointer.
    pub is_ptr: bool,
    /// `.ptr .align N`: what the pointer points to is aligned to N (the parameter itself is a u64).
    pub pointee_align: Option<u32>,
}

/// A source location from `.loc`, with the chain of call sites it was inlined into.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loc {
    pub file: u32,
    pub line: u32,
    pub column: u32,
    /// Outer call sites, innermost first.
    inlined_at: Vec<(FileRef, u32, u32)>,
}

/// nvcc names files of inline sites by `.file` number; LLVM's comments spell the path.
#[derive(Clone, Debug, PartialEq, Eq)]
enum FileRef {
    Index(u32),
    Path(PathBuf),
}

/// A resolved source position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourcePos {
    /// As the `.file` table spells it (relative to the workspace for a Rust crate's own files).
    pub file: PathBuf,
    /// 1-based; 0 where the compiler gave the code no line.
    pub line: u32,
    /// 1-based; 0 where unknown.
    pub column: u32,
}

impl Module {
    /// Every directive this module reads, line by line.
    pub fn parse(text: &str) -> Module {
        let mut m = Module::default();
        let lines: Vec<&str> = text.lines().collect();
        let mut i = 0;
        while i < lines.len() {
            let raw = lines[i];
            let line = raw.trim();
            let lineno = i + 1;
            if let Some(rest) = line.strip_prefix(".version") {
                m.version = Some(rest.trim().to_string());
            } else if let Some(rest) = line.strip_prefix(".target") {
                m.target = rest.split(',').map(|t| t.trim().to_string()).filter(|t| !t.is_empty()).collect();
            } else if let Some(rest) = line.strip_prefix(".file") {
                if let Some((n, path)) = parse_file(rest) {
                    m.files.insert(n, path);
                }
            } else if let Some(rest) = line.strip_prefix(".loc") {
                if let Some(loc) = parse_loc(rest, raw) {
                    m.locs.push((lineno, loc));
                }
            } else if is_function_header(line) {
                m.function_starts.push(lineno);
                if let Some(entry_pos) = line.find(".entry") {
                    // The offset is into the trimmed line: slice that, not the raw one (an
                    // indented header was misread, and Unicode indentation split a character).
                    let (entry, consumed) = parse_entry(&line[entry_pos + ".entry".len()..], &lines[i..]);
                    if let Some(mut entry) = entry {
                        entry.line = lineno;
                        m.entries.push(entry);
                    }
                    i += consumed.max(1);
                    continue;
                }
            }
            i += 1;
        }
        m
    }

    /// The module's `.version` and entries (names, parameters, launch bounds) and nothing else,
    /// found by searching for `.entry` instead of reading every line: what the nvcc step and the
    /// embed stage need. Reading every `.loc` of nvcc's `-lineinfo` PTX in a build script (built
    /// without optimisation) was 0.18 s after the last nvcc run for 3.3 MB of PTX (BENCHMARKS.md,
    /// issue 25).
    pub fn parse_entries(text: &str) -> Module {
        let mut m = Module {
            version: text.lines().find_map(|l| l.trim().strip_prefix(".version")).map(|r| r.trim().to_string()),
            ..Module::default()
        };
        let mut last_start = None;
        for pos in crate::text::occurrences(text, ".entry") {
            let start = text[..pos].rfind('\n').map_or(0, |p| p + 1);
            let line = text[start..].lines().next().unwrap_or_default().trim();
            if last_start == Some(start) || !is_function_header(line) {
                continue;
            }
            last_start = Some(start);
            let Some(at) = line.find(".entry") else { continue };
            let mut header = Vec::new();
            for l in text[start..].lines() {
                header.push(l);
                if l.contains('{') {
                    break;
                }
            }
            if let (Some(entry), _) = parse_entry(&line[at + ".entry".len()..], &header) {
                m.entries.push(entry);
            }
        }
        m
    }

    /// The kernel of that name.
    pub fn entry(&self, name: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.name == name)
    }

    /// The source location of PTX line `ptx_line` (1-based): the nearest `.loc` at or above it
    /// within the same function.
    pub fn source_of(&self, ptx_line: usize) -> Option<(SourcePos, Vec<SourcePos>)> {
        let func_start = self.function_starts.iter().copied().filter(|s| *s <= ptx_line).max().unwrap_or(0);
        let idx = self.locs.partition_point(|(l, _)| *l <= ptx_line);
        let (loc_line, loc) = self.locs[..idx].last()?;
        if *loc_line < func_start {
            return None;
        }
        let file = self.files.get(&loc.file)?.clone();
        let inlined_at = loc
            .inlined_at
            .iter()
            .filter_map(|(f, line, column)| {
                let file = match f {
                    FileRef::Index(n) => self.files.get(n)?.clone(),
                    FileRef::Path(p) => self.comment_file(p, *line),
                };
                Some(SourcePos { file, line: *line, column: *column })
            })
            .collect();
        Some((SourcePos { file, line: loc.line, column: loc.column }, inlined_at))
    }

    /// The `.file` of a path LLVM's comment spells without its folder: `src/lib.rs` may be the
    /// kernel crate's (`.file 4 "src/lib.rs"`) or a dependency's (`.file 1
    /// "../../ptx-device/src/lib.rs"`). The one with a `.loc` at that line (the one spelt
    /// exactly so where two have), else the one spelt exactly so, else the only one of that
    /// name; else the path as written.
    fn comment_file(&self, name: &Path, line: u32) -> PathBuf {
        let mut named: Vec<(u32, &PathBuf)> = self.files.iter().filter(|(_, p)| p.ends_with(name)).map(|(n, p)| (*n, p)).collect();
        named.sort();
        let has_line = |n: u32| self.locs.iter().any(|(_, l)| l.file == n && l.line == line);
        fn exact<'a>(ps: &[&'a PathBuf], name: &Path) -> Option<&'a PathBuf> {
            ps.iter().find(|p| p.as_path() == name).copied()
        }
        let at_line: Vec<&PathBuf> = named.iter().filter(|(n, _)| has_line(*n)).map(|(_, p)| *p).collect();
        let all: Vec<&PathBuf> = named.iter().map(|(_, p)| *p).collect();
        let pick = match (at_line.as_slice(), all.as_slice()) {
            ([one], _) | ([], [one]) => Some(*one),
            ([], many) => exact(many, name),
            (several, _) => exact(several, name).or(several.first().copied()),
        };
        pick.cloned().unwrap_or_else(|| name.to_path_buf())
    }
}

/// The entries whose bodies read the grid's workspace (`%envreg1`, `%envreg2`): cooperative
/// groups' `this_grid().sync()` and `is_valid()`, which only a cooperative launch sets up (a
/// plain launch leaves them 0, and the sync faults or hangs). A device function that reads it
/// and is not inlined (`__noinline__`) is not followed into its callers. Scans the whole text:
/// callers run it only for a file that includes `cooperative_groups.h`.
pub fn cooperative_entries(text: &str) -> Vec<String> {
    // Each function's header: its position, and its name where it is an entry.
    let mut headers: Vec<(usize, Option<&str>)> = Vec::new();
    for pos in crate::text::occurrences(text, ".entry").chain(crate::text::occurrences(text, ".func")) {
        let start = text[..pos].rfind('\n').map_or(0, |p| p + 1);
        let line = text[start..].lines().next().unwrap_or_default();
        if !is_function_header(line.trim()) {
            continue;
        }
        let name = line.split_once(".entry").map(|(_, rest)| rest.trim().split(['(', ' ', '\t']).next().unwrap_or_default());
        headers.push((start, name));
    }
    // A line with both words (`.entry` in a `.func`'s comment) is one header.
    headers.sort_unstable();
    headers.dedup_by_key(|(start, _)| *start);
    let mut out: Vec<String> = Vec::new();
    for (at, _) in text.match_indices("%envreg") {
        if !matches!(
            text.as_bytes().get(at + "%envreg".len()..at + "%envreg".len() + 2),
            Some([b'1' | b'2', b';' | b',' | b' ' | b')' | b'}'])
        ) {
            continue;
        }
        let function = headers.partition_point(|(p, _)| *p < at).checked_sub(1).and_then(|i| headers[i].1);
        if let Some(name) = function.filter(|n| !out.iter().any(|o| o == n)) {
            out.push(name.to_string());
        }
    }
    out
}

fn is_function_header(line: &str) -> bool {
    let l = line.trim_start_matches(".visible").trim_start_matches(".weak").trim_start_matches(".extern").trim();
    l.starts_with(".entry") || l.starts_with(".func")
}

/// `.file 1 "path"` or `.file 1 "dir" "name"` or `.file 1 "path", mtime, size`.
fn parse_file(rest: &str) -> Option<(u32, PathBuf)> {
    let rest = rest.trim();
    let (n, rest) = rest.split_once(char::is_whitespace)?;
    let n: u32 = n.trim().parse().ok()?;
    let strings = quoted_strings(rest);
    let path = match strings.as_slice() {
        [one] => PathBuf::from(one),
        [dir, name, ..] => {
            let name = PathBuf::from(name);
            if name.is_absolute() {
                name
            } else {
                PathBuf::from(dir).join(name)
            }
        }
        [] => return None,
    };
    Some((n, path))
}

/// The strings in double quotes. LLVM escapes non-ASCII bytes of paths as octal (`\303\261`).
/// Rewrites the `.file` lines of a PTX file that name files below `root` to paths relative to
/// it, so two checkouts at different paths build byte-identical PTX and cubins (nvcc has no
/// `-fdebug-prefix-map`; Rust's paths are remapped by rustc already, see `rust::checkout_remaps`).
/// With `outside` (nvcc's PTX), files outside `root` are named relative to it too
/// (`../../include/common.cuh`, a monorepo's shared header), except those below a folder of
/// `outside` (the CUDA install, the system's headers). ptxas errors are resolved against `root`
/// again (`diag::joined`).
pub(crate) fn relative_file_lines(
    ptx: &std::path::Path,
    root: &std::path::Path,
    outside: Option<&[&std::path::Path]>,
) -> crate::Result<()> {
    use crate::error::Error;
    let text = std::fs::read_to_string(ptx).map_err(|e| Error::io("read", ptx, e))?;
    if let Some(rewritten) = rewrite_file_lines(&text, |rest| relative_file_line(rest, root, outside)) {
        crate::cache::write_atomic(ptx, rewritten.as_bytes())?;
    }
    Ok(())
}

/// `text` with each `.file` directive (the first word of its line) rewritten: `rewrite` gets the
/// rest of the line after `.file` (without the newline) and gives its replacement, or `None` to
/// keep it. `None` when no line changed. Only the `.file` lines are looked at and the text
/// between them is copied whole: going over each of the 30,000 lines of one file's PTX took
/// 11-14 ms in a build script (built without optimisation). They are found by their quotes, rare
/// in PTX (26 in candle's 10 MB `quantized.ptx`), with [`crate::text::occurrences`]: searching
/// for `.file` itself met every `e` and took 46-52 ms of that file.
fn rewrite_file_lines(text: &str, mut rewrite: impl FnMut(&str) -> Option<String>) -> Option<String> {
    let mut out = String::new();
    let (mut copied, mut last_start) = (0, None);
    for quote in crate::text::occurrences(text, "\"") {
        let start = text[..quote].rfind('\n').map_or(0, |p| p + 1);
        if start < copied || last_start == Some(start) {
            continue;
        }
        last_start = Some(start);
        let pos = start + (text[start..quote].len() - text[start..quote].trim_start().len());
        if !text[pos..quote].starts_with(".file") {
            continue; // not a `.file` line
        }
        let end = text[pos..].find('\n').map_or(text.len(), |e| pos + e);
        if let Some(new) = rewrite(&text[pos + ".file".len()..end]) {
            if copied == 0 {
                out.reserve(text.len() + 64);
            }
            out.push_str(&text[copied..pos]);
            out.push_str(".file");
            out.push_str(&new);
            copied = end;
        }
    }
    (copied > 0).then(|| out + &text[copied..])
}

/// The rest of a `.file` line (`\t1 "/pkg/./k.cu"`, one path) with its path made relative, or
/// `None` when it stays.
fn relative_file_line(rest: &str, root: &std::path::Path, outside: Option<&[&std::path::Path]>) -> Option<String> {
    let q = rest.find('"')?;
    // The closing quote: a quote after a backslash is part of the name.
    let bytes = rest.as_bytes();
    let mut end = q + 1;
    while end < bytes.len() && bytes[end] != b'"' {
        end += if bytes[end] == b'\\' { 2 } else { 1 };
    }
    let path = PathBuf::from(quoted_strings(&rest[q..=end.min(rest.len() - 1)]).into_iter().next()?);
    if !path.is_absolute() {
        return None;
    }
    let below = path.starts_with(root);
    if !below && outside.is_none_or(|keep| keep.iter().any(|k| path.starts_with(k))) {
        return None;
    }
    let new = crate::diag::path_from(&path, root);
    Some(format!("{}\"{}{}", &rest[..q], escape_path(&new.to_string_lossy()), &rest[end..]))
}

/// `text` with a fixed time on every `.file` line that has none (`.file 1 "src/lib.rs", 1, 0`),
/// or `None` when none lacks one. ptxas stats a `.file` without a time (from its working folder
/// when relative) and writes the mtime and size into the cubin's line table; with a time (not
/// 0, which means "unknown") it looks nothing up.
pub(crate) fn fixed_file_times(text: &str) -> Option<String> {
    rewrite_file_lines(text, |rest| {
        let body = rest.trim_end();
        (body.ends_with('"') && parse_file(body).is_some()).then(|| format!("{body}, 1, 0{}", &rest[body.len()..]))
    })
}

/// A path as LLVM spells it inside a PTX string: printable ASCII as is, `"` and `\\` escaped,
/// every other byte as a three-digit octal escape. The inverse of [`quoted_strings`].
pub(crate) fn escape_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        match b {
            b'"' | b'\\' => {
                out.push('\\');
                out.push(b as char);
            }
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\{b:03o}")),
        }
    }
    out
}

fn quoted_strings(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut bytes = s.bytes().peekable();
    while let Some(b) = bytes.next() {
        if b != b'"' {
            continue;
        }
        let mut cur = Vec::new();
        while let Some(b) = bytes.next() {
            match b {
                b'\\' => {
                    let mut octal = 0u32;
                    let mut digits = 0;
                    while digits < 3 && bytes.peek().is_some_and(|d| (b'0'..=b'7').contains(d)) {
                        octal = octal * 8 + u32::from(bytes.next().unwrap_or(b'0') - b'0');
                        digits += 1;
                    }
                    if digits > 0 {
                        cur.push(octal as u8);
                    } else if let Some(n) = bytes.next() {
                        cur.push(n);
                    }
                }
                b'"' => break,
                b => cur.push(b),
            }
        }
        out.push(String::from_utf8_lossy(&cur).into_owned());
    }
    out
}

/// `.loc 1 20 5` with nvcc's `, function_name $L.., inlined_at 2 30 7` or LLVM's verbose-asm
/// comment `// src/a.rs:20:5 @[ src/lib.rs:30:7 ]`.
fn parse_loc(rest: &str, raw: &str) -> Option<Loc> {
    let code = rest.split("//").next().unwrap_or("");
    let mut parts = code.split(',');
    let mut nums = parts.next()?.split_whitespace().map(|t| t.parse::<u32>().ok());
    let file = nums.next()??;
    let line = nums.next()??;
    let column = nums.next().flatten().unwrap_or(0);
    let mut loc = Loc { file, line, column, inlined_at: Vec::new() };
    // nvcc: `inlined_at FILE LINE COL` (the positions are resolved against .file later).
    for part in parts {
        let part = part.trim();
        if let Some(site) = part.strip_prefix("inlined_at") {
            let n: Vec<u32> = site.split_whitespace().filter_map(|t| t.parse().ok()).collect();
            if n.len() >= 2 {
                loc.inlined_at.push((FileRef::Index(n[0]), n[1], n.get(2).copied().unwrap_or(0)));
            }
        }
    }
    // LLVM: the comment spells out the inline chain as `@[ file:line:col @[ ... ] ]`.
    if let Some(comment) = raw.split_once("//").map(|(_, c)| c) {
        for site in comment.split("@[").skip(1) {
            let site = site.trim().trim_end_matches(']').trim();
            if let Some(pos) = parse_pos(site) {
                loc.inlined_at.push((FileRef::Path(pos.file), pos.line, pos.column));
            }
        }
    }
    Some(loc)
}

fn parse_pos(s: &str) -> Option<SourcePos> {
    let s = s.split_whitespace().next()?;
    let mut it = s.rsplitn(3, ':');
    let column = it.next()?.parse().ok()?;
    let line = it.next()?.parse().ok()?;
    let file = it.next()?;
    Some(SourcePos { file: PathBuf::from(file), line, column })
}

/// Parses `.entry name(` ... `)` and the performance directives after it (`.maxntid`, ..):
/// `first` is the header line after `.entry`, `lines` start at the header line; returns the
/// entry and lines consumed.
fn parse_entry(first: &str, lines: &[&str]) -> (Option<Entry>, usize) {
    let name: String = first.trim().chars().take_while(|c| *c != '(' && !c.is_whitespace()).collect();
    if name.is_empty() {
        return (None, 1);
    }
    let mut params = Vec::new();
    let mut consumed = 0;
    let mut max_threads = None;
    let mut in_params = true;
    for l in lines {
        let trimmed = l.trim();
        if in_params {
            consumed += 1;
            if trimmed.starts_with(".param") {
                if let Some(p) = parse_param(trimmed) {
                    params.push(p);
                }
            }
            if trimmed.contains('{') {
                break;
            }
            in_params = !trimmed.contains(')');
            continue;
        }
        // Between `)` and `{`: `.maxntid 256, 1, 1` (nvcc) or `.maxntid 256` (LLVM), and the
        // other tuning directives; anything else ends the header, unconsumed.
        let directive = trimmed.split("//").next().unwrap_or_default().trim();
        if let Some(dims) = directive.strip_prefix(".maxntid").or_else(|| directive.strip_prefix(".reqntid")) {
            max_threads = dims.split(',').map(|d| d.trim().parse::<u32>().ok()).try_fold(1u32, |acc, d| acc.checked_mul(d?));
        } else if !(directive.is_empty() || TUNING.iter().any(|t| directive.starts_with(t))) {
            break;
        }
        consumed += 1;
    }
    (Some(Entry { name, params, line: 0, max_threads }), consumed)
}

/// The performance-tuning directives that may stand between an entry's parameters and its body.
const TUNING: &[&str] = &[".minnctapersm", ".maxnreg", ".maxclusterrank", ".reqnctapercluster", ".explicitcluster", ".noreturn", ".pragma"];

/// `.param .u64 .ptr .global .align 4 k_param_0,` or `.param .align 8 .b8 k_param_1[24]`.
fn parse_param(line: &str) -> Option<Param> {
    let line = line.trim_end_matches(',').trim_end_matches(')').trim();
    let mut ty = None;
    let mut align = None;
    let mut pointee_align = None;
    let mut is_ptr = false;
    let mut name = None;
    let mut tokens = line.split_whitespace().skip(1);
    while let Some(t) = tokens.next() {
        match t {
            ".align" => {
                let n = tokens.next().and_then(|a| a.parse::<u32>().ok());
                if is_ptr {
                    pointee_align = n;
                } else {
                    align = n;
                }
            }
            ".ptr" => is_ptr = true,
            ".global" | ".shared" | ".const" | ".local" => {}
            t if t.starts_with('.') => ty = Some(t.to_string()),
            t => name = Some(t.to_string()),
        }
    }
    let ty = ty?;
    let name = name?;
    let scalar = scalar_size(&ty)?;
    let (name, size) = match name.split_once('[') {
        // Checked: a hand-written `[4294967295]` must not wrap into a small size.
        Some((n, count)) => (n.to_string(), scalar.checked_mul(count.trim_end_matches(']').parse::<u32>().ok()?)?),
        None => (name, scalar),
    };
    Some(Param { name, size, align: align.unwrap_or(scalar), ty, is_ptr, pointee_align })
}

fn scalar_size(ty: &str) -> Option<u32> {
    let bits: u32 = ty.trim_start_matches(['.', 'u', 's', 'b', 'f']).parse().ok()?;
    Some((bits / 8).max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// nvcc 13.0's PTX (`-arch=compute_80`) of three kernels: one that syncs its grid, one that
    /// only takes its grid's rank (no workspace read), one that asks `is_valid()`.
    #[test]
    fn entries_that_read_the_grid_workspace_need_a_cooperative_launch() {
        let ptx = ".version 9.0\n.target sm_80\n.address_size 64\n\n\t// .globl\ttwo_phase\n\
            .visible .entry two_phase(\n\t.param .u64 .ptr .align 1 two_phase_param_0,\n\t.param .u32 two_phase_param_1\n)\n{\n\
            \t// begin inline asm\n\tmov.u32 %r5, %envreg2;\n\t// end inline asm\n\tmov.u32 %r6, %envreg1;\n\tbarrier.sync \t0;\n\tret;\n}\n\
            \t// .globl\trank_only\n.visible .entry rank_only(\n\t.param .u64 .ptr .align 1 rank_only_param_0\n)\n{\n\tmov.u32 \t%r7, %ctaid.z;\n\tret;\n}\n\
            .func  (.param .b32 func_retval0) helper(\n\t.param .b32 helper_param_0\n)\n{\n\tmov.u32 %r1, %envreg1;\n\tret;\n}\n\
            .visible .entry valid(\n\t.param .u64 .ptr .align 1 valid_param_0\n)\n{\n\tmov.u32 %r1, %envreg2;\n\tmov.u32 %r2, %envreg10;\n\tret;\n}\n";
        assert_eq!(cooperative_entries(ptx), ["two_phase", "valid"]);
        assert!(cooperative_entries(&ptx.replace("%envreg", "%ctaid.x //")).is_empty());
    }

    const LLVM: &str = r#"//
.version 7.8
.target sm_90
.address_size 64

	// .globl	saxpy
.visible .entry saxpy(
	.param .u32 saxpy_param_0,
	.param .f32 saxpy_param_1,
	.param .u64 .ptr .align 1 saxpy_param_2,
	.param .align 8 .b8 saxpy_param_3[24]
)
{
	.reg .b32 	%r<5>;
$L__func_begin0:
	.loc	1 12 0                          // src/lib.rs:12:0
	mov.u32 	%r1, %ctaid.x;
	.loc	2 85 5                          // core/nvptx/mod.rs:85:5 @[ src/lib.rs:13:14 ]
	add.s32 	%r2, %r1, 1;
	ret;
}
.visible .entry second()
{
	ret;
}
	.file	1 "/home/u/k/src/lib.rs"
	.file	2 "/rust/core" "nvptx/mod.rs"
"#;

    #[test]
    fn reads_header_entries_and_params() {
        let m = Module::parse(LLVM);
        assert_eq!(m.version.as_deref(), Some("7.8"));
        assert_eq!(m.target, vec!["sm_90"]);
        let e = m.entry("saxpy").unwrap();
        let sizes: Vec<(u32, u32, bool)> = e.params.iter().map(|p| (p.size, p.align, p.is_ptr)).collect();
        assert_eq!(sizes, vec![(4, 4, false), (4, 4, false), (8, 8, true), (24, 8, false)], "a pointer parameter is a u64");
        assert_eq!(e.params[2].pointee_align, Some(1));
        assert_eq!(e.params[3].pointee_align, None);
        assert!(m.entry("second").unwrap().params.is_empty());
    }

    #[test]
    fn the_entries_alone_are_read_as_the_whole_parse_reads_them() {
        let nvcc =
            ".version 9.0\n.visible .entry cu_h(\n\t.param .u32 cu_h_param_0\n)\n\t.maxntid 256, 1, 1\n\t.minnctapersm 4\n{\n\tret;\n}\n";
        let unicode = "\u{85}\u{2003}\u{2003}.entry k(\n.param .u32 n\n)\n// .entry in a comment\n";
        for text in [LLVM, nvcc, unicode, ".visible .entry a()\n{\n}\n\n.visible .entry b(.param .u64 p)\n{\n}\n"] {
            let (whole, entries) = (Module::parse(text), Module::parse_entries(text));
            let unnumbered = whole.entries.into_iter().map(|e| Entry { line: 0, ..e }).collect::<Vec<_>>();
            assert_eq!(entries.entries, unnumbered, "{text}");
            assert_eq!(entries.version, whole.version);
        }
    }

    #[test]
    fn maps_ptx_lines_to_source_with_inline_chain() {
        let m = Module::parse(LLVM);
        let (pos, inl) = m.source_of(17).unwrap();
        assert_eq!(pos.file, PathBuf::from("/home/u/k/src/lib.rs"));
        assert_eq!(pos.line, 12);
        let (pos, inl2) = m.source_of(19).unwrap();
        assert_eq!(pos.file, PathBuf::from("/rust/core/nvptx/mod.rs"));
        assert!(inl.is_empty());
        // The comment's `src/lib.rs` is the one `.file` of that name.
        assert_eq!(inl2, vec![SourcePos { file: "/home/u/k/src/lib.rs".into(), line: 13, column: 14 }]);
        // A line in the next function, before any .loc of its own, maps to nothing.
        assert_eq!(m.source_of(24), None);
        // Two files of one name: the one with a `.loc` at the frame's line, else the one spelt
        // exactly so (the kernel crate's), not a dependency's of the same name.
        let two = ".visible .entry k()\n{\n.loc 2 126 0\n.loc 1 44 8 // src/lib.rs:44:8 @[ src/lib.rs:126:48 ]\nadd.u32 %r1, %r1, 1;\n.loc 3 9 1 // src/option.rs:9:1 @[ src/lib.rs:45:3 ]\nadd.u32 %r1, %r1, 1;\n}\n.file 1 \"src/lib.rs\"\n.file 2 \"../../ptx-device/src/lib.rs\"\n.file 3 \"/core/src/option.rs\"\n";
        let m = Module::parse(two);
        assert_eq!(m.source_of(5).unwrap().1[0].file, PathBuf::from("../../ptx-device/src/lib.rs"));
        assert_eq!(m.source_of(7).unwrap().1[0].file, PathBuf::from("src/lib.rs"));
    }

    #[test]
    fn file_lines_get_a_fixed_time_so_ptxas_looks_nothing_up() {
        let ptx = ".version 8.0\n\t.loc\t1 2 3 // src/lib.rs:2:3\n\t.file\t1 \"src/lib.rs\"\n\t.file\t2 \"../../ptx-device/src/lib.rs\"\r\n\t.file\t3 \"/a/b.cu\", 1764000000, 120\n";
        let fixed = fixed_file_times(ptx).unwrap();
        assert_eq!(
            fixed,
            ".version 8.0\n\t.loc\t1 2 3 // src/lib.rs:2:3\n\t.file\t1 \"src/lib.rs\", 1, 0\n\t.file\t2 \"../../ptx-device/src/lib.rs\", 1, 0\r\n\t.file\t3 \"/a/b.cu\", 1764000000, 120\n"
        );
        assert_eq!(Module::parse(&fixed).files, Module::parse(ptx).files, "the same file table");
        assert_eq!(fixed_file_times(".version 8.0\n\t.file\t1 \"a.cu\", 5, 6\n"), None, "nothing to fix");
    }

    #[test]
    fn file_lines_are_made_relative_to_the_package_without_nvccs_dot() {
        let dir = tempfile::tempdir().unwrap();
        let pkg = dir.path().join("pkg ñ");
        let ptx = dir.path().join("k.ptx");
        let abs = escape_path(&pkg.display().to_string());
        std::fs::write(
            &ptx,
            format!(".version 8.0\n// .file\t9 \"{abs}/k.cu\"\n\t.file\t1 \"{abs}/./-o.cu\"\r\n\t.file\t2 \"{abs}/cuda/k.cuh\"\n\t.file\t3 \"/usr/include/x.h\"\n.file 4 \"{abs}/last.cuh\""),
        )
        .unwrap();
        relative_file_lines(&ptx, &pkg, None).unwrap();
        let text = std::fs::read_to_string(&ptx).unwrap();
        assert_eq!(
            text,
            format!(
                ".version 8.0\n// .file\t9 \"{abs}/k.cu\"\n\t.file\t1 \"-o.cu\"\r\n\t.file\t2 \"cuda/k.cuh\"\n\t.file\t3 \"/usr/include/x.h\"\n.file 4 \"last.cuh\""
            ),
            "a comment and the system header stay; CRLF and a last line without a newline keep their ends"
        );
    }

    #[test]
    fn nvccs_file_lines_outside_the_package_climb_with_dot_dot_except_the_install_and_system() {
        let dir = tempfile::tempdir().unwrap();
        let pkg = dir.path().join("mono ñ/kernels/cuda-k");
        let ptx = dir.path().join("k.ptx");
        let shared = escape_path(&dir.path().join("mono ñ/include/common.cuh").display().to_string());
        let own = escape_path(&pkg.join("./k.cu").display().to_string());
        std::fs::write(
            &ptx,
            format!("\t.file\t1 \"{own}\"\n\t.file\t2 \"{shared}\"\n\t.file\t3 \"/cuda/include/cuda_fp16.hpp\"\n\t.file\t4 \"/usr/include/x.h\"\n"),
        )
        .unwrap();
        relative_file_lines(&ptx, &pkg, Some(&[std::path::Path::new("/cuda"), std::path::Path::new("/usr")])).unwrap();
        let text = std::fs::read_to_string(&ptx).unwrap();
        assert_eq!(
            text,
            "\t.file\t1 \"k.cu\"\n\t.file\t2 \"../../include/common.cuh\"\n\t.file\t3 \"/cuda/include/cuda_fp16.hpp\"\n\t.file\t4 \"/usr/include/x.h\"\n"
        );
        let m = Module::parse(&text);
        assert_eq!(crate::diag::joined(&pkg, &m.files[&2]), dir.path().join("mono ñ/include/common.cuh"));
    }

    #[test]
    fn decodes_octal_escapes_in_file_names() {
        let m = Module::parse(".visible .entry k()\n{\n.loc 1 3 1\nret;\n}\n.file 1 \"/tmp/kernels \\303\\261/a \\\"q\\\".rs\"\n");
        assert_eq!(m.source_of(4).unwrap().0.file, PathBuf::from("/tmp/kernels ñ/a \"q\".rs"));
    }

    #[test]
    fn reads_nvcc_inlined_at() {
        let m = Module::parse(".version 9.0\n.visible .func f()\n{\n.loc 1 10 5, function_name $L__info_string0, inlined_at 1 20 3\nadd.s32 %r1, %r1, %r1;\n}\n.file 1 \"k.cu\"\n");
        let (pos, inl) = m.source_of(5).unwrap();
        assert_eq!((pos.line, pos.column), (10, 5));
        assert_eq!(inl.len(), 1);
        assert_eq!((inl[0].line, inl[0].column), (20, 3));
    }

    #[test]
    fn hand_written_headers_neither_panic_nor_misread() {
        let m = Module::parse("  .visible .entry saxpy(\n  .param .u32 n\n)\n{\n}\n");
        assert_eq!(m.entries.iter().map(|e| e.name.as_str()).collect::<Vec<_>>(), ["saxpy"], "indented header");
        let m = Module::parse("\u{85}\u{2003}\u{2003}.entry k(\n.param .u32 n\n)\n");
        assert_eq!(m.entries[0].name, "k", "Unicode indentation");
        let m = Module::parse(".visible .entry k(\n.param .align 8 .b64 p[4294967295]\n)\n");
        assert!(m.entries[0].params.is_empty(), "an overflowing size is not a parameter: {:?}", m.entries[0].params);
    }

    #[test]
    fn reads_launch_bounds_as_nvcc_and_llvm_write_them() {
        let nvcc = ".visible .entry cu_h(\n\t.param .u32 cu_h_param_0\n)\n\t.maxntid 256, 1, 1\n\t.minnctapersm 4\n{\n\tret;\n}\n";
        let llvm = ".visible .entry rs_h(\n\t.param .u32 rs_h_param_0\n)\n.maxntid 128\n.minnctapersm 2                         // @rs_h\n{\n\tret;\n}\n.visible .entry plain()\n{\n}\n.visible .entry req()\n.reqntid 32, 8\n{\n}\n";
        let m = Module::parse(nvcc);
        assert_eq!(m.entry("cu_h").unwrap().max_threads, Some(256));
        assert_eq!(m.entry("cu_h").unwrap().params.len(), 1);
        let m = Module::parse(llvm);
        assert_eq!(m.entry("rs_h").unwrap().max_threads, Some(128));
        assert_eq!(m.entry("plain").unwrap().max_threads, None);
        assert_eq!(m.entry("req").unwrap().max_threads, Some(256));
        // A bad or overflowing bound is no bound.
        let m = Module::parse(".entry k()\n.maxntid 65536, 65536, 2\n{\n}\n.entry j()\n.maxntid x\n{\n}\n");
        assert_eq!(m.entries.iter().map(|e| e.max_threads).collect::<Vec<_>>(), [None, None]);
    }
}
