fn main() -> Result<(), ptx_build::Error> {
    // The host crate's own .cu files; CARGO_PTX_ARCH overrides the archs. Every kernel gets a
    // typed method: a kernel that could not would be a warning of this build.
    ptx_build::Builder::new().cuda("cuda/*.cu").arch("sm_80").arch("sm_90").build()?;
    Ok(())
}
