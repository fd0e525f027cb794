//! ptxas's refusals of an instruction the target arch lacks, said as what happened: which kernel
//! uses which instruction, that the arch being assembled does not have it, which arch does, and
//! how to keep the code to that arch.
//!
//! ptxas reports `wgmma` in an sm_80 build as two or three lines per use (`Instruction
//! 'wgmma.fence' not supported on .target 'sm_80'`, `Feature 'WGMMA' requires PTX ISA .version 8.0
//! or later`), naming neither the kernel nor a fix. [`explain`] turns the first into one error
//! per kernel and instruction; [`is_isa_echo`] recognises the ISA line that only repeats it.

/// One arch refusal, explained.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Explained {
    /// `kernel `k` uses `wgmma.fence.sync.aligned`, which sm_80 does not have (it needs sm_90a)`.
    pub message: String,
    /// How to fix it.
    pub help: String,
    /// The kernel (or device function) and the instruction's opcode: one error for each.
    pub key: (String, String),
}

/// Instructions ptxas only says "not supported on .target" of, with the arch that has them.
const NEEDS: &[(&str, &str)] = &[
    ("wgmma", "sm_90a"),
    ("setmaxnreg", "sm_90a"),
    ("tcgen05", "sm_100a"),
    ("stmatrix", "sm_90"),
    ("cp.async.bulk", "sm_90"),
    ("elect.sync", "sm_90"),
    ("mapa", "sm_90"),
    ("barrier.cluster", "sm_90"),
    ("mma.sync", "sm_80"),
    ("cp.async", "sm_80"),
    ("ldmatrix", "sm_75"),
];

/// What to write around the instruction so that only images of an arch that has it contain it.
fn guard(needs: &str) -> &'static str {
    match needs {
        "sm_90a" => "`if ptx_device::arch::has_wgmma() { .. }` (CUDA: `#if defined(__CUDA_ARCH_FEAT_SM90_ALL)`)",
        "sm_100a" => "`if ptx_device::arch::arch_specific() == 1000 { .. }` (CUDA: `#if defined(__CUDA_ARCH_FEAT_SM100_ALL)`)",
        "sm_90" => "`if ptx_device::arch::has_sm90() { .. }` (CUDA: `#if __CUDA_ARCH__ >= 900`)",
        _ => "`if ptx_device::arch::cuda_arch() >= ..` (CUDA: `#if __CUDA_ARCH__ >= ..`)",
    }
}

/// Explains ptxas's `message` about PTX line `line` (1-based) of `ptx`, if it says that the
/// target lacks an instruction or feature.
pub fn explain(message: &str, line: usize, ptx: &str) -> Option<Explained> {
    let target =
        ptx.lines().find_map(|l| l.trim().strip_prefix(".target ")).map(|t| t.split([',', ' ']).next().unwrap_or(t).trim().to_string())?;
    let needs = if let Some(rest) = message.strip_prefix("Feature '").and_then(|r| r.split_once("' requires .target ")) {
        rest.1.split_whitespace().next()?.to_string()
    } else if message.starts_with("Instruction '") && message.contains(" not supported on .target ") {
        let op = message.split('\'').nth(1)?;
        NEEDS.iter().find(|(p, _)| op.starts_with(p)).map(|(_, a)| a.to_string()).unwrap_or_else(|| "a newer arch".into())
    } else {
        return None;
    };
    let text: Vec<&str> = ptx.lines().collect();
    let instruction = text.get(line.checked_sub(1)?).map(|l| opcode(l)).unwrap_or_default();
    let (kind, function) = enclosing_function(&text, line).unwrap_or(("kernel", "?".into()));
    Some(Explained {
        message: format!("{kind} `{function}` uses `{instruction}`, which {target} does not have (it needs {needs})"),
        help: format!(
            "build for an arch that has it too (`archs = [\"{target}\", \"{needs}\"]`) and keep the code to that arch with {}; or remove {target} from the archs",
            guard(&needs)
        ),
        key: (function, instruction.split('.').next().unwrap_or_default().to_string()),
    })
}

/// Whether `message` is ptxas's "requires PTX ISA .version" about a feature, which follows the
/// arch refusal of the same line in a build for an older arch (its PTX has an older ISA).
pub fn is_isa_echo(message: &str) -> bool {
    message.contains("requires PTX ISA .version")
}

/// The instruction of a PTX line: its first word, without a predicate or a `{ .reg ..;` prefix.
fn opcode(line: &str) -> String {
    let mut l = line.trim().trim_start_matches('{').trim();
    while let Some(rest) = l.strip_prefix(".reg").and_then(|r| r.split_once(';')).map(|(_, r)| r.trim()) {
        l = rest;
    }
    if l.starts_with('@') {
        l = l.split_once(char::is_whitespace).map(|(_, r)| r.trim()).unwrap_or(l);
    }
    l.split(|c: char| c.is_whitespace() || c == ';').next().unwrap_or_default().to_string()
}

/// The `.entry` (`kernel`) or `.func` (`device function`) whose body holds line `line`.
fn enclosing_function(text: &[&str], line: usize) -> Option<(&'static str, String)> {
    text[..line.min(text.len())].iter().rev().find_map(|l| {
        let l = l.trim();
        let (kind, rest) = match (l.split(".entry ").nth(1), l.split(".func ").nth(1)) {
            (Some(r), _) => ("kernel", r),
            (None, Some(r)) => ("device function", r),
            _ => return None,
        };
        // `.func (.param .b32 r) name(` has its return value first.
        let rest = if rest.starts_with('(') { rest.split_once(')')?.1.trim() } else { rest };
        Some((kind, rest.split(['(', ' ']).next()?.to_string()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const PTX: &str = ".version 7.0\n.target sm_80\n.address_size 64\n.visible .entry rs_wgmma_hgemm(\n.param .u64 p\n)\n{\n\twgmma.fence.sync.aligned;\n\t{ .reg .pred p; setp.ne.b32 p, %r1, 0;\n\twgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f1, %f2}, %rd1, %rd2, p, 1, 1, 0, 0; }\n\t@%p1 stmatrix.sync.aligned.m8n8.x1.shared.b16 [%rd1], {%r1};\n}\n";

    #[test]
    fn names_the_kernel_the_instruction_and_both_archs() {
        let e = explain("Instruction 'wgmma.fence' not supported on .target 'sm_80'", 8, PTX).unwrap();
        assert_eq!(e.message, "kernel `rs_wgmma_hgemm` uses `wgmma.fence.sync.aligned`, which sm_80 does not have (it needs sm_90a)");
        assert!(e.help.contains("archs = [\"sm_80\", \"sm_90a\"]") && e.help.contains("ptx_device::arch::has_wgmma()"), "{}", e.help);
        assert_eq!(e.key, ("rs_wgmma_hgemm".to_string(), "wgmma".to_string()));
        let e = explain("Instruction 'wgmma.mma_async' not supported on .target 'sm_80'", 10, PTX).unwrap();
        assert!(e.message.contains("uses `wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16`"), "{}", e.message);
        let e = explain("Feature 'stmatrix' requires .target sm_90 or higher", 11, PTX).unwrap();
        assert_eq!(
            e.message,
            "kernel `rs_wgmma_hgemm` uses `stmatrix.sync.aligned.m8n8.x1.shared.b16`, which sm_80 does not have (it needs sm_90)"
        );
        assert!(e.help.contains("has_sm90()"));
    }

    #[test]
    fn other_messages_are_left_to_ptxas() {
        assert!(explain("Arguments mismatch for instruction 'add'", 8, PTX).is_none());
        assert!(is_isa_echo("Feature 'WGMMA' requires PTX ISA .version 8.0 or later"));
        assert!(!is_isa_echo("Instruction 'wgmma.fence' not supported on .target 'sm_80'"));
    }

    #[test]
    fn device_functions_are_named_too() {
        let ptx = ".target sm_80\n.func (.param .b32 r) helper(\n)\n{\n\tsetmaxnreg.inc.sync.aligned.u32 232;\n}\n";
        let e = explain("Instruction 'setmaxnreg' not supported on .target 'sm_80'", 5, ptx).unwrap();
        assert_eq!(
            e.message,
            "device function `helper` uses `setmaxnreg.inc.sync.aligned.u32`, which sm_80 does not have (it needs sm_90a)"
        );
    }
}
