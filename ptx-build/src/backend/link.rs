//! Linking: the crate's bitcode and its dependencies into one module, then per arch libdevice,
//! NVVMReflect, internalize and optimize with `opt`, and `llc` to PTX.
//!
//! This is the recipe of LLVM's NVPTX guide, run with the llvm-tools of the same nightly that
//! wrote the bitcode (an older LLVM cannot read it). What the Rust front end shares with this
//! stage (the profile, reading and linking bitcode) is in [`crate::backend::bitcode`].

use std::path::Path;

use crate::arch::Arch;
use crate::backend::bitcode::{undefined_symbols, Profile};
use crate::backend::{atomics, kernel_ir, prepass, shared_memory};
use crate::cache;
use crate::error::{Error, Result};
use crate::options::PtxIsa;
use crate::tools::process;
use crate::tools::{Libdevice, Llvm};

/// What this stage does to a module beyond its inputs and options, for the link step's cache
/// key: a change to the rewrites or to `opt`'s default flags must not reuse PTX linked before it.
/// v5: ptx-device's generic atomics defined, kernel attributes (launch bounds, registers,
/// clusters) and arch queries (`kernel_ir`), arch-only intrinsics lowered, jump threading first
/// (release), [`DEFAULT_UNROLL_THRESHOLD`].
pub const RECIPE: &str = "link-v5 atomics, kernel attributes, arch queries, jump threading, unroll-threshold 1500";

/// `opt`'s `-unroll-threshold` where the crate sets none: the size (in IR instructions) up to
/// which a loop with a constant trip count is unrolled completely. LLVM's own (300 at `-O3`)
/// leaves an SGEMM's 8-step loop over 8 x 8 FMAs rolled, which nvcc's build unrolls (ptxas
/// does it there; it does not for LLVM's loop). Measured against nvcc 13.0 + ptxas on sm_90
/// (BENCHMARKS.md, issue 23): that 8 x 8 x 8 step unrolls from 1100 on, a 4 x 4 x 8 one from
/// 1000, a 16 x 32 one (which nvcc unrolls only by four) from 1800, and a 16-step SGEMM (which
/// nvcc leaves rolled) from 3000: 1500 unrolls what nvcc unrolls and nothing it does not. Partial
/// and runtime unrolling keep LLVM's budget (`-unroll-threshold` does not change theirs).
pub const DEFAULT_UNROLL_THRESHOLD: u32 = 1500;

/// One arch's link of a crate's module to PTX.
pub struct ArchLink<'a> {
    pub llvm: &'a Llvm,
    pub package: &'a str,
    pub module: &'a Path,
    pub kernels: &'a [String],
    pub libdevice: Option<&'a Libdevice>,
    pub arch: Arch,
    pub ptx_isa: Option<PtxIsa>,
    pub ftz: bool,
    /// FMA contraction of the crate's code (`contract` flags), as nvcc's `-fmad=true`.
    pub fmad: bool,
    /// opt's `-unroll-threshold`; `None`: [`DEFAULT_UNROLL_THRESHOLD`].
    pub unroll_threshold: Option<u32>,
    pub profile: Profile,
    /// The arch's work folder; intermediates go to a private folder inside it.
    pub work_dir: &'a Path,
    /// The PTX file to write.
    pub out: &'a Path,
}

impl ArchLink<'_> {
    fn codegen_flags(&self) -> Vec<String> {
        let mut v = vec![format!("-mcpu={}", self.arch.sm_name())];
        if let Some(isa) = self.ptx_isa {
            v.push(format!("-mattr=+{}", isa.llvm_feature()));
        }
        v
    }

    /// The `opt` pipeline. `internalize` first so that only kernels stay visible; the O3
    /// pipeline of an nvptx64 `opt` already runs NVVMReflect (`__CUDA_ARCH` from -mcpu,
    /// `__CUDA_FTZ` from the module flag). Debug builds name it, with no optimisation beyond
    /// dropping what nothing calls.
    fn pipeline(&self) -> &'static str {
        match self.profile {
            Profile::Release => "internalize,default<O3>",
            Profile::Debug => "internalize,nvvm-reflect,globaldce,default<O0>",
        }
    }

    pub fn run(&self) -> Result<()> {
        let scratch_dir = cache::ScratchDir::new(self.work_dir)?;
        let tmp = scratch_dir.path();
        if let Some(ld) = self.libdevice.filter(|l| !l.valid) {
            return Err(Error::CorruptLibdevice { path: ld.path.clone() });
        }
        let arch = self.arch.to_string();
        let ctx = || format!(" for `{}` ({arch})", self.package);

        // `__CUDA_FTZ` is read by NVVMReflect from this module flag (kind 4 = override).
        let flags = tmp.join("flags.ll");
        let flags_ir = format!("!llvm.module.flags = !{{!0}}\n!0 = !{{i32 4, !\"nvvm-reflect-ftz\", i32 {}}}\n", u8::from(self.ftz));
        cache::write_atomic(&flags, flags_ir.as_bytes())?;

        let (module, has_shared) = self.prepare_module(tmp)?;
        let linked = tmp.join("linked.bc");
        let mut cmd = process::command(self.llvm.tool("llvm-link"));
        cmd.arg(&module).arg(&flags);
        if let Some(ld) = self.libdevice {
            cmd.arg("--only-needed").arg(&ld.path);
        }
        cmd.arg("-o").arg(&linked);
        let out = process::output("llvm-link", &mut cmd)?;
        if !out.status.success() {
            if let Some(ld) = self.libdevice.filter(|ld| String::from_utf8_lossy(&out.stderr).contains(&*ld.path.to_string_lossy())) {
                return Err(Error::CorruptLibdevice { path: ld.path.clone() });
            }
            return Err(process::failed("llvm-link", ctx(), &cmd, &out));
        }

        let optimized = tmp.join("opt.bc");
        let mut cmd = process::command(self.llvm.tool("opt"));
        cmd.arg("-mtriple=nvptx64-nvidia-cuda").args(self.codegen_flags()).arg(format!("-passes={}", self.pipeline()));
        cmd.arg(format!("-unroll-threshold={}", self.unroll_threshold.unwrap_or(DEFAULT_UNROLL_THRESHOLD)));
        cmd
            // nvcc's default `-prec-sqrt=true`: libdevice's `sqrtf` is `sqrt.rn.f32`, not
            // `sqrt.approx.f32` (NVVMReflect answers 0 for a name it is not given).
            .arg("--nvvm-reflect-add=__CUDA_PREC_SQRT=1")
            // `ptx_device::arch::arch_specific()` and `family_specific()` on `a`/`f` targets.
            .args(kernel_ir::reflect_flags(self.arch))
            .arg(format!("-internalize-public-api-list={}", self.kernels.join(",")))
            .arg(&linked)
            .arg("-o")
            .arg(&optimized);
        process::checked("opt", ctx, &mut cmd)?;

        let optimized = if has_shared { self.fold_shared_casts(tmp, &optimized)? } else { optimized };
        self.check_undefined(&optimized)?;

        let scratch = cache::scratch_path(self.out);
        let mut cmd = process::command(self.llvm.tool("llc"));
        cmd.args(self.codegen_flags())
            .arg(match self.profile {
                Profile::Release => "-O3",
                Profile::Debug => "-O0",
            })
            .arg(&optimized)
            .arg("-o")
            .arg(&scratch);
        if let Some(dir) = self.out.parent() {
            cache::create_dir_all(dir)?;
        }
        process::checked("llc", ctx, &mut cmd)?;
        cache::rename_into_place(&scratch, self.out)
    }

    /// The crate's module as `opt` must see it, before libdevice joins it: ptx-device's shared
    /// arrays in the shared state space ([`shared_memory::rewrite`]), its generic atomics defined
    /// ([`atomics::define`]), its launch bounds as attributes ([`kernel_ir::rewrite`]),
    /// with `fmad` its float multiplies and adds marked contractable ([`shared_memory::contract`];
    /// libdevice is left as nvcc leaves it) and, in release builds, jump-threaded
    /// ([`prepass`]). Returns the module to link (`self.module` itself when nothing changed)
    /// and whether it has shared arrays.
    fn prepare_module(&self, tmp: &Path) -> Result<(std::path::PathBuf, bool)> {
        let ctx = || format!(" for `{}` ({})", self.package, self.arch);
        let out = process::checked("llvm-dis", ctx, process::command(self.llvm.tool("llvm-dis")).arg(self.module).arg("-o").arg("-"))?;
        let ir = String::from_utf8_lossy(&out.stdout);
        let mut rewrite =
            shared_memory::rewrite(&ir).map_err(|message| Error::SharedRewrite { package: self.package.to_string(), message })?;
        let has_shared = rewrite.changed;
        let link_error = |message| Error::LinkRewrite { package: self.package.to_string(), message };
        // ptx-device's generic atomics as LLVM atomics; its arch queries and `#[kernel(..)]`
        // attributes (launch bounds, registers, clusters) as NVVMReflect calls and NVVM attributes.
        for pass in [atomics::define, kernel_ir::rewrite] {
            if let Some(ir) = pass(&rewrite.ir).map_err(link_error)? {
                rewrite.ir = ir;
                rewrite.changed = true;
            }
        }
        if let Some(ir) = kernel_ir::lower_for_arch(&rewrite.ir, self.arch) {
            rewrite.ir = ir;
            rewrite.changed = true;
        }
        if self.fmad {
            if let Some(contracted) = shared_memory::contract(&rewrite.ir) {
                rewrite.ir = contracted;
                rewrite.changed = true;
            }
        }
        let release = matches!(self.profile, Profile::Release);
        if !rewrite.changed && !release {
            return Ok((self.module.to_path_buf(), false));
        }
        if let Some(big) = rewrite.arrays.iter().find(|a| a.bytes.is_some_and(|b| b > shared_memory::STATIC_LIMIT)) {
            return Err(Error::SharedTooLarge {
                package: self.package.to_string(),
                location: big.location.clone(),
                bytes: big.bytes.unwrap_or_default(),
                limit: shared_memory::STATIC_LIMIT,
                arch: self.arch.to_string(),
            });
        }
        let text = tmp.join("prepared.ll");
        let prepared = tmp.join("prepared.bc");
        if release {
            cache::write_atomic(&text, prepass::without_target(&rewrite.ir).as_bytes())?;
            let mut cmd = process::command(self.llvm.tool("opt"));
            cmd.arg(format!("-passes={}", prepass::PASSES)).arg(&text).arg("-o").arg(&prepared);
            process::checked("opt", ctx, &mut cmd)?;
        } else {
            cache::write_atomic(&text, rewrite.ir.as_bytes())?;
            process::checked("llvm-as", ctx, process::command(self.llvm.tool("llvm-as")).arg(&text).arg("-o").arg(&prepared))?;
        }
        Ok((prepared, has_shared))
    }

    /// After `opt`, the constant shared-array offsets cast to generic and back
    /// ([`shared_memory::fold_casts`]); returns the module for `llc`.
    fn fold_shared_casts(&self, tmp: &Path, optimized: &Path) -> Result<std::path::PathBuf> {
        let ctx = || format!(" for `{}` ({})", self.package, self.arch);
        let out = process::checked("llvm-dis", ctx, process::command(self.llvm.tool("llvm-dis")).arg(optimized).arg("-o").arg("-"))?;
        let Some(folded) = shared_memory::fold_casts(&String::from_utf8_lossy(&out.stdout)) else {
            return Ok(optimized.to_path_buf());
        };
        let text = tmp.join("folded.ll");
        cache::write_atomic(&text, folded.as_bytes())?;
        let bc = tmp.join("folded.bc");
        process::checked("llvm-as", ctx, process::command(self.llvm.tool("llvm-as")).arg(&text).arg("-o").arg(&bc))?;
        Ok(bc)
    }

    fn check_undefined(&self, module: &Path) -> Result<()> {
        let mut undefined = undefined_symbols(self.llvm, module)?;
        // CUDA's `extern __shared__`: sized by the launch, never defined by a module.
        undefined.retain(|s| s != shared_memory::DYNAMIC);
        if undefined.is_empty() {
            return Ok(());
        }
        let list = |v: &[&String]| v.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", ");
        let (nv, other): (Vec<&String>, Vec<&String>) = undefined.iter().partition(|s| s.starts_with("__nv_"));
        if !nv.is_empty() {
            return Err(match self.libdevice {
                None => Error::NoLibdevice { package: self.package.to_string(), functions: list(&nv) },
                Some(ld) => Error::UnknownLibdevice { package: self.package.to_string(), functions: list(&nv), libdevice: ld.path.clone() },
            });
        }
        Err(Error::Undefined { package: self.package.to_string(), functions: list(&other), arch: self.arch.to_string() })
    }
}
