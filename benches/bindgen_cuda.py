#!/usr/bin/env python3
"""ptx-build's `Builder::cuda` against bindgen_cuda and cudaforge on ten macro-heavy .cu files (issues 13, 25).

Usage (from the repository root, after `cargo ptx setup`; needs crates.io or a warm cargo registry
for bindgen_cuda 0.1.x on the first run):
    python3 benches/bindgen_cuda.py [--runs N] [--keep] [--worktree] [--archs A,B,..] [--cache on|off] [--quick] [--path-deps] [--scratch]

ptx-build and ptx-runtime come from a `git archive HEAD` snapshot (edits made meanwhile in the
working tree can neither rebuild nor break them); --worktree builds the working tree as it is.
They reach the bench crate as a crates.io user gets them: `cargo package`d, in a directory
source that replaces crates.io for that crate (with `cargo vendor`'s copies of their
dependencies). cargo stats every source file of a path dependency on each build, a no-op cost a
registry user does not pay; --path-deps measures with path dependencies instead.

Two host crates in a temp dir, each with its own target dir, hold the same ten .cu files and
utils.cuh (benches/bindgen_cuda/: UNARY_OP/BINARY_OP/CAST_OP-style macros stamping out some 360
`extern "C"` kernels for f32/f64/f16/i32/u8, grid-stride loops, __shared__ reductions):
  ours    build.rs: ptx_build::Builder::new().cuda("src/**/*.cu").arch(ARCH).build()?;
          src/lib.rs: pub mod kernels { ptx_runtime::include_kernels!(); }
  theirs  build.rs: bindgen_cuda::Builder::default().build_ptx()?.write("src/lib.rs")
          (as candle-kernels did up to 0.9; CUDA_COMPUTE_CAP=80, so `nvcc --gpu-architecture=sm_80 --ptx`)
  forge   build.rs: cudaforge::KernelBuilder::new().source_dir("src").arg(..).build_ptx()?
          .write(OUT_DIR/ptx.rs), as candle-kernels 0.10 does (its arch from CUDA_COMPUTE_CAP=80
          too, its flags `--expt-relaxed-constexpr -std=c++17 -O3`)
Both find the nvcc of `cargo ptx setup` (PATH, CUDA_ROOT). Dependencies are built once first;
a cold run is `cargo clean -p <crate>` then `cargo build`: build script compile + kernels + the
crate. ptx-build's shared cache is off (CARGO_PTX_CACHE_DIR=off), rustc wrappers (sccache) unset,
NVCC_APPEND_FLAGS/NVCC_PREPEND_FLAGS unset. Modes, ours and theirs alternating:
  cold PTX only    ours .arch("compute_80") vs theirs
  cold + cubins    ours .arch("sm_80") (PTX + ptxas cubin) against theirs' PTX-only figure
  cold, forge-all  cudaforge with CUDAFORGE_THREADS set to every CPU: by default it runs nvcc
                   on half of them (one at a time on two cores), as candle's build does
  no-op            a second `cargo build`, nothing changed; also of a fourth crate, bindgen_cuda's
                   with cudarc as a dependency (what a user needs to load its PTX)
  header edit      flip `#define USE_LDG` in utils.cuh (changes every kernel's loads), rebuild,
                   and check whether each crate's PTX changed
--archs (default 80) gives ours more archs (`compute_X` each, `sm_X` for the cubin mode); the
other two build one arch whatever is asked (CUDA_COMPUTE_CAP is one number). --cache on points
CARGO_PTX_CACHE_DIR at a cache the warm-up fills: a cold build then is a second checkout's.
--quick measures the cold and no-op modes only.
--scratch adds a user's first build: `cargo build` into an empty target dir, every dependency
compiled (from the same vendored sources, no rustc wrapper), for ours and for bindgen_cuda's and
cudaforge's crates with cudarc as a dependency (what a user needs to load their PTX).
Then one cold build of each through a logging `nvcc` wrapper (PATH, and NVCC for ours) counts the
nvcc starts by kind and sums nvcc's own per-phase times (`nvcc --time`).
Prints a markdown table for BENCHMARKS.md.
"""
import argparse, collections, glob, hashlib, json, os, re, shutil, statistics, subprocess, sys, tarfile, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "benches", "bindgen_cuda")
OURS, THEIRS, FORGE = "bench_ours", "bench_theirs", "bench_forge"
# bindgen_cuda's crate with what a user needs to load its PTX: cudarc as ptx-runtime has it. No-op
# only: bindgen_cuda's crate alone has 11 packages for cargo to check, ours about 60.
THEIRS_CUDARC = "bench_theirs_cudarc"
FORGE_CUDARC = "bench_forge_cudarc"  # --scratch only

OURS_BUILD = '''fn main() -> Result<(), ptx_build::Error> {
    ptx_build::Builder::new().cuda("src/**/*.cu").arch("%s").build()?;
    Ok(())
}
'''
THEIRS_BUILD = '''fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let bindings = bindgen_cuda::Builder::default().build_ptx().unwrap();
    bindings.write("src/lib.rs").unwrap();
}
'''
# candle-kernels 0.10's build.rs, PTX part (cudaforge takes its arch from CUDA_COMPUTE_CAP, as
# candle leaves it).
FORGE_BUILD = '''fn main() -> cudaforge::Result<()> {
    println!("cargo::rerun-if-changed=build.rs");
    let out_dir = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let bindings = cudaforge::KernelBuilder::new()
        .source_dir("src")
        .arg("--expt-relaxed-constexpr")
        .arg("-std=c++17")
        .arg("-O3")
        .build_ptx()?;
    bindings.write(out_dir.join("ptx.rs"))?;
    Ok(())
}
'''
# Logs every start (arguments, wall time) and, for compiles, nvcc's per-phase times.
WRAPPER = '''#!/bin/sh
t0=$(date +%%s.%%N)
case " $* " in
  *" -ptx "*|*" --ptx "*|*" -E "*) "%(real)s" --time "%(csv)s" "$@" ;;
  *) "%(real)s" "$@" ;;
esac
rc=$?
echo "$t0 $(date +%%s.%%N) $*" >> "%(log)s"
exit $rc
'''


def cuda_bin():
    home = os.environ.get("CARGO_PTX_HOME") or os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "cargo-ptx")
    found = sorted(glob.glob(os.path.join(home, "cuda", "*", "nvidia", "*", "bin", "nvcc")))
    if not found:
        sys.exit("no nvcc from `cargo ptx setup` found")
    return os.path.dirname(found[-1])


def base_env(bin_dir):
    env = {k: v for k, v in os.environ.items()
           if not (k.startswith("CARGO_PTX_") or k in (
               "RUSTC_WRAPPER", "CARGO_BUILD_RUSTC_WRAPPER", "RUSTC_WORKSPACE_WRAPPER", "CARGO_TARGET_DIR",
               "CARGO_BUILD_TARGET_DIR", "NVCC", "PTXAS", "CUDA_PATH", "CUDA_HOME", "NVCC_APPEND_FLAGS",
               "NVCC_PREPEND_FLAGS", "NVCC_CCBIN", "RAYON_NUM_THREADS", "CUDA_COMPUTE_CAP"))}
    env["PATH"] = bin_dir + os.pathsep + env.get("PATH", "")
    env["CUDA_ROOT"] = os.path.dirname(bin_dir)  # bindgen_cuda looks for <root>/include/cuda.h
    env["CUDA_COMPUTE_CAP"] = "80"               # bindgen_cuda asks nvidia-smi otherwise
    env["CARGO_PTX_CACHE_DIR"] = "off"           # ptx-build's machine-wide step cache
    env["CARGO_TERM_COLOR"] = "never"
    return env


def mode_env(env, mode):
    """`env` for a cold build of `mode`: "forge-all" is cudaforge on every CPU (it runs nvcc on
    half of them unless `CUDAFORGE_THREADS` says otherwise)."""
    return dict(env, CUDAFORGE_THREADS=str(os.cpu_count())) if mode == "forge-all" else env


def keep_or_remove(work, keep):
    """The end of a bench run: its work dir kept (and named) for a look inside, or removed."""
    if keep:
        print(f"kept {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)


def registry_src(crate, version, work, env):
    """The unpacked source of `crate` `version` from the cargo registry, fetched through a
    throwaway crate in `work` when this machine's registry does not hold it yet."""
    pattern = os.path.expanduser(f"~/.cargo/registry/src/*/{crate}-{version}")
    if not glob.glob(pattern):
        d = os.path.join(work, "fetch-" + crate)
        os.makedirs(os.path.join(d, "src"))
        open(os.path.join(d, "src", "lib.rs"), "w").close()
        open(os.path.join(d, "Cargo.toml"), "w").write(
            f'[package]\nname = "fetch"\nversion = "0.0.0"\nedition = "2021"\n\n[dependencies]\n{crate} = "={version}"\n\n[workspace]\n')
        subprocess.run(["cargo", "fetch"], cwd=d, env=env, check=True)
    found = glob.glob(pattern)
    if not found:
        sys.exit(f"cargo fetch left no {crate}-{version} under ~/.cargo/registry/src")
    return found[0]


def packaged_source(src, work, env):
    """A directory source (cargo's vendored-sources layout) with ptx-device-macros, ptx-runtime and
    ptx-build packaged from the snapshot `src` and every crates.io crate they depend on, at the
    versions of the repository's Cargo.lock; a `.crate` holds what a registry would serve.
    Returns the folder and {package: version}."""
    vendor, pkg_target = os.path.join(work, "vendor"), os.path.join(work, "target-package")
    pkgs = ("ptx-device-macros", "ptx-runtime", "ptx-build")

    def run(cmd, cwd):
        p = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if p.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed in {cwd}:\n{p.stderr[-6000:]}")

    # Packaged together: cargo resolves the packages' dependencies on each other among them.
    run(["cargo", "package", "--no-verify", "--allow-dirty", "--target-dir", pkg_target]
        + [x for p in pkgs for x in ("-p", p)], src)
    helper = os.path.join(work, "vendor-helper")
    os.makedirs(os.path.join(helper, "src"))
    open(os.path.join(helper, "src", "lib.rs"), "w").close()
    open(os.path.join(helper, "Cargo.toml"), "w").write(
        '[package]\nname = "vendor-helper"\nversion = "0.0.0"\nedition = "2021"\n[dependencies]\n'
        + "".join(f'{p} = {{ path = "{os.path.join(src, p)}" }}\n' for p in pkgs) + "[workspace]\n")
    shutil.copy(os.path.join(src, "Cargo.lock"), os.path.join(helper, "Cargo.lock"))
    run(["cargo", "vendor", "--versioned-dirs", vendor], helper)  # path dependencies are not vendored
    versions = {}
    for crate in glob.glob(os.path.join(pkg_target, "package", "*.crate")):
        m = re.fullmatch(r"(.+)-(\d+\.\d+\.\d+[^/]*)\.crate", os.path.basename(crate))
        if not m or m.group(1) not in pkgs:
            continue
        name, version = m.groups()
        versions[name] = version
        with tarfile.open(crate) as t:
            t.extractall(vendor, filter="data")
        digest = hashlib.sha256(open(crate, "rb").read()).hexdigest()
        # cargo checks the listed files' hashes and the lock file's package checksum; none listed.
        json.dump({"files": {}, "package": digest}, open(os.path.join(vendor, f"{name}-{version}", ".cargo-checksum.json"), "w"))
    missing = set(pkgs) - set(versions)
    if missing:
        sys.exit(f"cargo package made no .crate for {sorted(missing)} in {pkg_target}/package")
    return vendor, versions


class Crate:
    """A host crate in `work` with `src` (the fixtures, by default; its .rs files left out) as its src/."""

    def __init__(self, work, name, build_rs, manifest_deps, lib_rs, src=FIXTURES):
        self.name = name
        self.dir = os.path.join(work, name)
        self.target = os.path.join(work, "target-" + name)
        shutil.copytree(src, os.path.join(self.dir, "src"), ignore=shutil.ignore_patterns("*.rs"))
        self.write("Cargo.toml", f'[package]\nname = "{name}"\nversion = "0.1.0"\nedition = "2021"\npublish = false\n\n'
                   f'{manifest_deps}\n[workspace]\n')
        self.write("build.rs", build_rs)
        self.write("src/lib.rs", lib_rs)

    def write(self, rel, text):
        path = os.path.join(self.dir, rel)
        if os.path.exists(path) and open(path).read() == text:
            return
        open(path, "w").write(text)

    def cargo(self, env, *args, offline=True):
        cmd = ["cargo", *args, "--target-dir", self.target] + (["--offline"] if offline else [])
        t = time.perf_counter()
        p = subprocess.run(cmd, cwd=self.dir, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        dt = time.perf_counter() - t
        if p.returncode != 0:
            sys.exit(f"{self.name}: {' '.join(cmd)} failed:\n{p.stderr[-6000:]}")
        return dt, p.stderr

    def build(self, env, *extra):
        """A timed `cargo build`; also says which packages it compiled."""
        dt, err = self.cargo(env, "build", *extra)
        compiled = re.findall(r"^\s*Compiling (\S+)", err, re.M)
        return dt, compiled, err

    def cold(self, env, *extra):
        self.cargo(env, "clean", "-p", self.name)
        for d in glob.glob(os.path.join(self.target, "debug", "build", self.name.replace("-", "_") + "-*")):
            shutil.rmtree(d, ignore_errors=True)  # clean -p removes these; make sure
        for _ in range(3):
            dt, compiled, err = self.build(env, *extra)
            if set(compiled) == {self.name}:
                return dt, err
            # A dependency rebuilt (someone edited ptx-build meanwhile): not a measurement of
            # this crate; it is built now, so measure again.
            print(f"  note: {self.name} cold build also compiled {compiled}; measuring again", file=sys.stderr)
            self.cargo(env, "clean", "-p", self.name)
        sys.exit(f"{self.name}: dependencies keep rebuilding")

    def ptx(self):
        """{relative path: sha256} of every PTX file the build script left in OUT_DIR."""
        out = {}
        for p in glob.glob(os.path.join(self.target, "debug", "build", "*", "out", "**", "*.ptx"), recursive=True):
            out[os.path.relpath(p, self.target)] = hashlib.sha256(open(p, "rb").read()).hexdigest()
        return out


def by_module(ptx):
    """{module: [relative path, ...]}: ptx-build keeps a module's PTX twice (its step folder and
    OUT_DIR/ptx-build/<module>/<arch>.ptx), bindgen_cuda once (OUT_DIR/<module>.ptx)."""
    out = collections.defaultdict(list)
    for p in sorted(ptx):
        stem = os.path.splitext(os.path.basename(p))[0]
        if re.fullmatch(r"(sm|compute)_\d+[af]?", stem):
            stem = os.path.basename(os.path.dirname(p))
        out[stem].append(p)
    return out


def entries(crate):
    """Kernels (`.entry` lines) over one PTX file per module."""
    return sum(open(os.path.join(crate.target, files[0])).read().count(".entry ") for files in by_module(crate.ptx()).values())


def unit_times(crate):
    """Seconds per unit of the crate itself in the newest `cargo build --timings` report."""
    reports = sorted(glob.glob(os.path.join(crate.target, "cargo-timings", "cargo-timing-*.html")), key=os.path.getmtime)
    if not reports:
        return {}
    m = re.search(r"const UNIT_DATA = (\[.*?\]);", open(reports[-1]).read(), re.S)
    out = {}
    for u in json.loads(m.group(1)) if m else []:
        if u.get("name") == crate.name:
            what = {"run-custom-build": "build script run"}.get(u.get("mode"), "")
            if not what:
                what = "build script compile" if "build-script" in str(u.get("target", "")) else "crate compile"
            out[what] = out.get(what, 0) + float(u.get("duration", 0))
    return out


def first_build_units(crate):
    """From the newest `--timings` report of a first build: when the kernel crate's build script
    started running and how long it ran, the CPU seconds of every unit, and for ptx-build its own
    compile (the unit a build script waits for last)."""
    reports = sorted(glob.glob(os.path.join(crate.target, "cargo-timings", "cargo-timing-*.html")), key=os.path.getmtime)
    m = re.search(r"const UNIT_DATA = (\[.*?\]);", open(reports[-1]).read(), re.S) if reports else None
    out = {}
    for u in json.loads(m.group(1)) if m else []:
        out["units' CPU sum"] = out.get("units' CPU sum", 0) + float(u["duration"])
        if u.get("name") == crate.name and u.get("mode") == "run-custom-build":
            out["kernels' build script starts at"] = float(u["start"])
            out["kernels' build script runs"] = float(u["duration"])
        elif u.get("name") in ("ptx-build", "bindgen_cuda", "cudaforge") and "build-script" not in str(u.get("target", "")):
            out["the builder crate's compile"] = float(u["duration"])
    return out


def flip_define(crate):
    path = os.path.join(crate.dir, "src", "utils.cuh")
    text = open(path).read()
    new = text.replace("#define USE_LDG 1", "#define USE_LDG 0") if "#define USE_LDG 1" in text \
        else text.replace("#define USE_LDG 0", "#define USE_LDG 1")
    assert new != text
    open(path, "w").write(new)


def classify(args):
    a = args.split()
    if "--version" in a or "-V" in a:
        return "--version"
    if any(x.startswith("--list-gpu") for x in a):
        return next(x for x in a if x.startswith("--list-gpu"))
    if "-E" in a:
        # The cc crate's probe of the compiler family (ptx-build asks cc for the host compiler).
        return "-E compiler probe" if any("detect_compiler_family" in x for x in a) else "-E (preprocess only)"
    if "-ptx" in a or "--ptx" in a:
        return "-ptx (compile)"
    return "other: " + " ".join(a[:3])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--keep", action="store_true", help="keep the temp dir")
    ap.add_argument("--archs", default="80", help="ours' archs, comma-separated capabilities")
    ap.add_argument("--cache", choices=("on", "off"), default="off", help="ptx-build's shared step cache")
    ap.add_argument("--quick", action="store_true", help="cold and no-op modes only")
    ap.add_argument("--scratch", action="store_true", help="also a first build into an empty target dir, every dependency compiled")
    ap.add_argument("--worktree", action="store_true",
                    help="build ptx-build/ptx-runtime from the working tree as it is (default: a `git archive HEAD` snapshot, "
                         "so that edits made meanwhile neither rebuild nor break them)")
    ap.add_argument("--path-deps", action="store_true",
                    help="ptx-build/ptx-runtime as path dependencies (default: packaged, from a directory source, as from crates.io)")
    a = ap.parse_args()
    bin_dir = cuda_bin()
    env = base_env(bin_dir)
    nvcc_version = subprocess.run([os.path.join(bin_dir, "nvcc"), "--version"], capture_output=True, text=True).stdout
    nvcc_version = re.search(r"V(\d+\.\d+\.\d+)", nvcc_version).group(1)
    work = tempfile.mkdtemp(prefix="cargo-ptx-bindgen-cuda-bench-")
    if a.cache == "on":
        env["CARGO_PTX_CACHE_DIR"] = os.path.join(work, "step-cache")
    caps = [c.strip() for c in a.archs.split(",") if c.strip()]
    ptx_archs = ",".join(f"compute_{c}" for c in caps)
    cubin_archs = ",".join(f"sm_{c}" for c in caps)
    src = ROOT
    if not a.worktree:
        src = os.path.join(work, "cargo-ptx")
        os.makedirs(src)
        subprocess.run(f"git -C '{ROOT}' archive HEAD | tar -x -C '{src}'", shell=True, check=True)
    rev = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    rev = rev + (" + working tree" if a.worktree else "")
    pb, pr = os.path.join(src, "ptx-build"), os.path.join(src, "ptx-runtime")
    lib_rs = "pub mod kernels {\n    ptx_runtime::include_kernels!();\n}\n"
    if a.path_deps:
        ours = Crate(work, OURS, OURS_BUILD % ptx_archs,
                     f'[dependencies]\nptx-runtime = {{ path = "{pr}" }}\n\n[build-dependencies]\nptx-build = {{ path = "{pb}" }}\n', lib_rs)
        shutil.copy(os.path.join(src, "Cargo.lock"), os.path.join(ours.dir, "Cargo.lock"))  # the repo's versions
    else:
        vendor, v = packaged_source(src, work, env)
        ours = Crate(work, OURS, OURS_BUILD % ptx_archs,
                     f'[dependencies]\nptx-runtime = "={v["ptx-runtime"]}"\n\n[build-dependencies]\nptx-build = "={v["ptx-build"]}"\n', lib_rs)
        os.makedirs(os.path.join(ours.dir, ".cargo"))
        ours.write(".cargo/config.toml", f'[source.crates-io]\nreplace-with = "packaged"\n\n[source.packaged]\ndirectory = "{vendor}"\n')
    deps_kind = "path dependencies" if a.path_deps else "packaged (directory source)"
    theirs = Crate(work, THEIRS, THEIRS_BUILD, '[build-dependencies]\nbindgen_cuda = "0.1"\n', "")
    forge = Crate(work, FORGE, FORGE_BUILD, '[build-dependencies]\ncudaforge = "=0.1.5"\n',
                  'include!(concat!(env!("OUT_DIR"), "/ptx.rs"));\n')
    cudarc = re.search(r"^cudarc = .*$", open(os.path.join(src, "ptx-runtime", "Cargo.toml")).read(), re.M).group(0)
    theirs_cudarc = Crate(work, THEIRS_CUDARC, THEIRS_BUILD, f'[dependencies]\n{cudarc}\n\n[build-dependencies]\nbindgen_cuda = "0.1"\n', "")
    forge_cudarc = Crate(work, FORGE_CUDARC, FORGE_BUILD, f'[dependencies]\n{cudarc}\n\n[build-dependencies]\ncudaforge = "=0.1.5"\n',
                         'include!(concat!(env!("OUT_DIR"), "/ptx.rs"));\n') if a.scratch else None
    ncu = len(glob.glob(os.path.join(FIXTURES, "*.cu")))

    print(f"work dir {work}; warming up (dependencies, tool caches)...", file=sys.stderr)
    for c in (ours, theirs, forge, theirs_cudarc) + ((forge_cudarc,) if forge_cudarc else ()):
        try:
            c.cargo(env, "build")
        except SystemExit:
            c.cargo(env, "build", offline=False)
    bg_version = re.search(r'name = "bindgen_cuda"\nversion = "([^"]+)"', open(os.path.join(theirs.dir, "Cargo.lock")).read()).group(1)
    kernels, theirs_kernels, forge_kernels = entries(ours), entries(theirs), entries(forge)

    # Cold builds, alternating (the order flips every round).
    cold = collections.defaultdict(list)
    for r in range(a.runs):
        order = ["ours", "theirs", "forge", "forge-all", "cubin"]
        order = order[r % len(order):] + order[:r % len(order)]  # each goes first in turn
        for what in order:
            if what in ("theirs", "forge", "forge-all"):
                dt, _ = (theirs if what == "theirs" else forge).cold(mode_env(env, what))
            else:
                ours.write("build.rs", OURS_BUILD % (ptx_archs if what == "ours" else cubin_archs))
                dt, _ = ours.cold(env)
            cold[what].append(dt)
            print(f"  cold run {r + 1}: {what} {dt:.2f} s", file=sys.stderr)
    ours.write("build.rs", OURS_BUILD % ptx_archs)

    # nvcc starts and phases of one cold build each, through the logging wrapper.
    counts, phases, nvcc_wall, summary, units = {}, {}, {}, {}, {}
    for c, extra in (() if a.quick else ((ours, True), (theirs, False), (forge, False))):
        wdir = os.path.join(work, "wrap-" + c.name)
        os.makedirs(wdir)
        log, csv = os.path.join(wdir, "calls.log"), os.path.join(wdir, "times.csv")
        w = os.path.join(wdir, "nvcc")
        open(w, "w").write(WRAPPER % {"real": os.path.join(bin_dir, "nvcc"), "csv": csv, "log": log})
        os.chmod(w, 0o755)
        wenv = dict(env, PATH=wdir + os.pathsep + env["PATH"])
        if extra:
            wenv["NVCC"] = w  # ptx-build: a variable naming one file wins over PATH
        c.cold(wenv)  # once to let ptx-build remember the wrapper's version and arch list,
        for f in (log, csv):  # as it has the real nvcc's in the timed runs; then count
            if os.path.exists(f):
                os.remove(f)
        _, err = c.cold(wenv)
        if c is ours:
            summary[c.name] = [l.strip() for l in err.splitlines() if "typed" in l][-3:]
        calls = [l.split(" ", 2) for l in open(log).read().splitlines()] if os.path.exists(log) else []
        counts[c.name] = collections.Counter(classify(x[2] if len(x) > 2 else "") for x in calls)
        nvcc_wall[c.name] = sum(float(x[1]) - float(x[0]) for x in calls)
        ph = collections.defaultdict(float)
        if os.path.exists(csv):
            for line in open(csv).read().splitlines():
                f = [x.strip() for x in line.split(",")]
                if len(f) >= 8 and f[-1] == "ms":
                    ph[f[1]] += float(f[-2])
        phases[c.name] = ph
        # Back to a build without the wrapper, with cargo's per-unit times (build script compile,
        # build script run, crate compile) from `--timings`.
        c.cold(env, "--timings")
        units[c.name] = unit_times(c)

    # Header edit: flip a #define every kernel depends on; did the PTX change?
    edit = collections.defaultdict(list)
    verdict = collections.defaultdict(list)
    for r in range(0 if a.quick else a.runs):
        for c in ((ours, theirs) if r % 2 == 0 else (theirs, ours)):
            before = c.ptx()
            flip_define(c)
            dt, _, _ = c.build(env)
            after = c.ptx()
            mods = by_module(after)
            changed = sum(1 for files in mods.values() if any(before.get(f) != after[f] for f in files))
            edit[c.name].append(dt)
            verdict[c.name].append((changed, len(mods)))
            print(f"  header edit {r + 1}: {c.name} {dt:.2f} s, PTX of {changed}/{len(mods)} modules changed", file=sys.stderr)

    # No-op: nothing changed since the last build.
    noop = collections.defaultdict(list)
    for c in (ours, theirs, forge, theirs_cudarc):
        c.build(env)
    for r in range(a.runs):
        crates = [ours, theirs, forge, theirs_cudarc]
        for c in crates[r % 4:] + crates[:r % 4]:
            dt, compiled, _ = c.build(env)
            if compiled:
                print(f"  note: no-op build of {c.name} compiled {compiled}", file=sys.stderr)
            noop[c.name].append(dt)

    # A first build: every dependency compiled into an empty target dir.
    scratch, scratch_units = collections.defaultdict(list), collections.defaultdict(list)
    for r in range(a.runs if a.scratch else 0):
        crates = [ours, theirs_cudarc, forge_cudarc]
        for c in crates[r % 3:] + crates[:r % 3]:
            target = c.target
            c.target = target + "-scratch"
            shutil.rmtree(c.target, ignore_errors=True)
            dt, _, _ = c.build(env, "--timings")
            scratch[c.name].append(dt)
            scratch_units[c.name].append(first_build_units(c))
            shutil.rmtree(c.target, ignore_errors=True)
            c.target = target
            print(f"  first build {r + 1}: {c.name} {dt:.2f} s", file=sys.stderr)

    m = statistics.median
    fmt = lambda xs: ", ".join(f"{x:.2f}" for x in xs)
    o, t, f, fa, cu = m(cold["ours"]), m(cold["theirs"]), m(cold["forge"]), m(cold["forge-all"]), m(cold["cubin"])
    no, nt, nf, ntc = m(noop[OURS]), m(noop[THEIRS]), m(noop[FORGE]), m(noop[THEIRS_CUDARC])
    # No-op differences: the median of per-round differences (the rounds interleave the crates,
    # so one round's load is the same for each).
    dn = lambda other: m([x - y for x, y in zip(noop[OURS], noop[other])])

    def rebuild(name):
        if not verdict[name]:
            return "not measured"
        ok = all(ch == n and n > 0 for ch, n in verdict[name])
        none = all(ch == 0 for ch, _ in verdict[name])
        last = verdict[name][-1]
        word = "correct rebuild" if ok else ("stale PTX" if none else "partly rebuilt")
        return f"{word} (PTX of {last[0]}/{last[1]} modules changed)"

    def starts(name):
        c = counts.get(name, {})
        return f"{sum(c.values())}: " + ", ".join(f"{n} {k}" for k, n in sorted(c.items(), key=lambda kv: -kv[1]))

    def phase_line(name):
        ph = phases.get(name, {})
        return ", ".join(f"{k} {v / 1000:.1f} s" for k, v in sorted(ph.items(), key=lambda kv: -kv[1]) if v >= 1)

    ratio = lambda x, y: f"{x / y:.2f}x / {x / f:.2f}x"
    print()
    print(f"{ncu} .cu files + utils.cuh, {kernels} kernels (`.entry`; bindgen_cuda's PTX: {theirs_kernels}, cudaforge's: {forge_kernels}), "
          f"ptx-build at {rev} ({deps_kind}) archs {a.archs} shared cache {a.cache}, nvcc {nvcc_version}, bindgen_cuda {bg_version}, cudaforge 0.1.5, "
          f"{os.cpu_count()} CPUs, {a.runs} runs interleaved, `cargo build` (dev profile)")
    print()
    print("| what | ptx-build | bindgen_cuda | cudaforge | ptx-build vs bindgen_cuda / cudaforge | target |")
    print("|---|---|---|---|---|---|")
    print(f"| cold, PTX only (`compute_X`; theirs `sm_80` PTX) | {o:.2f} s | {t:.2f} s | {f:.2f} s | {ratio(o, t)} | <= 1.0x |")
    print(f"| cold, PTX + `sm_X` cubins (theirs: PTX only) | {cu:.2f} s | {t:.2f} s | {f:.2f} s | {ratio(cu, t)} | <= 1.3x |")
    print(f"| cold, PTX only, cudaforge on every CPU (`CUDAFORGE_THREADS={os.cpu_count()}`; its default is half) | {o:.2f} s | | "
          f"{fa:.2f} s | {o / fa:.2f}x (cubins {cu / fa:.2f}x) | |")
    print(f"| no-op `cargo build` | {no * 1000:.0f} ms | {nt * 1000:.0f} ms | {nf * 1000:.0f} ms | "
          f"{dn(THEIRS) * 1000:+.0f} ms / {dn(FORGE) * 1000:+.0f} ms | <= +20 ms |")
    print(f"| no-op, bindgen_cuda's crate with cudarc (as ptx-runtime has it) | | {ntc * 1000:.0f} ms | | "
          f"{dn(THEIRS_CUDARC) * 1000:+.0f} ms | <= +20 ms |")
    if not a.quick:
        print(f"| header edit (`USE_LDG` in utils.cuh), rebuild | {m(edit[OURS]):.2f} s, {rebuild(OURS)} | "
              f"{m(edit[THEIRS]):.2f} s, {rebuild(THEIRS)} | | | correct rebuild |")
        print(f"| nvcc starts, one cold PTX-only build | {starts(OURS)} | {starts(THEIRS)} | {starts(FORGE)} | | |")
        print(f"| summed wall time of those nvcc runs | {nvcc_wall[OURS]:.1f} s | {nvcc_wall[THEIRS]:.1f} s | {nvcc_wall[FORGE]:.1f} s | "
              f"{nvcc_wall[OURS] / max(nvcc_wall[THEIRS], 1e-9):.2f}x / {nvcc_wall[OURS] / max(nvcc_wall[FORGE], 1e-9):.2f}x | |")
    if a.scratch:
        s_o, s_t, s_f = m(scratch[OURS]), m(scratch[THEIRS_CUDARC]), m(scratch[FORGE_CUDARC])
        print(f"| first build, empty target dir, every dependency (theirs with cudarc) | {s_o:.2f} s | {s_t:.2f} s | {s_f:.2f} s | "
              f"{s_o / s_t:.2f}x / {s_o / s_f:.2f}x | |")
    print()
    print(f"runs (s): cold PTX ours [{fmt(cold['ours'])}], bindgen_cuda [{fmt(cold['theirs'])}], cudaforge [{fmt(cold['forge'])}], cudaforge on every CPU [{fmt(cold['forge-all'])}], "
          f"cubins [{fmt(cold['cubin'])}]; no-op ours [{fmt(noop[OURS])}], bindgen_cuda [{fmt(noop[THEIRS])}], cudaforge [{fmt(noop[FORGE])}], "
          f"bindgen_cuda + cudarc [{fmt(noop[THEIRS_CUDARC])}]")
    if not a.quick:
        print(f"header edit ours [{fmt(edit[OURS])}], bindgen_cuda [{fmt(edit[THEIRS])}]")
        print(f"nvcc phases summed over one cold build (`nvcc --time`): ptx-build: {phase_line(OURS)}; "
              f"bindgen_cuda: {phase_line(THEIRS)}; cudaforge: {phase_line(FORGE)}")
    for name, label in ((OURS, "ptx-build"), (THEIRS, "bindgen_cuda"), (FORGE, "cudaforge")):
        if units.get(name):
            print(f"cargo --timings, one cold build, {label}: " + ", ".join(f"{k} {v:.2f} s" for k, v in units[name].items()))
    if a.scratch:
        print(f"first builds (s): ours [{fmt(scratch[OURS])}], bindgen_cuda + cudarc [{fmt(scratch[THEIRS_CUDARC])}], "
              f"cudaforge + cudarc [{fmt(scratch[FORGE_CUDARC])}]")
        for name, label in ((OURS, "ptx-build"), (THEIRS_CUDARC, "bindgen_cuda + cudarc"), (FORGE_CUDARC, "cudaforge + cudarc")):
            rows = scratch_units[name]
            keys = sorted({k for row in rows for k in row})
            print(f"first build, {label} (medians, s): " + ", ".join(f"{k} {m([row[k] for row in rows if k in row]):.2f}" for k in keys))
    if summary.get(OURS):
        print("ptx-build said: " + " / ".join(summary[OURS]))
    keep_or_remove(work, a.keep)


if __name__ == "__main__":
    main()
