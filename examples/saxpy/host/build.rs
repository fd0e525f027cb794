fn main() -> Result<(), ptx_build::Error> {
    // The kernel crate's [package.metadata.ptx] names the archs (sm_80, sm_90);
    // CARGO_PTX_ARCH or `.arch(..)` here would override them.
    ptx_build::Builder::new().kernel_crate("..").build()?;
    Ok(())
}
