//! Where a Rust kernel can panic, read from its PTX: calls into core's panic functions, each at
//! the kernel crate's own line of its inline chain.

use std::collections::HashMap;

/// A source place: the `.file` path as written and a line; `None` where the compiler gave the
/// code no line (`.loc N 0`: blocks merged from several places).
type Place = Option<(String, u32)>;

/// Where kernel `name` of `ptx` can panic: Rust's bounds checks, `unwrap`s, overflow checks and
/// `panic!`s are calls into core's panic functions, which ptx-device's handler ends in `trap`.
/// Each call's place and the panic's kind, following calls into the module's own functions
/// (not into core's); each place and kind once. A place is the innermost frame of the call's
/// inline chain (ptx-build's line table) in a file `is_user` accepts (the kernel crate's): an
/// `unwrap` inlined from core into a generic kernel inlined into ptx-device's `#[kernel]`
/// wrapper is named at the kernel's line.
pub(super) fn panic_sites(ptx: &str, name: &str, is_user: &dyn Fn(&str) -> bool) -> Vec<(Place, &'static str)> {
    let module = ptx_build::internals::ptx::Module::parse(ptx);
    let place_of = |line: usize| -> Place {
        let (own, inlined) = module.source_of(line)?;
        let chain: Vec<(String, u32)> =
            std::iter::once(own).chain(inlined).filter(|p| p.line != 0).map(|p| (p.file.to_string_lossy().into_owned(), p.line)).collect();
        chain.iter().find(|(p, _)| is_user(p)).or(chain.last()).cloned()
    };
    // Each function's calls: (callee, the place of the call).
    let mut calls: HashMap<String, Vec<(String, Place)>> = HashMap::new();
    let mut current: Option<String> = None;
    let mut depth = 0i32;
    for (i, l) in ptx.lines().enumerate() {
        let code = l.split("//").next().unwrap_or_default().trim();
        if depth == 0 && !code.starts_with(".extern") && !code.ends_with(';') {
            if let Some(f) = crate::sanitize::sources::function_name(code) {
                current = Some(f);
            }
        }
        if let (Some(f), Some(callee)) = (&current, callee(code)) {
            calls.entry(f.clone()).or_default().push((callee.to_string(), place_of(i + 1)));
        }
        depth += code.matches('{').count() as i32 - code.matches('}').count() as i32;
    }
    let mut sites: Vec<(Place, &'static str)> = Vec::new();
    let mut seen = vec![name.to_string()];
    let mut stack = vec![name.to_string()];
    while let Some(f) = stack.pop() {
        for (callee, at) in calls.get(&f).into_iter().flatten() {
            match panic_kind(callee) {
                Some(kind) if !sites.iter().any(|s| s.0 == *at && s.1 == kind) => sites.push((at.clone(), kind)),
                Some(_) => {}
                // The module's own functions; core's and alloc's are not the user's code.
                None if calls.contains_key(callee) && !seen.contains(callee) && !is_library(callee) => {
                    seen.push(callee.clone());
                    stack.push(callee.clone());
                }
                None => {}
            }
        }
    }
    // In the order of the source, as a reader goes through it.
    sites.sort();
    sites
}

/// A symbol of Rust's own libraries (`core::`, `alloc::`, `std::`) that holds none of the
/// user's code: a generic one (`drop_in_place::<UserType>`, an iterator adapter's closure) may
/// hold the kernel's own panics, and is followed.
fn is_library(symbol: &str) -> bool {
    rustc_demangle::try_demangle(symbol).is_ok_and(|d| {
        let path = format!("{d:#}");
        ["core::", "alloc::", "std::"].iter().any(|l| path.starts_with(l)) && !path.contains('<') && !path.contains("{closure")
    })
}

/// The callee of a `call` instruction: `call.uni f, (..);`, `call.uni (retval0), f, (..);`.
fn callee(code: &str) -> Option<&str> {
    let rest = code.strip_prefix("call")?;
    let rest = rest.trim_start_matches(|c: char| c == '.' || c.is_ascii_alphanumeric()).trim_start();
    let rest = if rest.starts_with('(') { rest[rest.find(')')? + 1..].trim_start().trim_start_matches(',').trim_start() } else { rest };
    let name = rest.split(|c: char| c == ',' || c == ';' || c == '(' || c.is_whitespace()).next()?;
    (!name.is_empty()).then_some(name)
}

/// What a panic function of core reports, by its demangled path.
fn panic_kind(symbol: &str) -> Option<&'static str> {
    let path = format!("{:#}", rustc_demangle::try_demangle(symbol).ok()?);
    let last = path.rsplit("::").next().unwrap_or_default();
    if !path.starts_with("core::") {
        return None;
    }
    Some(match last {
        "panic_bounds_check" => "index out of bounds",
        "unwrap_failed" => "`unwrap()` on `None` or `Err`",
        "expect_failed" => "`expect()` on `None` or `Err`",
        l if l.contains("by_zero") => "division by zero",
        l if l.ends_with("_overflow") => "arithmetic overflow",
        l if l.starts_with("slice_") && l.ends_with("_fail") => "slice range out of bounds",
        _ if path.starts_with("core::panicking::") => "a panic",
        // `len_mismatch_fail`, `panic_already_borrowed`, ...: core's other ways to panic.
        l if l.contains("panic") || l.ends_with("_fail") || l.ends_with("_failed") => "a panic",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const PANICS: &str = r#"
.extern .func _RNvNtCs7vYgPcSQIf6_4core9panicking9panic_fmt();
.func  (.param .b32 func_retval0) _RNvCs1d9bxl4us7O_13saxpy_kernels6helper(
	.param .b64 p0
)
{
	.loc	4 80 5                          // src/lib.rs:80:5
	{ // callseq 2, 0
	call.uni _RNvNtNtCs7vYgPcSQIf6_4core9panicking11panic_const23panic_const_div_by_zero, ();
	} // callseq 2
}
.visible .entry unw(
	.param .u64 .ptr .align 1 unw_param_0
)
{
	.loc	4 91 5                          // src/lib.rs:91:5
	call.uni (retval0), _RNvCs1d9bxl4us7O_13saxpy_kernels6helper, (param0, param1);
	call.uni (retval0), _RNvCs1d9bxl4us7O_13saxpy_kernels6helper, (param0, param1);
	.loc	10 1013 21                      // src/option.rs:1013:21 @[ src/index.rs:4:2 @[ src/lib.rs:92:41 ] ]
	{ // callseq 7, 0
	call.uni _RNvNtCs7vYgPcSQIf6_4core6option13unwrap_failed, ();
	} // callseq 7
	.loc	4 0 0
	call.uni _RNvNtCs7vYgPcSQIf6_4core9panicking18panic_bounds_check, ();
	.loc	4 93 1                          // src/lib.rs:93:1
	call.uni _RNvNtCs7vYgPcSQIf6_4core9panicking18panic_bounds_check, ();
	call.uni _RNvNtCs7vYgPcSQIf6_4core9panicking18panic_bounds_check, ();
	call.uni _RNvCs1d9bxl4us7O_13saxpy_kernels12not_a_panic, ();
}
.visible .entry clean(
	.param .u64 .ptr .align 1 clean_param_0
)
{
	.loc	4 99 5                          // src/lib.rs:99:5
	ret;
}
	.file	1 "../../ptx-device/src/index.rs"
	.file	4 "src/lib.rs"
	.file	10 "/rust-sysroot/lib/rustlib/src/rust/library/core/src/option.rs"
"#;

    #[test]
    fn panic_sites_are_the_kernels_own_lines_with_their_kind() {
        let user = |p: &str| p == "src/lib.rs";
        let at = |path: &str, line: u32| Some((path.to_string(), line));
        assert_eq!(
            panic_sites(PANICS, "unw", &user),
            [
                // A `.loc N 0`: counted, with no line.
                (None, "index out of bounds"),
                // Inside a helper the kernel calls, at the helper's line, once for two calls.
                (at("src/lib.rs", 80), "division by zero"),
                // The unwrap inlined from core (through ptx-device): the kernel's line.
                (at("src/lib.rs", 92), "`unwrap()` on `None` or `Err`"),
                // A place and kind is listed once.
                (at("src/lib.rs", 93), "index out of bounds"),
            ]
        );
        assert!(panic_sites(PANICS, "clean", &user).is_empty());
        assert!(panic_sites(PANICS, "missing", &user).is_empty());
        assert_eq!(panic_kind("_RNvNtCs7vYgPcSQIf6_4core9panicking9panic_fmt"), Some("a panic"));
        assert_eq!(panic_kind("_RNvNtNtCs7vYgPcSQIf6_4core9panicking11panic_const24panic_const_add_overflow"), Some("arithmetic overflow"));
        assert_eq!(panic_kind("_RNvCs1d9bxl4us7O_13saxpy_kernels6helper"), None);
    }

    #[test]
    fn a_generic_kernels_panics_are_at_its_body_not_the_kernel_wrapper() {
        // `#[kernel(instances(..))]`: the exported kernel is ptx-device's `__kernel!` wrapper
        // (its lib.rs:126), which inlines the generic body (the user's lib.rs:44). Both files
        // are `src/lib.rs` to LLVM's comment; the `.loc`s say which is which.
        let ptx = ".visible .entry add_f32(\n)\n{\n\t.loc\t2 126 0\n\t.loc\t4 44 8 // src/lib.rs:44:8 @[ src/lib.rs:126:48 ]\n\tcall.uni _RNvNtCs7vYgPcSQIf6_4core9panicking18panic_bounds_check, ();\n\t.loc\t10 1013 21 // src/option.rs:1013:21 @[ src/lib.rs:45:3 @[ src/lib.rs:126:48 ] ]\n\tcall.uni _RNvNtCs7vYgPcSQIf6_4core6option13unwrap_failed, ();\n}\n\t.file\t2 \"../../ptx-device/src/lib.rs\"\n\t.file\t4 \"src/lib.rs\"\n\t.file\t10 \"/rust-sysroot/lib/rustlib/src/rust/library/core/src/option.rs\"\n";
        let sites = panic_sites(ptx, "add_f32", &|p: &str| p == "src/lib.rs");
        let lines: Vec<(Option<u32>, &str)> = sites.iter().map(|(p, k)| (p.as_ref().map(|p| p.1), *k)).collect();
        assert_eq!(lines, [(Some(44), "index out of bounds"), (Some(45), "`unwrap()` on `None` or `Err`")]);
        // Where both `src/lib.rs` have a `.loc` at the frame's line, the kernel crate's is named.
        let both = ptx.replacen("\t.loc\t2 126 0\n", "\t.loc\t2 126 0\n\t.loc\t2 45 1\n\t.loc\t4 45 3\n", 1);
        let sites = panic_sites(&both, "add_f32", &|p: &str| p == "src/lib.rs");
        assert_eq!(sites[1].0, Some(("src/lib.rs".to_string(), 45)), "{sites:?}");
    }
}
