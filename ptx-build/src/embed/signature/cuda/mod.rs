//! CUDA C++ kernels: the `__global__` functions of a .cu file (or of its preprocessed
//! translation unit, for kernels stamped out by macros), read from [`crate::text::c_lex`]'s
//! tokens in one linear pass.

use std::path::Path;

use super::{KernelSig, Param, ParamType, Scalar};
use crate::error::{Error, Result};
use crate::text::c_lex::{self, Kind};

mod template;
use template::{expand_pack, template_generic, template_params};

/// A token of C++ source as signatures need it: preprocessor lines, numbers and character
/// literals are dropped; string literals are kept (raw) for `extern "C"`.
#[derive(Clone, Copy, Debug, PartialEq)]
enum CTok<'a> {
    Ident(&'a str),
    Str(&'a str),
    Punct(char),
}

fn c_tokens(src: &str) -> Vec<(CTok<'_>, u32)> {
    let toks: Vec<(CTok<'_>, u32)> = c_lex::tokens(src)
        .into_iter()
        .filter(|t| !t.directive)
        .filter_map(|t| {
            let tok = match t.kind {
                Kind::Ident => CTok::Ident(t.text),
                Kind::Str => CTok::Str(t.literal_body()),
                Kind::Punct(c) => CTok::Punct(c as char),
                Kind::Number | Kind::Char => return None,
            };
            Some((tok, t.line))
        })
        .collect();
    // The preprocessor spells `__global__` as `__attribute__((global))`.
    const GLOBAL: [CTok<'static>; 6] =
        [CTok::Ident("__attribute__"), CTok::Punct('('), CTok::Punct('('), CTok::Ident("global"), CTok::Punct(')'), CTok::Punct(')')];
    // Launch bounds and other attributes between `void` and the name (`__launch_bounds__(256, 4)`,
    // or `__attribute__((launch_bounds(256, 4)))` preprocessed) say nothing of the signature:
    // dropped with their arguments, or the name would be read as `__launch_bounds__`.
    const SKIPPED: [&str; 4] = ["__launch_bounds__", "__maxnreg__", "__cluster_dims__", "__attribute__"];
    let mut out = Vec::with_capacity(toks.len());
    let mut i = 0;
    while i < toks.len() {
        if toks.len() - i >= GLOBAL.len() && toks[i..i + GLOBAL.len()].iter().map(|t| t.0).eq(GLOBAL) {
            out.push((CTok::Ident("__global__"), toks[i].1));
            i += GLOBAL.len();
        } else if toks[i].0 == CTok::Punct('[') && toks.get(i + 1).is_some_and(|t| t.0 == CTok::Punct('[')) {
            // A C++11 attribute (`[[maybe_unused]] int n`, `[[nodiscard]]`): nothing of the
            // signature. Dropped up to its `]]`.
            i += 2;
            while i < toks.len() && !(toks[i].0 == CTok::Punct(']') && toks.get(i + 1).is_some_and(|t| t.0 == CTok::Punct(']'))) {
                i += 1;
            }
            i += 2;
        } else if matches!(toks[i].0, CTok::Ident(w) if SKIPPED.contains(&w)) && toks.get(i + 1).is_some_and(|t| t.0 == CTok::Punct('(')) {
            let mut depth = 0usize;
            i += 1;
            while i < toks.len() {
                match toks[i].0 {
                    CTok::Punct('(') => depth += 1,
                    CTok::Punct(')') => depth -= 1,
                    _ => {}
                }
                i += 1;
                if depth == 0 {
                    break;
                }
            }
        } else {
            out.push(toks[i]);
            i += 1;
        }
    }
    out
}

/// The launch type of a C type as text (`float const*`, `unsigned int`): how demangled C++
/// names are read.
pub(crate) fn c_type(text: &str) -> std::result::Result<ParamType, String> {
    let toks: Vec<CTok<'_>> = c_tokens(text).into_iter().map(|(t, _)| t).collect();
    if toks.is_empty() {
        return Err(format!("`{text}` is not a type"));
    }
    c_param(&toks, 0, &Aliases::new(), text).map(|(_, ty)| ty)
}

/// Every `__global__` function of a .cu file, in source order (a declaration and its
/// definition count once).
pub fn cuda_kernels(cu: &Path) -> Result<Vec<KernelSig>> {
    let bytes = std::fs::read(cu).map_err(|e| Error::io("read", cu, e))?;
    cuda_kernels_in(cu, &String::from_utf8_lossy(&bytes))
}

/// The kernels of C++ source `src`. Linear in its length: files that stamp out hundreds of
/// kernels with macros (candle's) are common, and each token is looked at a bounded number of
/// times (the declaration's prefix is summarised as the scan passes, never rescanned).
pub(crate) fn cuda_kernels_in(file: &Path, src: &str) -> Result<Vec<KernelSig>> {
    let toks = c_tokens(src);
    let aliases = typedefs(&toks);
    let ident = |i: usize| match toks.get(i) {
        Some((CTok::Ident(s), _)) => Some(*s),
        _ => None,
    };
    let punct = |i: usize, c: char| matches!(toks.get(i), Some((CTok::Punct(p), _)) if *p == c);
    let mut out: Vec<KernelSig> = Vec::new();
    let mut seen_names = std::collections::HashSet::new();
    // For each open brace: does it open an `extern "C" {` block, and the namespace it opens.
    let mut blocks: Vec<bool> = Vec::new();
    let mut namespaces: Vec<Option<String>> = Vec::new();
    let mut extern_c_blocks = 0usize;
    let mut decl_start = 0;
    // The last `template` and the last `extern "C"` (index of `extern`) before `summarised`.
    let (mut last_template, mut last_extern_c, mut summarised) = (None, None, 0usize);
    let mut i = 0;
    while i < toks.len() {
        match &toks[i].0 {
            CTok::Punct('{') => {
                let extern_c = i >= 2 && ident(i - 2) == Some("extern") && toks[i - 1].0 == CTok::Str("C");
                blocks.push(extern_c);
                namespaces.push(namespace_opened(&toks, i));
                extern_c_blocks += usize::from(extern_c);
                decl_start = i + 1;
            }
            CTok::Punct('}') => {
                extern_c_blocks -= usize::from(blocks.pop().unwrap_or(false));
                namespaces.pop();
                decl_start = i + 1;
            }
            CTok::Punct(';') => decl_start = i + 1,
            CTok::Ident("__global__") => {
                // The declaration so far (`extern "C"`, `template <..>`) is toks[decl_start..i].
                while summarised < i {
                    match toks[summarised].0 {
                        // The declaration's own `template`, not one inside its parameter list
                        // (`template <template <typename> class V>`).
                        CTok::Ident("template") if last_template.is_none_or(|t| t < decl_start) => last_template = Some(summarised),
                        CTok::Ident("extern") if summarised + 1 < i && toks[summarised + 1].0 == CTok::Str("C") => {
                            last_extern_c = Some(summarised)
                        }
                        _ => {}
                    }
                    summarised += 1;
                }
                let templated = last_template.is_some_and(|t| t >= decl_start);
                let extern_c = extern_c_blocks > 0 || last_extern_c.is_some_and(|e| e >= decl_start);
                // The name: the identifier before the first `(` at this level.
                let mut j = i + 1;
                while j < toks.len() && !punct(j, '(') && !punct(j, ';') && !punct(j, '{') {
                    j += 1;
                }
                let Some(name) = ident(j.wrapping_sub(1)).filter(|_| punct(j, '(')) else {
                    i = j;
                    continue;
                };
                let name = name.to_string();
                let line = toks[j - 1].1;
                // Parameters up to the matching `)`, split at the commas outside template
                // arguments (boojum-cuda's `matrix_getter<bf, ld_modifier::cs> ys`): a `<` after
                // a name opens them.
                let (mut depth, mut angles) = (0, 0usize);
                let mut k = j;
                let mut params: Vec<Vec<CTok>> = vec![Vec::new()];
                while k < toks.len() {
                    match &toks[k].0 {
                        CTok::Punct('<') if depth == 1 && ident(k - 1).is_some() => angles += 1,
                        CTok::Punct('>') if depth == 1 && angles > 0 => angles -= 1,
                        CTok::Punct('(') => {
                            depth += 1;
                            if depth == 1 {
                                k += 1;
                                continue;
                            }
                        }
                        CTok::Punct(')') => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        CTok::Punct(',') if depth == 1 && angles == 0 => {
                            params.push(Vec::new());
                            k += 1;
                            continue;
                        }
                        _ => {}
                    }
                    params.last_mut().expect("non-empty").push(toks[k].0);
                    k += 1;
                }
                let params: Vec<Vec<CTok>> = params.into_iter().filter(|p| !p.is_empty() && *p != [CTok::Ident("void")]).collect();
                let mut sig = KernelSig {
                    name: name.clone(),
                    params: Vec::new(),
                    file: file.to_path_buf(),
                    line,
                    mangled: !extern_c || templated,
                    untyped: None,
                    doc: Vec::new(),
                    generic: None,
                    ptx_name: None,
                    namespace: enclosing_namespace(&namespaces, &toks, j - 1),
                };
                // A parameter that cannot be typed leaves the kernel untyped, not the build
                // refused: it is embedded and launched through cudarc's builder.
                for (n, p) in params.iter().enumerate() {
                    match c_param(p, n, &aliases, src) {
                        Ok((pname, ty)) => sig.params.push(Param { name: pname, ty }),
                        Err(message) => {
                            sig.params.clear();
                            sig.untyped = Some(message);
                            break;
                        }
                    }
                }
                if templated {
                    let tparams = last_template.map(|t| template_params(&toks, t + 1)).unwrap_or_default();
                    let expands = params.last().is_some_and(|p| p.contains(&CTok::Punct('.')));
                    let generic = template_generic(&tparams, &aliases).and_then(|mut g| {
                        // A parameter that cannot be typed already said why.
                        if sig.untyped.is_none() {
                            expand_pack(&mut g, &mut sig.params, expands)?;
                        }
                        Ok(g)
                    });
                    match generic {
                        Err(why) if sig.untyped.is_none() => {
                            sig.params.clear();
                            sig.untyped = Some(why);
                        }
                        Err(_) => {}
                        Ok(generic) => sig.generic = Some(generic),
                    }
                }
                // A declaration and its definition count once; C++ overloads (same name, other
                // parameters or template parameters, or another namespace) are kernels of their own.
                if seen_names.insert((name, format!("{}{:?}{:?}{:?}", sig.namespace, sig.params, sig.untyped, sig.generic))) {
                    out.push(sig);
                }
                i = k;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    Ok(out)
}

/// The namespace of the kernel named at `name`: the open namespaces', and a qualified name's
/// (`__global__ void ops::relu(..) {`, defining one an `ops` block declared).
fn enclosing_namespace(open: &[Option<String>], toks: &[(CTok<'_>, u32)], name: usize) -> String {
    let mut parts: Vec<&str> = open.iter().flatten().map(String::as_str).collect();
    let mut qualifiers = Vec::new();
    let mut j = name;
    while j >= 3 && toks[j - 1].0 == CTok::Punct(':') && toks[j - 2].0 == CTok::Punct(':') {
        let CTok::Ident(w) = toks[j - 3].0 else { break };
        qualifiers.push(w);
        j -= 3;
    }
    parts.extend(qualifiers.iter().rev());
    parts.join("::")
}

/// The namespace that the `{` at `open` opens, as a demangled name spells it: `namespace a {`,
/// `inline namespace v1 {`, `namespace a::b {` (C++17), `namespace {` (`(anonymous namespace)`).
fn namespace_opened(toks: &[(CTok<'_>, u32)], open: usize) -> Option<String> {
    let mut names = Vec::new();
    let mut j = open;
    while let Some(CTok::Ident(w)) = j.checked_sub(1).map(|p| toks[p].0) {
        if w == "namespace" {
            break;
        }
        names.push(w);
        j -= 1;
        match (j.checked_sub(2).map(|p| toks[p].0), j.checked_sub(1).map(|p| toks[p].0)) {
            (Some(CTok::Punct(':')), Some(CTok::Punct(':'))) => j -= 2,
            _ => break,
        }
    }
    if j.checked_sub(1).map(|p| toks[p].0) != Some(CTok::Ident("namespace")) {
        return None;
    }
    names.reverse();
    Some(if names.is_empty() { "(anonymous namespace)".to_string() } else { names.join("::") })
}

/// Whether a part of a preprocessed unit from `file` (`system`: flagged a system header) is not
/// the user's code to read kernels from: system headers, `<built-in>` and the like, and the files
/// below `roots` (the CUDA install's headers).
pub(crate) fn not_user_code(file: &str, system: bool, roots: &[&Path]) -> bool {
    system || file.starts_with('<') || roots.iter().any(|root| Path::new(file).starts_with(root))
}

/// The kernels of a preprocessed translation unit (`nvcc -E`), at the file and line the
/// preprocessor's line markers (`# 12 "cuda/k.cu"`) give: for a kernel a macro stamped out, the
/// line of the macro's use. Files are relative to `dir` (where nvcc ran); system headers and
/// the files below `skip_roots` (the CUDA install's headers) are not read.
pub fn cuda_kernels_preprocessed(text: &str, dir: &Path, skip_roots: &[&Path]) -> Result<Vec<KernelSig>> {
    let (user, places) = crate::text::line_markers::kept_lines(text, |file, system| not_user_code(file, system, skip_roots));
    let mut out = Vec::new();
    for mut sig in cuda_kernels_in(Path::new(""), &user)? {
        let Some(&(file, line)) = places.get((sig.line as usize).wrapping_sub(1)) else { continue };
        // nvcc was given `./file.cu`: the markers keep the `./`, and name a header as the
        // preprocessor reached it (`cuda/moe/../common.cuh`).
        sig.file = crate::diag::joined(dir, Path::new(file));
        sig.line = line;
        out.push(sig);
    }
    Ok(out)
}

/// The Rust type of a C scalar type, spelled as its words (`unsigned long long`).
fn c_scalar(words: &[&str]) -> Option<ParamType> {
    // `enum` marks an enum with a fixed underlying type, which it passes as (see [`typedefs`]).
    let words: Vec<&str> = words.iter().copied().filter(|w| !matches!(*w, "const" | "volatile" | "struct" | "signed" | "enum")).collect();
    let unsigned = words.contains(&"unsigned");
    let rest: Vec<&str> = words.iter().copied().filter(|w| *w != "unsigned" && *w != "int").collect();
    let has_int = words.contains(&"int");
    let scalar = |s| Some(ParamType::Scalar(s));
    let by_value = |t: &str| Some(ParamType::ByValue { ty: t.to_string() });
    match (unsigned, rest.as_slice()) {
        (false, []) if has_int => scalar(Scalar::I32),
        (true, []) => scalar(Scalar::U32),
        (false, ["long", "long"]) | (false, ["long"]) => scalar(Scalar::I64),
        (true, ["long", "long"]) | (true, ["long"]) => scalar(Scalar::U64),
        (false, ["short"]) => scalar(Scalar::I16),
        (true, ["short"]) => scalar(Scalar::U16),
        (false, ["char"]) => scalar(Scalar::I8),
        (true, ["char"]) | (false, ["char8_t"]) => scalar(Scalar::U8),
        (false, ["char16_t"]) => scalar(Scalar::U16),
        (false, ["char32_t"]) => scalar(Scalar::U32),
        (false, ["bool"]) => scalar(Scalar::Bool),
        (false, ["float"]) => scalar(Scalar::F32),
        (false, ["double"]) => scalar(Scalar::F64),
        (false, ["size_t"]) | (false, ["uintptr_t"]) => scalar(Scalar::Usize),
        (false, ["ptrdiff_t"]) | (false, ["intptr_t"]) => scalar(Scalar::Isize),
        (false, ["int8_t"]) => scalar(Scalar::I8),
        (false, ["uint8_t"]) => scalar(Scalar::U8),
        (false, ["int16_t"]) => scalar(Scalar::I16),
        (false, ["uint16_t"]) => scalar(Scalar::U16),
        (false, ["int32_t"]) => scalar(Scalar::I32),
        (false, ["uint32_t"]) => scalar(Scalar::U32),
        (false, ["int64_t"]) => scalar(Scalar::I64),
        (false, ["uint64_t"]) => scalar(Scalar::U64),
        (false, ["__half"]) | (false, ["half"]) => by_value("::ptx_runtime::half::f16"),
        (false, ["__nv_bfloat16"]) | (false, ["nv_bfloat16"]) => by_value("::ptx_runtime::half::bf16"),
        (false, ["__half2"]) | (false, ["half2"]) => by_value("::ptx_runtime::cuda_types::Half2"),
        (false, ["__nv_bfloat162"]) | (false, ["nv_bfloat162"]) => by_value("::ptx_runtime::cuda_types::Bf16x2"),
        (false, ["__nv_fp8_e4m3"]) => by_value("::ptx_runtime::cuda_types::Fp8E4M3"),
        (false, ["__nv_fp8_e5m2"]) => by_value("::ptx_runtime::cuda_types::Fp8E5M2"),
        // TMA's tensor map (`const CUtensorMap *`, or `__grid_constant__ const CUtensorMap`).
        (false, ["CUtensorMap"]) | (false, ["CUtensorMap_st"]) => by_value("::ptx_runtime::TensorMap"),
        // Texture and surface objects are `unsigned long long` handles.
        (false, ["cudaTextureObject_t"]) | (false, ["cudaSurfaceObject_t"]) => scalar(Scalar::U64),
        // cuFFT's typedefs (`cufft.h`), for a file read without its headers.
        (false, ["cufftReal"]) => scalar(Scalar::F32),
        (false, ["cufftDoubleReal"]) => scalar(Scalar::F64),
        (false, [one]) => {
            VECTOR_TYPES.iter().find(|(c, _)| c == one).and_then(|(_, host)| by_value(&format!("::ptx_runtime::cuda_types::{host}")))
        }
        _ => None,
    }
}

/// CUDA's vector types (`vector_types.h`), cuComplex's and cuFFT's typedefs of them, with their host
/// twins in `ptx_runtime::cuda_types` (same size and alignment; `long` is 64-bit on the hosts
/// CUDA supports, so `long2` is `longlong2`'s twin).
const VECTOR_TYPES: &[(&str, &str)] = &[
    ("char2", "Char2"),
    ("char3", "Char3"),
    ("char4", "Char4"),
    ("uchar2", "UChar2"),
    ("uchar3", "UChar3"),
    ("uchar4", "UChar4"),
    ("short2", "Short2"),
    ("short3", "Short3"),
    ("short4", "Short4"),
    ("ushort2", "UShort2"),
    ("ushort3", "UShort3"),
    ("ushort4", "UShort4"),
    ("int2", "Int2"),
    ("int3", "Int3"),
    ("int4", "Int4"),
    ("uint2", "UInt2"),
    ("uint3", "UInt3"),
    ("uint4", "UInt4"),
    ("long2", "LongLong2"),
    ("long3", "LongLong3"),
    ("long4", "LongLong4"),
    ("ulong2", "ULongLong2"),
    ("ulong3", "ULongLong3"),
    ("ulong4", "ULongLong4"),
    ("longlong2", "LongLong2"),
    ("longlong3", "LongLong3"),
    ("longlong4", "LongLong4"),
    ("ulonglong2", "ULongLong2"),
    ("ulonglong3", "ULongLong3"),
    ("ulonglong4", "ULongLong4"),
    ("float2", "Float2"),
    ("float3", "Float3"),
    ("float4", "Float4"),
    ("double2", "Double2"),
    ("double3", "Double3"),
    ("double4", "Double4"),
    ("cuFloatComplex", "Float2"),
    ("cuComplex", "Float2"),
    ("cuDoubleComplex", "Double2"),
    ("cufftComplex", "Float2"),
    ("cufftDoubleComplex", "Double2"),
    // `struct dim3 { unsigned x, y, z; }` by value: `uint3`'s layout.
    ("dim3", "UInt3"),
];

/// The words of C's built-in types. The last five have no size every host agrees on or no
/// Rust twin: a parameter of one is untyped with the advice to use a fixed-size type, not to
/// define a host type of its name.
const C_TYPE_WORDS: &[&str] = &[
    "const",
    "volatile",
    "unsigned",
    "signed",
    "int",
    "long",
    "short",
    "char",
    "bool",
    "float",
    "double",
    "void",
    "struct",
    "wchar_t",
    "__int128",
    "__int128_t",
    "__uint128_t",
    "__fp16",
];

/// Plain type aliases (`typedef __nv_bfloat16 floatX;`): alias -> the words it stands for.
type Aliases<'a> = std::collections::HashMap<&'a str, Vec<&'a str>>;

/// What a function pointer's alias (`typedef float (*unary_fn)(float)`) stands for in [`Aliases`].
pub(super) const FUNCTION_POINTER: &str = "(*)";

/// The `typedef`s of `toks` that name a type by words alone (llm.c's `floatX`, from the
/// preprocessed unit where it comes from a header), and those of function pointers (`typedef
/// float (*unary_fn)(float)`, `using unary_fn = float (*)(float)`: [`FUNCTION_POINTER`]). An
/// alias defined twice differently (one per `#if` branch, read before preprocessing) is left
/// out: which one applies is not known.
fn typedefs<'a>(toks: &[(CTok<'a>, u32)]) -> Aliases<'a> {
    let mut out: Aliases<'a> = Aliases::new();
    let mut conflicting = std::collections::HashSet::new();
    let mut i = 0;
    while i < toks.len() {
        // `enum class Mode : unsigned char {`: the enum is its underlying type, marked `enum`.
        if toks[i].0 == CTok::Ident("enum") {
            let at = i + 1 + usize::from(matches!(toks.get(i + 1), Some((CTok::Ident("class" | "struct"), _))));
            if let (Some((CTok::Ident(name), _)), Some((CTok::Punct(':'), _))) = (toks.get(at), toks.get(at + 1)) {
                let mut words = vec!["enum"];
                let mut j = at + 2;
                while let Some((CTok::Ident(w), _)) = toks.get(j) {
                    words.push(*w);
                    j += 1;
                }
                if words.len() > 1 && matches!(toks.get(j), Some((CTok::Punct('{' | ';'), _))) {
                    match out.get(name) {
                        Some(prev) if *prev != words => {
                            conflicting.insert(*name);
                        }
                        _ => {
                            out.insert(*name, words);
                        }
                    }
                }
            }
            i += 1;
            continue;
        }
        // `using unary_fn = float (*)(float);`: a function pointer's alias.
        if let (CTok::Ident("using"), Some((CTok::Ident(name), _)), Some((CTok::Punct('='), _))) =
            (toks[i].0, toks.get(i + 1), toks.get(i + 2))
        {
            let mut j = i + 3;
            while let Some((CTok::Ident(_), _)) = toks.get(j) {
                j += 1;
            }
            let shape = [CTok::Punct('('), CTok::Punct('*'), CTok::Punct(')'), CTok::Punct('(')];
            if toks.get(j..j + 4).is_some_and(|t| t.iter().map(|t| t.0).eq(shape)) {
                out.insert(name, vec![FUNCTION_POINTER]);
            }
            i = j.max(i + 1);
            continue;
        }
        if toks[i].0 != CTok::Ident("typedef") {
            i += 1;
            continue;
        }
        let mut words = Vec::new();
        let mut j = i + 1;
        while let Some((CTok::Ident(w), _)) = toks.get(j) {
            words.push(*w);
            j += 1;
        }
        // `typedef float (*unary_fn)(float);`: a function pointer's alias.
        if let (
            Some((CTok::Punct('('), _)),
            Some((CTok::Punct('*'), _)),
            Some((CTok::Ident(name), _)),
            Some((CTok::Punct(')'), _)),
            Some((CTok::Punct('('), _)),
        ) = (toks.get(j), toks.get(j + 1), toks.get(j + 2), toks.get(j + 3), toks.get(j + 4))
        {
            out.insert(name, vec![FUNCTION_POINTER]);
            i = j + 5;
            continue;
        }
        // Only `typedef WORDS NAME;`: structs, pointers and function types are not aliases here.
        if toks.get(j).is_some_and(|t| t.0 == CTok::Punct(';')) && words.len() >= 2 {
            let name = words.pop().unwrap_or_default();
            match out.get(name) {
                Some(prev) if *prev != words => {
                    conflicting.insert(name);
                }
                _ => {
                    out.insert(name, words);
                }
            }
        }
        i = j.max(i + 1);
    }
    for name in conflicting {
        out.remove(name);
    }
    out
}

/// `base` with a type alias the C reader does not know itself replaced by what it stands for.
fn resolve_aliases<'a>(mut base: Vec<&'a str>, aliases: &Aliases<'a>) -> Vec<&'a str> {
    // A bounded number of steps: `typedef A B; typedef B A;` must not loop.
    for _ in 0..8 {
        let named: Vec<usize> = (0..base.len()).filter(|i| !matches!(base[*i], "const" | "volatile" | "struct")).collect();
        let [i] = named.as_slice() else { return base };
        let Some(target) = aliases.get(base[*i]).filter(|t| c_scalar(&base).is_none() && !t.contains(&base[*i])) else { return base };
        base.splice(*i..*i + 1, target.iter().copied());
    }
    base
}

/// The tokens as `src` has them, from the first word to the last, each run of whitespace one
/// space: the tokens leave numbers out (`getter<int, 4> xs`). `None` where an end is not a word
/// of `src` or a comment or directive lies between.
fn source_text(src: &str, toks: &[CTok<'_>]) -> Option<String> {
    let (CTok::Ident(first), CTok::Ident(last)) = (toks.first()?, toks.last()?) else { return None };
    // Where the words lie in `src`, by address: they are slices of it.
    let base = src.as_ptr() as usize;
    let start = (first.as_ptr() as usize).checked_sub(base)?;
    let end = (last.as_ptr() as usize).checked_sub(base)?.checked_add(last.len())?;
    let text = src.get(start..end)?;
    if text.contains("/*") || text.contains("//") || text.contains('#') {
        return None;
    }
    Some(text.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// Tokens as C++ is usually written (`vector_setter<bf, st_modifier::cs> out`, `const float **p`),
/// for messages: a space between two words, after a comma, and before a `*` or `&` after a word.
fn c_text(toks: &[CTok<'_>]) -> String {
    let mut out = String::new();
    let mut prev: Option<&CTok> = None;
    for t in toks {
        let word = matches!(t, CTok::Ident(_) | CTok::Str(_));
        let space = match prev {
            None => false,
            Some(CTok::Punct(',')) => true,
            Some(CTok::Ident(_) | CTok::Str(_) | CTok::Punct('>' | ')' | ']')) if word => true,
            Some(CTok::Ident(_) | CTok::Str(_) | CTok::Punct('>')) => matches!(t, CTok::Punct('*' | '&')),
            Some(_) => false,
        };
        if space {
            out.push(' ');
        }
        match t {
            CTok::Ident(s) => out.push_str(s),
            CTok::Str(s) => {
                out.push('"');
                out.push_str(s);
                out.push('"');
            }
            CTok::Punct(c) => out.push(*c),
        }
        prev = Some(t);
    }
    out
}

/// `toks` with `std::`, `cuda::std::` (libcu++'s) or `::` taken off the C library's type names
/// (`std::size_t`, `::int64_t`: `<cstddef>` and `<cstdint>` declare them in both namespaces).
fn unqualified_c_names<'t, 'a>(toks: Vec<&'t CTok<'a>>) -> Vec<&'t CTok<'a>> {
    let colons = |i: usize| matches!(toks.get(i..i + 2), Some([CTok::Punct(':'), CTok::Punct(':')]));
    let c_name = |i: usize| matches!(toks.get(i), Some(CTok::Ident(w)) if c_scalar(&[w]).is_some());
    let word = |i: usize, w: &str| matches!(toks.get(i), Some(CTok::Ident(x)) if *x == w);
    let mut out = Vec::with_capacity(toks.len());
    let mut i = 0;
    while i < toks.len() {
        let after_word = i > 0 && matches!(toks[i - 1], CTok::Ident(_));
        if word(i, "cuda") && colons(i + 1) && word(i + 3, "std") && colons(i + 4) && c_name(i + 6) {
            i += 6;
        } else if word(i, "std") && colons(i + 1) && c_name(i + 3) {
            i += 3;
        } else if !after_word && colons(i) && c_name(i + 2) {
            i += 2;
        } else {
            out.push(toks[i]);
            i += 1;
        }
    }
    out
}

/// The standard library's empty tags, whose type is their value.
const STD_TAGS: &[&str] = &["bool_constant", "integral_constant", "true_type", "false_type"];

/// Whether a parameter is of an empty standard tag type (`std::bool_constant<Atomic>`, `const
/// cuda::std::true_type t`), and its name if it has one.
fn std_tag<'a>(toks: &[&CTok<'a>]) -> Option<Option<&'a str>> {
    let word = |i: usize, w: &str| matches!(toks.get(i), Some(CTok::Ident(x)) if *x == w);
    let colons = |i: usize| matches!(toks.get(i..i + 2), Some([CTok::Punct(':'), CTok::Punct(':')]));
    let mut i = usize::from(word(0, "const"));
    if word(i, "cuda") && colons(i + 1) {
        i += 3;
    } else if colons(i) {
        i += 2;
    }
    if word(i, "std") && colons(i + 1) {
        i += 3;
    }
    let Some(CTok::Ident(tag)) = toks.get(i) else { return None };
    if !STD_TAGS.contains(tag) {
        return None;
    }
    i += 1;
    if matches!(toks.get(i), Some(CTok::Punct('<'))) {
        let mut depth = 0;
        while let Some(t) = toks.get(i) {
            match t {
                CTok::Punct('<') => depth += 1,
                CTok::Punct('>') => depth -= 1,
                _ => {}
            }
            i += 1;
            if depth == 0 {
                break;
            }
        }
    }
    match toks.get(i..) {
        Some([]) => Some(None),
        Some([CTok::Ident(name)]) => Some(Some(*name)),
        _ => None,
    }
}

/// One C parameter (`const float *__restrict__ x`) as a name and a launch type.
/// `src` is the text the tokens come from, for messages.
fn c_param(toks: &[CTok<'_>], index: usize, aliases: &Aliases<'_>, src: &str) -> std::result::Result<(String, ParamType), String> {
    // A default argument (ggml's `const int64_t mul_stride_row = 0`) says nothing of the type.
    let toks = toks.iter().position(|t| *t == CTok::Punct('=')).map_or(toks, |eq| &toks[..eq]);
    let text = source_text(src, toks).unwrap_or_else(|| c_text(toks));
    // Qualifiers that change nothing of how the host passes it (`__grid_constant__`: a by-value
    // parameter the kernel may take the address of, as TMA descriptors are passed).
    let toks: Vec<&CTok> = toks
        .iter()
        .filter(|t| !matches!(t, CTok::Ident(w) if w.starts_with("__restrict") || matches!(*w, "restrict" | "__grid_constant__")))
        .collect();
    let toks = unqualified_c_names(toks);
    if let Some(name) = std_tag(&toks) {
        // The type as written, numbers included (the tokens have none).
        let written = name.and_then(|n| text.strip_suffix(n)).unwrap_or(&text).trim();
        let written = written.strip_prefix("const ").unwrap_or(written).to_string();
        return Ok((name.map_or_else(|| format!("arg{index}"), str::to_string), ParamType::Tag { written }));
    }
    if toks.iter().any(|t| matches!(t, CTok::Punct('&'))) {
        return Err(format!("parameter `{text}`: a kernel cannot take a reference; take a pointer to device memory"));
    }
    if toks.iter().any(|t| matches!(t, CTok::Punct('[') | CTok::Punct('<') | CTok::Punct(':'))) {
        return Err(format!("parameter `{text}`: arrays, templates and qualified types cannot be launched with typed arguments; use a pointer, a scalar or a plain struct"));
    }
    let stars = toks.iter().filter(|t| matches!(t, CTok::Punct('*'))).count();
    let first_star = toks.iter().position(|t| matches!(t, CTok::Punct('*'))).unwrap_or(toks.len());
    let idents: Vec<&str> = toks
        .iter()
        .filter_map(|t| match t {
            CTok::Ident(s) => Some(*s),
            _ => None,
        })
        .collect();
    // The last identifier is the name when something stands before it that is not a type word
    // (`int n`, `float *x`, `Pair p`), else the parameter is unnamed (`int`, `float *`).
    let last_is_name = match toks.last() {
        Some(CTok::Ident(w)) => stars > 0 && toks.len() - 1 > first_star || (idents.len() >= 2 && !C_TYPE_WORDS.contains(w)),
        _ => false,
    };
    let (name, type_words): (String, Vec<&str>) = if last_is_name {
        (idents[idents.len() - 1].to_string(), idents[..idents.len() - 1].to_vec())
    } else {
        (format!("arg{index}"), idents.clone())
    };
    let before_star: Vec<&str> = toks[..first_star]
        .iter()
        .filter_map(|t| match t {
            CTok::Ident(s) => Some(*s),
            _ => None,
        })
        .collect();
    let base: Vec<&str> = type_words.iter().copied().filter(|w| before_star.contains(w)).collect();
    let base = resolve_aliases(base, aliases);
    let base_ty = || -> std::result::Result<String, String> {
        if base.contains(&FUNCTION_POINTER) {
            return Err(format!(
                "parameter `{text}`: a pointer to a device function, whose address only device code can take (the host reads one from a `__device__` variable with `cudaMemcpyFromSymbol`), which a typed method has no form of"
            ));
        }
        if base.contains(&"void") {
            return Err(format!("parameter `{text}`: `void` is not a parameter type; use `void *` for device memory of any type"));
        }
        match c_scalar(&base) {
            Some(ParamType::Scalar(s)) => Ok(s.rust_name().to_string()),
            Some(ParamType::ByValue { ty }) => Ok(ty),
            _ => {
                let words: Vec<&str> = base.iter().copied().filter(|w| !matches!(*w, "const" | "volatile" | "struct")).collect();
                match words.as_slice() {
                    [one] if !C_TYPE_WORDS.contains(one) => Ok(one.to_string()),
                    ["long", "double"] => Err(format!("parameter `{text}`: `long double` has no Rust equivalent here; device code passes it as a 64-bit `double`: declare it `double`")),
                    _ => Err(format!("parameter `{text}`: `{}` has no Rust equivalent here; use a fixed-size type such as int, unsigned, long long, float, double or a struct", words.join(" "))),
                }
            }
        }
    };
    let ty = match stars {
        0 => match c_scalar(&base) {
            Some(t) => t,
            None => ParamType::ByValue { ty: base_ty()? },
        },
        // `void *`: device memory of any element type (candle's `const void * __restrict__ vx`).
        1 if base.contains(&"void") => ParamType::AnyPointer { mutable: !before_star.contains(&"const") },
        1 => ParamType::Pointer { mutable: !before_star.contains(&"const"), elem: base_ty()? },
        // `float **`, `const float *const *`: a buffer of device addresses. `const` between two
        // stars qualifies the pointer before it: `float *const *` is a read-only buffer of
        // `*mut f32`.
        _ => {
            let mut levels: Vec<bool> = vec![before_star.contains(&"const")];
            for seg in toks[first_star + 1..].split(|t| matches!(t, CTok::Punct('*'))).take(stars - 1) {
                levels.push(seg.iter().any(|t| matches!(t, CTok::Ident("const"))));
            }
            let elem = if base.contains(&"void") { "c_void".to_string() } else { base_ty()? };
            let pointee = levels[..stars - 1].iter().rev().map(|c| if *c { "*const " } else { "*mut " }).collect::<String>() + &elem;
            ParamType::Addresses { mutable: !levels[stars - 1], pointee }
        }
    };
    Ok((name, ty))
}

#[cfg(test)]
mod tests;
