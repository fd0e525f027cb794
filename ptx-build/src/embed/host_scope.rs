//! Whether the host can name a C/C++ kernel's struct types.
//!
//! A CUDA kernel's `Params p` or `const block_q8_1 *y` is typed with the host type of that name,
//! which the generated module finds through `use super::*`. Where the host crate's sources never
//! mention the name, the generated module would not compile; such a kernel is embedded without
//! a typed method instead (launched by name, listed with the reason) until the host defines or
//! imports the type. The test is by name: a type brought in by a glob import (`use shared::*`)
//! is not seen, and the reason says to name it.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::embed::signature::{KernelSig, ParamType};

/// The identifiers of the host crate's Rust sources (`src/**/*.rs`).
#[derive(Debug, Default)]
pub struct HostNames {
    /// Where they were read from, for messages.
    pub src: PathBuf,
    names: HashSet<String>,
    /// A kernel lost its typed method here: the build script watches `src/` so that defining
    /// the type reruns it.
    missed: AtomicBool,
}

/// Rust's primitive types, as the C reader names pointees.
const PRIMITIVES: &[&str] = &["bool", "u8", "i8", "u16", "i16", "u32", "i32", "u64", "i64", "usize", "isize", "f32", "f64"];

impl HostNames {
    /// Reads the identifiers of `manifest_dir/src/**/*.rs` (none where it has no `src/`).
    pub fn read(manifest_dir: &Path) -> HostNames {
        let src = manifest_dir.join("src");
        let mut names = HashSet::new();
        for file in crate::project::glob_files(&src, "**/*.rs").unwrap_or_default() {
            let Ok(text) = std::fs::read_to_string(&file) else { continue };
            // Every word, comments and strings included: a name seen where it is not a type
            // only keeps the typed method the generated module had before this check.
            names.extend(text.split(|c: char| !(c.is_alphanumeric() || c == '_')).filter(|w| !w.is_empty()).map(str::to_string));
        }
        HostNames { src, names, missed: AtomicBool::new(false) }
    }

    /// Whether a kernel lost its typed method for a name the host does not mention.
    pub fn missed(&self) -> bool {
        self.missed.load(Ordering::Relaxed)
    }

    /// Leaves untyped each C/C++ kernel of `sigs` with a struct type (by value or behind a
    /// pointer) that the host's sources never name, with the reason and the fix. Rust kernels'
    /// types are resolved by `host_types`; template parameters are not struct names.
    pub fn untype_unknown(&self, sigs: &mut [KernelSig]) {
        for sig in sigs.iter_mut().filter(|s| s.untyped.is_none() && s.file.extension().is_some_and(|e| e != "rs")) {
            let params = sig.generic.as_ref().map(|g| g.type_params.clone()).unwrap_or_default();
            let unknown = sig.params.iter().find_map(|p| {
                let ty = match &p.ty {
                    ParamType::ByValue { ty } | ParamType::Pointer { elem: ty, .. } => ty,
                    _ => return None,
                };
                let user = !ty.starts_with("::") && !PRIMITIVES.contains(&ty.as_str()) && !params.contains(ty);
                (user && !self.names.contains(ty.as_str())).then(|| (p.name.clone(), ty.clone()))
            });
            if let Some((param, ty)) = unknown {
                self.missed.store(true, Ordering::Relaxed);
                sig.untyped = Some(format!(
                    "parameter `{param}`: the host crate has no type `{ty}` (nothing in {} names it): define a `#[repr(C)]` twin with cudarc's `DeviceRepr` beside `include_kernels!()`, or `use` it there by name, for a typed method",
                    self.src.display()
                ));
                sig.params.clear();
                sig.generic = None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::signature::cuda_kernels_in;

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
        assert!(names.missed());
        // Where every name is known, nothing changes and `src/` need not be watched.
        let mut sigs = cuda_kernels_in(Path::new("/h/cuda/k.cu"), "extern \"C\" __global__ void known(Params p) {}").unwrap();
        let names = HostNames::read(host.path());
        names.untype_unknown(&mut sigs);
        assert!(sigs[0].untyped.is_none() && !names.missed());
    }
}
