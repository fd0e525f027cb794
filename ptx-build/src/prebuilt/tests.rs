//! A set written from a build, then read back as a dependent's Builder would, whole and with
//! every kind of damage. The build is a fixture (no tool runs here); tests/e2e/prebuilt.rs
//! packages a real one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::*;
use crate::arch::{Arch, ArchRequest};
use crate::embed::signature::{Param, ParamType, Scalar};
use crate::engine::{BuildOutput, CrateOutput};
use crate::options::Prebuilt;
use crate::report::{Artifact, ArtifactKind, Event, KernelInfo, Reporter};

/// What `load` returned, and the warnings it reported.
type Loaded = (crate::Result<Use>, Vec<String>);

impl Use {
    /// The set's build and watched files, when it is used.
    fn set(self) -> Option<(BuildOutput, Vec<PathBuf>)> {
        match self {
            Use::Set(output, watch) => Some((output, watch)),
            Use::Source(_) => None,
        }
    }
}

#[derive(Default)]
struct Warnings(Mutex<Vec<String>>);

impl Reporter for Warnings {
    fn report(&self, event: Event<'_>) {
        if let Event::Diagnostic(d) = event {
            self.0.lock().unwrap().push(d.message.clone());
        }
    }
}

/// A library `fastblur` as `cargo ptx new --kernels both` lays it out: a Rust kernel crate in
/// `kernels/` and a .cu file with a header in `cuda/`; its build's artifacts in `target/`.
struct Fixture {
    _tmp: tempfile::TempDir,
    pkg: PathBuf,
    output: BuildOutput,
    cuda: Vec<PathBuf>,
    kernel_crates: Vec<PathBuf>,
}

fn write(p: &Path, text: &str) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = tmp.path().join("fastblur");
    write(&pkg.join("Cargo.toml"), "[package]\nname = \"fastblur\"\nversion = \"0.3.1\"\n\n[package.metadata.ptx]\nprebuilt = \"auto\"\n");
    write(&pkg.join("kernels/Cargo.toml"), "[package]\nname = \"fastblur-kernels\"\nversion = \"0.3.1\"\n");
    write(&pkg.join("kernels/src/lib.rs"), "#[kernel]\npub unsafe fn scale(x: *mut f32, a: f32, n: u32) {}\n");
    write(&pkg.join("cuda/common.cuh"), "#define RADIUS 4\n");
    write(&pkg.join("cuda/blur.cu"), "#include \"common.cuh\"\nextern \"C\" __global__ void blur(float *out, const float *in, int n) {}\n");
    let target = pkg.join("target/ptx/release");
    let ptx = |entry: &str, arch: &str| {
        format!(".version 7.8\n.target {arch}\n.address_size 64\n.visible .entry {entry}(\n.param .u64 p0\n)\n{{\nret;\n}}\n")
    };
    let mut artifacts = Vec::new();
    for arch in ["sm_80", "sm_90"] {
        for (module, entry, source) in [("fastblur_kernels", "scale", "kernels/src/lib.rs"), ("blur", "blur", "cuda/blur.cu")] {
            let path = target.join(format!("{module}.{arch}.ptx"));
            write(&path, &ptx(entry, arch));
            let cubin = target.join(format!("{module}.{arch}.cubin"));
            write(&cubin, &format!("\x7fELF cubin of {entry} for {arch}"));
            for (kind, path) in [(ArtifactKind::Ptx, path), (ArtifactKind::Cubin, cubin)] {
                artifacts.push(Artifact {
                    package: "fastblur-kernels".into(),
                    module: module.into(),
                    source: Some(pkg.join(source)),
                    arch: arch.parse().unwrap(),
                    kind,
                    path,
                    kernels: vec![KernelInfo::named(entry)],
                    fresh: false,
                    content_hash: None,
                });
            }
        }
    }
    let sig = |name: &str, file: &str| KernelSig {
        name: name.into(),
        params: vec![
            Param { name: "x".into(), ty: ParamType::Pointer { mutable: true, elem: "f32".into() } },
            Param { name: "n".into(), ty: ParamType::Scalar(Scalar::U32) },
        ],
        file: pkg.join(file),
        line: 2,
        mangled: false,
        untyped: None,
        doc: vec!["Scales.".into()],
        generic: None,
        ptx_name: None,
        namespace: String::new(),
    };
    let signatures = BTreeMap::from([
        ("fastblur_kernels".to_string(), vec![sig("scale", "kernels/src/lib.rs")]),
        ("blur".to_string(), vec![sig("blur", "cuda/blur.cu")]),
    ]);
    let sources = ["kernels/src/lib.rs", "kernels/Cargo.toml", "cuda/blur.cu", "cuda/common.cuh"].map(|s| pkg.join(s)).to_vec();
    let mut with_tool_header = sources.clone();
    with_tool_header.push(PathBuf::from("/opt/cuda/include/cuda_runtime.h"));
    let output = BuildOutput {
        crates: vec![CrateOutput {
            name: "fastblur-kernels".into(),
            lib_name: "fastblur_kernels".into(),
            lib_src: Some(pkg.join("kernels/src/lib.rs")),
            manifest_path: pkg.join("kernels/Cargo.toml"),
            archs: vec![Arch::sm(80), Arch::sm(90)],
            kernels: vec!["scale".into(), "blur".into()],
            artifacts,
            sources: with_tool_header,
            signatures,
            untyped_kernels: Default::default(),
            static_lib: None,
        }],
    };
    let cuda = vec![pkg.join("cuda/blur.cu")];
    Fixture { _tmp: tmp, pkg, output, cuda, kernel_crates: vec![PathBuf::from("kernels")] }
}

impl Fixture {
    fn request<'a>(&'a self, options: &'a Options) -> Request<'a> {
        Request {
            package: "fastblur".into(),
            manifest_dir: &self.pkg,
            out_file: "kernels.rs",
            kernel_crates: &self.kernel_crates,
            cuda_files: &self.cuda,
            options,
        }
    }

    fn package(&self) -> Manifest {
        let options = Options::default();
        let path = super::write(&self.request(&options), &self.output, Some(&self.pkg.join("target"))).unwrap();
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    fn load(&self, options: &Options, policy: Prebuilt, tools: bool) -> Loaded {
        let w = Warnings::default();
        let check = |_: &Request<'_>, _: &Path| if tools { Ok(()) } else { Err("the `nightly` toolchain (not installed)".to_string()) };
        let r = load_with(&self.request(options), policy, &w, &check);
        (r, w.0.into_inner().unwrap())
    }

    fn error(&self, options: &Options, policy: Prebuilt) -> String {
        match self.load(options, policy, false).0 {
            Err(e) => e.to_string(),
            Ok(o) => panic!("expected an error, got {:?}", o.set().map(|o| o.1)),
        }
    }
}

#[test]
fn a_set_round_trips_to_the_same_build_without_a_tool() {
    let f = fixture();
    let m = f.package();
    assert_eq!((m.format, m.package.as_str(), m.archs.clone()), (FORMAT, "fastblur", vec!["sm_80".to_string(), "sm_90".into()]));
    let paths: Vec<(&str, bool)> = m.sources.iter().map(|s| (s.path.as_str(), s.packaged)).collect();
    // The tool's header is not in the key; the nested kernel crate is keyed but not packaged.
    assert_eq!(paths, [("cuda/blur.cu", true), ("cuda/common.cuh", true), ("kernels/Cargo.toml", false), ("kernels/src/lib.rs", false)]);
    let set = set_dir(&f.pkg, "kernels.rs");
    assert_eq!(set, f.pkg.join("prebuilt/kernels"));
    for file in ["fastblur_kernels/blur/sm_90.cubin", "fastblur_kernels/fastblur_kernels/sm_80.ptx"] {
        assert!(set.join(file).is_file(), "{file}");
    }

    let (r, warnings) = f.load(&Options::default(), Prebuilt::Auto, false);
    let (output, watch) = r.unwrap().set().expect("the set is used");
    assert!(warnings.is_empty(), "{warnings:?}");
    assert!(watch.contains(&set.join(MANIFEST)) && watch.contains(&f.pkg.join("cuda/blur.cu")), "{watch:?}");
    // Every file of the set too: a cubin deleted or a PTX edited later reruns the build script.
    for a in &output.crates[0].artifacts {
        assert!(watch.contains(&a.path), "{} is not watched: {watch:?}", a.path.display());
    }
    let (built, loaded) = (&f.output.crates[0], &output.crates[0]);
    assert_eq!(loaded.signatures, built.signatures, "signatures come back with their files under the package");
    assert_eq!(loaded.archs, built.archs);
    assert_eq!(loaded.artifacts.len(), built.artifacts.len());
    for (a, b) in built.artifacts.iter().zip(&loaded.artifacts) {
        assert_eq!((&a.module, a.arch, a.kind, &a.source, &a.kernels), (&b.module, b.arch, b.kind, &b.source, &b.kernels));
        assert_eq!(std::fs::read(&a.path).unwrap(), std::fs::read(&b.path).unwrap(), "the same bytes: {}", b.path.display());
        assert!(b.path.starts_with(&set));
    }
    // A packaged copy has no kernels/ (cargo leaves the nested package out): still usable.
    std::fs::remove_dir_all(f.pkg.join("kernels")).unwrap();
    assert!(f.load(&Options::default(), Prebuilt::Always, false).0.unwrap().set().is_some());
}

#[test]
fn a_file_that_does_not_match_the_manifest_is_damage_named_with_the_fix() {
    let f = fixture();
    f.package();
    let cubin = set_dir(&f.pkg, "kernels.rs").join("fastblur_kernels/blur/sm_80.cubin");
    std::fs::write(&cubin, "truncated").unwrap();
    let e = f.error(&Options::default(), Prebuilt::Auto);
    assert!(e.starts_with("prebuilt kernels of `fastblur` ("), "{e}");
    assert!(e.contains("the set is damaged: fastblur_kernels/blur/sm_80.cubin does not match the hash manifest.json records"), "{e}");
    assert!(e.contains("building from source needs the `nightly` toolchain"), "{e}");
    assert!(e.contains("help: rerun `cargo ptx package -p fastblur` where `fastblur` is made, or build from source here"), "{e}");
    std::fs::remove_file(&cubin).unwrap();
    assert!(f.error(&Options::default(), Prebuilt::Always).contains("fastblur_kernels/blur/sm_80.cubin is missing"));
    // Passed over where the tools are: the set's remaining files are watched, the missing one
    // not (cargo would rerun the build script on every build).
    let (r, warnings) = f.load(&Options::default(), Prebuilt::Auto, true);
    let Ok(Use::Source(Some(passed))) = r else { panic!("expected a build from source") };
    assert!(passed.watch.contains(&set_dir(&f.pkg, "kernels.rs").join(MANIFEST)) && !passed.watch.contains(&cubin), "{:?}", passed.watch);
    assert_eq!(passed.watch.len(), 8, "the manifest and 7 of the 8 files: {:?}", passed.watch);
    assert_eq!(
        warnings,
        ["ptx-build: the prebuilt kernels of `fastblur` are not used (the set is damaged: fastblur_kernels/blur/sm_80.cubin is missing): building them from source; rerun `cargo ptx package -p fastblur` to update the set"]
    );
    std::fs::write(set_dir(&f.pkg, "kernels.rs").join(MANIFEST), "{\"format\": 1, \"key\": ").unwrap();
    assert!(f.error(&Options::default(), Prebuilt::Always).contains("manifest.json is not a prebuilt manifest"));
}

#[test]
fn sources_changed_after_packaging_are_named_and_rebuilt_where_the_tools_are() {
    let f = fixture();
    f.package();
    write(&f.pkg.join("cuda/common.cuh"), "#define RADIUS 5\n");
    let e = f.error(&Options::default(), Prebuilt::Auto);
    assert!(e.contains("the sources changed after packaging: cuda/common.cuh"), "{e}");
    // With the tools: one warning line, and a build from source.
    let (r, warnings) = f.load(&Options::default(), Prebuilt::Auto, true);
    assert!(r.unwrap().set().is_none());
    assert_eq!(warnings.len(), 1);
    assert_eq!(
        warnings[0],
        "ptx-build: the prebuilt kernels of `fastblur` are not used (the sources changed after packaging: cuda/common.cuh): building them from source; rerun `cargo ptx package -p fastblur` to update the set"
    );
    // `always` never builds.
    assert!(f.load(&Options::default(), Prebuilt::Always, true).0.err().expect("an error").to_string().contains("cuda/common.cuh"));
    // A packaged source gone from the package is damage.
    std::fs::remove_file(f.pkg.join("cuda/common.cuh")).unwrap();
    assert!(f.error(&Options::default(), Prebuilt::Always).contains("its source cuda/common.cuh is missing from the package"));
}

#[test]
fn other_options_are_a_stale_key_naming_them() {
    let f = fixture();
    f.package();
    let debug = Options { profile: Some(crate::options::Profile::Debug), ftz: Some(true), ..Options::default() };
    let e = f.error(&debug, Prebuilt::Always);
    assert!(e.contains("built with other options: `ftz` true (packaged: unset), `profile` Debug (packaged: unset)"), "{e}");
    // The cache, the launcher and the policy build nothing different.
    let same = Options { launcher: Some("sccache".into()), prebuilt: Some(Prebuilt::Always), ..Options::default() };
    assert!(f.load(&same, Prebuilt::Always, false).0.unwrap().set().is_some());
}

#[test]
fn a_newer_format_names_the_formats_and_a_newer_writer_its_release() {
    let f = fixture();
    let mut m = f.package();
    let mine = env!("CARGO_PKG_VERSION");
    let newer = FORMAT + 1;
    m.format = newer;
    m.ptx_build = "999.0.0".into();
    std::fs::write(set_dir(&f.pkg, "kernels.rs").join(MANIFEST), serde_json::to_string(&m).unwrap()).unwrap();
    let e = f.error(&Options::default(), Prebuilt::Always);
    assert!(
        e.contains(&format!(
            "it is in manifest format {newer} (written by ptx-build 999.0.0), and this ptx-build ({mine}) reads format {FORMAT}\n"
        )),
        "{e}"
    );
    assert!(e.contains("help: update ptx-build in the build-dependencies to 999.0.0 or later (`cargo update -p ptx-build`)"), "{e}");
    // Written by this very release (a development build): the formats alone, no release to name.
    m.ptx_build = mine.into();
    std::fs::write(set_dir(&f.pkg, "kernels.rs").join(MANIFEST), serde_json::to_string(&m).unwrap()).unwrap();
    let e = f.error(&Options::default(), Prebuilt::Always);
    assert!(e.contains(&format!("(written by ptx-build {mine}), and this ptx-build ({mine}) reads format {FORMAT}")), "{e}");
    assert!(
        e.contains(&format!(
            "help: update ptx-build in the build-dependencies to a release that reads format {newer} (`cargo update -p ptx-build`)"
        )),
        "{e}"
    );
    assert!(!e.contains("or later") && !e.contains("newer than"), "{e}");
}

#[test]
fn a_failed_build_from_source_after_a_set_was_passed_over_names_the_set_and_the_fix() {
    let f = fixture();
    f.package();
    write(&f.pkg.join("kernels/src/lib.rs"), "#[kernel]\npub unsafe fn scale(x: *mut f32) { x.exp() }\n");
    let (r, _) = f.load(&Options::default(), Prebuilt::Auto, true);
    let Ok(Use::Source(Some(passed))) = r else { panic!("expected a build from source") };
    let source_error = crate::Error::NoLibdevice { package: "fastblur-kernels".into(), functions: "`__nv_expf`".into() };
    let e = passed.explain(source_error).to_string();
    let set = set_dir(&f.pkg, "kernels.rs").join(MANIFEST);
    assert!(e.starts_with("kernel crate `fastblur-kernels` calls `__nv_expf` from NVIDIA's libdevice, and no libdevice was found\n  help: run `cargo ptx setup`"), "{e}");
    assert!(
        e.ends_with(&format!(
            "\n  note: built from source because the prebuilt kernels of `fastblur` ({}) are not used (the sources changed after packaging: kernels/src/lib.rs); the fix where `fastblur` is made: rerun `cargo ptx package -p fastblur`",
            set.display()
        )),
        "{e}"
    );
    // An arch the set does not ship: the fix is to ship it.
    f.package();
    let sm75 = Options { archs: Some(crate::arch::parse_list("sm_75").unwrap()), ..Options::default() };
    let Ok(Use::Source(Some(passed))) = f.load(&sm75, Prebuilt::Auto, true).0 else { panic!("expected a build from source") };
    let e = passed.explain(crate::Error::NoArch { package: "p".into(), why: "w".into(), help: "h".into() }).to_string();
    assert!(e.contains("are not used (sm_75 was asked for, and the set ships sm_80, sm_90 only); the fix where `fastblur` is made: add sm_75 to the archs of `fastblur` and rerun `cargo ptx package -p fastblur`"), "{e}");
}

#[test]
fn a_missing_tool_is_named_once_in_plain_words() {
    let rustup = crate::Error::ToolMissing {
        what: "rustup".into(),
        detail: " (kernels are built with a rustup nightly)".into(),
        help: "install rustup".into(),
    };
    assert_eq!(load::missing_tool(&rustup), "rustup, which was not found (kernels are built with a rustup nightly)");
    let parts = crate::Error::ToolMissing {
        what: "the rust-src and llvm-tools components of the `nightly` toolchain".into(),
        detail: " (rust-src builds `core` for nvptx64)".into(),
        help: "run `cargo ptx setup`".into(),
    };
    assert_eq!(
        load::missing_tool(&parts),
        "the rust-src and llvm-tools components of the `nightly` toolchain, which were not found (rust-src builds `core` for nvptx64)"
    );
    // In the set's error: one level of parentheses, the help of the set's error alone.
    let f = fixture();
    f.package();
    write(&f.pkg.join("cuda/blur.cu"), "// changed\n");
    let w = Warnings::default();
    let missing = load::missing_tool(&rustup);
    let r = load_with(&f.request(&Options::default()), Prebuilt::Auto, &w, &|_: &Request<'_>, _: &Path| Err(missing.clone()));
    let e = match r {
        Err(e) => e.to_string(),
        Ok(_) => panic!("expected an error"),
    };
    assert!(e.contains("the sources changed after packaging: cuda/blur.cu; building from source needs rustup, which was not found (kernels are built with a rustup nightly)\n  help: rerun `cargo ptx package -p fastblur`"), "{e}");
    assert!(!e.contains("))") && !e.contains("install rustup"), "{e}");
}

#[test]
fn only_cargo_ptx_package_writes_silently_and_its_check_writes_nothing() {
    let value = write_value("fastblur", 42);
    assert_eq!(write_request(&value, "fastblur"), Some(Mode::Write(Announce::No)));
    assert_eq!(write_request(&value, "blur-app"), None, "another package's build script does not write");
    assert_eq!(write_request(&check_value("fastblur", 42), "fastblur"), Some(Mode::Check));
    assert_eq!(write_request(&check_value("fastblur", 42), "blur-app"), None);
    // Set by hand (or by an older cargo-ptx): the set is written and announced.
    assert_eq!(write_request("fastblur:1", "fastblur"), Some(Mode::Write(Announce::Warning)));
    assert_eq!(write_request("fastblur", "fastblur"), Some(Mode::Write(Announce::Warning)));
    assert_eq!(write_request("fastblur:1:someone-else", "fastblur"), Some(Mode::Write(Announce::Warning)));
}

#[test]
fn archs_are_served_by_the_set_or_named_with_the_source_build() {
    let f = fixture();
    f.package();
    let arch = |s: &str| Options { archs: Some(crate::arch::parse_list(s).unwrap()), ..Options::default() };
    // Shipped: used silently. A newer GPU: the shipped PTX, said once.
    assert!(f.load(&arch("sm_90"), Prebuilt::Always, false).0.unwrap().set().is_some());
    let (r, w) = f.load(&arch("sm_120"), Prebuilt::Always, false);
    assert!(r.unwrap().set().is_some());
    assert_eq!(w, ["ptx-build: `fastblur` ships no sm_120 kernels: the driver compiles its sm_90 PTX at load time"]);
    // Older than anything shipped, or arch-specific: not served.
    let e = f.error(&arch("sm_75"), Prebuilt::Always);
    assert!(e.contains("sm_75 was asked for, and the set ships sm_80, sm_90 only"), "{e}");
    assert!(e.contains("`CARGO_PTX_PREBUILT=never cargo build`"), "{e}");
    assert!(f.error(&arch("sm_90a"), Prebuilt::Always).contains("sm_90a was asked for"));
    assert!(matches!(arch("all").archs.unwrap()[0], ArchRequest::All));
}

#[test]
fn no_set_builds_from_source_unless_always_and_never_does_not_look() {
    let f = fixture();
    assert!(f.load(&Options::default(), Prebuilt::Auto, false).0.unwrap().set().is_none());
    let e = f.error(&Options::default(), Prebuilt::Always);
    assert!(e.contains("there is none (`prebuilt = \"always\"`)") && e.contains("run `cargo ptx package -p fastblur` in"), "{e}");
    f.package();
    std::fs::write(set_dir(&f.pkg, "kernels.rs").join(MANIFEST), "damaged").unwrap();
    assert!(f.load(&Options::default(), Prebuilt::Never, false).0.unwrap().set().is_none());
}

#[test]
fn the_host_policy_is_read_from_its_metadata_and_a_bad_one_named() {
    let f = fixture();
    let manifest = f.pkg.join("Cargo.toml");
    assert_eq!(host_policy(&manifest).unwrap(), Some(Prebuilt::Auto));
    // As `cargo package` writes it.
    write(&manifest, "[package]\nname = \"fastblur\"\n\n[package.metadata.ptx]\narchs = [\"sm_80\"]\nprebuilt = \"always\"\n");
    assert_eq!(host_policy(&manifest).unwrap(), Some(Prebuilt::Always));
    write(&manifest, "[package]\nname = \"fastblur\"\n[package.metadata.ptx]\nprebuilt = \"sometimes\" # typo\n");
    let e = host_policy(&manifest).unwrap_err().to_string();
    assert!(
        e.starts_with(&format!(
            "invalid `prebuilt` in [package.metadata.ptx] of {}: `sometimes` is not a prebuilt policy",
            manifest.display()
        )),
        "{e}"
    );
    write(&manifest, "[package]\nname = \"fastblur\"\n[dependencies]\nprebuilt = \"1\"\n");
    assert_eq!(host_policy(&manifest).unwrap(), None, "another table's key of that name");
}

#[test]
fn relative_paths_go_up_and_come_back() {
    let base = Path::new("/work/lib");
    assert_eq!(relative_to(Path::new("/work/lib/cuda/a.cu"), base), "cuda/a.cu");
    assert_eq!(relative_to(Path::new("/work/kernels/src/lib.rs"), base), "../kernels/src/lib.rs");
    assert_eq!(under(base, "../kernels/src/lib.rs"), Path::new("/work/kernels/src/lib.rs"));
}
