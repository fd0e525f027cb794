//! The line markers of a preprocessed translation unit (`# 12 "cuda/k.cu" 2`): which file and
//! line each part of the text came from.

use std::path::PathBuf;

/// The preprocessor's line markers (`# 12 "cuda/k.cu" 2`) of a translation unit: (line in
/// `text` of the first line the marker describes, file, its line number there, whether it is a
/// system header).
pub fn markers(text: &str) -> Vec<(u32, &str, u32, bool)> {
    let mut markers = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let Some(rest) = line.strip_prefix("# ") else { continue };
        let Some((number, rest)) = rest.split_once(' ') else { continue };
        let (Ok(number), Some(rest)) = (number.parse::<u32>(), rest.strip_prefix('"')) else { continue };
        let Some((file, flags)) = rest.split_once('"') else { continue };
        markers.push((i as u32 + 2, file, number, flags.split_whitespace().any(|f| f == "3")));
    }
    markers
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

/// `text` with the lines of every file `skip` names (by the marker's file and its system-header
/// flag) blanked: the same lines and markers, so line numbers still hold. What is left to read for
/// kernels is the user's own code; CUDA's headers are 95% of a unit (1.5 MB of candle's
/// unary.cu's 1.6 MB), and lexing them in a build script (built without optimisation) was most of
/// the time a build spent after its last nvcc (BENCHMARKS.md, issue 25).
pub fn without_files(text: &str, skip: impl Fn(&str, bool) -> bool) -> String {
    let mut out = String::with_capacity(text.len() / 8);
    let mut skipping = false;
    for line in text.split_inclusive('\n') {
        if let Some(&(_, file, _, system)) = markers(line.trim_end_matches(['\n', '\r'])).first() {
            skipping = skip(file, system);
            out.push_str(line);
        } else if skipping {
            out.push_str(if line.ends_with('\n') { "\n" } else { "" });
        } else {
            out.push_str(line);
        }
    }
    out
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
    fn the_files_left_out_keep_their_lines_and_markers() {
        let ii = "# 1 \"k.cu\"\nint a;\n# 1 \"/cuda/include/cuda_fp16.h\" 1\nstruct __half { int x; };\nint b;\n# 2 \"k.cu\" 2\nint c;";
        let kept = without_files(ii, |file, _| file.starts_with("/cuda/"));
        assert_eq!(kept, "# 1 \"k.cu\"\nint a;\n# 1 \"/cuda/include/cuda_fp16.h\" 1\n\n\n# 2 \"k.cu\" 2\nint c;");
        assert_eq!(markers(&kept), markers(ii));
    }
}
