//! Turns ptx-device's launch-bounds markers into the attributes LLVM's NVPTX backend reads.
//!
//! `#[kernel(launch_bounds(256, 2), max_registers(64))]` cannot give the function LLVM
//! attributes (Rust has no syntax for them), so it puts the kernel in the section
//! `.ptx.launch_bounds:maxntid=256,minctasm=2,maxnreg=64`. This pass, on the textual IR before
//! `opt`, replaces that section with the function attributes LLVM 22 reads for `.maxntid`,
//! `.minnctapersm` and `.maxnreg` (`"nvvm.maxntid"="256" "nvvm.minctasm"="2"
//! "nvvm.maxnreg"="64"`; the older `!nvvm.annotations` are upgraded to these on reading), so the
//! PTX carries them as nvcc's does for `__launch_bounds__` and ptxas caps the registers.

/// The section prefix of the marker (ptx-device-macros' `bounds::SECTION`).
pub const SECTION: &str = ".ptx.launch_bounds:";

/// The marker's keys, the LLVM attribute each becomes, and the largest value each may have.
const KEYS: &[(&str, &str, u32)] =
    &[("maxntid", "nvvm.maxntid", 1024), ("minctasm", "nvvm.minctasm", u32::MAX), ("maxnreg", "nvvm.maxnreg", 255)];

/// Rewrites each marked kernel of `ir` (the text of `llvm-dis`); `Ok(None)` when none is
/// marked. An error is a marker this pass cannot read, with its line.
pub fn rewrite(ir: &str) -> Result<Option<String>, String> {
    let marker = format!(" section \"{SECTION}");
    if !ir.contains(&marker) {
        return Ok(None);
    }
    let mut out = String::with_capacity(ir.len() + 256);
    for line in ir.lines() {
        match line.find(&marker).filter(|_| line.starts_with("define ")) {
            Some(at) => {
                let rest = &line[at + marker.len()..];
                let end = rest.find('"').ok_or_else(|| format!("unterminated launch-bounds section: {line}"))?;
                let attrs = attributes(&rest[..end]).map_err(|e| format!("{e}: {line}"))?;
                if !line[..at].contains(" ptx_kernel ") {
                    return Err(format!("launch bounds on a function that is not a kernel: {line}"));
                }
                out.push_str(&line[..at]);
                out.push_str(&attrs);
                out.push_str(&rest[end + 1..]);
            }
            None => out.push_str(line),
        }
        out.push('\n');
    }
    Ok(Some(out))
}

/// ` "nvvm.maxntid"="256" ...` for the marker's `maxntid=256,...`.
fn attributes(marker: &str) -> Result<String, String> {
    let mut attrs = String::new();
    for part in marker.split(',') {
        let (key, value) = part.split_once('=').ok_or_else(|| format!("unreadable launch bound `{part}`"))?;
        let (_, attr, max) = KEYS.iter().find(|(k, _, _)| *k == key).ok_or_else(|| format!("unknown launch bound `{key}`"))?;
        let n: u32 = value.parse().ok().filter(|n| (1..=*max).contains(n)).ok_or_else(|| format!("launch bound `{part}` out of range"))?;
        attrs.push_str(&format!(" \"{attr}\"=\"{n}\""));
    }
    Ok(attrs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_marked_kernel_gets_the_nvvm_attributes_instead_of_the_section() {
        let ir = "define ptx_kernel void @sgemm(i32 noundef %n, ptr noundef %a) unnamed_addr #3 section \".ptx.launch_bounds:maxntid=256,minctasm=2,maxnreg=128\" {\nstart:\n  ret void\n}\ndefine ptx_kernel void @other() unnamed_addr #3 {\n  ret void\n}\n";
        let out = rewrite(ir).unwrap().unwrap();
        assert_eq!(
            out,
            "define ptx_kernel void @sgemm(i32 noundef %n, ptr noundef %a) unnamed_addr #3 \"nvvm.maxntid\"=\"256\" \"nvvm.minctasm\"=\"2\" \"nvvm.maxnreg\"=\"128\" {\nstart:\n  ret void\n}\ndefine ptx_kernel void @other() unnamed_addr #3 {\n  ret void\n}\n"
        );
        let out = rewrite("define ptx_kernel void @k() #0 section \".ptx.launch_bounds:maxntid=64\" !dbg !7 {\n").unwrap().unwrap();
        assert_eq!(out, "define ptx_kernel void @k() #0 \"nvvm.maxntid\"=\"64\" !dbg !7 {\n");
    }

    #[test]
    fn a_module_without_markers_is_unchanged() {
        assert_eq!(rewrite("define ptx_kernel void @k() {\n  ret void\n}\n"), Ok(None));
        assert_eq!(rewrite("@g = internal global [4 x i8] undef, section \".ptx.shared:a.rs:1:1\"\n"), Ok(None));
    }

    #[test]
    fn a_bad_marker_is_an_error_with_its_line() {
        let line = |m: &str| format!("define ptx_kernel void @k() #0 section \".ptx.launch_bounds:{m}\" {{\n");
        for (marker, message) in [
            ("maxntid=0", "launch bound `maxntid=0` out of range"),
            ("maxntid=2048", "launch bound `maxntid=2048` out of range"),
            ("maxnreg=256", "launch bound `maxnreg=256` out of range"),
            ("maxntid=x", "launch bound `maxntid=x` out of range"),
            ("reqntid=64", "unknown launch bound `reqntid`"),
            ("maxntid", "unreadable launch bound `maxntid`"),
        ] {
            let e = rewrite(&line(marker)).unwrap_err();
            assert!(e.starts_with(message) && e.ends_with(&line(marker)[..line(marker).len() - 1]), "{e}");
        }
        let e = rewrite("define internal void @f() #0 section \".ptx.launch_bounds:maxntid=64\" {\n").unwrap_err();
        assert!(e.starts_with("launch bounds on a function that is not a kernel: define internal void @f()"), "{e}");
    }
}
