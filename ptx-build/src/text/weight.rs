//! How much code a .cu file hands the compiler, estimated before any compiler runs: its own
//! text plus what its macros expand to. The job pool starts the heaviest files first.
//!
//! Source size alone orders macro-stamped files backwards: in the bench files, unary.cu (2 KB, 22
//! lines of `FOR_FLOATS(UNARY_OP, ..)`, 74 kernels) is the longest nvcc run (3.1 s) and conv.cu
//! (8 KB, 21 kernels written out) one of the shortest (1.4 s); started last, unary.cu left one core
//! idle for 1.3 s of a 10 s build (BENCHMARKS.md, issue 25).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

/// The estimate for the file at `path`: the code bytes (all but whitespace) of it and of the
/// headers it includes with quotes (found beside the including file), outside `#define`s, where
/// each use of a macro they define counts as the size of its body, that body's own macros
/// expanded in turn. 0 for a file that cannot be read. A macro passed to another
/// (`FOR_FLOATS(UNARY_OP, ..)`, at the top level or inside a macro's body) counts once per call
/// the other makes of it. The estimate orders files; it does not predict times.
pub fn expanded_size(path: &Path) -> u64 {
    let mut texts = Vec::new();
    read_with_headers(path, &mut HashSet::new(), &mut texts);
    let mut defines: HashMap<&str, &str> = HashMap::new();
    let mut code: Vec<&str> = Vec::new();
    for text in &texts {
        let mut lines = text.lines();
        while let Some(line) = lines.next() {
            let Some(define) = line.trim_start().strip_prefix('#').map(str::trim_start).and_then(|d| d.strip_prefix("define")) else {
                code.push(line);
                continue;
            };
            // A body continued over `\`-ended lines: its size is what those lines hold.
            let mut end = line;
            let start = define.as_ptr() as usize - text.as_ptr() as usize;
            while end.trim_end().ends_with('\\') {
                match lines.next() {
                    Some(next) => end = next,
                    None => break,
                }
            }
            let stop = end.as_ptr() as usize - text.as_ptr() as usize + end.len();
            let define = text[start..stop].trim_start();
            let name_end = define.find(|c: char| !is_ident(c)).unwrap_or(define.len());
            if name_end > 0 {
                defines.insert(&define[..name_end], &define[name_end..]);
            }
        }
    }
    let mut macros = Macros { defines, sizes: HashMap::new(), fanouts: HashMap::new() };
    // Saturating throughout: macros that call their argument many times, nested deep, would
    // overflow (a panic in a build script, which cargo builds with overflow checks).
    let mut total = 0u64;
    for line in code {
        let expanded = identifiers(line).fold(0u64, |sum, id| sum.saturating_add(macros.expansion(id, 0)));
        total = total.saturating_add(code_size(line)).saturating_add(expanded).saturating_add(macros.passed_on(line, None, 0));
    }
    total
}

/// The macros of a file and its headers, with what is known of each: the size of its expansion,
/// and how many times it calls each of its parameters. Each is worked out once: macros that call
/// their argument many times, nested deep, took time exponential in the depth when walked anew.
struct Macros<'a> {
    /// Each macro's text after its name: its parameter list, if any, and body.
    defines: HashMap<&'a str, &'a str>,
    sizes: HashMap<&'a str, u64>,
    fanouts: HashMap<(&'a str, usize), u64>,
}

/// A function-like macro's parameters and body (`(M, ...) M(float, f32, __VA_ARGS__)`).
fn params(define: &str) -> Option<(Vec<&str>, &str)> {
    let rest = define.strip_prefix('(')?;
    let (list, body) = rest.split_once(')')?;
    Some((list.split(',').map(str::trim).collect(), body))
}

/// The calls in `text`: each identifier followed by `(`, with its arguments split at the commas
/// outside nested parentheses.
fn calls(text: &str) -> Vec<(&str, Vec<&str>)> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if !(bytes[i].is_ascii_alphabetic() || bytes[i] == b'_') || (i > 0 && is_ident(bytes[i - 1] as char)) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && is_ident(bytes[i] as char) {
            i += 1;
        }
        let name = &text[start..i];
        let mut j = i;
        while j < bytes.len() && bytes[j] == b' ' {
            j += 1;
        }
        if bytes.get(j) != Some(&b'(') {
            continue;
        }
        let (mut depth, mut arg_start, mut args) = (0, j + 1, Vec::new());
        for (k, &b) in bytes.iter().enumerate().skip(j) {
            match b {
                b'(' => depth += 1,
                b')' | b',' if depth == 1 => {
                    args.push(text[arg_start..k].trim());
                    arg_start = k + 1;
                    if b == b')' {
                        break;
                    }
                }
                b')' => depth -= 1,
                _ => {}
            }
        }
        out.push((name, args));
    }
    out
}

impl<'a> Macros<'a> {
    /// The size of macro `name`'s expansion (0 for a name that is not a macro).
    fn expansion(&mut self, name: &'a str, depth: u32) -> u64 {
        let Some(body) = self.defines.get(name).copied() else { return 0 };
        if let Some(size) = self.sizes.get(name) {
            return *size;
        }
        // A macro naming itself (or a cycle) is not expanded again; neither is a deep chain.
        self.sizes.insert(name, 0);
        let mut size = code_size(body);
        if depth < 16 {
            for id in identifiers(body).filter(|id| *id != name) {
                size = size.saturating_add(self.expansion(id, depth + 1));
            }
            size = size.saturating_add(self.passed_on(body, Some(name), depth + 1));
        }
        self.sizes.insert(name, size);
        size
    }

    /// What the macros `text` passes to others (`CMP_ALL(CMP_OP, eq, ==)`, `FOR_FLOATS(M, ..)`
    /// inside a body) add beyond the one expansion of each counted where it is named: one more
    /// per further call the other makes of it. `within`: the macro whose body `text` is, at
    /// `depth` macros from the file's code.
    fn passed_on(&mut self, text: &'a str, within: Option<&str>, depth: u32) -> u64 {
        let mut extra = 0u64;
        for (callee, args) in calls(text) {
            for (i, arg) in args.into_iter().enumerate() {
                if Some(arg) != within && self.defines.contains_key(arg) {
                    let more = self.fanout(callee, i, depth).saturating_sub(1);
                    extra = extra.saturating_add(more.saturating_mul(self.expansion(arg, depth)));
                }
            }
        }
        extra
    }

    /// How many times macro `name` calls its `index`th parameter, directly (`M(float, ..)`) or by
    /// passing it on to a macro that calls it (`FOR_FLOATS(M, ..)`).
    fn fanout(&mut self, name: &'a str, index: usize, depth: u32) -> u64 {
        if let Some(n) = self.fanouts.get(&(name, index)) {
            return *n;
        }
        let Some(define) = self.defines.get(name).copied() else { return 0 };
        let Some((params, body)) = params(define) else { return 0 };
        let Some(param) = params.get(index).copied() else { return 0 };
        // A cycle counts nothing more.
        self.fanouts.insert((name, index), 0);
        let mut n = 0u64;
        for (callee, args) in calls(body) {
            if callee == param {
                n = n.saturating_add(1);
            } else if depth < 16 {
                for (j, _) in args.iter().enumerate().filter(|(_, a)| **a == param) {
                    n = n.saturating_add(self.fanout(callee, j, depth + 1));
                }
            }
        }
        self.fanouts.insert((name, index), n);
        n
    }
}

/// The bytes of `text` that are not whitespace: macro bodies padded to line up their `\`s
/// (candle's style) are not more code for it.
fn code_size(text: &str) -> u64 {
    text.bytes().filter(|b| !b.is_ascii_whitespace()).count() as u64
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

fn identifiers(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !is_ident(c)).filter(|w| w.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'))
}

/// `path` and, depth first, every header it includes with quotes that lies beside the file
/// including it; each file once.
fn read_with_headers(path: &Path, seen: &mut HashSet<PathBuf>, out: &mut Vec<String>) {
    if !seen.insert(path.to_path_buf()) {
        return;
    }
    let Ok(text) = std::fs::read_to_string(path) else { return };
    let dir = path.parent().unwrap_or(Path::new(""));
    for line in text.lines() {
        let Some(rest) = line.trim_start().strip_prefix('#').map(str::trim_start).and_then(|d| d.strip_prefix("include")) else {
            continue;
        };
        if let Some(name) = rest.trim().strip_prefix('"').and_then(|r| r.split_once('"')).map(|(n, _)| n) {
            let header = dir.join(name);
            if header.is_file() {
                read_with_headers(&header, seen, out);
            }
        }
    }
    out.push(text);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn macro_stamped_kernels_weigh_more_than_their_source_size() {
        let dir = tempfile::tempdir().unwrap();
        let body = "    out[i] = in[i] * in[i] + in[i] / 2 - in[i] * 3;".repeat(10);
        std::fs::write(
            dir.path().join("ops.cuh"),
            format!("#define OP(T, NAME) \\\n  extern \"C\" __global__ void NAME(const T *in, T *out) {{ \\\n{body} \\\n  }}\n#define EACH(M, N) M(float, N##_f32) M(double, N##_f64)\n"),
        )
        .unwrap();
        // Short, but 20 kernels once expanded.
        let stamped: String = (0..10).map(|i| format!("EACH(OP, k{i})\n")).collect();
        std::fs::write(dir.path().join("stamped.cu"), format!("#include \"ops.cuh\"\n#include <cuda_fp16.h>\n{stamped}")).unwrap();
        // Longer, two kernels written out.
        let written = format!("extern \"C\" __global__ void a(const float *in, float *out) {{\n{body}\n}}\n").repeat(2);
        std::fs::write(dir.path().join("written.cu"), &written).unwrap();
        let (stamped, written) = (expanded_size(&dir.path().join("stamped.cu")), expanded_size(&dir.path().join("written.cu")));
        assert!(std::fs::metadata(dir.path().join("stamped.cu")).unwrap().len() < written);
        assert!(stamped > 5 * written, "stamped {stamped}, written {written}");
        assert_eq!(expanded_size(&dir.path().join("missing.cu")), 0);
    }

    #[test]
    fn a_macro_passed_on_inside_another_macro_counts_per_call_and_padding_is_not_code() {
        let dir = tempfile::tempdir().unwrap();
        let op = "#define OP(T, N) extern \"C\" __global__ void N(T *x) { x[0] = x[1] * 2 + x[2]; }\n";
        // Three kernels, stamped by a macro that hands OP to another (indexing.cu's
        // `ALL_IDS(GATHER, T, TS)`), against two written as OP calls.
        std::fs::write(
            dir.path().join("nested.cu"),
            format!("{op}#define EACH3(M, T) M(T, a) M(T, b) M(T, c)\n#define ALL(T) EACH3(OP, T)\nALL(float)\n"),
        )
        .unwrap();
        std::fs::write(dir.path().join("two.cu"), format!("{op}OP(float, a) OP(float, b)\n")).unwrap();
        let (nested, two) = (expanded_size(&dir.path().join("nested.cu")), expanded_size(&dir.path().join("two.cu")));
        assert!(nested > two, "nested {nested}, two {two}");
        // The same macro with its body padded out (to line up the `\`s of a longer one).
        let padded = op.replace(") {", &format!("){} {{", " ".repeat(200)));
        std::fs::write(dir.path().join("padded.cu"), format!("{padded}OP(float, a) OP(float, b)\n")).unwrap();
        assert_eq!(expanded_size(&dir.path().join("padded.cu")), two);
    }

    #[test]
    fn macros_that_multiply_deeply_saturate_instead_of_overflowing() {
        let dir = tempfile::tempdir().unwrap();
        // L0 calls its argument 20 times, each L(k+1) calls L(k) 20 times with it: 20^20 uses of
        // K, more than a u64 holds.
        let mut text = format!("#define K(x) int x;\n#define L0(M) {}\n", (0..20).map(|i| format!("M(v{i})")).collect::<String>());
        for k in 1..20 {
            text += &format!("#define L{k}(M) {}\n", (0..20).map(|_| format!("L{}(M)", k - 1)).collect::<String>());
        }
        text += "L19(K)\n";
        std::fs::write(dir.path().join("deep.cu"), text).unwrap();
        assert!(expanded_size(&dir.path().join("deep.cu")) > 1 << 40);
    }

    #[test]
    fn a_macro_that_names_itself_or_includes_that_loop_end() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.cuh"), "#include \"b.cuh\"\n#define X X + Y\n#define Y X\n").unwrap();
        std::fs::write(dir.path().join("b.cuh"), "#include \"a.cuh\"\n").unwrap();
        std::fs::write(dir.path().join("k.cu"), "#include \"a.cuh\"\nint v = X;\n").unwrap();
        assert!(expanded_size(&dir.path().join("k.cu")) > 0);
    }
}
