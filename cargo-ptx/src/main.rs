//! The `cargo ptx` binary: everything it does lives in the `cargo_ptx` library.

fn main() -> std::process::ExitCode {
    cargo_ptx::cli::main(std::env::args_os())
}
