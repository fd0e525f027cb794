//! Embedded images linked from an object of their own (`embed::linked`) rather than included:
//! the host crate's `.rlib` stays small, a crate that depends on it links the images, and two
//! host crates that embed the same images link into one binary.

use crate::build_script::{build_script_ran, repo, write};
use std::path::{Path, PathBuf};
use std::process::Command;

const KERNEL: &str = "extern \"C\" __global__ void scale(float a, float *x) { x[0] *= a; }\n";

/// Host library `name/` of the workspace `root`: its .cu file built for sm_80, the images
/// returned by two functions.
fn host(root: &Path, name: &str) {
    let dir = root.join(name);
    std::fs::create_dir_all(dir.join("cuda")).unwrap();
    std::fs::create_dir_all(dir.join("src")).unwrap();
    write(
        dir.join("Cargo.toml"),
        &format!(
            "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[dependencies]\nptx-runtime = {{ path = {:?} }}\n[build-dependencies]\nptx-build = {{ path = {:?} }}\n",
            repo().join("ptx-runtime"),
            repo().join("ptx-build")
        ),
    );
    write(dir.join("build.rs"), "fn main() -> Result<(), ptx_build::Error> {\n    ptx_build::Builder::new().cuda(\"cuda/*.cu\").arch(\"sm_80\").build()?;\n    Ok(())\n}\n");
    write(dir.join("cuda/k.cu"), KERNEL);
    write(
        dir.join("src/lib.rs"),
        "pub mod kernels {\n    ptx_runtime::include_kernels!();\n}\npub fn ptx() -> &'static str {\n    kernels::k::PTX_SM_80\n}\npub fn images() -> usize {\n    kernels::k::IMAGES.iter().map(|i| i.bytes.len()).sum()\n}\n",
    );
}

fn cargo(root: &Path, target: &Path, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO"))
        .args(args)
        .current_dir(root)
        .env("CARGO_TARGET_DIR", target)
        .env_remove("CARGO_PTX_ARCH")
        .env_remove("CARGO_PTX_VERBOSE")
        .output()
        .unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// The file `rel` under the OUT_DIR of `package`'s build script in `target`.
fn out_file(target: &Path, package: &str, rel: &str) -> PathBuf {
    let build = target.join("debug/build");
    std::fs::read_dir(&build)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&format!("{package}-")))
        .map(|e| e.path().join("out").join(rel))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{rel} of {package} under {}", build.display()))
}

/// A workspace of `members` in a temp folder, and a fresh target dir of its own (`name`).
fn workspace(name: &str, members: &[&str]) -> (tempfile::TempDir, PathBuf) {
    crate::common::cuda();
    let root = tempfile::Builder::new().prefix(&format!("cargo-ptx {name} ")).tempdir().unwrap();
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}-target"));
    let _ = std::fs::remove_dir_all(&target);
    let members: Vec<String> = members.iter().map(|m| format!("{m:?}")).collect();
    write(root.path().join("Cargo.toml"), &format!("[workspace]\nmembers = [{}]\nresolver = \"2\"\n", members.join(", ")));
    (root, target)
}

fn images_are_linked_from_objects_that_two_hosts_of_one_kernel_share_in_one_binary() {
    let (root, target) = workspace("linked", &["gpu_a", "gpu_b", "app"]);
    // Two hosts with the same .cu file at the same place: the same PTX, the same symbols.
    host(root.path(), "gpu_a");
    host(root.path(), "gpu_b");
    let app = root.path().join("app");
    std::fs::create_dir_all(app.join("src")).unwrap();
    write(app.join("Cargo.toml"), "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[dependencies]\ngpu_a = { path = \"../gpu_a\" }\ngpu_b = { path = \"../gpu_b\" }\n");
    write(app.join("src/main.rs"), "fn main() {\n    print!(\"{}\", gpu_a::ptx());\n    println!(\"---\");\n    print!(\"{}\", gpu_b::ptx());\n    println!(\"---\");\n    println!(\"{} {}\", gpu_a::images(), gpu_b::images());\n}\n");

    let (ok, stdout, log) = cargo(root.path(), &target, &["run", "-q", "-p", "app"]);
    assert!(ok, "{log}");
    // What the binary prints is the PTX the build made, byte for byte, from either host.
    let ptx = std::fs::read_to_string(out_file(&target, "gpu_a", "ptx-build/kernels.rs/k/sm_80.ptx")).unwrap();
    let cubin = std::fs::read(out_file(&target, "gpu_a", "ptx-build/kernels.rs/k/sm_80.cubin")).unwrap();
    assert!(ptx.contains(".entry scale("), "{ptx}");
    let sizes = format!("{} {}", ptx.len() + cubin.len(), ptx.len() + cubin.len());
    assert_eq!(stdout, format!("{ptx}---\n{ptx}---\n{sizes}\n"));

    // GNU ld takes the object too (lld forgives a COMDAT member that does not say so; ld does not).
    let (ok, _, log) = cargo(root.path(), &target, &["rustc", "-q", "-p", "app", "--", "-Clink-arg=-fuse-ld=bfd"]);
    assert!(ok, "{log}");
    let linked = Command::new(target.join("debug/app")).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&linked.stdout), stdout, "linked by GNU ld");

    // The images are in the object, not in the host's .rlib (nor its metadata).
    let generated = std::fs::read_to_string(out_file(&target, "gpu_a", "kernels.rs")).unwrap();
    assert!(generated.contains("unsafe extern \"C\"") && !generated.contains("include_str!"), "{generated}");
    let deps = target.join("debug/deps");
    let rlib = std::fs::read_dir(&deps)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with("libgpu_a-") && p.extension().is_some_and(|e| e == "rlib"))
        .unwrap();
    let bytes = std::fs::read(&rlib).unwrap();
    assert!(!bytes.windows(14).any(|w| w == b".entry scale("), "{} holds the PTX", rlib.display());

    // A no-op build reruns nothing; an edit of the kernel renames its symbols and relinks.
    let (ok, _, log) = cargo(root.path(), &target, &["build", "-v", "-p", "app"]);
    assert!(ok && !build_script_ran(&log), "{log}");
    crate::build_script::write_at(
        root.path().join("gpu_b/cuda/k.cu"),
        &KERNEL.replace("*= a", "+= a"),
        std::time::SystemTime::now() + std::time::Duration::from_secs(3600),
    );
    let (ok, stdout, log) = cargo(root.path(), &target, &["run", "-q", "-p", "app"]);
    assert!(ok, "{log}");
    let parts: Vec<&str> = stdout.split("---\n").collect();
    assert!(parts[0].contains("mul.f32") && !parts[0].contains("add.f32"), "{stdout}");
    assert!(parts[1].contains("add.f32") && !parts[1].contains("mul.f32"), "{stdout}");

    // Another arch: the folder holds its images and one object, not the old arch's files.
    let build_rs = std::fs::read_to_string(root.path().join("gpu_a/build.rs")).unwrap().replace("sm_80", "sm_90");
    let lib_rs = std::fs::read_to_string(root.path().join("gpu_a/src/lib.rs")).unwrap().replace("SM_80", "SM_90");
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(3600);
    crate::build_script::write_at(root.path().join("gpu_a/build.rs"), &build_rs, later);
    crate::build_script::write_at(root.path().join("gpu_a/src/lib.rs"), &lib_rs, later);
    let (ok, _, log) = cargo(root.path(), &target, &["build", "-q", "-p", "app"]);
    assert!(ok, "{log}");
    let folder = out_file(&target, "gpu_a", "ptx-build/kernels.rs/k/sm_90.ptx").parent().unwrap().to_path_buf();
    let mut files: Vec<String> =
        std::fs::read_dir(&folder).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    files.sort();
    assert_eq!(files.len(), 3, "{files:?}");
    assert!(files[0].starts_with("ptx-images-") && files[1..] == ["sm_90.cubin", "sm_90.ptx"], "{files:?}");
}

/// Two .cu files without a kernel (host code only, or kernels under another arch's `#if`, as
/// four of ggml-cuda's files for sm_80) make equal images, one object name: linked once, or
/// rustc refuses the crate (`overriding linking modifiers from command line is not supported`).
fn files_without_kernels_link_their_one_object_once() {
    let (root, target) = workspace("linked-empty", &["gpu_e"]);
    host(root.path(), "gpu_e");
    let dir = root.path().join("gpu_e");
    write(dir.join("cuda/host_only.cu"), "int answer() { return 42; }\n");
    write(
        dir.join("cuda/later_arch.cu"),
        "#if __CUDA_ARCH__ >= 900 || !defined(__CUDA_ARCH__)\nextern \"C\" __global__ void k90(float *x) { x[0] = 1.0f; }\n#endif\n",
    );
    let (ok, _, log) = cargo(root.path(), &target, &["build", "-v", "-p", "gpu_e"]);
    assert!(ok, "{log}");
    let empty = out_file(&target, "gpu_e", "ptx-build/kernels.rs/host_only/sm_80.ptx");
    assert_eq!(std::fs::read(&empty).unwrap(), std::fs::read(empty.with_file_name("../later_arch/sm_80.ptx")).unwrap(), "equal images");
    let links = log
        .lines()
        .filter(|l| l.contains("Running") && l.contains("--crate-name gpu_e") && l.contains("--crate-type lib"))
        .collect::<Vec<_>>();
    let args = links.first().unwrap_or_else(|| panic!("rustc of gpu_e: {log}"));
    let objects: Vec<&str> = args.split(' ').filter(|a| a.contains("verbatim=ptx-images-")).collect();
    let mut unique = objects.clone();
    unique.sort();
    unique.dedup();
    assert!(objects.len() == 2 && unique.len() == 2, "k's object and the equal modules' one, each once: {objects:?}");
}

/// A host crate that is also a `staticlib`, linked into a C program by `cc` alone: rustc leaves
/// an unbundled object out of the archive (only `native-static-libs` names it, without its
/// folder), so such a host keeps its images in its own code.
fn a_host_built_as_a_static_library_links_into_a_c_program_by_itself() {
    let (root, target) = workspace("linked-staticlib", &["gpu_c"]);
    host(root.path(), "gpu_c");
    let dir = root.path().join("gpu_c");
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    write(dir.join("Cargo.toml"), &format!("{manifest}[lib]\ncrate-type = [\"staticlib\", \"rlib\"]\n"));
    let lib = std::fs::read_to_string(dir.join("src/lib.rs")).unwrap();
    write(dir.join("src/lib.rs"), &format!("{lib}#[no_mangle]\npub extern \"C\" fn gpu_images() -> usize {{\n    images()\n}}\n"));
    write(
        root.path().join("main.c"),
        "#include <stddef.h>\n#include <stdio.h>\nsize_t gpu_images(void);\nint main(void) { printf(\"%zu\", gpu_images()); return 0; }\n",
    );
    let (ok, _, log) = cargo(root.path(), &target, &["build", "-q", "-p", "gpu_c"]);
    assert!(ok, "{log}");
    let exe = root.path().join("main");
    let out = Command::new("cc")
        .arg(root.path().join("main.c"))
        .arg(target.join("debug/libgpu_c.a"))
        .args(["-lpthread", "-ldl", "-lm", "-lrt", "-lutil", "-lgcc_s", "-o"])
        .arg(&exe)
        .output()
        .unwrap();
    assert!(out.status.success(), "cc:\n{}", String::from_utf8_lossy(&out.stderr));
    let ptx = std::fs::read(out_file(&target, "gpu_c", "ptx-build/kernels.rs/k/sm_80.ptx")).unwrap();
    let cubin = std::fs::read(out_file(&target, "gpu_c", "ptx-build/kernels.rs/k/sm_80.cubin")).unwrap();
    let run = Command::new(&exe).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&run.stdout), (ptx.len() + cubin.len()).to_string());
}

pub fn tests() -> Vec<crate::harness::Test> {
    crate::tests![
        images_are_linked_from_objects_that_two_hosts_of_one_kernel_share_in_one_binary,
        files_without_kernels_link_their_one_object_once,
        a_host_built_as_a_static_library_links_into_a_c_program_by_itself
    ]
}
