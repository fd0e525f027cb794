//! The launch functions the typed methods share. Every kernel whose parameters come in the
//! same order of kinds (a value, a buffer read, a buffer written, ...) is launched by one
//! private generic function of the generated module, `__launch_vio` for `(value, in, out)`;
//! each method only names its function's index and passes its arguments on.
//!
//! Why not a body per method: rustc type-checks and borrow-checks every body of the host
//! crate on each of its builds, and pushing the arguments was most of each body. The bench's
//! 361 macro-stamped kernels have 19 kinds of parameter list: their module took rustc 0.50 s
//! with a body each and 0.30 s with the shared functions (BENCHMARKS.md, issue 25).

use std::fmt::Write;

use crate::embed::signature::ParamType;

/// The letter of a parameter's kind in a launch function's name; a parameter pack's array of
/// such parameters is the letter in upper case.
pub(super) fn kind(ty: &ParamType) -> char {
    match ty {
        ParamType::Scalar(_) | ParamType::ByValue { .. } => 'v',
        ParamType::Pointer { mutable: false, .. } | ParamType::Addresses { mutable: false, .. } => 'i',
        ParamType::Pointer { mutable: true, .. } | ParamType::Addresses { mutable: true, .. } => 'o',
        ParamType::AnyPointer { mutable: false } => 'x',
        ParamType::AnyPointer { mutable: true } => 'y',
        ParamType::Tag { .. } => 'e',
    }
}

/// The name of the launch function of `kinds` (letters of [`kind`]).
pub(super) fn name(kinds: &str) -> String {
    match kinds {
        "" => "__launch_no_args".into(),
        _ => format!("__launch_{kinds}"),
    }
}

/// Whether a kernel parameter of this name would hide a launch function from the method's body.
pub(super) fn is_reserved(param: &str) -> bool {
    param.starts_with("__launch_")
}

/// The text of the launch function of `kinds`: pushes each argument as its kind pushes and
/// launches function `at` of the set.
pub(super) fn function(kinds: &str) -> String {
    let mut generics = Vec::new();
    let mut params =
        vec!["set: &KernelSet".to_string(), "at: usize".into(), "stream: &CudaStream".into(), "grid: ::ptx_runtime::Grid".into()];
    let mut pushes = Vec::new();
    for (i, k) in kinds.chars().enumerate() {
        let (param, push) = match k {
            'v' => {
                generics.push(format!("V{i}: ::ptx_runtime::cudarc::driver::DeviceRepr"));
                (format!("a{i}: V{i}"), format!("args.arg(&a{i});"))
            }
            'i' => {
                generics.push(format!("T{i}"));
                (format!("a{i}: &impl DeviceIn<T{i}>"), format!("a{i}.push_arg(&mut args);"))
            }
            'o' => {
                generics.push(format!("T{i}"));
                (format!("a{i}: &mut impl DeviceInOut<T{i}>"), format!("a{i}.push_arg(&mut args);"))
            }
            'x' => (format!("a{i}: &impl ::ptx_runtime::DeviceAnyIn"), format!("::ptx_runtime::DeviceAnyIn::push_arg(a{i}, &mut args);")),
            'y' => (
                format!("a{i}: &mut impl ::ptx_runtime::DeviceAnyInOut"),
                format!("::ptx_runtime::DeviceAnyInOut::push_arg(a{i}, &mut args);"),
            ),
            // An empty struct's byte, which the kernel never reads: no argument.
            'e' => {
                pushes.push("args.arg(&0u8);".to_string());
                continue;
            }
            // A parameter pack's elements: an array of its length, each pushed as its kind.
            'V' => {
                generics.push(format!("const N{i}: usize, V{i}: ::ptx_runtime::cudarc::driver::DeviceRepr"));
                (format!("a{i}: [V{i}; N{i}]"), format!("for a in &a{i} {{\n        args.arg(a);\n    }}"))
            }
            _ => {
                let (elem, generic) = match k {
                    'I' => (format!("&dyn DeviceIn<T{i}>"), format!(", T{i}")),
                    'O' => (format!("&mut dyn DeviceInOut<T{i}>"), format!(", T{i}")),
                    'X' => ("&dyn ::ptx_runtime::DeviceAnyIn".to_string(), String::new()),
                    _ => ("&mut dyn ::ptx_runtime::DeviceAnyInOut".to_string(), String::new()),
                };
                generics.push(format!("const N{i}: usize{generic}"));
                (format!("a{i}: [{elem}; N{i}]"), format!("for a in a{i} {{\n        a.push_arg(&mut args);\n    }}"))
            }
        };
        params.push(param);
        pushes.push(push);
    }
    let generics = if generics.is_empty() { String::new() } else { format!("<{}>", generics.join(", ")) };
    let binding = if kinds.is_empty() { "args" } else { "mut args" };
    let mut out = String::new();
    // An upper-case letter in the name: a parameter pack's array. Dead where the methods that
    // call it are (a private module whose kernels are not launched yet).
    let snake = if kinds.chars().any(|k| k.is_ascii_uppercase()) { ", non_snake_case" } else { "" };
    let _ = writeln!(out, "#[allow(clippy::too_many_arguments, dead_code{snake})]");
    let _ = writeln!(out, "unsafe fn {}{generics}(", name(kinds));
    for p in &params {
        let _ = writeln!(out, "    {p},");
    }
    out.push_str(") -> Result<(), ::ptx_runtime::LaunchError> {\n");
    let _ = writeln!(out, "    let {binding} = stream.launch_builder(set.at(at)?);");
    for p in &pushes {
        let _ = writeln!(out, "    {p}");
    }
    out.push_str("    unsafe { set.launch(at, args, grid) }\n}\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_is_pushed_as_its_trait_pushes_it() {
        let f = function("vioxy");
        assert!(f.starts_with("#[allow(clippy::too_many_arguments, dead_code)]\nunsafe fn __launch_vioxy<V0: ::ptx_runtime::cudarc::driver::DeviceRepr, T1, T2>(\n"), "{f}");
        for line in [
            "    a0: V0,",
            "    a1: &impl DeviceIn<T1>,",
            "    a2: &mut impl DeviceInOut<T2>,",
            "    a3: &impl ::ptx_runtime::DeviceAnyIn,",
            "    a4: &mut impl ::ptx_runtime::DeviceAnyInOut,",
            "    args.arg(&a0);",
            "    a2.push_arg(&mut args);",
            "    ::ptx_runtime::DeviceAnyInOut::push_arg(a4, &mut args);",
            "    unsafe { set.launch(at, args, grid) }",
        ] {
            assert!(f.contains(line), "{line}: {f}");
        }
    }

    #[test]
    fn a_parameter_packs_array_is_pushed_element_by_element() {
        let f = function("iV");
        assert!(f.starts_with("#[allow(clippy::too_many_arguments, dead_code, non_snake_case)]\nunsafe fn __launch_iV<T0, const N1: usize, V1: ::ptx_runtime::cudarc::driver::DeviceRepr>(\n"), "{f}");
        assert!(f.contains("    a1: [V1; N1],\n") && f.contains("    for a in &a1 {\n        args.arg(a);\n    }\n"), "{f}");
        let f = function("IOXY");
        for line in [
            "unsafe fn __launch_IOXY<const N0: usize, T0, const N1: usize, T1, const N2: usize, const N3: usize>(",
            "    a0: [&dyn DeviceIn<T0>; N0],",
            "    a1: [&mut dyn DeviceInOut<T1>; N1],",
            "    a2: [&dyn ::ptx_runtime::DeviceAnyIn; N2],",
            "    a3: [&mut dyn ::ptx_runtime::DeviceAnyInOut; N3],",
            "    for a in a3 {\n        a.push_arg(&mut args);\n    }",
        ] {
            assert!(f.contains(line), "{line}: {f}");
        }
    }

    #[test]
    fn a_kernel_without_parameters_binds_no_mutable_builder() {
        let f = function("");
        assert!(f.contains("unsafe fn __launch_no_args(\n") && f.contains("    let args = stream.launch_builder(set.at(at)?);"), "{f}");
    }
}
