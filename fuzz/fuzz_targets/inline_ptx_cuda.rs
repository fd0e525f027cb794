#![no_main]
// The inline-PTX checker on C/C++ `asm(...)` statements.
libfuzzer_sys::fuzz_target!(|src: &str| {
    ptx_build::internals::fuzzing::inline_ptx_cuda(src);
});
