//! Tensor cores in CI (no GPU): examples/tensor-cores/kernels, a Rust and CUDA C++ crate built for
//! `sm_80,sm_90a`, has each arch's instructions where they belong and ptxas accepts them; an
//! sm_80-only build of a kernel that uses `wgmma` fails with an error naming the kernel, the
//! instruction and the arch.

use std::path::Path;

use crate::common::{cuda, KernelCrate};

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

/// The text of `.entry name` up to the next function in a PTX text (inline asm braces of nvcc's
/// PTX put `}` lines inside bodies).
fn entry<'a>(ptx: &'a str, name: &str) -> &'a str {
    let start = ptx.find(&format!(".entry {name}(")).unwrap_or_else(|| panic!("no kernel {name}"));
    let rest = &ptx[start + 1..];
    let end = [".entry ", "\n.func", "// .globl"].iter().filter_map(|m| rest.find(m)).min().map_or(ptx.len(), |e| start + 1 + e);
    &ptx[start..end]
}

fn one_crate_builds_mma_sync_for_sm_80_and_wgmma_with_tma_for_sm_90a() {
    cuda();
    let k = KernelCrate::example("tensor-cores/kernels");
    let run = k.build(&["--release", "-v"]);
    run.assert_ok();
    let warnings: Vec<_> = run.of("ptx-diagnostic").into_iter().filter(|d| d["level"] != "error").collect();
    assert!(warnings.is_empty(), "{warnings:#?}");
    let read = |arch: &str, module: &str, ext: &str| std::fs::read(k.module_artifact("release", arch, module, ext)).unwrap();
    for arch in ["sm_80", "sm_90a"] {
        for module in ["tensor_cores_kernels", "gemm"] {
            assert_eq!(&read(arch, module, "cubin")[..4], b"\x7fELF", "ptxas accepted {module} for {arch}");
        }
    }
    let text = |arch: &str, module: &str| String::from_utf8(read(arch, module, "ptx")).unwrap();
    for module in ["tensor_cores_kernels", "gemm"] {
        let (sm80, sm90a) = (text("sm_80", module), text("sm_90a", module));
        let hgemm = if module == "gemm" { "cu_mma_hgemm" } else { "rs_mma_hgemm" };
        let wgmma = if module == "gemm" { "cu_wgmma_hgemm" } else { "rs_wgmma_hgemm" };
        for ptx in [&sm80, &sm90a] {
            let body = entry(ptx, hgemm);
            assert_eq!(
                body.matches("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32").count(),
                64,
                "{module}: 4 x 8 x 2 unrolled mma.sync"
            );
            assert_eq!(body.matches("ldmatrix.sync.aligned.m8n8.x4.shared.b16").count(), 16, "{module}: 8 ldmatrix.x4 per k-step");
            assert!(body.contains("cp.async.cg.shared.global") && body.contains("cp.async.wait_group 2"), "{module}");
        }
        // The wgmma kernel is a trap on sm_80 and the whole pipeline on sm_90a.
        // LLVM writes `op \targs`, nvcc `op args`.
        let (w80, w90) = (entry(&sm80, wgmma), entry(&sm90a, wgmma).replace(" \t", " ").replace('\t', " "));
        assert!(!w80.contains("wgmma.") && !w80.contains("cp.async.bulk") && w80.contains("trap"), "{module} sm_80:\n{w80}");
        for needle in [
            "wgmma.fence.sync.aligned",
            "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16",
            "wgmma.commit_group.sync.aligned",
            "wgmma.wait_group.sync.aligned 0",
            "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
            "mbarrier.init.shared.b64",
            "mbarrier.arrive.expect_tx.shared.b64",
            "mbarrier.try_wait.parity.shared.b64",
            "setmaxnreg.inc.sync.aligned.u32 232",
            "setmaxnreg.dec.sync.aligned.u32 40",
            ".maxntid 384",
            ".minnctapersm 1",
        ] {
            assert!(w90.contains(needle), "{module} sm_90a: no `{needle}`");
        }
        assert_eq!(w90.matches("wgmma.mma_async").count(), 4, "{module}: K = 64 is 4 wgmma of K = 16");
        assert!(sm90a.starts_with("//") || sm90a.contains(".target sm_90a"), "{module}");
    }
    // The Rust checks: cluster barriers are convergent intrinsics, so LLVM keeps them where they
    // were written (as `asm!` it duplicated one into both arms of a branch, which deadlocked).
    let rs = text("sm_90a", "tensor_cores_kernels");
    let cluster = entry(&rs, "cluster_exchange");
    assert!(cluster.contains(".reqnctapercluster 2, 1, 1") && cluster.contains("mapa.u64") && cluster.contains("ld.shared::cluster.u32"));
    assert_eq!(cluster.matches("barrier.cluster.arrive").count(), 2, "{cluster}");
    for needle in [
        "stmatrix.sync.aligned.m8n8.x4.trans.shared.b16",
        "ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16",
        "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group",
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32",
        "mma.sync.aligned.m16n8k32.row.col.s32.u8.u8.s32",
        "elect.sync",
    ] {
        assert!(rs.contains(needle), "sm_90a: no `{needle}`");
    }
    // Each image answers the arch queries for itself.
    assert!(
        entry(&text("sm_80", "tensor_cores_kernels"), "arch_answers").contains("st.global.b32 \t[%rd2], 800;")
            || entry(&text("sm_80", "tensor_cores_kernels"), "arch_answers").contains("800")
    );
    assert!(entry(&rs, "arch_answers").contains("900"));
    // The resource table of `-v` lists every kernel for both archs.
    let stdout = &run.stdout;
    assert!(stdout.contains("rs_wgmma_hgemm") && stdout.contains("cu_wgmma_hgemm"), "{stdout}");
}

fn device_crate(k: &KernelCrate) {
    let device = root().join("ptx-device");
    let manifest = std::fs::read_to_string(k.dir.join("Cargo.toml")).unwrap();
    k.write(
        "Cargo.toml",
        &manifest.replace(
            "[package.metadata.ptx]",
            &format!("[dependencies]\nptx-device = {{ path = {:?} }}\n\n[package.metadata.ptx]", device.display().to_string()),
        ),
    );
}

const WGMMA_KERNEL: &str = "#![no_std]\nuse ptx_device::prelude::*;\nuse ptx_device::wgmma;\n\n#[kernel]\npub unsafe fn wg(out: *mut f32) {\n    let mut acc = wgmma::Accumulator::<wgmma::M64N8K16>::zero();\n    wgmma::fence();\n    wgmma::commit_group();\n    wgmma::wait_group::<0, _>(&mut acc);\n    *out.add(thread_idx().x as usize) = acc.x[0];\n}\n";

fn wgmma_in_an_sm_80_build_names_the_kernel_the_instruction_and_the_arch() {
    cuda();
    let k = KernelCrate::new("wgmma_on_ampere", "archs = [\"sm_80\"]", WGMMA_KERNEL);
    device_crate(&k);
    let run = k.build(&["--release"]);
    run.assert_error(&["kernel `wg` uses `wgmma.fence.sync.aligned`, which sm_80 does not have (it needs sm_90a)"]);
    let errors = run.errors();
    assert_eq!(errors.len(), 2, "one error for the instruction, one summary: {}", run.error_text());
    assert!(!run.error_text().contains("requires PTX ISA"), "{}", run.error_text());
    let json = serde_json::to_string(&errors[0]).unwrap();
    assert!(json.contains("src/lib.rs") && json.contains("ptx_device::arch::has_wgmma()"), "{json}");

    // Built for sm_90a too and kept to it, the same kernel builds.
    let guarded =
        WGMMA_KERNEL.replace("    let mut acc", "    if !ptx_device::arch::has_wgmma() {\n        trap();\n    }\n    let mut acc");
    k.write("src/lib.rs", &guarded);
    k.write(
        "Cargo.toml",
        &std::fs::read_to_string(k.dir.join("Cargo.toml")).unwrap().replace("archs = [\"sm_80\"]", "archs = [\"sm_80\", \"sm_90a\"]"),
    );
    // The query is answered per arch in both profiles (the debug pipeline runs NVVMReflect too,
    // and it drops the branch it decides).
    for profile in ["release", "debug"] {
        k.build(&["--profile", profile]).assert_ok();
        assert!(!std::fs::read_to_string(k.artifact(profile, "sm_80", "ptx")).unwrap().contains("wgmma."), "{profile}");
        assert!(std::fs::read_to_string(k.artifact(profile, "sm_90a", "ptx")).unwrap().contains("wgmma.fence.sync.aligned"), "{profile}");
    }
}

fn fragments_of_the_wrong_shape_or_type_do_not_compile() {
    cuda();
    let k = KernelCrate::new(
        "wrong_fragments",
        "archs = [\"sm_90a\"]",
        "#![no_std]\nuse ptx_device::half::f16;\nuse ptx_device::mma::*;\nuse ptx_device::wgmma::{self, Accumulator, MatrixDescriptor, M64N128K16, M64N256K16};\n\n#[ptx_device::kernel]\npub unsafe fn k(out: *mut f32) {\n    let a = FragA::<f16, M16N8K8>::new([0; 4]);\n    let b = FragB::<f16, M16N8K8>::new([0; 2]);\n    let mut c = FragC::<f32, M16N8K8>::splat(0.0);\n    mma_sync(&a, &b, &mut c);\n    let b16 = FragB::<f16, M16N8K16>::new([0; 2]);\n    let mut c16 = FragC::<f32, M16N8K16>::splat(0.0);\n    mma_sync(&FragA::<f16, M16N8K16>::new([0; 4]), &b16, &mut c);\n    let mut acc = Accumulator::<M64N128K16>::zero();\n    wgmma::mma_async::<f16, M64N256K16>(&mut acc, MatrixDescriptor(0), MatrixDescriptor(0), true);\n    *out = c.x[0] + c16.x[0] + acc.x[0];\n}\n",
    );
    device_crate(&k);
    let run = k.build(&["--release"]);
    run.assert_error(&["`mma.sync` has no shape `ptx_device::mma::M16N8K8` for `ptx_device::half::f16` operands", "mismatched types"]);
    let text = run.error_text();
    assert!(
        text.matches("mismatched types").count() >= 2,
        "the M16N8K16 A with an M16N8K8 C, the N = 128 accumulator for N = 256:\n{text}"
    );
}

pub fn tests() -> Vec<crate::harness::Test> {
    crate::tests![
        one_crate_builds_mma_sync_for_sm_80_and_wgmma_with_tma_for_sm_90a,
        wgmma_in_an_sm_80_build_names_the_kernel_the_instruction_and_the_arch,
        fragments_of_the_wrong_shape_or_type_do_not_compile,
    ]
}
