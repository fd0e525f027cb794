//! One PTX module's unit of the generated module: its signatures bound to the PTX entries and
//! checked against them, its images copied to `OUT_DIR`, the layouts of its by-value struct
//! parameters, and the kernels that stay untyped.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use super::codegen::{EmbeddedImage, StructLayout, Unit, RESERVED_METHODS};
use super::demangle;
use super::host_scope::HostNames;
use super::linked;
use super::signature::{self, KernelSig, ParamType};
use crate::backend::ptx;
use crate::cache;
use crate::diag::Diagnostic;
use crate::error::{Error, Result};
use crate::report::{Artifact, ArtifactKind, Event, Reporter};

/// One PTX module's unit: its signatures checked against its PTX, its images copied to
/// `OUT_DIR`. Kernels that cannot be typed (C++ mangled names, untypeable parameters, and
/// PTX entries the source does not show, such as kernels stamped out by macros) are
/// embedded without a typed method and listed in `untyped-kernels.txt` beside the module's
/// images; the lines of that list come back with the unit, for the one warning line of the
/// generated file (see [`report_untyped`]).
/// `images_dir` is the folder of this generated file's images, relative to `out_dir`
/// (`ptx-build/<file>`): each module's images go below it. With a `link` target they are also
/// written into one object there, which the generated module links instead of including them.
pub fn unit(
    name: &str,
    sigs: Vec<KernelSig>,
    artifacts: &[&Artifact],
    host: &HostNames,
    out_dir: &Path,
    images_dir: &str,
    link: Option<linked::Target>,
) -> Result<(Unit, UntypedLines)> {
    // Every PTX image's entries: an arch's `#if __CUDA_ARCH__` may leave kernels out of its
    // image (candle's bf16 kernels are in sm_80's, not in sm_75's).
    let ptx_images: Vec<&&Artifact> = artifacts.iter().filter(|a| a.kind == ArtifactKind::Ptx).collect();
    // Each entry (first-seen order) with the archs whose images have it; by name, not by
    // searching lists: candle's modules have hundreds of entries in each of four images.
    let mut entries: Vec<&str> = Vec::new();
    let mut archs_of: HashMap<&str, Vec<crate::arch::Arch>> = HashMap::new();
    for a in &ptx_images {
        for k in &a.kernels {
            let archs = archs_of.entry(&k.name).or_default();
            if archs.is_empty() {
                entries.push(&k.name);
            }
            archs.push(a.arch);
        }
    }
    let partial: Vec<(String, Vec<crate::arch::Arch>)> =
        entries.iter().filter(|e| archs_of[*e].len() < ptx_images.len()).map(|e| (e.to_string(), archs_of[e].clone())).collect();
    let mut cooperative: Vec<String> = Vec::new();
    for k in ptx_images.iter().flat_map(|a| &a.kernels).filter(|k| k.cooperative) {
        if !cooperative.contains(&k.name) {
            cooperative.push(k.name.clone());
        }
    }
    // C++ kernels are bound to their mangled entries (templates become generic kernels).
    let mut sigs = demangle::bind(sigs, &entries);
    // Types the generated module would name but the host lacks: by-value parameters, pointees
    // and a template's arguments (known once bound).
    host.untype_unknown(&mut sigs);
    // A .cu file's kernel whose method would be one of `Kernels`' own (`load`) is launched by
    // name: the file may be a library's, which the user cannot rename. A Rust kernel's name is
    // the user's to change: codegen refuses it at its line.
    let cuda = |s: &KernelSig| s.file.extension().is_none_or(|e| e != "rs");
    for s in sigs.iter_mut().filter(|s| s.untyped.is_none() && cuda(s) && RESERVED_METHODS.contains(&s.name.as_str())) {
        s.untyped = Some(format!(
            "its method would be `{}`, a method of the generated `Kernels` itself ({}): launched by its PTX name",
            s.name,
            RESERVED_METHODS.join(", ")
        ));
    }
    let functions = super::functions::name_functions(name, &mut sigs);
    let (mut sigs, untypeable): (Vec<_>, Vec<_>) = sigs.into_iter().partition(|s| s.untyped.is_none() && !s.mangled);
    // A .cu file's kernel that no image has is one its `#if`s leave out for every arch built
    // (`#ifdef USE_FP8` not defined), read from the text all the same: not an error, as a Rust
    // kernel the PTX lacks is (the check below).
    if artifacts.iter().any(|a| a.source.as_ref().and_then(|s| s.extension()).is_some_and(|e| e != "rs")) {
        sigs.retain(|s| s.ptx_names().iter().any(|n| archs_of.contains_key(n)));
    }
    let mut images = Vec::new();
    let mut struct_layouts: Vec<StructLayout> = Vec::new();
    let mut launch_bounds: Vec<(String, u32)> = Vec::new();
    // Each image's symbol and bytes, for the object.
    let mut linked_images: Vec<(String, Vec<u8>)> = Vec::new();
    for a in artifacts {
        let ext = match a.kind {
            ArtifactKind::Ptx => "ptx",
            ArtifactKind::Cubin => "cubin",
        };
        let rel = format!("{images_dir}/{name}/{}.{ext}", a.arch);
        let bytes = std::fs::read(&a.path).map_err(|e| Error::io("read", &a.path, e))?;
        let mut ptx_isa = None;
        if a.kind == ArtifactKind::Ptx {
            let module = ptx::Module::parse_entries(&String::from_utf8_lossy(&bytes));
            // Each kernel against each image that has it; one that none has is the error below.
            for (entry, instance) in sigs.iter().flat_map(|s| s.monomorphic()) {
                if let Some(e) = module.entry(&entry) {
                    signature::check(&instance, Some(e))?;
                }
            }
            for sig in &sigs {
                if struct_layouts.iter().any(|l| l.kernel == sig.name) {
                    continue;
                }
                // A generic kernel's non-generic struct parameters are the same in every instance.
                if let Some(entry) = sig.ptx_names().first().and_then(|n| module.entry(n)) {
                    for (i, (p, e)) in sig.params.iter().zip(&entry.params).enumerate() {
                        if matches!(p.ty, ParamType::ByValue { .. }) {
                            struct_layouts.push(StructLayout { kernel: sig.name.clone(), param: i, size: e.size, align: e.align });
                        }
                    }
                }
            }
            ptx_isa = module.version.clone();
            // Every arch's PTX has the same bounds, but keep the largest: never refuse a launch the driver takes.
            for (name, bound) in module.entries.iter().filter_map(|e| Some((&e.name, e.max_threads?))) {
                match launch_bounds.iter_mut().find(|(n, _)| n == name) {
                    Some((_, b)) => *b = (*b).max(bound),
                    None => launch_bounds.push((name.clone(), bound)),
                }
            }
        }
        // Kept beside the object too: the files are what a user inspects (`cuobjdump`, a diff).
        cache::write_atomic(&out_dir.join(&rel), &bytes)?;
        // The generated module reads a linked PTX image as a `&str` without checking it, so only
        // UTF-8 PTX is linked: one that is not (a string of Latin-1 bytes in inline asm) stays
        // `include_str!`, which refuses it as it always did.
        let linked = link
            .filter(|_| a.kind == ArtifactKind::Cubin || std::str::from_utf8(&bytes).is_ok())
            .map(|_| (a.content_hash.as_deref().map_or_else(|| linked::symbol(&bytes), linked::symbol_of_hash), bytes.len()));
        if let Some((symbol, _)) = &linked {
            linked_images.push((symbol.clone(), bytes));
        }
        images.push(EmbeddedImage { arch: a.arch, kind: a.kind, file: rel, ptx_isa, linked });
    }
    for (entry, instance) in sigs.iter().flat_map(|s| s.monomorphic()) {
        if !ptx_images.is_empty() && !archs_of.contains_key(entry.as_str()) {
            signature::check(&instance, None)?;
        }
    }
    let typed: HashSet<&str> = sigs.iter().flat_map(|s| s.ptx_names()).collect();
    let untyped: Vec<String> = entries.iter().filter(|n| !typed.contains(*n)).map(|n| n.to_string()).collect();
    let unit_dir = out_dir.join(images_dir).join(name);
    // Images of archs an earlier build had and this one has not (the arch list changed).
    if let Ok(dir) = std::fs::read_dir(&unit_dir) {
        for e in dir.flatten() {
            let path = e.path();
            let image = path.extension().is_some_and(|x| x == "ptx" || x == "cubin");
            if image && !images.iter().any(|i| out_dir.join(&i.file) == path) {
                let _ = std::fs::remove_file(&path);
            }
        }
    }
    let object = match link {
        Some(target) if !linked_images.is_empty() => {
            let refs: Vec<(&str, &[u8])> = linked_images.iter().map(|(s, b)| (s.as_str(), b.as_slice())).collect();
            Some(linked::write(target, &refs, &unit_dir)?)
        }
        _ => None,
    };
    let lines = write_untyped_list(&untypeable, &untyped, &unit_dir)?;
    let unit = Unit {
        name: name.to_string(),
        kernels: sigs,
        images,
        struct_layouts,
        untyped,
        launch_bounds,
        functions,
        object,
        partial,
        cooperative,
    };
    Ok((unit, lines))
}

/// The variable that asks a build script for every list its warnings only count, and for each
/// step and tool command line (see `build_script::verbose`).
pub const VERBOSE_VAR: &str = "CARGO_PTX_VERBOSE";

/// Whether [`VERBOSE_VAR`] asks for every list in full, and each step and tool command line
/// (`1`, `2` or any other count above 0, as `-vv` is one; `true`, `yes`).
pub fn verbose() -> bool {
    std::env::var(VERBOSE_VAR).is_ok_and(|v| {
        let v = v.trim();
        v.parse::<u32>().is_ok_and(|n| n > 0) || matches!(v, "true" | "yes")
    })
}

/// The file name of a module's list of untyped kernels, beside its images.
pub const UNTYPED_LIST: &str = "untyped-kernels.txt";

/// A module's list of untyped kernels.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UntypedLines {
    /// One per untyped kernel: its PTX entry, where its source declares it, and why.
    pub lines: Vec<String>,
    /// How many of them are kernels of a CUDA library's headers (CUB's `DeviceReduceKernel`,
    /// which `cub::DeviceReduce::Sum` in the file's host code instantiates): listed, not counted
    /// in the warning, since no one launches them from Rust.
    pub library: usize,
}

/// Writes `dir/untyped-kernels.txt`, each PTX entry of `untyped` with its source line and
/// reason (removed when there is none); returns its lines.
fn write_untyped_list(untypeable: &[KernelSig], untyped: &[String], dir: &Path) -> Result<UntypedLines> {
    let list = dir.join(UNTYPED_LIST);
    if untyped.is_empty() {
        let _ = std::fs::remove_file(&list);
        return Ok(UntypedLines::default());
    }
    let (lines, library): (Vec<String>, Vec<bool>) = untyped.iter().map(|entry| untyped_line(entry, untypeable)).unzip();
    cache::write_atomic(&list, format!("{}\n", lines.join("\n")).as_bytes())?;
    Ok(UntypedLines { lines, library: library.iter().filter(|l| **l).count() })
}

/// One module's share of a crate's untyped kernels.
pub struct ModuleUntyped {
    /// The module (unit) name.
    pub name: String,
    /// Its kernels, typed or not.
    pub total: usize,
    /// Its list of untyped kernels.
    pub list: UntypedLines,
}

/// Reports the untyped kernels of a generated file's `modules` (those of crates with
/// `untyped-kernels = "allow"` left out, unless `verbose`). Cargo replays a build script's
/// warnings on every build of a path package, so candle's 139 untyped kernels would be 139 lines
/// on every no-op build, and dfdx's 49 files 39 lines of one per module: the budget is one line
/// (the count, the list), and the whole list with `CARGO_PTX_VERBOSE=1` (`verbose`). `dir`
/// holds the modules' folders; a list of several modules' kernels is written there, and one left
/// by an earlier build removed where `remove_stale` (not where another Builder of this build
/// script wrote it).
pub fn report_untyped(modules: &[ModuleUntyped], dir: &Path, verbose: bool, remove_stale: bool, reporter: &dyn Reporter) -> Result<()> {
    let combined = dir.join(UNTYPED_LIST);
    let remove = || {
        if remove_stale {
            let _ = std::fs::remove_file(&combined);
        }
    };
    // A CUDA library's kernels are listed, not counted: a file whose own kernels are all typed
    // says nothing (unless asked for every list).
    let own = |m: &ModuleUntyped| m.list.lines.len() - m.list.library;
    let with: Vec<&ModuleUntyped> = modules.iter().filter(|m| own(m) > 0 || verbose && !m.list.lines.is_empty()).collect();
    let count: usize = with.iter().map(|m| own(m)).sum();
    let library: usize = with.iter().map(|m| m.list.library).sum();
    let (list, lines, whose, total) = match with.as_slice() {
        [] => {
            remove();
            return Ok(());
        }
        [one] => {
            remove();
            (dir.join(&one.name).join(UNTYPED_LIST), one.list.lines.clone(), format!("of `{}`", one.name), one.total - one.list.library)
        }
        several => {
            let lines: Vec<String> = several.iter().flat_map(|m| m.list.lines.iter().map(move |l| format!("{}: {l}", m.name))).collect();
            cache::write_atomic(&combined, format!("{}\n", lines.join("\n")).as_bytes())?;
            let names: Vec<String> = several.iter().take(3).map(|m| format!("`{}`", m.name)).collect();
            let more = if several.len() > 3 { ", ..." } else { "" };
            let total = modules.iter().map(|m| m.total - m.list.library).sum();
            (combined, lines, format!("in {} modules ({}{more})", several.len(), names.join(", ")), total)
        }
    };
    let (verb, noun) = if count == 1 { ("has", "method") } else { ("have", "methods") };
    let libraries = match library {
        0 => String::new(),
        n => format!("; {n} more of CUDA libraries' headers (CUB's), which their own host code launches, are listed too"),
    };
    let head = format!(
        "ptx-build: {count} of {total} kernels {whose} {verb} no typed launch {noun} (launch them by name: `kernels.launch_builder(&stream, NAME)`){libraries}"
    );
    let text = if verbose {
        format!("{head}:\n{}", lines.iter().map(|l| format!("  {l}")).collect::<Vec<_>>().join("\n"))
    } else {
        format!("{head}; each with its reason in {} (or set {VERBOSE_VAR}=1); `untyped-kernels = \"allow\"` silences this", list.display())
    };
    reporter.report(Event::Diagnostic(&Diagnostic::warning(text)));
    Ok(())
}

/// Namespaces of the CUDA libraries whose headers define kernels (CCCL's CUB and Thrust).
const LIBRARY_NAMESPACES: &[&str] = &["cub::", "thrust::", "cuda::"];

/// One line of the list: the PTX entry, where its source declares it, and why it has no typed
/// method; and whether it is a kernel of a CUDA library's headers.
fn untyped_line(entry: &str, untypeable: &[KernelSig]) -> (String, bool) {
    let demangled = demangle::demangle(entry);
    // A C++ kernel's declaration by its name, the one in the entry's namespace first (`a::k` and
    // `b::k` are declared at two lines).
    let declares = |s: &&KernelSig, namespaced: bool| {
        s.ptx_names().contains(&entry)
            || (s.mangled
                && demangled
                    .as_ref()
                    .is_some_and(|d| d.name() == s.name.as_str() && (!namespaced || demangle::declared_in(d, &s.namespace))))
    };
    let source = untypeable.iter().find(|s| declares(s, true)).or_else(|| untypeable.iter().find(|s| declares(s, false)));
    match source {
        Some(s) => {
            let why = match &s.untyped {
                Some(reason) => reason.clone(),
                None => {
                    "no mangled PTX name matches this C++ declaration's parameters; declare it `extern \"C\"` for a typed method".into()
                }
            };
            // The argument that keeps this instance of a template untyped (each entry its own),
            // where the reason does not name one itself.
            let here = demangled
                .as_ref()
                .filter(|_| !why.contains("(here `"))
                .and_then(|d| d.unbound_argument())
                .map(|a| format!(" (here `{a}`)"))
                .unwrap_or_default();
            (format!("`{entry}` ({}:{}): {why}{here}", s.file.display(), s.line), false)
        }
        None => match demangled {
            // CUB's `EmptyKernel`, a `DeviceScanKernel` that `cub::DeviceScan` instantiates:
            // declared in the library's headers, launched by its own host code.
            Some(d) if LIBRARY_NAMESPACES.iter().any(|ns| d.qualified.starts_with(ns)) => {
                (format!("`{entry}`: `{}`, a kernel of a library's headers, which its own host code launches", d.qualified), true)
            }
            // A C++ kernel says what it is: the declaration it lacks can be looked for.
            Some(d) => (format!(
                "`{entry}` (C++ `{}`): no declaration the signature reader found takes these parameters (one a macro stamps out that it could not expand, or one in a header it does not read)",
                d.text
            ), false),
            None => (format!(
                "`{entry}`: not declared in a form the signature reader follows (a kernel stamped out by a macro whose expansion could not be read)"
            ), false),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::signature::cuda_kernels_in;
    use crate::report::Recorder;

    /// Reports the kernels of `src` whose PTX entries are `entries` (the untyped ones are those
    /// the typed sigs do not cover) as `units` does for a crate with `untyped-kernels = "allow"`
    /// or not, `verbose` or not; the warnings and the list file's text.
    fn report(src: &str, entries: &[&str], allow: bool, verbose: bool) -> (Vec<String>, Option<String>) {
        let sigs = demangle::bind(cuda_kernels_in(Path::new("/pkg/cuda/q.cu"), src).unwrap(), entries);
        let (typed, untypeable): (Vec<_>, Vec<_>) = sigs.into_iter().partition(|s| s.untyped.is_none() && !s.mangled);
        let untyped: Vec<String> =
            entries.iter().filter(|e| !typed.iter().any(|s| s.ptx_names().contains(e))).map(|e| e.to_string()).collect();
        let dir = tempfile::tempdir().unwrap();
        let r = Recorder::default();
        let list = write_untyped_list(&untypeable, &untyped, &dir.path().join("q")).unwrap();
        let q = ModuleUntyped { name: "q".into(), total: typed.len() + untyped.len(), list };
        let reported: Vec<ModuleUntyped> = (verbose || !allow).then_some(q).into_iter().collect();
        report_untyped(&reported, dir.path(), verbose, true, &r).unwrap();
        (r.0.into_inner().unwrap(), std::fs::read_to_string(dir.path().join("q").join(UNTYPED_LIST)).ok())
    }

    const SRC: &str = "extern \"C\" __global__ void deq(const void *vx, float *y) {}\nextern \"C\" __global__ void gather(long double w, float *out) {}\ntemplate <template <typename> class V> __global__ void tile(float *x) {}\n";
    const ENTRIES: &[&str] = &["deq", "gather", "_Z4tileI3VecEvPf", "stamped_f32"];

    fn artifact(dir: &Path, arch: &str, kind: ArtifactKind, bytes: &[u8]) -> Artifact {
        let path = dir.join(format!("{arch}.{kind:?}"));
        std::fs::write(&path, bytes).unwrap();
        Artifact {
            package: "host".into(),
            module: "k".into(),
            source: Some("/pkg/cuda/k.cu".into()),
            arch: arch.parse().unwrap(),
            kind,
            path,
            kernels: vec![crate::report::KernelInfo::named("k")],
            fresh: false,
            content_hash: None,
        }
    }

    /// `sm_80,compute_80` make the same PTX twice: one symbol, declared and written once (Rust
    /// refused the module that declared it twice); a PTX that is not UTF-8 is not linked, as
    /// its `&str` is read unchecked.
    #[test]
    fn equal_images_are_one_symbol_and_a_ptx_that_is_not_utf8_stays_included() {
        let dir = tempfile::tempdir().unwrap();
        let ptx = b".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(\n)\n{\nret;\n}\n";
        let cubin = b"\x7fELF cubin";
        let artifacts = [
            artifact(dir.path(), "sm_80", ArtifactKind::Ptx, ptx),
            artifact(dir.path(), "sm_80", ArtifactKind::Cubin, cubin),
            artifact(dir.path(), "compute_80", ArtifactKind::Ptx, ptx),
        ];
        let sigs = cuda_kernels_in(Path::new("/pkg/cuda/k.cu"), "extern \"C\" __global__ void k() {}\n").unwrap();
        let target = linked::Target::new("linux", "x86_64");
        let (u, _) =
            unit("k", sigs.clone(), &artifacts.iter().collect::<Vec<_>>(), &HostNames::default(), dir.path(), "i", target).unwrap();
        let symbols: Vec<&str> = u.images.iter().map(|i| i.linked.as_ref().unwrap().0.as_str()).collect();
        assert_eq!(symbols[0], symbols[2]);
        let code = crate::embed::codegen::generate(std::slice::from_ref(&u)).unwrap();
        assert_eq!(code.matches(&format!("static {}:", symbols[0])).count(), 1, "{code}");
        let object = u.object.unwrap();
        let bytes = std::fs::read(object.dir.join(&object.file_name)).unwrap();
        assert_eq!(bytes.windows(ptx.len()).filter(|w| w == ptx).count(), 1, "the PTX once in the object");

        let latin1 = [&ptx[..], b"// caf\xe9\n"].concat();
        let artifacts =
            [artifact(dir.path(), "sm_80", ArtifactKind::Ptx, &latin1), artifact(dir.path(), "sm_80", ArtifactKind::Cubin, cubin)];
        let (u, _) = unit("k", sigs, &artifacts.iter().collect::<Vec<_>>(), &HostNames::default(), dir.path(), "i", target).unwrap();
        assert_eq!(u.images[0].linked, None);
        assert!(u.images[1].linked.is_some());
        let code = crate::embed::codegen::generate(&[u]).unwrap();
        assert!(code.contains("pub static PTX_SM_80: &str = include_str!(") && !code.contains("from_utf8_unchecked"), "{code}");
    }

    #[test]
    fn untyped_kernels_are_one_line_with_the_list_in_a_file() {
        let (warnings, list) = report(SRC, ENTRIES, false, false);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        let w = &warnings[0];
        assert!(!w.contains('\n'), "one line: {w}");
        assert!(w.starts_with("ptx-build: 3 of 4 kernels of `q` have no typed launch methods"), "{w}");
        assert!(w.contains("untyped-kernels.txt (or set CARGO_PTX_VERBOSE=1)") && w.contains("`untyped-kernels = \"allow\"`"), "{w}");
        let list = list.expect("the list");
        let lines: Vec<&str> = list.lines().collect();
        assert_eq!(lines.len(), 3, "{list}");
        assert!(
            lines[0].starts_with("`gather` (/pkg/cuda/q.cu:2): parameter `long double w`: `long double` has no Rust equivalent"),
            "{list}"
        );
        assert_eq!(lines[1], "`_Z4tileI3VecEvPf` (/pkg/cuda/q.cu:3): template parameter `template class V` is a template template parameter, which Rust has no form of: each instance is launched by its PTX name");
        assert!(lines[2].starts_with("`stamped_f32`: not declared in a form the signature reader follows (a kernel stamped out"), "{list}");
    }

    #[test]
    fn a_kernel_of_cubs_headers_is_named_as_the_librarys() {
        let entry = "_ZN3cub17CUB_300001_SM_8006detail11EmptyKernelIvEEvv";
        let (line, library) = untyped_line(entry, &[]);
        assert!(library);
        assert_eq!(
            line,
            format!("`{entry}`: `cub::CUB_300001_SM_800::detail::EmptyKernel`, a kernel of a library's headers, which its own host code launches")
        );
        assert!(untyped_line("stamped_f32", &[]).0.contains("a kernel stamped out by a macro"));
        // A C++ kernel that no declaration matches is named as C++ spells it.
        assert_eq!(
            untyped_line("_Z4tpowILi3EEvP4gl_tm", &[]).0,
            "`_Z4tpowILi3EEvP4gl_tm` (C++ `tpow<3>(gl_t*, unsigned long)`): no declaration the signature reader found takes these parameters (one a macro stamps out that it could not expand, or one in a header it does not read)"
        );
    }

    /// The instance's argument is said where one has no typed form, not beside a struct
    /// parameter's reason (ggml's `soft_max_f32<true, 0, 0>` ended in "(here `true`)").
    #[test]
    fn an_instances_argument_is_named_only_for_a_templates_reason() {
        let mut sig = cuda_kernels_in(Path::new("/pkg/k.cu"), "template <int N>\n__global__ void k(Params p) {}\n").unwrap().remove(0);
        sig.untyped = Some("parameter `p`: the host crate names no type `Params`".into());
        let (line, _) = untyped_line("_Z1kILi1EEv6Params", &[sig.clone()]);
        assert_eq!(line, "`_Z1kILi1EEv6Params` (/pkg/k.cu:2): parameter `p`: the host crate names no type `Params`");
        // A class template's instance is what keeps this one untyped; a value or a function is not.
        sig.untyped = Some("an instance has a template argument with no Rust type".into());
        assert!(untyped_line("_Z1kI13Kernel_traitsILi128ELi2EfEEv6Params", &[sig.clone()])
            .0
            .ends_with("no Rust type (here `Kernel_traits<128, 2, float>`)"));
        assert!(!untyped_line("_Z1kIXadL_Z3negfEEEv6Params", &[sig]).0.contains("(here"));
    }

    #[test]
    fn verbose_prints_the_list_and_allow_prints_nothing() {
        let (warnings, _) = report(SRC, ENTRIES, false, true);
        let lines: Vec<&str> = warnings[0].lines().collect();
        assert_eq!(lines.len(), 4, "{warnings:?}");
        assert!(lines[1].starts_with("  `gather` (/pkg/cuda/q.cu:2)"), "{warnings:?}");
        let (warnings, list) = report(SRC, ENTRIES, true, false);
        assert!(warnings.is_empty(), "{warnings:?}");
        assert!(list.is_some(), "the list is written all the same");
        // Verbose asks for the list even where untyped kernels are allowed.
        assert_eq!(report(SRC, ENTRIES, true, true).0.len(), 1);
    }

    #[test]
    fn every_kernel_typed_says_nothing_and_removes_a_stale_list() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("q")).unwrap();
        for list in [dir.path().join(UNTYPED_LIST), dir.path().join("q").join(UNTYPED_LIST)] {
            std::fs::write(list, "`old` (k.cu:1): gone\n").unwrap();
        }
        let list = write_untyped_list(&[], &[], &dir.path().join("q")).unwrap();
        let r = Recorder::default();
        let module = || ModuleUntyped { name: "q".into(), total: 1, list: list.clone() };
        // A second Builder of the same file keeps the first one's list of several modules.
        report_untyped(&[module()], dir.path(), false, false, &r).unwrap();
        assert!(dir.path().join(UNTYPED_LIST).exists());
        report_untyped(&[module()], dir.path(), false, true, &r).unwrap();
        assert!(r.0.lock().unwrap().is_empty());
        assert!(!dir.path().join(UNTYPED_LIST).exists() && !dir.path().join("q").join(UNTYPED_LIST).exists());
    }

    #[test]
    fn untyped_kernels_of_several_modules_are_one_line_for_the_crate() {
        // dfdx's 49 files: 39 with kernels that take an op struct by value.
        let dir = tempfile::tempdir().unwrap();
        let module = |name: &str, untyped: usize| ModuleUntyped {
            name: name.into(),
            total: 6,
            list: UntypedLines { lines: (0..untyped).map(|i| format!("`{name}_{i}` (k.cu:{i}): parameter `op`")).collect(), library: 0 },
        };
        let modules = [module("abs", 2), module("axpy", 0), module("relu", 2), module("tanh", 1), module("sin", 1)];
        let r = Recorder::default();
        report_untyped(&modules, dir.path(), false, true, &r).unwrap();
        let warnings = r.0.into_inner().unwrap();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0].starts_with("ptx-build: 6 of 30 kernels in 4 modules (`abs`, `relu`, `tanh`, ...) have no typed launch methods"),
            "{}",
            warnings[0]
        );
        assert!(warnings[0].contains(&dir.path().join(UNTYPED_LIST).display().to_string()), "{}", warnings[0]);
        let list = std::fs::read_to_string(dir.path().join(UNTYPED_LIST)).unwrap();
        assert_eq!(list.lines().count(), 6);
        assert!(list.starts_with("abs: `abs_0` (k.cu:0): parameter `op`\n"), "{list}");
    }

    /// A file whose host code calls `cub::DeviceReduce::Sum` has CUB's kernels in its PTX (nvcc
    /// 13.0's names below): listed as the library's, never counted, so a file whose own kernels
    /// are typed builds quietly.
    #[test]
    fn kernels_of_cubs_headers_are_listed_not_counted() {
        let src = "extern \"C\" __global__ void scale(float *x, float a, int n) {}\nextern \"C\" __global__ void gather(long double w, float *out) {}\n";
        let cub = [
            "_ZN3cub17CUB_300001_SM_8006detail11EmptyKernelIvEEvv",
            "_ZN3cub17CUB_300001_SM_8006detail6reduce28DeviceReduceSingleTileKernelINS2_10policy_hubIfjN4cuda3std3__44plusIvEEE10Policy1000EPKfPfjS9_ffNS7_10__identityEEEvT0_T1_T2_T3_T4_T6_",
        ];
        let (warnings, list) = report(src, &[&["scale"][..], &cub].concat(), false, false);
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(list.expect("the list is written").lines().count(), 2);
        let (warnings, list) = report(src, &[&["scale", "gather"][..], &cub].concat(), false, false);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].starts_with("ptx-build: 1 of 2 kernels of `q` has no typed launch method"), "{}", warnings[0]);
        assert!(
            warnings[0].contains("; 2 more of CUDA libraries' headers (CUB's), which their own host code launches, are listed too"),
            "{}",
            warnings[0]
        );
        assert_eq!(list.unwrap().lines().count(), 3);
        // Every list asked for: CUB's alone are printed too.
        let (warnings, _) = report(src, &[&["scale"][..], &cub].concat(), false, true);
        assert!(warnings.len() == 1 && warnings[0].contains("EmptyKernel"), "{warnings:?}");
    }
}
