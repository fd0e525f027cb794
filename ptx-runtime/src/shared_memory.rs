//! Dynamic shared memory beyond what a kernel gets without asking.
//!
//! A block may take at most 48 KiB of shared memory (static and dynamic together) unless its
//! kernel's `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES` is raised first, up to the device's
//! opt-in limit (227 KiB on an H100). CUDA C++ and cudarc leave that call to the user, who meets
//! a bare `CUDA_ERROR_INVALID_VALUE` at the launch otherwise; a typed launch makes it itself, once
//! per kernel and size, and says in numbers when no raise can be enough.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use cudarc::driver::sys::{CUdevice_attribute, CUfunction_attribute};
use cudarc::driver::{CudaContext, CudaFunction};

use crate::LaunchError;

/// What a kernel may take now, and what it would need.
#[derive(Debug, PartialEq, Eq)]
enum Decision {
    /// Within the kernel's current limit.
    Fits,
    /// Over the current limit, within the device's: raise the limit to the request.
    Raise,
    /// Static plus dynamic over the device's opt-in limit: nothing makes it launch.
    TooMuch,
}

fn decide(dynamic: u32, allowed: u32, static_bytes: u32, optin: u32) -> Decision {
    if dynamic <= allowed {
        Decision::Fits
    } else if u64::from(dynamic) + u64::from(static_bytes) <= u64::from(optin) {
        Decision::Raise
    } else {
        Decision::TooMuch
    }
}

/// The dynamic shared memory each function of a [`crate::KernelSet`] is known to be allowed
/// (0: not asked yet). Clones share it, as they share the functions it describes.
#[derive(Debug, Clone)]
pub(crate) struct SharedLimits {
    allowed: Arc<[AtomicU32]>,
    /// Held while a limit is read and raised: two threads raising one kernel's limit (to 64
    /// and to 100 KiB) must not leave it at the smaller, which the driver would keep.
    raising: Arc<Mutex<()>>,
}

impl SharedLimits {
    pub(crate) fn new(functions: usize) -> Self {
        SharedLimits { allowed: (0..functions).map(|_| AtomicU32::new(0)).collect(), raising: Arc::default() }
    }

    /// Makes `function` (number `index`, PTX name `kernel`) launchable with `dynamic` bytes of
    /// dynamic shared memory: nothing when it is already allowed (one atomic read: every launch
    /// with dynamic shared memory comes here), else the driver's limit is read and raised.
    pub(crate) fn ensure(
        &self,
        ctx: &CudaContext,
        index: usize,
        kernel: &'static str,
        function: &CudaFunction,
        dynamic: u32,
    ) -> Result<(), LaunchError> {
        let known = &self.allowed[index];
        if dynamic == 0 || dynamic <= known.load(Ordering::Relaxed) {
            return Ok(());
        }
        let _raising = self.raising.lock().unwrap_or_else(|e| e.into_inner());
        let attribute = |a| function.get_attribute(a).map(|v| v.max(0) as u32);
        let allowed = attribute(CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)?;
        let static_bytes = attribute(CUfunction_attribute::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)?;
        let optin = ctx.attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?.max(0) as u32;
        match decide(dynamic, allowed, static_bytes, optin) {
            Decision::Fits => {
                known.fetch_max(allowed, Ordering::Relaxed);
            }
            Decision::Raise => {
                // Read and set under the lock: never lowered below what another thread raised.
                function.set_attribute(CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, dynamic as i32)?;
                known.fetch_max(dynamic, Ordering::Relaxed);
            }
            Decision::TooMuch => {
                return Err(LaunchError::TooMuchSharedMemory { kernel, dynamic, static_bytes, device_limit: optin });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KIB: u32 = 1024;
    const H100: u32 = 227 * KIB;

    #[test]
    fn a_request_is_raised_only_past_the_current_limit_and_refused_past_the_device() {
        assert_eq!(decide(32 * KIB, 48 * KIB, 0, H100), Decision::Fits);
        assert_eq!(decide(48 * KIB, 48 * KIB, 0, H100), Decision::Fits);
        assert_eq!(decide(64 * KIB, 48 * KIB, 0, H100), Decision::Raise);
        // Static shared memory counts against the same limit.
        assert_eq!(decide(200 * KIB, 16 * KIB, 27 * KIB, H100), Decision::Raise);
        assert_eq!(decide(201 * KIB, 16 * KIB, 27 * KIB, H100), Decision::TooMuch);
        assert_eq!(decide(u32::MAX, 48 * KIB, u32::MAX, H100), Decision::TooMuch);
    }

    #[test]
    fn too_much_says_the_numbers_and_what_fits() {
        let e = LaunchError::TooMuchSharedMemory { kernel: "gemm", dynamic: 240 * KIB, static_bytes: 4 * KIB, device_limit: H100 };
        assert_eq!(
            e.to_string(),
            "kernel `gemm` launched with 245760 bytes of dynamic shared memory a block; with its 4096 bytes of static shared memory that is more than the 232448 bytes a block of this device may have\n  help: launch with at most 228352 bytes of dynamic shared memory (`shared_mem_bytes`, `Grid::shared`), or use smaller tiles"
        );
        assert_eq!(
            cudarc::driver::DriverError::from(e).0,
            cudarc::driver::sys::CUresult::CUDA_ERROR_INVALID_VALUE,
            "`?` into cudarc's error gives what the driver would have said"
        );
    }
}
