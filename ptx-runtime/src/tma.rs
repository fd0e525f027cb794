//! Tensor maps for Hopper's tensor memory accelerator (TMA): the 128-byte descriptor a kernel's
//! `cp.async.bulk.tensor` reads (CUDA's `CUtensorMap`), encoded on the host by the driver's
//! `cuTensorMapEncodeTiled`.
//!
//! The limits TMA puts on a descriptor are checked here first, so a box too large for the
//! hardware is an error that names the dimension and the limit, before the driver (whose error
//! is a bare `CUDA_ERROR_INVALID_VALUE`) or a launch (which would fault) sees it.
//!
//! ```ignore
//! // A row-major f16 matrix of `rows x cols`, read in boxes of 128 rows x 64 columns (128 bytes
//! // a row: the 128-byte swizzle wgmma reads).
//! let map = TensorMap::tiled_2d(TmaType::F16, a.device_ptr(&stream).0, rows, cols, cols, 128, 64, Swizzle::B128)?;
//! let on_device = stream.clone_htod(&[map])?;   // the kernel takes `*const TensorMap`
//! ```

use cudarc::driver::{sys, DeviceRepr, DriverError, ValidAsZeroBits};

/// `CUtensorMap`: an opaque, 64-byte-aligned 128-byte descriptor. A kernel reads it from global
/// memory (`*const TensorMap`, here a `CudaSlice<TensorMap>`) or from its parameters (CUDA's
/// `const __grid_constant__ CUtensorMap`).
#[repr(C, align(64))]
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct TensorMap {
    /// The driver's encoding.
    pub opaque: [u64; 16],
}

impl std::fmt::Debug for TensorMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TensorMap { .. }")
    }
}

// SAFETY: plain bits with CUDA's size and alignment (asserted in the tests below).
unsafe impl DeviceRepr for TensorMap {}
// SAFETY: all-zero is a (useless but harmless) bit pattern for the device to read.
unsafe impl ValidAsZeroBits for TensorMap {}

/// The element type of a tensor map.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum TmaType {
    U8,
    U16,
    U32,
    I32,
    U64,
    I64,
    F16,
    F32,
    F64,
    Bf16,
    /// `f32` read as TF32.
    Tf32,
}

impl TmaType {
    /// Bytes per element.
    pub fn size(self) -> u64 {
        match self {
            TmaType::U8 => 1,
            TmaType::U16 | TmaType::F16 | TmaType::Bf16 => 2,
            TmaType::U32 | TmaType::I32 | TmaType::F32 | TmaType::Tf32 => 4,
            TmaType::U64 | TmaType::I64 | TmaType::F64 => 8,
        }
    }

    fn driver(self) -> sys::CUtensorMapDataType {
        use sys::CUtensorMapDataType as D;
        match self {
            TmaType::U8 => D::CU_TENSOR_MAP_DATA_TYPE_UINT8,
            TmaType::U16 => D::CU_TENSOR_MAP_DATA_TYPE_UINT16,
            TmaType::U32 => D::CU_TENSOR_MAP_DATA_TYPE_UINT32,
            TmaType::I32 => D::CU_TENSOR_MAP_DATA_TYPE_INT32,
            TmaType::U64 => D::CU_TENSOR_MAP_DATA_TYPE_UINT64,
            TmaType::I64 => D::CU_TENSOR_MAP_DATA_TYPE_INT64,
            TmaType::F16 => D::CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
            TmaType::F32 => D::CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
            TmaType::F64 => D::CU_TENSOR_MAP_DATA_TYPE_FLOAT64,
            TmaType::Bf16 => D::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
            TmaType::Tf32 => D::CU_TENSOR_MAP_DATA_TYPE_TFLOAT32,
        }
    }
}

/// How TMA lays a box out in shared memory: the XOR swizzle of 16-byte chunks within each span
/// that `wgmma`'s shared-memory descriptors name (their swizzle mode must match).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Swizzle {
    /// Row after row, unswizzled.
    None,
    /// 32-byte spans.
    B32,
    /// 64-byte spans.
    B64,
    /// 128-byte spans: what a K-major tile of 64 `f16` a row uses.
    B128,
}

impl Swizzle {
    /// The span in bytes (`None`: no limit of its own).
    pub fn bytes(self) -> u64 {
        match self {
            Swizzle::None => 0,
            Swizzle::B32 => 32,
            Swizzle::B64 => 64,
            Swizzle::B128 => 128,
        }
    }

    fn driver(self) -> sys::CUtensorMapSwizzle {
        use sys::CUtensorMapSwizzle as S;
        match self {
            Swizzle::None => S::CU_TENSOR_MAP_SWIZZLE_NONE,
            Swizzle::B32 => S::CU_TENSOR_MAP_SWIZZLE_32B,
            Swizzle::B64 => S::CU_TENSOR_MAP_SWIZZLE_64B,
            Swizzle::B128 => S::CU_TENSOR_MAP_SWIZZLE_128B,
        }
    }
}

/// A tiled tensor map's description, dimension 0 the contiguous one (as the driver takes it).
#[derive(Clone, Debug)]
pub struct Tiled<'a> {
    /// The element type.
    pub dtype: TmaType,
    /// The tensor's device address.
    pub address: u64,
    /// Elements per dimension, innermost first (a row-major matrix: `[cols, rows]`).
    pub dims: &'a [u64],
    /// Bytes between consecutive indices of dimensions 1.. (a row-major matrix: `[row pitch]`).
    pub strides: &'a [u64],
    /// The box one copy moves, elements per dimension, innermost first.
    pub box_dims: &'a [u32],
    /// Shared-memory layout of the box.
    pub swizzle: Swizzle,
}

/// A tensor map TMA cannot have, found before the driver is asked, or the driver's refusal.
#[derive(Debug, thiserror::Error)]
pub enum TensorMapError {
    /// A limit of the hardware or of the encoding.
    #[error("invalid TMA tensor map: {what}\n  help: {help}")]
    Limit {
        /// What is wrong, with the numbers.
        what: String,
        /// The limit and the fix.
        help: String,
    },
    /// `cuTensorMapEncodeTiled` failed.
    #[error("cuTensorMapEncodeTiled failed: {0}")]
    Driver(#[from] DriverError),
}

fn limit(what: String, help: impl Into<String>) -> TensorMapError {
    TensorMapError::Limit { what, help: help.into() }
}

impl TensorMap {
    /// A row-major matrix of `rows x cols` elements, `pitch` elements from one row to the next,
    /// copied in boxes of `box_rows x box_cols`.
    #[allow(clippy::too_many_arguments)]
    pub fn tiled_2d(
        dtype: TmaType,
        address: u64,
        rows: u64,
        cols: u64,
        pitch: u64,
        box_rows: u32,
        box_cols: u32,
        swizzle: Swizzle,
    ) -> Result<TensorMap, TensorMapError> {
        TensorMap::tiled(&Tiled {
            dtype,
            address,
            dims: &[cols, rows],
            strides: &[pitch * dtype.size()],
            box_dims: &[box_cols, box_rows],
            swizzle,
        })
    }

    /// Checks `t` against TMA's limits, then encodes it (`cuTensorMapEncodeTiled`, element
    /// strides 1, no interleave, 256-byte L2 promotion, out-of-bounds elements read as zero).
    pub fn tiled(t: &Tiled<'_>) -> Result<TensorMap, TensorMapError> {
        check(t)?;
        let rank = t.dims.len();
        let ones = [1u32; 5];
        let mut map = TensorMap { opaque: [0; 16] };
        // SAFETY: the arrays hold `rank` (`rank - 1` for strides) entries, checked above; the
        // driver writes only the 128-byte map.
        unsafe {
            sys::cuTensorMapEncodeTiled(
                (&mut map as *mut TensorMap).cast(),
                t.dtype.driver(),
                rank as u32,
                t.address as *mut std::ffi::c_void,
                t.dims.as_ptr(),
                t.strides.as_ptr(),
                t.box_dims.as_ptr(),
                ones.as_ptr(),
                sys::CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
                t.swizzle.driver(),
                sys::CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                sys::CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
            )
            .result()?;
        }
        Ok(map)
    }
}

/// The limits of `cuTensorMapEncodeTiled` (CUDA driver API, "Tensor Map Object Management").
pub fn check(t: &Tiled<'_>) -> Result<(), TensorMapError> {
    let rank = t.dims.len();
    let size = t.dtype.size();
    if !(1..=5).contains(&rank) {
        return Err(limit(format!("{rank} dimensions"), "a tensor map has 1 to 5 dimensions"));
    }
    if t.box_dims.len() != rank || t.strides.len() != rank - 1 {
        return Err(limit(
            format!("{rank} dimensions, {} box sizes and {} strides", t.box_dims.len(), t.strides.len()),
            "give one box size per dimension and one byte stride per dimension after the first",
        ));
    }
    if !t.address.is_multiple_of(16) {
        return Err(limit(
            format!("the tensor's address {:#x} is not 16-byte aligned", t.address),
            "TMA reads from 16-byte aligned memory",
        ));
    }
    for (i, &d) in t.dims.iter().enumerate() {
        if d == 0 || d > 1 << 32 {
            return Err(limit(format!("dimension {i} has {d} elements"), "each dimension has 1 to 2^32 elements"));
        }
    }
    for (i, &s) in t.strides.iter().enumerate() {
        if !s.is_multiple_of(16) || s >= 1 << 40 {
            return Err(limit(
                format!("the stride of dimension {} is {s} bytes", i + 1),
                "strides are multiples of 16 bytes under 2^40 (pad rows to a multiple of 16 bytes)",
            ));
        }
    }
    if t.strides.first().is_some_and(|&s| s < t.dims[0] * size) {
        return Err(limit(
            format!(
                "the rows of {} elements ({} bytes) are farther apart than their {}-byte stride",
                t.dims[0],
                t.dims[0] * size,
                t.strides[0]
            ),
            "the stride of dimension 1 is at least a row",
        ));
    }
    for (i, &b) in t.box_dims.iter().enumerate() {
        if b == 0 || b > 256 {
            return Err(limit(
                format!("box dimension {i} is {b} elements"),
                "a TMA box has 1 to 256 elements in each dimension: copy a larger tile as several boxes",
            ));
        }
    }
    let inner = t.box_dims[0] as u64 * size;
    if !inner.is_multiple_of(16) {
        return Err(limit(format!("the box's rows are {inner} bytes"), "the innermost box dimension is a multiple of 16 bytes"));
    }
    if t.swizzle != Swizzle::None && inner > t.swizzle.bytes() {
        return Err(limit(
            format!("the box's rows are {inner} bytes, wider than the {}-byte swizzle", t.swizzle.bytes()),
            format!(
                "with {:?} swizzling the innermost box dimension is at most {} elements of this type",
                t.swizzle,
                t.swizzle.bytes() / size
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_layout_is_cudas() {
        assert_eq!((std::mem::size_of::<TensorMap>(), std::mem::align_of::<TensorMap>()), (128, 64));
    }

    fn tiled(box_dims: &[u32], swizzle: Swizzle) -> Result<(), TensorMapError> {
        check(&Tiled { dtype: TmaType::F16, address: 0x1000, dims: &[4096, 4096], strides: &[8192], box_dims, swizzle })
    }

    #[test]
    fn a_box_over_tma_limits_is_an_error_before_the_driver() {
        assert!(tiled(&[64, 256], Swizzle::B128).is_ok());
        let e = tiled(&[64, 512], Swizzle::B128).unwrap_err().to_string();
        assert!(e.contains("box dimension 1 is 512 elements") && e.contains("1 to 256 elements in each dimension"), "{e}");
        let e = tiled(&[128, 64], Swizzle::B128).unwrap_err().to_string();
        assert!(e.contains("the box's rows are 256 bytes, wider than the 128-byte swizzle") && e.contains("at most 64 elements"), "{e}");
        let e = tiled(&[4, 64], Swizzle::None).unwrap_err().to_string();
        assert!(e.contains("the box's rows are 8 bytes") && e.contains("multiple of 16 bytes"), "{e}");
        let e = tiled(&[0, 64], Swizzle::None).unwrap_err().to_string();
        assert!(e.contains("box dimension 0 is 0 elements"), "{e}");
    }

    #[test]
    fn tensors_tma_cannot_address_are_errors() {
        let t = |address: u64, dims: &[u64], strides: &[u64]| {
            check(&Tiled { dtype: TmaType::F32, address, dims, strides, box_dims: &vec![8; dims.len()], swizzle: Swizzle::None })
                .unwrap_err()
                .to_string()
        };
        assert!(t(0x1008, &[64, 64], &[256]).contains("address 0x1008 is not 16-byte aligned"));
        assert!(t(0x1000, &[64, 64], &[100]).contains("stride of dimension 1 is 100 bytes"));
        assert!(t(0x1000, &[64, 64], &[128]).contains("the rows of 64 elements (256 bytes) are farther apart"));
        assert!(t(0x1000, &[1; 6], &[16; 5]).contains("6 dimensions"));
        assert!(t(0x1000, &[64, 0], &[256]).contains("dimension 1 has 0 elements"));
        let e = check(&Tiled { dtype: TmaType::F32, address: 0, dims: &[64, 64], strides: &[], box_dims: &[8, 8], swizzle: Swizzle::None });
        assert!(e.unwrap_err().to_string().contains("one byte stride per dimension after the first"));
    }
}
