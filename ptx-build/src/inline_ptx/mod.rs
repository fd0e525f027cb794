//! The inline-PTX checker: NVIDIA's rules for `asm()` in CUDA C++ and `asm!` in Rust kernels,
//! checked at the source line before any compiler runs.
//!
//! Neither nvcc nor rustc parses the PTX inside an asm template: a wrong operand number, an
//! unscoped `.reg` in a function inlined twice or a missing `volatile` shows up late (as a
//! ptxas error about a PTX line the user never saw) or never (as a wrong answer). The rules
//! follow the "Inline PTX Assembly in CUDA" reference:
//!
//! | rule | CUDA `asm()` | Rust `asm!` | level |
//! |---|---|---|---|
//! | operand reference beyond the operands | `%N` | `{N}`, `{name}` | error |
//! | constraint letter outside `h r l q f d n C`, or two letters | yes | (rustc checks) | error |
//! | operand modifier (`%n1`) | yes | (rustc checks) | error |
//! | special register written `%clock` in an asm with operands | yes | - | warning |
//! | `.reg` or label outside `{ }` in a function that can be inlined | yes | yes | warning |
//! | changing special register (`%clock`, `%smid`..) read without `volatile` / with `pure` | yes | yes | warning |
//! | memory written (`st.`, `atom.`, `red.`) without `"memory"` / with `nomem`, `readonly` | yes | yes | warning |
//! | output written under a predicate declared `=` / `out` instead of `+` / `inout` | yes | yes | warning |
//!
//! The modules follow the seams: `template` holds the rules on PTX template text that both
//! languages share (statements, labels, registers, memory writes); `cuda` finds `asm()`
//! statements in C++ through [`crate::text::c_lex`] (no C++ parser crate handles CUDA's dialect) and
//! checks their constraints and `%N` references; `rust` reads `asm!` with syn and checks its
//! `{N}`/`{name}` references and options; `headers` finds the user's headers that .cu files
//! include (most projects keep their asm there), from nvcc's list of what it read in a build,
//! from the `#include` lines for `cargo ptx check`; `preproc` finds the `#if` branches no CUDA
//! build takes (`#if 0`, HIP's), whose asm is not PTX; `qualifiers` reads the macros that spell
//! `__device__` (DeepSpeed's `DS_D_INLINE`, CUTLASS's `CUTLASS_DEVICE`) in those files.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::diag::{relative, Diagnostic};
use crate::error::Result;
use crate::project::KernelCrate;

mod cuda;
mod headers;
mod preproc;
mod qualifiers;
mod rust;
mod template;

pub use cuda::{check_cuda, check_cuda_file};
pub(crate) use headers::{own_headers, user_headers};
use qualifiers::Qualifiers;
pub use rust::check_rust_file;

/// Which headers a check of a crate's sources reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Headers {
    /// Those the `#include` lines reach (`cargo ptx check`: no compiler runs).
    Included,
    /// None: a build checks those nvcc read, once it has run ([`check_headers`]).
    AfterCompile,
}

/// Checks every asm of a kernel crate: its .cu files and, with [`Headers::Included`], the
/// user's headers they include (not a library's: [`own_headers`]; each once; those in `seen`
/// already, another crate's, are left out and the rest added), and the `asm!` of its Rust
/// kernels (following the module tree from the lib's root file), with the Rust kernel lints
/// (`crate::rust::lints`) over the same parsed files. Returns the number of files read and the
/// diagnostics, paths relative to the package.
pub fn check_crate(k: &KernelCrate, headers: Headers, seen: &mut BTreeSet<PathBuf>) -> Result<(usize, Vec<Diagnostic>)> {
    check_crate_with(k, headers, seen, &crate_headers(k))
}

/// The headers a kernel crate's .cu files include, transitively, from its include folders.
pub(crate) fn crate_headers(k: &KernelCrate) -> Vec<PathBuf> {
    let sources: Vec<PathBuf> = k.cuda_sources.iter().map(|s| s.path.clone()).collect();
    headers::included_headers(&sources, &include_dirs(k), None)
}

/// [`check_crate`] with the headers the .cu files include (`found`: [`crate_headers`]) known.
/// They are read either way for their qualifier macros (`DS_D_INLINE`), and all of them, also
/// those another crate's check has seen.
pub(crate) fn check_crate_with(
    k: &KernelCrate,
    headers: Headers,
    seen: &mut BTreeSet<PathBuf>,
    found: &[PathBuf],
) -> Result<(usize, Vec<Diagnostic>)> {
    let mut files = 0;
    let mut out = Vec::new();
    let sources: Vec<PathBuf> = k.cuda_sources.iter().map(|s| s.path.clone()).collect();
    let quals = Qualifiers::of_files(sources.iter().chain(found));
    for src in &sources {
        out.extend(cuda::check_cuda_file_with(src, &relative(src, &k.dir), &quals)?);
        files += 1;
    }
    if headers == Headers::Included {
        let found: Vec<PathBuf> = found.iter().filter(|h| seen.insert((*h).clone())).cloned().collect();
        let found = own_headers(found, &k.dir);
        files += found.len();
        out.extend(headers::check_headers(&found, &k.dir, &quals));
    }
    if let (true, Some(lib)) = (k.config.rust, &k.lib_src) {
        // The kernel lints read the same parsed files.
        let mut lints = crate::rust::lints::CrateLints::default();
        for (path, file) in crate::rust::modules::module_files(lib)? {
            let shown = relative(&path, &k.dir);
            check_rust_file(&shown, &file, &mut out);
            lints.read(&shown, &file);
            files += 1;
        }
        out.extend(lints.finish());
    }
    let out = out.into_iter().map(|d| d.rooted(&k.dir)).collect();
    Ok((files, out))
}

/// The crate's include folders (`cuda-include`), absolute.
pub fn include_dirs(k: &KernelCrate) -> Vec<PathBuf> {
    k.config.cuda_include.iter().map(|d| crate::diag::joined(&k.dir, d)).collect()
}

/// Checks `headers` (absolute; see `user_headers`) once each, naming them relative to
/// `root` where they lie below it. The qualifier macros any of them defines count in all.
pub fn check_headers(headers: &[PathBuf], root: &Path) -> Vec<Diagnostic> {
    let quals = Qualifiers::of_files(headers);
    headers::check_headers(headers, root, &quals).into_iter().map(|d| d.rooted(root)).collect()
}

/// Checks .cu files that no package holds (a folder given to `cargo ptx check`) and the
/// headers they include, each once: quoted names from the including file's folder, then from
/// `include_dirs` (`check -I`, absolute; bracketed names from these only), else the one header
/// below `dir` (the folder given) with that path, as the build's `-I` would find it. Headers
/// of another repository than `dir`'s are a library's, not checked ([`own_headers`]).
/// Returns the number of files read and the diagnostics, named as `dir` is.
pub fn check_loose(
    dir: &Path,
    files: &[PathBuf],
    include_dirs: &[PathBuf],
    seen: &mut BTreeSet<PathBuf>,
) -> Result<(usize, Vec<Diagnostic>)> {
    let mut out = Vec::new();
    let index = headers::HeaderIndex::of(dir);
    let found = headers::included_headers(files, include_dirs, Some(&index));
    let quals = Qualifiers::of_files(files.iter().chain(&found));
    for f in files {
        out.extend(cuda::check_cuda_file_with(f, f, &quals)?);
    }
    let found: Vec<PathBuf> = found.into_iter().filter(|h| seen.insert(h.clone())).collect();
    let found = own_headers(found, dir);
    out.extend(headers::check_headers(&found, Path::new(""), &quals));
    Ok((files.len() + found.len(), out))
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// The location of the one diagnostic of `d`, which must contain `needle`.
#[cfg(test)]
fn one(d: &[Diagnostic], needle: &str) -> String {
    assert_eq!(d.len(), 1, "expected one diagnostic with `{needle}`, got {d:#?}");
    assert!(d[0].message.contains(needle), "{:#?}", d[0]);
    d[0].location().unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The crate-level entry point reads both languages and names files relative to the package.
    #[test]
    fn check_rust_and_cuda_sources_are_both_reached() {
        let rs = syn::parse_file("fn f(x: u32) { unsafe { asm!(\"mov.u32 {t}, {x};\", x = in(reg32) x); } }").unwrap();
        let mut out =
            check_cuda(Path::new("k.cu"), "__global__ void k(int *p) {\n  asm volatile(\"st.global.u32 [%0], 1;\" :: \"l\"(p));\n}\n");
        check_rust_file(Path::new("src/lib.rs"), &rs, &mut out);
        let at: Vec<String> = out.iter().map(|d| d.location().unwrap()).collect();
        assert_eq!(at, ["k.cu:2:17", "src/lib.rs:1:25"]);
    }

    /// Writes `files` below a new folder; returns it (real path) and its guard.
    fn tree(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for (p, text) in files {
            std::fs::create_dir_all(root.join(p).parent().unwrap()).unwrap();
            std::fs::write(root.join(p), text).unwrap();
        }
        (dir, root)
    }

    /// DeepSpeed's layout: `DS_D_INLINE` is defined in `ds_kernel_utils.h`, used in another
    /// header that includes it and in the .cu file; their asm is checked as device code, and
    /// the host-only and HIP branches stay skipped.
    const DS_KERNEL_UTILS: &str = "#pragma once\n#include <cuda.h>\n#include <cuda_fp16.h>\n\n\
        #define DS_HD_INLINE __host__ __device__ __forceinline__\n#define DS_D_INLINE __device__ __forceinline__\n\n\
        #ifdef __HIP_PLATFORM_AMD__\nconstexpr int hw_warp_size = ROCM_WAVEFRONT_SIZE;\n#define HALF_PRECISION_AVAILABLE = 1\n\
        #else  // !__HIP_PLATFORM_AMD__\nconstexpr int hw_warp_size = 32;\n#if __CUDA_ARCH__ >= 530\n#define HALF_PRECISION_AVAILABLE = 1\n#define PTX_AVAILABLE\n#endif\n\
        #endif  //__HIP_PLATFORM_AMD__\n\ninline int next_pow2(const int val) {\n  int rounded_val = val - 1;\n  rounded_val |= rounded_val >> 1;\n  return rounded_val + 1;\n}\n";

    const DS_MEMORY_ACCESS: &str = "#pragma once\n\n#include \"ds_kernel_utils.h\"\n\nnamespace mem_access {\n\n\
        DS_D_INLINE void store_global_cs(void* dst, const float4& v)\n{\n#ifdef PTX_AVAILABLE\n\
        \x20   asm volatile(\"st.global.cs.v4.f32 [%0], {%1, %2, %3, %4};\\n\"\n                 :\n                 : \"l\"(dst), \"f\"(v.x), \"f\"(v.y), \"f\"(v.z), \"f\"(v.w));\n\
        #else\n    *reinterpret_cast<float4*>(dst) = v;\n#endif\n}\n\n\
        DS_HD_INLINE unsigned long long clock_ticks()\n{\n#ifndef __CUDA_ARCH__\n    unsigned lo, hi;\n    asm volatile(\"rdtsc\" : \"=a\"(lo), \"=d\"(hi));\n    return lo;\n\
        #else\n    unsigned long long t;\n    asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t));\n    return t;\n#endif\n}\n\n\
        DS_D_INLINE float dot2(float acc, int v)\n{\n#if defined(__HIP_PLATFORM_AMD__)\n    asm volatile(\"v_dot2_f32_f16 %0, %1, %1, %0\" : \"+v\"(acc) : \"v\"(v));\n#endif\n    return acc;\n}\n\n\
        }  // namespace mem_access\n";

    const DS_CU: &str = "#include \"memory_access_utils.h\"\n\n\
        DS_D_INLINE unsigned lane_id()\n{\n    unsigned id;\n    asm(\"mov.u32 %0, %laneid;\" : \"=r\"(id));\n    return id;\n}\n";

    /// CUTLASS's layout: `CUTLASS_DEVICE` and `CUTLASS_HOST_DEVICE` come from
    /// `cutlass/detail/helper_macros.hpp` through `cutlass/cutlass.h`, with a host build's
    /// `inline` in an `#else` the device pass never takes.
    const CUTLASS_HELPER_MACROS: &str = "#pragma once\n\n\
        #if defined(__CUDACC__) || defined(_NVHPC_CUDA)\n#define CUTLASS_HOST_DEVICE __forceinline__ __device__ __host__\n#define CUTLASS_DEVICE __forceinline__ __device__\n\
        #elif defined(__CUDACC_RTC__)\n#define CUTLASS_HOST_DEVICE __forceinline__ __device__\n#define CUTLASS_DEVICE __forceinline__ __device__\n\
        #else\n#define CUTLASS_HOST_DEVICE inline\n#define CUTLASS_DEVICE inline\n#endif\n\n\
        #define CUTLASS_UNUSED(expr) do { ; } while (&expr != &expr)\n";

    const CUTLASS_H: &str =
        "#pragma once\n\n#include \"cutlass/detail/helper_macros.hpp\"\n\nnamespace cutlass {\n} // namespace cutlass\n";

    const CUTLASS_MEMORY_SM75: &str = "#pragma once\n\n#include \"cutlass/cutlass.h\"\n\nnamespace cutlass {\nnamespace arch {\n\n\
        template <>\nCUTLASS_DEVICE\nvoid ldsm<layout::RowMajor, 1>(\n    Array<unsigned, 1> & D,\n    void const* ptr) {\n\
        \x20   unsigned addr = cutlass_get_smem_pointer(ptr);\n    int x;\n\
        \x20   asm volatile (\"ldmatrix.sync.aligned.x1.m8n8.shared.b16 {%0}, [%2];\" : \"=r\"(x) : \"r\"(addr));\n\
        \x20   reinterpret_cast<int &>(D) = x;\n}\n\n\
        CUTLASS_DEVICE\nvoid arrive(unsigned smem_addr) {\n  asm volatile(\n      \"{\\n\\t\"\n      \".reg .b64 state; \\n\\t\"\n      \"mbarrier.arrive.shared::cta.b64   state, [%0];\\n\\t\"\n      \"}\"\n      :\n      : \"r\"(smem_addr)\n      : \"memory\");\n}\n\n\
        CUTLASS_HOST_DEVICE\nunsigned long long cycles() {\n#if !defined(__CUDA_ARCH__)\n  unsigned lo, hi;\n  asm volatile(\"rdtsc\" : \"=a\"(lo), \"=d\"(hi));\n  return lo;\n#else\n  return clock64();\n#endif\n}\n\n\
        } // namespace arch\n} // namespace cutlass\n";

    /// The asm of functions qualified by a macro of a header they include is checked: the
    /// findings (and only those) a `__device__` spelling gives.
    #[test]
    fn functions_qualified_by_a_headers_macro_are_device_code() {
        let (_dir, root) = tree(&[
            ("csrc/includes/ds_kernel_utils.h", DS_KERNEL_UTILS),
            ("csrc/includes/memory_access_utils.h", DS_MEMORY_ACCESS),
            ("csrc/transformer/lane.cu", DS_CU),
            ("cutlass/include/cutlass/detail/helper_macros.hpp", CUTLASS_HELPER_MACROS),
            ("cutlass/include/cutlass/cutlass.h", CUTLASS_H),
            ("cutlass/include/cutlass/arch/memory_sm75.h", CUTLASS_MEMORY_SM75),
            ("gemm/gemm.cu", "#include \"cutlass/arch/memory_sm75.h\"\n"),
        ]);
        let files = [root.join("csrc/transformer/lane.cu"), root.join("gemm/gemm.cu")];
        let (n, d) = check_loose(&root, &files, &[], &mut BTreeSet::new()).unwrap();
        assert_eq!(n, 7, "{d:#?}");
        let found: Vec<String> =
            d.iter().map(|d| format!("{} {}", relative(Path::new(&d.location().unwrap()), &root).display(), d.message)).collect();
        assert_eq!(
            found,
            [
                "csrc/transformer/lane.cu:6:22 special register `%laneid` should be written `%%laneid` in an asm with operands",
                "csrc/includes/memory_access_utils.h:10:19 asm writes memory (`st.global.cs.v4.f32`) without a \"memory\" clobber",
                "cutlass/include/cutlass/arch/memory_sm75.h:15:68 `%2` refers to operand 2, but this asm has 2 operands",
            ],
            "DS_D_INLINE's and CUTLASS_DEVICE's asm; not the host branches' `rdtsc`, the HIP branch's `v_dot2`, or CUTLASS's scoped `.reg`"
        );
    }
}
