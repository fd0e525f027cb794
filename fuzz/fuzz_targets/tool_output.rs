#![no_main]
// nvcc's and ptxas's error output, read into diagnostics against a PTX text.
libfuzzer_sys::fuzz_target!(|input: (&str, &str)| {
    ptx_build::internals::fuzzing::tool_output(input.0, input.1);
});
