//! Defines ptx-device's generic atomics as LLVM atomic instructions.
//!
//! `ptx_device::atomic::atomic_add` and its kin call functions that ptx-device only declares,
//! `__ptx_device_atomicrmw_OP_TYPE(ptr, TYPE) -> TYPE` and
//! `__ptx_device_cmpxchg_TYPE(ptr, TYPE, TYPE) -> TYPE`, because Rust has neither an atomic
//! float add nor an atomic of device scope. This pass, on the textual IR before `opt`, replaces
//! each declaration with an `alwaysinline` definition: one `atomicrmw OP` (or `cmpxchg`),
//! `syncscope("device") monotonic`, which is CUDA's `atomicAdd` (relaxed, `.gpu`). Inlined,
//! the instruction's pointer is the caller's, so InferAddressSpaces sees where it comes from:
//! `atom.shared.add` on a shared array, `atom.global.add` on a kernel parameter, as nvcc's.

/// The prefix of the `atomicrmw` declarations.
const RMW: &str = "__ptx_device_atomicrmw_";
/// The prefix of the `cmpxchg` declarations.
const CMPXCHG: &str = "__ptx_device_cmpxchg_";

/// The `atomicrmw` operations ptx-device declares, and whether each takes a float type.
const OPS: &[(&str, bool)] = &[
    ("add", false),
    ("fadd", true),
    ("min", false),
    ("max", false),
    ("umin", false),
    ("umax", false),
    ("and", false),
    ("or", false),
    ("xor", false),
    ("xchg", false),
    ("uinc_wrap", false),
    ("udec_wrap", false),
];

/// Replaces every declaration of an atomic helper in `ir` (the text of `llvm-dis`) with its
/// definition; `Ok(None)` when the module has none. An error names a helper this pass does not
/// know (a ptx-device newer than this cargo-ptx).
pub fn define(ir: &str) -> Result<Option<String>, String> {
    if !ir.contains(RMW) && !ir.contains(CMPXCHG) {
        return Ok(None);
    }
    let mut out = String::with_capacity(ir.len() + 1024);
    let mut changed = false;
    for line in ir.lines() {
        match helper_name(line) {
            Some(name) => {
                out.push_str(&definition(name).ok_or_else(|| format!("unknown atomic helper `{name}` in: {line}"))?);
                changed = true;
            }
            None => out.push_str(line),
        }
        out.push('\n');
    }
    Ok(changed.then_some(out))
}

/// The helper a `declare` line declares, if it declares one.
fn helper_name(line: &str) -> Option<&str> {
    if !line.starts_with("declare ") {
        return None;
    }
    let at = line.find('@')? + 1;
    let name = &line[at..at + line[at..].find('(')?];
    (name.starts_with(RMW) || name.starts_with(CMPXCHG)).then_some(name)
}

/// The IR type, and its alignment, that a helper's name ends with.
fn ir_type(ty: &str) -> Option<u32> {
    match ty {
        "i32" | "float" => Some(4),
        "i64" | "double" => Some(8),
        _ => None,
    }
}

/// The `alwaysinline` definition of helper `name`.
fn definition(name: &str) -> Option<String> {
    const SCOPE: &str = "syncscope(\"device\") monotonic";
    if let Some(ty) = name.strip_prefix(CMPXCHG) {
        let align = ir_type(ty).filter(|_| ty.starts_with('i'))?;
        return Some(format!(
            "define internal {ty} @{name}(ptr %p, {ty} %c, {ty} %v) alwaysinline {{\n  %r = cmpxchg ptr %p, {ty} %c, {ty} %v {SCOPE} monotonic, align {align}\n  %old = extractvalue {{ {ty}, i1 }} %r, 0\n  ret {ty} %old\n}}"
        ));
    }
    let (op, ty) = name.strip_prefix(RMW)?.rsplit_once('_')?;
    let align = ir_type(ty)?;
    let (_, float) = OPS.iter().find(|(o, _)| *o == op)?;
    if *float == ty.starts_with('i') {
        return None;
    }
    Some(format!(
        "define internal {ty} @{name}(ptr %p, {ty} %v) alwaysinline {{\n  %old = atomicrmw {op} ptr %p, {ty} %v {SCOPE}, align {align}\n  ret {ty} %old\n}}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The declarations as rustc writes them for ptx-device's `extern "C"` block.
    const IR: &str = "declare noundef i32 @__ptx_device_atomicrmw_add_i32(ptr noundef, i32 noundef) unnamed_addr #2
declare noundef float @__ptx_device_atomicrmw_fadd_float(ptr noundef, float noundef) unnamed_addr #2
declare noundef i64 @__ptx_device_cmpxchg_i64(ptr noundef, i64 noundef, i64 noundef) unnamed_addr #2
declare noundef i32 @__ptx_device_atomicrmw_uinc_wrap_i32(ptr noundef, i32 noundef) unnamed_addr #2
declare i64 @__ptx_device_shared_addr(ptr noundef) unnamed_addr #3

define ptx_kernel void @k(ptr %p) {
  %a = call i32 @__ptx_device_atomicrmw_add_i32(ptr %p, i32 1)
  ret void
}
";

    #[test]
    fn every_helper_declaration_becomes_a_device_scoped_llvm_atomic() {
        let ir = define(IR).unwrap().unwrap();
        assert!(ir.contains("define internal i32 @__ptx_device_atomicrmw_add_i32(ptr %p, i32 %v) alwaysinline {\n  %old = atomicrmw add ptr %p, i32 %v syncscope(\"device\") monotonic, align 4\n  ret i32 %old\n}\n"), "{ir}");
        assert!(ir.contains("atomicrmw fadd ptr %p, float %v syncscope(\"device\") monotonic, align 4"), "{ir}");
        assert!(ir.contains("atomicrmw uinc_wrap ptr %p, i32 %v syncscope(\"device\") monotonic, align 4"), "{ir}");
        assert!(
            ir.contains("define internal i64 @__ptx_device_cmpxchg_i64(ptr %p, i64 %c, i64 %v) alwaysinline {\n  %r = cmpxchg ptr %p, i64 %c, i64 %v syncscope(\"device\") monotonic monotonic, align 8\n  %old = extractvalue { i64, i1 } %r, 0\n"),
            "{ir}"
        );
        assert!(!ir.contains("declare noundef"), "{ir}");
        // Everything else is left as it was: other helpers, calls, bodies.
        assert!(ir.contains("declare i64 @__ptx_device_shared_addr(ptr noundef) unnamed_addr #3\n"), "{ir}");
        assert!(ir.contains("  %a = call i32 @__ptx_device_atomicrmw_add_i32(ptr %p, i32 1)\n"), "{ir}");
    }

    #[test]
    fn a_module_without_atomics_is_unchanged() {
        assert_eq!(define("define ptx_kernel void @k() {\n  ret void\n}\n"), Ok(None));
        // A call of a helper is not a declaration: only `declare` lines are rewritten.
        let ir = "; __ptx_device_atomicrmw_add_i32 in a comment\n";
        assert_eq!(define(ir), Ok(None));
    }

    #[test]
    fn an_unknown_helper_is_an_error_naming_it() {
        for name in [
            "__ptx_device_atomicrmw_fmax_float",
            "__ptx_device_atomicrmw_fadd_i32",
            "__ptx_device_atomicrmw_add_float",
            "__ptx_device_atomicrmw_add_i8",
            "__ptx_device_cmpxchg_float",
        ] {
            let e = define(&format!("declare i32 @{name}(ptr, i32)\n")).unwrap_err();
            assert!(e.starts_with(&format!("unknown atomic helper `{name}` in: declare")), "{e}");
        }
    }

    #[test]
    fn every_operation_has_a_definition_for_its_types() {
        for (op, float) in OPS {
            let types: &[&str] = if *float { &["float", "double"] } else { &["i32", "i64"] };
            for ty in types {
                assert!(definition(&format!("{RMW}{op}_{ty}")).is_some(), "{op} {ty}");
            }
        }
    }
}
