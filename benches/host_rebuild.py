#!/usr/bin/env python3
"""An edit of a host crate whose generated module embeds a real library's images: how long
`cargo build` takes after it, and how large the host's .rlib is, for ptx-build at the working
tree against ptx-build at an earlier commit (issue 25: images linked as an object instead of
`include_bytes!`).

Usage (from the repository root, after `cargo ptx setup`; needs crates.io, or a cargo registry
that already holds candle-kernels):
    python3 benches/host_rebuild.py [--base REV] [--archs sm_75,sm_80,sm_86,sm_90] [--runs N] [--keep]

Two host crates in a temp dir, each with its own target dir and a copy of candle-kernels' 11
PTX files (as benches/candle_kernels.py builds them, with cubins for every arch): one depends
on this checkout's ptx-build, the other on `git archive REV`'s. Both share one step cache in the
temp dir, so the second cold build reuses the first one's nvcc and ptxas runs. Each host has a
binary that sums its embedded images, so the final link is part of every build.

Measured, runs alternating between the two: `touch src/lib.rs && cargo build` (the edit), and a
no-op `cargo build`; then the size of each host's .rlib and .rmeta.
"""
import argparse, glob, os, shutil, statistics, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bindgen_cuda import ROOT, Crate, base_env, cuda_bin, keep_or_remove, registry_src  # noqa: E402
from candle_kernels import OURS_BUILD  # noqa: E402

LIB_RS = "pub mod kernels {\n    ptx_runtime::include_kernels!();\n}\n"
MAIN_RS = ("fn main() {\n    let bytes: usize = @CRATE@::kernels::MODULES.iter().flat_map(|m| m.images).map(|i| i.bytes.len()).sum();\n"
           "    println!(\"{} kernels, {} bytes of images\", @CRATE@::kernels::KERNEL_NAMES.len(), bytes);\n}\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", default="HEAD~1", help="the commit to compare with")
    ap.add_argument("--archs", default="sm_75,sm_80,sm_86,sm_90")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--version", default="0.11.1", help="candle-kernels")
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    env = base_env(cuda_bin())
    work = tempfile.mkdtemp(prefix="cargo-ptx-rebuild-bench-")
    env["CARGO_PTX_CACHE_DIR"] = os.path.join(work, "step-cache")
    src = os.path.join(registry_src("candle-kernels", a.version, work, env), "src")
    base_rev = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", a.base], capture_output=True, text=True, check=True).stdout.strip()
    base_root = os.path.join(work, "base-" + base_rev)
    os.makedirs(base_root)
    archive = subprocess.run(["git", "-C", ROOT, "archive", base_rev], capture_output=True, check=True).stdout
    subprocess.run(["tar", "x", "-C", base_root], input=archive, check=True)
    crates = {}
    for label, root in (("new", ROOT), ("base", base_root)):
        name = f"candle_{label}"
        pb, pr = os.path.join(root, "ptx-build"), os.path.join(root, "ptx-runtime")
        c = Crate(work, name, OURS_BUILD % a.archs,
                  f'[dependencies]\nptx-runtime = {{ path = "{pr}" }}\n\n[build-dependencies]\nptx-build = {{ path = "{pb}" }}\n', LIB_RS, src=src)
        c.write("src/main.rs", MAIN_RS.replace("@CRATE@", name))
        shutil.copy(os.path.join(root, "Cargo.lock"), os.path.join(c.dir, "Cargo.lock"))
        print(f"{label}: first build (cold, fills the step cache)...", file=sys.stderr)
        t, _ = c.cargo(env, "build", offline=False)
        print(f"  {t:.1f} s", file=sys.stderr)
        crates[label] = c
    edits = {k: [] for k in crates}
    noops = {k: [] for k in crates}
    for r in range(a.runs):
        for label in (["new", "base"] if r % 2 == 0 else ["base", "new"]):
            c = crates[label]
            os.utime(os.path.join(c.dir, "src", "lib.rs"))
            t, _ = c.cargo(env, "build")
            edits[label].append(t)
            t, _ = c.cargo(env, "build")
            noops[label].append(t)
            print(f"  run {r + 1}: {label} edit {edits[label][-1]:.2f} s, no-op {noops[label][-1] * 1000:.0f} ms", file=sys.stderr)
    out = {}
    for label, c in crates.items():
        run = subprocess.run([os.path.join(c.target, "debug", c.name)], capture_output=True, text=True).stdout.strip()
        rlib = glob.glob(os.path.join(c.target, "debug", "deps", f"lib{c.name}-*.rlib"))
        rmeta = glob.glob(os.path.join(c.target, "debug", "deps", f"lib{c.name}-*.rmeta"))
        binary = os.path.join(c.target, "debug", c.name)
        out[label] = (run, sum(map(os.path.getsize, rlib)), sum(map(os.path.getsize, rmeta)), os.path.getsize(binary))
    m = statistics.median
    rev = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    print(f"\ncandle-kernels {a.version}, 11 PTX files, archs {a.archs} with cubins: {out['new'][0]}; "
          f"{os.cpu_count()} CPUs, {a.runs} runs alternating, medians\n")
    print(f"| ptx-build | `touch src/lib.rs && cargo build` | no-op `cargo build` | host .rlib | .rmeta | binary |")
    print("|---|---|---|---|---|---|")
    for label, what in (("base", f"{base_rev} (`{a.base}`)"), ("new", f"{rev} (working tree)")):
        _, rlib, rmeta, binary = out[label]
        print(f"| {what} | {m(edits[label]):.2f} s | {m(noops[label]) * 1000:.0f} ms | {rlib / 1e6:.1f} MB | {rmeta / 1e6:.1f} MB | {binary / 1e6:.1f} MB |")
    print("\nruns (s): " + "; ".join(f"{k} edit [{', '.join(f'{x:.2f}' for x in v)}]" for k, v in edits.items()))
    if out["new"][0] != out["base"][0]:
        print(f"\nthe binaries disagree: new says {out['new'][0]!r}, base {out['base'][0]!r}")
    keep_or_remove(work, a.keep)


if __name__ == "__main__":
    main()
