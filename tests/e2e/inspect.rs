//! `cargo ptx inspect`: a kernel's PTX and SASS with source lines, on a machine without a GPU.

use crate::common::{cargo_ptx, cuda, shared_target, KernelCrate};

fn inspect(k: &KernelCrate, args: &[&str]) -> (bool, String, String) {
    let out = cargo_ptx().arg("inspect").arg(&k.dir).arg("--target-dir").arg(shared_target()).args(args).output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn ptx_and_sass_of_every_saxpy_kernel_with_source_lines_and_resources() {
    cuda();
    let k = KernelCrate::example("saxpy");
    for kernel in ["saxpy", "exp_kernel", "empty"] {
        let (ok, ptx, err) = inspect(&k, &["--kernel", kernel, "--arch", "sm_90"]);
        assert!(ok, "{err}");
        assert!(ptx.contains(&format!(".visible .entry {kernel}(")), "{ptx}");
        assert!(ptx.contains(&format!("// kernel `{kernel}`, sm_90 PTX of module `saxpy_kernels`")), "{ptx}");
        assert!(ptx.contains("// resources: ") && ptx.contains(" registers, 0 B spill stores"), "{ptx}");
        assert!(!ptx.contains(".loc\t") && !ptx.contains(".file\t"), ".loc lines become source lines: {ptx}");
        assert_eq!(ptx.matches(".entry").count(), 1, "one kernel only: {ptx}");

        let (ok, sass, err) = inspect(&k, &["--kernel", kernel, "--arch", "sm_90", "--sass"]);
        assert!(ok, "{err}");
        assert!(sass.contains(&format!("// kernel `{kernel}`, sm_90 SASS")) && sass.contains("EXIT"), "{sass}");
        assert!(sass.contains("/*0000*/"), "{sass}");
        assert!(!sass.contains("//## File"), "line-info comments become source lines: {sass}");
    }
    // The kernel's own lines, with their text, in both listings.
    let (_, ptx, _) = inspect(&k, &["--kernel", "saxpy", "--arch", "sm_90"]);
    assert!(ptx.contains("src/lib.rs:16  *y.add(i) = a * *x.add(i) + *y.add(i);"), "{ptx}");
    let (_, sass, _) = inspect(&k, &["--kernel", "saxpy", "--arch", "sm_90", "--sass"]);
    assert!(sass.contains("src/lib.rs:16  *y.add(i) = a * *x.add(i) + *y.add(i);") && sass.contains("STG.E"), "{sass}");
    // Two archs named: both shown, highest first.
    let (ok, both, err) = inspect(&k, &["--kernel", "saxpy", "--arch", "sm_80,sm_90", "--sass"]);
    assert!(ok, "{err}");
    let (a, b) = (both.find("sm_90 SASS").unwrap(), both.find("sm_80 SASS").unwrap());
    assert!(a < b, "{both}");
}

fn cuda_cpp_kernels_have_their_cu_lines() {
    cuda();
    crate::common::nvcc();
    let k = KernelCrate::new("cu-inspect", "archs = [\"sm_90\"]\nrust = false", "#![no_std]\n");
    k.write("cuda/scale.cu", "extern \"C\" __global__ void scale(int n, float a, float *y) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) y[i] *= a;\n}\n");
    let (ok, ptx, err) = inspect(&k, &["--kernel", "scale"]);
    assert!(ok, "{err}");
    assert!(ptx.contains("scale.cu:3  if (i < n) y[i] *= a;"), "{ptx}");
    let (ok, sass, err) = inspect(&k, &["--kernel", "scale", "--sass"]);
    assert!(ok, "{err}");
    assert!(sass.contains("scale.cu:3  if (i < n) y[i] *= a;"), "{sass}");
}

fn where_a_rust_kernel_can_panic_is_listed_at_its_own_lines() {
    cuda();
    let k = KernelCrate::new(
        "panics-inspect",
        "archs = [\"sm_80\"]",
        "#![no_std]\n#![feature(abi_ptx, stdarch_nvptx)]\n#[no_mangle]\npub unsafe extern \"ptx-kernel\" fn pick(idx: *const u32, y: *mut f32) {\n    let table = [1.0f32, 2.0, 3.0, 4.0];\n    *y = table[*idx as usize];\n    *y += core::num::NonZeroU32::new(*idx).unwrap().get() as f32;\n}\n#[no_mangle]\npub unsafe extern \"ptx-kernel\" fn clean(y: *mut f32) {\n    *y = 1.0;\n}\n#[panic_handler]\nfn panic(_: &core::panic::PanicInfo) -> ! {\n    unsafe { core::arch::nvptx::trap() }\n}\n",
    );
    let (ok, ptx, err) = inspect(&k, &["--kernel", "pick"]);
    assert!(ok, "{err}");
    assert!(ptx.contains("// can panic at 2 places; a panic on the GPU traps, and the launch fails with no message:"), "{ptx}");
    assert!(ptx.contains("//   index out of bounds: ") && ptx.contains("src/lib.rs:6  *y = table[*idx as usize];"), "{ptx}");
    // The unwrap is core's code inlined into the kernel: the kernel's line is named.
    assert!(ptx.contains("//   `unwrap()` on `None` or `Err`: ") && ptx.contains("src/lib.rs:7  *y += core::num::NonZeroU32"), "{ptx}");
    let (ok, ptx, err) = inspect(&k, &["--kernel", "clean"]);
    assert!(ok && !ptx.contains("can panic"), "{err}{ptx}");
}

fn an_unknown_kernel_is_refused_with_the_closest_name_and_the_list() {
    cuda();
    let k = KernelCrate::example("saxpy");
    let (ok, out, err) = inspect(&k, &["--kernel", "saxpi", "--arch", "sm_90"]);
    assert!(!ok && out.is_empty(), "{out}");
    assert!(err.contains("error: no kernel named `saxpi` in `saxpy-kernels`; did you mean `saxpy`?"), "{err}");
    assert!(err.contains("help: the kernels are: axpy_f32, axpy_f64, empty, exp_kernel, negate_f32, negate_i32, saxpy"), "{err}");
    let (_, _, err) = inspect(&k, &["--kernel", "reduce", "--arch", "sm_90"]);
    assert!(err.contains("no kernel named `reduce` in `saxpy-kernels`\n") && !err.contains("did you mean"), "{err}");
}

fn sass_of_a_ptx_only_arch_or_without_nvdisasm_says_what_to_do() {
    cuda();
    let k = KernelCrate::example("saxpy");
    let (ok, _, err) = inspect(&k, &["--kernel", "saxpy", "--arch", "compute_90", "--sass"]);
    assert!(!ok);
    assert!(err.contains("no cubin of kernel `saxpy` to disassemble: the build made PTX only (archs: compute_90)"), "{err}");
    assert!(err.contains("--arch sm_90"), "{err}");

    let out = cargo_ptx()
        .arg("inspect")
        .arg(&k.dir)
        .arg("--target-dir")
        .arg(shared_target())
        .args(["--kernel", "saxpy", "--arch", "sm_90", "--sass"])
        .env("NVDISASM", "/nonexistent/nvdisasm")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("NVDISASM=/nonexistent/nvdisasm is not a file") && err.contains("point NVDISASM at the nvdisasm executable"),
        "{err}"
    );
}

fn ptx_and_sass_conflict_and_kernel_is_required() {
    let out = cargo_ptx().args(["inspect", "--kernel", "k", "--ptx", "--sass"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("'--ptx' cannot be used with '--sass'"));
    let out = cargo_ptx().args(["inspect"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("--kernel <NAME>"));
}

pub fn tests() -> Vec<crate::harness::Test> {
    crate::tests![
        cuda_cpp_kernels_have_their_cu_lines,
        where_a_rust_kernel_can_panic_is_listed_at_its_own_lines,
        an_unknown_kernel_is_refused_with_the_closest_name_and_the_list,
        sass_of_a_ptx_only_arch_or_without_nvdisasm_says_what_to_do,
        ptx_and_sass_conflict_and_kernel_is_required;
        slow:
        ptx_and_sass_of_every_saxpy_kernel_with_source_lines_and_resources,
    ]
}
