//! Text entry points of every parser that reads input the project did not write, for the fuzz
//! targets in `fuzz/` and the linear-time tests. Each takes the text a file or a tool would
//! hold and returns a summary, so a fuzzer sees the whole parse and a test can assert on it.
//! Not a stable API.

use std::path::Path;

use crate::tools::Tool;

/// The PTX reader (`.entry` headers, parameters, `.file`/`.loc` line tables, entries that sync
/// their grid): entries found.
pub fn ptx_module(text: &str) -> usize {
    let m = crate::backend::ptx::Module::parse(text);
    m.entries.len() + crate::backend::ptx::cooperative_entries(text).len()
}

/// The C/C++ kernel signature reader: kernels found, or the first refusal.
pub fn cuda_signatures(src: &str) -> crate::Result<usize> {
    crate::embed::signature::cuda_kernels_in(Path::new("fuzz.cu"), src).map(|k| k.len())
}

/// The Rust kernel signature reader on one file's text: kernels found, or the first refusal.
pub fn rust_signatures(src: &str) -> crate::Result<usize> {
    crate::embed::signature::rust_kernels_in_text(Path::new("fuzz.rs"), src).map(|k| k.len())
}

/// The inline-PTX checker on C/C++ source: diagnostics.
pub fn inline_ptx_cuda(src: &str) -> usize {
    crate::inline_ptx::check_cuda(Path::new("fuzz.cu"), src).len()
}

/// The inline-PTX checker on Rust source (what `syn` parses): diagnostics.
pub fn inline_ptx_rust(src: &str) -> usize {
    let Ok(parsed) = syn::parse_file(src) else { return 0 };
    let mut out = Vec::new();
    crate::inline_ptx::check_rust_file(Path::new("fuzz.rs"), &parsed, &mut out);
    out.len()
}

/// The Makefile-style dep-file reader (nvcc's `-MF`, rustc's dep-info): prerequisites.
pub fn depfile(text: &str) -> usize {
    let d = crate::text::depfile::parse(text);
    d.prerequisites.len() + d.env.len()
}

/// `[package.metadata.ptx]` as cargo hands it over (JSON): whether it was accepted.
pub fn metadata(json: &str) -> bool {
    let Ok(value) = serde_json::from_str::<serde_json::Value>(json) else { return false };
    let mut warnings = Vec::new();
    let source = crate::options::Source::Package("Cargo.toml".into());
    crate::options::Options::from_metadata(&value, &source, &mut warnings).is_ok_and(|o| o.check(&source).is_ok())
}

/// The arch-list parser (`sm_80,sm_90a`, `all`, `native`): whether it was accepted.
pub fn arch_list(text: &str) -> bool {
    crate::arch::parse_list(text).is_ok()
}

/// nvcc's and ptxas's error output, read into diagnostics (`ptx` is the PTX ptxas read).
pub fn tool_output(text: &str, ptx: &str) -> usize {
    let tool = Tool { path: "nvcc".into(), version: "13.0.88".into(), source: "fuzz".into() };
    let root = Path::new("/pkg");
    crate::cuda::diagnostics(text, root, "sm_80".parse().expect("a known arch"), &tool).len()
        + crate::backend::ptxas::diagnostics(text, ptx, Path::new("/pkg/k.ptx"), root, &tool).len()
}

/// Crate ids in Rust symbol names made checkout-independent, on LLVM IR text: the rewritten
/// text's length. The rewrite is idempotent (a second pass changes nothing), which it asserts.
pub fn crate_ids(ir: &str) -> usize {
    let once = crate::backend::crate_ids::canonical_crate_ids(ir);
    assert_eq!(crate::backend::crate_ids::canonical_crate_ids(&once), once, "a second rewrite changed the text");
    once.len()
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;
    use std::time::Duration;

    use proptest::prelude::*;

    use super::*;

    /// Runs `f` on a thread and fails when it has not returned in two minutes. The inputs below
    /// (about a megabyte) take a linear parser well under a second here, even unoptimised; the
    /// quadratic C signature reader this replaced took 25 s on 155 KB, hours on these.
    fn linear<T: Send + 'static>(what: &'static str, f: impl FnOnce() -> T + Send + 'static) -> T {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(f());
        });
        rx.recv_timeout(Duration::from_secs(120)).unwrap_or_else(|_| panic!("{what} did not finish: not linear in its input"))
    }

    fn repeat(n: usize, f: impl Fn(usize) -> String) -> String {
        (0..n).fold(String::new(), |mut s, i| {
            s.push_str(&f(i));
            s
        })
    }

    #[test]
    fn every_parser_is_linear_in_its_input() {
        let n = 20_000;
        let cu = repeat(n, |i| format!("extern \"C\" __global__ void k{i}(float *x, int n) {{ x[n] = {i}; }}\n"));
        assert_eq!(linear("C signatures", move || cuda_signatures(&cu).unwrap()), n);
        // Declarations that never end (no `;`, no body): the input that was quadratic.
        let open = repeat(n, |i| format!("extern \"C\" __global__ void f{i}()\n"));
        linear("C signatures without `;`", move || cuda_signatures(&open).map(|_| ()).ok());

        let ptx = repeat(n, |i| format!("\t.visible .entry k{i}(\n\t.param .u64 k{i}_param_0\n)\n{{\n\t.loc 1 {i} 3\n\tret;\n}}\n"));
        assert_eq!(linear("PTX reader", move || ptx_module(&format!(".version 8.0\n.target sm_80\n.file 1 \"k.cu\"\n{ptx}"))), n);

        let rs = repeat(n, |i| format!("#[no_mangle]\npub unsafe extern \"ptx-kernel\" fn k{i}(x: *mut f32) {{ *x = 1.0; }}\n"));
        assert_eq!(linear("Rust signatures", move || rust_signatures(&rs).unwrap()), n);

        let asm_c = repeat(n, |i| {
            format!("__device__ int f{i}(int a) {{ int r; asm(\"add.s32 %0, %1, {i};\" : \"=r\"(r) : \"r\"(a)); return r; }}\n")
        });
        assert_eq!(linear("inline PTX in C", move || inline_ptx_cuda(&asm_c)), 0);
        let asm_rs = repeat(n / 4, |i| {
            format!("pub unsafe fn f{i}(a: u32) -> u32 {{ let r: u32; core::arch::asm!(\"add.u32 {{0}}, {{1}}, {i};\", out(reg32) r, in(reg32) a); r }}\n")
        });
        assert_eq!(linear("inline PTX in Rust", move || inline_ptx_rust(&asm_rs)), 0);

        let mut dep = String::from("target/k.ptx:");
        for i in 0..100_000 {
            let _ = write!(dep, " \\\n  /src/include\\ dir/h{i}.h");
        }
        assert_eq!(linear("dep files", move || depfile(&dep)), 100_000);

        let archs = format!("{{\"archs\": [{}]}}", vec!["\"sm_80\""; 100_000].join(","));
        assert!(linear("metadata", move || metadata(&archs)));
        let list = vec!["sm_90a"; 100_000].join(",");
        assert!(linear("arch lists", move || arch_list(&list)));

        // Names with a back-reference each (to the second crate root), string constants and
        // metadata strings: every `AAAA` id is rewritten.
        let ir = repeat(n, |i| {
            let k = format!("5k{:04}", i % 10_000);
            format!("call void @_RINvCs9Nxgald2Sjs_8gpu_math3mapNCNvCsAAAA_{k}6kernel0EBx_()\n@s{i} = constant [3 x i8] c\"_R\\22\"\n!{i} = !{{!\"_RNvCsAAAA_{k}1f\"}}\n")
        });
        let out = linear("crate ids", move || crate::backend::crate_ids::canonical_crate_ids(&ir));
        assert!(!out.contains("CsAAAA_"), "{}", &out[..300]);
        let errors = repeat(n, |i| format!("k.cu({i}): error: identifier \"x{i}\" is undefined\n  x{i} = 1;\n  ^\n\n"));
        assert!(linear("nvcc output", move || tool_output(&errors, "")) >= n);
    }

    fn arch_name() -> impl Strategy<Value = String> {
        let known = crate::arch::KNOWN;
        (prop::sample::select(known), 0..3u8, any::<bool>()).prop_map(|(cap, variant, virt)| {
            let suffix = match variant {
                1 if cap >= 90 => "a",
                2 if cap >= 100 => "f",
                _ => "",
            };
            format!("{}_{cap}{suffix}", if virt { "compute" } else { "sm" })
        })
    }

    proptest! {
        #[test]
        fn arch_lists_of_known_archs_parse_back_to_their_names(names in prop::collection::vec(arch_name(), 1..6), spaces in any::<bool>()) {
            let text = names.join(if spaces { " , " } else { "," });
            let parsed = crate::arch::parse_list(&text).unwrap();
            let back: Vec<String> = parsed
                .iter()
                .map(|r| match r {
                    crate::ArchRequest::Arch(a) => a.to_string(),
                    other => panic!("{other:?}"),
                })
                .collect();
            prop_assert_eq!(back, names);
        }

        #[test]
        fn any_arch_list_text_is_parsed_or_refused_with_its_text(text in "\\PC{0,40}") {
            if let Err(e) = crate::arch::parse_list(&text) {
                let msg = e.to_string();
                prop_assert!(msg.starts_with("invalid arch `"), "{}", msg);
                prop_assert!(msg.contains("help:"), "{}", msg);
            }
        }

        #[test]
        fn dep_files_give_back_the_paths_they_escape(
            paths in prop::collection::vec("[a-zA-Z0-9 _#$./é-]{1,24}", 1..12),
            continued in any::<bool>(),
            crlf in any::<bool>(),
        ) {
            let escape = |p: &str| p.replace('$', "$$").replace(' ', "\\ ").replace('#', "\\#");
            let sep = match (continued, crlf) {
                (true, true) => " \\\r\n  ",
                (true, false) => " \\\n  ",
                _ => " ",
            };
            let text = format!("out/k.ptx: {}\n", paths.iter().map(|p| escape(p)).collect::<Vec<_>>().join(sep));
            let parsed = crate::text::depfile::parse(&text);
            // Escaped spaces, leading and trailing ones too, stay part of the path.
            let mut want: Vec<std::path::PathBuf> = Vec::new();
            for p in &paths {
                let path = std::path::PathBuf::from(p);
                if !want.contains(&path) {
                    want.push(path);
                }
            }
            prop_assert_eq!(parsed.targets, vec![std::path::PathBuf::from("out/k.ptx")]);
            prop_assert_eq!(parsed.prerequisites, want);
        }
    }
}
