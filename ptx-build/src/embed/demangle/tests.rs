use super::*;

#[test]
fn demangles_templates_namespaces_and_plain_kernels() {
    let d = demangle("_Z4castIfjEvPKT_PT0_S3_").unwrap();
    assert_eq!(d.qualified, "cast");
    assert_eq!(d.template_args, ["float", "unsigned int"]);
    assert_eq!(d.params, ["float const*", "unsigned int*", "unsigned int"]);
    let d = demangle("_ZN2ns5scaleEPdi").unwrap();
    assert_eq!((d.qualified.as_str(), d.name()), ("ns::scale", "scale"));
    assert!(d.template_args.is_empty());
    assert_eq!(d.params, ["double*", "int"]);
    assert_eq!(demangle("_Z6reduceILi256EEvPKfPfi").unwrap().template_args, ["256"]);
    assert_eq!(demangle("_Z4noopv").unwrap().params, Vec::<String>::new());
    // nvcc's namespace for a file's `static` functions is left out.
    let d = demangle("_Z8unary_opIXadL_ZN37_INTERNAL_90e471bf_7_gelu_cu_6ade39646op_negEfEEEvPKfPfi").unwrap();
    assert_eq!(
        (d.template_args.as_slice(), d.text.as_str()),
        (&["&op_neg(float)".to_string()][..], "unary_op<&op_neg(float)>(float const*, float*, int)")
    );
    assert_eq!(without_internal_namespaces("a::_INTERNAL_x::b, MY_INTERNAL_y::c"), "a::b, MY_INTERNAL_y::c");
    assert_eq!(demangle("saxpy"), None);
    assert_eq!(demangle("_Zgarbage"), None);
}

fn read(src: &str) -> Vec<KernelSig> {
    crate::embed::signature::cuda_kernels_in(std::path::Path::new("k.cu"), src).unwrap()
}

#[test]
fn template_instances_become_one_generic_kernel() {
    let sigs = read(
        "#include <cuda_fp16.h>\ntemplate <typename T>\n__global__ void add(T *y, const T *x, int n) {}\ntemplate __global__ void add<float>(float *, const float *, int);\ntemplate __global__ void add<__half>(__half *, const __half *, int);\n",
    );
    let bound = bind(sigs, &["_Z3addIfEvPT_PKS0_i", "_Z3addI6__halfEvPT_PKS1_i"]);
    assert_eq!(bound.len(), 1, "{bound:#?}");
    let g = bound[0].generic.as_ref().unwrap();
    assert_eq!(g.type_params, ["T"]);
    assert_eq!(g.instances[0], Instance { args: vec!["f32".into()], values: Vec::new(), ptx_name: "_Z3addIfEvPT_PKS0_i".into() });
    assert_eq!(g.instances[1].args, ["::ptx_runtime::half::f16"]);
    assert!(!bound[0].mangled);
    assert_eq!(bound[0].line, 3);
}

/// ggml's `template <int ncols>`, DeepSpeed's `bool has_bias`, mamba's `size_t` tile sizes,
/// llama.cpp's `sort_order`: one generic kernel with const parameters, each instance's
/// values as Rust literals of the parameter's type.
#[test]
fn templates_over_ints_bools_enums_and_sizes_become_const_generic_kernels() {
    // The source, its instances' PTX names, and each instance's values.
    type Case<'a> = (&'a str, &'a [&'a str], &'a [&'a [&'a str]]);
    let cases: &[Case] = &[
        (
            "template <int BLOCK>\n__global__ void reduce(const float *x, float *out, int n) {}\n",
            &["_Z6reduceILi256EEvPKfPfi"],
            &[&["256"]],
        ),
        (
            "template <bool has_bias>\n__global__ void add_bias(float* y, const float* b, int n) {}\n",
            &["_Z8add_biasILb1EEvPfPKfi", "_Z8add_biasILb0EEvPfPKfi"],
            &[&["true"], &["false"]],
        ),
        (
            "enum sort_order { ASC, DESC };\ntemplate <sort_order order>\n__global__ void k_sort(const float* x, int* dst, int n) {}\n",
            &["_Z6k_sortIL10sort_order0EEvPKfPii", "_Z6k_sortIL10sort_order1EEvPKfPii"],
            &[&["0"], &["1"]],
        ),
        (
            "template <size_t splitD, size_t N>\n__global__ void ssm_scan(const float* x, float* y, int n) {}\n",
            &["_Z8ssm_scanILm128ELm16EEvPKfPfi", "_Z8ssm_scanILm128ELm256EEvPKfPfi"],
            &[&["128", "16"], &["128", "256"]],
        ),
        ("template <int off>\n__global__ void shift(float* y, int n) {}\n", &["_Z5shiftILin1EEvPfi"], &[&["-1"]]),
    ];
    for (src, entries, values) in cases {
        let bound = bind(read(src), entries);
        assert_eq!(bound.len(), 1, "{bound:#?}");
        let g = bound[0].generic.as_ref().unwrap_or_else(|| panic!("{bound:#?}"));
        assert!(!bound[0].mangled && bound[0].untyped.is_none(), "{bound:#?}");
        let got: Vec<Vec<&str>> = g.instances.iter().map(|i| i.values.iter().map(String::as_str).collect()).collect();
        assert_eq!(got, values.iter().map(|v| v.to_vec()).collect::<Vec<_>>(), "{src}");
    }
    // Types and values interleaved as declared; the instance's name in messages is C++'s order.
    let bound = bind(
        read("template <typename T, bool has_bias>\n__global__ void add_bias2(T* y, const T* b, int n) {}\n"),
        &["_Z9add_bias2IfLb1EEvPT_PKS0_i"],
    );
    let g = bound[0].generic.as_ref().unwrap();
    assert_eq!((g.instances[0].args.as_slice(), g.instances[0].values.as_slice()), (&["f32".to_string()][..], &["true".to_string()][..]));
    assert_eq!(bound[0].monomorphic()[0].1.name, "add_bias2::<f32, true>");
    assert_eq!(demangle("_Z8ssm_scanILm128ELm16EEvPKfPfi").unwrap().template_args, ["(unsigned long)128", "(unsigned long)16"]);
}

/// Values Rust's const generics cannot hold, or that are not of the declared type: the
/// kernel is launched by name, with the reason.
#[test]
fn template_values_without_a_const_generic_form_leave_the_kernel_untyped() {
    let why = |src: &str, entries: &[&str]| bind(read(src), entries)[0].untyped.clone().unwrap_or_default();
    // A function where one instance passes a function and another a value cannot be.
    let w = why(
        "template <int qk, dequantize_kernel_t dequantize_kernel>\n__global__ void k(float *x) {}\n",
        &["_Z1kILi32EXadL_Z15dequantize_q4_0PKvRfEEEvPf", "_Z1kILi32ELi3EEvPf"],
    );
    assert!(w.contains("is not a function's address"), "{w}");
    // An enum value past `i32` without a fixed type; with one (`enum big : long`) it is typed.
    let enum_big = |decl: &str| {
        bind(read(&format!("{decl};\ntemplate <big b>\n__global__ void k(float *x) {{}}\n")), &["_Z1kIL3big1099511627776EEvPf"])
    };
    let w = enum_big("enum big { B = 1L << 40 }")[0].untyped.clone().unwrap_or_default();
    assert!(w.starts_with("an instance's argument for template parameter `b` (`(big)1099511627776`) does not fit the `i32` an enum without a fixed underlying type is taken as (give `big` one"), "{w}");
    let typed = enum_big("enum big : long { B = 1L << 40 }");
    let g = typed[0].generic.as_ref().expect("typed");
    assert_eq!((g.const_params[0].ty, g.instances[0].values[0].as_str()), (ConstType::Value(Scalar::I64), "1099511627776"));
    assert_eq!(const_value("(unsigned char)300", Scalar::U8), None);
    assert_eq!(const_value("(unsigned char)255", Scalar::U8).as_deref(), Some("255"));
    assert_eq!(const_value("&op_abs(float)", Scalar::I32), None);
    assert_eq!(const_value("1", Scalar::Bool), None);
}

/// A template over a traits type the host cannot name (causal-conv1d's
/// `Kernel_traits<128, 4, float>`): untyped, and each instance's list line names its own
/// argument, not the last instance's.
#[test]
fn a_template_over_a_class_template_is_untyped_and_each_instance_names_its_argument() {
    let src = "template <int N, int W, typename T> struct Kernel_traits {};\nstruct Params { int n; };\ntemplate <typename Ktraits>\n__global__ void conv(Params p) {}\n";
    let entries = ["_Z4convI13Kernel_traitsILi128ELi2EfEEv6Params", "_Z4convI13Kernel_traitsILi128ELi4EfEEv6Params"];
    let bound = bind(read(src), &entries);
    let why = bound[0].untyped.as_deref().unwrap();
    assert!(why.starts_with("an instance has a template argument with no Rust type"), "{why}");
    assert!(!why.contains("non-type"), "{why}");
    assert_eq!(demangle(entries[0]).unwrap().unbound_argument(), Some("Kernel_traits<128, 2, float>"));
    assert_eq!(demangle(entries[1]).unwrap().unbound_argument(), Some("Kernel_traits<128, 4, float>"));
}

/// DeepSpeed's gelu.cu: a plain kernel for float and a template of the same name for the
/// other types; its dequantize.cu: two templates of one name with other parameters.
#[test]
fn overloads_with_templates_get_names_of_their_own() {
    let src = "__global__ void residual(float* r, const float* x, int n) {}\ntemplate <typename T>\n__global__ void residual(T* r, const T* x, int n) {}\n";
    let bound = bind(read(src), &["_Z8residualPfPKfi", "_Z8residualI6__halfEvPT_PKS1_i"]);
    let mut names: Vec<&str> = bound.iter().map(|s| s.name.as_str()).collect();
    names.sort();
    assert_eq!(names, ["residual", "residual_f32_f32_i32"], "{bound:#?}");
    assert!(bound.iter().find(|s| s.name == "residual").unwrap().generic.is_some());
    let src = "template <typename T>\n__global__ void dequantize(T* out, const signed char* in, const float* scale, int n, int groups) {}\ntemplate <typename T>\n__global__ void dequantize(T* out, const signed char* in, const float* scale, unsigned n) {}\n";
    let bound = bind(read(src), &["_Z10dequantizeIfEvPT_PKaPKfii", "_Z10dequantizeIfEvPT_PKaPKfj"]);
    let names: Vec<&str> = bound.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["dequantize_t_i8_f32_i32_i32", "dequantize_t_i8_f32_u32"], "{bound:#?}");
    assert!(bound.iter().all(|s| s.generic.as_ref().is_some_and(|g| g.instances.len() == 1)), "{bound:#?}");
}

/// Two templates of one name and parameter count: each takes only the instances whose
/// parameters it declares (`k_t_i32::<f64>` must not launch the `float n` overload).
#[test]
fn template_overloads_of_one_arity_take_their_own_instances() {
    let src = "template <typename T>\n__global__ void k(T* x, int n) {}\ntemplate <typename T>\n__global__ void k(T* x, float n) {}\n";
    let bound = bind(read(src), &["_Z1kIfEvPT_i", "_Z1kIdEvPT_f"]);
    let got: Vec<(&str, Vec<&str>)> = bound
        .iter()
        .map(|s| (s.name.as_str(), s.generic.as_ref().unwrap().instances.iter().map(|i| i.ptx_name.as_str()).collect()))
        .collect();
    assert_eq!(got, [("k_t_i32", vec!["_Z1kIfEvPT_i"]), ("k_t_f32", vec!["_Z1kIdEvPT_f"])]);
}

/// ggml's unary ops (`float (*op)(const float)`) and its dequantizers through a typedef
/// (`dequantize_kernel_t`, read as an enum's name until an instance passes `&f(..)`): one
/// function parameter each, its instances' functions kept for the unit to name.
#[test]
fn templates_over_device_functions_are_typed_by_the_functions_passed() {
    let bound =
        bind(read("template <float (*op)(const float)>\n__global__ void unary(float *x, int n) {}\n"), &["_Z5unaryIXadL_Z6op_absfEEEvPfi"]);
    let g = bound[0].generic.as_ref().unwrap_or_else(|| panic!("{bound:#?}"));
    assert_eq!((g.const_params[0].ty, g.instances[0].values[0].as_str()), (ConstType::Function, "&op_abs(float)"));
    let src = "typedef void (*dequantize_kernel_t)(const void *vx, float &v);\ntemplate <int qk, dequantize_kernel_t dequantize_kernel>\n__global__ void k(float *x) {}\n";
    let bound = bind(read(src), &["_Z1kILi32EXadL_Z15dequantize_q4_0PKvRfEEEvPf"]);
    let g = bound[0].generic.as_ref().unwrap_or_else(|| panic!("{bound:#?}"));
    assert_eq!((g.const_params[1].ty, g.const_params[1].cxx_type.as_deref()), (ConstType::Function, None));
    assert_eq!(g.instances[0].values, ["32", "&dequantize_q4_0(void const*, float&)"]);
}

/// Kernels of one name and parameters in two namespaces (`c::kk`, `d::kk`) each take their own
/// namespace's entries and get its name in their method's (`c_kk`, `d_kk`): before, one method
/// launched both namespaces' `<1>` (a module that did not compile), or they were untyped.
/// Where the reader cannot see the namespaces (opened by a macro in an unpreprocessed file),
/// they stay untyped, with that reason.
#[test]
fn kernels_of_one_name_in_two_namespaces_get_a_method_each() {
    let names = |bound: &[KernelSig]| {
        bound.iter().map(|s| (s.name.clone(), s.ptx_names().join(" "), s.untyped.clone().unwrap_or_default())).collect::<Vec<_>>()
    };
    let src = "namespace c { template <int N> __global__ void kk(float *x) {} }\nnamespace d { template <int N> __global__ void kk(float *x) {} }\n";
    let bound = bind(read(src), &["_ZN1c2kkILi1EEEvPf", "_ZN1d2kkILi1EEEvPf"]);
    assert_eq!(
        names(&bound),
        [("c_kk".into(), "_ZN1c2kkILi1EEEvPf".into(), String::new()), ("d_kk".into(), "_ZN1d2kkILi1EEEvPf".into(), String::new())]
    );
    let src = "namespace a { template <typename T> __global__ void k(T *x, int n) {} }\nnamespace b { template <int N> __global__ void k(float *x, int n) {} }\n";
    let bound = bind(read(src), &["_ZN1a1kIfEEvPT_i", "_ZN1b1kILi7EEEvPfi"]);
    let got: Vec<(String, Vec<String>)> =
        bound.iter().map(|s| (s.name.clone(), s.generic.as_ref().unwrap().instances[0].args.clone())).collect();
    assert_eq!(got, [("a_k".into(), vec!["f32".into()]), ("b_k".into(), vec![])]);
    // One namespace's instances alone: the method keeps the C++ name.
    let bound = bind(read(src), &["_ZN1b1kILi7EEEvPfi"]);
    assert!(bound.iter().any(|s| s.name == "k" && s.generic.as_ref().is_some_and(|g| g.instances[0].values == ["7"])), "{bound:#?}");

    // Plain kernels (nvcc 13.0's names), a namespace nested in another, a definition qualified
    // outside the block that declared it (one kernel), and an overload inside one namespace.
    let src = "namespace a { __global__ void scale(float *x, float s) {} }\nnamespace b { __global__ void scale(float *x, float s) {} }\n\
               namespace ops { __global__ void relu(float *x, int n); }\n__global__ void ops::relu(float *x, int n) {}\n\
               namespace ops { namespace v2 { __global__ void relu(float *x, int n) {} } }\n\
               namespace ops { __global__ void relu(double *x, int n) {} }\n";
    let bound = bind(read(src), &["_ZN1a5scaleEPff", "_ZN1b5scaleEPff", "_ZN3ops4reluEPfi", "_ZN3ops2v24reluEPfi", "_ZN3ops4reluEPdi"]);
    let got: Vec<(String, String)> = names(&bound).into_iter().map(|(n, e, why)| (n, format!("{e}{why}"))).collect();
    assert_eq!(
        got,
        [
            ("a_scale".to_string(), "_ZN1a5scaleEPff".to_string()),
            ("b_scale".into(), "_ZN1b5scaleEPff".into()),
            ("ops_relu_f32_i32".into(), "_ZN3ops4reluEPfi".into()),
            ("ops_v2_relu".into(), "_ZN3ops2v24reluEPfi".into()),
            ("ops_relu_f64_i32".into(), "_ZN3ops4reluEPdi".into()),
        ]
    );

    let src = "#define BEGIN(n) namespace n {\n#define END }\nBEGIN(c) template <int N> __global__ void kk(float *x) {} END\nBEGIN(d) template <int N> __global__ void kk(float *x) {} END\n";
    let bound = bind(read(src), &["_ZN1c2kkILi1EEEvPf", "_ZN1d2kkILi1EEEvPf"]);
    assert_eq!(names(&bound)[0].2, "templates of one name in several namespaces (`c::kk`, `d::kk`), which the signature reader does not tell apart: each instance is launched by its PTX name");
}

/// A value parameter of a class template's type: ggml's `dequantize_kq_t<dst_t>` (an alias
/// template of a function pointer: its instances pass functions, typed) and PyTorch's
/// SFINAE (`std::enable_if_t<.., bool> = true`, `typename std::enable_if<..>::type = 0`:
/// untyped, with that reason).
#[test]
fn values_of_a_class_templates_type_are_functions_or_sfinae() {
    let src = "template <typename dst_t> using dequantize_kq_t = void (*)(const void *, dst_t *);\ntemplate <typename dst_t, dequantize_kq_t<dst_t> dq>\n__global__ void g(dst_t *y) {}\n";
    let bound = bind(read(src), &["_Z1gIfXadL_Z3deqIfEvPKvPT_EEEvPT_"]);
    let g = bound[0].generic.as_ref().unwrap_or_else(|| panic!("{bound:#?}"));
    assert_eq!(g.const_params[0].ty, ConstType::Function);
    assert_eq!(g.instance_args(&g.instances[0]), ["f32", "&deq<float>(void const*, float*)"]);
    for (decl, entry) in [
        ("std::enable_if_t<std::is_integral<T>::value, bool> = true", "_Z1kIiLb1EEvPT_"),
        ("typename std::enable_if<std::is_integral<T>::value, int>::type = 0", "_Z1kIiLi0EEvPT_"),
    ] {
        let bound = bind(read(&format!("template <typename T, {decl}>\n__global__ void k(T *x) {{}}\n")), &[entry]);
        let why = bound[0].untyped.as_deref().unwrap_or_else(|| panic!("{decl}: {bound:#?}"));
        assert!(why.contains("is a value of a class template's type (`std enable_if") && why.contains("SFINAE's"), "{why}");
    }
}

/// Overloads by template parameters alone: no name tells them apart, so both are launched
/// by name (the build is not refused for legal C++).
#[test]
fn templates_differing_only_in_their_template_parameters_are_untyped() {
    let src = "template <int N>\n__global__ void k(float* x) {}\ntemplate <int N, int M>\n__global__ void k(float* x) {}\n";
    let bound = bind(read(src), &["_Z1kILi1EEvPf", "_Z1kILi1ELi2EEvPf"]);
    assert_eq!(bound.len(), 2, "{bound:#?}");
    for sig in &bound {
        assert!(sig.untyped.as_deref().is_some_and(|u| u.starts_with("another template of this name has the same parameters")), "{sig:#?}");
    }
    // The list still finds each instance's declaration by its name.
    assert!(bound.iter().all(|s| s.mangled && s.name == "k"));
}

/// ggml's getrows, solve_tri, pad..: C++ kernels with `size_t` parameters, whose mangled
/// names say `unsigned long` (151 of ggml-cuda's kernels were untyped for it).
#[test]
fn size_t_parameters_match_the_unsigned_long_of_the_mangled_name() {
    let src = "__global__ void k_sz(const float *x, size_t n, float *y) {}\ntemplate <int N> __global__ void k_szt(const float *x, size_t n, ptrdiff_t d) {}\n";
    let bound = bind(read(src), &["_Z4k_szPKfmPf", "_Z5k_sztILi1EEvPKfml"]);
    assert!(bound.iter().all(|s| s.untyped.is_none() && !s.mangled), "{bound:#?}");
    let by_name = |n: &str| bound.iter().find(|s| s.name == n).unwrap_or_else(|| panic!("{n}: {bound:#?}"));
    assert_eq!(by_name("k_sz").params[1].ty, ParamType::Scalar(Scalar::Usize));
    assert_eq!(by_name("k_szt").generic.as_ref().unwrap().instances[0].values, ["1"]);
}

/// sppark's `fr_t` (`typedef gl64_t fr_t;` in a header the .cu file includes) and a header's
/// `typedef float real;`: the mangled names spell what the typedef stands for, which the
/// methods then take. Such templates were dropped as "not declared in a form the signature
/// reader follows".
#[test]
fn parameters_named_by_a_headers_typedef_take_the_mangled_names_type() {
    let src =
        "template <int POW>\n__global__ void pw(fr_t *x, const real *y, real s, size_t n) {}\n__global__ void cp(fr_t *x, index_t i) {}\n";
    let bound = bind(read(src), &["_Z2pwILi3EEvP6gl64_tPKffm", "_Z2pwILi7EEvP6gl64_tPKffm", "_Z2cpP6gl64_ti"]);
    let by_name = |n: &str| bound.iter().find(|s| s.name == n).unwrap_or_else(|| panic!("{n}: {bound:#?}"));
    let (pw, cp) = (by_name("pw"), by_name("cp"));
    assert!(pw.untyped.is_none() && !pw.mangled && pw.generic.as_ref().is_some_and(|g| g.instances.len() == 2), "{pw:#?}");
    let gl64 = |mutable| ParamType::Pointer { mutable, elem: "gl64_t".into() };
    let tys: Vec<&ParamType> = pw.params.iter().map(|p| &p.ty).collect();
    let f32_in = ParamType::Pointer { mutable: false, elem: "f32".into() };
    assert_eq!(tys, [&gl64(true), &f32_in, &ParamType::Scalar(Scalar::F32), &ParamType::Scalar(Scalar::Usize)]);
    assert_eq!(
        (cp.ptx_name.as_deref(), &cp.params[0].ty, &cp.params[1].ty),
        (Some("_Z2cpP6gl64_ti"), &gl64(true), &ParamType::Scalar(Scalar::I32))
    );
    // A pointer where the source passes a value is no typedef.
    let bound = bind(read("__global__ void v(fr_t x) {}\n"), &["_Z1vP6gl64_t"]);
    assert!(bound[0].mangled && bound[0].ptx_name.is_none(), "{bound:#?}");
    // Instances that pass different types there: launched by name, with the reason.
    let bound = bind(read("template <int N>\n__global__ void d(fr_t *x) {}\n"), &["_Z1dILi1EEvP6gl64_t", "_Z1dILi2EEvPf"]);
    let why = bound[0].untyped.as_deref().unwrap_or_else(|| panic!("{bound:#?}"));
    assert!(why.starts_with("its instances pass different types as `x`, whose type is named by a typedef"), "{why}");
}

#[test]
fn plain_cxx_kernels_keep_their_name_and_overloads_get_typed_names() {
    let sigs = read(
        "__global__ void permute(float *out, const float *in, int n) {}\nnamespace ns {\n__global__ void scale(float *x, int n) {}\n__global__ void scale(double *x, int n) {}\n}\n",
    );
    let bound = bind(sigs, &["_Z7permutePfPKfi", "_ZN2ns5scaleEPfi", "_ZN2ns5scaleEPdi"]);
    let names: Vec<(&str, Option<&str>)> = bound.iter().map(|s| (s.name.as_str(), s.ptx_name.as_deref())).collect();
    assert_eq!(
        names,
        [("permute", Some("_Z7permutePfPKfi")), ("scale_f32_i32", Some("_ZN2ns5scaleEPfi")), ("scale_f64_i32", Some("_ZN2ns5scaleEPdi"))]
    );
    assert!(bound[2].doc.iter().any(|d| d.contains("C++ `ns::scale(double*, int)`")), "{:?}", bound[2].doc);
}

/// Batched kernels' arrays of device addresses, as nvcc 13.0 mangles them: a plain kernel, an
/// overload of a pointer and a pointer to pointers, a template over the addresses' element type.
#[test]
fn buffers_of_device_addresses_bind_to_their_mangled_names() {
    let sigs = read(
        "__global__ void batched(const float *const *a, float **c, int n) {}\n__global__ void over(float *x) {}\n__global__ void over(float **x) {}\n\
         template <typename T> __global__ void tbatched(const T *const *a, T **c, int n) {}\n",
    );
    let bound =
        bind(sigs, &["_Z7batchedPKPKfPPfi", "_Z4overPf", "_Z4overPPf", "_Z8tbatchedIfEvPKPKT_PPS0_i", "_Z8tbatchedIdEvPKPKT_PPS0_i"]);
    let mut names: Vec<(&str, Option<&str>, Option<&str>)> =
        bound.iter().map(|s| (s.name.as_str(), s.ptx_name.as_deref(), s.untyped.as_deref())).collect();
    names.sort();
    assert_eq!(
        names,
        [
            ("batched", Some("_Z7batchedPKPKfPPfi"), None),
            ("over_f32", Some("_Z4overPf"), None),
            ("over_f32ptr", Some("_Z4overPPf"), None),
            ("tbatched", None, None)
        ]
    );
    let t = bound.iter().find(|s| s.name == "tbatched").unwrap();
    let g = t.generic.as_ref().unwrap_or_else(|| panic!("{t:#?}"));
    assert_eq!(g.instances.iter().map(|i| i.args[0].as_str()).collect::<Vec<_>>(), ["f32", "f64"]);
    // Each instance's addresses are of its own type.
    let mono = t.monomorphic();
    assert_eq!(mono[1].1.params[1].ty, ParamType::Addresses { mutable: true, pointee: "*mut f64".into() });
    assert_eq!(mono[0].1.params[0].ty, ParamType::Addresses { mutable: false, pointee: "*const f32".into() });
}

/// llm.c's matmul_backward_bias_kernel8, as nvcc 13.0 names its two instances: the value
/// `Atomic` is only in the unnamed tag's type, and becomes the method's const parameter.
#[test]
fn a_template_value_in_a_standard_tag_is_a_const_parameter() {
    let sigs = read(
        "#include <cuda_bf16.h>\ntypedef __nv_bfloat16 floatX;\ntemplate<typename OutFloat, bool Atomic>\n__global__ void matmul_backward_bias_kernel8(OutFloat* dbias, const floatX* dout, int B, int T, int OC,\n    std::bool_constant<Atomic>) {}\n",
    );
    let bound = bind(
        sigs,
        &[
            "_Z28matmul_backward_bias_kernel8I13__nv_bfloat16Lb0EEvPT_PKS0_iiiSt17integral_constantIbXT0_EE",
            "_Z28matmul_backward_bias_kernel8IfLb1EEvPT_PK13__nv_bfloat16iiiSt17integral_constantIbXT0_EE",
        ],
    );
    assert_eq!(bound.len(), 1);
    assert_eq!(bound[0].untyped, None, "{:#?}", bound[0]);
    let g = bound[0].generic.as_ref().unwrap();
    assert_eq!((g.type_params.as_slice(), g.const_params[0].name.as_str()), (&["OutFloat".to_string()][..], "Atomic"));
    let instances: Vec<(&str, &str)> = g.instances.iter().map(|i| (i.args[0].as_str(), i.values[0].as_str())).collect();
    assert_eq!(instances, [("::ptx_runtime::half::bf16", "false"), ("f32", "true")]);
    assert_eq!(bound[0].params[5].ty, ParamType::Tag { written: "std::bool_constant<Atomic>".into() });
}
