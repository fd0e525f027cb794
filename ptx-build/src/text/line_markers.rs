//! The line markers of a preprocessed translation unit (`# 12 "cuda/k.cu" 2`): which file and
//! line each part of the text came from.

use std::path::PathBuf;

/// A preprocessor's line marker (`# 12 "cuda/k.cu" 2`: the next line is line 12 of cuda/k.cu,
/// which is not a system header) and the bytes of the text its line spans.
struct MarkerLine<'a> {
    /// Where the marker's line starts.
    start: usize,
    /// Where the next line starts (the text's length after a last line without a newline).
    next: usize,
    file: &'a str,
    number: u32,
    system: bool,
}

/// Every line marker of `text`, in order, found by searching for the `#` that starts one. Going
/// over every line of a unit instead (the bench's unary.cu gives 41,000, 95% of them CUDA's own
/// headers) took 20 ms a file in a build script, which cargo builds without optimisation:
/// `str::find(char)` runs the standard library's memchr, which is built optimised.
fn marker_lines(text: &str) -> impl Iterator<Item = MarkerLine<'_>> {
    let bytes = text.as_bytes();
    let mut from = 0;
    std::iter::from_fn(move || {
        while let Some(i) = text.get(from..)?.find('#') {
            let start = from + i;
            if start > 0 && bytes[start - 1] != b'\n' {
                from = start + 1; // a `#` inside a line
                continue;
            }
            let next = text[start..].find('\n').map_or(text.len(), |e| start + e + 1);
            from = next;
            if let Some((file, number, system)) = marker(text[start..next].trim_end_matches(['\n', '\r'])) {
                return Some(MarkerLine { start, next, file, number, system });
            }
        }
        None
    })
}

/// One line's marker: file, line number there, whether it is a system header.
fn marker(line: &str) -> Option<(&str, u32, bool)> {
    let rest = line.strip_prefix("# ")?;
    let (number, rest) = rest.split_once(' ')?;
    let (Ok(number), Some(rest)) = (number.parse::<u32>(), rest.strip_prefix('"')) else { return None };
    let (file, flags) = rest.split_once('"')?;
    Some((file, number, flags.split_whitespace().any(|f| f == "3")))
}

/// One pass over a translation unit for the compile step: the files it was read from, as its
/// line markers name them, in order of first appearance (what `-MMD` would list: system headers
/// and `<built-in>` left out), and the unit less the parts of the files `skip` names (by the
/// marker's file and its system-header flag), each kept part after its marker. [`kept_lines`]
/// reads the smaller unit as it would the whole one, without going over CUDA's headers (95% of
/// a unit) a second time.
pub fn user_parts(text: &str, skip: impl Fn(&str, bool) -> bool) -> (Vec<PathBuf>, String) {
    let mut seen = std::collections::HashSet::new();
    let mut files = Vec::new();
    let mut out = String::new();
    let mut current: Option<(&str, u32)> = None;
    let mut at = 0;
    // A kept part, after a marker saying where it starts.
    let push = |out: &mut String, part: &str, current: Option<(&str, u32)>| {
        if let (Some((file, number)), false) = (current, part.is_empty()) {
            out.push_str(&format!("# {number} \"{file}\"\n"));
            out.push_str(part);
            if !part.ends_with('\n') {
                out.push('\n');
            }
        }
    };
    for m in marker_lines(text) {
        push(&mut out, &text[at..m.start], current);
        if !m.system && !m.file.starts_with('<') && seen.insert(m.file) {
            files.push(PathBuf::from(m.file));
        }
        current = (!skip(m.file, m.system)).then_some((m.file, m.number));
        at = m.next;
    }
    push(&mut out, &text[at..], current);
    (files, out)
}

/// The lines of `text` from the files `skip` does not name (by the marker's file and its
/// system-header flag), without the markers, and the place of each kept line: its file and line
/// number there, as the markers give them. What is left to read for kernels is the user's own
/// code: CUDA's headers are 95% of a unit (1.5 MB of candle's unary.cu's 1.6 MB), and lexing them,
/// or even the blank lines standing in for them, in a build script (built without optimisation)
/// was most of the time a build spent between two nvcc runs (BENCHMARKS.md, issue 25). Only the
/// kept parts are split into lines.
pub fn kept_lines(text: &str, skip: impl Fn(&str, bool) -> bool) -> (String, Vec<(&str, u32)>) {
    let mut out = String::new();
    let mut places = Vec::new();
    // The file being read and the number of its next line; none while skipping (and before the
    // first marker). A skipped file always ends at a marker.
    let mut current: Option<(&str, u32)> = None;
    let mut at = 0;
    for m in marker_lines(text) {
        keep(&text[at..m.start], current.as_mut(), &mut out, &mut places);
        current = (!skip(m.file, m.system)).then_some((m.file, m.number));
        at = m.next;
    }
    keep(&text[at..], current.as_mut(), &mut out, &mut places);
    (out, places)
}

/// The lines of `part` (of the file being read, `current`, none while skipping) and their
/// places, for [`kept_lines`].
fn keep<'a>(part: &str, current: Option<&mut (&'a str, u32)>, out: &mut String, places: &mut Vec<(&'a str, u32)>) {
    let Some((file, number)) = current else { return };
    for line in part.split_inclusive('\n') {
        out.push_str(line);
        if !line.ends_with('\n') {
            out.push('\n');
        }
        places.push((*file, *number));
        *number += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_files_a_unit_was_read_from_are_what_mmd_lists_and_its_user_parts_keep_their_places() {
        // What `nvcc -E` makes of a file that includes a system header and a user header.
        let ii = "# 1 \"cuda/k.cu\"\n# 1 \"<built-in>\"\n# 1 \"/usr/include/stdint.h\" 1 3 4\nint a;\n# 2 \"cuda/k.cu\" 2\n# 1 \"cuda/common.cuh\" 1\nint b;\n# 3 \"cuda/k.cu\" 2\n";
        let (files, user) = user_parts(ii, |file, system| system || file.starts_with('<'));
        assert_eq!(files, [PathBuf::from("cuda/k.cu"), PathBuf::from("cuda/common.cuh")]);
        assert_eq!(user, "# 1 \"cuda/common.cuh\"\nint b;\n", "the parts of other files and their markers are left out");
        let m: Vec<_> = marker_lines(ii).map(|m| (m.file, m.number, m.system)).collect();
        assert_eq!(m[2], ("/usr/include/stdint.h", 1, true), "system headers are flagged");
        assert_eq!(m[3], ("cuda/k.cu", 2, false), "the marker describes the line after it");
    }

    #[test]
    fn the_files_left_out_are_dropped_and_the_kept_lines_keep_their_places() {
        let ii = "# 1 \"k.cu\"\nint a;\n# 1 \"/cuda/include/cuda_fp16.h\" 1\nstruct __half { int x; };\nint b;\n# 2 \"k.cu\" 2\nint c;";
        let (kept, places) = kept_lines(ii, |file, _| file.starts_with("/cuda/"));
        assert_eq!(kept, "int a;\nint c;\n");
        assert_eq!(places, [("k.cu", 1), ("k.cu", 2)], "each kept line's file and line there");
    }

    /// The line-by-line reading `kept_lines` replaced (every line tested for a marker): what it
    /// must still give for any text.
    fn kept_lines_line_by_line(text: &str, skip: impl Fn(&str, bool) -> bool) -> (String, Vec<(&str, u32)>) {
        let (mut out, mut places, mut current) = (String::new(), Vec::new(), None::<(&str, u32)>);
        for line in text.split_inclusive('\n') {
            if let Some((file, number, system)) = marker(line.trim_end_matches(['\n', '\r'])) {
                current = (!skip(file, system)).then_some((file, number));
                continue;
            }
            if let Some((file, number)) = current.as_mut() {
                out.push_str(line);
                if !line.ends_with('\n') {
                    out.push('\n');
                }
                places.push((*file, *number));
                *number += 1;
            }
        }
        (out, places)
    }

    proptest::proptest! {
        #[test]
        fn searching_for_markers_reads_what_reading_every_line_did(
            lines in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::string::string_regex("# [0-9]{1,3} \"(k.cu|/cuda/h.h|<built-in>)\"( [1-4])*\r?").unwrap(),
                    proptest::string::string_regex("[ a-z#;\"{}0-9]{0,12}\r?").unwrap(),
                    proptest::string::string_regex("#(pragma once| 1|  2 \"x\"| 3 \"y.h)").unwrap(),
                ],
                0..24,
            ),
            last_newline in proptest::bool::ANY,
        ) {
            let mut text = lines.join("\n");
            if last_newline {
                text.push('\n');
            }
            let skip = |file: &str, system: bool| system || file.starts_with("/cuda/");
            proptest::prop_assert_eq!(kept_lines(&text, skip), kept_lines_line_by_line(&text, skip));
            let mut seen = std::collections::HashSet::new();
            let by_line: Vec<PathBuf> = text
                .split_inclusive('\n')
                .filter_map(|l| marker(l.trim_end_matches(['\n', '\r'])))
                .filter(|(file, _, system)| !system && !file.starts_with('<') && seen.insert(*file))
                .map(|(file, _, _)| PathBuf::from(file))
                .collect();
            let (files, user) = user_parts(&text, skip);
            proptest::prop_assert_eq!(files, by_line);
            proptest::prop_assert_eq!(kept_lines(&user, skip), kept_lines(&text, skip));
        }
    }
}
