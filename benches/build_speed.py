#!/usr/bin/env python3
"""Build-speed benchmark of `cargo ptx build` on examples/saxpy (issue: Rust kernels to PTX).

Usage (from the repository root, after `cargo ptx setup`):
    cargo build --release -p cargo-ptx && python3 benches/build_speed.py [--runs N]

Measures, on a private copy of the example with its own target dir:
  cold        first build, `core` for nvptx64 included (target dir wiped before each run)
  no-op       a build with nothing changed
  edit        rebuild after editing the kernel file (a constant changes, so the PTX changes)
  edit x4     the same with four archs (sm_80,86,89,90) instead of one (sm_80)
and prints medians and the four-arch/one-arch ratio.
"""
import argparse, os, shutil, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target", "release", "cargo-ptx")


def run(args, cwd):
    t = time.perf_counter()
    p = subprocess.run([BIN, "build", *args], cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    dt = time.perf_counter() - t
    if p.returncode != 0:
        sys.exit(f"cargo ptx build {' '.join(args)} failed:\n{p.stderr}")
    return dt


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--cold-runs", type=int, default=3)
    a = ap.parse_args()
    if not os.path.exists(BIN):
        sys.exit("build the binary first: cargo build --release -p cargo-ptx")
    work = tempfile.mkdtemp(prefix="cargo-ptx-bench-")
    crate = os.path.join(work, "saxpy")
    shutil.copytree(os.path.join(ROOT, "examples", "saxpy"), crate, ignore=shutil.ignore_patterns("target"))
    target = os.path.join(work, "target")
    lib = os.path.join(crate, "src", "lib.rs")
    source = open(lib).read()
    one = ["--release", "--target-dir", target, "--arch", "sm_80"]
    four = ["--release", "--target-dir", target, "--arch", "sm_80,sm_86,sm_89,sm_90"]

    cold = []
    for _ in range(a.cold_runs):
        shutil.rmtree(target, ignore_errors=True)
        cold.append(run(one, crate))
    noop = [run(one, crate) for _ in range(a.runs)]

    counter = [0]

    def edit():
        counter[0] += 1
        open(lib, "w").write(source.replace("a * *x.add(i)", f"a * *x.add(i) + {counter[0]}.0"))

    def edited(args):
        edit()
        return run(args, crate)

    edit_one, edit_four = [], []
    run(four, crate)  # warm the four-arch stamps
    for _ in range(a.runs):  # interleaved, so both see the same machine noise
        edit_one.append(edited(one))
        edit_four.append(edited(four))
    shutil.rmtree(work, ignore_errors=True)

    med = statistics.median
    print(f"machine: {os.cpu_count()} CPUs; runs: cold {a.cold_runs}, others {a.runs} (medians, seconds)")
    print(f"cold build (core for nvptx64 included), sm_80 : {med(cold):.2f}  (all: {', '.join(f'{x:.2f}' for x in cold)})")
    print(f"no-op build, sm_80                            : {med(noop):.3f}")
    print(f"rebuild after editing the kernel, sm_80       : {med(edit_one):.2f}")
    print(f"rebuild after editing the kernel, 4 archs     : {med(edit_four):.2f}")
    print(f"4 archs / 1 arch                              : {med(edit_four) / med(edit_one):.2f}x")


if __name__ == "__main__":
    main()
