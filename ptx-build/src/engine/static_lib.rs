//! A crate of .cu files built into one static library (`Builder::cuda_static_lib`): each file
//! one `nvcc -c` step (all its archs in one run) on the job pool, then the archive step; both
//! are [`CachedStep`]s.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

use super::job::CrateJob;
use super::pool;
use super::steps::{CudaRecord, JobOut};
use super::CrateOutput;
use crate::cache::{CachedStep, Key, Outcome};
use crate::cuda::static_lib::{self, ObjectCompile};
use crate::diag::relative;
use crate::error::Result;
use crate::project::CudaSource;
use crate::report::{Event, Reporter};

/// What a static library needs at link time, beside itself.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct StaticLib {
    /// `lib<name>.a`.
    pub path: PathBuf,
    /// Its name, as `-l` takes it.
    pub name: String,
    /// The CUDA runtime's folder (`libcudart_static.a`).
    pub runtime_dir: PathBuf,
    /// The static libraries to link after it, in order (`cudart_static`, and `cudadevrt` for
    /// relocatable device code).
    pub static_libs: Vec<String>,
    /// The system libraries the runtime needs (`stdc++`, `dl`, `rt`, `pthread`).
    pub system_libs: Vec<String>,
    /// Whether every step was fresh.
    pub fresh: bool,
}

impl StaticLib {
    /// The lines that link it into the crate whose build script prints them.
    pub fn cargo_directives(&self) -> Vec<String> {
        let dir = self.path.parent().unwrap_or(std::path::Path::new("."));
        let mut out = vec![
            format!("cargo:rustc-link-search=native={}", dir.display()),
            format!("cargo:rustc-link-lib=static={}", self.name),
            format!("cargo:rustc-link-search=native={}", self.runtime_dir.display()),
        ];
        out.extend(self.static_libs.iter().map(|l| format!("cargo:rustc-link-lib=static={l}")));
        out.extend(self.system_libs.iter().map(|l| format!("cargo:rustc-link-lib=dylib={l}")));
        out
    }
}

impl CrateJob<'_> {
    /// Every .cu file to an object, in parallel, then the archive.
    pub(super) fn run_static_lib(&self, reporter: &dyn Reporter) -> Result<CrateOutput> {
        let spec = self.krate.static_lib.clone().expect("static-lib crates only");
        let Some(nvcc) = self.nvcc else { return Err(self.nvcc_missing()) };
        crate::cache::create_dir_all(&self.work)?;
        crate::cache::remove_stale(&self.work);
        crate::cache::remove_stale(&self.work.join("obj"));
        let runtime_dir = static_lib::runtime_dir(nvcc)?;
        let sources = &self.krate.cuda_sources;
        reporter.report(Event::Plan { steps: sources.len() + 1 });
        let all_fresh = AtomicBool::new(true);
        let mut order: Vec<usize> = (0..sources.len()).collect();
        pool::heaviest_first(&mut order, |i| &sources[*i].path, &self.work.join("weights.json"), |p| self.hash_of(p));
        let results = pool::parallel(self.jobs(), sources.len(), |j| {
            let i = order[j];
            let (out, fresh) = self.object(i, &sources[i], reporter)?;
            if !fresh {
                all_fresh.store(false, Ordering::SeqCst);
            }
            Ok(out)
        });
        let (_, inputs, _) = self.gather(results, reporter)?;
        self.check_header_asm(&inputs, reporter)?;
        let mut objects: Vec<PathBuf> = sources.iter().map(|s| self.object_path(s)).collect();

        let relocatable = static_lib::relocatable(&self.krate.config);
        if relocatable {
            let dlink = self.work.join("obj").join("device-link.o");
            let archs = self.all_archs();
            let mut k = Key::new("dlink-v1");
            k.str(&nvcc.tool.version).str(&nvcc.host_key());
            for a in &archs {
                k.str(&a.to_string());
            }
            for o in &objects {
                k.str(&crate::cache::file_hash(o).unwrap_or_default());
            }
            let step =
                CachedStep { stamp: self.work.join("dlink.json"), key: k.finish(), shared: None, outputs: vec![("obj", dlink.clone())] };
            let done = step.run(
                |_: &()| true,
                || {
                    reporter.report(Event::Status { verb: "Linking", message: format!("{} (device code)", spec.name) });
                    static_lib::device_link(nvcc, &archs, &objects, &dlink)
                },
            )?;
            if done.outcome != Outcome::Fresh {
                all_fresh.store(false, Ordering::SeqCst);
            }
            objects.push(dlink);
        }

        let lib = spec.dir.join(format!("lib{}.a", spec.name));
        let mut k = Key::new("static-lib-v1");
        for o in &objects {
            k.str(&o.file_name().unwrap_or_default().to_string_lossy()).str(&crate::cache::file_hash(o).unwrap_or_default());
        }
        let step = CachedStep { stamp: self.work.join("archive.json"), key: k.finish(), shared: None, outputs: vec![("lib", lib.clone())] };
        let done = step.run(
            |_: &()| true,
            || {
                reporter.report(Event::Status {
                    verb: "Archiving",
                    message: format!("lib{}.a ({} object{})", spec.name, objects.len(), if objects.len() == 1 { "" } else { "s" }),
                });
                crate::cache::create_dir_all(&spec.dir)?;
                static_lib::archive(&objects, &lib)
            },
        )?;
        reporter.report(Event::StepDone);
        let fresh = all_fresh.load(Ordering::SeqCst) && done.outcome == Outcome::Fresh;
        if fresh {
            reporter.report(Event::Status { verb: "Fresh", message: format!("lib{}.a", spec.name) });
        }
        let mut static_libs = vec!["cudart_static".to_string()];
        if relocatable {
            static_libs.push("cudadevrt".into());
        }
        Ok(CrateOutput {
            name: self.krate.name.clone(),
            lib_name: self.krate.lib_name.clone(),
            lib_src: None,
            manifest_path: self.krate.manifest_path.clone(),
            archs: self.all_archs(),
            kernels: Vec::new(),
            artifacts: Vec::new(),
            sources: inputs.into_iter().collect(),
            signatures: BTreeMap::new(),
            untyped_kernels: self.krate.config.untyped_kernels,
            static_lib: Some(StaticLib {
                path: lib,
                name: spec.name,
                runtime_dir,
                static_libs,
                system_libs: ["stdc++", "dl", "rt", "pthread"].map(String::from).to_vec(),
                fresh,
            }),
        })
    }

    fn object_path(&self, src: &CudaSource) -> PathBuf {
        self.work.join("obj").join(format!("{}.o", src.module))
    }

    /// One file's object for all its archs; whether it was fresh.
    fn object(&self, index: usize, src: &CudaSource, reporter: &dyn Reporter) -> Result<(JobOut, bool)> {
        let archs = &self.file_archs[index];
        let out = self.object_path(src);
        let lone = false;
        let compile = ObjectCompile {
            nvcc: self.nvcc.expect("checked by the caller"),
            source: src,
            config: &self.krate.config,
            package_dir: &self.krate.dir,
            archs,
            out: &out,
            work_dir: &self.work,
            launcher: self.launcher.as_deref(),
            include_help: self.opts.source.include_help(self.krate.options_table.as_ref(), lone),
        };
        let nvcc = compile.nvcc;
        // As for PTX: no path of this checkout in the step cache's key.
        let (key, shared) = self.nvcc_keys(("cuda-object-v2", "cuda-object-shared-v2"), nvcc, src, &compile.flags());
        let step =
            CachedStep { stamp: self.work.join(format!("object-{}.json", src.module)), key, shared, outputs: vec![("obj", out.clone())] };
        let done = step.run(
            |r: &CudaRecord| self.inputs_unchanged(&r.inputs),
            || {
                let archs: Vec<String> = archs.iter().map(ToString::to_string).collect();
                reporter.report(Event::Status {
                    verb: "Compiling",
                    message: format!(
                        "{} (CUDA, {}) for {}",
                        self.krate.name,
                        relative(&src.path, &self.krate.dir).display(),
                        archs.join(", ")
                    ),
                });
                let compiled = compile.run()?;
                let inputs = self.record_inputs(&compiled.read, nvcc);
                Ok(CudaRecord { inputs, kernels: Vec::new(), cooperative: Vec::new(), output: compiled.output })
            },
        )?;
        reporter.report(Event::StepDone);
        let inputs = done.meta.inputs.iter().map(|(p, _)| crate::diag::joined(&self.krate.dir, p)).collect();
        // One run for every arch: a warning of each arch's pass is one warning for them all.
        let names: Vec<String> = archs.iter().map(ToString::to_string).collect();
        let warnings = self.nvcc_warnings(&done.meta.output, archs[0], nvcc);
        let warnings = warnings.into_iter().map(|w| (w, names.join(", "))).collect();
        Ok((JobOut { artifacts: Vec::new(), inputs, cuda_signatures: None, warnings }, done.outcome == Outcome::Fresh))
    }
}
