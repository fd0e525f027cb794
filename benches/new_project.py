#!/usr/bin/env python3
"""Time from `cargo ptx new` to the first successful `cargo build` of the generated project.

Usage (repository root): python3 benches/new_project.py [--kernels rust|cuda|both] [--cold]

Each run scaffolds a project in a fresh temporary folder with a fresh CARGO_TARGET_DIR (so
cudarc, ptx-build and the kernels' `core` are compiled as a user's first build compiles them).
With --cold, CARGO_PTX_HOME is an empty folder too, and `cargo ptx setup` (NVIDIA's wheels
from PyPI) is part of the time.
"""
import argparse, os, shutil, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(cmd, cwd, env):
    t = time.perf_counter()
    p = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{p.stdout}")
    return time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernels", default="rust")
    ap.add_argument("--cold", action="store_true")
    a = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "cargo-ptx"], cwd=ROOT, check=True)
    exe = os.path.join(ROOT, "target/release/cargo-ptx")
    work = tempfile.mkdtemp(prefix="cargo-ptx-new-bench-")
    env = dict(os.environ, CARGO_TARGET_DIR=os.path.join(work, "target"))
    env.pop("CARGO_PTX_ARCH", None)
    steps = {}
    if a.cold:
        env["CARGO_PTX_HOME"] = os.path.join(work, "ptx-home")
        steps["cargo ptx setup"] = run([exe, "setup"], work, env)
    steps["cargo ptx new"] = run([exe, "new", "demo", "--kernels", a.kernels], work, env)
    steps["cargo build"] = run(["cargo", "build"], os.path.join(work, "demo"), env)
    shutil.rmtree(work, ignore_errors=True)
    total = sum(steps.values())
    detail = ", ".join(f"{k} {v:.1f} s" for k, v in steps.items())
    print(f"{a.kernels}{' (cold)' if a.cold else ''}: {total:.1f} s to the first successful build ({detail})")


if __name__ == "__main__":
    main()
