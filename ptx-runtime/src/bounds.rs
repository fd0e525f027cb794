//! Launch bounds: a kernel's most threads a block (`.maxntid`, from
//! `#[kernel(launch_bounds(..))]` or CUDA's `__launch_bounds__`), checked before the driver sees
//! the launch, and the error of a typed launch.

use std::fmt;

use cudarc::driver::{sys, CudaEvent, DriverError, LaunchConfig};

/// Why a typed launch method failed.
///
/// `?` turns it into a `Box<dyn Error>` with its message, or into cudarc's [`DriverError`]
/// (a launch over the bound becomes `CUDA_ERROR_INVALID_VALUE`, what the driver answers).
#[derive(Debug)]
pub enum LaunchError {
    /// The driver refused the launch.
    Driver(DriverError),
    /// The block has more threads than the kernel's launch bound, which ptxas compiled it for
    /// (its registers may not suffice for more).
    TooManyThreads {
        /// The kernel's PTX name.
        kernel: &'static str,
        /// The launch's block shape.
        block: (u32, u32, u32),
        /// The bound: `.maxntid` of the kernel's PTX entry (x * y * z).
        max_threads: u32,
    },
    /// The block's shared memory, static and dynamic, is more than the device allows a block
    /// even after the kernel's limit is raised (a typed launch raises it itself).
    TooMuchSharedMemory {
        /// The kernel's PTX name.
        kernel: &'static str,
        /// The launch's dynamic shared memory, in bytes.
        dynamic: u32,
        /// The kernel's static shared memory (`.shared` arrays in its PTX), in bytes.
        static_bytes: u32,
        /// The most shared memory a block of this device may have
        /// (`CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN`).
        device_limit: u32,
    },
    /// No loaded kernel has this PTX name (`Kernels::plan_of`, `Kernels::config_of`).
    UnknownKernel {
        /// The name asked for.
        name: String,
    },
    /// The kernel is in other archs' images but not in the one loaded for this GPU: its source
    /// leaves it out for this arch (candle's bf16 kernels under `#if __CUDA_ARCH__ >= 800`).
    NotInImage {
        /// The kernel's PTX name.
        kernel: &'static str,
        /// The loaded image's arch.
        arch: &'static str,
    },
    /// The kernel syncs its whole grid (cooperative groups), so it is launched cooperatively,
    /// and the device cannot hold all of the grid's blocks at once.
    CooperativeTooLarge {
        /// The kernel's PTX name.
        kernel: &'static str,
        /// The grid's blocks.
        blocks: u64,
    },
}

impl fmt::Display for LaunchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LaunchError::Driver(e) => write!(f, "{e}"),
            LaunchError::TooManyThreads { kernel, block: (x, y, z), max_threads } => write!(
                f,
                "kernel `{kernel}` launched with {} threads a block ({x} x {y} x {z}), more than its launch bound of {max_threads} (`.maxntid {max_threads}`, from `#[kernel(launch_bounds({max_threads}, ..))]` or `__launch_bounds__({max_threads}, ..)`)\n  help: launch at most {max_threads} threads a block; `Grid::elements(n)` and `Grid::resident()` stay within the bound",
                u128::from(*x) * u128::from(*y) * u128::from(*z)
            ),
            LaunchError::TooMuchSharedMemory { kernel, dynamic, static_bytes, device_limit } => write!(
                f,
                "kernel `{kernel}` launched with {dynamic} bytes of dynamic shared memory a block; with its {static_bytes} bytes of static shared memory that is more than the {device_limit} bytes a block of this device may have\n  help: launch with at most {} bytes of dynamic shared memory (`shared_mem_bytes`, `Grid::shared`), or use smaller tiles",
                device_limit.saturating_sub(*static_bytes)
            ),
            LaunchError::UnknownKernel { name } => {
                write!(f, "no loaded kernel is named `{name}`\n  help: `KERNEL_NAMES` of the generated module lists every kernel by its PTX name")
            }
            LaunchError::NotInImage { kernel, arch } => write!(
                f,
                "kernel `{kernel}` is not in the {arch} image loaded for this GPU: its source leaves it out for {arch} (an `#if` on `__CUDA_ARCH__`)\n  help: on this GPU launch a kernel its image has; the method's docs list the archs that have this one"
            ),
            LaunchError::CooperativeTooLarge { kernel, blocks } => write!(
                f,
                "kernel `{kernel}` syncs its whole grid (cooperative groups' `this_grid().sync()`), so all {blocks} blocks of its grid must be resident at once, more than this device holds of it\n  help: launch it with `Grid::resident()` (as many blocks as fit) and loop over the work inside the kernel"
            ),
        }
    }
}

impl std::error::Error for LaunchError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            LaunchError::Driver(e) => Some(e),
            LaunchError::TooManyThreads { .. }
            | LaunchError::TooMuchSharedMemory { .. }
            | LaunchError::UnknownKernel { .. }
            | LaunchError::NotInImage { .. }
            | LaunchError::CooperativeTooLarge { .. } => None,
        }
    }
}

impl From<DriverError> for LaunchError {
    fn from(e: DriverError) -> Self {
        LaunchError::Driver(e)
    }
}

impl From<LaunchError> for DriverError {
    fn from(e: LaunchError) -> Self {
        match e {
            LaunchError::Driver(e) => e,
            LaunchError::TooManyThreads { .. } | LaunchError::TooMuchSharedMemory { .. } => {
                DriverError(sys::CUresult::CUDA_ERROR_INVALID_VALUE)
            }
            LaunchError::CooperativeTooLarge { .. } => DriverError(sys::CUresult::CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE),
            LaunchError::UnknownKernel { .. } | LaunchError::NotInImage { .. } => DriverError(sys::CUresult::CUDA_ERROR_NOT_FOUND),
        }
    }
}

/// `Ok` when `cfg`'s block has at most `max_threads` threads (the generated launch methods call
/// this for kernels with a launch bound); the error names the kernel and the bound.
pub fn check_launch_bounds(kernel: &'static str, max_threads: u32, cfg: &LaunchConfig) -> Result<(), LaunchError> {
    let (x, y, z) = cfg.block_dim;
    if u128::from(x) * u128::from(y) * u128::from(z) > u128::from(max_threads) {
        return Err(LaunchError::TooManyThreads { kernel, block: cfg.block_dim, max_threads });
    }
    Ok(())
}

/// The end of every generated launch method: cudarc's launch result (the events it records when
/// event tracking is on) as a [`LaunchError`]. One call instead of a `?` and the drop of those
/// events in each of hundreds of methods: rustc spends less on the generated module
/// (BENCHMARKS.md, issue 25).
#[doc(hidden)]
pub fn launched(result: Result<Option<(CudaEvent, CudaEvent)>, DriverError>) -> Result<(), LaunchError> {
    result.map(drop).map_err(LaunchError::Driver)
}

/// A cooperative launch's result: the driver's "too large" as the error that says what to do.
pub(crate) fn launched_cooperatively(
    kernel: &'static str,
    cfg: &LaunchConfig,
    result: Result<Option<(CudaEvent, CudaEvent)>, DriverError>,
) -> Result<(), LaunchError> {
    match result {
        Err(DriverError(sys::CUresult::CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE)) => {
            let (x, y, z) = cfg.grid_dim;
            Err(LaunchError::CooperativeTooLarge { kernel, blocks: u64::from(x) * u64::from(y) * u64::from(z) })
        }
        other => launched(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A grid larger than the device holds at once, for a kernel that syncs its grid: the
    /// driver's "too large" names the kernel, the blocks and the grid that fits.
    #[test]
    fn a_cooperative_grid_too_large_says_which_grid_fits() {
        let cfg = LaunchConfig { grid_dim: (1000, 2, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
        let too_large = Err(DriverError(sys::CUresult::CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE));
        let e = launched_cooperatively("two_phase", &cfg, too_large).unwrap_err();
        assert!(matches!(e, LaunchError::CooperativeTooLarge { kernel: "two_phase", blocks: 2000 }), "{e:?}");
        let text = e.to_string();
        assert!(
            text.starts_with("kernel `two_phase` syncs its whole grid (cooperative groups' `this_grid().sync()`), so all 2000 blocks"),
            "{text}"
        );
        assert!(text.contains("help: launch it with `Grid::resident()`"), "{text}");
        assert_eq!(DriverError::from(e).0, sys::CUresult::CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE);
        assert!(launched_cooperatively("two_phase", &cfg, Ok(None)).is_ok());
        let other = launched_cooperatively("two_phase", &cfg, Err(DriverError(sys::CUresult::CUDA_ERROR_INVALID_VALUE)));
        assert!(matches!(other, Err(LaunchError::Driver(_))));
    }

    #[test]
    fn a_launch_result_becomes_the_launch_methods_result() {
        assert!(launched(Ok(None)).is_ok());
        let e = launched(Err(DriverError(sys::CUresult::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES))).unwrap_err();
        assert!(matches!(e, LaunchError::Driver(DriverError(sys::CUresult::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES))), "{e:?}");
    }

    fn cfg(block: (u32, u32, u32)) -> LaunchConfig {
        LaunchConfig { grid_dim: (1, 1, 1), block_dim: block, shared_mem_bytes: 0 }
    }

    #[test]
    fn a_block_over_the_bound_is_refused_naming_the_kernel_and_the_bound() {
        assert!(check_launch_bounds("hist", 256, &cfg((256, 1, 1))).is_ok());
        assert!(check_launch_bounds("hist", 256, &cfg((32, 8, 1))).is_ok());
        let e = check_launch_bounds("hist", 256, &cfg((32, 16, 1))).unwrap_err();
        assert_eq!(
            e.to_string(),
            "kernel `hist` launched with 512 threads a block (32 x 16 x 1), more than its launch bound of 256 (`.maxntid 256`, from `#[kernel(launch_bounds(256, ..))]` or `__launch_bounds__(256, ..)`)\n  help: launch at most 256 threads a block; `Grid::elements(n)` and `Grid::resident()` stay within the bound"
        );
        // No overflow for absurd shapes.
        assert!(check_launch_bounds("k", 1024, &cfg((u32::MAX, u32::MAX, 2))).is_err());
        // `?` into cudarc's error: what the driver would have said.
        assert_eq!(DriverError::from(e).0, sys::CUresult::CUDA_ERROR_INVALID_VALUE);
        let d = LaunchError::from(DriverError(sys::CUresult::CUDA_ERROR_LAUNCH_FAILED));
        assert!(std::error::Error::source(&d).is_some());
    }

    #[test]
    fn an_unknown_kernel_name_says_where_the_names_are() {
        let e = LaunchError::UnknownKernel { name: "saxpi".into() };
        assert_eq!(
            e.to_string(),
            "no loaded kernel is named `saxpi`\n  help: `KERNEL_NAMES` of the generated module lists every kernel by its PTX name"
        );
        assert_eq!(DriverError::from(e).0, sys::CUresult::CUDA_ERROR_NOT_FOUND);
    }

    #[test]
    fn a_kernel_this_gpus_image_lacks_names_the_arch_and_the_reason() {
        let e = LaunchError::NotInImage { kernel: "cast_bf16_f32", arch: "sm_75" };
        assert_eq!(
            e.to_string(),
            "kernel `cast_bf16_f32` is not in the sm_75 image loaded for this GPU: its source leaves it out for sm_75 (an `#if` on `__CUDA_ARCH__`)\n  help: on this GPU launch a kernel its image has; the method's docs list the archs that have this one"
        );
        assert_eq!(DriverError::from(e).0, sys::CUresult::CUDA_ERROR_NOT_FOUND);
    }
}
