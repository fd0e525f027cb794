//! No GPU needed: the kernels were built for every arch of build.rs and embedded in the binary.

use ptx_runtime::{Image, ImageKind};

use {{crate}}::kernels;

/// Every image of every PTX module of the generated `kernels`.
fn images() -> Vec<&'static Image> {
    let mut all = Vec::new();
{{#rust}}
    all.extend(kernels::{{kernels_crate}}::IMAGES);
{{/rust}}
{{#cuda}}
    all.extend(kernels::sigmoid::IMAGES);
{{/cuda}}
    all
}

#[test]
fn every_kernel_is_embedded_for_every_arch() {
{{#both}}
    assert_eq!(
        kernels::KERNEL_NAMES,
        ["saxpy", "softplus", "affine", "sigmoid"]
    );
{{/both}}
{{#rust_only}}
    assert_eq!(kernels::KERNEL_NAMES, ["saxpy", "softplus", "affine"]);
{{/rust_only}}
{{#cuda_only}}
    assert_eq!(kernels::KERNEL_NAMES, ["sigmoid"]);
{{/cuda_only}}
    let images = images();
    for arch in env!("KERNEL_ARCHS").split(',') {
        let has = |kind| images.iter().any(|i| i.kind == kind && i.arch == arch);
        assert!(has(ImageKind::Ptx), "no PTX for {arch} among {images:?}");
        // A cubin is there when ptxas was found at build time (`cargo ptx setup` installs it).
        if images.iter().any(|i| i.kind == ImageKind::Cubin) {
            assert!(has(ImageKind::Cubin), "no cubin for {arch}");
        }
    }
}
