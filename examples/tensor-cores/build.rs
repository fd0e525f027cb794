fn main() -> Result<(), ptx_build::Error> {
    // Rust (src/) and CUDA C++ (cuda/) kernels of one crate, for sm_80 and sm_90a (its metadata).
    ptx_build::Builder::new().kernel_crate("kernels").build()?;
    Ok(())
}
