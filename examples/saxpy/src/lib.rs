//! Kernels: `saxpy` (y = a*x + y), `exp_kernel` (y = exp(x)) through NVIDIA's libdevice
//! (`__nv_expf`, linked in by cargo-ptx per arch), `empty` (launch overhead), `axpy` (generic,
//! two instances) and `negate_f32`/`negate_i32` (stamped out by `macro_rules!`).
#![no_std]

use ptx_device::{index::global_index, kernel, math};

/// `y[i] = a * x[i] + y[i]` for `i < n`.
///
/// # Safety
/// `x` and `y` point to at least `n` floats of device memory.
#[kernel]
pub unsafe fn saxpy(n: u32, a: f32, x: *const f32, y: *mut f32) {
    let i = global_index();
    if i < n as usize {
        *y.add(i) = a * *x.add(i) + *y.add(i);
    }
}

/// `y[i] = exp(x[i])` for `i < n`, through libdevice.
///
/// # Safety
/// `x` and `y` point to at least `n` floats of device memory.
#[kernel]
pub unsafe fn exp_kernel(n: u32, x: *const f32, y: *mut f32) {
    let i = global_index();
    if i < n as usize {
        *y.add(i) = math::exp(*x.add(i));
    }
}

/// Does nothing: measures launch overhead.
#[kernel]
pub unsafe fn empty() {}

/// `y[i] = a * x[i] + y[i]` for `i < n`, for each type listed: exported as `axpy_f32` and
/// `axpy_f64`, launched as `kernels.axpy::<f32>(..)`.
///
/// # Safety
/// `x` and `y` point to at least `n` elements of device memory.
#[kernel(instances(f32, f64))]
pub unsafe fn axpy<T: Copy + core::ops::Mul<Output = T> + core::ops::Add<Output = T>>(n: u32, a: T, x: *const T, y: *mut T) {
    let i = global_index();
    if i < n as usize {
        *y.add(i) = a * *x.add(i) + *y.add(i);
    }
}

/// One kernel per type, stamped out by a macro; each gets a typed method all the same.
macro_rules! negate {
    ($name:ident, $t:ty) => {
        /// `y[i] = -x[i]` for `i < n`.
        ///
        /// # Safety
        /// `x` and `y` point to at least `n` elements of device memory.
        #[kernel]
        pub unsafe fn $name(n: u32, x: *const $t, y: *mut $t) {
            let i = global_index();
            if i < n as usize {
                *y.add(i) = -*x.add(i);
            }
        }
    };
}
negate!(negate_f32, f32);
negate!(negate_i32, i32);
