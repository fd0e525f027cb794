#!/usr/bin/env python3
"""mistral.rs's CUDA static libraries (mistralrs-paged-attn and mistralrs-quant from crates.io)
through `Builder::cuda_static_lib` and through their own build.rs (cudaforge's `build_lib`), cold,
side by side: CUDA C++ that launches its own kernels, written by nobody on this team (flashinfer's
headers, Marlin's templates, wmma, fp8).

Usage (from the repository root, after `cargo ptx setup`; needs crates.io, or a cargo registry
that already holds the two crates and cudaforge):
    python3 benches/mistralrs_static_libs.py [--runs N] [--crates paged-attn,quant] [--modes ours,forge,forge-all] [--keep]

Per library, host crates in a temp dir, each with its own target dir, hold a copy of the
library's .cu files and headers (paged-attn's `src/cuda/`, quant's `kernels/`):
  ours       build.rs: `ptx_build::Builder::new().cuda_static_lib(<name>, <glob>)`, the excludes,
             flags and defines of their build.rs, `.arch("sm_80")` (a cubin and the PTX per file)
  forge      their build.rs's CUDA part as it is: cudaforge 0.1.6's
             `KernelBuilder::new().source_glob(..).exclude(..).arg(..).build_lib(..)`,
             `CUDA_COMPUTE_CAP=80` (`-gencode=arch=compute_80,code=sm_80`: the cubin only); cudaforge
             runs nvcc on half the machine's CPUs unless told otherwise
  forge-all  the same with `CUDAFORGE_THREADS` set to every CPU, as ptx-build uses (cargo's jobs)
A cold build is `cargo clean -p <crate>` then `cargo build --lib` (build script compile and run,
then the crate); ptx-build's shared step cache off; modes alternate, each first in turn. After
the runs, ours is linked into a binary that takes the address of every `extern "C"` function the
library's Rust side declares (its `src/**/*.rs`), so a missing or mangled symbol fails the bench.
"""
import argparse, fnmatch, glob, os, re, shutil, statistics, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bindgen_cuda import ROOT, Crate, base_env, cuda_bin, keep_or_remove, registry_src  # noqa: E402

# Both build.rs files (0.8.1) pass these to every nvcc run.
FLAGS = ["-U__CUDA_NO_HALF_OPERATORS__", "-U__CUDA_NO_HALF_CONVERSIONS__", "-U__CUDA_NO_HALF2_OPERATORS__",
         "-U__CUDA_NO_BFLOAT16_CONVERSIONS__", "--expt-relaxed-constexpr", "--expt-extended-lambda", "--use_fast_math"]

# name: (crate, its folder of .cu files, the glob under our src/, the archive, excludes, defines)
LIBS = {
    "paged-attn": ("mistralrs-paged-attn", "src/cuda", "src/*.cu", "mistralrspagedattention", [], ["ENABLE_FP8"]),
    "quant": ("mistralrs-quant", "kernels", "src/*/*.cu", "mistralrsquant", ["dummy_*.cu", "*_dummy.cu"], []),
}

OURS_BUILD = '''fn main() -> Result<(), ptx_build::Error> {{
    let mut b = ptx_build::Builder::new().cuda_static_lib("{lib}", "{glob}").arch("sm_80");
    let excludes: &[&str] = &[{excludes}];
    for glob in excludes {{
        b = b.cuda_exclude(glob);
    }}
    for flag in [{flags}] {{
        b = b.nvcc_flag(flag);
    }}
    let defines: &[&str] = &[{defines}];
    for name in defines {{
        b = b.cuda_define(name, None);
    }}
    b.build()?;
    Ok(())
}}
'''

# Their build.rs, CUDA part (`--verbose` and `-fPIC` as they pass them; the fp8 define of
# paged-attn's compute-capability test, which is 80 here).
FORGE_BUILD = '''fn main() -> cudaforge::Result<()> {{
    let out_dir = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let mut builder = cudaforge::KernelBuilder::new()
        .source_glob("{glob}")
        .arg("-std=c++17")
        .arg("-O3")
        .arg("--verbose")
        .arg("--compiler-options")
        .arg("-fPIC");
    for flag in [{flags}] {{
        builder = builder.arg(flag);
    }}
    let defines: &[&str] = &[{defines}];
    for name in defines {{
        builder = builder.arg(&format!("-D{{name}}"));
    }}
    let excluded: Vec<&str> = vec![{excludes}];
    builder = builder.exclude(&excluded);
    builder.build_lib(out_dir.join("lib{lib}.a"))?;
    println!("cargo:rustc-link-search={{}}", out_dir.display());
    println!("cargo:rustc-link-lib={lib}");
    Ok(())
}}
'''


def quoted(items):
    return ", ".join(f'"{x}"' for x in items)


def extern_functions(root):
    """The names of the `extern "C"` functions the crate's Rust side declares."""
    names = set()
    for f in glob.glob(os.path.join(root, "src", "**", "*.rs"), recursive=True):
        for block in re.findall(r'extern "C"\s*\{(.*?)\n\}', open(f).read(), re.S):
            names.update(re.findall(r'\bfn\s+(\w+)\s*\(', block))
    return sorted(names)


def link_check(names):
    """A lib.rs declaring every function (the signature does not matter to the linker) and a
    binary that takes each one's address."""
    lib = ("#![allow(dead_code, clashing_extern_declarations)]\npub mod ffi {\n    unsafe extern \"C\" {\n"
           + "".join(f"        pub fn {n}();\n" for n in names) + "    }\n}\n"
           + "pub const ALL: &[unsafe extern \"C\" fn()] = &[" + ", ".join(f"ffi::{n}" for n in names) + "];\n")
    main = 'fn main() {\n    println!("{} functions linked", host::ALL.iter().filter(|f| **f as usize != 0).count());\n}\n'
    return lib, main


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--version", default="0.8.1")
    ap.add_argument("--crates", default="paged-attn,quant")
    ap.add_argument("--modes", default="ours,forge,forge-all", help="which cold builds, comma-separated")
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    env = base_env(cuda_bin())
    work = tempfile.mkdtemp(prefix="cargo-ptx-mistralrs-bench-")
    order = [m.strip() for m in a.modes.split(",") if m.strip()]
    pb = os.path.join(ROOT, "ptx-build")
    rev = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    rows = []
    for key in [c.strip() for c in a.crates.split(",") if c.strip()]:
        crate, folder, src_glob, lib, excludes, defines = LIBS[key]
        root = registry_src(crate, a.version, work, env)
        src = os.path.join(root, folder)
        fill = dict(lib=lib, glob=src_glob, excludes=quoted(excludes), flags=quoted(FLAGS), defines=quoted(defines))
        names = extern_functions(root)
        lib_rs, bin_rs = link_check(names)
        # `host`: the name the link check's binary uses for the library crate.
        ours = Crate(work, "host", OURS_BUILD.format(**fill),
                     f'[build-dependencies]\nptx-build = {{ path = "{pb}" }}\n', lib_rs, src=src)
        os.makedirs(os.path.join(ours.dir, "src", "bin"), exist_ok=True)
        ours.write("src/bin/linked.rs", bin_rs)
        shutil.copy(os.path.join(ROOT, "Cargo.lock"), os.path.join(ours.dir, "Cargo.lock"))
        forge = Crate(work, "forge_" + key.replace("-", "_"), FORGE_BUILD.format(**fill),
                      '[build-dependencies]\ncudaforge = "=0.1.6"\n', "", src=src)
        files = [f for f in glob.glob(os.path.join(ours.dir, src_glob))
                 if not any(fnmatch.fnmatch(os.path.basename(f), x) for x in excludes)]
        print(f"{crate} {a.version}: {len(files)} files, {len(names)} extern functions; work dir {work}", file=sys.stderr)
        # Dependencies first, without the nvcc runs: a build script that only names the builder.
        for c, stub in ((ours, "fn main() { let _ = ptx_build::Builder::new; }\n"),
                        (forge, "fn main() { let _ = cudaforge::KernelBuilder::new; }\n")):
            real = open(os.path.join(c.dir, "build.rs")).read()
            c.write("build.rs", stub)
            c.cargo(env, "build", "--lib", offline=False)
            c.write("build.rs", real)
        runs = {m: [] for m in order}
        for r in range(a.runs):
            for what in order[r % len(order):] + order[:r % len(order)]:
                e = dict(env)
                if what == "forge-all":
                    e["CUDAFORGE_THREADS"] = str(os.cpu_count())
                t, _ = (ours if what == "ours" else forge).cold(e, "--lib")
                runs[what].append(t)
                print(f"  {key} run {r + 1}: {what} {t:.1f} s", file=sys.stderr)
        p = subprocess.run(["cargo", "run", "-q", "--bin", "linked", "--target-dir", ours.target, "--offline"],
                           cwd=ours.dir, env=env, capture_output=True, text=True)
        if p.stdout.strip() != f"{len(names)} functions linked":
            sys.exit(f"{crate}: the link check printed {p.stdout.strip()!r}, expected {len(names)} functions:\n{p.stderr[-6000:]}")
        med = {k: statistics.median(v) for k, v in runs.items() if v}
        rows.append((crate, len(files), len(names), med, runs))
        shutil.rmtree(ours.dir)
        shutil.rmtree(forge.dir)
    print(f"\nmistral.rs {a.version} static libraries, `sm_80`; ptx-build at {rev} (working tree), cudaforge 0.1.6, "
          f"{os.cpu_count()} CPUs, {a.runs} runs interleaved, medians\n")
    print("| library | files | extern functions linked | ptx-build | cudaforge (their build.rs) | cudaforge, every CPU | ptx-build vs each |")
    print("|---|---|---|---|---|---|---|")
    for crate, nfiles, nnames, med, _ in rows:
        cell = lambda k: f"{med[k]:.1f} s" if k in med else "-"
        ratio = " / ".join(f"{med['ours'] / med[k]:.2f}x" for k in ("forge", "forge-all") if k in med and "ours" in med)
        print(f"| {crate} | {nfiles} | {nnames} | {cell('ours')} | {cell('forge')} | {cell('forge-all')} | {ratio} |")
    print("\nruns (s): " + "; ".join(f"{crate} {k} [{', '.join(f'{x:.1f}' for x in v)}]"
                                    for crate, _, _, _, runs in rows for k, v in runs.items()))
    keep_or_remove(work, a.keep)


if __name__ == "__main__":
    main()
