//! Device functions as template arguments (ggml's `template <float (*op)(const float),
//! typename T> unary_op_kernel`): each function an instance passes gets a marker type in its
//! module of the generated file (`pub struct op_gelu;` in `unary`), and the typed method is
//! generic over it: `k.unary_op_kernel::<unary::op_gelu, f32>(..)`.

use super::signature::{ConstType, KernelSig};

/// A device function passed to a kernel template, and the marker type that stands for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionMarker {
    /// The marker's name in its module, a Rust identifier (`op_add`, `op_add_float_float`).
    pub name: String,
    /// The function as demangled (`op_add(float, float)`), for its doc comment.
    pub function: String,
}

/// Names in a module of the generated file that a marker must not take.
const TAKEN: &[&str] = &["IMAGES", "KERNELS", "FUNCTIONS", "BOUNDS"];

/// Gives each device function the kernels of module `unit` are instantiated with a marker
/// type, and rewrites the instances' function arguments (`&op_add(float, float)`) into the
/// marker's path (`self::unary::op_gelu`). Returns the markers, in order of first use.
pub fn name_functions(unit: &str, sigs: &mut [KernelSig]) -> Vec<FunctionMarker> {
    let mut functions: Vec<String> = Vec::new();
    for g in sigs.iter().filter_map(|s| s.generic.as_ref()) {
        for i in (0..g.const_params.len()).filter(|i| g.const_params[*i].ty == ConstType::Function) {
            for inst in &g.instances {
                let f = inst.values[i].trim_start_matches('&').to_string();
                if !functions.contains(&f) {
                    functions.push(f);
                }
            }
        }
    }
    let names = marker_names(&functions);
    for g in sigs.iter_mut().filter_map(|s| s.generic.as_mut()) {
        let at: Vec<usize> = g.const_params.iter().enumerate().filter(|(_, c)| c.ty == ConstType::Function).map(|(i, _)| i).collect();
        for inst in &mut g.instances {
            for &i in &at {
                let f = inst.values[i].trim_start_matches('&');
                if let Some(n) = functions.iter().position(|x| x == f) {
                    inst.values[i] = format!("self::{unit}::{}", names[n]);
                }
            }
        }
    }
    functions.into_iter().zip(names).map(|(function, name)| FunctionMarker { name, function }).collect()
}

/// One name per function, unique among them: its own name (`op_add`), else with its namespaces
/// (`ns_op_add`), else with its parameter types too (`op_add_float_float`, overloads; a pointer
/// and a reference spelled out, `ld_float_const_ptr` beside `ld_float_const_ref`), else with a
/// number after it where even those are one identifier.
fn marker_names(functions: &[String]) -> Vec<String> {
    let spelled = |f: &str, level: usize| {
        let (qualified, params) = f.split_once('(').unwrap_or((f, ""));
        let text = match level {
            0 => qualified.rsplit("::").next().unwrap_or(qualified).to_string(),
            1 => qualified.to_string(),
            _ => format!("{qualified}_{}", params.replace('*', " ptr ").replace('&', " ref ")),
        };
        rust_ident(&text)
    };
    let mut level = vec![0usize; functions.len()];
    loop {
        let names: Vec<String> = functions.iter().zip(&level).map(|(f, l)| spelled(f, *l)).collect();
        let mut clash = false;
        for i in 0..names.len() {
            if level[i] < 2 && names.iter().enumerate().any(|(j, n)| j != i && *n == names[i]) {
                level[i] += 1;
                clash = true;
            }
        }
        if !clash {
            return numbered(names);
        }
    }
}

/// `names` with `_2`, `_3`.. after the second and later of one name (and past any name taken).
fn numbered(mut names: Vec<String>) -> Vec<String> {
    for i in 0..names.len() {
        let mut n = 2;
        while names[..i].contains(&names[i]) {
            let candidate = format!("{}_{n}", names[i].trim_start_matches("r#"));
            if !names.contains(&candidate) {
                names[i] = candidate;
            }
            n += 1;
        }
    }
    names
}

/// `text` as a Rust identifier: runs of other characters made one `_` (`op_add(float, float)`
/// -> `op_add_float_float`), a keyword raw (`r#type`), and names the module has or no raw
/// form takes (`IMAGES`, `self`) with `_fn` after them.
fn rust_ident(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            out.push(c);
        } else if !out.ends_with('_') && !out.is_empty() {
            out.push('_');
        }
    }
    let out = out.trim_end_matches('_').to_string();
    let out = if out.is_empty() { "function".to_string() } else { out };
    if TAKEN.contains(&out.as_str())
        || out.starts_with("PTX_")
        || out.starts_with("CUBIN_")
        || matches!(out.as_str(), "self" | "Self" | "super" | "crate")
    {
        return format!("{out}_fn");
    }
    match syn::parse_str::<syn::Ident>(&out) {
        Ok(_) => out,
        Err(_) => format!("r#{out}"),
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::embed::demangle::bind;
    use crate::embed::signature::cuda_kernels_in;

    /// ggml's binbcast.cu: a template over a binary op and three types, instantiated by a host
    /// launcher for several ops; an overloaded op and a namespaced one beside them.
    #[test]
    fn each_function_an_instance_passes_gets_a_marker_of_its_module() {
        let src = "template <float (*bin_op)(const float, const float), typename T>\n__global__ void k_bin(const T *x, T *y) {}\n";
        let entries =
            ["_Z5k_binIXadL_Z6op_addffEEfEvPKT0_PS1_", "_Z5k_binIXadL_Z6op_mulffEEfEvPKT0_PS1_", "_Z5k_binIXadL_Z6op_addffEEdEvPKT0_PS1_"];
        let mut sigs = bind(cuda_kernels_in(Path::new("binbcast.cu"), src).unwrap(), &entries);
        let markers = name_functions("binbcast", &mut sigs);
        assert_eq!(
            markers.iter().map(|m| (m.name.as_str(), m.function.as_str())).collect::<Vec<_>>(),
            [("op_add", "op_add(float, float)"), ("op_mul", "op_mul(float, float)")]
        );
        let g = sigs[0].generic.as_ref().unwrap();
        let got: Vec<Vec<&str>> = g.instances.iter().map(|i| g.instance_args(i)).collect();
        assert_eq!(
            got,
            [vec!["self::binbcast::op_add", "f32"], vec!["self::binbcast::op_mul", "f32"], vec!["self::binbcast::op_add", "f64"]]
        );
        // Overloads and namespaces keep their markers apart; odd names become identifiers.
        let fs = ["op(float)", "op(double)", "a::neg(float)", "b::neg(float)", "type(int)", "IMAGES(int)", "self(int)"].map(String::from);
        assert_eq!(marker_names(&fs), ["op_float", "op_double", "a_neg", "b_neg", "r#type", "IMAGES_fn", "self_fn"]);
        // Overloads by a pointer and a reference (`ld(const float*, float&)`, `ld(const float&,
        // float&)`) were one marker defined twice: a generated module that did not compile.
        let fs = ["ld(float const*, float&)", "ld(float const&, float&)", "a::b::c(int)", "a_b::c(int)"].map(String::from);
        assert_eq!(marker_names(&fs), ["ld_float_const_ptr_float_ref", "ld_float_const_ref_float_ref", "a_b_c_int", "a_b_c_int_2"]);
    }
}
