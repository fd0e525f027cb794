//! What a build script shows with `CARGO_PTX_VERBOSE=1`, beside every list in full: each step
//! as it starts (`Compiling`, `Archiving`), each tool's command line before it runs (`Running
//! `nvcc -c ...``, the same line `cargo ptx build -vv` prints), and how each static library is
//! linked into the crate (the `-L`/`-l` arguments rustc gets from the directives).
//!
//! They go to stderr as they happen: cargo shows a build script's stderr with `cargo build -vv`
//! (each line after `[package version]`) and in full when the script fails, and keeps it in
//! the script's `output` folder. As `cargo:warning`s they would show on every build, and be
//! replayed on no-op builds that ran nothing.

use crate::engine::StaticLib;
use crate::tools::process;

/// A status line as the CLI prints it (`verb` right-aligned in 12 columns, as cargo's), uncoloured.
pub(super) fn status(verb: &str, message: &str) -> String {
    format!("{verb:>12} {message}")
}

/// From now on, every tool's command line goes to stderr before the tool starts.
pub(super) fn echo_commands() {
    process::echo_commands(|line| eprintln!("{}", status("Running", &format!("`{line}`"))));
}

/// How `lib` is linked into `package`: the arguments rustc gets from its directives, quoted for
/// a shell.
pub(super) fn link_line(lib: &StaticLib, package: &str) -> String {
    let mut rustc = process::command("rustc");
    for d in lib.cargo_directives() {
        if let Some(dir) = d.strip_prefix("cargo:rustc-link-search=") {
            rustc.arg("-L").arg(dir);
        } else if let Some(l) = d.strip_prefix("cargo:rustc-link-lib=") {
            rustc.arg("-l").arg(l);
        }
    }
    status("Linking", &format!("lib{}.a into `{package}` (`{}`)", lib.name, process::command_line(&rustc)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_link_line_is_what_rustc_gets_from_the_directives() {
        let lib = StaticLib {
            path: "/t/out dir/libmoe.a".into(),
            name: "moe".into(),
            runtime_dir: "/cuda/lib".into(),
            static_libs: vec!["cudart_static".into()],
            system_libs: vec!["stdc++".into(), "dl".into()],
            fresh: false,
        };
        assert_eq!(
            link_line(&lib, "ggml-host"),
            "     Linking libmoe.a into `ggml-host` (`rustc -L 'native=/t/out dir' -l static=moe -L native=/cuda/lib -l static=cudart_static -l dylib=stdc++ -l dylib=dl`)"
        );
    }
}
