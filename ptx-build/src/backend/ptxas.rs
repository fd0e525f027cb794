//! ptxas: PTX to a cubin for one GPU, with each kernel's resource usage, and ptxas errors
//! mapped back to the source line through the PTX line table.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::arch::Arch;
use crate::backend::{arch_errors, ptx};
use crate::cache;
use crate::diag::{joined, relative, Diagnostic, Level};
use crate::error::{Error, Result};
use crate::report::KernelInfo;
use crate::tools::process;
use crate::tools::Tool;

/// What ptxas reports for one kernel with `-v`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resources {
    pub name: String,
    pub registers: u32,
    pub spill_stores: u32,
    pub spill_loads: u32,
    pub shared_bytes: u32,
    pub stack_bytes: u32,
}

/// Assembles `ptx` into `cubin` for `arch`.
///
/// `source_root` makes source paths in diagnostics relative where they lie below it.
/// `launcher` (`sccache`) runs ptxas when set.
pub fn assemble(
    ptxas: &Tool,
    launcher: Option<&Path>,
    ptx_path: &Path,
    arch: Arch,
    cubin: &Path,
    package: &str,
    source_root: &Path,
) -> Result<Vec<Resources>> {
    let scratch = cache::scratch_path(cubin);
    if let Some(dir) = cubin.parent() {
        cache::create_dir_all(dir)?;
    }
    // ptxas looks up each `.file` that carries no time of its own, relative to its working
    // folder, and writes the file's mtime and size into the cubin: the same PTX would give
    // another cubin in another folder or checkout, or after a `touch`. It gets a copy whose
    // `.file` lines say the time instead (the PTX artifact keeps LLVM's or nvcc's lines; the
    // line numbers, which errors name, stay the same).
    let ptx_text = std::fs::read_to_string(ptx_path).map_err(|e| Error::io("read", ptx_path, e))?;
    let input = match ptx::fixed_file_times(&ptx_text) {
        Some(fixed) => {
            // Under a launcher, a name from the content alone: sccache's key may hold the input's
            // path, and scratch names change every run. That copy stays (another build may be
            // reading it): one small file per PTX version.
            let stable = launcher
                .and(cubin.parent())
                .map(|dir| dir.join(".ptxas-input").join(format!("{}.ptx", cache::bytes_hash(fixed.as_bytes()))));
            let copy = stable.clone().unwrap_or_else(|| scratch.with_extension("in.ptx"));
            cache::write_atomic(&copy, fixed.as_bytes())?;
            Some((copy, stable.is_none()))
        }
        None => None,
    };
    let mut cmd = process::compiler(&ptxas.path, launcher);
    cmd.arg(format!("-arch={}", arch.sm_name()))
        .arg("-v")
        .arg("--generate-line-info")
        .arg(input.as_ref().map_or(ptx_path, |(p, _)| p.as_path()))
        .arg("-o")
        .arg(&scratch);
    let out = process::output("ptxas", &mut cmd);
    if let Some((copy, true)) = &input {
        let _ = std::fs::remove_file(copy);
    }
    let out = out?;
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    if !out.status.success() {
        let _ = std::fs::remove_file(&scratch);
        let diagnostics = diagnostics(&text, &ptx_text, ptx_path, source_root, ptxas);
        let count = diagnostics.iter().filter(|d| d.level == Level::Error).count().max(1);
        return Err(Error::Ptxas { package: package.to_string(), arch: arch.to_string(), count, diagnostics });
    }
    cache::rename_into_place(&scratch, cubin)?;
    Ok(parse_resources(&text))
}

/// Parses `ptxas -v` output:
/// ```text
/// ptxas info    : Compiling entry function 'saxpy' for 'sm_80'
/// ptxas info    : Function properties for saxpy
///     8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads
/// ptxas info    : Used 14 registers, used 1 barriers, 1024 bytes smem, 376 bytes cmem[0]
/// ```
pub fn parse_resources(text: &str) -> Vec<Resources> {
    let mut out: Vec<Resources> = Vec::new();
    let mut current: Option<usize> = None;
    for line in text.lines() {
        let l = line.trim();
        if let Some(rest) = l.split("Compiling entry function '").nth(1) {
            let name = rest.split('\'').next().unwrap_or_default().to_string();
            out.push(Resources { name, ..Default::default() });
            current = Some(out.len() - 1);
        } else if let Some(i) = current {
            let r = &mut out[i];
            if l.contains("stack frame") {
                r.stack_bytes = number_before(l, "bytes stack frame");
                r.spill_stores = number_before(l, "bytes spill stores");
                r.spill_loads = number_before(l, "bytes spill loads");
            } else if l.contains("Used ") && l.contains("registers") {
                r.registers = number_before(l, "registers");
                r.shared_bytes = number_before(l, "bytes smem");
            }
        }
    }
    out
}

fn number_before(line: &str, what: &str) -> u32 {
    line.split(what).next().and_then(|before| before.split_whitespace().last()).and_then(|n| n.parse().ok()).unwrap_or(0)
}

/// Turns ptxas's `ptxas FILE, line N; error   : MESSAGE` lines into diagnostics at the
/// source line the PTX came from (nearest `.loc` above line N).
pub fn diagnostics(stderr: &str, ptx_text: &str, ptx_path: &Path, source_root: &Path, ptxas: &Tool) -> Vec<Diagnostic> {
    let module = ptx::Module::parse(ptx_text);
    let ptx_lines: Vec<&str> = ptx_text.lines().collect();
    // Each diagnostic with the PTX line it is merged by (none for those not merged by line).
    let mut out: Vec<(Option<usize>, Diagnostic)> = Vec::new();
    // An instruction the arch lacks: one error per function and instruction, said plainly, and
    // not the "requires PTX ISA" lines that echo it.
    let mut explained: Vec<(String, String)> = Vec::new();
    let mut arch_lines: Vec<usize> = Vec::new();
    for l in stderr.lines() {
        if let Some((n, m)) = l
            .trim()
            .strip_prefix("ptxas ")
            .and_then(|r| r.split_once(';'))
            .and_then(|(loc, m)| Some((loc.rsplit_once(", line ")?.1.trim().parse::<usize>().ok()?, m.split_once(':')?.1.trim())))
        {
            if arch_errors::explain(m, n, ptx_text).is_some() {
                arch_lines.push(n);
            }
        }
    }
    for line in stderr.lines() {
        let l = line.trim();
        if let Some((level, message)) = l.strip_prefix("ptxas fatal").and_then(|r| r.split_once(':')).map(|(_, m)| (Level::Error, m.trim()))
        {
            if message.starts_with("Ptx assembly aborted due to errors") {
                continue; // a summary of the errors reported line by line
            }
            let mut d = Diagnostic::new(level, format!("ptxas: {message}")).at(ptx_path, None, None);
            if let Some(fix) = fatal_help(message, ptxas) {
                d = d.note(fix);
            }
            out.push((None, d));
            continue;
        }
        let Some(rest) = l.strip_prefix("ptxas ") else {
            continue;
        };
        let Some((loc, msg)) = rest.split_once(';') else {
            continue;
        };
        let Some(n) = loc.rsplit_once(", line ").and_then(|(_, n)| n.trim().parse::<usize>().ok()) else {
            continue;
        };
        let (level, message) = match msg.split_once(':') {
            // `fatal` at a line: a syntax error, after which ptxas stops reading.
            Some((lvl, m)) if matches!(lvl.trim(), "error" | "fatal") => (Level::Error, m.trim()),
            Some((lvl, m)) if lvl.trim() == "warning" => (Level::Warning, m.trim()),
            _ => continue,
        };
        if arch_lines.contains(&n) && arch_errors::is_isa_echo(message) {
            continue;
        }
        let arch = arch_errors::explain(message, n, ptx_text);
        if let Some(a) = &arch {
            if explained.contains(&a.key) {
                continue;
            }
            explained.push(a.key.clone());
        }
        let mut d = match &arch {
            Some(a) => Diagnostic::new(level, a.message.clone()),
            None => Diagnostic::new(level, format!("ptxas: {message}")),
        };
        // A syntax error is reported at the token after the mistake: where that token starts
        // its line (the next line's `.loc` or label after a missing `;`), the line before it is
        // the one to show and map; inside a line (`mov.u32 %r1 %r2;`) the line is right.
        let syntax = message.starts_with("Parsing error");
        let near = quoted(message);
        let starts_line = near.is_some_and(|t| ptx_lines.get(n.wrapping_sub(1)).is_some_and(|l| l.trim_start().starts_with(t)));
        let code_line = |i: &usize| {
            ptx_lines.get(i - 1).map(|t| t.trim()).is_some_and(|t| !(t.is_empty() || t.starts_with("//") || t.starts_with(".loc")))
        };
        let n = if syntax && starts_line { (1..n).rev().find(code_line).unwrap_or(n) } else { n };
        let instruction = ptx_lines.get(n.wrapping_sub(1)).map(|s| s.trim()).unwrap_or_default();
        match module.source_of(n) {
            Some((pos, inlined)) => {
                // Prefer the user's own file: an intrinsic inlined from `core` points at `core`,
                // its call site in the kernel crate is what the user wrote.
                let chain: Vec<&ptx::SourcePos> = std::iter::once(&pos).chain(inlined.iter()).collect();
                let mine = chain.iter().position(|p| joined(source_root, &p.file).starts_with(source_root)).unwrap_or(0);
                let show = |p: &ptx::SourcePos| {
                    format!("{}:{}:{}", relative(&joined(source_root, &p.file), source_root).display(), p.line, p.column)
                };
                let at = chain[mine];
                let line_text = source_line(&joined(source_root, &at.file), at.line);
                // The token ptxas names (`'.u23'`, `'%landid'`), where the line spells it (an
                // asm! string): the caret goes under it rather than at the statement's start.
                let column = quoted_token(message)
                    .and_then(|t| {
                        let l = line_text.as_deref()?;
                        l.find(t).map(|i| l[..i].chars().count() as u32 + 1)
                    })
                    .unwrap_or(at.column);
                d = d.at(relative(&joined(source_root, &at.file), source_root), Some(at.line), Some(column)).rooted(source_root);
                if let Some(text) = line_text.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
                    d = d.note(format!("source: {text}"));
                }
                for (i, site) in chain.iter().enumerate() {
                    match i.cmp(&mine) {
                        std::cmp::Ordering::Less => d = d.note(format!("the instruction comes from {}, inlined here", show(site))),
                        std::cmp::Ordering::Greater => d = d.note(format!("inlined at {}", show(site))),
                        std::cmp::Ordering::Equal => {}
                    }
                }
            }
            None => d = d.at(ptx_path, Some(n as u32), None),
        }
        if !instruction.is_empty() {
            d = d.note(format!("PTX line {n}: {instruction}"));
        }
        if let Some(fix) = fatal_help(message, ptxas) {
            d = d.note(fix); // `Unsupported .version`, which ptxas reports at line 1
        }
        if syntax {
            d = d.note("help: ptxas reports a syntax error at the token after it; in an `asm!` string, each instruction ends in `;` and operands are `{0}` or `{name}` (not CUDA's `%0`)");
        }
        let by_arch = arch.is_some();
        if let Some(a) = arch {
            d = d.note(format!("ptxas: {message}")).note(format!("help: {}", a.help));
        }
        // One mistake, two complaints at one PTX line (`mov.u23`: "Unknown modifier '.u23'" and
        // "Unexpected instruction types specified for 'mov'"): one diagnostic, the one naming
        // the unknown thing first, the other a note.
        match out.iter_mut().find(|(line, first)| *line == Some(n) && first.level == level).filter(|_| !by_arch) {
            Some((_, first)) => {
                let other = if names_the_unknown(&d.message) && !names_the_unknown(&first.message) {
                    // The caret follows the message: under the token it names.
                    first.column = d.column;
                    std::mem::replace(&mut first.message, d.message.clone())
                } else {
                    d.message.clone()
                };
                first.notes.push(format!("ptxas also says: {}", other.trim_start_matches("ptxas: ")));
            }
            None => out.push(((!by_arch).then_some(n), d)),
        }
    }
    if out.is_empty() {
        return vec![Diagnostic::error(format!("ptxas failed: {}", stderr.trim())).at(ptx_path, None, None)];
    }
    out.into_iter().map(|(_, d)| d).collect()
}

/// The token a ptxas message quotes (`Unknown symbol '%landid'` -> `%landid`), when it is one
/// a source line could spell (not an instruction's name alone: `'mov'` is on many lines).
fn quoted_token(message: &str) -> Option<&str> {
    quoted(message).filter(|t| t.len() > 1 && (t.starts_with('%') || t.starts_with('.')))
}

/// What a ptxas message quotes first (`near '$L__tmp17'` -> `$L__tmp17`).
fn quoted(message: &str) -> Option<&str> {
    let (_, rest) = message.split_once('\'')?;
    rest.split_once('\'').map(|(token, _)| token).filter(|t| !t.is_empty())
}

/// A ptxas message that says what it did not know (`Unknown symbol '%landid'`), the one a
/// reader wants first among those of a line.
fn names_the_unknown(message: &str) -> bool {
    message.starts_with("ptxas: Unknown") || message.starts_with("ptxas: Parsing error")
}

/// The text of a source line, for showing what the PTX came from.
fn source_line(file: &Path, line: u32) -> Option<String> {
    let text = std::fs::read_to_string(file).ok()?;
    Some(text.lines().nth(line.checked_sub(1)? as usize)?.to_string())
}

fn fatal_help(message: &str, ptxas: &Tool) -> Option<String> {
    if message.contains("Unsupported .version") {
        return Some(format!(
            "this PTX is newer than ptxas {} accepts; pin an older ISA with `--ptx-isa` or `ptx-isa = \"X.Y\"` in [package.metadata.ptx], or use a newer CUDA (`cargo ptx setup --cuda 13.1`)",
            ptxas.version
        ));
    }
    if message.contains("SM version specified by .target is higher") || message.contains("not defined for option 'gpu-name'") {
        return Some("choose an arch this ptxas supports (`cargo ptx doctor` lists them)".into());
    }
    None
}

/// The resources as the engine reports them.
impl From<&Resources> for KernelInfo {
    fn from(r: &Resources) -> Self {
        KernelInfo {
            name: r.name.clone(),
            registers: Some(r.registers),
            spill_stores: Some(r.spill_stores),
            spill_loads: Some(r.spill_loads),
            shared_bytes: Some(r.shared_bytes),
            stack_bytes: Some(r.stack_bytes),
            cooperative: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ptxas whose output these tests hold.
    fn ptxas_13() -> Tool {
        Tool { path: "ptxas".into(), version: "13.0.88".into(), source: "PATH".into() }
    }

    #[test]
    fn reads_resource_usage() {
        let text = "ptxas info    : 0 bytes gmem\nptxas info    : Compiling entry function 'a' for 'sm_80'\nptxas info    : Function properties for a\n    8 bytes stack frame, 4 bytes spill stores, 12 bytes spill loads\nptxas info    : Used 13 registers, used 1 barriers, 1024 bytes smem, 376 bytes cmem[0]\nptxas info    : Compiling entry function 'b' for 'sm_80'\nptxas info    : Function properties for b\n    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\nptxas info    : Used 14 registers, used 0 barriers, 376 bytes cmem[0]\n";
        let r = parse_resources(text);
        assert_eq!(
            r[0],
            Resources { name: "a".into(), registers: 13, spill_stores: 4, spill_loads: 12, shared_bytes: 1024, stack_bytes: 8 }
        );
        assert_eq!(r[1], Resources { name: "b".into(), registers: 14, ..Default::default() });
    }

    #[test]
    fn an_instruction_the_arch_lacks_is_one_error_naming_kernel_instruction_and_arch() {
        let ptx = ".version 7.0\n.target sm_80\n.visible .entry k()\n{\n.loc 1 5 9\nwgmma.fence.sync.aligned;\nwgmma.commit_group.sync.aligned;\n}\n.file 1 \"/k/src/lib.rs\"\n";
        let tool = ptxas_13();
        let stderr = "ptxas /t/k.ptx, line 6; error   : Feature 'WGMMA' requires PTX ISA .version 8.0 or later\nptxas /t/k.ptx, line 6; error   : Instruction 'wgmma.fence' not supported on .target 'sm_80'\nptxas /t/k.ptx, line 7; error   : Feature 'WGMMA' requires PTX ISA .version 8.0 or later\nptxas /t/k.ptx, line 7; error   : Instruction 'wgmma.commit_group' not supported on .target 'sm_80'\nptxas fatal   : Ptx assembly aborted due to errors\n";
        let d = diagnostics(stderr, ptx, Path::new("/t/k.ptx"), Path::new("/k"), &tool);
        assert_eq!(d.len(), 1, "{d:#?}");
        assert_eq!(d[0].message, "kernel `k` uses `wgmma.fence.sync.aligned`, which sm_80 does not have (it needs sm_90a)");
        assert_eq!(d[0].location().unwrap(), "src/lib.rs:5:9");
        assert!(d[0].notes.iter().any(|n| n.starts_with("help: build for an arch that has it too")), "{:?}", d[0].notes);
    }

    #[test]
    fn an_error_in_a_path_dependency_outside_the_workspace_names_the_real_file() {
        // As the Rust front end names ptx-device's sources (`rust::checkout_remaps`).
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("examples/saxpy");
        std::fs::create_dir_all(dir.path().join("ptx-device/src")).unwrap();
        std::fs::write(dir.path().join("ptx-device/src/lib.rs"), "//\n    let x = add(a, b);\n").unwrap();
        let ptx = ".version 7.0\n.target sm_80\n.visible .entry k()\n{\n.loc 1 2 5\nadd.f64 %fd1, %r1, %r2;\n}\n.file 1 \"../../ptx-device/src/lib.rs\"\n";
        let tool = ptxas_13();
        let d = diagnostics(
            "ptxas /t/k.ptx, line 6; error   : Arguments mismatch for instruction 'add'\n",
            ptx,
            Path::new("/t/k.ptx"),
            &ws,
            &tool,
        );
        let want = dir.path().join("ptx-device/src/lib.rs");
        assert_eq!(d[0].location().unwrap(), format!("{}:2:5", want.display()));
        assert_eq!(d[0].full_path().unwrap(), want);
        assert!(d[0].notes.iter().any(|n| n == "source: let x = add(a, b);"), "{:?}", d[0].notes);
    }

    #[test]
    fn two_complaints_about_one_line_are_one_diagnostic_naming_the_unknown_first() {
        let ptx = ".version 7.0\n.target sm_80\n.visible .entry k()\n{\n.loc 1 5 9 // src/lib.rs:5:9\nmov.u32 %r1, %landid;\nadd.u32 %r2, %r1, 1;\n}\n.file 1 \"/k/src/lib.rs\"\n";
        let tool = ptxas_13();
        let stderr = "ptxas /t/k.ptx, line 6; error   : Arguments mismatch for instruction 'mov'\nptxas /t/k.ptx, line 6; error   : Unknown symbol '%landid'\nptxas /t/k.ptx, line 7; error   : Arguments mismatch for instruction 'add'\nptxas fatal   : Ptx assembly aborted due to errors\n";
        let d = diagnostics(stderr, ptx, Path::new("/t/k.ptx"), Path::new("/k"), &tool);
        assert_eq!(d.len(), 2, "{d:?}");
        assert_eq!(d[0].message, "ptxas: Unknown symbol '%landid'");
        assert!(d[0].notes.iter().any(|n| n == "ptxas also says: Arguments mismatch for instruction 'mov'"), "{:?}", d[0].notes);
        assert_eq!(d[1].message, "ptxas: Arguments mismatch for instruction 'add'");
    }

    #[test]
    fn the_caret_is_under_the_token_ptxas_names() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::write(
            dir.path().join("src/lib.rs"),
            "fn lane() {\n    core::arch::asm!(\"mov.u32 {r}, %landid;\", r = out(reg32) r);\n}\n",
        )
        .unwrap();
        let ptx = ".version 7.0\n.target sm_80\n.visible .entry k()\n{\n.loc 1 2 5\nmov.u32 %r1, %landid;\n}\n.file 1 \"src/lib.rs\"\n";
        let tool = ptxas_13();
        let d = diagnostics("ptxas /t/k.ptx, line 6; error   : Unknown symbol '%landid'\n", ptx, Path::new("/t/k.ptx"), dir.path(), &tool);
        assert_eq!(d[0].location().unwrap(), "src/lib.rs:2:36", "{d:?}");
        // Merged with an earlier complaint at the line, the caret still goes under the token.
        let stderr = "ptxas /t/k.ptx, line 6; error   : Arguments mismatch for instruction 'mov'\nptxas /t/k.ptx, line 6; error   : Unknown symbol '%landid'\n";
        let d = diagnostics(stderr, ptx, Path::new("/t/k.ptx"), dir.path(), &tool);
        assert_eq!((d.len(), d[0].location().unwrap()), (1, "src/lib.rs:2:36".to_string()), "{d:?}");
        // An instruction's name alone is on many lines: the statement's column stays.
        let d = diagnostics(
            "ptxas /t/k.ptx, line 6; error   : Arguments mismatch for instruction 'mov'\n",
            ptx,
            Path::new("/t/k.ptx"),
            dir.path(),
            &tool,
        );
        assert_eq!(d[0].location().unwrap(), "src/lib.rs:2:5", "{d:?}");
    }

    #[test]
    fn a_syntax_error_is_at_the_asm_line_with_the_line_before() {
        // `asm!("mov.u32 {r}, %laneid")` without its `;`: ptxas stops at the next label.
        let ptx = ".version 7.0\n.target sm_80\n.visible .entry k()\n{\n.loc 1 10 5 // src/lib.rs:10:5\n// begin inline asm\nmov.u32 %r1, %laneid\n// end inline asm\n$L__tmp17:\n}\n.file 1 \"/k/src/lib.rs\"\n";
        let tool = ptxas_13();
        let stderr = "ptxas /t/.tmp-1-k.in.ptx, line 9; fatal   : Parsing error near '$L__tmp17': syntax error\nptxas fatal   : Ptx assembly aborted due to errors\n";
        let d = diagnostics(stderr, ptx, Path::new("/t/k.ptx"), Path::new("/k"), &tool);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(
            (d[0].message.as_str(), d[0].location().unwrap()),
            ("ptxas: Parsing error near '$L__tmp17': syntax error", "src/lib.rs:10:5".into())
        );
        assert!(d[0].notes.iter().any(|n| n == "PTX line 7: mov.u32 %r1, %laneid"), "{:?}", d[0].notes);
        assert!(!d[0].notes.iter().any(|n| n.contains("$L__tmp17:")), "the label after it is not the mistake: {:?}", d[0].notes);
        // A token inside the line ptxas names (a missing comma): that line is the mistake's.
        let ptx = ".version 7.0\n.target sm_80\n.visible .entry k()\n{\n.loc 1 10 5\nadd.u32 %r2, %r2, 1;\n.loc 1 11 5\nmov.u32 %r1 %r2;\n}\n.file 1 \"/k/src/lib.rs\"\n";
        let d = diagnostics(
            "ptxas /t/k.ptx, line 8; fatal   : Parsing error near '%r2': syntax error\n",
            ptx,
            Path::new("/t/k.ptx"),
            Path::new("/k"),
            &tool,
        );
        assert_eq!(d[0].location().unwrap(), "src/lib.rs:11:5", "{d:?}");
        assert!(d[0].notes.iter().any(|n| n == "PTX line 8: mov.u32 %r1 %r2;"), "{:?}", d[0].notes);
        assert!(d[0].notes.iter().any(|n| n.contains("each instruction ends in `;`")), "{:?}", d[0].notes);
    }

    #[test]
    fn an_unsupported_version_at_its_line_gets_the_isa_help() {
        let tool = ptxas_13();
        let d = diagnostics(
            "ptxas v.ptx, line 1; fatal   : Unsupported .version 9.9; current version is '9.0'\n",
            ".version 9.9\n",
            Path::new("/t/v.ptx"),
            Path::new("/k"),
            &tool,
        );
        assert!(d[0].notes.iter().any(|n| n.starts_with("this PTX is newer than ptxas 13.0.88 accepts")), "{d:?}");
    }

    #[test]
    fn maps_errors_to_the_users_line() {
        let ptx = ".version 7.0\n.target sm_80\n.visible .entry k()\n{\n.loc 1 5 9 // src/lib.rs:5:9\n.loc 2 85 5 // core/mod.rs:85:5 @[ /k/src/lib.rs:7:3 ]\nadd.f64 %fd1, %r1, %r2;\n}\n.file 1 \"/k/src/lib.rs\"\n.file 2 \"/rust/core/mod.rs\"\n";
        let tool = ptxas_13();
        let d = diagnostics("ptxas /t/k.ptx, line 7; error   : Arguments mismatch for instruction 'add'\nptxas fatal   : Ptx assembly aborted due to errors\n", ptx, Path::new("/t/k.ptx"), Path::new("/k"), &tool);
        assert_eq!(d.len(), 1, "the closing `aborted` line adds nothing: {d:?}");
        assert_eq!(d[0].message, "ptxas: Arguments mismatch for instruction 'add'");
        assert_eq!(d[0].location().unwrap(), "src/lib.rs:7:3");
        assert!(d[0].notes.iter().any(|n| n.contains("comes from /rust/core/mod.rs:85:5")), "{:?}", d[0].notes);
        assert!(d[0].notes.iter().any(|n| n == "PTX line 7: add.f64 %fd1, %r1, %r2;"), "{:?}", d[0].notes);
    }
}
