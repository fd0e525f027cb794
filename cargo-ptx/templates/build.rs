//! Builds the GPU kernels and generates `kernels.rs` (typed launch methods, every image embedded).

/// The GPU archs to build for: a cubin each, plus PTX for newer GPUs. Change them here.
const ARCHS: &str = "{{archs}}";

fn main() -> Result<(), ptx_build::Error> {
    ptx_build::Builder::new()
{{#rust}}
        .kernel_crate("kernels")
{{/rust}}
{{#cuda}}
        .cuda("cuda/*.cu")
{{/cuda}}
        .arch(ARCHS)
        .build()?;
    // For tests/embedded.rs: the archs this build was asked for.
    println!("cargo:rustc-env=KERNEL_ARCHS={ARCHS}");
    Ok(())
}
