#!/usr/bin/env python3
"""What a crate added to ptx-build's dependencies would cost every host crate's no-op build.

Usage (repository root, after `cargo ptx setup`): python3 benches/dep_cost.py [--runs N] [CRATE=VERSION ...]
(default candidates: which=8.0.6 and cargo_metadata=0.23.1, the crates the project card names
for PATH lookup and cargo's JSON, which ptx-build writes by hand).

Builds, in one target dir: the host crate of examples/saxpy with its build script (ptx-build),
and for each candidate the same crate whose build script also calls the candidate (so it is in
the build-dependency tree, as it would be inside ptx-build). Then times `cargo build` with
nothing changed, all crates interleaved, and prints medians and the difference per candidate,
with the number of packages each adds. A no-op `cargo build` resolves and fingerprints every
package of the tree, which is what a build-dependency costs every user on every build.
"""
import argparse, os, shutil, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# A line of build.rs per candidate that uses it, so it is compiled and linked.
USES = {
    "which": 'let _ = which::which("cargo");',
    "cargo_metadata": 'let _ = cargo_metadata::MetadataCommand::new().no_deps().exec();',
}


def run(cmd, cwd, env):
    t = time.perf_counter()
    p = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{p.stderr}")
    return time.perf_counter() - t, p.stdout


def host(work, name, extra):
    d = os.path.join(work, name)
    os.makedirs(os.path.join(d, "src"))
    deps = "".join(f'{c} = "={v}"\n' for c, v in extra)
    open(os.path.join(d, "Cargo.toml"), "w").write(
        f'[package]\nname = "{name}"\nversion = "0.1.0"\nedition = "2021"\n[dependencies]\n'
        f'ptx-runtime = {{ path = "{ROOT}/ptx-runtime" }}\n[build-dependencies]\n'
        f'ptx-build = {{ path = "{ROOT}/ptx-build" }}\n{deps}[workspace]\n')
    uses = "\n    ".join(USES[c] for c, _ in extra)
    open(os.path.join(d, "build.rs"), "w").write(
        f'fn main() -> Result<(), ptx_build::Error> {{\n    {uses}\n'
        f'    ptx_build::Builder::new().kernel_crate("{ROOT}/examples/saxpy").build()?;\n    Ok(())\n}}\n')
    shutil.copy(os.path.join(ROOT, "examples/saxpy/host/src/lib.rs"), os.path.join(d, "src/lib.rs"))
    return d


def packages(d, env):
    _, out = run(["cargo", "tree", "-e", "build,normal", "--prefix", "none"], d, env)
    return len({l.split(" (")[0] for l in out.splitlines() if l.strip()})


def main():
    global ROOT
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--root", default=ROOT, help="the checkout whose ptx-build is measured (default: this one)")
    ap.add_argument("candidates", nargs="*", default=["which=8.0.6", "cargo_metadata=0.23.1"])
    a = ap.parse_args()
    ROOT = os.path.abspath(a.root)
    candidates = [tuple(c.split("=", 1)) for c in a.candidates]
    work = tempfile.mkdtemp(prefix="cargo-ptx-dep-cost-")
    env = dict(os.environ, CARGO_TARGET_DIR=os.path.join(work, "target"))
    crates = {"ptx-build": host(work, "base", [])}
    for c, v in candidates:
        crates[f"+ {c} {v}"] = host(work, c.replace("-", "_"), [(c, v)])
    for d in crates.values():
        run(["cargo", "build"], d, env)
    times = {k: [] for k in crates}
    for _ in range(a.runs):
        for k, d in crates.items():
            times[k].append(run(["cargo", "build"], d, env)[0])
    base_pkgs = packages(crates["ptx-build"], env)
    m = statistics.median
    base = m(times["ptx-build"])
    print(f"no-op `cargo build` of a host crate, median of {a.runs} interleaved runs each:")
    for k, d in crates.items():
        t = m(times[k])
        pk = packages(d, env)
        print(f"  {k:28} {t * 1000:6.1f} ms  {pk} packages (+{pk - base_pkgs})  {100 * (t - base) / base:+.1f}%")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
