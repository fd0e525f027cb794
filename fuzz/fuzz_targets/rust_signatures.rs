#![no_main]
// The Rust kernel signature reader (#[no_mangle] extern "ptx-kernel" and #[kernel] functions).
libfuzzer_sys::fuzz_target!(|src: &str| {
    let _ = ptx_build::internals::fuzzing::rust_signatures(src);
});
