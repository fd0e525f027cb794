//! C++ kernels by their mangled PTX names. A kernel without `extern "C"` is exported under its
//! Itanium-mangled name (`_Z3addIfEvPT_PKS0_i`); demangled (`add<float>(float*, float const*,
//! int)`) it names the source declaration it came from and, for a template, the types it was
//! instantiated for. That turns template kernels into one generic launch method and plain C++
//! kernels into methods named after the function.

use std::collections::BTreeMap;

use crate::embed::signature::{c_type, ConstType, Generic, Instance, KernelSig, ParamType, Scalar};
use pack::{pack_element, pack_elements, template_args_fit};

mod pack;

/// A mangled kernel name, demangled and split.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Demangled {
    /// With namespaces (`ns::scale`).
    pub qualified: String,
    /// Template arguments as C++ spells them (`float`, `unsigned int`, `256`); empty for a
    /// function that is not a template.
    pub template_args: Vec<String>,
    /// Parameter types as C++ spells them (`float const*`).
    pub params: Vec<String>,
    /// The whole demangled signature, for messages and docs.
    pub text: String,
}

impl Demangled {
    /// The function's own name, without namespaces.
    pub fn name(&self) -> &str {
        self.qualified.rsplit("::").next().unwrap_or(&self.qualified)
    }

    /// The first template argument that a typed method has no form of, as C++ spells it (a
    /// class template's instance, a template, a pointer type): what keeps this instance from a
    /// typed method. Values and functions' addresses are const or marker arguments, not this.
    pub fn unbound_argument(&self) -> Option<&str> {
        self.template_args.iter().map(String::as_str).find(|a| !is_value(a) && host_type(a).is_none())
    }
}

/// Demangles `ptx_name` with cpp_demangle; `None` for names that are not mangled C++.
pub fn demangle(ptx_name: &str) -> Option<Demangled> {
    if !ptx_name.starts_with("_Z") {
        return None;
    }
    let symbol = cpp_demangle::Symbol::new(ptx_name).ok()?;
    let text = symbol.demangle_with_options(&cpp_demangle::DemangleOptions::new().no_return_type()).ok()?;
    let text = without_internal_namespaces(&text);
    // `ns::add<float, int>(float*, int)`: the parameter list is the last top-level `(...)`.
    let open = top_level_open(&text, '(', ')')?;
    let params = split_top_level(&text[open + 1..text.len() - 1]);
    let head = &text[..open];
    let (qualified, template_args) = match head.strip_suffix('>').and_then(|_| top_level_open(head, '<', '>')) {
        Some(lt) => (head[..lt].to_string(), split_top_level(&head[lt + 1..head.len() - 1])),
        None => (head.to_string(), Vec::new()),
    };
    let params = if params == ["void"] { Vec::new() } else { params };
    Some(Demangled { qualified, template_args, params, text })
}

/// `text` without the namespaces nvcc puts a file's `static` functions in
/// (`_INTERNAL_90e471bf_7_gelu_cu_6ade3964::op_abs` -> `op_abs`): a hash of the file that
/// says nothing to the reader.
fn without_internal_namespaces(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("_INTERNAL_") {
        let start_of_word = at == 0 || !rest[..at].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_');
        let end = rest[at..].find("::").map(|e| at + e).filter(|e| rest[at..*e].chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
        match end {
            Some(end) if start_of_word => {
                out.push_str(&rest[..at]);
                rest = &rest[end + 2..];
            }
            _ => {
                out.push_str(&rest[..at + 1]);
                rest = &rest[at + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The index of the bracket that opens the group `text` ends with (`text` must end with `close`).
fn top_level_open(text: &str, open: char, close: char) -> Option<usize> {
    if !text.ends_with(close) {
        return None;
    }
    let mut depth = 0i32;
    for (i, c) in text.char_indices().rev() {
        if c == close {
            depth += 1;
        } else if c == open {
            depth -= 1;
            if depth == 0 {
                return Some(i);
            }
        }
    }
    None
}

/// `a, b<c, d>, e(f, g)` split at the commas outside brackets, trimmed; empty for empty text.
fn split_top_level(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in text.char_indices() {
        match c {
            '<' | '(' | '[' => depth += 1,
            '>' | ')' | ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(text[start..i].trim().to_string());
                start = i + 1;
            }
            _ => {}
        }
    }
    let last = text[start..].trim();
    if !last.is_empty() {
        out.push(last.to_string());
    }
    out
}

/// The launch type of a C++ type as the demangler spells it.
fn launch_type(cxx: &str) -> Option<ParamType> {
    c_type(cxx).ok()
}

/// A template argument as a host type (`float` -> `f32`, `__half` -> `half::f16`); none for a
/// value (`true`, `128ul`, `(sort_order)0`) or a type with no Rust equivalent.
fn host_type(cxx: &str) -> Option<String> {
    if is_value(cxx) {
        return None;
    }
    match launch_type(cxx)? {
        ParamType::Scalar(s) => Some(s.rust_name().to_string()),
        ParamType::ByValue { ty } => Some(ty),
        ParamType::Pointer { .. } | ParamType::AnyPointer { .. } | ParamType::Addresses { .. } | ParamType::Tag { .. } => None,
    }
}

/// Whether a demangled template argument is a value, as the demangler spells them: a number
/// (`4`, `128ul`, `-1`), `true`/`false`, an enumerator or cast (`(sort_order)0`), an address
/// (`&table`), `nullptr`.
fn is_value(arg: &str) -> bool {
    let arg = arg.trim();
    arg.starts_with(|c: char| c.is_ascii_digit() || matches!(c, '-' | '(' | '&')) || matches!(arg, "true" | "false" | "nullptr")
}

/// Binds the C++ (mangled) kernels read from a .cu file to its PTX entries:
/// - a template kernel's instantiations become one generic kernel (`generic` filled in, one
///   instance per entry, its type arguments as host types);
/// - a plain C++ kernel gets its mangled name as `ptx_name` and keeps its C++ name; overloads
///   (one name, several entries) get the parameter types in their method names
///   (`scale_f32_i32`, `scale_f64_i32`).
///
/// Kernels that cannot be bound keep `mangled` (or get `untyped` with the reason) and are
/// embedded without a typed method. `extern "C"` kernels pass through unchanged.
pub fn bind(sigs: Vec<KernelSig>, entries: &[&str]) -> Vec<KernelSig> {
    let demangled: Vec<(&str, Demangled)> = entries.iter().filter_map(|e| Some((*e, demangle(e)?))).collect();
    let mut out = Vec::new();
    let mut plain: Vec<(KernelSig, Demangled)> = Vec::new();
    for sig in sigs {
        if !sig.mangled || sig.untyped.is_some() {
            out.push(sig);
            continue;
        }
        // A parameter pack's instances have its elements as parameters after the others.
        let packed = sig.generic.as_ref().is_some_and(|g| g.pack.is_some());
        let candidates: Vec<&(&str, Demangled)> = demangled
            .iter()
            .filter(|(_, d)| d.name() == sig.name && (d.params.len() == sig.params.len() || packed && d.params.len() > sig.params.len()))
            .collect();
        match sig.generic.clone() {
            Some(g) => {
                let mut instances = Vec::new();
                let mut problem = None;
                // An overload's instances are those whose parameters it declares: `k(T*, int)`
                // and `k(T*, float)` both have two, and each takes only its own.
                let fits = |d: &Demangled, sig: &KernelSig, renaming: bool| {
                    d.params.iter().zip(&sig.params).all(|(t, p)| {
                        instance_param_fits(t, &p.ty, &g.type_params)
                            || (renaming && !names_type_param(&p.ty, &g.type_params) && renamed(t, &p.ty).is_some())
                    })
                };
                let pick = |sig: &KernelSig, renaming: bool| -> Vec<&&(&str, Demangled)> {
                    candidates
                        .iter()
                        .filter(|(_, d)| !d.template_args.is_empty() && fits(d, sig, renaming) && template_args_fit(&g, d))
                        .collect()
                };
                let mut sig = sig;
                let mut own = pick(&sig, false);
                // None fits as written: a parameter's type may be a header's typedef (`fr_t` for
                // sppark's `gl64_t`), which the mangled names spell by what it stands for.
                if own.is_empty() {
                    own = pick(&sig, true);
                    if let Some((_, first)) = own.first() {
                        let names = take_renamed(&mut sig.params, first, &g.type_params);
                        if own.iter().any(|(_, d)| !fits(d, &sig, false)) {
                            problem = Some(format!(
                                "its instances pass different types as {names}, whose type is named by a typedef the signature reader does not see: each instance is launched by its PTX name"
                            ));
                        }
                    }
                }
                // A parameter of a type the reader took for an enum's whose instances pass
                // functions (`&dequantize_q4_0(..)`) is a function pointer's typedef.
                let mut g = g;
                for c in g.const_params.iter_mut().filter(|c| c.cxx_type.is_some()) {
                    if own.first().is_some_and(|(_, d)| d.template_args[c.position].starts_with('&')) {
                        // Not an enum: the docs would call it one "by its integer value".
                        (c.ty, c.cxx_type) = (ConstType::Function, None);
                    }
                }
                // Templates of one name and parameters in two namespaces (`c::k`, `d::k`): each
                // declaration takes the instances of its own namespace. Where that finds none (a
                // namespace a macro opens, in a file read unpreprocessed), they are one
                // declaration to the reader: one method would launch both, `k::<1>` twice.
                let here: Vec<_> = own.iter().copied().filter(|(_, d)| declared_in(d, &sig.namespace)).collect();
                if !here.is_empty() {
                    own = here;
                }
                let mut namespaces: Vec<&str> = own.iter().map(|(_, d)| d.qualified.as_str()).collect();
                namespaces.sort_unstable();
                namespaces.dedup();
                if namespaces.len() > 1 {
                    problem = Some(format!(
                        "templates of one name in several namespaces (`{}`), which the signature reader does not tell apart: each instance is launched by its PTX name",
                        namespaces.join("`, `")
                    ));
                } else {
                    let mut packs = Vec::new();
                    for (entry, d) in own {
                        match instance(&g, d) {
                            Ok((args, values)) => {
                                if let Some(pack) = &g.pack {
                                    // The arguments after the others are the pack's elements.
                                    let first = g.type_params.len() + g.const_params.len() - 1;
                                    match pack_elements(&pack.written, &d.template_args[first..]) {
                                        Ok(elements) => packs.push((args.clone(), elements)),
                                        Err(why) => {
                                            problem = Some(format!(
                                                "its parameter pack `{}` {why}: each instance is launched by its PTX name",
                                                pack.param
                                            ))
                                        }
                                    }
                                }
                                instances.push(Instance { args, values, ptx_name: entry.to_string() })
                            }
                            // Said of the template: the list names each instance's argument.
                            Err(why) => problem = Some(why),
                        }
                    }
                    if let Some(pack) = g.pack.as_mut().filter(|_| problem.is_none()) {
                        match pack_element(&g.type_params, &packs) {
                            Ok(elem) => pack.elem = elem,
                            Err(why) => {
                                problem =
                                    Some(format!("its parameter pack `{}` {why}: each instance is launched by its PTX name", pack.param))
                            }
                        }
                    }
                }
                if let Some(why) = problem {
                    sig.untyped = Some(why);
                    sig.params.clear();
                    sig.generic = None;
                } else if instances.is_empty() {
                    // A template nobody instantiated has nothing in the PTX to launch.
                    continue;
                } else {
                    sig.generic = Some(Generic { instances, ..g });
                    sig.mangled = false;
                }
                out.push(sig);
            }
            None => {
                let fits = |d: &Demangled, renaming: bool| {
                    d.params
                        .iter()
                        .zip(&sig.params)
                        .all(|(t, p)| launch_type(t).is_none_or(|t| same_layout(&t, &p.ty)) || (renaming && renamed(t, &p.ty).is_some()))
                };
                let pick = |renaming: bool| -> Vec<&&(&str, Demangled)> {
                    candidates.iter().filter(|(_, d)| d.template_args.is_empty() && fits(d, renaming)).collect()
                };
                let mut matching = pick(false);
                if matching.is_empty() {
                    matching = pick(true);
                }
                // Kernels of one name and parameters in two namespaces: this declaration's is the
                // one of its namespace.
                if matching.len() > 1 {
                    matching.retain(|(_, d)| declared_in(d, &sig.namespace));
                }
                match matching.as_slice() {
                    [(entry, d)] => {
                        let mut sig = sig;
                        take_renamed(&mut sig.params, d, &[]);
                        sig.ptx_name = Some(entry.to_string());
                        sig.mangled = false;
                        plain.push((sig, d.clone()));
                    }
                    _ => out.push(sig),
                }
            }
        }
    }
    // Overloads: the C++ name is shared, the method names must not be. Kernels of one name in
    // several namespaces (`a::scale`, `b::scale`) get their namespaces in theirs (`a_scale`,
    // `b_scale`). Within a namespace a template keeps the name where it is the only template of
    // its name (its instances are one generic method), plain kernels get their parameter types
    // in theirs (`residual_f32_f32_i32`); two templates of one name both get theirs
    // (`dequantize_t_i8_f32_i32`).
    let typed_template = |s: &KernelSig| s.generic.is_some() && s.untyped.is_none() && !s.mangled;
    let key = |s: &KernelSig| (s.name.clone(), s.namespace.clone());
    // Plain kernels and templates of each name in each namespace.
    let mut counts: BTreeMap<(String, String), (usize, usize)> = BTreeMap::new();
    for (sig, _) in &plain {
        counts.entry(key(sig)).or_default().0 += 1;
    }
    for sig in out.iter().filter(|s| typed_template(s)) {
        counts.entry(key(sig)).or_default().1 += 1;
    }
    // How many namespaces have kernels of each name (counted once: candle has 1,400 kernels).
    let mut namespaces: BTreeMap<&str, usize> = BTreeMap::new();
    for (name, _) in counts.keys() {
        *namespaces.entry(name.as_str()).or_default() += 1;
    }
    let rename = |sig: &mut KernelSig, template: bool| {
        let (plain, templates) = counts[&key(sig)];
        let by_types = if template { templates > 1 } else { plain + templates > 1 };
        if namespaces[sig.name.as_str()] > 1 {
            sig.name = namespaced_name(sig);
        }
        if by_types {
            sig.name = overload_name(sig);
        }
    };
    for sig in out.iter_mut().filter(|s| typed_template(s)) {
        rename(sig, true);
    }
    for (mut sig, d) in plain {
        rename(&mut sig, false);
        sig.doc.push(format!(" C++ `{}`.", d.text));
        out.push(sig);
    }
    // Overloads that differ only in their template parameters (`template <int N> k(float*)` and
    // `template <int N, int M> k(float*)`) still share a name: launched by name, not refused.
    let mut named: BTreeMap<String, usize> = BTreeMap::new();
    for sig in out.iter().filter(|s| typed_template(s)) {
        *named.entry(sig.name.clone()).or_default() += 1;
    }
    for sig in out.iter_mut().filter(|s| typed_template(s) && named[&s.name] > 1) {
        sig.untyped = Some(
            "another template of this name has the same parameters and differs only in its template's: each instance is launched by its PTX name"
                .into(),
        );
        sig.params.clear();
        // The C++ name again, by which the untyped list finds the declaration of each instance.
        if let Some(d) = sig.generic.take().and_then(|g| demangle(&g.instances.first()?.ptx_name)) {
            sig.name = d.name().to_string();
        }
        sig.mangled = true;
    }
    out
}

/// An instance's template arguments as host types (for the type parameters) and Rust literals
/// (for the const parameters), or why it has none.
fn instance(g: &Generic, d: &Demangled) -> Result<(Vec<String>, Vec<String>), String> {
    let (mut args, mut values) = (Vec::new(), Vec::new());
    let mut consts = g.const_params.iter().peekable();
    for (position, arg) in d.template_args.iter().enumerate() {
        match consts.next_if(|c| c.position == position).map(|c| (c, c.ty)) {
            // The last parameter: the rest of the arguments are the pack's (see `pack_element`).
            Some((_, ConstType::PackLength)) => {
                values.push((d.template_args.len() - position).to_string());
                break;
            }
            // A device function, by the demangled address (`&op_add(float, float)`), until the
            // unit names its marker type.
            Some((c, ConstType::Function)) => match arg.starts_with('&') {
                true => values.push(arg.to_string()),
                false => {
                    return Err(format!(
                        "an instance's argument for template parameter `{}` (`{arg}`) is not a function's address: each instance is launched by its PTX name",
                        c.name
                    ))
                }
            },
            // SFINAE's `std::enable_if_t<cond, bool> = true`: a value only there to select.
            Some((c, ConstType::Value(_))) if c.cxx_type.as_deref().is_some_and(|t| t.contains("<..>")) => {
                return Err(format!(
                    "template parameter `{}` is a value of a class template's type (`{}`, SFINAE's), which Rust's const generics cannot take: each instance is launched by its PTX name",
                    c.name,
                    c.cxx_type.as_deref().unwrap_or_default()
                ))
            }
            Some((c, ConstType::Value(ty))) => values.push(const_value(arg, ty).ok_or_else(|| match (arg.starts_with('&'), &c.cxx_type) {
                (true, _) => format!(
                    "template parameter `{}` takes a function in one instance (here `{arg}`) and a value in another: each instance is launched by its PTX name",
                    c.name
                ),
                (false, Some(e)) if ty == Scalar::I32 => format!(
                    "an instance's argument for template parameter `{}` (`{arg}`) does not fit the `i32` an enum without a fixed underlying type is taken as (give `{e}` one, `enum {e} : long long`, for a typed method): each instance is launched by its PTX name",
                    c.name
                ),
                _ => format!(
                    "an instance's argument for template parameter `{}` (`{arg}`) is not a value of its type (`{}`): each instance is launched by its PTX name",
                    c.name,
                    c.cxx_type.as_deref().unwrap_or(ty.rust_name())
                ),
            })?),
            None if is_value(arg) => {
                return Err("an instance has a value as a template argument where the template declares a type: each instance is launched by its PTX name".into())
            }
            None => args.push(host_type(arg).ok_or_else(|| {
                "an instance has a template argument with no Rust type (a class or struct template the host cannot name): each instance is launched by its PTX name".to_string()
            })?),
        }
    }
    // An empty pack has no argument: its length is 0.
    if consts.next_if(|c| c.ty == ConstType::PackLength).is_some() {
        values.push("0".into());
    }
    Ok((args, values))
}

/// A demangled template value (`128`, `(unsigned long)128`, `-1`, `true`, `(sort_order)1`) as a
/// Rust literal of `ty`; none where it is not an integer or `bool` in `ty`'s range (a function's
/// address, a floating value).
fn const_value(arg: &str, ty: Scalar) -> Option<String> {
    let arg = arg.trim();
    if ty == Scalar::Bool {
        return matches!(arg, "true" | "false").then(|| arg.to_string());
    }
    // The demangler writes a type cast before every integer that is not an `int`.
    let digits = match arg.strip_prefix('(') {
        Some(rest) => rest.split_once(')')?.1,
        None => arg,
    };
    let n: i128 = digits.parse().ok()?;
    let fits = match ty {
        Scalar::U8 => u8::try_from(n).is_ok(),
        Scalar::I8 => i8::try_from(n).is_ok(),
        Scalar::U16 => u16::try_from(n).is_ok(),
        Scalar::I16 => i16::try_from(n).is_ok(),
        Scalar::U32 => u32::try_from(n).is_ok(),
        Scalar::I32 => i32::try_from(n).is_ok(),
        Scalar::U64 | Scalar::Usize => u64::try_from(n).is_ok(),
        Scalar::I64 | Scalar::Isize => i64::try_from(n).is_ok(),
        Scalar::Bool | Scalar::F32 | Scalar::F64 => false,
    };
    fits.then(|| n.to_string())
}

/// Whether an instance's demangled parameter type `cxx` can be the template's parameter `ty`:
/// one naming a type parameter (`T*`, `T`) takes any type of its shape (a pointer for a
/// pointer), the others their own layout.
fn instance_param_fits(cxx: &str, ty: &ParamType, type_params: &[String]) -> bool {
    let Some(t) = launch_type(cxx) else { return true };
    // `T *x` instantiated with `float *` is `float**`: it fits, and the template is untyped
    // later with that reason.
    let pointer = |p: &ParamType| matches!(p, ParamType::Pointer { .. } | ParamType::AnyPointer { .. } | ParamType::Addresses { .. });
    // `T **` takes any buffer of addresses of that depth.
    let generic = names_type_param(ty, type_params);
    if let (true, ParamType::Addresses { pointee: a, .. }, ParamType::Addresses { pointee: b, .. }) = (generic, &t, ty) {
        a.matches('*').count() == b.matches('*').count()
    } else if generic {
        pointer(&t) == pointer(ty)
    } else {
        same_layout(&t, ty)
    }
}

/// Whether source parameter type `ty` names one of the template's type parameters (`T*`, `T`).
fn names_type_param(ty: &ParamType, type_params: &[String]) -> bool {
    match ty {
        ParamType::Pointer { elem: t, .. } | ParamType::ByValue { ty: t } => type_params.contains(t),
        ParamType::Addresses { pointee, .. } => type_params.iter().any(|p| pointee.ends_with(&format!(" {p}"))),
        _ => false,
    }
}

/// The demangled parameter type `cxx`, where the source spells it by another name the reader
/// cannot follow: a typedef from a header (`fr_t *out` with sppark's `typedef gl64_t fr_t;`, or
/// `real x` with `typedef float real;`), read as a struct's name. The mangled name holds what
/// the typedef stands for. `None` where the two differ in more than a name (a pointer and a
/// value, a `const` pointee and a mutable one).
fn renamed(cxx: &str, ty: &ParamType) -> Option<ParamType> {
    let t = launch_type(cxx)?;
    let named = |name: &str| name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    match (&t, ty) {
        (ParamType::Pointer { mutable: a, .. }, ParamType::Pointer { mutable: b, elem }) if a == b && named(elem) => Some(t),
        // `real **x`: the same pointers to another name.
        (ParamType::Addresses { mutable: a, pointee: x }, ParamType::Addresses { mutable: b, pointee: y }) => {
            let (xp, _) = x.rsplit_once(' ')?;
            let (yp, elem) = y.rsplit_once(' ')?;
            (a == b && xp == yp && named(elem)).then(|| t.clone())
        }
        (ParamType::ByValue { .. } | ParamType::Scalar(_), ParamType::ByValue { ty }) if named(ty) => Some(t),
        _ => None,
    }
}

/// `params` with each type that differs only by its name from demangled `d`'s (see
/// [`renamed`]) replaced by `d`'s, but those of `type_params`; returns the parameters
/// replaced (`` `out`, `a` ``).
fn take_renamed(params: &mut [crate::embed::signature::Param], d: &Demangled, type_params: &[String]) -> String {
    let mut names = Vec::new();
    for (p, cxx) in params.iter_mut().zip(&d.params) {
        if names_type_param(&p.ty, type_params) || launch_type(cxx).is_none_or(|t| same_layout(&t, &p.ty)) {
            continue;
        }
        if let Some(t) = renamed(cxx, &p.ty) {
            p.ty = t;
            names.push(format!("`{}`", p.name));
        }
    }
    names.join(", ")
}

/// Whether a demangled parameter type and a source parameter type pass the same way (`T*` and
/// `float*` both pointers; `int` and `int`).
fn same_layout(a: &ParamType, b: &ParamType) -> bool {
    match (a, b) {
        (ParamType::Pointer { elem: x, .. }, ParamType::Pointer { elem: y, .. }) => x == y,
        (ParamType::AnyPointer { .. }, ParamType::AnyPointer { .. }) => true,
        (ParamType::Addresses { pointee: x, .. }, ParamType::Addresses { pointee: y, .. }) => x == y,
        // `std::bool_constant<Atomic>` is `std::integral_constant<bool, true>` in an instance.
        (ParamType::Tag { .. }, ParamType::Tag { .. }) => true,
        (ParamType::Pointer { .. } | ParamType::AnyPointer { .. } | ParamType::Addresses { .. }, _)
        | (_, ParamType::Pointer { .. } | ParamType::AnyPointer { .. } | ParamType::Addresses { .. }) => false,
        // `size_t` in the source is `unsigned long` in the mangled name (`m`), `ptrdiff_t`
        // `long`: one type by two names.
        (ParamType::Scalar(x), ParamType::Scalar(y)) => same_scalar(*x) == same_scalar(*y),
        _ => a == b,
    }
}

/// `usize` as `u64` and `isize` as `i64`, which they are on every host CUDA runs on.
fn same_scalar(s: Scalar) -> Scalar {
    match s {
        Scalar::Usize => Scalar::U64,
        Scalar::Isize => Scalar::I64,
        other => other,
    }
}

/// Whether `d` is the kernel of that name declared in `namespace` (as [`KernelSig::namespace`]).
pub(crate) fn declared_in(d: &Demangled, namespace: &str) -> bool {
    match d.qualified.strip_suffix(d.name()) {
        Some(scope) => scope.strip_suffix("::").unwrap_or(scope) == namespace,
        None => false,
    }
}

/// A kernel's name after its namespaces' (`ops_v2_relu` for `ops::v2::relu`; the anonymous
/// namespace is `anonymous`).
fn namespaced_name(sig: &KernelSig) -> String {
    let mut parts: Vec<&str> = sig.namespace.split("::").filter(|p| !p.is_empty()).collect();
    for p in parts.iter_mut().filter(|p| **p == "(anonymous namespace)") {
        *p = "anonymous";
    }
    parts.push(&sig.name);
    parts.join("_")
}

/// `scale` with parameters `(float*, int)` -> `scale_f32_i32`.
fn overload_name(sig: &KernelSig) -> String {
    let mut name = sig.name.clone();
    for p in &sig.params {
        let t = match &p.ty {
            ParamType::Scalar(s) => s.rust_name().to_string(),
            ParamType::AnyPointer { .. } => "void".to_string(),
            ParamType::Tag { .. } => "tag".to_string(),
            // `float **` -> `f32ptr`.
            ParamType::Addresses { pointee, .. } => {
                let elem = pointee.rsplit([' ', ':']).next().unwrap_or(pointee).to_lowercase();
                format!("{elem}{}", "ptr".repeat(pointee.matches('*').count()))
            }
            ParamType::Pointer { elem, .. } | ParamType::ByValue { ty: elem } => elem.rsplit("::").next().unwrap_or(elem).to_lowercase(),
        };
        name.push('_');
        name.push_str(&t);
    }
    name
}

#[cfg(test)]
mod tests;
