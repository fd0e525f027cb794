//! Run-time support for the modules `ptx-build` generates: choosing the embedded cubin or PTX
//! that runs on the device, loading it through cudarc, explaining failures, the argument traits
//! the typed launch methods take, and the [`Grid`]s they launch with.
//!
//! The CUDA driver is opened at run time (cudarc's dynamic loading): a host binary builds and
//! links on a machine without CUDA, and [`context`] reports a missing driver as an error.
//!
//! With the `harness` feature, `harness` is a test harness for GPU tests that reports a test
//! without a GPU as ignored, with the reason (or fails it when `CARGO_PTX_REQUIRE_GPU=1`).

#![warn(missing_docs)]

mod bounds;
mod kernel_set;
mod shared_memory;

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};

pub use bounds::{check_launch_bounds, launched, LaunchError};
pub use cudarc;
use cudarc::driver::{
    sys, CudaContext, CudaFunction, CudaModule, CudaSlice, CudaView, CudaViewMut, DriverError, LaunchArgs, LaunchConfig, PushKernelArg,
};
use cudarc::nvrtc::Ptx;
/// `half::f16` and `half::bf16`: the host types of CUDA's `__half` and `__nv_bfloat16` parameters.
pub use half;
pub use kernel_set::{EmbeddedModule, Grid, KernelSet};
/// `#[derive(DeviceRepr)]`: cudarc's `DeviceRepr` for a `#[repr(C)]` struct of `Copy` fields
/// that kernels take by value, checked at the type (see `ptx_device_macros::DeviceRepr`; the same
/// derive, usable in a crate shared with the kernels, where it adds nothing for nvptx64).
pub use ptx_device_macros::DeviceRepr;

pub mod tma;
pub use tma::{Swizzle, TensorMap, TensorMapError, TmaType};

#[cfg(feature = "harness")]
pub mod harness;

pub mod cuda_types;

/// Arch-specific (`sm_90a`) and family (`sm_100f`) variants, as `ptx-build` names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// `sm_80`: this GPU and later ones.
    Plain,
    /// `sm_100f`: the same major, same or later minor.
    Family,
    /// `sm_90a`: exactly this GPU.
    Specific,
}

/// A cubin for one GPU, or PTX the driver compiles at load time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImageKind {
    /// Machine code from ptxas: loads in well under a millisecond.
    Cubin,
    /// PTX: the driver compiles it at load time (milliseconds to seconds).
    Ptx,
}

/// One embedded kernel image.
#[derive(Clone, Copy, Debug)]
pub struct Image {
    /// `sm_80`, `sm_90a`, `compute_80`.
    pub arch: &'static str,
    /// Compute capability as `major * 10 + minor`.
    pub capability: u32,
    /// Which GPUs of that capability it runs on.
    pub variant: Variant,
    /// Cubin or PTX.
    pub kind: ImageKind,
    /// The PTX `.version` (PTX images only).
    pub ptx_isa: Option<&'static str>,
    /// The image, embedded in the binary (linked from the build script's object, or included).
    pub bytes: &'static [u8],
}

impl Image {
    /// Whether this image can run on a device of compute capability `cc` (`major * 10 + minor`).
    ///
    /// A cubin runs on its own major version at the same or a later minor; an `a` image only on
    /// its exact arch; PTX is compiled by the driver for any later device.
    pub fn runs_on(&self, cc: u32) -> bool {
        match (self.kind, self.variant) {
            (_, Variant::Specific) => self.capability == cc,
            (ImageKind::Cubin, _) => self.capability / 10 == cc / 10 && self.capability <= cc,
            (ImageKind::Ptx, Variant::Family) => self.capability / 10 == cc / 10 && self.capability <= cc,
            (ImageKind::Ptx, Variant::Plain) => self.capability <= cc,
        }
    }
}

/// Which images [`load`] may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// The best cubin, else the best PTX.
    Best,
    /// PTX only (the JIT path), whatever cubins are embedded.
    PtxOnly,
}

/// The images of `images` that run on `cc`, best first: cubins closest to the device, then
/// PTX of the highest arch not above it.
pub fn candidates(images: &'static [Image], cc: u32, policy: Policy) -> Vec<&'static Image> {
    let mut cubins: Vec<&Image> = images.iter().filter(|i| i.kind == ImageKind::Cubin && policy == Policy::Best && i.runs_on(cc)).collect();
    cubins.sort_by_key(|i| (std::cmp::Reverse(i.capability), i.variant != Variant::Specific));
    let mut ptx: Vec<&Image> = images.iter().filter(|i| i.kind == ImageKind::Ptx && i.runs_on(cc)).collect();
    ptx.sort_by_key(|i| (std::cmp::Reverse(i.capability), i.variant != Variant::Specific));
    cubins.into_iter().chain(ptx).collect()
}

/// Why kernels could not be loaded.
///
/// `Debug` prints the same text as `Display`: `fn main() -> Result<(), Box<dyn Error>>` shows
/// an error through `Debug`, and users should read the message and its help there.
#[derive(thiserror::Error)]
pub enum LoadError {
    /// libcuda could not be opened.
    #[error("no CUDA driver: libcuda could not be loaded\n  help: install the NVIDIA driver, or run on a machine with an NVIDIA GPU")]
    NoDriver,
    /// No embedded image runs on this GPU.
    #[error("no embedded kernel image runs on this GPU (compute capability {major}.{minor}); embedded: {embedded}\n  help: add `sm_{major}{minor}` to the archs of the build (`.arch(\"sm_{major}{minor}\")` in build.rs, `archs` in [package.metadata.ptx], or CARGO_PTX_ARCH)")]
    NoImage {
        /// The GPU's major compute capability.
        major: u32,
        /// Its minor compute capability.
        minor: u32,
        /// The archs that are embedded.
        embedded: String,
    },
    /// The only image that fits is PTX newer than the driver compiles.
    #[error("the CUDA driver cannot load the {arch} PTX: its ISA {isa} is newer than this driver (CUDA {driver}) compiles\n  help: update the NVIDIA driver, embed a cubin for this GPU (`sm_{cc}`), or pin an older ISA with `ptx-isa` in [package.metadata.ptx]")]
    UnsupportedPtx {
        /// The image's arch.
        arch: &'static str,
        /// Its PTX ISA version.
        isa: &'static str,
        /// The driver's CUDA version.
        driver: String,
        /// The GPU's compute capability, `major * 10 + minor`.
        cc: u32,
    },
    /// A kernel the generated code names is not in the loaded image.
    #[error("kernel `{name}` is missing from the {arch} image\n  help: rebuild; the image and the generated code come from one build")]
    MissingKernel {
        /// The kernel.
        name: String,
        /// The image's arch.
        arch: &'static str,
    },
    /// Any other driver call failed.
    #[error("CUDA driver error while {action}: {source}")]
    Driver {
        /// What was being done.
        action: String,
        /// The driver's error.
        #[source]
        source: DriverError,
    },
}

impl std::fmt::Debug for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

/// Whether the CUDA driver library can be opened.
pub fn driver_available() -> bool {
    // SAFETY: only tries to open the library; no symbol is called.
    unsafe { sys::is_culib_present() }
}

/// A context on device `ordinal`, or [`LoadError::NoDriver`] where there is no driver
/// (cudarc itself would panic there).
pub fn context(ordinal: usize) -> Result<Arc<CudaContext>, LoadError> {
    if !driver_available() {
        return Err(LoadError::NoDriver);
    }
    CudaContext::new(ordinal).map_err(|source| LoadError::Driver { action: format!("creating a context on device {ordinal}"), source })
}

/// The driver's CUDA version, e.g. `13.0`.
pub fn driver_version() -> Option<String> {
    let mut v = 0;
    // SAFETY: writes one int; the library is loaded by the time a context exists.
    let r = unsafe { sys::cuDriverGetVersion(&mut v) };
    (r == sys::CUresult::CUDA_SUCCESS).then(|| format!("{}.{}", v / 1000, (v % 1000) / 10))
}

/// A module loaded from one of the embedded images.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The loaded module.
    pub module: Arc<CudaModule>,
    /// The image it was loaded from.
    pub image: &'static Image,
}

impl Loaded {
    /// Resolves a kernel by name.
    pub fn function(&self, name: &str) -> Result<CudaFunction, LoadError> {
        self.module.load_function(name).map_err(|source| match source.0 {
            sys::CUresult::CUDA_ERROR_NOT_FOUND => LoadError::MissingKernel { name: name.to_string(), arch: self.image.arch },
            _ => LoadError::Driver { action: format!("resolving kernel `{name}`"), source },
        })
    }
}

/// Loads the best of `images` for the context's device.
pub fn load(ctx: &Arc<CudaContext>, images: &'static [Image], policy: Policy) -> Result<Loaded, LoadError> {
    let (major, minor) =
        ctx.compute_capability().map_err(|source| LoadError::Driver { action: "reading the compute capability".into(), source })?;
    let (major, minor) = (major as u32, minor as u32);
    let cc = major * 10 + minor;
    let mut last = None;
    for image in candidates(images, cc, policy) {
        let ptx = match image.kind {
            ImageKind::Cubin => Ptx::from_binary(image.bytes.to_vec()),
            ImageKind::Ptx => Ptx::from_src(String::from_utf8_lossy(image.bytes).into_owned()),
        };
        match ctx.load_module(ptx) {
            Ok(module) => return Ok(Loaded { module, image }),
            Err(e) if e.0 == sys::CUresult::CUDA_ERROR_UNSUPPORTED_PTX_VERSION => {
                last = Some(LoadError::UnsupportedPtx {
                    arch: image.arch,
                    isa: image.ptx_isa.unwrap_or("?"),
                    driver: driver_version().unwrap_or_else(|| "?".into()),
                    cc,
                })
            }
            Err(source) => {
                last = Some(LoadError::Driver {
                    action: format!("loading the {} {}", image.arch, if image.kind == ImageKind::Cubin { "cubin" } else { "PTX" }),
                    source,
                })
            }
        }
    }
    Err(last.unwrap_or_else(|| LoadError::NoImage { major, minor, embedded: describe(images) }))
}

fn describe(images: &[Image]) -> String {
    let v: Vec<String> =
        images.iter().map(|i| format!("{} {}", i.arch, if i.kind == ImageKind::Cubin { "cubin" } else { "PTX" })).collect();
    if v.is_empty() {
        "nothing".into()
    } else {
        v.join(", ")
    }
}

impl fmt::Display for Image {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.arch, if self.kind == ImageKind::Cubin { "cubin" } else { "PTX" })
    }
}

/// A launch configuration derived from the driver's occupancy calculator for one kernel, as
/// loaded on one device, with a given dynamic shared memory per block.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LaunchPlan {
    /// Threads per block: the size that keeps the most threads resident per SM (see
    /// [`choose_block_size`] for how ties are broken).
    pub block_size: u32,
    /// Blocks of that size resident on one SM at once.
    pub blocks_per_sm: u32,
    /// The device's SM count.
    pub sm_count: u32,
    /// Resident threads per SM / the SM's maximum, from 0 to 1.
    pub occupancy: f32,
    /// Dynamic shared memory per block that the plan was made for, in bytes.
    pub dynamic_shared_bytes: u32,
}

impl LaunchPlan {
    /// One thread per element: `ceil(n / block_size)` blocks (at least one) of `block_size`
    /// threads. Fails with `CUDA_ERROR_INVALID_VALUE` when that is more blocks than a grid's x
    /// dimension holds (2^31 - 1); such sizes need a grid-stride loop and [`Self::resident_grid`].
    pub fn for_elements(&self, n: usize) -> Result<LaunchConfig, DriverError> {
        let blocks = n.div_ceil(self.block_size as usize).max(1);
        let blocks =
            u32::try_from(blocks).ok().filter(|b| *b <= i32::MAX as u32).ok_or(DriverError(sys::CUresult::CUDA_ERROR_INVALID_VALUE))?;
        Ok(self.config(blocks))
    }

    /// Exactly as many blocks as are resident on the whole device at once: the grid for a kernel
    /// with a grid-stride loop.
    pub fn resident_grid(&self) -> LaunchConfig {
        self.config((self.blocks_per_sm * self.sm_count).max(1))
    }

    fn config(&self, blocks: u32) -> LaunchConfig {
        LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (self.block_size, 1, 1), shared_mem_bytes: self.dynamic_shared_bytes }
    }
}

/// Picks the block size: every multiple of the warp size up to `max_block`, scored by resident
/// threads per SM (`blocks_at(size) * size`, the driver's occupancy calculation). Of the sizes with
/// the highest score, the smallest one of at least 256 threads wins, else the largest.
///
/// Why not the largest, as `cuOccupancyMaxPotentialBlockSize` picks, nor the smallest: at equal
/// occupancy, measured on an H100 (BENCHMARKS.md, 2^26 floats), saxpy took 320.8 / 293.4 / 301.9
/// / 315.4 us with 128 / 256 / 512 / 1024 threads a block, and an `expf` kernel 319.0 / 228.2 /
/// 245.4 / 268.1 us: below 256 the SM's block scheduler becomes the limit (16 short blocks per
/// SM for 128), above it a block holds its slots until its slowest warp ends. 256 is where both
/// costs are least, so it is the floor while a larger size reaches the same occupancy.
///
/// Returns `(block_size, blocks_per_sm)`; `None` when no size fits on an SM at all (too much
/// shared memory per block).
pub fn choose_block_size<E>(
    max_block: u32,
    warp_size: u32,
    mut blocks_at: impl FnMut(u32) -> Result<u32, E>,
) -> Result<Option<(u32, u32)>, E> {
    let warp = warp_size.max(1);
    let mut scored = Vec::new();
    let mut size = warp;
    while size <= max_block {
        let blocks = blocks_at(size)?;
        if blocks > 0 {
            scored.push((size, blocks, size * blocks));
        }
        size += warp;
    }
    let Some(best) = scored.iter().map(|s| s.2).max() else { return Ok(None) };
    let top: Vec<&(u32, u32, u32)> = scored.iter().filter(|s| s.2 == best).collect();
    let pick = top.iter().find(|s| s.0 >= 256).or(top.last()).map(|s| (s.0, s.1));
    Ok(pick)
}

/// The [`LaunchPlan`] of `function` on `ctx`'s device with `dynamic_shared_bytes` per block,
/// asked of the driver (a few dozen occupancy queries: cache it, as [`PlanCache`] does).
pub fn launch_plan(ctx: &Arc<CudaContext>, function: &CudaFunction, dynamic_shared_bytes: u32) -> Result<LaunchPlan, DriverError> {
    launch_plan_within(ctx, function, dynamic_shared_bytes, u32::MAX)
}

/// [`launch_plan`] with blocks of at most `max_threads` threads: a kernel's launch bound
/// (`.maxntid`), which a typed launch with a [`Grid`] passes.
pub fn launch_plan_within(
    ctx: &Arc<CudaContext>,
    function: &CudaFunction,
    dynamic_shared_bytes: u32,
    max_threads: u32,
) -> Result<LaunchPlan, DriverError> {
    use sys::CUdevice_attribute::*;
    use sys::CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK;
    // The function's limit already accounts for its registers (and for `.maxntid`, but the bound
    // is applied here too, so it does not rest on that); it also binds the context, which the
    // occupancy queries below need.
    let max_block = (function.get_attribute(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?.max(0) as u32).min(max_threads);
    let warp = ctx.attribute(CU_DEVICE_ATTRIBUTE_WARP_SIZE)?.max(1) as u32;
    let sm_count = ctx.attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?.max(1) as u32;
    let max_threads_sm = ctx.attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)?.max(1) as u32;
    let smem = dynamic_shared_bytes as usize;
    let chosen = choose_block_size(max_block, warp, |size| function.occupancy_max_active_blocks_per_multiprocessor(size, smem, None))?;
    // No block size fits: the shared memory per block is more than an SM has.
    let (block_size, blocks_per_sm) = chosen.ok_or(DriverError(sys::CUresult::CUDA_ERROR_INVALID_VALUE))?;
    Ok(LaunchPlan {
        block_size,
        blocks_per_sm,
        sm_count,
        occupancy: (block_size * blocks_per_sm) as f32 / max_threads_sm as f32,
        dynamic_shared_bytes,
    })
}

/// [`LaunchPlan`]s of a module's kernels, computed on first use and kept per (kernel, dynamic
/// shared memory). Clones share the cache. The generated `Kernels` holds one (in its [`KernelSet`]).
#[derive(Clone, Debug)]
pub struct PlanCache {
    ctx: Arc<CudaContext>,
    plans: Arc<Mutex<HashMap<(usize, u32), LaunchPlan>>>,
}

impl PlanCache {
    /// An empty cache for kernels loaded on `ctx`.
    pub fn new(ctx: &Arc<CudaContext>) -> Self {
        PlanCache { ctx: ctx.clone(), plans: Arc::default() }
    }

    /// The plan of kernel number `index` (any stable number per kernel), `function`.
    pub fn plan(&self, index: usize, function: &CudaFunction, dynamic_shared_bytes: u32) -> Result<LaunchPlan, DriverError> {
        self.plan_within(index, function, dynamic_shared_bytes, u32::MAX)
    }

    /// [`Self::plan`] for a kernel with a launch bound: blocks of at most `max_threads`.
    pub fn plan_within(
        &self,
        index: usize,
        function: &CudaFunction,
        dynamic_shared_bytes: u32,
        max_threads: u32,
    ) -> Result<LaunchPlan, DriverError> {
        let key = (index, dynamic_shared_bytes);
        if let Some(p) = self.plans.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
            return Ok(*p);
        }
        // Computed outside the lock: two threads may both ask the driver once; both get the same answer.
        let plan = launch_plan_within(&self.ctx, function, dynamic_shared_bytes, max_threads)?;
        self.plans.lock().unwrap_or_else(|e| e.into_inner()).insert(key, plan);
        Ok(plan)
    }
}

/// Device memory a kernel reads (`*const T` / `const T*`): `CudaSlice<T>` or `CudaView<T>`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not device memory of `{T}` that the kernel can read",
    label = "the kernel parameter is `*const {T}`: pass `&CudaSlice<{T}>` or `&CudaView<{T}>`"
)]
pub trait DeviceIn<T> {
    /// Adds the device pointer to a launch.
    fn push_arg<'a>(&'a self, args: &mut LaunchArgs<'a>);
}

/// Device memory a kernel writes (`*mut T` / `T*`): `CudaSlice<T>` or `CudaViewMut<T>`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not device memory of `{T}` that the kernel can write",
    label = "the kernel parameter is `*mut {T}`: pass `&mut CudaSlice<{T}>` or `&mut CudaViewMut<{T}>`"
)]
pub trait DeviceInOut<T> {
    /// Adds the device pointer to a launch.
    fn push_arg<'a>(&'a mut self, args: &mut LaunchArgs<'a>);
}

impl<T> DeviceIn<T> for CudaSlice<T> {
    fn push_arg<'a>(&'a self, args: &mut LaunchArgs<'a>) {
        args.arg(self);
    }
}

impl<T> DeviceIn<T> for CudaView<'_, T> {
    fn push_arg<'a>(&'a self, args: &mut LaunchArgs<'a>) {
        args.arg(self);
    }
}

impl<T> DeviceInOut<T> for CudaSlice<T> {
    fn push_arg<'a>(&'a mut self, args: &mut LaunchArgs<'a>) {
        args.arg(self);
    }
}

impl<T> DeviceInOut<T> for CudaViewMut<'_, T> {
    fn push_arg<'a>(&'a mut self, args: &mut LaunchArgs<'a>) {
        args.arg(self);
    }
}

/// Device memory of any element type that a kernel reads through `const void *` (candle's
/// quantized blocks, a byte buffer): `CudaSlice<T>` or `CudaView<T>` of any `T`, or a raw
/// [`DeviceAddress`]. What the bytes mean is the kernel's business, as in C.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not device memory that the kernel can read",
    label = "the kernel parameter is `const void *`: pass `&CudaSlice<T>` or `&CudaView<T>` of any element type, or `&DeviceAddress(ptr)`"
)]
pub trait DeviceAnyIn {
    /// Adds the device pointer to a launch.
    fn push_arg<'a>(&'a self, args: &mut LaunchArgs<'a>);
}

/// Device memory of any element type that a kernel writes through `void *`: `CudaSlice<T>` or
/// `CudaViewMut<T>` of any `T`, or a raw [`DeviceAddress`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not device memory that the kernel can write",
    label = "the kernel parameter is `void *`: pass `&mut CudaSlice<T>` or `&mut CudaViewMut<T>` of any element type, or `&mut DeviceAddress(ptr)`"
)]
pub trait DeviceAnyInOut {
    /// Adds the device pointer to a launch.
    fn push_arg<'a>(&'a mut self, args: &mut LaunchArgs<'a>);
}

/// A raw device address (cudarc's `CUdeviceptr`) for a `void *` parameter: memory that
/// another library allocated, or an offset into a buffer computed by hand. Nothing checks
/// that it points to live device memory of the right size; the launch is `unsafe` for that.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct DeviceAddress(pub sys::CUdeviceptr);

impl<T> DeviceAnyIn for CudaSlice<T> {
    fn push_arg<'a>(&'a self, args: &mut LaunchArgs<'a>) {
        args.arg(self);
    }
}

impl<T> DeviceAnyIn for CudaView<'_, T> {
    fn push_arg<'a>(&'a self, args: &mut LaunchArgs<'a>) {
        args.arg(self);
    }
}

impl DeviceAnyIn for DeviceAddress {
    fn push_arg<'a>(&'a self, args: &mut LaunchArgs<'a>) {
        args.arg(&self.0);
    }
}

impl<T> DeviceAnyInOut for CudaSlice<T> {
    fn push_arg<'a>(&'a mut self, args: &mut LaunchArgs<'a>) {
        args.arg(self);
    }
}

impl<T> DeviceAnyInOut for CudaViewMut<'_, T> {
    fn push_arg<'a>(&'a mut self, args: &mut LaunchArgs<'a>) {
        args.arg(self);
    }
}

impl DeviceAnyInOut for DeviceAddress {
    fn push_arg<'a>(&'a mut self, args: &mut LaunchArgs<'a>) {
        args.arg(&self.0);
    }
}

/// Brings in the module a build script generated with `ptx_build::Builder`:
/// `mod kernels { ptx_runtime::include_kernels!(); }` (or `include_kernels!("name.rs")` for
/// a module written with `Builder::out_file`).
#[macro_export]
macro_rules! include_kernels {
    () => {
        include!(concat!(env!("OUT_DIR"), "/kernels.rs"));
    };
    ($file:literal) => {
        include!(concat!(env!("OUT_DIR"), "/", $file));
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    const fn img(arch: &'static str, capability: u32, variant: Variant, kind: ImageKind) -> Image {
        Image { arch, capability, variant, kind, ptx_isa: None, bytes: &[] }
    }

    static IMAGES: &[Image] = &[
        img("sm_80", 80, Variant::Plain, ImageKind::Cubin),
        img("sm_80", 80, Variant::Plain, ImageKind::Ptx),
        img("sm_86", 86, Variant::Plain, ImageKind::Cubin),
        img("sm_90a", 90, Variant::Specific, ImageKind::Cubin),
        img("sm_90", 90, Variant::Plain, ImageKind::Ptx),
    ];

    fn names(v: Vec<&Image>) -> Vec<String> {
        v.iter().map(|i| i.to_string()).collect()
    }

    #[test]
    fn exact_cubin_first_then_same_major_then_ptx() {
        assert_eq!(names(candidates(IMAGES, 86, Policy::Best)), ["sm_86 cubin", "sm_80 cubin", "sm_80 PTX"]);
        assert_eq!(names(candidates(IMAGES, 89, Policy::Best)), ["sm_86 cubin", "sm_80 cubin", "sm_80 PTX"]);
    }

    #[test]
    fn arch_specific_only_on_its_device_and_ptx_for_newer_majors() {
        assert_eq!(names(candidates(IMAGES, 90, Policy::Best)), ["sm_90a cubin", "sm_90 PTX", "sm_80 PTX"]);
        assert_eq!(names(candidates(IMAGES, 100, Policy::Best)), ["sm_90 PTX", "sm_80 PTX"]);
        assert!(candidates(IMAGES, 75, Policy::Best).is_empty());
    }

    #[test]
    fn ptx_only_skips_cubins() {
        assert_eq!(names(candidates(IMAGES, 86, Policy::PtxOnly)), ["sm_80 PTX"]);
    }

    /// An H100-like SM: 2048 threads, 32 blocks, 64K registers; `regs` registers per thread.
    fn sm(regs: u32, smem_per_block: u32) -> impl FnMut(u32) -> Result<u32, ()> {
        move |size| {
            let by_threads = 2048 / size;
            let by_regs = 65536 / (regs * size.next_multiple_of(32));
            let by_smem = (228 * 1024u32).checked_div(smem_per_block).unwrap_or(u32::MAX);
            Ok(by_threads.min(32).min(by_regs).min(by_smem))
        }
    }

    #[test]
    fn block_size_is_the_smallest_of_at_least_256_at_full_occupancy() {
        // A light kernel is fully resident at 64..=1024: 256, not the driver's 1024 (ties).
        assert_eq!(choose_block_size(1024, 32, sm(16, 0)), Ok(Some((256, 8))));
        // 64 registers: 1024 threads per SM at most, every size that divides it ties.
        assert_eq!(choose_block_size(1024, 32, sm(64, 0)), Ok(Some((256, 4))));
        // 168 registers: only 384 threads per SM fit (12 warps), reached by 96, 128, 192 and 384.
        assert_eq!(choose_block_size(384, 32, sm(168, 0)), Ok(Some((384, 1))));
        // 48 KiB of shared memory per block: 4 blocks per SM, so only 512 threads per block fill it.
        assert_eq!(choose_block_size(1024, 32, sm(16, 48 * 1024)), Ok(Some((512, 4))));
        // The function's own limit caps the sizes tried.
        assert_eq!(choose_block_size(96, 32, sm(16, 48 * 1024)), Ok(Some((96, 4))));
        // Nothing fits.
        assert_eq!(choose_block_size(1024, 32, |_| Ok::<u32, ()>(0)), Ok(None));
        // A driver error stops the search.
        assert_eq!(choose_block_size(1024, 32, |_| Err::<u32, &str>("no context")), Err("no context"));
    }

    #[test]
    fn a_plan_covers_every_element_and_refuses_too_many_blocks() {
        let plan = LaunchPlan { block_size: 256, blocks_per_sm: 8, sm_count: 132, occupancy: 1.0, dynamic_shared_bytes: 512 };
        let c = plan.for_elements(1000).unwrap();
        assert_eq!((c.grid_dim, c.block_dim, c.shared_mem_bytes), ((4, 1, 1), (256, 1, 1), 512));
        assert_eq!(plan.for_elements(0).unwrap().grid_dim, (1, 1, 1));
        assert_eq!(plan.for_elements(256 * i32::MAX as usize).unwrap().grid_dim.0, i32::MAX as u32);
        assert_eq!(plan.for_elements(256 * i32::MAX as usize + 1).unwrap_err().0, sys::CUresult::CUDA_ERROR_INVALID_VALUE);
        assert_eq!(plan.resident_grid().grid_dim, (1056, 1, 1));
    }

    #[test]
    fn load_errors_explain_themselves() {
        let e = LoadError::NoImage { major: 7, minor: 5, embedded: describe(IMAGES) }.to_string();
        assert!(e.contains("compute capability 7.5") && e.contains("sm_80 cubin") && e.contains(".arch(\"sm_75\")"), "{e}");
        let e = LoadError::UnsupportedPtx { arch: "sm_90", isa: "9.1", driver: "13.0".into(), cc: 90 }.to_string();
        assert!(e.contains("ISA 9.1 is newer than this driver (CUDA 13.0)") && e.contains("update the NVIDIA driver"), "{e}");
    }
}
