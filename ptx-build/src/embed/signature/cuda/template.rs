//! The parameters of a C++ `template <...>`: types (a typed launch method is generic over
//! them), values of integer, `bool` and enum types (const generic parameters), and the rest
//! (function pointers, templates: the kernel stays untyped).

use super::{c_scalar, resolve_aliases, Aliases, CTok, C_TYPE_WORDS};
use crate::embed::signature::{ConstParam, ConstType, Generic, Pack, Param, ParamType, Scalar};

/// One parameter of a `template <...>`.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct TemplateParam {
    /// As the source names it (`T`, `has_bias`).
    pub(super) name: String,
    /// Its declaration's words before any default (`typename T`, `bool has_bias`).
    pub(super) decl: String,
    /// `typename T` or `class T`; not a value (`int N`, `bool b`, `sort_order o`) nor a template
    /// template parameter.
    pub(super) is_type: bool,
    /// A parameter pack (`typename... src1_ptrs`, ggml's binbcast).
    pub(super) pack: bool,
}

/// The parameters of the `template <...>` whose `<` is at `open`, in order.
pub(super) fn template_params(toks: &[(CTok<'_>, u32)], open: usize) -> Vec<TemplateParam> {
    let mut params = Vec::new();
    // The current parameter's words at the template's own depth, and the name of a function
    // pointer (`float (*op)(const float)`: `op`, at depth 2 after `(*`); `in_default` after
    // `=` (`typename T = float`), where words are not the declaration's.
    let (mut depth, mut words, mut pointer_name, mut in_default): (i32, Vec<&str>, Option<&str>, bool) = (0, Vec::new(), None, false);
    let (mut pack, mut parens) = (false, 0);
    let mut finish = |words: &mut Vec<&str>, pointer_name: &mut Option<&str>, pack: &mut bool| {
        // `typename std::enable_if<..>::type = 0` names a type, it does not declare one.
        let is_type = matches!(words.first(), Some(&"typename" | &"class")) && !words.contains(&"template") && !words.contains(&"<..>");
        let param = match pointer_name.take() {
            Some(f) => Some((f, format!("{} (*{f})(..)", words.join(" ")))),
            None => words.last().map(|n| (*n, words.join(" "))),
        };
        if let Some((name, decl)) = param {
            // Unnamed after a class template's arguments (`std::enable_if_t<..> = true`).
            let name = if name == "<..>" { format!("arg{}", params.len()) } else { name.to_string() };
            params.push(TemplateParam { name, decl, is_type, pack: *pack });
        }
        words.clear();
        *pack = false;
    };
    for (i, (t, _)) in toks.iter().enumerate().skip(open) {
        match t {
            // A class template's arguments in the parameter's type (SFINAE's
            // `std::enable_if_t<cond, bool> = true`): kept as one word for the reason.
            CTok::Punct('<') if depth == 1 && !in_default && matches!(toks.get(i - 1), Some((CTok::Ident(w), _)) if *w != "template") => {
                words.push("<..>");
                depth += 1;
            }
            // Inside parentheses `<` and `>` compare (`enable_if_t<(sizeof(T) > 2)>`).
            CTok::Punct('<' | '>') if parens > 0 => {}
            CTok::Punct('(') => {
                depth += 1;
                parens += 1;
            }
            CTok::Punct('<') => depth += 1,
            CTok::Punct('>') | CTok::Punct(')') => {
                if *t == CTok::Punct(')') {
                    parens -= 1;
                }
                depth -= 1;
                if depth == 0 {
                    finish(&mut words, &mut pointer_name, &mut pack);
                    break;
                }
            }
            CTok::Punct(',') if depth == 1 => {
                finish(&mut words, &mut pointer_name, &mut pack);
                in_default = false;
            }
            CTok::Punct('.') if depth == 1 && !in_default => pack = true,
            CTok::Punct('=') if depth == 1 => in_default = true,
            CTok::Ident(w) if depth == 1 && !in_default => words.push(w),
            // `float *table`, `int &r`: an object's address, kept for the reason it is untyped.
            CTok::Punct('*') if depth == 1 && !in_default => words.push("*"),
            CTok::Punct('&') if depth == 1 && !in_default => words.push("&"),
            // `template <template <typename> class C>`: a template template parameter.
            CTok::Ident(w) if depth == 2 && *w == "template" => words.push(w),
            CTok::Ident(w)
                if depth == 2
                    && !in_default
                    && pointer_name.is_none()
                    && matches!(toks.get(i.wrapping_sub(1)), Some((CTok::Punct('*'), _))) =>
            {
                pointer_name = Some(w)
            }
            _ => {}
        }
    }
    params
}

/// A template's parameters as a [`Generic`] kernel's (instances come from the PTX), or why it
/// gets no typed launch method: a parameter over a template, a floating value or a value of a
/// type parameter's type has no Rust form.
pub(super) fn template_generic(params: &[TemplateParam], aliases: &Aliases<'_>) -> Result<Generic, String> {
    let mut generic = Generic { type_params: Vec::new(), const_params: Vec::new(), instances: Vec::new(), pack: None };
    let mut problems = Vec::new();
    for (position, p) in params.iter().enumerate() {
        // The last parameter, a pack of types (ggml's `typename... src1_ptrs`): its length is a
        // const parameter, and the kernel's last parameter must expand it (see `expand_pack`).
        if p.pack && p.is_type && position + 1 == params.len() {
            generic.const_params.push(ConstParam { name: p.name.clone(), ty: ConstType::PackLength, cxx_type: None, position });
            continue;
        }
        if p.pack {
            problems.push(format!(
                "template parameter `{}` is a parameter pack of values or before other parameters, which Rust has no form of",
                p.decl
            ));
            continue;
        }
        if p.is_type {
            generic.type_params.push(p.name.clone());
            continue;
        }
        match const_param_type(p, params, aliases) {
            Ok((ty, cxx_type)) => generic.const_params.push(ConstParam { name: p.name.clone(), ty, cxx_type, position }),
            Err(why) => problems.push(format!("template parameter `{}` {why}", p.decl)),
        }
    }
    match problems.is_empty() {
        true => Ok(generic),
        false => Err(format!("{}: each instance is launched by its PTX name", problems.join("; "))),
    }
}

/// Moves the kernel's last parameter, the expansion of `generic`'s parameter pack
/// (`src1_ptrs... src1s`, or `const Ts *... ptrs`), from `params` into [`Generic::pack`]; the
/// instances say what its elements are. `expands`: that parameter was written with `...`.
/// Without a pack nothing changes; a pack the parameters do not end with is why the kernel
/// stays untyped.
pub(super) fn expand_pack(generic: &mut Generic, params: &mut Vec<Param>, expands: bool) -> Result<(), String> {
    let Some(pack) = generic.pack_length() else { return Ok(()) };
    let expanded = match params.last().map(|p| &p.ty) {
        Some(ParamType::ByValue { ty } | ParamType::Pointer { elem: ty, .. }) => expands && *ty == pack.name,
        _ => false,
    };
    if !expanded {
        return Err(format!(
            "template parameter `typename... {}` is a parameter pack that the kernel's last parameter does not expand (as `{}... name`), which Rust has no form of: each instance is launched by its PTX name",
            pack.name, pack.name
        ));
    }
    if let Some(p) = params.pop() {
        generic.pack = Some(Pack { param: p.name, written: p.ty, elem: None });
    }
    Ok(())
}

/// The Rust type of a template parameter over a value (`int ncols` -> `i32`, `size_t N` ->
/// `usize`, `sort_order o` -> `i32` and the enum's name, `float (*op)(float)` -> a function),
/// or why it has none.
fn const_param_type(p: &TemplateParam, params: &[TemplateParam], aliases: &Aliases<'_>) -> Result<(ConstType, Option<String>), String> {
    if p.decl.contains("(*") {
        return Ok((ConstType::Function, None));
    }
    let words: Vec<&str> = p.decl.split(' ').collect();
    if words.contains(&"template") {
        return Err("is a template template parameter, which Rust has no form of".into());
    }
    if words.contains(&"*") || words.contains(&"&") {
        return Err("is a pointer or reference to an object, which Rust's const generics cannot take".into());
    }
    // A class template's type: ggml's `dequantize_kq_t<dst_t>` (a function pointer's alias
    // template, whose instances pass functions) or SFINAE's `std::enable_if_t<..>`: the
    // instances decide (see `demangle::bind`).
    if words.contains(&"<..>") {
        // The name is the last word, unless the parameter has none (`std::enable_if_t<..> = true`).
        let named = if words.last() == Some(&"<..>") { &words[..] } else { &words[..words.len() - 1] };
        let ty = named.iter().filter(|w| !matches!(**w, "typename" | "const")).copied().collect::<Vec<_>>().join(" ");
        return Ok((ConstType::Value(Scalar::I32), Some(ty)));
    }
    let ty: Vec<&str> = words[..words.len().saturating_sub(1)].iter().copied().filter(|w| !matches!(*w, "typename" | "class")).collect();
    // `std::size_t N`, `cuda::std::int64_t N` (the words leave the `::` out): the C names.
    let named: Vec<&str> = ty.iter().copied().filter(|w| !matches!(*w, "const" | "volatile")).collect();
    let ty = match named.as_slice() {
        ["std", name] | ["cuda", "std", name] if c_scalar(&[name]).is_some() => {
            ty.into_iter().filter(|w| !matches!(*w, "std" | "cuda")).collect()
        }
        _ => ty,
    };
    let written = ty.iter().copied().filter(|w| !matches!(*w, "const" | "volatile" | "enum")).collect::<Vec<_>>().join("::");
    let ty = resolve_aliases(ty, aliases);
    // ggml's `dequantize_kernel_t dequantize_kernel`: a function pointer's typedef.
    if ty.contains(&super::FUNCTION_POINTER) {
        return Ok((ConstType::Function, None));
    }
    match c_scalar(&ty) {
        Some(ParamType::Scalar(Scalar::F32 | Scalar::F64)) => {
            Err("is a floating-point value, which Rust's const generics cannot take".into())
        }
        // An enum with a fixed underlying type (`enum class Mode : unsigned char`) is that type.
        Some(ParamType::Scalar(s)) if ty.contains(&"enum") => Ok((ConstType::Value(s), Some(written))),
        Some(ParamType::Scalar(s)) => Ok((ConstType::Value(s), None)),
        Some(_) => Err("is a value of a type Rust's const generics cannot take".into()),
        None => {
            let named: Vec<&str> = ty.iter().copied().filter(|w| !matches!(*w, "const" | "volatile" | "enum")).collect();
            if named.contains(&"auto") {
                return Err("is `auto`, whose type only each instance knows".into());
            }
            if named.iter().any(|w| params.iter().any(|q| q.is_type && q.name == *w)) {
                return Err("has the type of another template parameter, which Rust's const generics cannot take".into());
            }
            if named.is_empty() || named.iter().any(|w| C_TYPE_WORDS.contains(w)) {
                return Err("is a value of a type Rust's const generics cannot take".into());
            }
            // A name the reader does not know is an enum's (`sort_order`, `ggml_type`): its
            // instances are demangled as `(sort_order)1`, and an enum's values fit an `i32`
            // (checked per instance when they are bound), or a function pointer's typedef
            // (ggml's `dequantize_kernel_t`), which the instances' `&f(..)` show.
            Ok((ConstType::Value(Scalar::I32), Some(named.join("::"))))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::c_tokens;
    use super::*;

    /// ggml-cuda's forms: values, function pointers (`float (*op)(const float)`), defaults and
    /// template template parameters next to type parameters.
    #[test]
    fn template_parameters_are_told_types_from_values() {
        let src = "template <float (*op)(const float), typename src_t, int qk = 32, bool has_bias, template <typename> class C, class T = float>\n__global__ void k(src_t *x) {}\n";
        let toks = c_tokens(src);
        let open = toks.iter().position(|(t, _)| *t == CTok::Punct('<')).unwrap();
        let got: Vec<(String, String, bool)> = template_params(&toks, open).into_iter().map(|p| (p.name, p.decl, p.is_type)).collect();
        let want = [
            ("op", "float (*op)(..)", false),
            ("src_t", "typename src_t", true),
            ("qk", "int qk", false),
            ("has_bias", "bool has_bias", false),
            ("C", "template class C", false),
            ("T", "class T", true),
        ];
        assert_eq!(got, want.map(|(n, d, t)| (n.to_string(), d.to_string(), t)));
        let why = template_generic(&template_params(&toks, open), &Aliases::new()).unwrap_err();
        assert_eq!(
            why,
            "template parameter `template class C` is a template template parameter, which Rust has no form of: each instance is launched by its PTX name"
        );
    }

    /// The value types of ggml's, DeepSpeed's and mamba's templates, each as a const generic
    /// parameter's type; the ones Rust has no const generic form of, with the reason.
    #[test]
    fn values_of_integer_bool_and_enum_types_are_const_parameters() {
        let generic = |decls: &str| {
            let src = format!("typedef unsigned int uint;\nenum Big : unsigned long long {{ BIG = 1 }};\ntemplate <{decls}>\n__global__ void k(float *x) {{}}\n");
            let toks = c_tokens(&src);
            let open = toks.iter().position(|(t, _)| *t == CTok::Punct('<')).unwrap();
            template_generic(&template_params(&toks, open), &super::super::typedefs(&toks))
        };
        // A comparison in parentheses is no bracket: two parameters, the second over a value of
        // a class template's type (SFINAE).
        let toks = c_tokens("template <typename T, std::enable_if_t<(sizeof(T) > 2), bool> = true>\n__global__ void k(T *x) {}\n");
        let open = toks.iter().position(|(t, _)| *t == CTok::Punct('<')).unwrap();
        let params = template_params(&toks, open);
        assert_eq!(params.len(), 2, "{params:?}");
        assert!(params[0].is_type && !params[1].is_type, "{params:?}");
        // ggml's binbcast: `typename... src1_ptrs`, last: its length is a const parameter (the
        // kernel's last parameter must expand it: `demangle::pack`).
        let g = generic("float (*bin_op)(const float, const float), typename src0_t, typename... src1_ptrs").unwrap();
        assert_eq!(
            (g.const_params[1].name.as_str(), g.const_params[1].ty, g.const_params[1].position),
            ("src1_ptrs", ConstType::PackLength, 2)
        );
        let e = generic("typename... Ts, typename U").unwrap_err();
        assert!(e.starts_with("template parameter `typename Ts` is a parameter pack of values or before other parameters"), "{e}");
        let g = generic(
            "typename T, int ncols, bool has_fusion, size_t splitD, unsigned n, uint m, const int64_t big, ggml_type type, char c, Big b, \
             std::size_t STRIDE, const cuda::std::uint32_t BITS, ns::mode m2",
        )
        .unwrap();
        assert_eq!(g.type_params, ["T"]);
        let got: Vec<(&str, Scalar, Option<&str>, usize)> = g
            .const_params
            .iter()
            .map(|c| match c.ty {
                ConstType::Value(s) => (c.name.as_str(), s, c.cxx_type.as_deref(), c.position),
                ConstType::Function | ConstType::PackLength => panic!("{c:?}"),
            })
            .collect();
        assert_eq!(
            got,
            [
                ("ncols", Scalar::I32, None, 1),
                ("has_fusion", Scalar::Bool, None, 2),
                ("splitD", Scalar::Usize, None, 3),
                ("n", Scalar::U32, None, 4),
                ("m", Scalar::U32, None, 5),
                ("big", Scalar::I64, None, 6),
                ("type", Scalar::I32, Some("ggml_type"), 7),
                ("c", Scalar::I8, None, 8),
                // `enum Big : unsigned long long`: its underlying type.
                ("b", Scalar::U64, Some("Big"), 9),
                // The C names in `std` (not an enum `std::size_t`, as read before).
                ("STRIDE", Scalar::Usize, None, 10),
                ("BITS", Scalar::U32, None, 11),
                ("m2", Scalar::I32, Some("ns::mode"), 12),
            ]
        );
        // ggml's unary and binary ops: a function, a type parameter on the Rust side.
        let g = generic("float (*op)(const float), typename T").unwrap();
        assert_eq!(
            (g.const_params[0].ty, g.const_params[0].position, g.type_params.as_slice()),
            (ConstType::Function, 0, &["T".to_string()][..])
        );
        for (decls, why) in [
            ("float scale", "template parameter `float scale` is a floating-point value"),
            ("typename T, T v", "template parameter `T v` has the type of another template parameter"),
            ("auto v", "template parameter `auto v` is `auto`"),
            ("__half h", "template parameter `__half h` is a value of a type Rust's const generics cannot take"),
            // The address of a `__device__` array: was "a floating-point value", and `int *p`
            // an `i32` whose instances "take a function" (`&itable`).
            ("float *table", "template parameter `float * table` is a pointer or reference to an object"),
            ("const int* p", "template parameter `const int * p` is a pointer or reference to an object"),
            ("float &r", "template parameter `float & r` is a pointer or reference to an object"),
        ] {
            let e = generic(decls).unwrap_err();
            assert!(e.starts_with(why) && e.ends_with(": each instance is launched by its PTX name"), "{decls}: {e}");
        }
    }
}
