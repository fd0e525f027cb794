#!/usr/bin/env python3
"""No-op `cargo build` of a host crate that uses ptx-build, against the same crate without it.

Usage (repository root, after `cargo ptx setup`): python3 benches/host_noop.py [--runs N]

Two standalone copies of examples/saxpy/host (same dependencies, same target dir): one with
its build script (ptx-build, kernels embedded), one without build script and generated module.
Each is built once, then `cargo build` is timed with nothing changed, interleaved; medians.
"""
import argparse, os, shutil, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def timed(cmd, cwd, env=None):
    t = time.perf_counter()
    p = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{p.stderr}")
    return time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=11)
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="cargo-ptx-host-bench-")
    plain = os.path.join(work, "plain")
    os.makedirs(os.path.join(plain, "src"))
    open(os.path.join(plain, "Cargo.toml"), "w").write(
        f'[package]\nname = "plain"\nversion = "0.1.0"\nedition = "2021"\n[dependencies]\n'
        f'ptx-runtime = {{ path = "{ROOT}/ptx-runtime" }}\n[workspace]\n')
    shutil.copy(os.path.join(ROOT, "examples/saxpy/host/src/main.rs"), os.path.join(plain, "src/main.rs"))
    open(os.path.join(plain, "src/lib.rs"), "w").write(
        open(os.path.join(ROOT, "examples/saxpy/host/src/lib.rs")).read().replace(
            "pub mod kernels {\n    ptx_runtime::include_kernels!();\n}", "pub mod kernels { pub struct Kernels; }"))
    # main.rs uses the generated methods; keep only the library for the plain crate.
    os.remove(os.path.join(plain, "src/main.rs"))
    withp = os.path.join(work, "with")
    os.makedirs(os.path.join(withp, "src"))
    open(os.path.join(withp, "Cargo.toml"), "w").write(
        f'[package]\nname = "with"\nversion = "0.1.0"\nedition = "2021"\n[dependencies]\n'
        f'ptx-runtime = {{ path = "{ROOT}/ptx-runtime" }}\n[build-dependencies]\n'
        f'ptx-build = {{ path = "{ROOT}/ptx-build" }}\n[workspace]\n')
    open(os.path.join(withp, "build.rs"), "w").write(
        'fn main() -> Result<(), ptx_build::Error> {\n'
        f'    ptx_build::Builder::new().kernel_crate("{ROOT}/examples/saxpy").build()?;\n    Ok(())\n}}\n')
    shutil.copy(os.path.join(ROOT, "examples/saxpy/host/src/lib.rs"), os.path.join(withp, "src/lib.rs"))
    env = dict(os.environ, CARGO_TARGET_DIR=os.path.join(work, "target"))
    timed(["cargo", "build"], withp, env)
    timed(["cargo", "build"], plain, env)
    with_ptx, without = [], []
    for _ in range(a.runs):
        with_ptx.append(timed(["cargo", "build"], withp, env))
        without.append(timed(["cargo", "build"], plain, env))
    shutil.rmtree(work, ignore_errors=True)
    m = statistics.median
    print(f"no-op cargo build, host crate with ptx-build: {m(with_ptx):.3f} s; without: {m(without):.3f} s; ratio {m(with_ptx) / m(without):.2f}x ({a.runs} runs each, interleaved)")


if __name__ == "__main__":
    main()
