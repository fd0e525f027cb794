#!/usr/bin/env python3
"""Build-speed benchmark of CUDA C++ kernels (issue: .cu sources through nvcc).

Usage (from the repository root, after `cargo ptx setup`):
    cargo build --release -p cargo-ptx && python3 benches/cuda_speed.py [--runs N]

On a private copy of examples/cuda-kernels/cuda (3 files) plus a fourth file, for sm_80 and sm_90:
  cargo ptx    `cargo ptx build` from a wiped target dir: 4 files x 2 archs of nvcc + ptxas,
               run in parallel (as many jobs as cores)
  by hand      the same nvcc and ptxas commands, one after another
  no-op        a second `cargo ptx build`; also counts nvcc/ptxas starts (through wrappers)
Prints medians and the cargo-ptx / by-hand ratio (target: at most 0.6 on 2 cores).
"""
import argparse, glob, os, shutil, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target", "release", "cargo-ptx")
ARCHS = ["sm_80", "sm_90"]
FOURTH = r'''
#include <math.h>
// Row softmax, one block a row (the fourth file of the benchmark).
extern "C" __global__ void softmax_rows(const float *x, float *y, unsigned cols) {
  __shared__ float red[256];
  const float *row = x + blockIdx.x * cols;
  float m = -INFINITY;
  for (unsigned c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, row[c]);
  red[threadIdx.x] = m;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]);
    __syncthreads();
  }
  m = red[0];
  __syncthreads();
  float sum = 0.0f;
  for (unsigned c = threadIdx.x; c < cols; c += blockDim.x) sum += expf(row[c] - m);
  red[threadIdx.x] = sum;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
    __syncthreads();
  }
  for (unsigned c = threadIdx.x; c < cols; c += blockDim.x) y[blockIdx.x * cols + c] = expf(row[c] - m) / red[0];
}
'''


def cuda_bin():
    home = os.environ.get("CARGO_PTX_HOME") or os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "cargo-ptx")
    found = sorted(glob.glob(os.path.join(home, "cuda", "*", "nvidia", "*", "bin", "nvcc")))
    if not found:
        sys.exit("no nvcc from `cargo ptx setup` found")
    return os.path.dirname(found[-1])


def timed(cmd, cwd, env=None):
    t = time.perf_counter()
    p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{p.stderr}")
    return time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    if not os.path.exists(BIN):
        sys.exit("build the binary first: cargo build --release -p cargo-ptx")
    bin_dir = cuda_bin()
    work = tempfile.mkdtemp(prefix="cargo-ptx-cuda-bench-")
    crate = os.path.join(work, "k")
    os.makedirs(os.path.join(crate, "src"))
    shutil.copytree(os.path.join(ROOT, "examples", "cuda-kernels", "cuda"), os.path.join(crate, "cuda"))
    open(os.path.join(crate, "cuda", "softmax.cu"), "w").write(FOURTH)
    open(os.path.join(crate, "src", "lib.rs"), "w").write("")
    open(os.path.join(crate, "Cargo.toml"), "w").write(
        '[package]\nname = "k"\nversion = "0.1.0"\nedition = "2021"\n\n[package.metadata.ptx]\nrust = false\n\n[workspace]\n')
    files = sorted(glob.glob(os.path.join(crate, "cuda", "*.cu")))
    target = os.path.join(work, "target")
    build = [BIN, "build", "--release", "--target-dir", target, "--arch", ",".join(ARCHS)]

    def by_hand():
        out = os.path.join(work, "hand")
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        for arch in ARCHS:
            for f in files:
                stem = os.path.join(out, f"{os.path.basename(f)}.{arch}")
                timed([os.path.join(bin_dir, "nvcc"), "-ptx", f"-arch=compute_{arch[3:]}", "-lineinfo", "-std=c++17", "-ccbin=c++",
                       "-MMD", "-MF", stem + ".d", "-o", stem + ".ptx", f], crate)
                timed([os.path.join(bin_dir, "ptxas"), f"-arch={arch}", "-v", "--generate-line-info", stem + ".ptx", "-o", stem + ".cubin"], crate)

    timed(build, crate)  # warm the tool caches (versions, arch lists) and the OS file cache
    ours, hand = [], []
    for _ in range(a.runs):  # interleaved, so both see the same machine state
        shutil.rmtree(target, ignore_errors=True)
        ours.append(timed(build, crate))
        t = time.perf_counter()
        by_hand()
        hand.append(time.perf_counter() - t)

    # No-op: count nvcc/ptxas starts through logging wrappers.
    log = os.path.join(work, "calls.log")
    env = dict(os.environ)
    for tool in ["nvcc", "ptxas"]:
        w = os.path.join(work, tool)
        open(w, "w").write(f"#!/bin/sh\necho {tool} >> '{log}'\nexec '{os.path.join(bin_dir, tool)}' \"$@\"\n")
        os.chmod(w, 0o755)
        env[tool.upper()] = w
    timed(build, crate, env)
    open(log, "w").close()
    noop = [timed(build, crate, env) for _ in range(a.runs)]
    starts = len(open(log).read().split())

    m = statistics.median
    print(f"files x archs:             {len(files)} x {len(ARCHS)} on {os.cpu_count()} CPUs")
    print(f"cargo ptx build (cold):    median {m(ours):.2f} s  runs {[round(x, 2) for x in ours]}")
    print(f"same commands by hand:     median {m(hand):.2f} s  runs {[round(x, 2) for x in hand]}")
    print(f"ratio cargo ptx / by hand: {m(ours) / m(hand):.2f}x (target <= 0.6)")
    print(f"no-op build:               median {m(noop):.3f} s, {starts} nvcc/ptxas starts in {len(noop)} builds")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
