//! Per-arch answers and per-kernel attributes for Rust kernels, on the textual IR between
//! `llvm-link` and `opt` (next to [`crate::backend::shared_memory`]).
//!
//! - **Arch queries.** `ptx_device::arch` asks `__ptx_device_reflect("__CUDA_ARCH")`. Renamed
//!   here to `__nvvm_reflect`, the call is answered by the NVVMReflect pass of this arch's `opt`
//!   (with [`reflect_flags`] for the arch-specific names), and the branches that do not apply are
//!   gone before `llc`. rustc cannot be asked directly: its own pipeline runs NVVMReflect for the
//!   lowest arch of the build, so `__nvvm_reflect` in the crate would be answered once for all.
//! - **Kernel attributes.** `#[kernel(launch_bounds(..), cluster_dims(..))]` leaves a `#[used]`
//!   byte in the section `.ptx.kernel:NAME:ATTRS`. The byte is removed (with its `@llvm.used`
//!   entry) and `ATTRS` become string attributes of kernel `NAME` (`"nvvm.maxntid"="384"`), from
//!   which `llc` writes `.maxntid`, `.minnctapersm` and `.reqnctapercluster`.

use crate::arch::{Arch, Variant};

/// The section prefix of ptx-device's kernel attribute markers.
pub const SECTION: &str = ".ptx.kernel:";
/// ptx-device's arch query, before renaming.
pub const REFLECT: &str = "__ptx_device_reflect";

/// `opt` flags that answer the arch-specific queries for `arch`, with nvcc's meanings:
/// `__CUDA_ARCH_SPECIFIC` on `a` targets, `__CUDA_ARCH_FAMILY_SPECIFIC` on `a` and `f` ones
/// (`__CUDA_ARCH` itself comes from `-mcpu`). An unnamed query is answered 0.
pub fn reflect_flags(arch: Arch) -> Vec<String> {
    let value = arch.capability * 10;
    let mut v = Vec::new();
    if arch.variant == Variant::Specific {
        v.push(format!("--nvvm-reflect-add=__CUDA_ARCH_SPECIFIC={value}"));
    }
    if arch.variant != Variant::Plain {
        v.push(format!("--nvvm-reflect-add=__CUDA_ARCH_FAMILY_SPECIFIC={value}"));
    }
    v
}

/// ptx-device's LLVM intrinsics that exist only on some archs (they are `convergent`, which
/// rustc's `asm!` is not, so LLVM never duplicates them into divergent branches), with the PTX
/// they are. `(intrinsic, ptx, immediate argument, needs sm_90a)`; the others need sm_90.
const ARCH_INTRINSICS: &[(&str, &str, bool, bool)] = &[
    ("llvm.nvvm.wgmma.fence.sync.aligned", "wgmma.fence.sync.aligned", false, true),
    ("llvm.nvvm.wgmma.commit_group.sync.aligned", "wgmma.commit_group.sync.aligned", false, true),
    ("llvm.nvvm.wgmma.wait_group.sync.aligned", "wgmma.wait_group.sync.aligned", true, true),
    ("llvm.nvvm.setmaxnreg.inc.sync.aligned.u32", "setmaxnreg.inc.sync.aligned.u32", true, true),
    ("llvm.nvvm.setmaxnreg.dec.sync.aligned.u32", "setmaxnreg.dec.sync.aligned.u32", true, true),
    ("llvm.nvvm.barrier.cluster.arrive", "barrier.cluster.arrive", false, false),
    ("llvm.nvvm.barrier.cluster.wait", "barrier.cluster.wait", false, false),
];

/// For an arch without them, the calls of [`ARCH_INTRINSICS`] as the inline PTX they stand for:
/// `llc` would stop at such an intrinsic with "Cannot select" and no source line, while ptxas
/// reports the instruction at its line, which [`crate::backend::arch_errors`] turns into an error naming
/// the kernel, the instruction and the arch. A call the arch query has guarded is gone before
/// this matters (`opt` drops the branch). `None` when nothing is replaced.
pub fn lower_for_arch(ir: &str, arch: Arch) -> Option<String> {
    let specific = arch.capability == 90 && arch.variant == Variant::Specific;
    let missing: Vec<&(&str, &str, bool, bool)> =
        ARCH_INTRINSICS.iter().filter(|(_, _, _, sm90a)| if *sm90a { !specific } else { arch.capability < 90 }).collect();
    if !missing.iter().any(|(name, ..)| ir.contains(&format!("call void @{name}("))) {
        return None;
    }
    let mut out = String::with_capacity(ir.len());
    for line in ir.lines() {
        let mut line = line.to_string();
        for (name, ptx, imm, _) in &missing {
            let call = format!("call void @{name}(");
            let Some(at) = line.find(&call) else { continue };
            let args_at = at + call.len();
            let Some(close) = line[args_at..].find(')') else { continue };
            let args = &line[args_at..args_at + close];
            // `i64 0`: the immediate, written into the instruction.
            let text = match (imm, args.split_whitespace().last()) {
                (true, Some(n)) => format!("{ptx} {n};"),
                _ => format!("{ptx};"),
            };
            line = format!("{}call void asm sideeffect \"{text}\", \"~{{memory}}\"(){}", &line[..at], &line[args_at + close + 1..]);
        }
        out.push_str(&line);
        out.push('\n');
    }
    Some(out)
}

/// Attributes for one kernel, from its marker.
#[derive(Clone, Debug, PartialEq, Eq)]
struct KernelAttrs {
    pub kernel: String,
    /// `(name, value)`: `("nvvm.maxntid", "384")`.
    pub attrs: Vec<(String, String)>,
}

/// Rewrites `ir` (the text of `llvm-dis`); `None` when nothing is to be done. An error is a line
/// this pass cannot read or a marker naming no kernel of the module.
pub fn rewrite(ir: &str) -> Result<Option<String>, String> {
    let reflects = ir.contains(&format!("@{REFLECT}("));
    if !reflects && !ir.contains(&format!("section \"{SECTION}")) {
        return Ok(None);
    }
    let has_nvvm_decl = ir.lines().any(|l| l.starts_with("declare ") && l.contains("@__nvvm_reflect("));
    let mut kernels: Vec<KernelAttrs> = Vec::new();
    let mut markers: Vec<String> = Vec::new();
    let mut lines: Vec<String> = Vec::with_capacity(ir.lines().count());
    for line in ir.lines() {
        if let Some(global) = line.strip_prefix('@') {
            if let Some(at) = line.find(&format!("section \"{SECTION}")) {
                let name = global.split([' ', '=']).next().unwrap_or_default().to_string();
                let rest = &line[at + "section \"".len() + SECTION.len()..];
                let spec = rest.split('"').next().unwrap_or_default();
                kernels.push(parse_marker(spec).ok_or_else(|| format!("unreadable kernel attribute marker: {line}"))?);
                markers.push(name);
                continue;
            }
        }
        if reflects && line.starts_with("declare ") && line.contains(&format!("@{REFLECT}(")) && has_nvvm_decl {
            continue;
        }
        lines.push(if reflects { line.replace(&format!("@{REFLECT}("), "@__nvvm_reflect(") } else { line.to_string() });
    }
    if !markers.is_empty() {
        lines = drop_from_used(lines, &markers)?;
    }
    for k in &kernels {
        let prefix = format!("@{}(", k.kernel);
        let Some(line) = lines.iter_mut().find(|l| l.starts_with("define ") && l.contains(" ptx_kernel ") && l.contains(&prefix)) else {
            return Err(format!("`#[kernel]` attributes name `{}`, which is not a kernel of this module", k.kernel));
        };
        *line = add_fn_attrs(line, &prefix, &k.attrs).ok_or_else(|| format!("unreadable kernel definition: {line}"))?;
    }
    let mut ir = lines.join("\n");
    ir.push('\n');
    Ok(Some(ir))
}

/// `NAME:a=1;b=2,3` -> the kernel and its attributes.
fn parse_marker(spec: &str) -> Option<KernelAttrs> {
    let (kernel, attrs) = spec.split_once(':')?;
    let attrs = attrs
        .split(';')
        .filter(|a| !a.is_empty())
        .map(|a| a.split_once('=').map(|(k, v)| (k.to_string(), v.to_string())))
        .collect::<Option<Vec<_>>>()?;
    (!kernel.is_empty() && !attrs.is_empty()).then(|| KernelAttrs { kernel: kernel.to_string(), attrs })
}

/// Removes the markers from `@llvm.used` / `@llvm.compiler.used` (the whole line when nothing
/// else is left in it).
fn drop_from_used(lines: Vec<String>, markers: &[String]) -> Result<Vec<String>, String> {
    let mut out = Vec::with_capacity(lines.len());
    for line in lines {
        let used = ["@llvm.used = ", "@llvm.compiler.used = "].iter().any(|p| line.starts_with(p));
        if !used || !markers.iter().any(|m| line.contains(&format!("@{m}"))) {
            out.push(line);
            continue;
        }
        // `@llvm.used = appending global [N x ptr] [ptr @a, ptr @b], section "llvm.metadata"`
        let open = line.find("] [").ok_or_else(|| format!("unreadable {line}"))? + 2;
        let close = open + line[open..].find(']').ok_or_else(|| format!("unreadable {line}"))?;
        let kept: Vec<&str> =
            line[open + 1..close].split(',').map(str::trim).filter(|e| !markers.iter().any(|m| *e == format!("ptr @{m}"))).collect();
        if kept.is_empty() {
            continue;
        }
        let head = &line[..line.find('[').unwrap_or(0)];
        out.push(format!("{head}[{} x ptr] [{}]{}", kept.len(), kept.join(", "), &line[close + 1..]));
    }
    Ok(out)
}

/// `define ... @k(params) unnamed_addr #1 !dbg !7 {` with the attributes after the parameter
/// list's attribute groups.
fn add_fn_attrs(line: &str, prefix: &str, attrs: &[(String, String)]) -> Option<String> {
    let open = line.find(prefix)? + prefix.len() - 1;
    let mut depth = 0usize;
    let mut close = None;
    for (i, c) in line[open..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    close = Some(open + i);
                    break;
                }
            }
            _ => {}
        }
    }
    let close = close?;
    // After `unnamed_addr`/`local_unnamed_addr` and the `#N` groups: before `section`, `align`,
    // `!dbg`, `{`.
    let tail = &line[close + 1..];
    let mut at = close + 1;
    for word in tail.split_inclusive(' ') {
        let w = word.trim();
        if w.is_empty()
            || w == "unnamed_addr"
            || w == "local_unnamed_addr"
            || (w.starts_with('#') && w[1..].bytes().all(|b| b.is_ascii_digit()))
        {
            at += word.len();
        } else {
            break;
        }
    }
    let text: Vec<String> = attrs.iter().map(|(k, v)| format!("\"{k}\"=\"{v}\"")).collect();
    let (head, rest) = line.split_at(at);
    let sep = if head.ends_with(' ') { "" } else { " " };
    Some(format!("{head}{sep}{} {rest}", text.join(" ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    const IR: &str = r#"@_RNvCs2v_3exp23___PTX_KERNEL_ATTRS_refl = constant [1 x i8] zeroinitializer, section ".ptx.kernel:refl:nvvm.maxntid=384;nvvm.minctasm=1", align 1
@alloc_4d27 = private unnamed_addr constant [12 x i8] c"__CUDA_ARCH\00", align 1
@llvm.used = appending global [1 x ptr] [ptr @_RNvCs2v_3exp23___PTX_KERNEL_ATTRS_refl], section "llvm.metadata"
define ptx_kernel void @halves(ptr noundef readonly captures(none) %x) unnamed_addr #0 !dbg !6 {
  ret void
}
define ptx_kernel void @refl(ptr noundef writeonly captures(none) initializes((0, 8)) %out) unnamed_addr #1 !dbg !73 {
  %_5 = tail call noundef i32 @__ptx_device_reflect(ptr noundef nonnull @alloc_4d27) #3, !dbg !74
  ret void
}
declare noundef i32 @__ptx_device_reflect(ptr noundef) unnamed_addr #1
"#;

    #[test]
    fn renames_the_query_and_attaches_kernel_attributes() {
        let r = rewrite(IR).unwrap().unwrap();
        assert!(!r.contains("PTX_KERNEL_ATTRS") && !r.contains("llvm.used"), "{}", r);
        assert!(r.contains("call noundef i32 @__nvvm_reflect(ptr noundef nonnull @alloc_4d27)"), "{}", r);
        assert!(r.contains("declare noundef i32 @__nvvm_reflect(ptr noundef) unnamed_addr #1"), "{}", r);
        assert!(
            r.contains(r#"@refl(ptr noundef writeonly captures(none) initializes((0, 8)) %out) unnamed_addr #1 "nvvm.maxntid"="384" "nvvm.minctasm"="1" !dbg !73 {"#),
            "{}",
            r
        );
        assert!(r.contains("@halves(ptr noundef readonly captures(none) %x) unnamed_addr #0 !dbg !6 {"));
    }

    #[test]
    fn other_used_globals_stay_used() {
        let ir = "@m = constant [1 x i8] zeroinitializer, section \".ptx.kernel:k:nvvm.cluster_dim=2,1,1\", align 1\n@llvm.compiler.used = appending global [2 x ptr] [ptr @keep, ptr @m], section \"llvm.metadata\"\ndefine ptx_kernel void @k() #0 {\n  ret void\n}\n";
        let r = rewrite(ir).unwrap().unwrap();
        assert!(r.contains("@llvm.compiler.used = appending global [1 x ptr] [ptr @keep], section \"llvm.metadata\""), "{}", r);
        assert!(r.contains("define ptx_kernel void @k() #0 \"nvvm.cluster_dim\"=\"2,1,1\" {"), "{}", r);
    }

    #[test]
    fn an_existing_nvvm_reflect_declaration_is_kept_once() {
        let ir = "declare i32 @__nvvm_reflect(ptr)\ndeclare i32 @__ptx_device_reflect(ptr)\ndefine void @f() {\n  %a = call i32 @__ptx_device_reflect(ptr @s)\n  ret void\n}\n";
        let r = rewrite(ir).unwrap().unwrap();
        assert_eq!(r.matches("declare i32 @__nvvm_reflect").count(), 1, "{r}");
        assert!(r.contains("call i32 @__nvvm_reflect(ptr @s)"));
    }

    #[test]
    fn a_module_without_queries_or_markers_is_left_alone() {
        assert!(rewrite("define ptx_kernel void @k() #0 {\n  ret void\n}\n").unwrap().is_none());
    }

    #[test]
    fn a_marker_for_a_missing_kernel_is_an_error() {
        let ir = "@m = constant [1 x i8] zeroinitializer, section \".ptx.kernel:gone:nvvm.maxntid=64\", align 1\n";
        assert!(rewrite(ir).unwrap_err().contains("`gone`, which is not a kernel"));
        let bad = "@m = constant [1 x i8] zeroinitializer, section \".ptx.kernel:k:oops\", align 1\n";
        assert!(rewrite(bad).unwrap_err().contains("unreadable kernel attribute marker"));
    }

    #[test]
    fn arch_only_intrinsics_become_inline_ptx_where_the_arch_lacks_them() {
        let ir = "define void @k() {\n  tail call void @llvm.nvvm.wgmma.fence.sync.aligned() #4, !dbg !9\n  tail call void @llvm.nvvm.wgmma.wait_group.sync.aligned(i64 1) #4, !dbg !10\n  call void @llvm.nvvm.barrier.cluster.arrive()\n  ret void\n}\n";
        let sm80 = lower_for_arch(ir, "sm_80".parse().unwrap()).unwrap();
        assert!(sm80.contains("tail call void asm sideeffect \"wgmma.fence.sync.aligned;\", \"~{memory}\"() #4, !dbg !9"), "{sm80}");
        assert!(sm80.contains("asm sideeffect \"wgmma.wait_group.sync.aligned 1;\""), "{sm80}");
        assert!(sm80.contains("asm sideeffect \"barrier.cluster.arrive;\""), "{sm80}");
        let sm90 = lower_for_arch(ir, "sm_90".parse().unwrap()).unwrap();
        assert!(sm90.contains("asm sideeffect \"wgmma.fence") && sm90.contains("call void @llvm.nvvm.barrier.cluster.arrive()"), "{sm90}");
        assert!(lower_for_arch(ir, "sm_90a".parse().unwrap()).is_none());
    }

    #[test]
    fn arch_specific_targets_answer_their_queries() {
        let f = |s: &str| reflect_flags(s.parse().unwrap());
        assert!(f("sm_90").is_empty());
        assert_eq!(f("sm_90a"), ["--nvvm-reflect-add=__CUDA_ARCH_SPECIFIC=900", "--nvvm-reflect-add=__CUDA_ARCH_FAMILY_SPECIFIC=900"]);
        assert_eq!(f("sm_100f"), ["--nvvm-reflect-add=__CUDA_ARCH_FAMILY_SPECIFIC=1000"]);
    }
}
