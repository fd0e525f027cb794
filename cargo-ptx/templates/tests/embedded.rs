//! No GPU needed: the kernels were built for every arch of build.rs and embedded in the binary.

use ptx_runtime::{Image, ImageKind};

use {{crate}}::kernels;

/// Every image of every PTX module of the generated `kernels`.
fn images() -> Vec<&'static Image> {
    kernels::MODULES.iter().flat_map(|m| m.images).collect()
}

#[test]
fn every_kernel_is_embedded_for_every_arch() {
    // Whatever kernels the project has now: adding one needs no edit here.
    assert!(!kernels::KERNEL_NAMES.is_empty(), "no kernel was embedded");
    let images = images();
    for arch in env!("KERNEL_ARCHS").split(',') {
        let has = |kind| images.iter().any(|i| i.kind == kind && i.arch == arch);
        assert!(has(ImageKind::Ptx), "no PTX for {arch} among {images:?}");
        // A cubin is there when ptxas was found at build time (`cargo ptx setup` installs it).
        if images.iter().any(|i| i.kind == ImageKind::Cubin) {
            assert!(has(ImageKind::Cubin), "no cubin for {arch}");
        }
        // Each kernel is an `.entry` of one of this arch's PTX images.
        for name in kernels::KERNEL_NAMES {
            let entry = format!(".entry {name}(");
            let found = images
                .iter()
                .filter(|i| i.kind == ImageKind::Ptx && i.arch == arch)
                .any(|i| String::from_utf8_lossy(i.bytes).contains(&entry));
            assert!(found, "`{name}` is not in the {arch} PTX");
        }
    }
}
