#![no_main]
// The --arch / `archs` list parser.
libfuzzer_sys::fuzz_target!(|text: &str| {
    ptx_build::internals::fuzzing::arch_list(text);
});
