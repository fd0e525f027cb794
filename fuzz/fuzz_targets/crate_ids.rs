#![no_main]
// Crate ids in Rust (v0) symbol names rewritten in LLVM IR text: no panic, and idempotent.
libfuzzer_sys::fuzz_target!(|text: &str| {
    ptx_build::internals::fuzzing::crate_ids(text);
});
