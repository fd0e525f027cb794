//! The shape of this crate, checked: no two of its top-level modules import each other in a
//! circle (each stage depends only on the stages before it and the shared modules), and no
//! source file of the workspace's crates grows past 800 lines.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// `module -> modules it names as crate::X` (comment lines left out), for the top-level
/// modules of `src`.
fn imports(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in files {
        let rel = f.strip_prefix(src).unwrap();
        let top = rel.components().next().unwrap().as_os_str().to_string_lossy().trim_end_matches(".rs").to_string();
        if matches!(top.as_str(), "lib" | "fuzzing" | "layout") {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        let deps = graph.entry(top.clone()).or_default();
        for line in text.lines().filter(|l| !l.trim_start().starts_with("//")) {
            for (i, _) in line.match_indices("crate::") {
                let name: String = line[i + 7..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
                let module = src.join(format!("{name}.rs")).is_file() || src.join(&name).is_dir();
                if !name.is_empty() && name != top && module {
                    deps.insert(name);
                }
            }
        }
    }
    graph
}

/// A circle in `graph`, as the path around it, if there is one.
fn circle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(n: &str, g: &BTreeMap<String, BTreeSet<String>>, path: &mut Vec<String>, done: &mut BTreeSet<String>) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == n) {
            let mut c = path[i..].to_vec();
            c.push(n.to_string());
            return Some(c);
        }
        if done.contains(n) {
            return None;
        }
        path.push(n.to_string());
        for d in g.get(n).into_iter().flatten() {
            if let Some(c) = visit(d, g, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(n.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph.keys().find_map(|k| visit(k, graph, &mut Vec::new(), &mut done))
}

#[test]
fn no_two_modules_import_each_other_in_a_circle() {
    let graph = imports(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    assert!(graph.len() > 10, "the modules were found: {graph:?}");
    if let Some(c) = circle(&graph) {
        panic!("the modules import each other in a circle: {}", c.join(" -> "));
    }
}

#[test]
fn a_circle_is_found_and_named() {
    let g: BTreeMap<String, BTreeSet<String>> =
        [("a", "b"), ("b", "c"), ("c", "a"), ("d", "a")].iter().map(|(k, v)| (k.to_string(), BTreeSet::from([v.to_string()]))).collect();
    assert_eq!(circle(&g).unwrap().join(" -> "), "a -> b -> c -> a");
}

#[test]
fn no_source_file_is_over_800_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut long = Vec::new();
    // The other crates are there in a checkout, not in ptx-build's package.
    let crates = ["ptx-build", "cargo-ptx", "ptx-runtime", "ptx-device", "ptx-device-macros"].map(|k| root.join(k).join("src"));
    for src in crates.iter().filter(|s| s.is_dir()) {
        let mut files = Vec::new();
        rust_files(src, &mut files);
        for f in files.iter().filter(|f| !f.ends_with("libdevice.rs")) {
            let lines = std::fs::read_to_string(f).unwrap().lines().count();
            if lines > 800 {
                long.push(format!("{} ({lines})", f.strip_prefix(&root).unwrap().display()));
            }
        }
    }
    assert!(long.is_empty(), "split these by what they do: {}", long.join(", "));
}
