#![no_main]
// [package.metadata.ptx] as cargo metadata hands it over (JSON).
libfuzzer_sys::fuzz_target!(|json: &str| {
    ptx_build::internals::fuzzing::metadata(json);
});
