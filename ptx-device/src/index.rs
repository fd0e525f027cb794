//! Where a thread is: CUDA's `threadIdx`, `blockIdx`, `blockDim`, `gridDim`, `warpSize`.
//!
//! Each read is one `mov` from a special register (an LLVM intrinsic that the optimiser may
//! merge or drop), so `thread_idx().x` costs the same as CUDA's `threadIdx.x`: components that
//! are never used are never read.

#[cfg(target_arch = "nvptx64")]
use core::arch::nvptx as nv;

/// A three-component launch coordinate, as CUDA's `dim3` / `uint3`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Dim3 {
    /// The fastest-varying component.
    pub x: u32,
    /// The second component.
    pub y: u32,
    /// The slowest-varying component.
    pub z: u32,
}

macro_rules! dim3_reader {
    ($($(#[$doc:meta])* $name:ident = $x:ident, $y:ident, $z:ident;)*) => {$(
        $(#[$doc])*
        #[inline(always)]
        pub fn $name() -> Dim3 {
            // SAFETY: reading a special register has no preconditions.
            unsafe { Dim3 { x: nv::$x(), y: nv::$y(), z: nv::$z() } }
        }
    )*};
}

dim3_reader! {
    /// This thread's index in its block (`threadIdx`, `%tid`).
    thread_idx = _thread_idx_x, _thread_idx_y, _thread_idx_z;
    /// This block's index in the grid (`blockIdx`, `%ctaid`).
    block_idx = _block_idx_x, _block_idx_y, _block_idx_z;
    /// The block's size in threads (`blockDim`, `%ntid`).
    block_dim = _block_dim_x, _block_dim_y, _block_dim_z;
    /// The grid's size in blocks (`gridDim`, `%nctaid`).
    grid_dim = _grid_dim_x, _grid_dim_y, _grid_dim_z;
}

/// The global index of this thread along x: `blockIdx.x * blockDim.x + threadIdx.x`, computed
/// in 64 bits (`mul.wide`), so grids of more than 2^32 threads do not wrap.
#[inline(always)]
pub fn global_index() -> usize {
    let (b, d, t) = (block_idx(), block_dim(), thread_idx());
    b.x as usize * d.x as usize + t.x as usize
}

/// The global `(x, y)` index of this thread in a 2-D launch (`x` is the column).
#[inline(always)]
pub fn global_index_2d() -> (usize, usize) {
    let (b, d, t) = (block_idx(), block_dim(), thread_idx());
    (b.x as usize * d.x as usize + t.x as usize, b.y as usize * d.y as usize + t.y as usize)
}

/// The number of threads of the grid along x, the step of a grid-stride loop
/// (`gridDim.x * blockDim.x`).
#[inline(always)]
pub fn grid_stride() -> usize {
    grid_dim().x as usize * block_dim().x as usize
}

/// The threads of a warp; [`warp_size`] reads the same from the hardware.
pub const WARP_SIZE: u32 = 32;

unsafe extern "C" {
    #[link_name = "llvm.nvvm.read.ptx.sreg.laneid"]
    fn sreg_laneid() -> u32;
    #[link_name = "llvm.nvvm.read.ptx.sreg.warpsize"]
    fn sreg_warpsize() -> u32;
}

/// This thread's lane in its warp, `0..32` (`%laneid`; right for 2-D and 3-D blocks too,
/// unlike `threadIdx.x % 32`).
#[inline(always)]
pub fn lane_id() -> u32 {
    // SAFETY: reading a special register has no preconditions.
    unsafe { sreg_laneid() }
}

/// The warp size (`warpSize`, `WARP_SZ`): 32 on every NVIDIA GPU so far.
#[inline(always)]
pub fn warp_size() -> u32 {
    // SAFETY: as above.
    unsafe { sreg_warpsize() }
}
