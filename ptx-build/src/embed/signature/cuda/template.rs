//! The parameters of a C++ `template <...>`: which are types (a typed launch method can be
//! generic over them) and which are values or templates (the kernel stays untyped).

use super::CTok;

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
}

/// The parameters of the `template <...>` whose `<` is at `open`, in order.
pub(super) fn template_params(toks: &[(CTok<'_>, u32)], open: usize) -> Vec<TemplateParam> {
    let mut params = Vec::new();
    // The current parameter's words at the template's own depth, and the name of a function
    // pointer (`float (*op)(const float)`: `op`, at depth 2 after `(*`); `in_default` after
    // `=` (`typename T = float`), where words are not the declaration's.
    let (mut depth, mut words, mut pointer_name, mut in_default): (i32, Vec<&str>, Option<&str>, bool) = (0, Vec::new(), None, false);
    let mut finish = |words: &mut Vec<&str>, pointer_name: &mut Option<&str>| {
        let is_type = matches!(words.first(), Some(&"typename" | &"class")) && !words.contains(&"template");
        let param = match pointer_name.take() {
            Some(f) => Some((f, format!("{} (*{f})(..)", words.join(" ")))),
            None => words.last().map(|n| (*n, words.join(" "))),
        };
        if let Some((name, decl)) = param {
            params.push(TemplateParam { name: name.to_string(), decl, is_type });
        }
        words.clear();
    };
    for (i, (t, _)) in toks.iter().enumerate().skip(open) {
        match t {
            CTok::Punct('<') | CTok::Punct('(') => depth += 1,
            CTok::Punct('>') | CTok::Punct(')') => {
                depth -= 1;
                if depth == 0 {
                    finish(&mut words, &mut pointer_name);
                    break;
                }
            }
            CTok::Punct(',') if depth == 1 => {
                finish(&mut words, &mut pointer_name);
                in_default = false;
            }
            CTok::Punct('=') if depth == 1 => in_default = true,
            CTok::Ident(w) if depth == 1 && !in_default => words.push(w),
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

/// Why a template over values gets no typed launch method, or none for a template over types.
pub(super) fn value_template_reason(params: &[TemplateParam]) -> Option<String> {
    let values: Vec<String> = params.iter().filter(|p| !p.is_type).map(|p| format!("`{}`", p.decl)).collect();
    match values.len() {
        0 => None,
        1 => Some(format!(
            "template parameter {} is a value, not a type: a kernel templated over values has no typed launch method (each instance is launched by its PTX name)",
            values[0]
        )),
        _ => Some(format!(
            "template parameters {} are values, not types: a kernel templated over values has no typed launch method (each instance is launched by its PTX name)",
            values.join(", ")
        )),
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
        let why = value_template_reason(&template_params(&toks, open)).unwrap();
        assert!(
            why.starts_with("template parameters `float (*op)(..)`, `int qk`, `bool has_bias`, `template class C` are values"),
            "{why}"
        );
    }
}
