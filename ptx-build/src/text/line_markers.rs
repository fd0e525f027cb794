//! The line markers of a preprocessed translation unit (`# 12 "cuda/k.cu" 2`): which file and
//! line each part of the text came from.

use std::path::PathBuf;

/// The preprocessor's line markers (`# 12 "cuda/k.cu" 2`) of a translation unit: (line in
/// `text` of the first line the marker describes, file, its line number there, whether it is a
/// system header).
pub fn markers(text: &str) -> Vec<(u32, &str, u32, bool)> {
    text.lines()
        .enumerate()
        .filter_map(|(i, line)| marker(line).map(|(file, number, system)| (i as u32 + 2, file, number, system)))
        .collect()
}

/// One line's marker: file, line number there, whether it is a system header.
fn marker(line: &str) -> Option<(&str, u32, bool)> {
    let rest = line.strip_prefix("# ")?;
    let (number, rest) = rest.split_once(' ')?;
    let (Ok(number), Some(rest)) = (number.parse::<u32>(), rest.strip_prefix('"')) else { return None };
    let (file, flags) = rest.split_once('"')?;
    Some((file, number, flags.split_whitespace().any(|f| f == "3")))
}

/// The files a translation unit was read from, as its line markers name them, in order of
/// first appearance: what `-MMD` would list (system headers and `<built-in>` left out).
pub fn user_files(text: &str) -> Vec<PathBuf> {
    let mut seen = std::collections::HashSet::new();
    markers(text)
        .into_iter()
        .filter(|(_, file, _, system)| !system && !file.starts_with('<'))
        .filter(|(_, file, _, _)| seen.insert(*file))
        .map(|(_, file, _, _)| PathBuf::from(file))
        .collect()
}

/// The lines of `text` from the files `skip` does not name (by the marker's file and its
/// system-header flag), without the markers, and the place of each kept line: its file and line
/// number there, as the markers give them. What is left to read for kernels is the user's own
/// code: CUDA's headers are 95% of a unit (1.5 MB of candle's unary.cu's 1.6 MB), and lexing them,
/// or even the blank lines standing in for them, in a build script (built without optimisation)
/// was most of the time a build spent between two nvcc runs (BENCHMARKS.md, issue 25).
pub fn kept_lines(text: &str, skip: impl Fn(&str, bool) -> bool) -> (String, Vec<(&str, u32)>) {
    let mut out = String::new();
    let mut places = Vec::new();
    // The file being read and the number of its next line; none while skipping (and before the
    // first marker). A skipped file always ends at a marker.
    let mut current: Option<(&str, u32)> = None;
    for line in text.split_inclusive('\n') {
        if line.starts_with("# ") {
            if let Some((file, number, system)) = marker(line.trim_end_matches(['\n', '\r'])) {
                current = (!skip(file, system)).then_some((file, number));
                continue;
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_files_a_unit_was_read_from_are_what_mmd_lists() {
        // What `nvcc -E` makes of a file that includes a system header and a user header.
        let ii = "# 1 \"cuda/k.cu\"\n# 1 \"<built-in>\"\n# 1 \"/usr/include/stdint.h\" 1 3 4\nint a;\n# 2 \"cuda/k.cu\" 2\n# 1 \"cuda/common.cuh\" 1\nint b;\n# 3 \"cuda/k.cu\" 2\n";
        assert_eq!(user_files(ii), [PathBuf::from("cuda/k.cu"), PathBuf::from("cuda/common.cuh")]);
        let m = markers(ii);
        assert_eq!(m[2], (4, "/usr/include/stdint.h", 1, true), "system headers are flagged");
        assert_eq!(m[3], (6, "cuda/k.cu", 2, false), "the marker describes the line after it");
    }

    #[test]
    fn the_files_left_out_are_dropped_and_the_kept_lines_keep_their_places() {
        let ii = "# 1 \"k.cu\"\nint a;\n# 1 \"/cuda/include/cuda_fp16.h\" 1\nstruct __half { int x; };\nint b;\n# 2 \"k.cu\" 2\nint c;";
        let (kept, places) = kept_lines(ii, |file, _| file.starts_with("/cuda/"));
        assert_eq!(kept, "int a;\nint c;\n");
        assert_eq!(places, [("k.cu", 1), ("k.cu", 2)], "each kept line's file and line there");
    }
}
