//! The `cargo ptx` binary: everything it does lives in the `cargo_ptx` library.

use ptx_build::internals::{cache, tools::process};

fn main() -> std::process::ExitCode {
    end_the_build_on_interrupt();
    let code = cargo_ptx::cli::main(std::env::args_os());
    // An interrupted build: the handler is cleaning up and exits with 130 itself.
    while process::interrupted() {
        std::thread::park();
    }
    code
}

/// A SIGINT, SIGTERM or SIGHUP sent to this process alone (as an IDE or a CI runner stops a
/// build, rather than a terminal's Ctrl-C to the whole group) ends every tool the build started,
/// with what they started, at once, removes the scratch files, and exits 130. The tools run in
/// process groups of their own for this (`own_process_tree`).
fn end_the_build_on_interrupt() {
    process::own_process_tree();
    let installed = ctrlc::set_handler(|| {
        // The build's own threads now see their tools fail: nothing they would print about it
        // is true, so their output stops here (the locks are held until the exit).
        std::mem::forget(std::io::stdout().lock());
        std::mem::forget(std::io::stderr().lock());
        process::terminate_all();
        cache::remove_scratch();
        std::process::exit(130);
    });
    if let Err(e) = installed {
        // Without the handler the default action still ends this process; its tools then run on.
        eprintln!("warning: could not install the interrupt handler ({e}); an interrupted build may leave tools running");
    }
}
