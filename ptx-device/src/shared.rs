//! Shared memory: the fast per-block scratch of CUDA's `__shared__`.
//!
//! Rust has no address-space qualifier for statics, so a shared array is a Rust `static` that
//! the device crate marks (the section `.ptx.shared:FILE:LINE:COL`) and `cargo ptx`'s link
//! stage moves into the shared state space (LLVM `addrspace(3)`) before optimising, every use
//! going through an `addrspacecast` to a generic pointer. LLVM's InferAddressSpaces then sees
//! where each pointer comes from, so loads, stores and atomics through a
//! [`shared_array!`](crate::shared_array) or [`dynamic_shared`] pointer compile to
//! `ld.shared`/`st.shared`/`atom.shared` (ptxas: `LDS`/`STS`/`ATOMS`) instead of generic
//! 64-bit accesses, exactly as CUDA's `__shared__` does.
//!
//! The pointers handed out are ordinary generic `*mut T`: passing one to a function that takes
//! `*mut T` is correct wherever it goes (where LLVM cannot follow it, the access is generic and
//! the hardware resolves it to shared memory). [`SharedPtr`] is the typed form for code that
//! wants the state space in the signature: it converts to and from the generic pointer, and its
//! [`addr`](SharedPtr::addr) is the 32-bit shared-window address that inline PTX with a
//! `.shared` state space takes.
//!
//! Without `cargo ptx` (a hand-run `llc`), the marked statics would stay in global memory:
//! one copy for the whole grid, not one per block. Build kernels with `cargo ptx`.

use core::marker::PhantomData;

unsafe extern "C" {
    /// The launch's dynamic shared memory (`shared_mem_bytes`). The link stage declares it as
    /// `.extern .shared .align 16 .b8 __ptx_device_dynamic_shared[]`.
    static mut __ptx_device_dynamic_shared: [u8; 0];

    /// Defined by the link stage (an `addrspacecast` to `addrspace(3)` and a `ptrtoint`), then
    /// inlined: the shared-window address of a generic pointer into shared memory, with no
    /// `cvta` in the PTX when the pointer's origin is a shared array.
    fn __ptx_device_shared_addr(p: *const u8) -> u64;

    /// The same for global memory (`addrspace(1)`): a kernel parameter's pointer is already
    /// known global to LLVM, so no `cvta` is left either.
    fn __ptx_device_global_addr(p: *const u8) -> u64;
}

/// The block's dynamic shared memory, as CUDA's `extern __shared__ T buf[];`: as many bytes as
/// the launch's `shared_mem_bytes`, aligned to 16, shared by the threads of the block.
///
/// Every call returns the same address. Reading past `shared_mem_bytes` is undefined behaviour.
#[inline(always)]
pub fn dynamic_shared<T>() -> *mut T {
    // Taking a raw pointer to a `static mut` is safe: nothing is read or written.
    core::ptr::addr_of_mut!(__ptx_device_dynamic_shared).cast::<T>()
}

/// The shared-window address of `p` (what `cvta.to.shared` computes), for inline PTX that names
/// the `.shared` state space: `ld.shared`, `st.shared`, `atom.shared`, `red.shared`,
/// `cp.async`'s destination. For a pointer into a [`shared_array!`](crate::shared_array) or
/// [`dynamic_shared`] no instruction is emitted: it folds to the array's symbol plus the offset.
///
/// # Safety
/// `p` points into shared memory: for any other pointer the result is meaningless.
#[inline(always)]
pub unsafe fn shared_addr<T>(p: *const T) -> u64 {
    __ptx_device_shared_addr(p.cast())
}

/// The global-window address of `p` (what `cvta.to.global` computes), for inline PTX that names
/// the `.global` state space (`ld.global.nc`, `cp.async`'s source, `atom.global`). For a kernel
/// parameter's pointer it folds into the conversion LLVM already made.
///
/// # Safety
/// `p` points into global memory: for any other pointer the result is meaningless.
#[inline(always)]
pub unsafe fn global_addr<T>(p: *const T) -> u64 {
    __ptx_device_global_addr(p.cast())
}

/// A pointer that is known to point into this block's shared memory.
///
/// Made from a [`shared_array!`](crate::shared_array) or [`dynamic_shared`] pointer with
/// [`SharedPtr::new`]; it dereferences through [`as_ptr`](SharedPtr::as_ptr) (a generic
/// pointer, which compiles to `ld.shared`/`st.shared` where LLVM sees the origin) and hands its
/// [`addr`](SharedPtr::addr) to shared-space instructions ([`crate::atomic`]'s `*_shared`
/// functions, [`crate::vector`]'s shared loads and stores).
#[repr(transparent)]
pub struct SharedPtr<T> {
    ptr: *mut T,
    _not_send: PhantomData<*mut T>,
}

impl<T> Clone for SharedPtr<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for SharedPtr<T> {}

impl<T> SharedPtr<T> {
    /// Wraps a generic pointer into shared memory.
    ///
    /// # Safety
    /// `ptr` points into this block's shared memory.
    #[inline(always)]
    pub unsafe fn new(ptr: *mut T) -> Self {
        SharedPtr { ptr, _not_send: PhantomData }
    }

    /// The generic pointer, for ordinary loads and stores.
    #[inline(always)]
    pub fn as_ptr(self) -> *mut T {
        self.ptr
    }

    /// `self + count` elements (`ptr.add`).
    ///
    /// # Safety
    /// As `<*mut T>::add`: the result stays inside the same shared array.
    #[inline(always)]
    pub unsafe fn add(self, count: usize) -> Self {
        SharedPtr { ptr: self.ptr.add(count), _not_send: PhantomData }
    }

    /// The same address as another element type.
    #[inline(always)]
    pub fn cast<U>(self) -> SharedPtr<U> {
        SharedPtr { ptr: self.ptr.cast(), _not_send: PhantomData }
    }

    /// The shared-window address, for inline PTX that names `.shared` (see [`shared_addr`]).
    #[inline(always)]
    pub fn addr(self) -> u64 {
        // SAFETY: `new`'s contract: the pointer is into shared memory.
        unsafe { shared_addr(self.ptr) }
    }
}

/// What `shared_array!` expands to: a marked, uninitialised `static`, whose section names the
/// `shared_array!` call site (`file!()`/`line!()`/`column!()` of the outermost macro call) so
/// that the link stage's errors point at it.
#[doc(hidden)]
#[macro_export]
macro_rules! __shared_array {
    ($array:ty) => {{
        #[link_section = ::core::concat!(".ptx.shared:", ::core::file!(), ":", ::core::line!(), ":", ::core::column!())]
        static mut __PTX_SHARED: ::core::mem::MaybeUninit<$array> = ::core::mem::MaybeUninit::uninit();
        // A raw pointer to a `static mut` needs no `unsafe`; `MaybeUninit<A>` has `A`'s layout.
        ::core::ptr::addr_of_mut!(__PTX_SHARED).cast::<$array>()
    }};
}
