//! Whether the host can name a kernel's struct types.
//!
//! A CUDA kernel's `Params p` or `const block_q8_1 *y`, and a Rust kernel's `p: Affine` where
//! `Affine` is the kernel crate's own, are typed with the host type of that name, which the
//! generated module finds through `use super::*`. Where the host crate's sources never mention
//! the name, the generated module would not compile; such a kernel is embedded without a typed
//! method instead (launched by name, listed with the reason) until the host defines or imports
//! the type. The test is by name: a type brought in by a glob import (`use shared::*`) is not
//! seen, and the reason says to name it.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::embed::signature::{KernelSig, ParamType};

/// The identifiers of the host crate's Rust sources (`src/**/*.rs`).
#[derive(Debug, Default)]
pub struct HostNames {
    /// Where they were read from, for messages.
    pub src: PathBuf,
    /// Each word, with the files it is in (an index into `files`).
    names: HashMap<String, Vec<usize>>,
    files: Vec<PathBuf>,
    /// What the generated module now relies on, for the build script to watch.
    watch: Mutex<Watch>,
}

#[derive(Debug, Default)]
struct Watch {
    /// A kernel lost its typed method here: `src/` is watched so that defining the type
    /// anywhere reruns the build script.
    missed: bool,
    /// Files that name a type a typed method uses: removing it from them must rerun the build
    /// script too, or the generated module would name a type that is gone.
    relied_on: BTreeSet<usize>,
}

/// Rust's primitive types, as the C reader names pointees.
pub(crate) const PRIMITIVES: &[&str] =
    &["bool", "char", "u8", "i8", "u16", "i16", "u32", "i32", "u64", "i64", "u128", "i128", "usize", "isize", "f32", "f64"];

impl HostNames {
    /// Reads the identifiers of `manifest_dir/src/**/*.rs` (none where it has no `src/`).
    pub fn read(manifest_dir: &Path) -> HostNames {
        let src = manifest_dir.join("src");
        let mut names: HashMap<String, Vec<usize>> = HashMap::new();
        let mut files = Vec::new();
        for file in crate::project::glob_files(&src, "**/*.rs").unwrap_or_default() {
            let Ok(text) = std::fs::read_to_string(&file) else { continue };
            let index = files.len();
            files.push(file);
            // Every word, comments and strings included: a name seen where it is not a type
            // only keeps the typed method the generated module had before this check.
            for word in text.split(|c: char| !(c.is_alphanumeric() || c == '_')).filter(|w| !w.is_empty()) {
                let at = names.entry(word.to_string()).or_default();
                if at.last() != Some(&index) {
                    at.push(index);
                }
            }
        }
        HostNames { src, names, files, watch: Mutex::default() }
    }

    /// What the build script must watch for the generated module to stay right: `src/` where a
    /// kernel waits for a type, and each file that names a type a typed method uses.
    pub fn watched(&self) -> Vec<PathBuf> {
        let Ok(w) = self.watch.lock() else { return vec![self.src.clone()] };
        let src = w.missed.then(|| self.src.clone());
        src.into_iter().chain(w.relied_on.iter().map(|&i| self.files[i].clone())).collect()
    }

    /// Whether the host names `ty`, noting the files that do.
    fn knows(&self, ty: &str) -> bool {
        let Some(files) = self.names.get(ty) else { return false };
        if let Ok(mut w) = self.watch.lock() {
            w.relied_on.extend(files.iter().copied());
        }
        true
    }

    /// Leaves untyped each kernel of `sigs` with a struct type (by value or behind a pointer)
    /// that the host's sources never name, with the reason and the fix. Template parameters are
    /// not struct names. A Rust kernel's types come here after `host_types` named those of other
    /// crates by their crate (`::shared::Affine`): what is left is a type of the kernel crate
    /// itself, which the generated module can only name if the host has a twin; without one
    /// rustc would stop the host's build in the generated file.
    /// A template's instances are checked too (they are known once the kernels are bound to the
    /// PTX's entries): llama.cpp's `conv2d_dw_kernel<whcn_layout>` names a C++ tag type as its
    /// argument, which the generated impl of the instance trait would name.
    pub fn untype_unknown(&self, sigs: &mut [KernelSig]) {
        for sig in sigs.iter_mut().filter(|s| s.untyped.is_none()) {
            let params = sig.generic.as_ref().map(|g| g.type_params.clone()).unwrap_or_default();
            let unknown_type = |ty: &String| {
                // Arrays and tuples behind a Rust pointer are not names to look up.
                let named = ty.chars().all(|c| c.is_alphanumeric() || c == '_' || c == ':');
                let standard = ["core::", "std::", "alloc::"].iter().any(|c| ty.starts_with(c));
                let user = named && !standard && !ty.starts_with("::") && !PRIMITIVES.contains(&ty.as_str()) && !params.contains(ty);
                let last = ty.rsplit("::").next().unwrap_or(ty);
                user && !self.knows(last)
            };
            // A parameter pack's elements are a parameter of the method too.
            let pack = sig.generic.as_ref().and_then(|g| g.pack.as_ref()).and_then(|p| Some((p.param.as_str(), p.elem.as_ref()?)));
            let in_param = sig.params.iter().map(|p| (p.name.as_str(), &p.ty)).chain(pack).find_map(|(name, ty)| match ty {
                ParamType::ByValue { ty } | ParamType::Pointer { elem: ty, .. } if unknown_type(ty) => {
                    Some(format!("parameter `{name}`: the host crate has no type `{ty}`"))
                }
                _ => None,
            });
            let instances = sig.generic.as_ref().map(|g| g.instances.as_slice()).unwrap_or_default();
            // Said of the template, so every instance's line must read true: each type its
            // instances name that the host lacks (`binop<Add>` and `binop<Mul>`: both).
            let in_instance = || {
                let mut missing: Vec<&String> = Vec::new();
                for ty in instances.iter().flat_map(|i| i.args.iter()).filter(|a| unknown_type(a)) {
                    if !missing.contains(&ty) {
                        missing.push(ty);
                    }
                }
                let listed: Vec<String> = missing.iter().map(|t| format!("`{t}`")).collect();
                match listed.as_slice() {
                    [] => None,
                    [one] => Some(format!("its instances' template argument {one} is a type the host crate does not have")),
                    _ => Some(format!("its instances' template arguments {} are types the host crate does not have", listed.join(", "))),
                }
            };
            if let Some(what) = in_param.or_else(in_instance) {
                if let Ok(mut w) = self.watch.lock() {
                    w.missed = true;
                }
                sig.untyped = Some(format!(
                    "{what} (nothing in {} names it): define a `#[repr(C)]` twin with cudarc's `DeviceRepr` beside `include_kernels!()`, or `use` it there by name, for a typed method",
                    self.src.display()
                ));
                sig.params.clear();
                // A bound template's instances are listed by their mangled names again.
                if sig.generic.take().is_some_and(|g| !g.instances.is_empty()) {
                    sig.mangled = true;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::signature::cuda_kernels_in;

    /// llama.cpp's `conv2d_dw_kernel<whcn_layout>`: a template over C++ tag types the host
    /// does not define is untyped (the generated impl would name the type), listed by its
    /// mangled names; over types it defines, it stays generic.
    #[test]
    fn a_template_instantiated_for_a_type_the_host_lacks_is_untyped() {
        let host = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(host.path().join("src")).unwrap();
        std::fs::write(
            host.path().join("src/lib.rs"),
            "pub mod kernels { ptx_runtime::include_kernels!(); }
",
        )
        .unwrap();
        let names = HostNames::read(host.path());
        let src = "struct whcn_layout {};\ntemplate <typename layout>\n__global__ void dw(float *x) {}\n";
        let bind = |src: &str| {
            crate::embed::demangle::bind(cuda_kernels_in(Path::new("/h/cuda/k.cu"), src).unwrap(), &["_Z2dwI11whcn_layoutEvPf"])
        };
        let mut sigs = bind(src);
        assert!(sigs[0].generic.is_some(), "{sigs:#?}");
        names.untype_unknown(&mut sigs);
        let why = sigs[0].untyped.as_deref().expect("untyped");
        assert!(why.starts_with("its instances' template argument `whcn_layout` is a type the host crate does not have"), "{why}");
        assert!(sigs[0].mangled && sigs[0].generic.is_none());
        // Said of the template, it reads true on each instance's line: every type missing.
        let functors = "struct Add {};\nstruct Mul {};\ntemplate <typename Op>\n__global__ void binop(float *x) {}\n";
        let mut sigs = crate::embed::demangle::bind(
            cuda_kernels_in(Path::new("/h/cuda/k.cu"), functors).unwrap(),
            &["_Z5binopI3AddEvPf", "_Z5binopI3MulEvPf"],
        );
        names.untype_unknown(&mut sigs);
        let why = sigs[0].untyped.as_deref().expect("untyped");
        assert!(why.starts_with("its instances' template arguments `Add`, `Mul` are types the host crate does not have"), "{why}");
        std::fs::write(host.path().join("src/lib.rs"), "pub struct whcn_layout;\npub mod kernels { ptx_runtime::include_kernels!(); }\n")
            .unwrap();
        let mut sigs = bind(src);
        HostNames::read(host.path()).untype_unknown(&mut sigs);
        assert!(sigs[0].untyped.is_none() && sigs[0].generic.is_some(), "{sigs:#?}");
    }

    /// A parameter pack's elements name the struct (`const Ts *... blocks` over `block_q4_0`):
    /// the method's array would, so the host must have it too.
    #[test]
    fn a_pack_of_a_struct_the_host_lacks_is_untyped() {
        let host = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(host.path().join("src")).unwrap();
        std::fs::write(host.path().join("src/lib.rs"), "pub mod kernels { ptx_runtime::include_kernels!(); }\n").unwrap();
        let src =
            "struct block_q4_0 { float d; };\ntemplate <typename... Ts>\n__global__ void gather(float *out, const Ts *... blocks) {}\n";
        let bind = || {
            crate::embed::demangle::bind(
                cuda_kernels_in(Path::new("/h/cuda/k.cu"), src).unwrap(),
                &["_Z6gatherIJ10block_q4_0S0_EEvPfDpPKT_"],
            )
        };
        let mut sigs = bind();
        assert!(sigs[0].generic.as_ref().is_some_and(|g| g.pack.is_some()), "{sigs:#?}");
        HostNames::read(host.path()).untype_unknown(&mut sigs);
        let why = sigs[0].untyped.as_deref().expect("untyped");
        assert!(why.starts_with("parameter `blocks`: the host crate has no type `block_q4_0`"), "{why}");
        std::fs::write(host.path().join("src/lib.rs"), "pub struct block_q4_0;\npub mod kernels { ptx_runtime::include_kernels!(); }\n")
            .unwrap();
        let mut sigs = bind();
        HostNames::read(host.path()).untype_unknown(&mut sigs);
        assert!(sigs[0].untyped.is_none(), "{sigs:#?}");
    }

    #[test]
    fn c_struct_types_the_host_never_names_leave_the_kernel_untyped() {
        let host = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(host.path().join("src/gpu")).unwrap();
        std::fs::write(host.path().join("src/lib.rs"), "mod gpu;\nfn f<'a>(x: &'a str) -> &'a str { x }\n").unwrap();
        std::fs::write(host.path().join("src/gpu/mod.rs"), "use shared::Params;\npub mod kernels { ptx_runtime::include_kernels!(); }\n")
            .unwrap();
        let names = HostNames::read(host.path());
        let src = "struct Params { float a; };\nstruct Other { int b; };\n\
            extern \"C\" __global__ void known(Params p, const Params *ps, float *x) {}\n\
            extern \"C\" __global__ void unknown(float *x, Other o) {}\n\
            extern \"C\" __global__ void behind_pointer(const block_q8_1 *__restrict__ y, const void *vx) {}\n\
            extern \"C\" __global__ void plain(const float *x, __half h, float4 v) {}\n\
            template <typename T> __global__ void generic(T *y, T a) {}\n";
        let mut sigs = cuda_kernels_in(Path::new("/h/cuda/k.cu"), src).unwrap();
        names.untype_unknown(&mut sigs);
        let untyped: Vec<(&str, Option<&str>)> = sigs.iter().map(|s| (s.name.as_str(), s.untyped.as_deref())).collect();
        assert_eq!(untyped[0], ("known", None));
        let why = untyped[1].1.expect("`Other` is unknown");
        assert!(why.starts_with("parameter `o`: the host crate has no type `Other`") && why.contains("src names it)"), "{why}");
        assert!(untyped[2].1.expect("a pointee too").contains("no type `block_q8_1`"), "{untyped:?}");
        assert_eq!((untyped[3], untyped[4]), (("plain", None), ("generic", None)));
        assert!(names.watched().contains(&host.path().join("src")), "defining the type must rerun the build script");
        // Where every name is known, nothing changes and `src/` need not be watched; the file
        // naming the type must, or removing it there would leave the module naming nothing.
        let mut sigs = cuda_kernels_in(Path::new("/h/cuda/k.cu"), "extern \"C\" __global__ void known(Params p) {}").unwrap();
        let names = HostNames::read(host.path());
        names.untype_unknown(&mut sigs);
        assert!(sigs[0].untyped.is_none());
        assert_eq!(names.watched(), [host.path().join("src/gpu/mod.rs")]);
    }

    #[test]
    fn rust_kernel_types_of_the_kernel_crate_need_a_host_twin_for_a_typed_method() {
        let host = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(host.path().join("src")).unwrap();
        std::fs::write(
            host.path().join("src/lib.rs"),
            "#[repr(C)] pub struct Params { a: f32 }
",
        )
        .unwrap();
        let kernels = host.path().join("lib.rs");
        let k = "#[no_mangle]\npub unsafe extern \"ptx-kernel\" fn";
        std::fs::write(
            &kernels,
            format!(
                "use shared::Point;\npub struct Params {{ a: f32 }}\npub struct Local {{ b: f32 }}\n\
                {k} twin(p: Params, x: *mut f32) {{}}\n{k} shared(p: Point, q: *const Point) {{}}\n\
                {k} local(x: *mut f32, l: Local) {{}}\n{k} behind(l: *const Local) {{}}\n\
                {k} plain(a: *mut [f32; 4], c: *mut core::ffi::c_int, n: u128, x: *mut i128) {{}}\n"
            ),
        )
        .unwrap();
        let mut sigs = crate::embed::signature::rust_kernels(&kernels).unwrap();
        crate::embed::host_types::resolve(&kernels, &mut sigs).unwrap();
        let names = HostNames::read(host.path());
        names.untype_unknown(&mut sigs);
        let untyped: Vec<(&str, Option<&str>)> = sigs.iter().map(|s| (s.name.as_str(), s.untyped.as_deref())).collect();
        // A twin on the host, and a type of another crate (named through it), keep their methods.
        assert_eq!(untyped[..2], [("twin", None), ("shared", None)], "{untyped:?}");
        assert!(untyped[2].1.expect("no twin").starts_with("parameter `l`: the host crate has no type `Local`"), "{untyped:?}");
        assert!(untyped[3].1.expect("behind a pointer too").contains("no type `Local`"), "{untyped:?}");
        assert_eq!(untyped[4], ("plain", None), "arrays, core's types and 128-bit integers are not struct names");
        assert_eq!(
            names.watched(),
            [host.path().join("src"), host.path().join("src/lib.rs")],
            "defining or removing a twin reruns the build script"
        );
    }
}
