#!/usr/bin/env python3
"""Two cargo-ptx binaries side by side on examples/saxpy: cold and no-op `cargo ptx build`.

Usage (from the repository root, after `cargo ptx setup`):
    python3 benches/ab_build.py BEFORE_BIN AFTER_BIN [--before-root DIR] [--rounds N] [--noop-runs N]

For example the binary of an older commit (a `git worktree` built with `cargo build --release -p
cargo-ptx`) against this checkout's `target/release/cargo-ptx`. Each binary builds its own copy of
the example (the before side from `--before-root`, that commit's checkout, so each builds the
ptx-device it shipped with; default: this checkout), its own target dir, `--release --arch sm_80`, shared step cache off
(`CARGO_PTX_CACHE_DIR=off`: a cold build runs every step, `core` for nvptx64 included). Rounds
alternate which binary goes first. Prints medians and the median of per-round ratios (after /
before): on a shared, noisy machine the ratios are what to read.
"""
import argparse, os, shutil, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(bin_, crate, target):
    env = dict(os.environ, CARGO_PTX_CACHE_DIR="off")
    t = time.perf_counter()
    p = subprocess.run([bin_, "ptx", "build", "--release", "--arch", "sm_80", "--target-dir", target],
                       cwd=crate, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    dt = time.perf_counter() - t
    if p.returncode != 0:
        sys.exit(f"{bin_} failed:\n{p.stderr}")
    return dt


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--before-root", default=ROOT)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--noop-runs", type=int, default=5)
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="cargo-ptx-ab-")
    sides = {}
    for name, bin_, src in (("before", a.before, a.before_root), ("after", a.after, ROOT)):
        # ptx-device by path, as in the repository: copy the example with the crates it reaches.
        root = os.path.join(work, name)
        for d in ("examples/saxpy", "ptx-device", "ptx-device-macros"):
            shutil.copytree(os.path.join(src, d), os.path.join(root, d), ignore=shutil.ignore_patterns("target"))
        sides[name] = (os.path.abspath(bin_), os.path.join(root, "examples", "saxpy"), os.path.join(root, "target"))
    cold = {"before": [], "after": []}
    noop = {"before": [], "after": []}
    for r in range(a.rounds):
        order = ["before", "after"] if r % 2 == 0 else ["after", "before"]
        for name in order:
            bin_, crate, target = sides[name]
            shutil.rmtree(target, ignore_errors=True)
            cold[name].append(run(bin_, crate, target))
        for _ in range(a.noop_runs):
            for name in order:
                noop[name].append(run(*sides[name]))
    shutil.rmtree(work, ignore_errors=True)
    med = statistics.median
    print("| what | before | after | after / before (median of pairs) |")
    print("|---|---|---|---|")
    for label, d in (("cold build, sm_80", cold), ("no-op build", noop)):
        ratios = [x / y for x, y in zip(d["after"], d["before"])]
        print(f"| {label} | {med(d['before']):.3f} s | {med(d['after']):.3f} s | {med(ratios):.3f} |")


if __name__ == "__main__":
    main()
