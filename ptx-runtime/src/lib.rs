//! Run-time support for the modules `ptx-build` generates: choosing the embedded cubin or PTX
//! that runs on the device, loading it through cudarc, explaining failures, and the argument
//! traits the typed launch methods take.
//!
//! The CUDA driver is opened at run time (cudarc's dynamic loading): a host binary builds and
//! links on a machine without CUDA, and [`context`] reports a missing driver as an error.

#![warn(missing_docs)]

use std::fmt;
use std::sync::Arc;

pub use cudarc;
use cudarc::driver::{
    sys, CudaContext, CudaFunction, CudaModule, CudaSlice, CudaView, CudaViewMut, DriverError, LaunchArgs, PushKernelArg,
};
use cudarc::nvrtc::Ptx;
/// `half::f16` and `half::bf16`: the host types of CUDA's `__half` and `__nv_bfloat16` parameters.
pub use half;

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
    /// The file's bytes, embedded with `include_bytes!`.
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

/// For tests that need a GPU: a context on device 0, or `None` after printing the one-line
/// reason there is none (`skipped: no GPU here (...)`), so the test can return and pass.
pub fn context_or_skip() -> Option<Arc<CudaContext>> {
    match context(0) {
        Ok(c) => Some(c),
        Err(e) => {
            eprintln!("skipped: no GPU here ({})", e.to_string().lines().next().unwrap_or_default());
            None
        }
    }
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

    #[test]
    fn load_errors_explain_themselves() {
        let e = LoadError::NoImage { major: 7, minor: 5, embedded: describe(IMAGES) }.to_string();
        assert!(e.contains("compute capability 7.5") && e.contains("sm_80 cubin") && e.contains(".arch(\"sm_75\")"), "{e}");
        let e = LoadError::UnsupportedPtx { arch: "sm_90", isa: "9.1", driver: "13.0".into(), cc: 90 }.to_string();
        assert!(e.contains("ISA 9.1 is newer than this driver (CUDA 13.0)") && e.contains("update the NVIDIA driver"), "{e}");
    }
}
