//! nvcc's output read as diagnostics: the CUDA front end's (EDG) errors and warnings with their
//! source line, column and template instance, the host preprocessor's, and nvcc's own.

use std::path::Path;

use crate::arch::Arch;
use crate::diag::{relative, Diagnostic, Level, IN_MACRO_EXPANSION};
use crate::tools::Tool;

/// The warnings in nvcc's output of a successful run (the EDG front end's, the host
/// preprocessor's), each at its source line.
/// A template's warning comes once per instance (`... "accum(Op, T, T) [with T=float]"`, then
/// `[with T=double]`): one warning at a place, naming the instances.
/// `flag_help` says how to pass an nvcc flag, for the note on each numbered warning's
/// `-diag-suppress`.
pub fn warnings(text: &str, root: &Path, arch: Arch, nvcc: &Tool, flag_help: &dyn Fn(&str) -> String) -> Vec<Diagnostic> {
    let mut out: Vec<(Diagnostic, Vec<String>)> = Vec::new();
    for mut d in parse(text, root, arch, nvcc, Some(flag_help)).into_iter().filter(|d| d.level == Level::Warning) {
        let instance = template_instance(&d.message).map(|(base, with)| (base, with.to_string()));
        if let Some((base, _)) = &instance {
            d.message = base.clone();
        }
        // Or in where it was instantiated (`detected during instantiation of "f(T *) [with
        // T=float]" at ...`), which differs per instance: the innermost one names it.
        let context = d.notes.iter().position(|n| n.starts_with(CONTEXT));
        let from_context = context.and_then(|at| template_instance(&d.notes[at]).map(|(_, w)| w.to_string()));
        let with = instance.map(|(_, w)| w).or(from_context);
        // The instances list says which: their contexts (`at line 60`, `at line 61`) would keep
        // one warning per instance apart.
        if with.is_some() {
            d.notes.retain(|n| !n.starts_with(CONTEXT));
        }
        match out.iter_mut().find(|(seen, _)| *seen == d) {
            Some((_, instances)) => instances.extend(with.filter(|w| !instances.contains(w))),
            None => out.push((d, with.into_iter().collect())),
        }
    }
    out.into_iter()
        .map(|(mut d, instances)| {
            if !instances.is_empty() {
                d.message = format!("{} (instances: {})", d.message, instances.join("; "));
            }
            d
        })
        .collect()
}

/// `f(T) [with T=float]` in an EDG message: the message without it, and `T=float`. Brackets
/// nest (`[with F=lambda []()->void]`).
fn template_instance(message: &str) -> Option<(String, &str)> {
    let start = message.find(" [with ")?;
    let mut depth = 0usize;
    let mut end = None;
    for (i, c) in message[start + 1..].char_indices() {
        match c {
            '[' => depth += 1,
            ']' => {
                depth -= 1;
                if depth == 0 {
                    end = Some(start + 1 + i);
                    break;
                }
            }
            _ => {}
        }
    }
    let end = end?;
    Some((format!("{}{}", &message[..start], &message[end + 1..]), &message[start + " [with ".len()..end]))
}

pub(super) const INCLUDE_HELP: &str = "add the header's folder to";

/// How a note on where a template was instantiated starts.
const CONTEXT: &str = "detected during";

/// nvcc's output as diagnostics. Three forms appear:
/// - the CUDA front end (EDG): `a.cu(12): error: MESSAGE`, then more of the message, the source
///   line with a `^` under the column, and where a template was instantiated (see [`edg_block`]);
/// - the host preprocessor (gcc): `a.cu:1:10: fatal error: x.h: No such file or directory`;
/// - nvcc itself: `nvcc fatal   : Unsupported gpu architecture 'compute_70'`.
pub fn diagnostics(text: &str, root: &Path, arch: Arch, nvcc: &Tool) -> Vec<Diagnostic> {
    // A failed run's warnings come without how to silence them: the errors are what to fix.
    let mut out = parse(text, root, arch, nvcc, None);
    // Anything else nvcc said (for example "N errors detected") is a summary or context:
    // kept only when nothing else was recognised.
    if out.iter().all(|d| d.level != Level::Error) {
        out.push(Diagnostic::error(format!("nvcc failed:\n{}", text.trim_end())));
    }
    out
}

/// The diagnostics nvcc's output holds in the forms [`diagnostics`] lists; numbered warnings get
/// a note with their `-diag-suppress` flag, passed as `flag_help` says, where it is given.
fn parse(text: &str, root: &Path, arch: Arch, nvcc: &Tool, flag_help: Option<&dyn Fn(&str) -> String>) -> Vec<Diagnostic> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out: Vec<Diagnostic> = Vec::new();
    let mut sources: Vec<(&str, Option<Vec<String>>)> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        i += 1;
        if let Some(msg) = line.strip_prefix("nvcc fatal").and_then(|r| r.split_once(':')).map(|(_, m)| m.trim()) {
            let mut d = Diagnostic::error(format!("nvcc: {msg}"));
            if msg.contains("Unsupported gpu architecture") {
                let dropped =
                    crate::arch::dropped_by(arch, nvcc.release()).map(|d| format!(" ({d} nvcc through NVCC)")).unwrap_or_default();
                d = d.note(format!(
                    "nvcc {} cannot compile for {}{dropped}: choose an arch it lists in `nvcc --list-gpu-arch`",
                    nvcc.version,
                    arch.compute_name()
                ));
            }
            if msg.contains("host compiler") {
                // What the compiler's start said (`/no/such/g++: No such file or directory`).
                let said = i.checked_sub(2).map(|p| lines[p].trim()).filter(|l| !l.is_empty() && !l.starts_with("nvcc"));
                if let Some(said) = said {
                    d.message = format!("nvcc: {} ({said})", msg.trim_end_matches('.'));
                }
                d = d.note(HOST_COMPILER_HELP.to_string());
            }
            out.push(d);
            continue;
        }
        // `nvcc warning : The 'compute_70' architecture is deprecated ...`: nvcc's own.
        if let Some(msg) = line.strip_prefix("nvcc warning").and_then(|r| r.split_once(':')).map(|(_, m)| m.trim()) {
            out.push(Diagnostic::warning(format!("nvcc: {msg}")));
            continue;
        }
        if let Some((file, line_no, rest)) = edg_location(line) {
            let block = edg_block(&lines[i..]);
            i += block.len;
            let shown_file = relative(&root.join(file), root);
            let context = block.context.iter().map(|c| context_note(c));
            // `note #3328-D: built-in operator* does not match ...`: why, for the diagnostic above.
            if let Some(note) = rest.trim_start().strip_prefix("note") {
                if let Some(d) = out.last_mut() {
                    let note = note.split_once(':').map_or(note, |(_, n)| n).trim();
                    let at = match (d.file.as_ref() == Some(&shown_file), d.line == Some(line_no)) {
                        (true, true) => String::new(),
                        (true, false) => format!(" (line {line_no})"),
                        (false, _) => format!(" ({file}:{line_no})"),
                    };
                    add_note(d, format!("note: {note}{at}"));
                    context.for_each(|c| add_note(d, c));
                }
                continue;
            }
            let Some((level, message)) = level_and_message(rest) else { continue };
            // Read once a parse: a template's warning can come a thousand times from one header.
            if !sources.iter().any(|(f, _)| *f == file) {
                let text = std::fs::read_to_string(root.join(file)).ok();
                sources.push((file, text.map(|t| t.lines().map(str::to_string).collect())));
            }
            let original = sources.iter().find(|(f, _)| *f == file).and_then(|(_, lines)| lines.as_ref());
            let original_line = original.and_then(|l| l.get((line_no as usize).checked_sub(1)?)).map(String::as_str);
            let (column, expansion) = match block.shown {
                Some((shown, caret)) => edg_column(shown, caret, original_line),
                None => (None, None),
            };
            let dynamic_parallelism = message.contains("requires separate compilation mode");
            let mut d = Diagnostic::new(level, message).at(&shown_file, Some(line_no), column).rooted(root);
            if dynamic_parallelism {
                d = d.note(DYNAMIC_PARALLELISM_HELP);
            }
            d.notes.extend(block.more.iter().map(|m| m.to_string()));
            d.notes.extend(expansion);
            d.notes.extend(context);
            if let (Level::Warning, Some(n), Some(help)) = (level, edg_number(rest), flag_help) {
                d = d.note(format!("{} silences this warning", help(&format!("-diag-suppress={n}"))));
            }
            out.push(d);
            continue;
        }
        if let Some((file, line_no, col, rest)) = gcc_location(line) {
            let Some((level, message)) = level_and_message(rest) else { continue };
            let mut d = Diagnostic::new(level, message.clone()).at(relative(&root.join(file), root), Some(line_no), Some(col)).rooted(root);
            // crt/host_config.h's version check of the host compiler.
            if message.contains("-allow-unsupported-compiler") {
                d = d.note(format!("{HOST_COMPILER_HELP}; or pass nvcc `-allow-unsupported-compiler` (`nvcc-flags`), at your own risk"));
            }
            if message.contains("No such file or directory") {
                let header = message.split(": No such file or directory").next().unwrap_or_default().trim();
                d = d.note(match crate::tools::cuda_library_of_header(header) {
                    Some(lib) => library_help(lib, header, nvcc),
                    None => format!("{INCLUDE_HELP} `cuda-include` in [package.metadata.ptx] (relative to the package), `-I DIR` on the command line or `.cuda_include(DIR)` in build.rs, or fix the #include path"),
                });
            }
            out.push(d);
            continue;
        }
    }
    out
}

/// The note on a missing header of a CUDA toolkit library that NVIDIA's compiler wheels leave
/// out (cuRAND's, cuBLAS's, ...): the setup command that puts them into cargo-ptx's CUDA
/// install, or, where `nvcc` is another toolkit's (a system `/usr/local/cuda`), where they go.
fn library_help(lib: &crate::tools::CudaLibrary, header: &str, nvcc: &Tool) -> String {
    let name = lib.name;
    let ours = crate::tools::home().is_some_and(|h| nvcc.path.starts_with(h));
    if !ours {
        let toolkit = nvcc.path.parent().and_then(Path::parent).unwrap_or(&nvcc.path);
        return format!(
            "{}'s headers are not in the CUDA toolkit of this nvcc ({}): install its {} development files there, or build with cargo-ptx's own toolkit: `cargo ptx setup --with {name}`, then set NVCC to the nvcc it installed (`cargo ptx doctor` names it)",
            lib.title,
            toolkit.display(),
            lib.title
        );
    }
    let setup = format!("run `cargo ptx setup --with {name}` (puts them where every nvcc run finds them)");
    // NVTX 3, the one NVIDIA's wheel has, is `nvtx3/nvToolsExt.h`.
    match lib.header.split_once('/') {
        Some((folder, _)) if !header.starts_with(&format!("{folder}/")) => {
            format!("{} is `<{}>` in NVIDIA's `{name}` wheel: include that, and {setup}", lib.title, lib.header)
        }
        _ => format!("{}'s headers are not part of NVIDIA's CUDA compiler wheels: {setup}", lib.title),
    }
}

/// A kernel that launches kernels (CUDA's `cdpSimpleQuicksort`): what builds it.
const DYNAMIC_PARALLELISM_HELP: &str = "a kernel that launches kernels (dynamic parallelism) needs relocatable device code linked against cudadevrt, which a PTX module cannot have: build the file into a static library (`.cuda_static_lib(NAME, GLOB)` in build.rs, not `.cuda(..)`) with `-rdc=true` in `nvcc-flags`, and start it from a host function";

/// The note on nvcc's failures with the host C++ compiler (one it refuses, one it cannot run).
const HOST_COMPILER_HELP: &str = "nvcc runs the host C++ compiler that the `cc` crate picks (CXX, else c++): `cargo ptx doctor` says which it is, why nvcc fails with it, and names one on PATH that nvcc accepts; set CXX to that one";

fn level_and_message(rest: &str) -> Option<(Level, String)> {
    let rest = rest.trim_start();
    let forms = [("catastrophic error", Level::Error), ("fatal error", Level::Error), ("error", Level::Error), ("warning", Level::Warning)];
    for (prefix, level) in forms {
        if let Some(r) = rest.strip_prefix(prefix) {
            // EDG may add a number: `error #20-D: ...`.
            let r = r.trim_start();
            let r = if r.starts_with('#') { r.split_once(':').map_or(r, |(_, m)| m) } else { r.strip_prefix(':').unwrap_or(r) };
            return Some((level, r.trim().to_string()));
        }
    }
    None
}

/// The number of an EDG diagnostic (`warning #177-D: ...` -> `177`).
fn edg_number(rest: &str) -> Option<&str> {
    let (_, after) = rest.split_once('#')?;
    let n = after.split(['-', ':']).next()?;
    (!n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())).then_some(n)
}

/// `path(12): rest`
fn edg_location(line: &str) -> Option<(&str, u32, &str)> {
    let (head, rest) = line.split_once("): ")?;
    let (file, n) = head.rsplit_once('(')?;
    Some((file, n.parse().ok()?, rest))
}

/// `path:12:5: rest`
fn gcc_location(line: &str) -> Option<(&str, u32, u32, &str)> {
    let mut parts = line.splitn(4, ':');
    let file = parts.next()?;
    let l = parts.next()?.parse().ok()?;
    let c = parts.next()?.parse().ok()?;
    Some((file, l, c, parts.next()?))
}

/// At most this many of EDG's `note`s are kept on a diagnostic (one per overload it tried).
const MAX_EDG_NOTES: usize = 4;

fn add_note(d: &mut Diagnostic, note: String) {
    if d.notes.contains(&note) {
        return;
    }
    let edg_notes = d.notes.iter().filter(|n| n.starts_with("note: ")).count();
    if note.starts_with("note: ") && edg_notes >= MAX_EDG_NOTES {
        return;
    }
    d.notes.push(note);
}

/// The lines after an EDG diagnostic's first, up to the next diagnostic.
#[derive(Debug, Default, PartialEq)]
struct EdgBlock<'a> {
    /// Lines that go on with the message (`operand types are: P * const P`).
    more: Vec<&'a str>,
    /// The line EDG shows (the source line indented by two, or a macro's expansion) and the
    /// byte offset of the `^` under it.
    shown: Option<(&'a str, usize)>,
    /// Where the template was instantiated, innermost first (`instantiation of "f(T *) [with
    /// T=P]" at line 16`).
    context: Vec<String>,
    /// How many lines the block has.
    len: usize,
}

/// EDG's lines after a diagnostic's first: all indented, ended by a blank line, the next
/// diagnostic or nvcc's summary. `detected during instantiation of X at line N`, or
/// `detected during:` with one `instantiation of X at line N` a line, says which instance of a
/// template the diagnostic is in: without it a user cannot tell which of many failed.
fn edg_block<'a>(lines: &[&'a str]) -> EdgBlock<'a> {
    let mut b = EdgBlock::default();
    // After `detected during:`, one instance a line.
    let mut listing = false;
    let mut j = 0;
    while let Some(line) = lines.get(j) {
        // nvcc 11 and older put an instance's place on a line of its own: `/p/x.h(282): here`.
        if let (Some(last), Some(place)) = (b.context.last_mut(), line.strip_suffix("): here")) {
            if let Some((file, n)) = place.rsplit_once('(') {
                last.push_str(&format!(" at line {n} of {file}"));
                j += 1;
                continue;
            }
        }
        if line.trim().is_empty() || !line.starts_with(' ') {
            break;
        }
        let text = line.trim();
        if let Some(caret) = lines.get(j + 1).filter(|c| b.shown.is_none() && c.trim() == "^") {
            b.shown = Some((line, caret.find('^').unwrap_or(0)));
            j += 2;
            continue;
        }
        match text.strip_prefix(CONTEXT).map(str::trim) {
            Some(":") => listing = true,
            Some(what) => b.context.push(what.to_string()),
            None if b.shown.is_none() && !listing && b.context.is_empty() => b.more.push(text),
            None => b.context.push(text.to_string()),
        }
        j += 1;
    }
    b.len = j;
    b
}

/// `instantiation of "f" at line 16 of /p/h.cuh` as a note naming the place as `/p/h.cuh:16`,
/// which editors and terminals open; a line of the diagnostic's own file stays `at line 16`.
fn context_note(what: &str) -> String {
    let place = what.rsplit_once(" at line ").and_then(|(head, tail)| {
        let (n, path) = tail.split_once(" of ")?;
        // nvcc runs on `./dir/file.cu` (so a file named `-o.cu` is no option): the `./` goes.
        let path = path.trim_matches('"');
        n.parse::<u32>().ok().map(|n| format!("{head} at {}:{n}", path.strip_prefix("./").unwrap_or(path)))
    });
    format!("{CONTEXT} {}", place.as_deref().unwrap_or(what))
}

/// The 1-based column in the file's `original` line of what EDG's caret (`caret`, a byte offset
/// in `shown`) points at, and a note where that cannot be found. EDG shows the source line
/// indented by two, or, with a macro in it, the line's expansion (`__device__` is one:
/// `__attribute__((device))`): there the text from the caret on is looked for in the line as
/// written, shortened down to the token under the caret, and taken where it is found once
/// (`sqr` in `STAMP(sq_f32, sqr)` for `identifier "sqr" is undefined`). A place inside a
/// macro's body has no column: EDG's is one in the expansion, past the line's end, where an
/// editor would jump to nothing; the note shows the expansion around it instead.
fn edg_column(shown: &str, caret: usize, original: Option<&str>) -> (Option<u32>, Option<String>) {
    let Some(original) = original.map(str::trim_end) else {
        return (Some((caret.saturating_sub(2) + 1) as u32), None);
    };
    let column = |at: usize| original.get(..at).map(|before| before.chars().count() as u32 + 1);
    if shown.trim() == original.trim() {
        let indent = original.len() - original.trim_start().len();
        let at = (caret + indent).saturating_sub(shown.len() - shown.trim_start().len());
        return match at.cmp(&original.len()) {
            std::cmp::Ordering::Less => (column(at), None),
            // Just past the last character: the end of the line (`expected a ";"`).
            std::cmp::Ordering::Equal => (Some(original.chars().count() as u32 + 1), None),
            // Further: EDG counts in the expansion of a macro on the line.
            std::cmp::Ordering::Greater => (None, Some(IN_MACRO_EXPANSION.to_string())),
        };
    }
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let tail = shown.get(caret..).unwrap_or("").trim_end();
    let token = match tail.find(|c: char| !is_word(c)) {
        Some(0) => tail.chars().next().map_or(0, char::len_utf8),
        Some(end) => end,
        None => tail.len(),
    };
    let word = tail.starts_with(is_word);
    let found = (token..=tail.len().min(48.max(token))).rev().filter(|&len| token > 0 && tail.is_char_boundary(len)).find_map(|len| {
        let whole = |at: usize| {
            let starts = !word || !original[..at].ends_with(is_word);
            let ends = !word || len > token || !original[at + len..].starts_with(is_word);
            starts && ends
        };
        let mut hits = original.match_indices(&tail[..len]).map(|(at, _)| at).filter(|&at| whole(at));
        match (hits.next(), hits.next()) {
            (Some(at), None) => Some(at),
            _ => None,
        }
    });
    if let Some(at) = found {
        return (column(at), None);
    }
    // Up to 40 bytes either side of the caret, on character boundaries.
    let mut from = (caret.saturating_sub(40)..=caret.min(shown.len())).find(|&k| shown.is_char_boundary(k)).unwrap_or(0);
    // From a word's start.
    if from > 0 {
        from = shown.get(from..caret).and_then(|s| s.find(' ')).map_or(from, |sp| from + sp + 1);
    }
    let to = (caret + 40..shown.len()).find(|&k| shown.is_char_boundary(k)).unwrap_or(shown.len()).max(from);
    let cut = |yes: bool| if yes { "..." } else { "" };
    let indent = shown.len() - shown.trim_start().len();
    let excerpt = format!("{}{}{}", cut(from > indent), shown[from..to].trim(), cut(to < shown.trim_end().len()));
    (None, Some(format!("{IN_MACRO_EXPANSION}: `{excerpt}`")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::{test_tool as tool, Compiled};
    use crate::options::Source;

    #[test]
    fn a_successful_runs_warnings_are_kept_with_how_to_silence_them() {
        // What nvcc 13.0 prints for dfdx's relu.cu (a macro's unused variable), twice for two
        // uses of the macro, plus the host preprocessor's redefinition warning (ggml's).
        let text = "kernels/relu.cu(18): warning #177-D: variable \"y\" was declared but never referenced\n  UNARY_OP(__half, relu_fwd_f16, relu_bwd_f16, ReLUKernelOp,\n                                                                                                                                ^\n\n\
Remark: The warnings can be suppressed with \"-diag-suppress <warning-number>\"\n\n\
kernels/relu.cu(18): warning #177-D: variable \"y\" was declared but never referenced\n  UNARY_OP(__half, relu_fwd_f16, relu_bwd_f16, ReLUKernelOp,\n                                                                                                                                ^\n\n\
kernels/common.cuh:3:9: warning: \"GGML_MAX_DIMS\" redefined\n";
        // The flag to silence one is said for the front end that started the build.
        let table = Source::Package("/p/Cargo.toml".into());
        // Where a table's `nvcc-flags` are in force, the flag goes there: one of the front end's
        // would replace the table's list.
        let in_table = "`-diag-suppress=177` added to `nvcc-flags` in [package.metadata.ptx] of /p/Cargo.toml";
        let fronts: [(Source, Option<&Source>, &str); 4] = [
            (Source::Builder("/p/build.rs".into()), None, "`.nvcc_flag(\"-diag-suppress=177\")` in build.rs"),
            (Source::Builder("/p/build.rs".into()), Some(&table), in_table),
            (Source::CommandLine, Some(&table), in_table),
            (Source::CommandLine, None, "`--nvcc-flag=-diag-suppress=177`"),
        ];
        for (front, table, flag) in fronts {
            let help = |f: &str| front.nvcc_flag_help(table, f);
            let w = warnings(text, Path::new("/p"), Arch::sm(80), &tool(), &help);
            assert_eq!(w[0].notes, [format!("{flag} silences this warning")]);
        }
        let metadata = |f: &str| Source::CommandLine.nvcc_flag_help(Some(&table), f);
        let w = warnings(text, Path::new("/p"), Arch::sm(80), &tool(), &metadata);
        assert_eq!(w.len(), 2, "{w:?}");
        assert_eq!((w[0].message.as_str(), w[0].line), ("variable \"y\" was declared but never referenced", Some(18)));
        // In a failed run's output the errors are what to fix: no note on its warnings.
        let failed = diagnostics(text, Path::new("/p"), Arch::sm(80), &tool());
        assert!(failed.iter().all(|d| d.notes.is_empty()), "{failed:?}");
        assert_eq!((w[1].message.as_str(), w[1].line, w[1].column), ("\"GGML_MAX_DIMS\" redefined", Some(3), Some(9)));
        assert!(w[1].notes.is_empty());
        // A template's warning per instance is one warning naming them.
        let per_instance: String = ["float", "double"]
            .iter()
            .map(|t| format!("kernels/pool2d.cu(44): warning #940-D: missing return statement at end of non-void function \"accum(Op, T, T) [with T={t}]\"\n"))
            .collect();
        let w = warnings(&per_instance, Path::new("/p"), Arch::sm(80), &tool(), &metadata);
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!(w[0].message, "missing return statement at end of non-void function \"accum(Op, T, T)\" (instances: T=float; T=double)");
        assert_eq!(
            template_instance("call of \"f(F) [with F=lambda []()->void]\" here"),
            Some(("call of \"f(F)\" here".to_string(), "F=lambda []()->void"))
        );
        // nvcc's own warnings, with no place.
        let w = warnings("nvcc warning : The 'compute_70' architecture is deprecated\n", Path::new("/p"), Arch::sm(80), &tool(), &metadata);
        assert_eq!(w.iter().map(|d| d.message.as_str()).collect::<Vec<_>>(), ["nvcc: The 'compute_70' architecture is deprecated"]);
        // Output without a warning is not kept; output with one is.
        assert_eq!(Compiled::kept_output("ptxas info: 0 bytes\n".into()), "");
        assert_eq!(Compiled::kept_output(text.into()), text);
    }

    /// nvcc 13.0's words on CUDA's cdpSimpleQuicksort sample: the note names the static library
    /// path that builds it (tested from outside on an H200).
    #[test]
    fn a_kernel_launching_kernels_says_how_to_build_it() {
        let text = "cuda/qsort.cu(114): error: kernel launch from __device__ or __global__ functions requires separate compilation mode\n      cdp_simple_quicksort<<<1, 1, 0, s>>>(data, left, nright, depth + 1);\n      ^\n\n";
        let d = diagnostics(text, Path::new("/p"), Arch::sm(80), &tool());
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(d[0].location().unwrap().starts_with("cuda/qsort.cu:114:"));
        assert_eq!(d[0].notes, [DYNAMIC_PARALLELISM_HELP]);
        assert!(DYNAMIC_PARALLELISM_HELP.contains("`.cuda_static_lib(NAME, GLOB)`") && DYNAMIC_PARALLELISM_HELP.contains("`-rdc=true`"));
    }

    #[test]
    fn a_host_compiler_nvcc_refuses_or_cannot_run_says_how_to_choose_another() {
        let refused = "In file included from /cuda/include/cuda_runtime.h:82,\n                 from <command-line>:\n/cuda/include/crt/host_config.h:137:2: error: #error -- unsupported GNU version! gcc versions later than 15 are not supported! The nvcc flag '-allow-unsupported-compiler' can be used to override this version check; however, using an unsupported host compiler may cause compilation failure or incorrect run time execution. Use at your own risk.\n";
        let d = diagnostics(refused, Path::new("/p"), Arch::sm(80), &tool());
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(d[0].notes[0].starts_with("nvcc runs the host C++ compiler that the `cc` crate picks (CXX, else c++): `cargo ptx doctor`"));
        assert!(d[0].notes[0].ends_with("set CXX to that one; or pass nvcc `-allow-unsupported-compiler` (`nvcc-flags`), at your own risk"));
        let missing = "/no/such/g++: No such file or directory\nnvcc fatal   : Failed to preprocess host compiler properties.\n";
        let d = diagnostics(missing, Path::new("/p"), Arch::sm(80), &tool());
        assert_eq!(d[0].message, "nvcc: Failed to preprocess host compiler properties (/no/such/g++: No such file or directory)");
        assert_eq!(d[0].notes, [HOST_COMPILER_HELP]);
    }

    #[test]
    fn front_end_errors_get_file_line_and_column() {
        let d = std::env::temp_dir().join(format!("ptx-build-cuda-test-{}", std::process::id()));
        std::fs::create_dir_all(d.join("cuda")).unwrap();
        std::fs::write(
            d.join("cuda/e.cu"),
            "__global__ void k(int j) {\n  int x;\n  asm(\"mov.u32 %0, %1;\" : \"=r\"(x) : \"rf\"(j));\n}\n",
        )
        .unwrap();
        let text = format!(
            "{0}/cuda/e.cu(3): error: an asm operand may specify only one constraint letter in a __device__/__global__ function\n    asm(\"mov.u32 %0, %1;\" : \"=r\"(x) : \"rf\"(j));\n                                      ^\n\n1 error detected in the compilation of \"{0}/cuda/e.cu\".\n",
            d.display()
        );
        let diags = diagnostics(&text, &d, Arch::sm(80), &tool());
        assert_eq!(diags.len(), 1, "{diags:?}");
        assert_eq!(diags[0].location().unwrap(), "cuda/e.cu:3:37");
        assert!(diags[0].message.starts_with("an asm operand may specify only one constraint letter"));
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// nvcc 13.0.88's words (from the wheels, without these libraries' headers) on each header of
    /// a CUDA toolkit library that the compiler wheels leave out: the note names the setup command.
    #[test]
    fn a_missing_header_of_a_toolkit_library_names_the_setup_command_that_installs_it() {
        let cases = [
            ("curand_kernel.h", "curand", "cuRAND's headers"),
            ("curand.h", "curand", "cuRAND's headers"),
            ("cuda_profiler_api.h", "profiler", "the CUDA profiler API's headers"),
            ("cudaProfiler.h", "profiler", "the CUDA profiler API's headers"),
            ("cusparse.h", "cusparse", "cuSPARSE's headers"),
            ("cufft.h", "cufft", "cuFFT's headers"),
            ("cufftXt.h", "cufft", "cuFFT's headers"),
            ("cusolverDn.h", "cusolver", "cuSOLVER's headers"),
            ("nvtx3/nvToolsExt.h", "nvtx", "NVTX's headers"),
            ("cublas_v2.h", "cublas", "cuBLAS's headers"),
            ("cublasLt.h", "cublas", "cuBLAS's headers"),
            ("cudnn.h", "cudnn", "cuDNN's headers"),
        ];
        // nvcc from `cargo ptx setup`'s install.
        let ours = Tool { path: crate::tools::home().unwrap().join("cuda/13.0.88/nvidia/cu13/bin/nvcc"), ..tool() };
        for (header, lib, says) in cases {
            let caret = "~".repeat(header.len() + 1);
            let text = format!(
                "cuda/k.cu:1:10: fatal error: {header}: No such file or directory\n    1 | #include <{header}>\n      |          ^{caret}\ncompilation terminated.\n"
            );
            let d = diagnostics(&text, Path::new("/p"), Arch::sm(80), &ours);
            assert_eq!(d.len(), 1, "{d:?}");
            assert_eq!(d[0].location().unwrap(), "cuda/k.cu:1:10");
            assert_eq!(d[0].message, format!("{header}: No such file or directory"));
            assert_eq!(
                d[0].notes,
                [format!("{says} are not part of NVIDIA's CUDA compiler wheels: run `cargo ptx setup --with {lib}` (puts them where every nvcc run finds them)")],
                "{header}"
            );
        }
        // NVTX 3 is in a folder of its own: the old name gets the new one.
        let text = "cuda/k.cu:1:10: fatal error: nvToolsExt.h: No such file or directory\n    1 | #include <nvToolsExt.h>\n      |          ^~~~~~~~~~~~~~\ncompilation terminated.\n";
        let d = diagnostics(text, Path::new("/p"), Arch::sm(80), &ours);
        assert!(
            d[0].notes[0].starts_with(
                "NVTX is `<nvtx3/nvToolsExt.h>` in NVIDIA's `nvtx` wheel: include that, and run `cargo ptx setup --with nvtx`"
            ),
            "{:?}",
            d[0].notes
        );
        // A system toolkit's nvcc (`/cuda/bin/nvcc`): the headers go into that toolkit, or the
        // build moves to cargo-ptx's; setup alone would not help it.
        let text = "cuda/k.cu:1:10: fatal error: curand_kernel.h: No such file or directory\ncompilation terminated.\n";
        let d = diagnostics(text, Path::new("/p"), Arch::sm(80), &tool());
        assert_eq!(
            d[0].notes,
            ["cuRAND's headers are not in the CUDA toolkit of this nvcc (/cuda): install its cuRAND development files there, or build with cargo-ptx's own toolkit: `cargo ptx setup --with curand`, then set NVCC to the nvcc it installed (`cargo ptx doctor` names it)"]
        );
        // Headers of other libraries with like names are the package's to find.
        for header in ["cusparseLt.h", "cublasdx.hpp", "curanddx.hpp", "cudnn_frontend.h", "my_curand_helpers.h"] {
            let text = format!("cuda/k.cu:1:10: fatal error: {header}: No such file or directory\ncompilation terminated.\n");
            let d = diagnostics(&text, Path::new("/p"), Arch::sm(80), &tool());
            assert!(d[0].notes[0].starts_with(INCLUDE_HELP), "{header}: {:?}", d[0].notes);
        }
    }

    #[test]
    fn missing_headers_and_fatal_errors() {
        let d = diagnostics("/p/cuda/k.cu:1:10: fatal error: nothere.cuh: No such file or directory\n    1 | #include \"nothere.cuh\"\ncompilation terminated.\n", Path::new("/p"), Arch::sm(80), &tool());
        assert_eq!(d[0].location().unwrap(), "cuda/k.cu:1:10");
        assert_eq!(d[0].message, "nothere.cuh: No such file or directory");
        assert!(d[0].notes[0].contains("cuda-include"));
        let d = diagnostics(
            "nvcc fatal   : Unsupported gpu architecture 'compute_70'\n",
            Path::new("/p"),
            "compute_70".parse().unwrap(),
            &tool(),
        );
        assert_eq!(d[0].message, "nvcc: Unsupported gpu architecture 'compute_70'");
        assert!(d[0].notes[0].contains("CUDA 13 dropped archs below sm_75"), "{:?}", d[0].notes);
    }

    /// nvcc 13.0's output for `cuda/ops.cu` of `dir` (written from `source`).
    fn errors_of(dir: &Path, source: &str, output: &str) -> Vec<Diagnostic> {
        std::fs::create_dir_all(dir.join("cuda")).unwrap();
        std::fs::write(dir.join("cuda/ops.cu"), source).unwrap();
        diagnostics(output, dir, Arch::sm(80), &tool())
    }

    #[test]
    fn a_template_error_keeps_its_operand_types_the_failed_instance_and_nvccs_notes() {
        let dir = tempfile::tempdir().unwrap();
        let source = "struct P { float v; };\n\ntemplate <typename T>\n__device__ T half_of(T x) { return x / 2; }\ntemplate <typename T>\n__global__ void halve(T *y) { y[0] = half_of(y[0]); }\n\ntemplate <typename T>\n__global__ void axpb(T *y, const T *x, T a, T b, int n) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) y[i] = a * x[i] + b;\n}\n\ntemplate __global__ void axpb<P>(P *, const P *, P, P, int);\ntemplate __global__ void halve<P>(P *);\n";
        // What nvcc printed: the operand types before the source line, a note per overload
        // it tried, then which instance (one, or a list from the innermost out).
        let output = "cuda/ops.cu(11): error: no operator \"*\" matches these operands
            operand types are: P * const P
      if (i < n) y[i] = a * x[i] + b;
                          ^
cuda/ops.cu(11): note #3328-D: built-in operator*(<promoted arithmetic>, <promoted arithmetic>) does not match because argument #1 does not match parameter
      if (i < n) y[i] = a * x[i] + b;
                          ^
          detected during instantiation of \"void axpb(T *, const T *, T, T, int) [with T=P]\" at line 14

cuda/ops.cu(4): error: no operator \"/\" matches these operands
            operand types are: P / int
  __attribute__((device)) T half_of(T x) { return x / 2; }
                                                    ^
          detected during:
            instantiation of \"T half_of(T) [with T=P]\" at line 6
            instantiation of \"void halve(T *) [with T=P]\" at line 15 of /p/cuda/ops.cuh

2 errors detected in the compilation of \"cuda/ops.cu\".
";
        let d = errors_of(dir.path(), source, output);
        assert_eq!(d.len(), 2, "{d:?}");
        assert_eq!(
            (d[0].message.as_str(), d[0].location().unwrap()),
            ("no operator \"*\" matches these operands", "cuda/ops.cu:11:25".into())
        );
        assert_eq!(
            d[0].notes,
            [
                "operand types are: P * const P",
                "note: built-in operator*(<promoted arithmetic>, <promoted arithmetic>) does not match because argument #1 does not match parameter",
                "detected during instantiation of \"void axpb(T *, const T *, T, T, int) [with T=P]\" at line 14",
            ]
        );
        // `__device__` is a macro: EDG shows the line expanded; the caret's text is found in the
        // line as written.
        assert_eq!(d[1].location().unwrap(), "cuda/ops.cu:4:38");
        assert_eq!(
            d[1].notes,
            [
                "operand types are: P / int",
                "detected during instantiation of \"T half_of(T) [with T=P]\" at line 6",
                "detected during instantiation of \"void halve(T *) [with T=P]\" at /p/cuda/ops.cuh:15",
            ]
        );
    }

    #[test]
    fn an_error_in_a_macros_expansion_points_at_the_name_as_written_or_shows_the_expansion() {
        let dir = tempfile::tempdir().unwrap();
        let source = "#define STAMP(NAME, OP) \\\n    extern \"C\" __global__ void NAME(float *y, const float *x, int n) { \\\n        int i = threadIdx.x; if (i < n) y[i] = OP(x[i]); }\n#define BODY(x) ((x) + undefined_thing)\nSTAMP(sq_f32, sqr)\nextern \"C\" __global__ void mac(float *y) { y[0] = BODY(y[1]); }\n";
        let output = "cuda/ops.cu(5): error: identifier \"sqr\" is undefined
  extern \"C\" __attribute__((global)) void sq_f32(float *y, const float *x, int n) { int i = threadIdx.x; if (i < n) y[i] = sqr(x[i]); }
                                                                                                                           ^

cuda/ops.cu(6): error: identifier \"undefined_thing\" is undefined
  extern \"C\" __attribute__((global)) void mac(float *y) { y[0] = ((y[1]) + undefined_thing); }
                                                                           ^

2 errors detected in the compilation of \"cuda/ops.cu\".
";
        let d = errors_of(dir.path(), source, output);
        assert_eq!(d.len(), 2, "{d:?}");
        assert_eq!((d[0].location().unwrap(), d[0].notes.len()), ("cuda/ops.cu:5:15".into(), 0), "{:?}", d[0].notes);
        // Inside the macro's body: the line, no column past its end, and the expansion.
        assert_eq!(d[1].location().unwrap(), "cuda/ops.cu:6");
        assert_eq!(
            d[1].notes,
            ["nvcc points into the expansion of a macro used on this line: `...void mac(float *y) { y[0] = ((y[1]) + undefined_thing); }`"]
        );
    }

    #[test]
    fn a_templates_warning_per_instance_is_one_naming_the_instances_from_their_context() {
        let warning = |t: &str, line: u32| {
            format!("cuda/w.cu(3): warning #177-D: variable \"unused\" was declared but never referenced\n      int unused = 0;\n          ^\n          detected during instantiation of \"void scale(T *, int) [with T={t}]\" at line {line}\n\nRemark: The warnings can be suppressed with \"-diag-suppress <warning-number>\"\n\n")
        };
        let text = warning("float", 22) + &warning("double", 23);
        // The instance in the message and the context after it (picongpu's and kokkos's shape).
        let named = |t: &str, line: u32| {
            format!("cuda/w.cu(9): warning #940-D: missing return statement at end of non-void function \"get [with T={t}]\"\n  }}\n  ^\n          detected during:\n            instantiation of \"T get<T>(int) [with T={t}]\" at line {line}\n\n")
        };
        let w = warnings(&(named("float", 60) + &named("int", 61)), Path::new("/p"), Arch::sm(80), &tool(), &|f: &str| format!("`{f}`"));
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!(w[0].message, "missing return statement at end of non-void function \"get\" (instances: T=float; T=int)");
        let help = |f: &str| format!("`{f}`");
        let w = warnings(&text, Path::new("/p"), Arch::sm(80), &tool(), &help);
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!(w[0].message, "variable \"unused\" was declared but never referenced (instances: T=float; T=double)");
        assert_eq!(w[0].notes, ["`-diag-suppress=177` silences this warning"]);
    }

    #[test]
    fn older_nvccs_places_catastrophic_errors_and_columns_at_a_lines_end_or_far_in() {
        // nvcc 11: each instance's place on an unindented line of its own.
        let old = "/p/x.h(10): warning: variable \"y\" was declared but never referenced
          detected during:
            instantiation of \"void f<T>(T *) [with T=float]\"
/p/x.cu(20): here
            instantiation of \"void g<T>(T *) [with T=float]\"
/p/x.cu(30): here

";
        let d = diagnostics(old, Path::new("/p"), Arch::sm(80), &tool());
        // (With no error in it, the output is also quoted whole as a failure's.)
        assert_eq!((d.len(), d[0].level), (2, Level::Warning), "{d:?}");
        assert_eq!(
            d[0].notes,
            [
                "detected during instantiation of \"void f<T>(T *) [with T=float]\" at /p/x.cu:20",
                "detected during instantiation of \"void g<T>(T *) [with T=float]\" at /p/x.cu:30",
            ]
        );
        let d =
            diagnostics("/p/k.cu(55): catastrophic error: cannot open source file \"utility\"\n", Path::new("/p"), Arch::sm(80), &tool());
        assert_eq!((d[0].level, d[0].message.as_str()), (Level::Error, "cannot open source file \"utility\""));
        // A caret just past the line's end is its end; a name longer than the search window is
        // still found.
        assert_eq!(edg_column("  int y = 1", 11, Some("int y = 1")), (Some(10), None));
        let long = "a_helper_function_whose_name_is_longer_than_forty_eight_bytes";
        let shown = format!("  __attribute__((device)) float {long}(float x);");
        let caret = shown.find(long).unwrap();
        assert_eq!(edg_column(&shown, caret, Some(&format!("__device__ float {long}(float x);"))), (Some(18), None));
    }

    #[test]
    fn an_instantiation_place_is_named_without_nvccs_dot_slash() {
        assert_eq!(
            context_note("instantiation of \"void f<T>(T *) [with T=float]\" at line 5 of ./csrc/kernels/typo.cu"),
            "detected during instantiation of \"void f<T>(T *) [with T=float]\" at csrc/kernels/typo.cu:5"
        );
    }
}
