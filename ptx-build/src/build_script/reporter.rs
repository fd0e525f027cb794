//! What a build script prints: its directives and diagnostics, held until the build ends.

use std::path::{Path, PathBuf};

use super::verbose;
use crate::arch::Arch;
use crate::diag::{Diagnostic, Level};
use crate::embed;
use crate::report::{Event, Reporter};

/// Reports to cargo. Everything is held until the build ends: on success the directives and
/// each warning line as `cargo:warning=` (cargo adds `warning: pkg@ver: ` itself, so the
/// diagnostic's own `warning: ` is dropped); on failure the warnings and errors on stderr only,
/// since cargo prints a failed script's stdout too, and directives there are noise (cargo reruns a
/// failed build script anyway). Each diagnostic is printed once. `cargo::error=` lines (stable
/// since cargo 1.84) are not used: a `main` returning `Err` exits with 1, and cargo then prints
/// them and, in its dump of the script's stdout, prints them again.
///
/// Cargo replays a path package's build-script warnings on every build, no-op ones too: a
/// warning repeated at many places (one inline-PTX pattern in a macro stamped over 40 kernels)
/// is shown in full once, then one line naming the other places; `CARGO_PTX_VERBOSE=1` shows
/// each in full.
#[derive(Default)]
pub(super) struct BuildScript {
    /// `CARGO_PTX_VERBOSE`: also each step and tool command line on stderr, as they happen.
    pub(super) verbose: bool,
    directives: std::sync::Mutex<Vec<String>>,
    diagnostics: std::sync::Mutex<Vec<Held>>,
}

/// A diagnostic as printed, with what groups repeats of it: its message and where it points.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Held {
    level: Level,
    text: String,
    message: String,
    /// `file:line`, as the line naming a warning's other places shows it.
    place: Option<String>,
    /// The diagnostic (none for the Builder's own text warnings), kept to render again when
    /// another report of it at the same place adds archs.
    diagnostic: Option<Diagnostic>,
}

impl Held {
    fn new(d: &Diagnostic) -> Held {
        let place = d.file.as_ref().map(|f| {
            let f = rooted(f, d.root.as_deref());
            match d.line {
                Some(line) => format!("{}:{line}", f.display()),
                None => f.display().to_string(),
            }
        });
        Held { level: d.level, text: render(d), message: d.message.clone(), place, diagnostic: Some(d.clone()) }
    }

    /// The same diagnostic: the same text, or the same message at the same file, line and column
    /// (one .cu file in both `.cuda(..)` and `.cuda_static_lib(..)` is compiled twice, by the
    /// PTX path once per arch and by `nvcc -c` once for all archs: one warning, not two).
    fn same(&self, other: &Held) -> bool {
        let at = |h: &Held| h.diagnostic.as_ref().filter(|d| d.file.is_some()).map(|d| (d.root.clone(), d.file.clone(), d.line, d.column));
        self.level == other.level
            && (self.text == other.text || (self.message == other.message && at(self).is_some() && at(self) == at(other)))
    }

    /// Another report of the same diagnostic: the archs either names (its `for sm_80, sm_90`
    /// note), together.
    fn merge(&mut self, other: Held) {
        let (Some(d), Some(o)) = (self.diagnostic.as_mut(), other.diagnostic) else { return };
        match (arch_note(&d.notes), arch_note(&o.notes)) {
            (Some((i, mut archs)), Some((_, more))) => {
                archs.extend(more);
                archs.sort();
                archs.dedup();
                let archs: Vec<String> = archs.iter().map(ToString::to_string).collect();
                d.notes[i] = format!("for {}", archs.join(", "));
            }
            // Built for one arch, or all of a static library's in one run: the other's say more.
            (None, Some((j, _))) => d.notes.push(o.notes[j].clone()),
            _ => return,
        }
        self.text = render(d);
    }
}

/// The diagnostic as the build script prints it: absolute paths; a warning without its
/// `warning: ` (cargo's `cargo:warning=` adds its own).
fn render(d: &Diagnostic) -> String {
    match d.level {
        Level::Warning => d.render_absolute_unprefixed(),
        Level::Error => d.render_absolute(),
    }
}

/// The note that names the archs a diagnostic was reported for (`for sm_80, sm_90`, which the
/// engine adds last): its index and the archs.
fn arch_note(notes: &[String]) -> Option<(usize, Vec<Arch>)> {
    let i = notes.len().checked_sub(1)?;
    let archs: Option<Vec<Arch>> = notes[i].strip_prefix("for ")?.split(", ").map(|a| a.parse().ok()).collect();
    Some((i, archs.filter(|a| !a.is_empty())?))
}

impl BuildScript {
    /// `verbose`: `CARGO_PTX_VERBOSE` is set.
    pub(super) fn new(verbose: bool) -> BuildScript {
        BuildScript { verbose, ..BuildScript::default() }
    }

    pub(super) fn directive(&self, line: String) {
        self.directives.lock().unwrap_or_else(|e| e.into_inner()).push(line);
    }

    pub(super) fn warning(&self, text: String) {
        self.push(Held { level: Level::Warning, message: text.clone(), text, place: None, diagnostic: None });
    }

    fn push(&self, held: Held) {
        let mut ds = self.diagnostics.lock().unwrap_or_else(|e| e.into_inner());
        match ds.iter_mut().find(|d| d.same(&held)) {
            Some(d) => d.merge(held),
            None => ds.push(held),
        }
    }

    pub(super) fn finish(&self, ok: bool) {
        let directives = std::mem::take(&mut *self.directives.lock().unwrap_or_else(|e| e.into_inner()));
        let diagnostics = std::mem::take(&mut *self.diagnostics.lock().unwrap_or_else(|e| e.into_inner()));
        let (stdout, stderr) = output(&diagnostics, ok, self.verbose);
        for line in stderr {
            eprintln!("{line}");
        }
        for line in stdout {
            println!("{line}");
        }
        if ok {
            for d in directives {
                println!("{d}");
            }
        }
    }
}

/// What a build script prints of its diagnostics: (stdout lines, stderr lines).
fn output(diagnostics: &[Held], ok: bool, verbose: bool) -> (Vec<String>, Vec<String>) {
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    // (kind, place) of the warnings a "more places" line stands for, and (message, place) of
    // those shown (the same message at another column of the line adds nothing).
    let mut covered: Vec<(String, &str)> = Vec::new();
    let mut shown: Vec<(&str, &str)> = Vec::new();
    let kinds: Vec<String> = diagnostics.iter().map(|d| kind_of(&d.message)).collect();
    for (i, d) in diagnostics.iter().enumerate() {
        match (ok, d.level) {
            (true, Level::Warning) => {
                let kind = &kinds[i];
                if let Some(p) = d.place.as_deref() {
                    if covered.iter().any(|(k, c)| k == kind && *c == p) || shown.contains(&(d.message.as_str(), p)) {
                        continue;
                    }
                    shown.push((&d.message, p));
                }
                stdout.extend(d.text.lines().filter(|l| !l.trim().is_empty()).map(|l| format!("cargo:warning={l}")));
                if verbose || d.place.is_none() {
                    continue;
                }
                // Each other place once: one at the place shown (another column of its line, or
                // another warning of the kind there: `a` and `b` of one `let (a, b)`) is shown
                // in full when its turn comes.
                let repeats = diagnostics[i + 1..]
                    .iter()
                    .zip(&kinds[i + 1..])
                    .filter(|(o, k)| o.level == d.level && o.place.is_some() && o.place != d.place && *k == kind)
                    .map(|(o, _)| o);
                let same = repeats.clone().all(|o| o.message == d.message);
                let mut places: Vec<&str> = Vec::new();
                for p in repeats.filter_map(|o| o.place.as_deref()) {
                    if !places.contains(&p) {
                        places.push(p);
                        covered.push((kind.clone(), p));
                    }
                }
                if places.is_empty() {
                    continue;
                }
                const NAMED: usize = 3;
                let more = places.len().saturating_sub(NAMED);
                let more = if more > 0 { format!(" and {more} more") } else { String::new() };
                stdout.push(format!(
                    "cargo:warning=the same {} at {} more place{}: {}{more} ({}=1 shows each)",
                    if same { "warning" } else { "kind of warning" },
                    places.len(),
                    if places.len() == 1 { "" } else { "s" },
                    places[..places.len().min(NAMED)].join(", "),
                    embed::unit::VERBOSE_VAR
                ));
            }
            (_, Level::Warning) => stderr.push(format!("warning: {}", d.text)),
            (_, Level::Error) => stderr.push(d.text.clone()),
        }
    }
    (stdout, stderr)
}

/// A warning's kind: its message with what it quotes left out (`asm writes memory (`…`)
/// without a "memory" clobber` for every store instruction). A header of store helpers
/// (DeepSpeed's `memory_access_utils.h`: 14 instructions) is one warning in full and one line
/// for the rest, as the same message at many places is: cargo replays a build script's warnings
/// on every build, and the user's own must stay visible.
fn kind_of(message: &str) -> String {
    let mut kind = String::with_capacity(message.len());
    for (i, part) in message.split('`').enumerate() {
        // Odd parts are quoted.
        kind.push_str(if i % 2 == 1 { "`…`" } else { part });
    }
    kind
}

impl Reporter for BuildScript {
    fn report(&self, event: Event<'_>) {
        if let (true, Event::Status { verb, message }) = (self.verbose, &event) {
            eprintln!("{}", verbose::status(verb, message));
        }
        if let Event::Diagnostic(d) = event {
            // rustc's `failure-note`s ("For more information about this error, try ...") come
            // as warnings; the rendering shows what they are.
            if d.rendered.as_deref().is_some_and(|r| !r.starts_with("warning") && !r.starts_with("error")) {
                return;
            }
            self.push(Held::new(d));
        }
    }
}

/// A diagnostic's file as its rendering names it: joined to its root (a build script cannot
/// know the folder cargo was started in).
fn rooted(file: &Path, root: Option<&Path>) -> PathBuf {
    match root {
        Some(root) if file.is_relative() => root.join(file),
        _ => file.to_path_buf(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held(message: &str, place: Option<&str>) -> Held {
        let at = place.map(|p| format!("\n --> {p}\n  |\n  = note: a note")).unwrap_or_default();
        Held {
            level: Level::Warning,
            text: format!("{message}{at}"),
            message: message.into(),
            place: place.map(String::from),
            diagnostic: None,
        }
    }

    /// What the engine reports of one .cu file given to both `.cuda(..)` and
    /// `.cuda_static_lib(..)`, built for sm_80 and sm_90: the PTX path's warning (its two arch
    /// runs as one, `for sm_80, sm_90`) and `nvcc -c`'s (one run for both, no arch note).
    fn cuda_and_static_lib(root: &Path) -> (Diagnostic, Diagnostic) {
        std::fs::create_dir_all(root.join("cuda")).unwrap();
        std::fs::write(root.join("cuda/k.cu"), "extern \"C\" __global__ void k(float* y)\n{\n    int unused = 3;\n}\n").unwrap();
        let d = Diagnostic::warning("variable \"unused\" was declared but never referenced")
            .at("cuda/k.cu", Some(3), Some(9))
            .note("`.nvcc_flag(\"-diag-suppress=177\")` in build.rs silences this warning")
            .rooted(root);
        (d.clone().note("for sm_80, sm_90"), d)
    }

    fn reported(ds: &[&Diagnostic]) -> Vec<Held> {
        let script = BuildScript::new(false);
        for d in ds {
            script.report(Event::Diagnostic(d));
        }
        script.diagnostics.into_inner().unwrap()
    }

    #[test]
    fn one_warning_at_one_place_from_the_ptx_path_and_a_static_library_is_shown_once_for_both_archs() {
        let dir = tempfile::tempdir().unwrap();
        let (ptx, object) = cuda_and_static_lib(dir.path());
        let k = dir.path().join("cuda/k.cu");
        let full = |prefix: &str| {
            vec![
                format!("{prefix}variable \"unused\" was declared but never referenced"),
                format!("{prefix} --> {}:3:9", k.display()),
                format!("{prefix}  |"),
                format!("{prefix}3 |     int unused = 3;"),
                format!("{prefix}  |         ^"),
                format!("{prefix}  = `.nvcc_flag(\"-diag-suppress=177\")` in build.rs silences this warning"),
                format!("{prefix}  = for sm_80, sm_90"),
            ]
        };
        // Whichever finishes first, one warning, its archs named.
        for order in [[&ptx, &object], [&object, &ptx]] {
            let held = reported(&order);
            assert_eq!(held.len(), 1, "{held:?}");
            let (out, err) = output(&held, true, false);
            assert!(err.is_empty());
            assert_eq!(out, full("cargo:warning="));
            // A failed build prints it once too, on stderr.
            let (out, err) = output(&held, false, false);
            assert!(out.is_empty());
            let mut expected = full("");
            expected[0] = format!("warning: {}", expected[0]);
            assert_eq!(err, [expected.join("\n")]);
        }
        // Each arch's own report merges into one naming both.
        let one = |arch: &str| Diagnostic { notes: vec![format!("for {arch}")], ..object.clone() };
        let held = reported(&[&one("sm_90"), &one("sm_80"), &one("sm_90")]);
        assert_eq!(held.len(), 1);
        assert!(held[0].text.ends_with("= for sm_80, sm_90"), "{}", held[0].text);
        // Another column of the line is another warning, but no other place to name.
        let other_column = Diagnostic { column: Some(5), ..ptx.clone() };
        let held = reported(&[&ptx, &other_column]);
        assert_eq!(held.len(), 2);
        let (out, _) = output(&held, true, false);
        assert_eq!(out, full("cargo:warning="));
    }

    #[test]
    fn a_warning_repeated_at_many_places_is_shown_once_then_one_line_for_the_rest() {
        let clobber = "asm writes memory (`st.global`) without a \"memory\" clobber";
        let ds: Vec<Held> = (1..=6)
            .map(|i| held(clobber, Some(&format!("/p/cuda/k.cuh:{}", i * 10))))
            .chain([held("asm reads `%clock`, which changes while the thread runs, but is not `volatile`", Some("/p/cuda/k.cu:3"))])
            .chain([held("1 of 2 kernels of `bytes` has no typed launch method", None)])
            .collect();
        let (out, err) = output(&ds, true, false);
        assert!(err.is_empty());
        assert_eq!(
            out,
            [
                format!("cargo:warning={clobber}"),
                "cargo:warning= --> /p/cuda/k.cuh:10".into(),
                "cargo:warning=  |".into(),
                "cargo:warning=  = note: a note".into(),
                "cargo:warning=the same warning at 5 more places: /p/cuda/k.cuh:20, /p/cuda/k.cuh:30, /p/cuda/k.cuh:40 and 2 more (CARGO_PTX_VERBOSE=1 shows each)".into(),
                "cargo:warning=asm reads `%clock`, which changes while the thread runs, but is not `volatile`".into(),
                "cargo:warning= --> /p/cuda/k.cu:3".into(),
                "cargo:warning=  |".into(),
                "cargo:warning=  = note: a note".into(),
                "cargo:warning=1 of 2 kernels of `bytes` has no typed launch method".into(),
            ]
        );
        // Warnings of one kind with other quoted words (each store instruction of a header of
        // store helpers): one in full, the others by place.
        let kinds: Vec<Held> = ["st.global.wb.u32", "st.global.cg.u32", "st.shared.u32"]
            .iter()
            .enumerate()
            .map(|(i, m)| held(&format!("asm writes memory (`{m}`) without a \"memory\" clobber"), Some(&format!("/p/h.h:{}", i + 1))))
            .collect();
        let (out, _) = output(&kinds, true, false);
        assert_eq!(out.iter().filter(|l| l.contains(" --> ")).count(), 1, "{out:?}");
        // Two of one kind at one place (`a` and `b` of one `let (a, b)`): both in full.
        let one_line = [held("unused variable `a`", Some("/p/k.cu:4")), held("unused variable `b`", Some("/p/k.cu:4"))];
        let (both, _) = output(&one_line, true, false);
        assert_eq!(both.iter().filter(|l| l.contains(" --> ")).count(), 2, "{both:?}");
        assert_eq!(
            out.last().unwrap(),
            "cargo:warning=the same kind of warning at 2 more places: /p/h.h:2, /p/h.h:3 (CARGO_PTX_VERBOSE=1 shows each)"
        );
        // Verbose: every place in full.
        let (out, _) = output(&ds, true, true);
        assert_eq!(out.iter().filter(|l| l.contains(" --> ")).count(), 7);
        assert!(!out.iter().any(|l| l.contains("the same warning")));
        // A failed build: everything on stderr, in full, as cargo shows a failed script's output.
        let (out, err) = output(&ds, false, false);
        assert!(out.is_empty());
        assert_eq!(err.len(), 8);
    }
}
