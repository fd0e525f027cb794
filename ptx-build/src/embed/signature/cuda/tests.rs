use super::*;

#[test]
fn launch_bounds_between_void_and_the_name_are_skipped() {
    let src = "extern \"C\" __global__ void __launch_bounds__(256, 4) h(unsigned n, const unsigned *w) {}\nextern \"C\" __global__ void __maxnreg__(64) m(float *x) {}\nextern \"C\" __attribute__((global)) void __attribute__((launch_bounds(128, 2))) p(float *x) {}\n";
    let sigs = cuda_kernels_in(Path::new("k.cu"), src).unwrap();
    let names: Vec<(&str, usize)> = sigs.iter().map(|s| (s.name.as_str(), s.params.len())).collect();
    assert_eq!(names, [("h", 2), ("m", 1), ("p", 1)]);
    assert!(sigs.iter().all(|s| !s.mangled && s.untyped.is_none()), "{sigs:?}");
}

#[test]
fn kernels_of_a_preprocessed_unit_are_at_the_line_of_the_macro_use() {
    // What `nvcc -E` makes of it: line markers, `__attribute__((global))`, a system header.
    let ii = "# 1 \"./cuda/k.cu\"\n# 1 \"/usr/include/stdint.h\" 1 3 4\nextern \"C\" __attribute__((global)) void sys(int *p) {}\n# 2 \"./cuda/k.cu\" 2\n\n\nextern \"C\" __attribute__((global)) void a(const float *x, float *y) {}\nextern \"C\" __attribute__((global)) void b(const double *x, double *y) {}\n";
    let sigs = cuda_kernels_preprocessed(ii, Path::new("/pkg"), &[]).unwrap();
    let at: Vec<(String, String, u32)> = sigs.iter().map(|s| (s.name.clone(), s.file.display().to_string(), s.line)).collect();
    assert_eq!(at, [("a".to_string(), "/pkg/cuda/k.cu".to_string(), 4), ("b".to_string(), "/pkg/cuda/k.cu".to_string(), 5)]);
    assert_eq!(sigs[1].params[0].ty, ParamType::Pointer { mutable: false, elem: "f64".into() });
    // The CUDA install's headers are not read; a header outside the package is.
    let with_headers = "# 1 \"./cuda/k.cu\"\n# 1 \"/opt/cuda/include/k.h\" 1\nextern \"C\" __attribute__((global)) void cuda_own(int *p) {}\n# 1 \"/src/shared/k.cuh\" 1\nextern \"C\" __attribute__((global)) void shared(int *p) {}\n# 3 \"./cuda/k.cu\" 2\n";
    let sigs = cuda_kernels_preprocessed(with_headers, Path::new("/pkg"), &[Path::new("/opt/cuda")]).unwrap();
    let at: Vec<(String, String, u32)> = sigs.iter().map(|s| (s.name.clone(), s.file.display().to_string(), s.line)).collect();
    assert_eq!(at, [("shared".to_string(), "/src/shared/k.cuh".to_string(), 1)]);
}

#[test]
fn cuda_vendor_types_map_to_ptx_runtime_host_types() {
    let src = "extern \"C\" __global__ void v(__nv_fp8_e4m3 a, __nv_fp8_e5m2 b, __half2 h, __nv_bfloat162 g, const __half2 *hs, __nv_fp8_e4m3 *out) {}";
    let k = cuda_kernels_in(Path::new("k.cu"), src).unwrap();
    assert_eq!(k[0].untyped, None);
    let tys: Vec<String> = k[0]
        .params
        .iter()
        .map(|p| match &p.ty {
            ParamType::ByValue { ty } => ty.clone(),
            ParamType::Pointer { mutable, elem } => format!("{}{elem}", if *mutable { "*mut " } else { "*const " }),
            ParamType::Scalar(s) => s.rust_name().into(),
            ParamType::AnyPointer { .. } | ParamType::Addresses { .. } | ParamType::Tag { .. } => unreachable!(),
        })
        .collect();
    assert_eq!(
        tys,
        [
            "::ptx_runtime::cuda_types::Fp8E4M3",
            "::ptx_runtime::cuda_types::Fp8E5M2",
            "::ptx_runtime::cuda_types::Half2",
            "::ptx_runtime::cuda_types::Bf16x2",
            "*const ::ptx_runtime::cuda_types::Half2",
            "*mut ::ptx_runtime::cuda_types::Fp8E4M3"
        ]
    );
}

#[test]
fn reads_extern_c_global_functions() {
    let src = r#"#include "common.cuh"
#define N 4 /* a comment with __global__ f(int) */
extern "C" __global__ void saxpy(int n, float a, const float *__restrict__ x, float *y) {}
extern "C" {
__global__ void halves(const __half *in, __nv_bfloat16 *out, size_t n, unsigned m, long long k, unsigned long long u) {}
__global__ void by_value(Pair p, const Pair *ps, unsigned int) ;
}
__global__ void cpp_kernel(float *x) {}
template <typename T> __global__ void tmpl(T *x) {}
"#;
    let k = cuda_kernels_in(Path::new("cuda/k.cu"), src).unwrap();
    let names: Vec<&str> = k.iter().map(|k| k.name.as_str()).collect();
    assert_eq!(names, ["saxpy", "halves", "by_value", "cpp_kernel", "tmpl"]);
    assert_eq!(k[0].line, 3);
    assert_eq!(
        k[0].params.iter().map(|p| (p.name.as_str(), p.ty.clone())).collect::<Vec<_>>(),
        vec![
            ("n", ParamType::Scalar(Scalar::I32)),
            ("a", ParamType::Scalar(Scalar::F32)),
            ("x", ParamType::Pointer { mutable: false, elem: "f32".into() }),
            ("y", ParamType::Pointer { mutable: true, elem: "f32".into() }),
        ]
    );
    assert_eq!(
        k[1].params.iter().map(|p| p.ty.clone()).collect::<Vec<_>>(),
        vec![
            ParamType::Pointer { mutable: false, elem: "::ptx_runtime::half::f16".into() },
            ParamType::Pointer { mutable: true, elem: "::ptx_runtime::half::bf16".into() },
            ParamType::Scalar(Scalar::Usize),
            ParamType::Scalar(Scalar::U32),
            ParamType::Scalar(Scalar::I64),
            ParamType::Scalar(Scalar::U64),
        ]
    );
    assert_eq!(k[2].params[0].ty, ParamType::ByValue { ty: "Pair".into() });
    assert_eq!(k[2].params[1].ty, ParamType::Pointer { mutable: false, elem: "Pair".into() });
    assert_eq!((k[2].params[2].name.as_str(), &k[2].params[2].ty), ("arg2", &ParamType::Scalar(Scalar::U32)));
    assert!(!k[0].mangled && !k[1].mangled && !k[2].mangled);
    assert!(k[3].mangled && k[4].mangled, "no extern \"C\": the PTX name is mangled");
}

/// Linear in the input: 50,000 declarations without `;` (1.6 MB, one declaration that
/// never ends) read in well under a second. The quadratic reader took 25 s for 5,000, so it
/// would need about 40 minutes here: a regression shows as a test that hangs.
#[test]
fn many_kernels_without_semicolons_read_in_linear_time() {
    let n = 50_000;
    let src: String = (0..n).map(|i| format!("extern \"C\" __global__ void f{i}()\n")).collect();
    let k = cuda_kernels_in(Path::new("big.cu"), &src).unwrap();
    assert_eq!(k.len(), n);
    assert_eq!((k[n - 1].name.as_str(), k[n - 1].line, k[n - 1].mangled), ("f49999", n as u32, false));
    // The same name again and again: one kernel.
    let same = "extern \"C\" __global__ void f()\n".repeat(n);
    assert_eq!(cuda_kernels_in(Path::new("same.cu"), &same).unwrap().len(), 1);
}

#[test]
fn c_parameters_without_a_launch_type_leave_the_kernel_untyped_with_the_reason() {
    let untyped = |src: &str| {
        let k = cuda_kernels_in(Path::new("cuda/k.cu"), src).unwrap();
        assert!(k[0].params.is_empty());
        k[0].untyped.clone().expect("untyped")
    };
    assert!(untyped("extern \"C\" __global__ void k(int n, long double x) {}")
        .contains("`long double` has no Rust equivalent here; device code passes it as a 64-bit `double`: declare it `double`"));
    assert!(untyped("extern \"C\" __global__ void k(int a[4]) {}").contains("arrays, templates and qualified types"));
    // A function pointer by its typedef or alias: not a host type to define.
    for alias in ["typedef float (*unary_fn)(float);", "using unary_fn = float (*)(const float);"] {
        let why = untyped(&format!(
            "{alias}\n__device__ float twice(float v) {{ return 2 * v; }}\nextern \"C\" __global__ void k(unary_fn f, float *x) {{}}"
        ));
        assert!(
            why.starts_with("parameter `unary_fn f`: a pointer to a device function, whose address only device code can take"),
            "{why}"
        );
    }
    for (param, words) in [("wchar_t w", "wchar_t"), ("unsigned __int128 x", "unsigned __int128"), ("__int128 x", "__int128")] {
        let why = untyped(&format!("extern \"C\" __global__ void k({param}) {{}}"));
        assert_eq!(why, format!("parameter `{param}`: `{words}` has no Rust equivalent here; use a fixed-size type such as int, unsigned, long long, float, double or a struct"));
    }
    // A template's arguments are one parameter, named as written (boojum-cuda's accessors).
    let k = cuda_kernels_in(
        Path::new("k.cu"),
        "template <typename T, int M = 0> struct getter { const T *ptr; };\n\
         extern \"C\" __global__ void k(getter<float, st::cs> ys, const unsigned n) {}\n\
         extern \"C\" __global__ void k2(getter<getter<int,\n 1>> zs, const float *__restrict__ x) {}\n\
         extern \"C\" __global__ void k3(getter<getter<int, 1>> /* two */ zs) {}",
    )
    .unwrap();
    let why = k[0].untyped.as_deref().unwrap();
    assert_eq!(why, "parameter `getter<float, st::cs> ys`: arrays, templates and qualified types cannot be launched with typed arguments; use a pointer, a scalar or a plain struct");
    assert!(k[1].untyped.as_deref().unwrap().starts_with("parameter `getter<getter<int, 1>> zs`: "), "{:?}", k[1].untyped);
    // With a comment between, from the tokens: without their numbers.
    assert!(k[2].untyped.as_deref().unwrap().starts_with("parameter `getter<getter<int, >> zs`: "), "{:?}", k[2].untyped);
    assert!(untyped("extern \"C\" __global__ void k(const Params &p) {}").contains("cannot take a reference"));
    assert!(untyped("extern \"C\" __global__ void k(ns::Params p) {}").contains("qualified types"));
    assert!(untyped("extern \"C\" __global__ void k(thrust::size_t n) {}").contains("qualified types"));
    // The other kernels of the file keep their types.
    let k =
        cuda_kernels_in(Path::new("k.cu"), "extern \"C\" __global__ void a(float *p[4]) {}\nextern \"C\" __global__ void b(float *x) {}")
            .unwrap();
    assert_eq!((k[0].untyped.is_some(), k[1].untyped.is_none(), k[1].params.len()), (true, true, 1));
}

/// Batched kernels take arrays of device addresses (`const float *const *A`, as cuBLAS's
/// batched GEMMs): a buffer of `u64` whose constness is that of the addresses, not of what
/// they point to.
#[test]
fn pointers_to_pointers_are_buffers_of_device_addresses() {
    let src = "typedef float real;\nstruct Pair { int a; };\n\
        extern \"C\" __global__ void k(float **a, const float **b, float *const *c, const float *const *__restrict__ d,\n\
        float const * const * e, const void **f, Pair **g, real **h, float ***i, float **const j, float **) {}\n";
    let k = cuda_kernels_in(Path::new("k.cu"), src).unwrap();
    assert_eq!(k[0].untyped, None);
    let got: Vec<(&str, &ParamType)> = k[0].params.iter().map(|p| (p.name.as_str(), &p.ty)).collect();
    let a = |mutable: bool, pointee: &str| ParamType::Addresses { mutable, pointee: pointee.into() };
    assert_eq!(
        got,
        [
            ("a", &a(true, "*mut f32")),
            ("b", &a(true, "*const f32")),
            ("c", &a(false, "*mut f32")),
            ("d", &a(false, "*const f32")),
            ("e", &a(false, "*const f32")),
            ("f", &a(true, "*const c_void")),
            ("g", &a(true, "*mut Pair")),
            ("h", &a(true, "*mut f32")),
            ("i", &a(true, "*mut *mut f32")),
            // `const` after the last star: the parameter itself, which the host does not see.
            ("j", &a(true, "*mut f32")),
            ("arg10", &a(true, "*mut f32")),
        ]
    );
    // What the demangler spells (`float const* const*`) reads the same.
    assert_eq!(c_type("float const* const*"), Ok(a(false, "*const f32")));
    assert_eq!(c_type("float**"), Ok(a(true, "*mut f32")));
}

/// llm.c's tag dispatch: an unnamed `std::bool_constant<Atomic>` whose type is the value.
#[test]
fn empty_standard_tags_are_passed_for_the_caller() {
    let src = "template <typename OutFloat, bool Atomic>\n__global__ void k8(OutFloat* dbias, int OC, std::bool_constant<Atomic>) {}\n\
        extern \"C\" __global__ void t(const cuda::std::true_type yes, std::integral_constant<int, 4> four, ::std::false_type, bool_constant<true> b, float *x) {}\n";
    let k = cuda_kernels_in(Path::new("k.cu"), src).unwrap();
    let tag = |w: &str| ParamType::Tag { written: w.into() };
    assert_eq!(k[0].params[2], Param { name: "arg2".into(), ty: tag("std::bool_constant<Atomic>") });
    let got: Vec<(&str, &ParamType)> = k[1].params.iter().map(|p| (p.name.as_str(), &p.ty)).collect();
    assert_eq!(
        got,
        [
            ("yes", &tag("cuda::std::true_type")),
            ("four", &tag("std::integral_constant<int, 4>")),
            ("arg2", &tag("::std::false_type")),
            ("b", &tag("bool_constant<true>")),
            ("x", &ParamType::Pointer { mutable: true, elem: "f32".into() }),
        ]
    );
    // What the demangler spells; anything else of `std::` stays untyped.
    assert_eq!(c_type("std::integral_constant<bool, true>"), Ok(tag("std::integral_constant<bool, true>")));
    let k = cuda_kernels_in(Path::new("k.cu"), "extern \"C\" __global__ void u(std::bool_constant<true> *p, std::pair<int, int> q) {}")
        .unwrap();
    assert!(
        k[0].untyped.as_deref().unwrap().starts_with("parameter `std::bool_constant<true> *p`: arrays, templates"),
        "{:?}",
        k[0].untyped
    );
}

#[test]
fn plain_typedefs_are_followed_and_ambiguous_ones_are_not() {
    // llm.c's `floatX`, as the preprocessed unit has it, and an alias of an alias.
    let src = "typedef __nv_bfloat16 floatX;\ntypedef unsigned int uint;\ntypedef uint index_t;\ntypedef struct Params Params;\ntypedef struct { half d; } block_q8_0;\ntypedef unsigned long size_t;\n\
        extern \"C\" __global__ void k(floatX *out, const floatX *inp, index_t n, Params p, const block_q8_0 *b, size_t len) {}\n";
    let k = cuda_kernels_in(Path::new("k.cu"), src).unwrap();
    let tys: Vec<ParamType> = k[0].params.iter().map(|p| p.ty.clone()).collect();
    assert_eq!(
        tys,
        [
            ParamType::Pointer { mutable: true, elem: "::ptx_runtime::half::bf16".into() },
            ParamType::Pointer { mutable: false, elem: "::ptx_runtime::half::bf16".into() },
            ParamType::Scalar(Scalar::U32),
            ParamType::ByValue { ty: "Params".into() },
            ParamType::Pointer { mutable: false, elem: "block_q8_0".into() },
            // A type the reader knows keeps its own mapping (`usize`, not the header's `unsigned long`).
            ParamType::Scalar(Scalar::Usize),
        ]
    );
    // One alias per `#if` branch, read before preprocessing: which applies is not known.
    let src = "#if defined(ENABLE_FP32)\ntypedef float floatX;\n#else\ntypedef __nv_bfloat16 floatX;\n#endif\nextern \"C\" __global__ void k(floatX *out) {}\n";
    let k = cuda_kernels_in(Path::new("k.cu"), src).unwrap();
    assert_eq!(k[0].params[0].ty, ParamType::Pointer { mutable: true, elem: "floatX".into() });
    // Aliases of each other end.
    let k = cuda_kernels_in(Path::new("k.cu"), "typedef A B;\ntypedef B A;\nextern \"C\" __global__ void k(A a) {}").unwrap();
    assert!(matches!(&k[0].params[0].ty, ParamType::ByValue { .. }), "{k:?}");
}

/// The parameter shapes of public CUDA code (candle's quantized.cu, llm.c, CUTLASS-style
/// headers), each with the launch type it gets.
#[test]
fn common_parameter_shapes_of_public_cuda_code_are_typed() {
    let ty = |param: &str| -> ParamType {
        let src = format!("extern \"C\" __global__ void k({param}) {{}}");
        let k = cuda_kernels_in(Path::new("k.cu"), &src).unwrap();
        assert_eq!(k[0].untyped, None, "{param}");
        k[0].params[0].ty.clone()
    };
    let ptr = |mutable: bool, elem: &str| ParamType::Pointer { mutable, elem: elem.into() };
    let val = |t: &str| ParamType::ByValue { ty: t.into() };
    let vector = |t: &str| format!("::ptx_runtime::cuda_types::{t}");
    // `void *`: any device buffer; constness decides how the host passes it.
    assert_eq!(ty("const void * __restrict__ vx"), ParamType::AnyPointer { mutable: false });
    assert_eq!(ty("void * __restrict__ vy"), ParamType::AnyPointer { mutable: true });
    assert_eq!(ty("void const *src"), ParamType::AnyPointer { mutable: false });
    assert_eq!(ty("void *"), ParamType::AnyPointer { mutable: true });
    assert_eq!(ty("const void *const p"), ParamType::AnyPointer { mutable: false });
    // Half types and stdint.
    assert_eq!(ty("const __half * __restrict__ x"), ptr(false, "::ptx_runtime::half::f16"));
    assert_eq!(ty("__nv_bfloat16 *out"), ptr(true, "::ptx_runtime::half::bf16"));
    assert_eq!(ty("const uint8_t *q"), ptr(false, "u8"));
    assert_eq!(ty("int64_t n"), ParamType::Scalar(Scalar::I64));
    assert_eq!(ty("const int8_t *__restrict__ qs"), ptr(false, "i8"));
    // Sizes, dims and strides (candle's `const size_t *info`).
    assert_eq!(ty("const size_t num_dims"), ParamType::Scalar(Scalar::Usize));
    // The C library's names in `std` or the global namespace (`<cstddef>`, `<cstdint>`).
    assert_eq!(ty("std::size_t n"), ParamType::Scalar(Scalar::Usize));
    assert_eq!(ty("const std::int64_t *__restrict__ offsets"), ptr(false, "i64"));
    assert_eq!(ty("::uint32_t seed"), ParamType::Scalar(Scalar::U32));
    assert_eq!(ty("std :: ptrdiff_t stride"), ParamType::Scalar(Scalar::Isize));
    assert_eq!(ty("cuda::std::uint64_t *counts"), ptr(true, "u64"));
    assert_eq!(ty("const char32_t *text"), ptr(false, "u32"));
    // Attributes say nothing of the type (`[[maybe_unused]]`, GNU's after the name).
    assert_eq!(ty("[[maybe_unused]] const int n"), ParamType::Scalar(Scalar::I32));
    assert_eq!(ty("float *x __attribute__((unused))"), ptr(true, "f32"));
    assert_eq!(ty("const size_t *info"), ptr(false, "usize"));
    // dfdx's slice kernels take addresses as integers.
    assert_eq!(ty("uintptr_t base"), ParamType::Scalar(Scalar::Usize));
    assert_eq!(ty("const intptr_t *offsets"), ptr(false, "isize"));
    assert_eq!(ty("unsigned long long seed"), ParamType::Scalar(Scalar::U64));
    assert_eq!(ty("unsigned char c"), ParamType::Scalar(Scalar::U8));
    assert_eq!(ty("signed char c"), ParamType::Scalar(Scalar::I8));
    assert_eq!(ty("long offset"), ParamType::Scalar(Scalar::I64));
    assert_eq!(ty("const bool *mask"), ptr(false, "bool"));
    // Vector types (llm.c's `float4 *`, `int2` indices) and cuComplex.
    assert_eq!(ty("float4 *out"), ptr(true, &vector("Float4")));
    assert_eq!(ty("const int2 *idx"), ptr(false, &vector("Int2")));
    assert_eq!(ty("float2 scale"), val(&vector("Float2")));
    assert_eq!(ty("uchar4 *rgba"), ptr(true, &vector("UChar4")));
    assert_eq!(ty("const double2 *__restrict__ z"), ptr(false, &vector("Double2")));
    assert_eq!(ty("cuFloatComplex *c"), ptr(true, &vector("Float2")));
    assert_eq!(ty("const cufftDoubleComplex *c"), ptr(false, &vector("Double2")));
    assert_eq!(ty("cufftReal scale"), ParamType::Scalar(Scalar::F32));
    assert_eq!(ty("const dim3 shape"), val(&vector("UInt3")));
    assert_eq!(ty("ulong2 v"), val(&vector("ULongLong2")));
    assert_eq!(ty("cudaTextureObject_t tex"), ParamType::Scalar(Scalar::U64));
    assert_eq!(ty("const __grid_constant__ CUtensorMap tmap"), val("::ptx_runtime::TensorMap"));
    // A struct of the user's: by name, its host type asserted against the PTX's layout.
    assert_eq!(ty("const block_q8_1 * __restrict__ y"), ptr(false, "block_q8_1"));
    // Default arguments (ggml's rms_norm).
    assert_eq!(ty("const int64_t mul_stride_row = 0"), ParamType::Scalar(Scalar::I64));
    assert_eq!(ty("const float * mul = nullptr"), ptr(false, "f32"));
    // Every vector type the reader maps has a twin in ptx-runtime.
    let runtime = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../ptx-runtime/src/cuda_types.rs")).unwrap();
    for (c, host) in VECTOR_TYPES {
        assert!(runtime.contains(&format!(" {host}(")), "`{c}`: `{host}` in ptx-runtime");
    }
}
