//! CUDA C++ that launches its own kernels (`kernel<<<grid, block, 0, stream>>>` inside
//! `extern "C"` functions), built by build.rs into `libmoe.a` with
//! `ptx_build::Builder::cuda_static_lib` and linked here with the CUDA runtime. Each function
//! returns the launch's `cudaError_t` (0: success); pointers are device pointers (from cudarc's
//! `device_ptr`, or `cudaMalloc`) and `stream` a `cudaStream_t` (cudarc's `cu_stream()`: the
//! runtime and the driver API share the device's primary context).

use std::ffi::{c_char, c_void};

/// `cudaStream_t` (null: the legacy default stream).
pub type Stream = *mut c_void;

extern "C" {
    /// `out[i] = inp[ids[i]] * weights[i]`, f32 input.
    pub fn moe_gather_scale_f32(inp: *const f32, ids: *const i32, weights: *const f32, out: *mut f32, n: i32, stream: Stream) -> i32;
    /// The same for f16 input (`__half`, given as its bits).
    pub fn moe_gather_scale_f16(inp: *const u16, ids: *const i32, weights: *const f32, out: *mut f32, n: i32, stream: Stream) -> i32;
    /// `c = a * b` for one 16x16 tile on the tensor cores: `a` row-major, `b` column-major (f16),
    /// `c` row-major f32.
    pub fn moe_wmma_16x16x16(a: *const u16, b: *const u16, c: *mut f32, stream: Stream) -> i32;
    /// `dst = dequant(vx) * y` for `nrows` rows of `ncols / 32` [`BlockQ8`] blocks.
    pub fn mmvq_q8_0_f32(vx: *const c_void, y: *const f32, dst: *mut f32, ncols: i32, nrows: i32, stream: Stream) -> i32;
    /// Writes the `__CUDA_ARCH__` of the device code that ran.
    pub fn moe_arch(out: *mut i32, stream: Stream) -> i32;
    /// `cudaGetDeviceCount`.
    pub fn moe_device_count(count: *mut i32) -> i32;
    /// `cudaGetErrorName`.
    pub fn moe_error_name(code: i32) -> *const c_char;
}

/// The runtime's name of an error code (`cudaErrorNoDevice`).
pub fn error_name(code: i32) -> String {
    // SAFETY: cudaGetErrorName returns a static C string for every code.
    unsafe { std::ffi::CStr::from_ptr(moe_error_name(code)) }.to_string_lossy().into_owned()
}

/// The GPUs the CUDA runtime sees, or its error's name.
pub fn device_count() -> Result<i32, String> {
    let mut n = 0;
    // SAFETY: writes one int.
    match unsafe { moe_device_count(&mut n) } {
        0 => Ok(n),
        e => Err(format!("{} ({e})", error_name(e))),
    }
}

/// Q8_0 as mmvq.cu lays it out: a scale and 32 signed bytes (36 bytes, align 4).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct BlockQ8 {
    pub d: f32,
    pub qs: [i8; 32],
}

/// [`moe_gather_scale_f32`] on the CPU.
pub fn gather_scale_cpu(inp: &[f32], ids: &[i32], weights: &[f32]) -> Vec<f32> {
    ids.iter().zip(weights).map(|(&i, &w)| inp[i as usize] * w).collect()
}

/// [`moe_wmma_16x16x16`] on the CPU (inputs as f32).
pub fn tile_cpu(a: &[f32], b_col_major: &[f32]) -> Vec<f32> {
    let mut c = vec![0.0; 256];
    for r in 0..16 {
        for col in 0..16 {
            c[r * 16 + col] = (0..16).map(|k| a[r * 16 + k] * b_col_major[col * 16 + k]).sum();
        }
    }
    c
}

/// [`mmvq_q8_0_f32`] on the CPU.
pub fn mmvq_cpu(rows: &[BlockQ8], y: &[f32], ncols: usize) -> Vec<f32> {
    let per_row = ncols / 32;
    rows.chunks(per_row)
        .map(|row| row.iter().enumerate().flat_map(|(b, blk)| (0..32).map(move |j| blk.d * blk.qs[j] as f32 * y[b * 32 + j])).sum())
        .collect()
}
