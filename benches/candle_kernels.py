#!/usr/bin/env python3
"""candle's own kernels (candle-kernels from crates.io) through ptx-build and through candle's
build.rs (cudaforge), cold, side by side (issue 25: "candle's real files will be measured from
outside the same way").

Usage (from the repository root, after `cargo ptx setup`; needs crates.io, or a cargo registry
that already holds candle-kernels and cudaforge):
    python3 benches/candle_kernels.py [--runs N] [--version 0.11.1] [--keep]

Two host crates in a temp dir, each with its own target dir, hold a copy of candle-kernels'
`src/` (its 11 PTX files, 3 shared headers; the static-library files are left out, as candle's
own PTX step excludes them):
  ours   build.rs: ptx_build::Builder with one `.cuda("src/<file>.cu")` per PTX file, candle's
         flags (`--expt-relaxed-constexpr`, `-std=c++17`, `-O3`), `compute_80` (PTX only) or
         `sm_80` (PTX + cubin); src/lib.rs: `pub mod kernels { ptx_runtime::include_kernels!(); }`
  forge  candle-kernels' own build.rs, PTX part: cudaforge's
         `KernelBuilder::new().source_dir("src").exclude(..).arg(..).build_ptx()?.write(..)`,
         arch from CUDA_COMPUTE_CAP=80
  forge-all  the same with CUDAFORGE_THREADS set to every CPU (cudaforge's default is half)
  bindgen the same files and flags through bindgen_cuda 0.1.6 (candle-kernels up to 0.9)
A cold build is `cargo clean -p <crate>` then `cargo build` (build script compile and run, then
the crate); ptx-build's shared step cache off; modes alternate, each first in turn.

`--edits N` then measures a user's edit of one file, N times per crate, alternating: a comment
line appended to src/fill.cu (a small file), then `cargo build` (nvcc of that file, the build
script's work over the ten unchanged ones, the crate).
"""
import argparse, glob, os, shutil, statistics, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bindgen_cuda import ROOT, Crate, base_env, cuda_bin, keep_or_remove, mode_env, registry_src  # noqa: E402

PTX_FILES = ["affine", "binary", "cast", "conv", "fill", "indexing", "quantized", "reduce", "sort", "ternary", "unary"]

OURS_BUILD = '''fn main() -> Result<(), ptx_build::Error> {
    let mut b = ptx_build::Builder::new();
    for f in [%s] {
        b = b.cuda(format!("src/{f}.cu"));
    }
    b.nvcc_flag("--expt-relaxed-constexpr").cuda_std("c++17").nvcc_flag("-O3").arch("%%s").build()?;
    Ok(())
}
''' % ", ".join(f'"{f}"' for f in PTX_FILES)

# candle-kernels 0.9's build.rs (bindgen_cuda), over the same PTX files.
BINDGEN_BUILD = '''fn main() {
    let out_dir = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let files = [%s].iter().map(|f| format!("src/{f}.cu")).collect::<Vec<_>>();
    let bindings = bindgen_cuda::Builder::default()
        .kernel_paths(files)
        .arg("--expt-relaxed-constexpr")
        .arg("-std=c++17")
        .arg("-O3")
        .build_ptx()
        .unwrap();
    bindings.write(out_dir.join("ptx.rs")).unwrap();
}
''' % ", ".join(f'"{f}"' for f in PTX_FILES)

# candle-kernels 0.11.1's build.rs, PTX part, as it is.
FORGE_BUILD = '''fn main() -> cudaforge::Result<()> {
    let out_dir = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let bindings = cudaforge::KernelBuilder::new()
        .source_dir("src")
        .exclude(&["moe_*.cu", "mmvq_gguf.cu", "mmq_*.cu"])
        .arg("--expt-relaxed-constexpr")
        .arg("-std=c++17")
        .arg("-O3")
        .build_ptx()?;
    bindings.write(out_dir.join("ptx.rs"))?;
    Ok(())
}
'''


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--version", default="0.11.1")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--modes", default="ours,forge,forge-all,cubin,bindgen", help="which cold builds, comma-separated")
    ap.add_argument("--edits", type=int, default=0, help="then N edits of src/fill.cu per crate, each rebuilt")
    a = ap.parse_args()
    env = base_env(cuda_bin())
    work = tempfile.mkdtemp(prefix="cargo-ptx-candle-bench-")
    src = os.path.join(registry_src("candle-kernels", a.version, work, env), "src")
    pb, pr = os.path.join(ROOT, "ptx-build"), os.path.join(ROOT, "ptx-runtime")
    ours = Crate(work, "candle_ours", OURS_BUILD % "compute_80",
                 f'[dependencies]\nptx-runtime = {{ path = "{pr}" }}\n\n[build-dependencies]\nptx-build = {{ path = "{pb}" }}\n',
                 "pub mod kernels {\n    ptx_runtime::include_kernels!();\n}\n", src=src)
    shutil.copy(os.path.join(ROOT, "Cargo.lock"), os.path.join(ours.dir, "Cargo.lock"))
    forge = Crate(work, "candle_forge", FORGE_BUILD, '[build-dependencies]\ncudaforge = "=0.1.6"\n',
                  'pub mod ptx {\n    include!(concat!(env!("OUT_DIR"), "/ptx.rs"));\n}\n', src=src)
    bindgen = Crate(work, "candle_bindgen", BINDGEN_BUILD, '[build-dependencies]\nbindgen_cuda = "=0.1.6"\n',
                    'pub mod ptx {\n    include!(concat!(env!("OUT_DIR"), "/ptx.rs"));\n}\n', src=src)
    order = [m.strip() for m in a.modes.split(",") if m.strip()]
    print(f"work dir {work}; warming up...", file=sys.stderr)
    wanted = lambda m: m in order or (m == "ours" and "cubin" in order) or (m == "forge" and "forge-all" in order)
    for c in [c for c, m in ((ours, "ours"), (forge, "forge"), (bindgen, "bindgen")) if wanted(m)]:
        c.cargo(env, "build", offline=False)
    runs = {m: [] for m in order}
    for r in range(a.runs):
        for what in order[r % len(order):] + order[:r % len(order)]:
            if what in ("forge", "forge-all", "bindgen"):
                t, _ = (bindgen if what == "bindgen" else forge).cold(mode_env(env, what))
            else:
                ours.write("build.rs", OURS_BUILD % ("compute_80" if what == "ours" else "sm_80"))
                t, _ = ours.cold(env)
            runs[what].append(t)
            print(f"  run {r + 1}: {what} {t:.2f} s", file=sys.stderr)
    edits = {}
    if a.edits:
        crates = [(m, c) for m, c in (("ours", ours), ("forge", forge), ("bindgen", bindgen)) if m in order]
        if "ours" in order:
            ours.write("build.rs", OURS_BUILD % "compute_80")
        for m, c in crates:
            c.cargo(mode_env(env, m), "build")
        for r in range(a.edits):
            for m, c in crates[r % len(crates):] + crates[:r % len(crates)]:
                with open(os.path.join(c.dir, "src", "fill.cu"), "a") as f:
                    f.write(f"// edit {r}\n")
                t, _ = c.cargo(mode_env(env, m), "build")
                edits.setdefault(m, []).append(t)
                print(f"  edit {r + 1}: {m} {t:.2f} s", file=sys.stderr)
    ptx_of = {}  # one PTX file per module, whichever arch the last build left
    for p in glob.glob(os.path.join(ours.target, "debug", "build", "candle_ours-*", "out", "ptx-build", "kernels.rs", "*", "*.ptx")):
        ptx_of[os.path.dirname(p)] = p
    entries = sum(open(p).read().count(".entry ") for p in ptx_of.values())
    m = statistics.median
    med = {k: m(v) for k, v in runs.items() if v}
    rev = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    print(f"\ncandle-kernels {a.version}: {len(PTX_FILES)} PTX files, {entries} kernels; ptx-build at {rev} (working tree), "
          f"cudaforge 0.1.6, bindgen_cuda 0.1.6, {os.cpu_count()} CPUs, {a.runs} runs interleaved, medians\n")
    print("| cold build | ptx-build PTX only (`compute_80`) | ptx-build PTX + `sm_80` cubins | cudaforge (candle's build.rs) | cudaforge on every CPU | bindgen_cuda |")
    print("|---|---|---|---|---|---|")
    cell = lambda k: f"{med[k]:.2f} s" if k in med else "-"
    print(f"| median | {cell('ours')} | {cell('cubin')} | {cell('forge')} | {cell('forge-all')} | {cell('bindgen')} |")
    for base in ("forge", "forge-all", "bindgen"):
        if base in med:
            print(f"| ratio to {base} (their PTX only) | " + " | ".join(f"{med[k] / med[base]:.2f}x" if k in med else "-" for k in ("ours", "cubin")) + " | | | |")
    print("\nruns (s): " + "; ".join(f"{k} [{', '.join(f'{x:.2f}' for x in v)}]" for k, v in runs.items()))
    if edits:
        print("\n| one-line edit of src/fill.cu, rebuild | " + " | ".join(f"{k} {m(v):.2f} s" for k, v in edits.items()) + " |")
        if "ours" in edits:
            print("| ratio of ours to | " + " | ".join(f"{k} {m(edits['ours']) / m(v):.2f}x" for k, v in edits.items() if k != "ours") + " |")
        print("edits (s): " + "; ".join(f"{k} [{', '.join(f'{x:.2f}' for x in v)}]" for k, v in edits.items()))
    keep_or_remove(work, a.keep)


if __name__ == "__main__":
    main()
