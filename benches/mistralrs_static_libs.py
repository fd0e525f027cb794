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
the runs, ours is linked into a binary that takes the address of every C function the archive
defines (`nm`), after checking that it defines each one the library's Rust side declares by name
(its `src/**/*.rs`): a missing or mangled symbol, or an object whose own references the CUDA
runtime and libstdc++ do not satisfy, fails the bench. ptx-build's warnings are printed too.
"""
import argparse, fnmatch, glob, os, re, shutil, statistics, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bindgen_cuda import ROOT, Crate, base_env, cuda_bin, keep_or_remove, mode_env, registry_src  # noqa: E402

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
    """The names of the `extern "C"` functions the crate's Rust side declares by name (those a
    macro such as `paste!` stamps out are not seen here; the archive's own list covers them)."""
    names = set()
    for f in glob.glob(os.path.join(root, "src", "**", "*.rs"), recursive=True):
        for block in re.findall(r'extern "C"\s*\{(.*?)\n\}', open(f).read(), re.S):
            names.update(re.findall(r'\bfn\s+(\w+)\s*\(', block))
    return names


def exported_functions(archive):
    """The functions the archive defines under C names (nm's `T`, not C++-mangled)."""
    out = subprocess.run(["nm", "-g", "--defined-only", archive], capture_output=True, text=True, check=True).stdout
    return {parts[2] for parts in (line.split() for line in out.splitlines())
            if len(parts) == 3 and parts[1] == "T" and not parts[2].startswith(("_Z", "__"))}


def link_check(crate_name, names):
    """A lib.rs declaring every function (the signature does not matter to the linker) and a
    binary that takes each one's address."""
    lib = ("#![allow(dead_code, clashing_extern_declarations)]\npub mod ffi {\n    unsafe extern \"C\" {\n"
           + "".join(f"        pub fn {n}();\n" for n in names) + "    }\n}\n"
           + "pub const ALL: &[unsafe extern \"C\" fn()] = &[" + ", ".join(f"ffi::{n}" for n in names) + "];\n")
    main = ('fn main() {\n    println!("{} functions linked", ' + crate_name
            + '::ALL.iter().filter(|f| **f as usize != 0).count());\n}\n')
    return lib, main


def said(err, name):
    """The first line of each warning ptx-build's build script printed (cargo's
    `warning: <pkg>@<version>: ` lines; the location, source and notes lines left out)."""
    prefix = re.compile(rf"^warning: {name}@[^:]+: (.*)$")
    firsts = []
    for line in err.splitlines():
        m = prefix.match(line)
        if m and m.group(1) and not m.group(1)[0].isspace() and not m.group(1).startswith(("-->", "|", "=")) \
                and not re.match(r"\d+ \|", m.group(1)):
            firsts.append(m.group(1))
    return firsts


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
        declared = extern_functions(root)
        name = "host_" + key.replace("-", "_")
        ours = Crate(work, name, OURS_BUILD.format(**fill),
                     f'[build-dependencies]\nptx-build = {{ path = "{pb}" }}\n', "", src=src)
        shutil.copy(os.path.join(ROOT, "Cargo.lock"), os.path.join(ours.dir, "Cargo.lock"))
        forge = Crate(work, "forge_" + key.replace("-", "_"), FORGE_BUILD.format(**fill),
                      '[build-dependencies]\ncudaforge = "=0.1.6"\n', "", src=src)
        files = [f for f in glob.glob(os.path.join(ours.dir, src_glob))
                 if not any(fnmatch.fnmatch(os.path.basename(f), x) for x in excludes)]
        print(f"{crate} {a.version}: {len(files)} files; work dir {work}", file=sys.stderr)
        # Dependencies first, without the nvcc runs: a build script that only names the builder.
        for c, stub in ((ours, "fn main() { let _ = ptx_build::Builder::new; }\n"),
                        (forge, "fn main() { let _ = cudaforge::KernelBuilder::new; }\n")):
            real = open(os.path.join(c.dir, "build.rs")).read()
            c.write("build.rs", stub)
            c.cargo(env, "build", "--lib", offline=False)
            c.write("build.rs", real)
        runs = {m: [] for m in order}
        warnings = []
        for r in range(a.runs):
            for what in order[r % len(order):] + order[:r % len(order)]:
                t, err = (ours if what == "ours" else forge).cold(mode_env(env, what), "--lib")
                runs[what].append(t)
                print(f"  {key} run {r + 1}: {what} {t:.1f} s", file=sys.stderr)
                if what == "ours":
                    warnings = said(err, name)
        linked = "-"
        if "ours" in order:
            archive = max(glob.glob(os.path.join(ours.target, "debug", "build", f"{name}-*", "out", f"lib{lib}.a")), key=os.path.getmtime)
            exported = exported_functions(archive)
            if declared - exported:
                sys.exit(f"{crate}: its Rust side declares {sorted(declared - exported)}, which lib{lib}.a does not define")
            lib_rs, bin_rs = link_check(name, sorted(exported))
            ours.write("src/lib.rs", lib_rs)
            os.makedirs(os.path.join(ours.dir, "src", "bin"), exist_ok=True)
            ours.write("src/bin/linked.rs", bin_rs)
            p = subprocess.run(["cargo", "run", "-q", "--bin", "linked", "--target-dir", ours.target, "--offline"],
                               cwd=ours.dir, env=env, capture_output=True, text=True)
            if p.stdout.strip() != f"{len(exported)} functions linked":
                sys.exit(f"{crate}: the link check printed {p.stdout.strip()!r}, expected {len(exported)}:\n{p.stderr[-6000:]}")
            linked = f"{len(exported)} ({len(declared)} declared by name)"
            print(f"  {key}: ptx-build's warnings ({len(warnings)}): " + " / ".join(warnings), file=sys.stderr)
        med = {k: statistics.median(v) for k, v in runs.items() if v}
        rows.append((crate, len(files), linked, med, runs))
    print(f"\nmistral.rs {a.version} static libraries, `sm_80`; ptx-build at {rev} (working tree), cudaforge 0.1.6, "
          f"{os.cpu_count()} CPUs, {a.runs} runs interleaved, medians\n")
    print("| library | files | C functions linked | ptx-build | cudaforge (their build.rs) | cudaforge, every CPU | ptx-build vs each |")
    print("|---|---|---|---|---|---|---|")
    for crate, nfiles, linked, med, _ in rows:
        cell = lambda k: f"{med[k]:.1f} s" if k in med else "-"
        ratio = " / ".join(f"{med['ours'] / med[k]:.2f}x" for k in ("forge", "forge-all") if k in med and "ours" in med)
        print(f"| {crate} | {nfiles} | {linked} | {cell('ours')} | {cell('forge')} | {cell('forge-all')} | {ratio} |")
    print("\nruns (s): " + "; ".join(f"{crate} {k} [{', '.join(f'{x:.1f}' for x in v)}]"
                                    for crate, _, _, _, runs in rows for k, v in runs.items()))
    keep_or_remove(work, a.keep)


if __name__ == "__main__":
    main()
