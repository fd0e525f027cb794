fn main() -> Result<(), ptx_build::Error> {
    // One kernel crate with both languages: its archs come from its [package.metadata.ptx].
    ptx_build::Builder::new().kernel_crate("kernels").build()?;
    Ok(())
}
