//! The kernels: a Rust kernel crate (kernels/) and the library's own CUDA C++ (cuda/*.cu). In a
//! dependent's build, the Builder embeds the prebuilt set shipped in prebuilt/ instead of
//! building them, with no nightly and no CUDA (`prebuilt = "auto"` in Cargo.toml).
fn main() -> Result<(), ptx_build::Error> {
    // The archs: `archs` in this package's metadata (for cuda/) and in the kernel crate's.
    ptx_build::Builder::new().kernel_crate("kernels").cuda("cuda/*.cu").build()?;
    Ok(())
}
