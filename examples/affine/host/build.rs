fn main() -> Result<(), ptx_build::Error> {
    ptx_build::Builder::new().kernel_crate("../kernels").build()?;
    Ok(())
}
