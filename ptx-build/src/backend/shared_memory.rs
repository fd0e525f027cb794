//! Moves ptx-device's shared arrays into the shared state space of the linked module.
//!
//! Rust cannot give a `static` an address space, so `ptx_device::shared_array!` declares an
//! uninitialised static in the section `.ptx.shared:FILE:LINE:COL` (its call site) and
//! `dynamic_shared` an extern array named [`DYNAMIC`]. Left as they are, LLVM puts them in global
//! memory. This pass, on the textual IR between `llvm-link` and `opt`, makes each of them an
//! `addrspace(3)` global (LLVM NVPTX's shared space) and replaces every use with
//! `addrspacecast (ptr addrspace(3) @g to ptr)`, so the rest of the module still sees a generic
//! pointer (code that stores it or passes it to a `*mut T` function stays correct), while
//! InferAddressSpaces in `opt` follows the cast and turns the accesses into
//! `ld.shared`/`st.shared`/`atom.shared`. It also defines [`SHARED_ADDR`], the helper
//! ptx-device's shared-space inline PTX takes its addresses from.
//!
//! A text pass (with `llvm-dis`/`llvm-as` of the same LLVM around it) keeps the engine free of
//! an LLVM binding; the shapes it reads are the ones rustc writes for these items, checked by
//! the tests below and by `tests/device.rs` on real kernels.

/// The extern array of `ptx_device::shared::dynamic_shared`.
pub const DYNAMIC: &str = "__ptx_device_dynamic_shared";
/// `ptx_device::shared::shared_addr`'s helper, declared by ptx-device, defined here.
pub const SHARED_ADDR: &str = "__ptx_device_shared_addr";
/// `ptx_device::shared::global_addr`'s helper: the same for the global state space.
pub const GLOBAL_ADDR: &str = "__ptx_device_global_addr";
/// The section prefix `shared_array!` writes.
const SECTION: &str = ".ptx.shared:";
/// Static shared memory a block may declare on every arch from sm_70 to sm_120 (ptxas refuses
/// more; the rest of the SM's shared memory is only reachable as dynamic shared memory).
pub const STATIC_LIMIT: u64 = 48 * 1024;

/// One `shared_array!` of the module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SharedArray {
    /// The IR name (without `@`).
    pub symbol: String,
    /// `file:line:col` of the `shared_array!` call, relative to its package.
    pub location: String,
    /// Its size, where the IR type is a byte array (as rustc writes `MaybeUninit` statics).
    pub bytes: Option<u64>,
}

/// What the rewrite did.
#[derive(Debug, Default)]
pub struct Rewrite {
    /// The new IR text.
    pub ir: String,
    /// The static shared arrays found.
    pub arrays: Vec<SharedArray>,
    /// Whether anything changed (else the caller may keep the original bitcode).
    pub changed: bool,
}

/// Rewrites `ir` (the text of `llvm-dis`). An error is a line this pass does not understand,
/// with the line, so that a new rustc's output shape is reported instead of miscompiled.
pub fn rewrite(ir: &str) -> Result<Rewrite, String> {
    let mut arrays = Vec::new();
    let mut names: Vec<String> = Vec::new();
    let mut out_lines: Vec<String> = Vec::with_capacity(ir.lines().count() + 8);
    // First pass: the definitions. Their lines are rewritten here; uses in the second pass.
    let mut definition_lines = Vec::new();
    for (i, line) in ir.lines().enumerate() {
        if line.starts_with('@') {
            if let Some(at) = line.find(&format!(", section \"{SECTION}")) {
                let (name, _) = global_name(line).ok_or_else(|| format!("unreadable global: {line}"))?;
                let rest = &line[at + ", section \"".len() + SECTION.len()..];
                let end = rest.find('"').ok_or_else(|| format!("unterminated section name: {line}"))?;
                let location = rest[..end].to_string();
                let tail = &rest[end + 1..];
                let head = &line[..at];
                let new_head = to_shared(head).ok_or_else(|| format!("unexpected shape for the shared array at {location}: {line}"))?;
                let bytes = byte_array_size(&new_head);
                arrays.push(SharedArray { symbol: name.clone(), location, bytes });
                names.push(name);
                out_lines.push(format!("{new_head}{tail}"));
                definition_lines.push(i);
                continue;
            }
            if let Some((name, _)) = global_name(line).filter(|(n, _)| n == DYNAMIC) {
                // `external global [0 x i8]`, perhaps with an alignment: CUDA's
                // `extern __shared__`, 16-aligned so any element type may use it.
                if !line.contains(" external ") || line.contains("addrspace(") {
                    return Err(format!("unexpected declaration of the dynamic shared array: {line}"));
                }
                out_lines.push(format!("@{DYNAMIC} = external addrspace(3) global [0 x i8], align 16"));
                names.push(name);
                definition_lines.push(i);
                continue;
            }
        }
        if let Some((helper, space)) =
            [(SHARED_ADDR, 3), (GLOBAL_ADDR, 1)].into_iter().find(|(h, _)| line.starts_with("declare ") && line.contains(&format!("@{h}(")))
        {
            // alwaysinline: folds into its caller even at O0, so the cast pair cancels there.
            out_lines.push(format!(
                "define internal i64 @{helper}(ptr %p) alwaysinline {{\n  %s = addrspacecast ptr %p to ptr addrspace({space})\n  %i = ptrtoint ptr addrspace({space}) %s to i64\n  ret i64 %i\n}}"
            ));
            definition_lines.push(i);
            continue;
        }
        out_lines.push(line.to_string());
    }
    let changed = !definition_lines.is_empty();
    if names.is_empty() {
        return Ok(Rewrite { ir: join(out_lines), arrays, changed });
    }
    // Second pass: every use of a moved global goes through a cast back to generic.
    for (i, line) in out_lines.iter_mut().enumerate() {
        if definition_lines.contains(&i) || !line.contains('@') {
            continue;
        }
        for name in &names {
            if line.contains(name.as_str()) {
                *line = replace_uses(line, name);
            }
        }
    }
    Ok(Rewrite { ir: join(out_lines), arrays, changed })
}

/// After `opt`: folds the constant expressions InferAddressSpaces leaves behind, a constant
/// offset into a shared array cast to generic and back,
/// `addrspacecast (ptr getelementptr F (T, ptr addrspacecast (ptr addrspace(3) @g to ptr), I) to ptr addrspace(3))`,
/// into `getelementptr F (T, ptr addrspace(3) @g, I)`. Without this, `s.add(1)` handed to a
/// `*_shared` atomic would cost a `cvta.shared` and a `cvta.to.shared` in the PTX. Returns `None`
/// when there is nothing to fold.
pub fn fold_casts(ir: &str) -> Option<String> {
    const OPEN: &str = "addrspacecast (ptr getelementptr ";
    if !ir.contains(OPEN) {
        return None;
    }
    let mut out = String::with_capacity(ir.len());
    let mut rest = ir;
    let mut changed = false;
    while let Some(at) = rest.find(OPEN) {
        out.push_str(&rest[..at]);
        let expr = &rest[at..];
        match fold_one(expr) {
            Some((folded, len)) => {
                out.push_str(&folded);
                rest = &expr[len..];
                changed = true;
            }
            None => {
                out.push_str(&expr[..OPEN.len()]);
                rest = &expr[OPEN.len()..];
            }
        }
    }
    out.push_str(rest);
    changed.then_some(out)
}

/// One `addrspacecast (ptr getelementptr ...) to ptr addrspace(N))` at the start of `expr`: the
/// folded text and how many bytes of `expr` it replaces.
fn fold_one(expr: &str) -> Option<(String, usize)> {
    let end = matching_paren(expr, "addrspacecast ".len())?;
    let inner = &expr["addrspacecast (".len()..end];
    let (gep, target) = inner.rsplit_once(" to ")?;
    let space = target.strip_prefix("ptr addrspace(")?.strip_suffix(')')?;
    let gep = gep.strip_prefix("ptr getelementptr ")?;
    let open = gep.find('(')?;
    let flags = &gep[..open];
    let close = matching_paren(gep, open)?;
    if close + 1 != gep.len() {
        return None;
    }
    let args = &gep[open + 1..close];
    let (ty, after_ty) = args.split_once(", ")?;
    let cast_prefix = format!("ptr addrspacecast (ptr addrspace({space}) ");
    let base = after_ty.strip_prefix(&cast_prefix)?;
    let (global, indices) = base.split_once(" to ptr), ")?;
    if global.contains(' ') || !global.starts_with('@') {
        return None;
    }
    Some((format!("getelementptr {flags}({ty}, ptr addrspace({space}) {global}, {indices})"), end + 1))
}

/// The index of the `)` matching the `(` at `open`.
fn matching_paren(s: &str, open: usize) -> Option<usize> {
    if s.as_bytes().get(open) != Some(&b'(') {
        return None;
    }
    let mut depth = 0usize;
    for (i, b) in s.bytes().enumerate().skip(open) {
        match b {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// nvcc's `-fmad=true` for the crate's own code: the `contract` flag on every `fmul`, `fadd` and
/// `fsub`, so that LLVM fuses a multiply feeding an add into one `fma.rn` (and leaves the rest
/// as `mul.rn`/`add.rn`, which ptxas does not fuse either). Run before libdevice is linked:
/// nvcc does not contract inside libdevice, and neither must we, or `expf` and friends would
/// differ from CUDA's in the last bit. Returns `None` when there is no such instruction.
pub fn contract(ir: &str) -> Option<String> {
    let mut changed = false;
    let mut out = String::with_capacity(ir.len() + ir.len() / 16);
    for line in ir.lines() {
        let mut line = line.to_string();
        for op in [" = fmul ", " = fadd ", " = fsub "] {
            if let Some(at) = line.find(op) {
                let after = &line[at + op.len()..];
                // `fast` already includes `contract`.
                if !after.starts_with("fast ") && !after.contains("contract ") {
                    line.insert_str(at + op.len(), "contract ");
                    changed = true;
                }
            }
        }
        out.push_str(&line);
        out.push('\n');
    }
    changed.then_some(out)
}

fn join(lines: Vec<String>) -> String {
    let mut s = lines.join("\n");
    s.push('\n');
    s
}

/// The name of the global a line defines (`@name = ...` or `@"quoted name" = ...`), and the
/// text after `= `.
fn global_name(line: &str) -> Option<(String, &str)> {
    let rest = line.strip_prefix('@')?;
    let (name, after) = if let Some(q) = rest.strip_prefix('"') {
        let end = q.find('"')?;
        (q[..end].to_string(), &q[end + 1..])
    } else {
        let end = rest.find(|c: char| !is_ident_char(c))?;
        (rest[..end].to_string(), &rest[end..])
    };
    Some((name, after.strip_prefix(" = ")?))
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '$' | '.' | '_')
}

/// `@g = internal global [N x i8] undef` -> `@g = internal addrspace(3) global [N x i8] undef`.
/// A shared variable cannot have an initializer: rustc writes `undef` for `MaybeUninit`; a
/// `zeroinitializer` (an all-zero uninit static on some rustc) is replaced by `undef` too.
fn to_shared(head: &str) -> Option<String> {
    if head.contains("addrspace(") || head.contains(" constant ") {
        return None;
    }
    let at = head.find(" global ")?;
    let (before, after) = head.split_at(at);
    let after = &after[" global ".len()..];
    let (ty, init) = after.rsplit_once(' ')?;
    if !matches!(init, "undef" | "poison" | "zeroinitializer") {
        return None;
    }
    Some(format!("{before} addrspace(3) global {ty} undef"))
}

/// `N` of a `global [N x i8]` head.
fn byte_array_size(head: &str) -> Option<u64> {
    let ty = head.split(" global ").nth(1)?.trim_end_matches(" undef");
    let ty = ty.trim_start_matches("<{ ").trim_end_matches(" }>");
    ty.strip_prefix('[')?.strip_suffix(" x i8]")?.parse().ok()
}

/// Replaces each use of `@name` in `line` (a whole token, not a prefix of a longer name).
fn replace_uses(line: &str, name: &str) -> String {
    let token = if name.chars().all(is_ident_char) { format!("@{name}") } else { format!("@\"{name}\"") };
    let mut out = String::with_capacity(line.len() + 64);
    let mut rest = line;
    while let Some(at) = rest.find(&token) {
        let after = &rest[at + token.len()..];
        let whole = !after.starts_with(is_ident_char) && !rest[..at].ends_with(is_ident_char);
        out.push_str(&rest[..at]);
        if whole {
            out.push_str(&format!("addrspacecast (ptr addrspace(3) {token} to ptr)"));
        } else {
            out.push_str(&token);
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const IR: &str = r#"@_RNvNvCs4_4tour10rs_atomics12___PTX_SHARED = internal global [16 x i8] undef, section ".ptx.shared:src/lib.rs:104:41", align 4
@_RNvNvCs4_4tour16big12___PTX_SHARED = internal unnamed_addr global [65536 x i8] undef, section ".ptx.shared:src/lib.rs:9:5", align 16
@_RNvNvCs4_4tour10rs_atomics12___PTX_SHARED.1 = internal global [4 x i8] undef, align 4
@__ptx_device_dynamic_shared = external global [0 x i8]

declare i64 @__ptx_device_shared_addr(ptr noundef) unnamed_addr #3
declare i64 @__ptx_device_global_addr(ptr noundef) unnamed_addr #3

define ptx_kernel void @k(ptr %out, i64 %t) {
  %a = getelementptr inbounds nuw float, ptr @_RNvNvCs4_4tour10rs_atomics12___PTX_SHARED, i64 %t
  store float 1.0, ptr %a, align 4
  %b = getelementptr inbounds nuw float, ptr @__ptx_device_dynamic_shared, i64 %t
  %c = load float, ptr %b, align 4
  %d = load i32, ptr @_RNvNvCs4_4tour10rs_atomics12___PTX_SHARED.1, align 4
  %e = call i64 @__ptx_device_shared_addr(ptr %a)
  ret void
}
"#;

    #[test]
    fn moves_marked_arrays_to_shared_and_casts_their_uses() {
        let r = rewrite(IR).unwrap();
        assert!(r.changed);
        assert_eq!(
            r.arrays[0],
            SharedArray {
                symbol: "_RNvNvCs4_4tour10rs_atomics12___PTX_SHARED".into(),
                location: "src/lib.rs:104:41".into(),
                bytes: Some(16)
            }
        );
        assert_eq!(r.arrays[1].bytes, Some(65536));
        assert_eq!(r.arrays[1].location, "src/lib.rs:9:5");
        let ir = &r.ir;
        assert!(
            ir.contains("@_RNvNvCs4_4tour10rs_atomics12___PTX_SHARED = internal addrspace(3) global [16 x i8] undef, align 4\n"),
            "{ir}"
        );
        assert!(ir.contains("internal unnamed_addr addrspace(3) global [65536 x i8] undef, align 16"), "{ir}");
        assert!(!ir.contains("section"), "{ir}");
        assert!(ir.contains("@__ptx_device_dynamic_shared = external addrspace(3) global [0 x i8], align 16"), "{ir}");
        assert!(ir.contains("ptr addrspacecast (ptr addrspace(3) @_RNvNvCs4_4tour10rs_atomics12___PTX_SHARED to ptr), i64 %t"), "{ir}");
        assert!(ir.contains("ptr addrspacecast (ptr addrspace(3) @__ptx_device_dynamic_shared to ptr), i64 %t"), "{ir}");
        // A longer name that starts with a moved one is a different global: untouched.
        assert!(ir.contains("@_RNvNvCs4_4tour10rs_atomics12___PTX_SHARED.1 = internal global [4 x i8] undef"), "{ir}");
        assert!(ir.contains("load i32, ptr @_RNvNvCs4_4tour10rs_atomics12___PTX_SHARED.1, align 4"), "{ir}");
        assert!(ir.contains("define internal i64 @__ptx_device_shared_addr(ptr %p) alwaysinline {"), "{ir}");
        assert!(!ir.contains("declare i64 @__ptx_device_shared_addr"), "{ir}");
        assert!(
            ir.contains(
                "define internal i64 @__ptx_device_global_addr(ptr %p) alwaysinline {\n  %s = addrspacecast ptr %p to ptr addrspace(1)"
            ),
            "{ir}"
        );
    }

    #[test]
    fn a_module_without_shared_arrays_is_unchanged() {
        let ir = "define ptx_kernel void @k() {\n  ret void\n}\n";
        let r = rewrite(ir).unwrap();
        assert!(!r.changed && r.arrays.is_empty());
        assert_eq!(r.ir, ir);
    }

    #[test]
    fn an_initialised_or_constant_shared_static_is_refused_with_its_location() {
        let e = rewrite("@g = internal global [4 x i8] c\"abcd\", section \".ptx.shared:src/lib.rs:3:9\", align 4\n").unwrap_err();
        assert!(e.contains("shared array at src/lib.rs:3:9"), "{e}");
        let e = rewrite("@g = internal constant [4 x i8] undef, section \".ptx.shared:src/k.rs:1:1\"\n").unwrap_err();
        assert!(e.contains("src/k.rs:1:1"), "{e}");
    }

    #[test]
    fn constant_offsets_cast_back_to_shared_are_folded() {
        let ir = "  call void asm sideeffect \"red.shared.add.u32 [${0}], ${1};\", \"l,r\"(i64 ptrtoint (ptr addrspace(3) addrspacecast (ptr getelementptr inbounds nuw (i8, ptr addrspacecast (ptr addrspace(3) @g to ptr), i64 4) to ptr addrspace(3)) to i64), i32 2)\n";
        let folded = fold_casts(ir).unwrap();
        assert_eq!(
            folded,
            "  call void asm sideeffect \"red.shared.add.u32 [${0}], ${1};\", \"l,r\"(i64 ptrtoint (ptr addrspace(3) getelementptr inbounds nuw (i8, ptr addrspace(3) @g, i64 4) to i64), i32 2)\n"
        );
        // A cast of something else (a generic pointer, not a shared array) is left alone.
        assert_eq!(fold_casts("addrspacecast (ptr getelementptr (i8, ptr @h, i64 4) to ptr addrspace(3))"), None);
        assert_eq!(fold_casts("define void @f() {\n}\n"), None);
    }

    #[test]
    fn fmad_marks_float_multiplies_and_adds_contractable() {
        let ir = "  %a = fmul float %x, %y\n  %b = fadd float %a, %z\n  %c = fsub nnan double %b, %w\n  %d = fadd fast float %x, %y\n  %e = add i32 %i, 1\n";
        assert_eq!(
            contract(ir).unwrap(),
            "  %a = fmul contract float %x, %y\n  %b = fadd contract float %a, %z\n  %c = fsub contract nnan double %b, %w\n  %d = fadd fast float %x, %y\n  %e = add i32 %i, 1\n"
        );
        assert_eq!(contract("  %e = add i32 %i, 1\n"), None);
    }

    #[test]
    fn quoted_names_are_replaced_whole() {
        let ir = "@\"a b\" = internal global [8 x i8] undef, section \".ptx.shared:x.rs:1:1\", align 8\n  store i8 0, ptr @\"a b\"\n";
        let r = rewrite(ir).unwrap();
        assert!(r.ir.contains("ptr addrspacecast (ptr addrspace(3) @\"a b\" to ptr)"), "{}", r.ir);
        assert_eq!(r.arrays[0].symbol, "a b");
    }
}
