#![no_main]
// The inline-PTX checker on Rust `asm!` invocations.
libfuzzer_sys::fuzz_target!(|src: &str| {
    ptx_build::internals::fuzzing::inline_ptx_rust(src);
});
