fn main() -> Result<(), ptx_build::Error> {
    // Rust (src/) and CUDA C++ (cuda/) kernels of one crate: one generated module.
    ptx_build::Builder::new().kernel_crate("kernels").build()?;
    Ok(())
}
