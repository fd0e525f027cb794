//! The command line's tests: every option means the same from every front end, and the
//! parser's rules for arch lists and flags.

use super::*;
use ptx_build::Builder;

/// Metadata as a kernel crate's Cargo.toml writes it.
fn from_toml(text: &str) -> ptx_build::Result<Options> {
    let value: serde_json::Value = toml::from_str(text).expect("valid TOML");
    Options::from_metadata(&value, &Source::Package("/k/Cargo.toml".into()), &mut Vec::new())
}

fn from_cli(args: &[&str]) -> Result<Options, clap::Error> {
    let mut argv = vec!["cargo-ptx", "build"];
    argv.extend(args);
    match Cli::try_parse_from(tidy_arch_lists(argv.into_iter().map(Into::into).collect()))?.command {
        Command::Build(b) => Ok(b.options.clone()),
        other => panic!("parsed as {other:?}"),
    }
}

/// Every option, set through each front end (and its variable, where it has one): the same
/// options, the same resolved build.
#[test]
fn every_option_means_the_same_in_metadata_cli_builder_and_environment() {
    type Set = fn(Builder) -> Builder;
    let table: &[(&str, &str, &[&str], Set)] = &[
        ("archs", r#"archs = ["sm_80", "sm_90a"]"#, &["--arch", "sm_80,sm_90a"], |b| b.arch("sm_80").arch("sm_90a")),
        ("profile", r#"profile = "debug""#, &["--profile", "debug"], |b| b.profile(Profile::Debug)),
        ("toolchain", r#"toolchain = "nightly-2026-05-19""#, &["--toolchain", "nightly-2026-05-19"], |b| b.toolchain("nightly-2026-05-19")),
        ("features", r#"features = ["fast", "f64"]"#, &["-F", "fast,f64"], |b| b.feature("fast").feature("f64")),
        ("all_features", "all-features = true", &["--all-features"], |b| b.all_features(true)),
        ("no_default_features", "no-default-features = true", &["--no-default-features"], |b| b.no_default_features(true)),
        ("ftz", "ftz = true", &["--ftz"], |b| b.ftz(true)),
        ("fmad", "fmad = false", &["--fmad=false"], |b| b.fmad(false)),
        ("unroll_threshold", "unroll-threshold = 2000", &["--unroll-threshold", "2000"], |b| b.unroll_threshold(2000)),
        ("ptx_isa", r#"ptx-isa = "7.8""#, &["--ptx-isa", "7.8"], |b| b.ptx_isa("7.8")),
        ("rust", "rust = false", &["--rust=false"], |b| b.rust(false)),
        ("cuda_sources", r#"cuda-sources = ["kernels/*.cu"]"#, &["--cuda-sources", "kernels/*.cu"], |b| b.cuda_sources("kernels/*.cu")),
        ("cuda_exclude", r#"cuda-exclude = ["*_dummy.cu"]"#, &["--cuda-exclude", "*_dummy.cu"], |b| b.cuda_exclude("*_dummy.cu")),
        ("cuda_include", r#"cuda-include = ["/opt/inc"]"#, &["-I", "/opt/inc"], |b| b.cuda_include("/opt/inc")),
        ("cuda_defines", "cuda-defines = { TILE = 16, FAST = true }", &["-D", "FAST", "-D", "TILE=16"], |b| {
            b.cuda_define("FAST", None).cuda_define("TILE", Some("16"))
        }),
        ("nvcc_flags", r#"nvcc-flags = ["--use_fast_math"]"#, &["--nvcc-flag", "--use_fast_math"], |b| b.nvcc_flag("--use_fast_math")),
        ("cuda_std", r#"cuda-std = "c++20""#, &["--cuda-std", "c++20"], |b| b.cuda_std("c++20")),
        ("cuda_gdb", "cuda-gdb = true", &["--cuda-gdb"], |b| b.cuda_gdb(true)),
        ("cuda_libraries", r#"cuda-libraries = ["cublas"]"#, &["--cuda-library", "cublas"], |b| b.cuda_library("cublas")),
        ("shared_cache", r#"shared-cache = "/var/cache/ptx""#, &["--shared-cache", "/var/cache/ptx"], |b| {
            b.shared_cache(Some("/var/cache/ptx"))
        }),
        ("launcher", r#"launcher = "sccache""#, &["--launcher", "sccache"], |b| b.launcher("sccache")),
        ("untyped_kernels", r#"untyped-kernels = "allow""#, &["--untyped-kernels", "allow"], |b| {
            b.untyped_kernels(ptx_build::UntypedKernels::Allow)
        }),
        (
            "cuda_file_archs",
            r#"cuda-file-archs = { "cuda/moe/*.cu" = ["sm_80", "sm_90"] }"#,
            &["--cuda-file-archs", "cuda/moe/*.cu=sm_80,sm_90"],
            |b| b.cuda_file_archs("cuda/moe/*.cu", "sm_80,sm_90"),
        ),
        ("prebuilt", r#"prebuilt = "never""#, &["--prebuilt", "never"], |b| b.prebuilt(ptx_build::options::Prebuilt::Never)),
    ];
    // The variables' text, as a shell sets them: the flag's value.
    let env: &[(&str, &str)] = &[
        ("archs", "sm_80,sm_90a"),
        ("profile", "debug"),
        ("toolchain", "nightly-2026-05-19"),
        ("shared_cache", "/var/cache/ptx"),
        ("launcher", "sccache"),
        ("untyped_kernels", "allow"),
        ("cuda_file_archs", "cuda/moe/*.cu=sm_80,sm_90"),
        ("prebuilt", "never"),
    ];
    let covered: Vec<&str> = table.iter().map(|r| r.0).collect();
    assert_eq!(covered, Options::KEYS, "every declared option has a row, in declaration order");
    let with_vars: Vec<&str> = ptx_build::options::ENV_VARS.iter().map(|(_, key)| *key).collect();
    assert_eq!(env.iter().map(|e| e.0).collect::<Vec<_>>(), with_vars, "every option with a variable has a value here");
    for (key, toml, cli, builder) in table {
        let meta = from_toml(toml).unwrap_or_else(|e| panic!("{key}: {e}"));
        let flags = from_cli(cli).unwrap_or_else(|e| panic!("{key}: {e}"));
        let built = builder(Builder::new()).kernel_options().unwrap_or_else(|e| panic!("{key}: {e}"));
        assert_eq!(meta, flags, "{key}: metadata vs command line");
        assert_eq!(meta, built, "{key}: metadata vs Builder");
        assert_ne!(meta, Options::default(), "{key}: the row sets something");
        assert_eq!(meta.resolve(), built.resolve(), "{key}");
        if let Some((_, text)) = env.iter().find(|e| e.0 == *key) {
            let (var, _) = ptx_build::options::ENV_VARS.iter().find(|(_, k)| k == key).expect("listed above");
            let vars = Options::from_vars(|v| (v == *var).then(|| text.to_string())).unwrap_or_else(|e| panic!("{key}: {e}"));
            assert_eq!(meta, vars, "{key}: metadata vs {var}");
        }
    }
    // A bad variable names itself.
    let e = Options::from_vars(|v| (v == "CARGO_PTX_PROFILE").then(|| "fast".to_string())).unwrap_err().to_string();
    assert!(e.starts_with("invalid `profile` in the environment variable CARGO_PTX_PROFILE: `fast` is not a kernel profile"), "{e}");
    let e = Options::from_vars(|v| (v == "CARGO_PTX_PREBUILT").then(|| "sometimes".to_string())).unwrap_err().to_string();
    assert!(
        e.starts_with("invalid `prebuilt` in the environment variable CARGO_PTX_PREBUILT: `sometimes` is not a prebuilt policy"),
        "{e}"
    );
}

/// A bad value gets the same explanation whichever front end it came through.
#[test]
fn a_bad_value_reads_the_same_from_every_front_end() {
    type Set = fn(Builder) -> Builder;
    let cases: &[(&str, &[&str], Set, &str)] = &[
        (r#"archs = ["sm_8"]"#, &["--arch", "sm_8"], |b| b.arch("sm_8"), "the compute capability needs major and minor digits (`80`?)"),
        (r#"ptx-isa = "seven""#, &["--ptx-isa", "seven"], |b| b.ptx_isa("seven"), "`seven` is not a PTX ISA version"),
        (r#"cuda-std = "c++98""#, &["--cuda-std", "c++98"], |b| b.cuda_std("c++98"), "`c++98` is not a standard nvcc knows"),
        ("cuda-defines = { 1X = 1 }", &["-D", "1X=1"], |b| b.cuda_define("1X", Some("1")), "`1X` is not a valid macro name"),
        (
            r#"cuda-file-archs = { "moe/*.cu" = ["sm_8"] }"#,
            &["--cuda-file-archs", "moe/*.cu=sm_8"],
            |b| b.cuda_file_archs("moe/*.cu", "sm_8"),
            "`moe/*.cu`: invalid arch `sm_8`: the compute capability needs major and minor digits",
        ),
        (r#"cuda-exclude = ["k[.cu"]"#, &["--cuda-exclude", "k[.cu"], |b| b.cuda_exclude("k[.cu"), "`k[.cu` is not a valid glob"),
        (
            "unroll-threshold = 1000000",
            &["--unroll-threshold", "1000000"],
            |b| b.unroll_threshold(1_000_000),
            "`1000000` is not an unroll threshold: write a whole number of IR instructions from 0 (no unrolling) to 100000",
        ),
    ];
    for (toml, cli, builder, expected) in cases {
        let meta = from_toml(toml).unwrap_err().to_string();
        let flags = from_cli(cli).unwrap_err().to_string();
        let built = builder(Builder::new()).kernel_options().unwrap_err().to_string();
        for (front, msg) in [("metadata", &meta), ("command line", &flags), ("Builder", &built)] {
            assert!(msg.contains(expected), "{front}: {msg}");
        }
        assert!(meta.contains("in [package.metadata.ptx] of /k/Cargo.toml"), "{meta}");
        assert!(built.contains("in the Builder in "), "{built}");
    }
    // A define given whole says which part is which.
    let e = Builder::new().cuda_define("-DSCALE=3", None).kernel_options().unwrap_err().to_string();
    assert!(e.starts_with("invalid `cuda-defines` in the Builder in "), "{e}");
    assert!(e.contains("`-DSCALE=3` is not a valid macro name") && e.contains("(the name alone is `SCALE`, and `3` its value)"), "{e}");
    let e = Builder::new().cuda_define("-DFAST", None).kernel_options().unwrap_err().to_string();
    assert!(e.contains("(the name alone is `FAST`)"), "{e}");
    // A wrong type exists only in metadata; the typed front ends cannot express it.
    assert!(from_toml(r#"archs = "sm_80""#).unwrap_err().to_string().contains("expected a list such as [\"sm_80\", \"sm_90\"]"));
    assert!(from_cli(&["--no-such-flag"]).unwrap_err().to_string().contains("unexpected argument '--no-such-flag'"));
}

#[test]
fn empty_items_of_an_arch_list_are_skipped_and_an_empty_list_is_named() {
    let two = from_cli(&["--arch", "sm_80,sm_90"]).unwrap();
    assert_eq!(from_cli(&["--arch", "sm_80,,sm_90"]).unwrap(), two);
    assert_eq!(from_cli(&["--arch=sm_80, ,sm_90,"]).unwrap(), two);
    assert_eq!(from_cli(&["--arch", "sm_80,"]).unwrap(), from_cli(&["--arch", "sm_80"]).unwrap());
    let e = from_cli(&["--arch", ","]).unwrap_err().to_string();
    assert!(e.contains("invalid value '' for '--arch <ARCH>': the list is empty"), "{e}");
    // clap names the value and the flag; the reason follows once, with a near miss's fix.
    let e = from_cli(&["--arch", "sm80"]).unwrap_err().to_string();
    assert!(e.contains("invalid value 'sm80' for '--arch <ARCH>': an arch starts with `sm_`") && !e.contains("invalid arch"), "{e}");
    assert!(e.contains("(did you mean `sm_80`?)"), "{e}");
    // After `--`, arguments belong to the programs sanitize runs.
    let argv: Vec<std::ffi::OsString> = ["cargo-ptx", "sanitize", "--", "run", "--", "--arch", "a,,b"].map(Into::into).to_vec();
    assert_eq!(tidy_arch_lists(argv.clone()), argv);
}

/// The programs' own arguments come after a second `--`, which must reach sanitize intact.
#[test]
fn sanitize_keeps_the_second_separator_for_the_programs() {
    let argv = ["cargo-ptx", "sanitize", "--tool", "racecheck", "--", "test", "--release", "--", "--ignored"];
    match Cli::try_parse_from(argv).unwrap().command {
        Command::Sanitize(a) => assert_eq!(a.cargo, ["test", "--release", "--", "--ignored"]),
        other => panic!("parsed as {other:?}"),
    }
}

#[test]
fn release_is_the_default_profile_and_the_flag_says_so() {
    assert_eq!(from_cli(&[]).unwrap().resolve().profile, Profile::Release);
    assert_eq!(Builder::new().kernel_options().unwrap().resolve().profile, Profile::Release);
    assert_eq!(from_toml("").unwrap().resolve().profile, Profile::Release);
    assert!(from_cli(&["--release", "--profile", "debug"]).is_err(), "--release and --profile debug conflict");
}

/// `setup --with` takes every name of setup's lists, and `--help` names each: no name the
/// README gives is missing from the help, and a near miss is refused before anything installs.
#[test]
fn setup_with_takes_and_lists_every_tool_and_library_setup_knows() {
    let with = |list: &str| match Cli::try_parse_from(["cargo-ptx", "setup", "--with", list]).map(|c| c.command) {
        Ok(Command::Setup(a)) => Ok(a.with),
        Ok(other) => panic!("parsed as {other:?}"),
        Err(e) => Err(e.to_string()),
    };
    assert_eq!(with("curand").unwrap(), ["curand"]);
    assert_eq!(with("sccache,cublas,cudnn,curand").unwrap(), ["sccache", "cublas", "cudnn", "curand"]);
    let names: Vec<&str> = setup::with_names().iter().map(|w| w.0).collect();
    assert_eq!(with(&names.join(",")).unwrap(), names);
    for name in ["sccache", "cublas", "cudnn", "curand", "cusparse", "cufft", "cusolver", "nvtx", "profiler"] {
        assert!(names.contains(&name), "{name}");
    }
    let e = with("curnad").unwrap_err();
    assert!(e.contains("invalid value 'curnad' for '--with <TOOL>'") && e.contains("a similar value exists: 'curand'"), "{e}");
    let mut cmd = <Cli as clap::CommandFactory>::command();
    let help = cmd.find_subcommand_mut("setup").unwrap().render_long_help().to_string();
    for name in names {
        assert!(help.contains(&format!("- {name}:")), "{name} in\n{help}");
    }
    assert!(help.contains("cuRAND's headers (nvidia-curand)"), "{help}");
}

/// `check -I` is the build option's `-I` (one declaration): repeatable, `--include` too, and
/// none of the other build options.
#[test]
fn check_takes_the_include_folders_of_the_build_options() {
    let parse = |args: &[&str]| Cli::try_parse_from(["cargo-ptx", "check"].iter().chain(args));
    match parse(&["csrc", "-I", "csrc/includes", "--include", "/opt/cutlass/include", "--cuda-include=third_party"]).unwrap().command {
        Command::Check(c) => {
            let dirs: Vec<&str> = c.include.0.iter().map(|p| p.to_str().unwrap()).collect();
            assert_eq!(dirs, ["csrc/includes", "/opt/cutlass/include", "third_party"]);
            assert_eq!(c.select.paths, [PathBuf::from("csrc")]);
        }
        other => panic!("parsed as {other:?}"),
    }
    let err = parse(&["--arch", "sm_80"]).unwrap_err().to_string();
    assert!(err.contains("unexpected argument '--arch'"), "{err}");
    let help = Cli::try_parse_from(["cargo-ptx", "check", "--help"]).unwrap_err().to_string();
    assert!(help.contains("-I, --cuda-include <DIR>") && help.contains("[alias: --include]"), "{help}");
}
