#!/usr/bin/env python3
"""A fresh checkout's first `cargo ptx build` with the shared step cache off, empty (cold) and
warm, side by side.

Usage (repository root): python3 benches/shared_cache.py [--rounds 3]

Each build is a fresh copy of the project in a new folder with a new target dir, as a second
clone or a CI job sees it. Projects: examples/saxpy's kernels (Rust, ptx-device, libdevice),
a crate of the .cu files of examples/cuda-kernels, and the kernels of a `cargo ptx new` project
(Rust), for sm_80 and sm_90. Modes alternate within each round:
  off   CARGO_PTX_CACHE_DIR=off: `core` built with -Zbuild-std in the target dir, every tool runs
  cold  an empty cache folder: `core` built into it once, every tool runs, outputs stored
  warm  the folder the cold build filled: no link, opt, llc, ptxas or nvcc starts
"""
import argparse, os, shutil, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXE = os.path.join(ROOT, "target/release/cargo-ptx")


def copy_project(kind, dest):
    if kind == "saxpy":
        shutil.copytree(os.path.join(ROOT, "examples/saxpy"), os.path.join(dest, "examples/saxpy"), ignore=shutil.ignore_patterns("target"))
        for c in ["ptx-device", "ptx-device-macros"]:
            shutil.copytree(os.path.join(ROOT, c), os.path.join(dest, c), ignore=shutil.ignore_patterns("target"))
        return os.path.join(dest, "examples/saxpy")
    if kind == "cuda":
        d = os.path.join(dest, "cu_kernels")
        shutil.copytree(os.path.join(ROOT, "examples/cuda-kernels/cuda"), os.path.join(d, "cuda"))
        os.makedirs(os.path.join(d, "src"))
        open(os.path.join(d, "src/lib.rs"), "w").close()
        with open(os.path.join(d, "Cargo.toml"), "w") as f:
            f.write('[package]\nname = "cu_kernels"\nversion = "0.1.0"\nedition = "2021"\n\n[package.metadata.ptx]\nrust = false\n\n[workspace]\n')
        return d
    # The kernels of a new project, with this checkout's device crates.
    subprocess.run([EXE, "new", os.path.join(dest, "demo"), "--kernels", "rust", "--vcs", "none", "--path-deps", ROOT],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return os.path.join(dest, "demo/kernels")


def build(kind, cache):
    work = tempfile.mkdtemp(prefix="cargo-ptx-cache-bench-")
    try:
        path = copy_project(kind, work)
        env = dict(os.environ, CARGO_PTX_CACHE_DIR=cache)
        t = time.perf_counter()
        p = subprocess.run([EXE, "build", path, "--release", "--arch", "sm_80,sm_90", "--target-dir", os.path.join(work, "target")],
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        dt = time.perf_counter() - t
        if p.returncode != 0:
            sys.exit(f"{kind} build failed:\n{p.stdout}")
        return dt
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "cargo-ptx"], cwd=ROOT, check=True)
    times = {}
    for r in range(a.rounds):
        for kind in ["saxpy", "cuda", "new"]:
            cache = tempfile.mkdtemp(prefix="cargo-ptx-bench-cache-")
            for mode in ["off", "cold", "warm"]:
                t = build(kind, "off" if mode == "off" else cache)
                times.setdefault((kind, mode), []).append(t)
                print(f"round {r + 1} {kind:5} {mode:4} {t:7.2f} s", flush=True)
            shutil.rmtree(cache, ignore_errors=True)
    print("\n| project | off | cold (empty cache) | warm | cold / off | warm / off |")
    print("|---|---|---|---|---|---|")
    for kind in ["saxpy", "cuda", "new"]:
        off, cold, warm = (statistics.median(times[(kind, m)]) for m in ["off", "cold", "warm"])
        print(f"| {kind} | {off:.2f} s | {cold:.2f} s | {warm:.2f} s | {cold / off:.3f} | {warm / off:.3f} |")


if __name__ == "__main__":
    main()
