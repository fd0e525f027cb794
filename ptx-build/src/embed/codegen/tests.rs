//! The generated module's tests: its pieces, and the whole against a golden file.

use super::*;
use crate::embed::functions::FunctionMarker;
use crate::embed::signature::{ConstParam, ConstType, Generic, Instance, Pack, Param, Scalar};

pub(crate) fn sample() -> Vec<Unit> {
    let sig = |name: &str, params: Vec<(&str, ParamType)>| KernelSig {
        name: name.into(),
        params: params.into_iter().map(|(n, ty)| Param { name: n.into(), ty }).collect(),
        file: "src/lib.rs".into(),
        line: 7,
        mangled: false,
        untyped: None,
        doc: vec![" `y = a * x + y` for `i < n`.".into()],
        generic: None,
        ptx_name: None,
        namespace: String::new(),
    };
    vec![Unit {
        name: "saxpy_kernels".into(),
        kernels: vec![
            sig(
                "saxpy",
                vec![
                    ("n", ParamType::Scalar(Scalar::U32)),
                    ("a", ParamType::Scalar(Scalar::F32)),
                    ("x", ParamType::Pointer { mutable: false, elem: "f32".into() }),
                    ("y", ParamType::Pointer { mutable: true, elem: "f32".into() }),
                ],
            ),
            sig("type", vec![("p", ParamType::ByValue { ty: "Pair".into() })]),
            KernelSig {
                generic: Some(Generic {
                    type_params: vec!["T".into()],
                    const_params: Vec::new(),
                    instances: vec![
                        Instance { args: vec!["f32".into()], values: Vec::new(), ptx_name: "_Z3addIfEvPT_PKS0_i".into() },
                        Instance {
                            args: vec!["::ptx_runtime::half::f16".into()],
                            values: Vec::new(),
                            ptx_name: "_Z3addI6__halfEvPT_PKS1_i".into(),
                        },
                    ],
                    pack: None,
                }),
                ..sig(
                    "add",
                    vec![
                        ("y", ParamType::Pointer { mutable: true, elem: "T".into() }),
                        ("x", ParamType::Pointer { mutable: false, elem: "T".into() }),
                        ("n", ParamType::Scalar(Scalar::I32)),
                    ],
                )
            },
            KernelSig {
                generic: Some(Generic {
                    type_params: vec!["T".into(), "U".into()],
                    const_params: Vec::new(),
                    instances: vec![Instance {
                        args: vec!["f32".into(), "u32".into()],
                        values: Vec::new(),
                        ptx_name: "cast_f32_u32".into(),
                    }],
                    pack: None,
                }),
                ..sig(
                    "cast",
                    vec![
                        ("x", ParamType::Pointer { mutable: false, elem: "T".into() }),
                        ("y", ParamType::Pointer { mutable: true, elem: "U".into() }),
                        ("fill", ParamType::ByValue { ty: "U".into() }),
                    ],
                )
            },
            // ggml's `template <ggml_type type, typename dst_t, int ncols, bool has_fusion>`:
            // const parameters between and after the type's, one named like a Rust keyword.
            KernelSig {
                generic: Some(Generic {
                    type_params: vec!["dst_t".into()],
                    const_params: vec![
                        ConstParam {
                            name: "type".into(),
                            ty: ConstType::Value(Scalar::I32),
                            cxx_type: Some("ggml_type".into()),
                            position: 0,
                        },
                        ConstParam { name: "ncols".into(), ty: ConstType::Value(Scalar::I32), cxx_type: None, position: 2 },
                        ConstParam { name: "has_fusion".into(), ty: ConstType::Value(Scalar::Bool), cxx_type: None, position: 3 },
                    ],
                    instances: vec![
                        Instance {
                            args: vec!["f32".into()],
                            values: vec!["8".into(), "128".into(), "true".into()],
                            ptx_name: "_Z13mul_mat_vec_qIL9ggml_type8EfLi128ELb1EEvPKvPT0_i".into(),
                        },
                        Instance {
                            args: vec!["::ptx_runtime::half::f16".into()],
                            values: vec!["2".into(), "-1".into(), "false".into()],
                            ptx_name: "_Z13mul_mat_vec_qIL9ggml_type2E6__halfLin1ELb0EEvPKvPT0_i".into(),
                        },
                    ],
                    pack: None,
                }),
                ..sig(
                    "mul_mat_vec_q",
                    vec![
                        ("vx", ParamType::AnyPointer { mutable: false }),
                        ("dst", ParamType::Pointer { mutable: true, elem: "dst_t".into() }),
                        ("n", ParamType::Scalar(Scalar::I32)),
                    ],
                )
            },
            // ggml's unary ops: `template <float (*op)(float), typename T>`.
            KernelSig {
                generic: Some(Generic {
                    type_params: vec!["T".into()],
                    const_params: vec![ConstParam { name: "op".into(), ty: ConstType::Function, cxx_type: None, position: 0 }],
                    instances: vec![
                        Instance {
                            args: vec!["f32".into()],
                            values: vec!["self::saxpy_kernels::op_abs".into()],
                            ptx_name: "_Z8unary_opIXadL_Z6op_absfEEfEvPKT0_PS1_i".into(),
                        },
                        Instance {
                            args: vec!["f32".into()],
                            values: vec!["self::saxpy_kernels::r#type".into()],
                            ptx_name: "_Z8unary_opIXadL_Z4typefEEfEvPKT0_PS1_i".into(),
                        },
                    ],
                    pack: None,
                }),
                ..sig(
                    "unary_op",
                    vec![
                        ("x", ParamType::Pointer { mutable: false, elem: "T".into() }),
                        ("y", ParamType::Pointer { mutable: true, elem: "T".into() }),
                        ("n", ParamType::Scalar(Scalar::I32)),
                    ],
                )
            },
        ],
        images: vec![
            EmbeddedImage {
                arch: Arch::sm(80),
                kind: ArtifactKind::Ptx,
                file: "ptx-build/k/sm_80.ptx".into(),
                ptx_isa: Some("7.0".into()),
                linked: Some(("__ptx_build_0123".into(), 1520)),
            },
            EmbeddedImage {
                arch: Arch::sm(80),
                kind: ArtifactKind::Cubin,
                file: "ptx-build/k/sm_80.cubin".into(),
                ptx_isa: None,
                linked: Some(("__ptx_build_4567".into(), 3904)),
            },
        ],
        struct_layouts: vec![StructLayout { kernel: "type".into(), param: 0, size: 8, align: 4 }],
        untyped: vec!["_Z6gatherPPKfPf".into()],
        // `saxpy` with `launch_bounds(256)`, and one instance of a generic kernel with one.
        launch_bounds: vec![("saxpy".into(), 256), ("_Z3addI6__halfEvPT_PKS1_i".into(), 128)],
        functions: vec![
            FunctionMarker { name: "op_abs".into(), function: "op_abs(float)".into() },
            FunctionMarker { name: "r#type".into(), function: "type(float)".into() },
        ],
        object: None,
        partial: Vec::new(),
        // One instance of `add` syncs its grid.
        cooperative: vec!["_Z3addIfEvPT_PKS0_i".into()],
    }]
}

#[test]
fn a_kernel_some_images_lack_says_which_have_it() {
    let mut units = sample();
    units[0].partial = vec![("saxpy".into(), vec![Arch::sm(80), Arch::sm(90)]), ("_Z3addI6__halfEvPT_PKS1_i".into(), vec![Arch::sm(80)])];
    let code = generate(&units).unwrap();
    assert!(code.contains("/// It is only in the sm_80, sm_90 images (its source leaves it out for other archs): on a GPU that loads another image the launch returns `LaunchError::NotInImage`."), "{code}");
    assert!(code.contains("/// Of its instances, `::ptx_runtime::half::f16` is only in the sm_80 image (its source"), "{code}");
    assert_eq!(code.matches("LaunchError::NotInImage").count(), 2, "{code}");
    // The runtime lets these two, and only these, be absent from the loaded image.
    let partial = code.split("pub const PARTIAL: &[&str] = &[").nth(1).and_then(|r| r.split("];").next()).unwrap();
    let names: Vec<&str> = partial.split(',').map(|n| n.trim().trim_matches('"')).filter(|n| !n.is_empty()).collect();
    assert_eq!(names, ["saxpy", "_Z3addI6__halfEvPT_PKS1_i"]);
}

/// Instances in different images are named with theirs: the archs of all of them together
/// (every image has one) said nothing of which one a GPU lacks; instances alike are one sentence.
#[test]
fn instances_some_images_lack_are_each_named_with_their_archs() {
    let mut units = sample();
    units[0].partial = vec![("_Z3addIfEvPT_PKS0_i".into(), vec![Arch::sm(90)]), ("_Z3addI6__halfEvPT_PKS1_i".into(), vec![Arch::sm(80)])];
    let code = generate(&units).unwrap();
    assert!(
        code.contains("/// Of its instances, `f32` is only in the sm_90 image; `::ptx_runtime::half::f16` is only in the sm_80 image (its source leaves it out"),
        "{code}"
    );
    units[0].partial = vec![("_Z3addIfEvPT_PKS0_i".into(), vec![Arch::sm(90)]), ("_Z3addI6__halfEvPT_PKS1_i".into(), vec![Arch::sm(90)])];
    let code = generate(&units).unwrap();
    let add = code.split("/// Launches `add`").nth(1).unwrap().split("pub unsafe fn").next().unwrap();
    assert!(add.contains("/// It is only in the sm_90 image (its source leaves it out for other archs)"), "{add}");
}

#[test]
fn images_without_an_object_are_included_from_out_dir() {
    let mut units = sample();
    for img in &mut units[0].images {
        img.linked = None;
    }
    let code = generate(&units).unwrap();
    assert!(!code.contains("extern \"C\""), "{code}");
    for line in [
        "pub static PTX_SM_80: &str = include_str!(",
        "concat!(env!(\"OUT_DIR\"), \"/ptx-build/k/sm_80.ptx\")",
        "pub static CUBIN_SM_80: &[u8] = include_bytes!(",
        "concat!(env!(\"OUT_DIR\"), \"/ptx-build/k/sm_80.cubin\")",
    ] {
        assert!(code.contains(line), "{line}\n{code}");
    }
}

#[test]
fn a_kernels_own_safety_section_is_the_methods_only_one() {
    let mut units = sample();
    let doc = [" Scales.", "", " # Safety", " `x` and `y` hold `n` floats.", "", " # Examples", " See the tests."];
    units[0].kernels[0].doc = doc.iter().map(|l| l.to_string()).collect();
    let code = generate(&units).unwrap();
    let method = code.split("pub unsafe fn saxpy(").next().unwrap();
    let method = &method[method.rfind("    /// Scales.").expect("the kernel's summary comes first")..];
    assert_eq!(method.matches("# Safety").count(), 1, "{method}");
    // Summary, launch notes, the kernel's Safety with the launch's caveat, then its Examples.
    let at = |needle: &str| method.find(needle).unwrap_or_else(|| panic!("{needle}: {method}"));
    let order =
        ["Scales.", "Launches `saxpy`", "`grid`:", "# Safety", "hold `n` floats.", "Nothing checks", "# Examples", "See the tests."];
    assert!(order.windows(2).all(|w| at(w[0]) < at(w[1])), "{method}");
    // A doctest's hidden line in the Safety section is code, not the next heading.
    let doc = [" Scales.", "", " # Safety", " ```", " # let n = 4;", " ```", " `n` floats.", "", " # Examples", " See."];
    units[0].kernels[0].doc = doc.iter().map(|l| l.to_string()).collect();
    let code = generate(&units).unwrap();
    let method = code.split("pub unsafe fn saxpy(").next().unwrap();
    let (fence_end, caveat) = (method.rfind("/// ```").unwrap(), method.find("Nothing checks").unwrap());
    assert!(fence_end < caveat && caveat < method.find("# Examples").unwrap(), "{method}");
}

/// The whole generated module against its golden file
/// (`src/embed/codegen/snapshots/ptx_build__embed__codegen__tests__saxpy_module.snap`). After an intended change,
/// regenerate it with `INSTA_UPDATE=always cargo test -p ptx-build codegen` (or
/// `cargo insta review`) and read the diff.
#[test]
fn generated_module_matches_the_golden_file() {
    insta::assert_snapshot!("saxpy_module", generate(&sample()).unwrap());
}

#[test]
fn const_parameters_are_const_generics_in_the_templates_order() {
    let code = generate(&sample()).unwrap();
    // prettyplease's trailing commas aside.
    let flat = code.replace(char::is_whitespace, "").replace(",>", ">").replace(",)", ")");
    assert!(
        flat.contains(
            "pubstructMulMatVecQInstance<constr#type:i32,dst_t,constncols:i32,consthas_fusion:bool>(::core::marker::PhantomData<(dst_t)>);"
        ),
        "{code}"
    );
    assert!(flat.contains("implMulMatVecQInstancesforMulMatVecQInstance<8,f32,128,true>"), "{code}");
    // A negative value is a block.
    assert!(flat.contains("forMulMatVecQInstance<2,::ptx_runtime::half::f16,{-1},false>"), "{code}");
    assert!(
        flat.contains("pubunsafefnmul_mat_vec_q<constr#type:i32,dst_t:::ptx_runtime::cudarc::driver::DeviceRepr,constncols:i32,consthas_fusion:bool>("),
        "{code}"
    );
    // Const arguments in braces: a module named `ncols` in scope must not be taken for it.
    assert!(flat.contains("whereMulMatVecQInstance<{r#type},dst_t,{ncols},{has_fusion}>:MulMatVecQInstances"), "{code}");
    assert!(code.contains("`type` is a `ggml_type` by its integer value."), "{code}");
    assert!(
        code.contains(
            "with the template arguments it is instantiated with: `<8, f32, 128, true>`, `<2, ::ptx_runtime::half::f16, -1, false>`."
        ),
        "{code}"
    );
}

#[test]
fn names_rust_cannot_spell_even_raw_get_an_underscore() {
    // Legal C++ parameter names; `r#self` is no Rust identifier.
    let mut units = sample();
    for (p, name) in units[0].kernels[0].params.iter_mut().zip(["self", "super", "crate", "type"]) {
        p.name = name.into();
    }
    units[0].kernels.iter_mut().find(|k| k.name == "mul_mat_vec_q").unwrap().generic.as_mut().unwrap().const_params[1].name = "Self".into();
    // Type parameters too, where the kernel's parameters name them: `DeviceIn<Self>` was a
    // buffer of `Kernels`, `DeviceIn<type>` of `()`.
    for (kernel, t) in [("add", "Self"), ("cast", "type")] {
        let k = units[0].kernels.iter_mut().find(|k| k.name == kernel).unwrap();
        k.generic.as_mut().unwrap().type_params[0] = t.into();
        for p in &mut k.params {
            if let ParamType::Pointer { elem, .. } = &mut p.ty {
                *elem = elem.replace('T', t);
            }
        }
    }
    let code = generate(&units).unwrap();
    for name in ["y: &mut impl DeviceInOut<Self_>", "x: &impl DeviceIn<Self_>", "&impl DeviceIn<r#type>"] {
        assert!(code.contains(name), "{name}: {code}");
    }
    for name in ["self_: u32", "super_: f32", "crate_: &impl DeviceIn<f32>", "r#type: &mut impl DeviceInOut<f32>", "const Self_: i32"] {
        assert!(code.contains(name), "{name}: {code}");
    }
}

#[test]
fn device_functions_are_marker_types_of_their_module() {
    let code = generate(&sample()).unwrap();
    let flat = code.replace(char::is_whitespace, "").replace(",>", ">").replace(",)", ")");
    assert!(
        flat.contains(
            "///Thedevicefunction`op_abs(float)`,asatemplateargumentofthismodule'skernels.#[derive(Debug,Clone,Copy)]pubstructop_abs;"
        ),
        "{code}"
    );
    assert!(flat.contains("pubstructr#type;"), "{code}");
    assert!(flat.contains("pubstructUnaryOpInstance<op,T>(::core::marker::PhantomData<(op,T)>);"), "{code}");
    assert!(flat.contains("implUnaryOpInstancesforUnaryOpInstance<self::saxpy_kernels::op_abs,f32>"), "{code}");
    assert!(flat.contains("pubunsafefnunary_op<op,T:::ptx_runtime::cudarc::driver::DeviceRepr>("), "{code}");
    assert!(flat.contains("whereUnaryOpInstance<op,T>:UnaryOpInstances"), "{code}");
    assert!(code.contains("`<saxpy_kernels::op_abs, f32>`, `<saxpy_kernels::r#type, f32>`"), "{code}");
}

#[test]
fn const_parameters_named_like_the_methods_own_are_renamed() {
    let mut units = sample();
    let k = units[0].kernels.iter_mut().find(|k| k.name == "mul_mat_vec_q").unwrap();
    k.generic.as_mut().unwrap().const_params[1].name = "instance".into();
    let flat = generate(&units).unwrap().replace(char::is_whitespace, "");
    assert!(flat.contains("constinstance_:i32") && flat.contains("MulMatVecQInstance<{r#type},dst_t,{instance_},{has_fusion}>"), "{flat}");
}

#[test]
fn void_pointers_take_any_device_buffer() {
    let mut units = sample();
    let mut q = units[0].kernels[0].clone();
    q.name = "dequantize".into();
    q.params = vec![
        Param { name: "vx".into(), ty: ParamType::AnyPointer { mutable: false } },
        Param { name: "vy".into(), ty: ParamType::AnyPointer { mutable: true } },
    ];
    units[0].kernels.push(q);
    let code = generate(&units).unwrap().replace(char::is_whitespace, "");
    assert!(code.contains("vx:&impl::ptx_runtime::DeviceAnyIn,vy:&mutimpl::ptx_runtime::DeviceAnyInOut"), "{code}");
    assert!(code.contains("__launch_xy(&self._set,9usize,stream,grid.into(),vx,vy)"), "{code}");
    assert!(
        code.contains("::ptx_runtime::DeviceAnyIn::push_arg(a0,&mutargs);::ptx_runtime::DeviceAnyInOut::push_arg(a1,&mutargs);"),
        "{code}"
    );
}

/// A Rust kernel's `*const *mut f32` and C's `float **`: buffers of `u64`, with what each
/// address points to in the method's docs.
#[test]
fn buffers_of_device_addresses_take_u64_buffers_and_say_what_they_hold() {
    let mut units = sample();
    let mut q = units[0].kernels[0].clone();
    q.name = "gemv_batched".into();
    q.params = vec![
        Param { name: "a".into(), ty: ParamType::Addresses { mutable: false, pointee: "*mut f32".into() } },
        Param { name: "y".into(), ty: ParamType::Addresses { mutable: true, pointee: "*mut f32".into() } },
    ];
    units[0].kernels.push(q);
    let code = generate(&units).unwrap();
    assert!(
        code.contains(
            "/// `a`: device addresses (`u64`, as cudarc's `DevicePtr::device_ptr` gives them), each a `*mut f32`.\n    /// `y`: "
        ),
        "{code}"
    );
    let code = code.replace(char::is_whitespace, "");
    assert!(code.contains("a:&implDeviceIn<u64>,y:&mutimplDeviceInOut<u64>"), "{code}");
    assert!(code.contains("__launch_io(&self._set,9usize,stream,grid.into(),a,y)"), "{code}");
}

/// llm.c's unnamed `std::bool_constant<Atomic>`: not a parameter of the method; its launch
/// function passes the byte.
#[test]
fn standard_tags_are_passed_by_the_launch_not_the_caller() {
    let mut units = sample();
    let mut q = units[0].kernels[0].clone();
    q.name = "bias".into();
    q.params = vec![
        Param { name: "dbias".into(), ty: ParamType::Pointer { mutable: true, elem: "f32".into() } },
        Param { name: "arg1".into(), ty: ParamType::Tag { written: "std::bool_constant<Atomic>".into() } },
    ];
    units[0].kernels.push(q);
    let code = generate(&units).unwrap();
    assert!(
        code.contains("/// The kernel's `std::bool_constant<Atomic>` is passed for you: an empty struct, whose value is its type."),
        "{code}"
    );
    let code = code.replace(char::is_whitespace, "");
    assert!(code.contains("dbias:&mutimplDeviceInOut<f32>,)->Result"), "{code}");
    assert!(code.contains("__launch_oe(&self._set,9usize,stream,grid.into(),dbias)"), "{code}");
    assert!(code.contains("a0.push_arg(&mutargs);args.arg(&0u8);"), "{code}");
}

#[test]
fn struct_checks_name_the_kernel_and_parameter() {
    let code = generate(&sample()).unwrap();
    assert!(
        code.contains("parameter `p` of kernel `type`) has another size or alignment on the host than in the PTX (8 bytes, aligned to 4)"),
        "{code}"
    );
}

#[test]
fn a_struct_passed_to_several_kernels_is_asserted_once() {
    let mut units = sample();
    let mut twin = units[0].kernels[1].clone();
    twin.name = "type_again".into();
    units[0].kernels.push(twin);
    let mut layout = units[0].struct_layouts[0].clone();
    layout.kernel = "type_again".into();
    units[0].struct_layouts.push(layout);
    let code = generate(&units).unwrap();
    assert_eq!(code.matches("::core::mem::size_of:: < Pair > ()").count(), 1, "{code}");
}

#[test]
fn a_name_defined_twice_names_both_places() {
    let mut units = sample();
    let mut other = units[0].clone();
    other.name = "other".into();
    other.kernels[0].file = "cuda/saxpy.cu".into();
    other.kernels[0].line = 3;
    units.push(other);
    let e = generate(&units).unwrap_err().to_string();
    assert!(e.contains("kernel `saxpy` is defined twice: in src/lib.rs:7 and in cuda/saxpy.cu:3"), "{e}");
}

#[test]
fn a_kernel_of_a_shared_header_gets_one_method_per_module() {
    // dfdx's `fill_with_f32`: one `extern "C"` definition in a header two .cu files include.
    let mut units = sample();
    units[0].kernels[0].file = "cuda/utils.cuh".into();
    let mut other = units[0].clone();
    other.name = "other".into();
    units.push(other);
    prefix_shared_names(&mut units);
    assert_eq!((units[0].kernels[0].name.as_str(), units[1].kernels[0].name.as_str()), ("saxpy_kernels_saxpy", "other_saxpy"));
    let code = generate(&units).unwrap();
    assert!(code.contains("pub unsafe fn other_saxpy(") && code.contains("this is the one of `other`"), "{code}");
    // Each module loads the entry by its PTX name.
    assert_eq!(units[1].kernels[0].ptx_names(), ["saxpy"]);
    assert!(!code.contains("\"other_saxpy\"") && code.matches("\"saxpy\",").count() >= 2, "{code}");
    // Defined at two places, it stays as written and is the error below.
    units[1].kernels[0].name = "saxpy".into();
    units[1].kernels[0].line = 9;
    let mut clash = units.clone();
    clash[0].kernels[0].name = "saxpy".into();
    (clash[0].kernels[0].ptx_name, clash[1].kernels[0].ptx_name) = (None, None);
    prefix_shared_names(&mut clash);
    assert_eq!(clash[1].kernels[0].name, "saxpy");
}

#[test]
fn one_method_per_kernel_whatever_the_names() {
    // No helper method beside a kernel's: `saxpy` and `saxpy_config` are two kernels.
    let mut units = sample();
    let mut other = units[0].kernels[0].clone();
    other.name = "saxpy_config".into();
    units[0].kernels.push(other);
    let code = generate(&units).unwrap();
    assert!(code.contains("pub unsafe fn saxpy(") && code.contains("pub unsafe fn saxpy_config("), "{code}");
    assert!(!code.contains("_plan(") && !code.contains("fn saxpy_config(&self, n"), "{code}");
}

/// The sample's saxpy method, its four parameters named `names` in the C source.
fn saxpy_with_parameters(names: [&str; 4]) -> String {
    let mut units = sample();
    for (p, name) in units[0].kernels[0].params.iter_mut().zip(names) {
        p.name = name.into();
    }
    let code = generate(&units).unwrap();
    let saxpy = &code[code.find("pub unsafe fn saxpy(").unwrap()..];
    saxpy[..saxpy.find("\n    }\n").unwrap()].to_string()
}

#[test]
fn kernel_parameters_named_like_the_methods_own_are_renamed() {
    let saxpy = saxpy_with_parameters(["stream", "__launch_vvio", "grid", "instance"]);
    for name in ["stream_: u32", "__launch_vvio_: f32", "grid_: &impl DeviceIn<f32>", "instance_: &mut impl DeviceInOut<f32>"] {
        assert!(saxpy.contains(name), "{name}: {saxpy}");
    }
    assert!(saxpy.contains("__launch_vvio(&self._set, 0usize, stream, grid.into(), stream_, __launch_vvio_, grid_, instance_)"), "{saxpy}");
}

/// Names that meet only in Rust: an unnamed C parameter's `arg0` beside one named `arg0`,
/// `stream` (renamed `stream_`) beside a `stream_`, `super` (which has no raw form) beside
/// `super_`. Each parameter keeps a name of its own, in order.
#[test]
fn kernel_parameters_that_meet_in_rust_get_names_of_their_own() {
    let saxpy = saxpy_with_parameters(["arg0", "stream_", "stream", "arg0"]);
    assert!(saxpy.contains("grid.into(), arg0, stream_, stream__, arg0_)"), "{saxpy}");
    let code = saxpy_with_parameters(["super", "super_", "self", "r#type"]);
    assert!(code.contains("grid.into(), super_, super__, self_, r#type)"), "{code}");
}

#[test]
fn a_kernel_named_like_a_method_of_kernels_is_refused_at_its_line() {
    for name in ["function", "launch_builder", "load", "plan_of", "config_of", "allow_dynamic_shared_memory"] {
        let mut units = sample();
        units[0].kernels[0].name = name.into();
        let e = generate(&units).unwrap_err().to_string();
        assert!(e.contains(&format!("src/lib.rs:7: kernel `{name}`")) && e.contains("is a method of the generated `Kernels`"), "{e}");
        assert!(e.contains("rename the kernel"), "{e}");
    }
}

/// `addOne` and `add_one` are one name in CamelCase: each kernel's trait and marker type were
/// defined twice (a generated module that did not compile); they keep the kernel's own name.
#[test]
fn kernels_of_one_camel_case_name_get_traits_of_their_own() {
    let mut units = sample();
    let kernels = &mut units[0].kernels;
    for (from, to) in [("mul_mat_vec_q", "addOne"), ("add", "addRows")] {
        let mut k = kernels.iter().find(|k| k.name == from).unwrap().clone();
        k.name = to.into();
        kernels.push(k);
    }
    kernels.iter_mut().find(|k| k.name == "mul_mat_vec_q").unwrap().name = "add_one".into();
    kernels.iter_mut().find(|k| k.name == "add").unwrap().name = "add_rows".into();
    let code = generate(&units).unwrap();
    for item in [
        "pub struct addOne_Instance<",
        "pub struct add_one_Instance<",
        "pub trait addOne_Instances",
        "pub trait add_one_Instances",
        "pub trait addRows_Types",
        "pub trait add_rows_Types",
    ] {
        assert_eq!(code.matches(item).count(), 1, "{item}: {code}");
    }
    assert!(code.contains("where\n        addOne_Instance<{ r#type }, dst_t, { ncols }, { has_fusion }>: addOne_Instances,"), "{code}");
    // Names of one CamelCase only where two kernels share it.
    assert!(code.contains("pub trait CastTypes"), "{code}");
}

#[test]
fn a_template_first_in_the_module_takes_its_instance_as_the_index() {
    // `0usize + instance` was clippy's `identity_op` in every crate whose first kernel is a template.
    let mut units = sample();
    let add = units[0].kernels.iter().position(|k| k.name == "add").unwrap();
    let first = units[0].kernels.remove(add);
    units[0].kernels.insert(0, first);
    let code = generate(&units).unwrap();
    let add = &code[code.find("pub unsafe fn add<").unwrap()..];
    let add = &add[..add.find("\n    }").unwrap()];
    assert!(add.contains("let instance: usize =") && add.contains("(&self._set, instance, stream"), "{add}");
    assert!(!code.contains("0usize + instance"), "{code}");
}

/// ggml's binbcast: a trailing parameter pack is a `usize` const generic parameter, the last of
/// the instance's arguments, and its elements one array of that length.
#[test]
fn a_parameter_pack_is_a_length_and_an_array() {
    let mut units = sample();
    let mut k = units[0].kernels[0].clone();
    k.name = "fused".into();
    k.params = vec![Param { name: "dst".into(), ty: ParamType::Pointer { mutable: true, elem: "T".into() } }];
    let inst = |args: &str, len: &str, ptx: &str| Instance { args: vec![args.into()], values: vec![len.into()], ptx_name: ptx.into() };
    k.generic = Some(Generic {
        type_params: vec!["T".into()],
        const_params: vec![ConstParam { name: "Ps".into(), ty: ConstType::PackLength, cxx_type: None, position: 1 }],
        instances: vec![inst("f32", "2", "_Z5fusedIfJPKfS1_EEvPT_DpT0_"), inst("f64", "0", "_Z5fusedIdJEEvPT_DpT0_")],
        pack: Some(Pack {
            param: "srcs".into(),
            written: ParamType::ByValue { ty: "Ps".into() },
            elem: Some(ParamType::Pointer { mutable: false, elem: "T".into() }),
        }),
    });
    units[0].kernels.push(k);
    let code = generate(&units).unwrap();
    let flat = code.replace(char::is_whitespace, "").replace(",>", ">").replace(",)", ")");
    assert!(flat.contains("pubunsafefnfused<T:::ptx_runtime::cudarc::driver::DeviceRepr,constPs:usize>("), "{code}");
    assert!(flat.contains("dst:&mutimplDeviceInOut<T>,srcs:[&dynDeviceIn<T>;Ps])"), "{code}");
    assert!(flat.contains("implFusedInstancesforFusedInstance<f32,2>") && flat.contains("forFusedInstance<f64,0>"), "{code}");
    assert!(flat.contains("__launch_oI(&self._set,9usize+instance,stream,grid.into(),dst,srcs)"), "{code}");
    assert!(code.contains("`srcs` holds the elements of parameter pack `Ps`, as many as its length."), "{code}");
}
