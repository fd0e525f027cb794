#![no_main]
// The C/C++ kernel signature reader (extern "C" __global__ functions, templates, macros).
libfuzzer_sys::fuzz_target!(|src: &str| {
    let _ = ptx_build::internals::fuzzing::cuda_signatures(src);
});
