//! The GPUs of this machine, for the `native` arch request.

use crate::arch::Arch;
use crate::error::{Error, Result};
use crate::tools::process;

/// Reads the GPUs of this machine through the driver's `nvidia-smi`.
///
/// nvidia-smi ships with every driver install, so this needs no CUDA toolkit, and it keeps the
/// engine free of a driver binding that would fail to link on machines without one.
pub fn native() -> Result<Vec<Arch>> {
    let out = process::probe(process::command("nvidia-smi").args(["--query-gpu=compute_cap", "--format=csv,noheader"]));
    let out = match out {
        Ok(o) if o.status.success() => o,
        Ok(o) => return Err(Error::NoNativeGpu { why: format!("nvidia-smi failed: {}", String::from_utf8_lossy(&o.stderr).trim()) }),
        Err(e) => return Err(Error::NoNativeGpu { why: format!("no NVIDIA driver (nvidia-smi: {e})") }),
    };
    let mut archs = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let cap = line.trim().replace('.', "");
        if let Ok(cap) = cap.parse::<u32>() {
            archs.push(Arch::sm(cap));
        }
    }
    archs.sort();
    archs.dedup();
    if archs.is_empty() {
        return Err(Error::NoNativeGpu { why: "nvidia-smi lists no GPU".into() });
    }
    Ok(archs)
}
