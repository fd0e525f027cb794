//! Procedural macros of `ptx-device`: [`macro@kernel`] and [`shared_array!`].
//!
//! Use them through `ptx_device` (`#[ptx_device::kernel]`, `ptx_device::shared_array!`), which
//! re-exports them: the code they write calls back into `::ptx_device`, where small
//! `macro_rules!` hold the nightly-only parts (`extern "ptx-kernel"`, `global_asm!`) so that a
//! kernel crate needs no `#![feature(..)]` of its own.
//!
//! The checks run here, on the host, before rustc type-checks anything: a kernel parameter that
//! cannot cross from the host (a reference, a slice, a tuple, a generic type..) is refused at
//! its own span with the fix, instead of surfacing as a garbled launch or a PTX mismatch.

use proc_macro2::{Span, TokenStream};

mod device_repr;
mod kernel;
mod kernel_attrs;
mod shared;

/// Turns `pub unsafe fn name(..)` into a kernel: an exported (`#[no_mangle]`)
/// `extern "ptx-kernel"` function the host launches by name.
///
/// Rules, each refused with a message at the offending token:
/// - `pub`: a kernel is the crate's interface to the host;
/// - `unsafe`: the host passes raw device pointers the kernel trusts, and launching is unsafe;
/// - no `async`, `const`, explicit ABI, variadics, or return value (kernels return nothing:
///   write results through a pointer);
/// - type parameters only with their instances (below); no lifetime or const parameters;
/// - parameters are primitives (`u32`, `f32`, `bool`, `usize`, ..), raw pointers
///   (`*const T`, `*mut T`, device memory) or `#[repr(C)]` structs by value. References,
///   slices, arrays, tuples, `str`, `char`, function pointers, `impl Trait`, `dyn Trait`, generic
///   types and `self` cannot cross from the host.
///
/// A generic kernel lists the types the host launches it with, and each instance is exported
/// as a kernel of its own, named `{name}_{type}` (each type's characters other than letters,
/// digits and `_` made one `_`: `f32`, `crate_Pair`):
///
/// ```ignore
/// #[kernel(instances(f32, f64))] // exports `add_f32` and `add_f64`
/// pub unsafe fn add<T: Copy + core::ops::Add<Output = T>>(n: u32, x: *const T, y: *mut T) { .. }
///
/// #[kernel(instances((f32, u32), (f64, u64)))] // `cast_f32_u32`, `cast_f64_u64`
/// pub unsafe fn cast<A, B>(n: u32, x: *const A, y: *mut B) { .. }
/// ```
///
/// The generic function stays an ordinary function of the crate; the generated module of
/// `ptx-build` gives it one launch method generic over the same parameters
/// (`kernels.add::<f32>(..)`), which compiles only for the listed types.
///
/// CUDA's `__launch_bounds__(MAX_THREADS, MIN_BLOCKS_PER_SM)`, `__maxnreg__(N)` and
/// `__cluster_dims__(X, Y, Z)` are `launch_bounds(..)`, `max_registers(..)` and
/// `cluster_dims(..)`, with integer literals; the PTX gets `.maxntid`, `.minnctapersm`, `.maxnreg`
/// and `.reqnctapercluster` as nvcc writes them, so ptxas caps the registers to fit the blocks,
/// and the generated launch method refuses a block of more threads, naming the bound (a kernel
/// with cluster dimensions launches like any other; its grid must be a multiple of the cluster):
///
/// ```ignore
/// #[kernel(launch_bounds(256, 2))] // at most 256 threads a block; 2 blocks an SM: <= 128 registers
/// pub unsafe fn sgemm(n: u32, a: *const f32, b: *const f32, c: *mut f32) { .. }
/// ```
///
/// Kernels must be linked by cargo-ptx, whose link stage applies them.
#[proc_macro_attribute]
pub fn kernel(attr: proc_macro::TokenStream, item: proc_macro::TokenStream) -> proc_macro::TokenStream {
    kernel::expand(attr.into(), item.into()).into()
}

/// CUDA's spelling, `#[launch_bounds(256, 2)]`: an error that names the form `#[kernel]` takes,
/// `#[kernel(launch_bounds(256, 2))]` (a bound belongs to a kernel, and only `#[kernel]` can put
/// it there).
#[proc_macro_attribute]
pub fn launch_bounds(attr: proc_macro::TokenStream, _item: proc_macro::TokenStream) -> proc_macro::TokenStream {
    kernel_attrs::standalone(attr.into()).into()
}

/// A fixed-size array in the block's shared memory (`.shared`): `shared_array![f32; 256]` is
/// CUDA's `__shared__ float a[256]`, one array per block, shared by its threads.
///
/// Evaluates to a `*mut [T; N]`, valid for the whole kernel: a generic pointer, but `cargo ptx`
/// places the array in the shared state space (LLVM `addrspace(3)`), so accesses through it
/// compile to `ld.shared`/`st.shared` as CUDA's do (see `ptx_device::shared`). Each use site is
/// its own array: calling a function that uses it from two places of one kernel still names one
/// array, as in CUDA. The contents start undefined. `T` must be a type of known size, `N` a
/// constant expression; neither may name a generic parameter of the enclosing function (the
/// array is a `static`). An array over the 48 KiB of static shared memory a block may have is a
/// build error at this line; larger buffers are `dynamic_shared`.
#[proc_macro]
pub fn shared_array(input: proc_macro::TokenStream) -> proc_macro::TokenStream {
    shared::expand(input.into()).into()
}
/// `#[derive(DeviceRepr)]`: a `#[repr(C)]` struct that a kernel takes by value and the host
/// passes, defined once in a crate both depend on. On the host it implements cudarc's
/// `DeviceRepr` (what a kernel argument must implement); compiled for nvptx64 it adds nothing, so
/// the shared crate needs `ptx-runtime` only for the host:
///
/// ```toml
/// [dependencies]
/// ptx-device-macros = "0.1"
/// [target.'cfg(not(target_arch = "nvptx64"))'.dependencies]
/// ptx-runtime = "0.1"
/// ```
///
/// ```ignore
/// #[derive(Clone, Copy, ptx_device_macros::DeviceRepr)]
/// #[repr(C)]
/// pub struct Affine { pub scale: f32, pub shift: f32 }
/// ```
///
/// Refused at the type, with the fix: a struct without `#[repr(C)]` (Rust's own layout may
/// differ between the two compilations), an enum or union, generic parameters, and fields
/// that are not `Copy` (the bytes are copied to the GPU; nothing is dropped or cloned there).
/// The generated module of `ptx-build` also checks size and alignment against the PTX.
#[proc_macro_derive(DeviceRepr)]
pub fn derive_device_repr(input: proc_macro::TokenStream) -> proc_macro::TokenStream {
    device_repr::expand(input.into()).into()
}

/// A `compile_error!` at `span`.
fn error(span: Span, message: impl std::fmt::Display) -> TokenStream {
    syn::Error::new(span, message).to_compile_error()
}
