//! C++ parameter packs (ggml's binbcast: `template <.., typename... src1_ptrs>`, `src1_ptrs...
//! src1s`): each instance's pack elements are parameters of its own after the others, which a
//! typed method takes as one array of the pack's length.

use super::{host_type, launch_type, Demangled};
use crate::embed::signature::{Generic, ParamType};

/// Whether instance `d` has as many template arguments as `g` has parameters, a parameter
/// pack's elements counted one argument each (any number of them).
pub(super) fn template_args_fit(g: &Generic, d: &Demangled) -> bool {
    let declared = g.type_params.len() + g.const_params.len();
    match g.pack {
        None => d.template_args.len() == declared,
        // The pack's length is one of `const_params`, its elements are arguments of their own.
        Some(_) => d.template_args.len() + 1 >= declared,
    }
}

/// An instance's pack elements as launch types, from its pack's template arguments (`args`)
/// and the parameter as written: `Ps... srcs` takes each argument as it is (`float const*`),
/// `const Ts *... ptrs` a pointer to each. (Not from the demangled parameters: cpp_demangle
/// 0.5 writes `DpPKT_` over `<float, float>` as `float, float const*`.)
pub(super) fn pack_elements(written: &ParamType, args: &[String]) -> Result<Vec<ParamType>, String> {
    args.iter()
        .map(|a| {
            let ty = match written {
                ParamType::Pointer { mutable, .. } if a == "void" => Some(ParamType::AnyPointer { mutable: *mutable }),
                ParamType::Pointer { mutable, .. } => host_type(a).map(|elem| ParamType::Pointer { mutable: *mutable, elem }),
                // An empty tag has no element the method could take.
                _ => launch_type(a).filter(|t| !matches!(t, ParamType::Tag { .. })),
            };
            ty.ok_or_else(|| format!("has an element of a type with no Rust form (`{a}`)"))
        })
        .collect()
}

/// The type of a parameter pack's elements in every instance (`packs`: each instance's type
/// arguments and its elements' types): the one type they all have (ggml's fused adds pass
/// `const float *` elements), else one of the template's type parameters that every
/// instance's elements follow (`const T *` for `float` and `__half` instances of `T`); `None`
/// where every pack is empty. Or why there is none.
pub(super) fn pack_element(type_params: &[String], packs: &[(Vec<String>, Vec<ParamType>)]) -> Result<Option<ParamType>, String> {
    let mut common: Option<Vec<ParamType>> = None;
    for (args, types) in packs.iter().filter(|(_, e)| !e.is_empty()) {
        if types.windows(2).any(|w| w[0] != w[1]) {
            let listed: Vec<String> = types.iter().map(spelled).collect();
            return Err(format!(
                "has elements of different types in one instance ({}), which one Rust array cannot hold",
                listed.join(", ")
            ));
        }
        // The element's own type, and each type parameter it is an instance of.
        let mut forms = vec![types[0].clone()];
        for (t, arg) in type_params.iter().zip(args) {
            match &types[0] {
                ParamType::Pointer { mutable, elem } if elem == arg => {
                    forms.push(ParamType::Pointer { mutable: *mutable, elem: t.clone() })
                }
                ParamType::Scalar(s) if s.rust_name() == arg => forms.push(ParamType::ByValue { ty: t.clone() }),
                ParamType::ByValue { ty } if ty == arg => forms.push(ParamType::ByValue { ty: t.clone() }),
                _ => {}
            }
        }
        common = Some(match common {
            None => forms,
            Some(before) => before.into_iter().filter(|f| forms.contains(f)).collect(),
        });
    }
    // The element's own type came first: it stays first where every instance has it.
    match common.map(|c| c.into_iter().next()) {
        None => Ok(None),
        Some(Some(f)) => Ok(Some(f)),
        Some(None) => Err("has elements of different types in different instances, which no one type parameter names".into()),
    }
}

/// An element type for a message, as the host would name it (`*const f32`, `i32`).
fn spelled(t: &ParamType) -> String {
    match t {
        ParamType::Scalar(s) => format!("`{}`", s.rust_name()),
        ParamType::Pointer { mutable, elem } => format!("`*{} {elem}`", if *mutable { "mut" } else { "const" }),
        ParamType::AnyPointer { mutable } => format!("`*{} c_void`", if *mutable { "mut" } else { "const" }),
        ParamType::Addresses { mutable, pointee } => format!("`*{} {pointee}`", if *mutable { "mut" } else { "const" }),
        ParamType::Tag { written } => format!("`{written}`"),
        ParamType::ByValue { ty } => format!("`{ty}`"),
    }
}

#[cfg(test)]
mod tests {
    use super::super::bind;
    use crate::embed::signature::{ConstType, KernelSig, Pack, ParamType, Scalar};

    fn read(src: &str) -> Vec<KernelSig> {
        crate::embed::signature::cuda_kernels_in(std::path::Path::new("k.cu"), src).unwrap()
    }

    /// ggml's binbcast, cut down: the pack is the last template parameter and the last function
    /// parameter; nvcc 13.0's names for its instances with 0, 1 and 2 fused `const float *`.
    #[test]
    fn a_trailing_parameter_pack_becomes_a_length_and_an_array_of_its_elements() {
        let sigs = read(
            "template <float (*bin_op)(const float, const float), typename src0_t, typename src1_t, typename dst_t, typename... src1_ptrs>\n\
             static __global__ void k_bin_bcast(const src0_t * src0, const src1_t * src1, dst_t * dst, const int ne0, src1_ptrs... src1s) {}\n",
        );
        let entries = [
            "_Z11k_bin_bcastIXadL_ZN34_INTERNAL_01da1048_4_k_cu_fbf0d09f6op_addEffEEfffJEEvPKT0_PKT1_PT2_iDpT3_",
            "_Z11k_bin_bcastIXadL_ZN34_INTERNAL_01da1048_4_k_cu_fbf0d09f6op_addEffEEfffJPKfEEvPKT0_PKT1_PT2_iDpT3_",
            "_Z11k_bin_bcastIXadL_ZN34_INTERNAL_01da1048_4_k_cu_fbf0d09f6op_addEffEEfffJPKfS2_EEvPKT0_PKT1_PT2_iDpT3_",
        ];
        let bound = bind(sigs, &entries);
        assert_eq!(bound.len(), 1, "{bound:#?}");
        let k = &bound[0];
        assert_eq!(k.untyped, None);
        assert_eq!(k.params.len(), 4, "the pack's parameter is the array's, not one of these: {:?}", k.params);
        let g = k.generic.as_ref().unwrap();
        assert_eq!(g.type_params, ["src0_t", "src1_t", "dst_t"]);
        let pack = g.const_params.last().unwrap();
        assert_eq!((pack.name.as_str(), pack.ty, pack.position), ("src1_ptrs", ConstType::PackLength, 4));
        // All three instances pass `const float *` elements: that type, not a type parameter
        // that happens to be `float` in each.
        assert_eq!(
            g.pack,
            Some(Pack {
                param: "src1s".into(),
                written: ParamType::ByValue { ty: "src1_ptrs".into() },
                elem: Some(ParamType::Pointer { mutable: false, elem: "f32".into() })
            })
        );
        let lens: Vec<Option<usize>> = g.instances.iter().map(|i| g.pack_len(i)).collect();
        assert_eq!(lens, [Some(0), Some(1), Some(2)]);
        // Each instance's entry has its elements as parameters of their own, after the others.
        // ggml's fused adds over its type combinations pass `const src1_t *`: `float` elements
        // for `<float, float, float>` and `<__half, float, __half>`, `__half` for `<__half,
        // __half, __half>`. Only `src1_t` follows all three.
        let fused = [
            "_Z11k_bin_bcastIXadL_ZN35_INTERNAL_4cc25d8a_5_k3_cu_b2ee18ab6op_addEffEEfffJPKfS2_EEvPKT0_PKT1_PT2_iDpT3_",
            "_Z11k_bin_bcastIXadL_ZN35_INTERNAL_4cc25d8a_5_k3_cu_b2ee18ab6op_addEffEE6__halfS1_S1_JPKS1_S3_EEvPKT0_PKT1_PT2_iDpT3_",
            "_Z11k_bin_bcastIXadL_ZN35_INTERNAL_4cc25d8a_5_k3_cu_b2ee18ab6op_addEffEE6__halffS1_JPKfS3_EEvPKT0_PKT1_PT2_iDpT3_",
        ];
        let src = "#include <cuda_fp16.h>\n\
             template <float (*bin_op)(const float, const float), typename src0_t, typename src1_t, typename dst_t, typename... src1_ptrs>\n\
             static __global__ void k_bin_bcast(const src0_t * src0, const src1_t * src1, dst_t * dst, const int ne0, src1_ptrs... src1s) {}\n";
        let g = bind(read(src), &fused).remove(0).generic.unwrap();
        assert_eq!(g.pack.unwrap().elem, Some(ParamType::Pointer { mutable: false, elem: "src1_t".into() }));

        let mono = k.monomorphic();
        let names: Vec<&str> = mono[2].1.params.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["src0", "src1", "dst", "ne0", "src1s[0]", "src1s[1]"]);
        assert_eq!(mono[2].1.name, "k_bin_bcast::<&op_add(float, float), f32, f32, f32, 2>");
    }

    /// Elements that follow a type parameter (`float` elements for `T = float`, `__half` for
    /// `__half`) are that parameter's; elements of two types in one instance, or a pack the
    /// last parameter does not expand, leave the kernel untyped, with the reason.
    #[test]
    fn pack_elements_of_a_type_parameter_and_packs_without_one_rust_form() {
        let src = "#include <cuda_fp16.h>\n\
            template <typename T, typename... Ps>\n__global__ void fused(T *dst, int n, Ps... srcs) {}\n\
            template <typename... Ts>\n__global__ void sum_ptrs(float *dst, int n, const Ts *... ptrs) {}\n\
            template <typename... Ts>\n__global__ void unexpanded(float *dst, int n) {}\n\
            template <int... Ns>\n__global__ void values(float *dst) {}\n";
        // nvcc 13.0: fused<float>(d, n, a, a), fused<__half>(h, n, b), sum_ptrs(d, n, a, a),
        // sum_ptrs(d, n, a, b) (a `float` and a `__half` pointer).
        let entries = [
            "_Z5fusedIfJPKfS1_EEvPT_iDpT0_",
            "_Z5fusedI6__halfJPKS0_EEvPT_iDpT0_",
            "_Z8sum_ptrsIJffEEvPfiDpPKT_",
            "_Z8sum_ptrsIJf6__halfEEvPfiDpPKT_",
        ];
        let bound = bind(read(src), &entries);
        let by_name = |n: &str| bound.iter().find(|k| k.name == n).unwrap_or_else(|| panic!("{n}: {bound:#?}"));
        let fused = by_name("fused");
        assert_eq!(fused.untyped, None);
        let g = fused.generic.as_ref().unwrap();
        assert_eq!(g.pack.as_ref().unwrap().elem, Some(ParamType::Pointer { mutable: false, elem: "T".into() }));
        let mono = fused.monomorphic();
        assert_eq!(mono[1].1.params[2].ty, ParamType::Pointer { mutable: false, elem: "::ptx_runtime::half::f16".into() });
        assert_eq!(mono[0].1.params[1].ty, ParamType::Scalar(Scalar::I32));

        let sum = by_name("sum_ptrs");
        assert!(
            sum.untyped.as_deref().is_some_and(|u| u.starts_with("its parameter pack `ptrs` has elements of different types in one instance (`*const f32`, `*const ::ptx_runtime::half::f16`)")),
            "{:?}",
            sum.untyped
        );
        let unexpanded = by_name("unexpanded");
        assert!(
            unexpanded.untyped.as_deref().is_some_and(|u| u.contains("parameter pack that the kernel's last parameter does not expand")),
            "{:?}",
            unexpanded.untyped
        );
        // Elements of one type each but not the same across instances, and none that a type
        // parameter follows; an element with no Rust type.
        let src = "template <typename... Ts>\n__global__ void s(float *dst, Ts... xs) {}\n";
        let why = |entries: &[&str]| bind(read(src), entries).remove(0).untyped.unwrap_or_default();
        // A pack of empty tags (nvcc 13.0's name of `s<std::true_type>`): no element a method takes.
        assert!(
            why(&["_Z1sIJSt17integral_constantIbLb1EEEEvPfDpT_"]).contains("has an element of a type with no Rust form"),
            "{}",
            why(&["_Z1sIJSt17integral_constantIbLb1EEEEvPfDpT_"])
        );
        assert_eq!(
            why(&["_Z1sIJfEEvPfDpT_", "_Z1sIJiEEvPfDpT_"]),
            "its parameter pack `xs` has elements of different types in different instances, which no one type parameter names: each instance is launched by its PTX name"
        );
        assert_eq!(
            why(&["_Z1sIJeEEvPfDpT_"]),
            "its parameter pack `xs` has an element of a type with no Rust form (`long double`): each instance is launched by its PTX name"
        );
        let values = by_name("values");
        assert!(values.untyped.as_deref().is_some_and(|u| u.contains("`int Ns` is a parameter pack of values")), "{:?}", values.untyped);
    }
}
