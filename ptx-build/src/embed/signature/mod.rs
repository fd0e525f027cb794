//! Kernel signatures from the sources, checked against the PTX.
//!
//! The model is here: each parameter as the type a typed launch method takes. The readers are
//! one per language: [`rust`] (syn, through the crate's module tree) and [`cuda`] (the
//! `__global__` functions of a .cu file, read with [`crate::text::c_lex`], since no C++ parser
//! crate reads CUDA's dialect). [`check`] compares count and sizes with the PTX `.entry`
//! parameters, so a source the PTX did not come from is caught at build time, not on the GPU.

pub mod cuda;
pub mod rust;

use std::path::PathBuf;

use crate::backend::ptx;
use crate::error::{Error, Result};

pub(crate) use cuda::{c_type, cuda_kernels_in};
pub use cuda::{cuda_kernels, cuda_kernels_preprocessed};
pub(crate) use rust::rust_kernels_in_text;
pub use rust::{rust_kernels, rust_kernels_expanded, unexported_rust_kernels};

/// A primitive passed by value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Scalar {
    Bool,
    U8,
    I8,
    U16,
    I16,
    U32,
    I32,
    U64,
    I64,
    Usize,
    Isize,
    F32,
    F64,
}

impl Scalar {
    fn from_name(name: &str) -> Option<Scalar> {
        Some(match name {
            "bool" => Scalar::Bool,
            "u8" => Scalar::U8,
            "i8" => Scalar::I8,
            "u16" => Scalar::U16,
            "i16" => Scalar::I16,
            "u32" => Scalar::U32,
            "i32" => Scalar::I32,
            "u64" => Scalar::U64,
            "i64" => Scalar::I64,
            "usize" => Scalar::Usize,
            "isize" => Scalar::Isize,
            "f32" => Scalar::F32,
            "f64" => Scalar::F64,
            _ => return None,
        })
    }

    /// The Rust spelling on the host side.
    pub fn rust_name(&self) -> &'static str {
        match self {
            Scalar::Bool => "bool",
            Scalar::U8 => "u8",
            Scalar::I8 => "i8",
            Scalar::U16 => "u16",
            Scalar::I16 => "i16",
            Scalar::U32 => "u32",
            Scalar::I32 => "i32",
            Scalar::U64 => "u64",
            Scalar::I64 => "i64",
            Scalar::Usize => "usize",
            Scalar::Isize => "isize",
            Scalar::F32 => "f32",
            Scalar::F64 => "f64",
        }
    }

    /// Size in bytes on nvptx64 (and on 64-bit hosts).
    pub fn size(&self) -> u32 {
        match self {
            Scalar::Bool | Scalar::U8 | Scalar::I8 => 1,
            Scalar::U16 | Scalar::I16 => 2,
            Scalar::U32 | Scalar::I32 | Scalar::F32 => 4,
            _ => 8,
        }
    }
}

/// How a parameter crosses from the host.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ParamType {
    Scalar(Scalar),
    /// Device memory; `elem` is the pointee as written (`f32`, `Pair`).
    Pointer {
        mutable: bool,
        elem: String,
    },
    /// Device memory of any element type: C's `void *` / `const void *` (candle's quantized
    /// blocks), Rust's `*mut c_void`. The host passes any cudarc buffer or view, or a raw
    /// device address (`ptx_runtime::DeviceAnyIn` / `DeviceAnyInOut`).
    AnyPointer {
        mutable: bool,
    },
    /// Device memory holding device addresses: C's `float **` and `const float *const *`
    /// (batched kernels' arrays of matrices), Rust's `*const *mut f32`. The host passes a
    /// buffer of `u64` (cudarc's `CUdeviceptr`); `pointee` is each address's type as Rust
    /// spells it (`*mut f32`, `*const c_void`), for the method's docs. `mutable`: whether the
    /// kernel may write the addresses (C's `float **`), not what they point to.
    Addresses {
        mutable: bool,
        pointee: String,
    },
    /// An empty struct by value whose type carries a template's value (llm.c's unnamed
    /// `std::bool_constant<Atomic>`, `std::true_type`): one byte the kernel never reads. The
    /// method takes nothing for it and the launch passes a zero byte; `written` is the type
    /// as the source spells it.
    Tag {
        written: String,
    },
    /// A `#[repr(C)]` type by value, named as written; the host must have it in scope and
    /// implement cudarc's `DeviceRepr` for it.
    ByValue {
        ty: String,
    },
}

#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Param {
    pub name: String,
    pub ty: ParamType,
}

/// A kernel as the source declares it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct KernelSig {
    pub name: String,
    pub params: Vec<Param>,
    pub file: PathBuf,
    pub line: u32,
    /// A C++ kernel without `extern "C"`: its PTX name is mangled (`_Z4fillPfi`).
    pub mangled: bool,
    /// Why its parameters cannot be typed (`parameter 0: `void *` has no element type`), for
    /// a C/C++ kernel that is embedded without a typed method; `params` is then empty.
    pub untyped: Option<String>,
    /// The kernel's doc comment, one entry per line (Rust `///`), for the generated method.
    pub doc: Vec<String>,
    /// A generic kernel: `name` is the method's name, each instance a PTX entry of its own, and
    /// parameter types name the type parameters (`Pointer { elem: "T" }`).
    pub generic: Option<Generic>,
    /// The PTX entry's name where it is not `name`: a C++ kernel's mangled name
    /// (`_ZN2ns5scaleEPdi` for method `scale`).
    pub ptx_name: Option<String>,
    /// The namespaces a C++ kernel is declared in, as its demangled name spells them (`ops::v2`,
    /// `(anonymous namespace)`); empty at file scope. It tells apart kernels of one name and
    /// parameters in two namespaces.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
}

/// A generic kernel: a C++ template with its instances in the PTX, or a Rust `#[kernel]`
/// function with its list of instances. It gets one launch method generic over `type_params`
/// and `const_params` (a C++ `int N`, `bool has_bias`, an enum: const generics), which
/// compiles only for the instantiated combinations.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Generic {
    /// The type parameters as the source names them (`T`).
    pub type_params: Vec<String>,
    /// The parameters over values, in source order.
    pub const_params: Vec<ConstParam>,
    /// One per instantiation, in source order.
    pub instances: Vec<Instance>,
    /// A C++ parameter pack that the kernel's last parameter expands (ggml's binbcast:
    /// `typename... src1_ptrs`, `src1_ptrs... src1s`): its length is the const parameter of
    /// [`ConstType::PackLength`], its elements one array parameter of the method.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pack: Option<Pack>,
}

/// The function parameter a [`Generic`] kernel's parameter pack expands into.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Pack {
    /// As the source names it (`src1s`).
    pub param: String,
    /// Its type as written, naming the pack: `src1_ptrs... src1s` (`ByValue { ty: "src1_ptrs" }`:
    /// each element is the pack's type argument) or `const Ts *... ptrs` (a pointer to each).
    pub written: ParamType,
    /// The type of each element in every instance, naming a type parameter where the elements
    /// follow one (`const src1_t *` elements: `Pointer { elem: "src1_t" }`); `None` where
    /// every instance's pack is empty (the method then has no such parameter).
    pub elem: Option<ParamType>,
}

/// A C++ template parameter over a value, as a Rust const generic parameter.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ConstParam {
    /// As the source names it (`ncols`).
    pub name: String,
    /// What it takes.
    pub ty: ConstType,
    /// The C++ type where it is not a scalar's: an enum's (`sort_order`, for the docs), or one
    /// the instances decide: a function pointer's alias (`dequantize_kq_t <..>`, its instances
    /// pass functions) or SFINAE's `std::enable_if_t <..>` (values, which stay untyped).
    pub cxx_type: Option<String>,
    /// Its index among all the template's parameters, types and values.
    pub position: usize,
}

/// What a C++ template parameter over a value takes, on the Rust side.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ConstType {
    /// A value: the C++ integer or `bool` type's twin (an enum's underlying type; `i32` where it
    /// has none): a const generic parameter.
    Value(Scalar),
    /// A device function (`float (*op)(float)`, ggml's unary ops and dequantizers): a type
    /// parameter taking the marker type the generated module has for each function passed
    /// (`unary::op_gelu`).
    Function,
    /// The length of a parameter pack (`typename... src1_ptrs`): a `usize` const generic
    /// parameter, the length of the method's array of the pack's elements ([`Pack`]).
    PackLength,
}

/// One instantiation of a [`Generic`] kernel.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Instance {
    /// The host types bound to the type parameters, in order, as Rust paths (`f32`,
    /// `::ptx_runtime::half::f16`).
    pub args: Vec<String>,
    /// The values bound to the const parameters, in order, as Rust literals (`128`, `true`), or
    /// for a function parameter the marker type's path in the generated module
    /// (`self::unary::op_gelu`; the demangled `&op_gelu(float)` until the unit names it).
    pub values: Vec<String>,
    /// The instance's PTX entry name (`_Z3addIfEvPT_PKS0_S3_i`, `add_f32`).
    pub ptx_name: String,
}

/// A parameter of a [`Generic`] kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GenericParam<'a> {
    /// A type parameter, by name.
    Type(&'a str),
    /// A parameter over a value or a device function.
    Const(&'a ConstParam),
}

impl Generic {
    /// Every parameter in source order, types and values interleaved as declared.
    pub fn params(&self) -> Vec<GenericParam<'_>> {
        self.in_order(self.type_params.iter().map(|t| GenericParam::Type(t)), self.const_params.iter().map(GenericParam::Const))
    }

    /// The const parameter that is the length of the kernel's parameter pack, if it has one.
    pub fn pack_length(&self) -> Option<&ConstParam> {
        self.const_params.iter().find(|c| c.ty == ConstType::PackLength)
    }

    /// The length of an instance's parameter pack, for a kernel with one.
    pub fn pack_len(&self, inst: &Instance) -> Option<usize> {
        let at = self.const_params.iter().position(|c| c.ty == ConstType::PackLength)?;
        inst.values.get(at)?.parse().ok()
    }

    /// An instance's arguments in source order (`f32`, `128`, `true`).
    pub fn instance_args<'a>(&self, inst: &'a Instance) -> Vec<&'a str> {
        self.in_order(inst.args.iter().map(String::as_str), inst.values.iter().map(String::as_str))
    }

    /// `types` and `values` interleaved by the const parameters' positions.
    fn in_order<T>(&self, types: impl Iterator<Item = T>, values: impl Iterator<Item = T>) -> Vec<T> {
        let (mut types, mut values) = (types.peekable(), values.zip(&self.const_params).peekable());
        let mut out = Vec::new();
        while types.peek().is_some() || values.peek().is_some() {
            match values.next_if(|(_, c)| c.position == out.len()) {
                Some((v, _)) => out.push(v),
                None => match types.next() {
                    Some(t) => out.push(t),
                    // Positions past the types' end: the values follow in order.
                    None => out.extend(values.by_ref().map(|(v, _)| v)),
                },
            }
        }
        out
    }
}

impl KernelSig {
    /// The PTX entries this kernel launches: its name, or one per instance of a generic kernel.
    pub fn ptx_names(&self) -> Vec<&str> {
        match &self.generic {
            Some(g) => g.instances.iter().map(|i| i.ptx_name.as_str()).collect(),
            None => vec![self.ptx_name.as_deref().unwrap_or(&self.name)],
        }
    }

    /// Each PTX entry's name and signature: a generic kernel's instances with their type
    /// arguments put in (named `add::<f32>` in messages) and their parameter pack's elements
    /// (`src1s[0]`, `src1s[1]`), or the kernel itself.
    pub fn monomorphic(&self) -> Vec<(String, KernelSig)> {
        let Some(g) = &self.generic else { return vec![(self.ptx_names()[0].to_string(), self.clone())] };
        g.instances
            .iter()
            .map(|inst| {
                let bind = |ty: &str| g.type_params.iter().position(|t| t == ty).map(|i| inst.args[i].clone());
                let bound = |ty: &ParamType| match ty {
                    ParamType::Pointer { mutable, elem } => {
                        ParamType::Pointer { mutable: *mutable, elem: bind(elem).unwrap_or_else(|| elem.clone()) }
                    }
                    ParamType::ByValue { ty: t } => match bind(t) {
                        Some(arg) => Scalar::from_name(&arg).map(ParamType::Scalar).unwrap_or(ParamType::ByValue { ty: arg }),
                        None => ty.clone(),
                    },
                    // `T **`: `*mut T` with the instance's type put in.
                    ParamType::Addresses { mutable, pointee } => {
                        let (ptr, elem) = pointee.rsplit_once(' ').unwrap_or(("", pointee));
                        match bind(elem) {
                            Some(arg) => ParamType::Addresses { mutable: *mutable, pointee: format!("{ptr} {arg}") },
                            None => ty.clone(),
                        }
                    }
                    other => other.clone(),
                };
                let mut params: Vec<Param> = self.params.iter().map(|p| Param { name: p.name.clone(), ty: bound(&p.ty) }).collect();
                if let (Some(Pack { param, elem: Some(elem), .. }), Some(len)) = (&g.pack, g.pack_len(inst)) {
                    params.extend((0..len).map(|i| Param { name: format!("{param}[{i}]"), ty: bound(elem) }));
                }
                let name = format!("{}::<{}>", self.name, g.instance_args(inst).join(", "));
                (inst.ptx_name.clone(), KernelSig { name, params, generic: None, ..self.clone() })
            })
            .collect()
    }
}

/// The PTX name of a generic Rust kernel's instance, as ptx-device's `#[kernel]` exports it:
/// `{kernel}_{arg}_{arg}..`, each type with every run of characters other than ASCII letters,
/// digits and `_` made one `_`. The two implementations are tested against one table,
/// `ptx-device-macros/src/instance_names.txt` (a proc-macro crate cannot export a function).
pub fn instance_name(kernel: &str, args: &[String]) -> String {
    let mut name = kernel.to_string();
    for arg in args {
        name.push('_');
        let start = name.len();
        let mut last_sep = true;
        for c in arg.chars() {
            if c.is_ascii_alphanumeric() || c == '_' {
                name.push(c);
                last_sep = false;
            } else if !last_sep {
                name.push('_');
                last_sep = true;
            }
        }
        if name.len() > start && last_sep && name.ends_with('_') {
            name.pop();
        }
    }
    name
}

/// Compares a kernel's source signature with its PTX entry: count and per-parameter size.
/// Sizes of by-value structs are checked by the generated code (`size_of` against the PTX).
pub fn check(sig: &KernelSig, entry: Option<&ptx::Entry>) -> Result<()> {
    let err = |message: String| Error::Signature { file: sig.file.clone(), line: sig.line, kernel: sig.name.clone(), message };
    let Some(entry) = entry else {
        return Err(err("the source declares this kernel, but the PTX has no `.entry` of that name (is it behind a `cfg`?)".into()));
    };
    if entry.params.len() != sig.params.len() {
        return Err(err(format!("the source has {} parameters, the PTX entry {}", sig.params.len(), entry.params.len())));
    }
    for (p, e) in sig.params.iter().zip(&entry.params) {
        let expected = match &p.ty {
            ParamType::Scalar(s) => s.size(),
            ParamType::Pointer { .. } | ParamType::AnyPointer { .. } | ParamType::Addresses { .. } => 8,
            ParamType::Tag { .. } => 1,
            ParamType::ByValue { .. } => continue,
        };
        if e.size != expected {
            return Err(err(format!(
                "parameter `{}` is {} bytes in the source and {} bytes in the PTX (`{}`)",
                p.name, expected, e.size, e.ty
            )));
        }
        // Scalars and pointers are naturally aligned on both sides; a by-value struct's size and
        // alignment are asserted in the generated code, where its host type is known.
        if e.align != expected {
            return Err(err(format!(
                "parameter `{}` is aligned to {} bytes in the source and to {} bytes in the PTX (`.align {}`)",
                p.name, expected, e.align, e.align
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    #[test]
    fn ptx_device_half_types_and_tensor_maps_are_the_hosts() {
        let src = "use ptx_device::half::{f16, bf16};\n#[kernel(launch_bounds(256), instances(f16, f32))]\npub unsafe fn g<T>(x: *const T) {}\n#[kernel(cluster_dims(2))]\npub unsafe fn k(a: f16, b: *const bf16, c: *mut ptx_device::half::f16x2, d: bf16x2, t: *const TensorMap, e: *mut my::f16) {}\n";
        let k = rust_kernels_in_text(Path::new("lib.rs"), src).unwrap();
        let g = k[0].generic.as_ref().unwrap();
        assert_eq!(g.instances[0].args, ["::ptx_runtime::half::f16"]);
        assert_eq!(g.instances[0].ptx_name, "g_f16");
        let tys: Vec<&ParamType> = k[1].params.iter().map(|p| &p.ty).collect();
        assert_eq!(
            tys,
            [
                &ParamType::ByValue { ty: "::ptx_runtime::half::f16".into() },
                &ParamType::Pointer { mutable: false, elem: "::ptx_runtime::half::bf16".into() },
                &ParamType::Pointer { mutable: true, elem: "::ptx_runtime::cuda_types::Half2".into() },
                &ParamType::ByValue { ty: "::ptx_runtime::cuda_types::Bf16x2".into() },
                &ParamType::Pointer { mutable: false, elem: "::ptx_runtime::TensorMap".into() },
                // Another crate's `f16` is that crate's.
                &ParamType::Pointer { mutable: true, elem: "my::f16".into() },
            ]
        );
        let c = cuda_kernels_in(Path::new("t.cu"), "extern \"C\" __global__ void tma(const CUtensorMap* a) {}").unwrap();
        assert_eq!(c[0].params[0].ty, ParamType::Pointer { mutable: false, elem: "::ptx_runtime::TensorMap".into() });
        // Launch bounds and cluster dims between the return type and the name (CUTLASS, llm.c).
        let src = "extern \"C\" __global__ void __launch_bounds__(384, 1) __cluster_dims__(2, 1, 1) k(int n) {}\nextern \"C\" __attribute__((global)) void __attribute__((launch_bounds(256))) pp(float *x) {}";
        let c = cuda_kernels_in(Path::new("t.cu"), src).unwrap();
        assert_eq!(c.iter().map(|k| (k.name.as_str(), k.params.len())).collect::<Vec<_>>(), [("k", 1), ("pp", 1)]);
        // `max_registers(..)` beside `instances(..)` too.
        let k =
            rust_kernels_in_text(Path::new("lib.rs"), "#[kernel(max_registers(64), instances(f32))]\npub unsafe fn h<T>(x: *mut T) {}\n")
                .unwrap();
        assert_eq!(k[0].ptx_names(), ["h_f32"]);
    }

    #[test]
    fn instance_names_are_the_ones_the_kernel_macro_exports() {
        // The macro crate tests its own naming against this table (a proc-macro crate cannot
        // export a function ptx-build could call).
        let table = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../ptx-device-macros/src/instance_names.txt"))
            .expect("the shared naming table");
        let mut rows = 0;
        for line in table.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
            let (lhs, expected) = line.split_once(" => ").unwrap();
            let (kernel, args) = lhs.split_once(": ").unwrap();
            let args: Vec<String> = args.split(" | ").map(String::from).collect();
            assert_eq!(instance_name(kernel, &args), expected, "{line}");
            // Through the reader, from the attribute as a user writes it.
            let list = if args.len() == 1 { args[0].clone() } else { format!("({})", args.join(", ")) };
            let params: Vec<String> = (0..args.len()).map(|i| format!("T{i}")).collect();
            let src = format!("#[kernel(instances({list}))]\npub unsafe fn {kernel}<{}>(n: u32) {{}}\n", params.join(", "));
            let k = rust_kernels_in_text(Path::new("lib.rs"), &src).unwrap();
            assert_eq!(k[0].generic.as_ref().unwrap().instances[0].ptx_name, expected, "{line}");
            rows += 1;
        }
        assert!(rows >= 5);
    }

    #[test]
    fn a_signature_that_disagrees_with_the_ptx_is_caught() {
        let sig = KernelSig {
            name: "k".into(),
            params: vec![Param { name: "n".into(), ty: ParamType::Scalar(Scalar::U64) }],
            file: "src/lib.rs".into(),
            line: 3,
            untyped: None,
            mangled: false,
            doc: Vec::new(),
            generic: None,
            ptx_name: None,
            namespace: String::new(),
        };
        let m = ptx::Module::parse(".visible .entry k(\n.param .u32 k_param_0\n)\n{\nret;\n}\n");
        let e = check(&sig, m.entry("k")).unwrap_err().to_string();
        assert!(e.contains("kernel `k`") && e.contains("parameter `n` is 8 bytes in the source and 4 bytes in the PTX"), "{e}");
        let m = ptx::Module::parse(".visible .entry k(\n.param .u64 k_param_0,\n.param .u64 k_param_1\n)\n{\nret;\n}\n");
        assert!(check(&sig, m.entry("k")).unwrap_err().to_string().contains("the source has 1 parameters, the PTX entry 2"));
        assert!(check(&sig, None).unwrap_err().to_string().contains("no `.entry` of that name"));
        let m = ptx::Module::parse(".visible .entry k(\n.param .align 4 .b8 k_param_0[8]\n)\n{\nret;\n}\n");
        let e = check(&sig, m.entry("k")).unwrap_err().to_string();
        assert!(e.contains("parameter `n` is aligned to 8 bytes in the source and to 4 bytes in the PTX"), "{e}");
        let m = ptx::Module::parse(".visible .entry k(\n.param .u64 k_param_0\n)\n{\nret;\n}\n");
        assert!(check(&sig, m.entry("k")).is_ok());
        let m = ptx::Module::parse(".visible .entry k(\n.param .u64 .ptr .align 1 k_param_0\n)\n{\nret;\n}\n");
        assert!(check(&sig, m.entry("k")).is_ok(), "`.ptr .align` is the pointee's alignment");
    }
}
