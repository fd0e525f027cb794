#![no_main]
// The PTX reader: .entry headers, .param arrays, .file/.loc line tables.
libfuzzer_sys::fuzz_target!(|text: &str| {
    ptx_build::internals::fuzzing::ptx_module(text);
});
