#![no_main]
// The dep-file reader (nvcc -MF, rustc dep-info).
libfuzzer_sys::fuzz_target!(|text: &str| {
    ptx_build::internals::fuzzing::depfile(text);
});
