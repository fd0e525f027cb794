//! The embed stage's input, read only when a Builder asks for it: every module's kernel
//! signatures, from the sources where they show every kernel, else from what the compiler saw
//! (rustc's expansion of the crate, the .cu file's preprocessed unit) for kernels that macros
//! stamp out. What cannot be read leaves those kernels untyped, with a warning saying why.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::job::CrateJob;
use super::steps::CudaRecord;
use crate::arch::Arch;
use crate::cache::{CachedStep, Key};
use crate::diag::{joined, path_from, relative, Diagnostic};
use crate::embed::signature::KernelSig;
use crate::embed::{demangle, host_types, signature};
use crate::error::Result;
use crate::report::{Event, Reporter};
use crate::rust::{Frontend, RustKernels};

impl CrateJob<'_> {
    /// Each module's signatures: the Rust crate's (by-value struct types named as the host can
    /// reach them) and each .cu file's, which its highest arch's job read (`cuda`).
    pub(super) fn signatures(
        &self,
        rust: Option<(&Frontend<'_>, &RustKernels)>,
        cuda: BTreeMap<String, Vec<KernelSig>>,
        reporter: &dyn Reporter,
    ) -> Result<BTreeMap<String, Vec<KernelSig>>> {
        let mut out = cuda;
        if let (Some((fe, r)), Some(lib)) = (rust, self.krate.lib_src.as_deref()) {
            let sigs = rust_signatures(
                lib,
                signature::rust_kernels(lib)?,
                &r.kernels,
                |missing| fe.expand(r, missing),
                reporter,
                &self.krate.name,
            );
            out.insert(self.krate.lib_name.clone(), self.for_host(lib, sigs, reporter)?);
        }
        Ok(out)
    }

    /// The kernels of a .cu module whose PTX has the entries `entries`: from the source where it
    /// shows them all, else from the preprocessed unit of the highest arch's compile (`nvcc`:
    /// that step and its record). Run in that arch's job, beside the other files' nvcc runs:
    /// read after the last of them, the preprocessed units were most of what a build spent after
    /// its last nvcc (BENCHMARKS.md, issue 25).
    pub(super) fn cuda_signatures(
        &self,
        arch: Arch,
        src: &crate::project::CudaSource,
        entries: &[String],
        nvcc: (&CachedStep<'_>, &CudaRecord),
        reporter: &dyn Reporter,
    ) -> Result<Vec<KernelSig>> {
        let source = signature::cuda_kernels(&src.path)?;
        if entries.iter().all(|e| shown(&source, e)) {
            return Ok(one_per_name(source.clone(), &source));
        }
        let Some(mut sigs) = self.preprocessed(arch, src, nvcc.0, nvcc.1, reporter) else {
            return Ok(one_per_name(source.clone(), &source));
        };
        // A kernel this arch's `#if __CUDA_ARCH__` leaves out (an older arch's fallback) is only
        // in the source text: as written there, checked against the images that have it.
        let read: std::collections::HashSet<String> = sigs.iter().map(|p| p.name.clone()).collect();
        sigs.extend(source.iter().filter(|s| !read.contains(&s.name)).cloned());
        Ok(one_per_name(sigs, &source))
    }

    /// The kernels of a .cu file read from its preprocessed translation unit: the one the first
    /// arch's nvcc kept, or `nvcc -E` with the same flags (after a step-cache hit). Cached,
    /// keyed by the compile and the content of every file nvcc read, in the machine's step
    /// cache too where the compile is: a checkout that fetched the PTX fetches its signatures,
    /// instead of starting nvcc's preprocessor for each file (90-100 ms a file). `None` after a
    /// warning.
    fn preprocessed(
        &self,
        arch: Arch,
        src: &crate::project::CudaSource,
        compile: &CachedStep<'_>,
        record: &CudaRecord,
        reporter: &dyn Reporter,
    ) -> Option<Vec<KernelSig>> {
        let work = self.work.join(arch.to_string());
        // The record names the files nvcc read from the package folder, as the signatures do.
        let inputs = |mut k: Key| {
            for (path, hash) in &record.inputs {
                k.str(&path.to_string_lossy()).str(hash);
            }
            k.finish()
        };
        // Headers below these are the install's and the system's, not the user's kernels: they
        // follow nvcc's path, which the shared compile key leaves out.
        let roots = self.nvcc.map(|n| crate::cuda::install_roots(&n.tool.path)).unwrap_or_default();
        // The tag changes with what the reader makes of a unit (v15: values of a class template's type decided by the instances).
        let mut k = Key::new("preprocessed-signatures-v16");
        k.str(&compile.key);
        let shared = compile.shared.as_ref().map(|(cache, compile_key)| {
            // ptx-build's version: what the reader makes of a unit changes with it.
            let mut k = Key::new("preprocessed-signatures-shared-v10");
            k.str(compile_key).str(env!("CARGO_PKG_VERSION"));
            for r in &roots {
                k.str(&r.to_string_lossy());
            }
            (*cache, inputs(k))
        });
        let kept = self.kept_unit(arch, src);
        let step = CachedStep { stamp: work.join(format!("signatures-{}.json", src.module)), key: inputs(k), shared, outputs: Vec::new() };
        let read = step.run(
            |_: &Vec<KernelSig>| true,
            || {
                let text = match std::fs::read_to_string(&kept) {
                    Ok(text) => text,
                    Err(_) => {
                        let out = self.out_dir.join(arch.to_string()).join(format!("{}.ptx", src.module));
                        self.cuda_compile(arch, src, &work, &out, None).preprocess()?
                    }
                };
                let mut sigs = signature::cuda_kernels_preprocessed(&text, &self.krate.dir, &roots)?;
                for s in &mut sigs {
                    s.file = path_from(&s.file, &self.krate.dir);
                }
                Ok(sigs)
            },
        );
        let _ = std::fs::remove_file(&kept);
        match read {
            Ok(mut done) => {
                for s in &mut done.meta {
                    s.file = joined(&self.krate.dir, &s.file);
                }
                Some(done.meta)
            }
            Err(e) => {
                let d = Diagnostic::warning(format!(
                    "the kernels of {} that macros stamp out get no typed launch method: {e}",
                    relative(&src.path, &self.krate.dir).display()
                ));
                reporter.report(Event::Diagnostic(&d));
                None
            }
        }
    }

    /// Struct types (by value or behind a pointer) named as the host can reach them (`use shared::Affine` ->
    /// `::shared::Affine`); a type the kernel crate defines itself is a warning with the fix.
    fn for_host(&self, lib: &Path, mut sigs: Vec<KernelSig>, reporter: &dyn Reporter) -> Result<Vec<KernelSig>> {
        let root = lib.parent().unwrap_or(Path::new("/"));
        for w in host_types::resolve(lib, &mut sigs)? {
            // Paths relative to the crate's folder where they lie below it, absolute in the output.
            let file = w.file.clone().unwrap_or_default();
            let w = Diagnostic { file: Some(relative(&file, root)), ..w }.rooted(root);
            reporter.report(Event::Diagnostic(&w));
        }
        Ok(sigs)
    }
}

/// Whether the source text declares PTX entry `entry` as the PTX has it: by name, and C++ where
/// the entry is mangled, `extern "C"` where it is not. A kernel declared through a macro that
/// says `extern "C"` (boojum-cuda's `#define EXTERN extern "C" [[maybe_unused]]`) reads as C++
/// in the text, and is read from the preprocessed unit instead.
fn shown(source: &[KernelSig], entry: &str) -> bool {
    let demangled = demangle::demangle(entry);
    let name = demangled.as_ref().map_or(entry, |d| d.name());
    source.iter().any(|s| s.name == name && s.mangled == demangled.is_some())
}

/// One signature per `extern "C"` kernel name of a .cu file. Its text shows every definition,
/// also those that `#if`s keep apart (a bf16 `scale` for sm_80, a float one before it), which
/// nvcc never compiles together: where they all take the same parameter types, the first stands
/// for them; where they differ, no one typed method fits every arch's image, and the kernel is
/// launched by name with that reason. (Without this, a valid file failed the build as a kernel
/// "defined twice".)
fn one_per_name(mut sigs: Vec<KernelSig>, source: &[KernelSig]) -> Vec<KernelSig> {
    let plain = |s: &KernelSig| !s.mangled && s.generic.is_none();
    let mut defs: BTreeMap<&str, Vec<&KernelSig>> = BTreeMap::new();
    for s in source.iter().filter(|s| plain(s)) {
        defs.entry(&s.name).or_default().push(s);
    }
    let types = |s: &KernelSig| (s.params.iter().map(|p| p.ty.clone()).collect::<Vec<_>>(), s.untyped.is_some());
    let differ: BTreeMap<&str, String> = defs
        .iter()
        .filter(|(_, d)| d.iter().any(|s| types(s) != types(d[0])))
        .map(|(name, d)| {
            let places: Vec<String> = d.iter().map(|s| format!("{}:{}", crate::diag::from_package(&s.file).display(), s.line)).collect();
            let reason = format!(
                "its definitions under `#if`s ({}) take other parameters: no one typed method fits every arch's image",
                places.join(", ")
            );
            (*name, reason)
        })
        .collect();
    let mut seen = std::collections::HashSet::new();
    sigs.retain(|s| !plain(s) || seen.insert(s.name.clone()));
    for s in sigs.iter_mut() {
        if let Some(reason) = differ.get(s.name.as_str()).filter(|_| plain(s)) {
            s.params.clear();
            s.untyped = Some(reason.clone());
        }
    }
    sigs
}

/// The Rust kernels of the crate rooted at `lib`: those the source reader found (`source`), and,
/// when the bitcode exports kernels it did not (`exported`: kernels stamped out by macros),
/// those read from the expanded crate that `expand` writes. When the expansion fails, those
/// kernels stay untyped and a warning says why.
fn rust_signatures(
    lib: &Path,
    source: Vec<KernelSig>,
    exported: &[String],
    expand: impl FnOnce(&[String]) -> std::result::Result<PathBuf, String>,
    reporter: &dyn Reporter,
    package: &str,
) -> Vec<KernelSig> {
    let missing: Vec<String> = exported.iter().filter(|k| !source.iter().any(|s| s.ptx_names().contains(&k.as_str()))).cloned().collect();
    if missing.is_empty() {
        return source;
    }
    let read = expand(&missing).map_err(|why| format!("the crate could not be expanded ({why})")).and_then(|path| {
        signature::rust_kernels_expanded(lib, source.clone(), &path).map_err(|e| format!("reading the expanded crate failed ({e})"))
    });
    match read {
        Ok(sigs) => sigs,
        Err(why) => {
            reporter.report(Event::Diagnostic(
                &Diagnostic::warning(format!("kernels of `{package}` stamped out by macros get no typed launch method: {why}"))
                    .at(lib, None, None)
                    .note("they are embedded and listed in KERNEL_NAMES: launch them with `kernels.launch_builder(&stream, NAME)`"),
            ));
            source
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Recorder;

    #[test]
    fn a_kernel_whose_linkage_a_macro_spells_is_not_taken_from_the_text() {
        let dir = tempfile::tempdir().unwrap();
        let cu = dir.path().join("k.cu");
        let text =
            "#define EXTERN extern \"C\" [[maybe_unused]]\nEXTERN __global__ void pow(const unsigned long long *seed, unsigned bits) {}\n\
                    extern \"C\" __global__ void plain(float *x) {}\n__global__ void cxx(float *x) {}\n";
        std::fs::write(&cu, text).unwrap();
        let source = signature::cuda_kernels(&cu).unwrap();
        // The PTX names `pow` unmangled: the text, which reads it as C++, does not show it.
        assert!(!shown(&source, "pow"));
        assert!(shown(&source, "plain") && shown(&source, "_Z3cxxPf"));
        assert!(!shown(&source, "_Z5plainPf") && !shown(&source, "cxx"), "linkage as the PTX has it");
    }

    #[test]
    fn a_kernel_under_two_ifs_is_one_signature_or_untyped_and_cxx_overloads_stay() {
        let dir = tempfile::tempdir().unwrap();
        let cu = dir.path().join("k.cu");
        let text = "#if __CUDA_ARCH__ >= 800\nextern \"C\" __global__ void same(float *x, int n) {}\nextern \"C\" __global__ void other(double *x) {}\n#else\nextern \"C\" __global__ void same(float *y, int m) {}\nextern \"C\" __global__ void other(float *x) {}\n#endif\n__global__ void over(float *x) {}\n__global__ void over(double *x) {}\n";
        std::fs::write(&cu, text).unwrap();
        let source = signature::cuda_kernels(&cu).unwrap();
        let sigs = one_per_name(source.clone(), &source);
        let named = |n: &str| sigs.iter().filter(|s| s.name == n).collect::<Vec<_>>();
        // The same parameter types: the first definition, typed.
        assert_eq!(named("same").len(), 1);
        assert_eq!((named("same")[0].line, named("same")[0].untyped.as_ref()), (2, None));
        // Other types: one entry, launched by name, with both places in the reason.
        let other = named("other");
        assert_eq!(other.len(), 1);
        let reason = other[0].untyped.as_deref().unwrap();
        assert!(reason.contains(":3, ") && reason.contains(":6)") && reason.contains("no one typed method fits"), "{reason}");
        assert!(other[0].params.is_empty());
        // C++ overloads are two kernels (two mangled entries), as before.
        assert_eq!(named("over").len(), 2);
        assert!(named("over").iter().all(|s| s.untyped.is_none()));
    }

    #[test]
    fn kernels_stamped_out_by_macros_are_read_from_the_expansion_or_stay_untyped_with_the_reason() {
        let dir = tempfile::tempdir().unwrap();
        let lib = dir.path().join("lib.rs");
        std::fs::write(&lib, "//! Kernels.\nm!(k);\n").unwrap();
        let source = signature::rust_kernels(&lib).unwrap();
        let exported = ["k".to_string()];
        let r = Recorder::default();

        // Every kernel shown by the source: no expansion.
        let none = rust_signatures(&lib, source.clone(), &[], |_| panic!("no expansion needed"), &r, "kern");
        assert!(none.is_empty() && r.0.lock().unwrap().is_empty());

        let failed =
            rust_signatures(&lib, source.clone(), &exported, |_| Err("`cargo rustc` failed: error: no such command".into()), &r, "kern");
        assert!(failed.is_empty());
        assert_eq!(
            r.0.lock().unwrap().pop().unwrap(),
            "kernels of `kern` stamped out by macros get no typed launch method: the crate could not be expanded (`cargo rustc` failed: error: no such command)"
        );

        let expanded = dir.path().join("expanded.rs");
        let unread = rust_signatures(&lib, source.clone(), &exported, |_| Ok(expanded.clone()), &r, "kern");
        assert!(unread.is_empty());
        let w = r.0.lock().unwrap().pop().unwrap();
        assert!(w.contains("reading the expanded crate failed (could not read") && w.contains("expanded.rs"), "{w}");

        std::fs::write(&expanded, "#[no_mangle]\npub unsafe extern \"ptx-kernel\" fn k(x: *mut f32) {}\n").unwrap();
        let k = rust_signatures(
            &lib,
            source,
            &exported,
            |missing| {
                assert_eq!(missing, ["k".to_string()]);
                Ok(expanded.clone())
            },
            &r,
            "kern",
        );
        assert_eq!((k[0].name.as_str(), k[0].line), ("k", 2), "placed at the macro call `m!(k)`");
    }
}
