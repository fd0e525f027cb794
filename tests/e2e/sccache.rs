//! nvcc and ptxas through sccache (`launcher`), with a Redis backend on loopback, as a team's CI
//! would run them: two runners, each with an empty local cache and a fresh checkout at the
//! runner's usual path; the second one's compiles are served from Redis.
//!
//! Needs `redis-server` (Debian's package; `.ci/run` installs it) and sccache (`cargo ptx setup
//! --with sccache`); where either is missing the test is ignored, with the reason (CI fails it).

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common;
use crate::common::{cargo_ptx, cuda, Run};
use crate::harness::require;

const KERNEL_CU: &str = "extern \"C\" __global__ void saxpy(int n, float a, const float *x, float *y) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) y[i] = a * x[i] + y[i];\n}\n";

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A child process killed when dropped.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn sccache() -> Option<PathBuf> {
    ptx_build::internals::tools::installed_tool("sccache").or_else(|| ptx_build::internals::tools::on_path("sccache"))
}

fn a_second_runner_gets_nvcc_and_ptxas_from_sccache_over_redis() {
    cuda();
    let redis = require(ptx_build::internals::tools::on_path("redis-server"), "redis-server on PATH (`apt-get install redis-server`)");
    let sccache = require(sccache(), "sccache (`cargo ptx setup --with sccache`)");
    let redis_port = free_port();
    let _redis = Server(
        Command::new(redis)
            .args(["--bind", "127.0.0.1", "--port", &redis_port.to_string(), "--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let started = Instant::now();
    while TcpStream::connect(("127.0.0.1", redis_port)).is_err() {
        assert!(started.elapsed() < Duration::from_secs(20), "redis-server did not start");
        std::thread::sleep(Duration::from_millis(50));
    }

    // The runner's path, the same for both runs (as on CI runners: nvcc writes absolute paths
    // into PTX line tables, so a hit needs the same checkout path).
    let runner = tempfile::tempdir().unwrap();
    let checkout = runner.path().join("work/repo");
    let sccache_port = free_port().to_string();
    let env = |c: &mut Command, local: &Path| {
        c.env("CARGO_PTX_LAUNCHER", &sccache)
            .env("CARGO_PTX_CACHE_DIR", "off")
            .env("SCCACHE_REDIS_ENDPOINT", format!("redis://127.0.0.1:{redis_port}"))
            .env("SCCACHE_SERVER_PORT", &sccache_port)
            .env("SCCACHE_DIR", local)
            .env("SCCACHE_IDLE_TIMEOUT", "120");
    };
    let stats = |local: &Path| -> serde_json::Value {
        let mut c = Command::new(&sccache);
        c.args(["--show-stats", "--stats-format", "json"]);
        env(&mut c, local);
        serde_json::from_slice(&c.output().unwrap().stdout).unwrap()
    };
    let stop = |local: &Path| {
        let mut c = Command::new(&sccache);
        c.arg("--stop-server").stdout(Stdio::null()).stderr(Stdio::null());
        env(&mut c, local);
        let _ = c.status();
    };

    let mut artifacts = Vec::new();
    let mut hits = Vec::new();
    for run in 0..2 {
        let _ = std::fs::remove_dir_all(&checkout);
        std::fs::create_dir_all(checkout.join("cuda")).unwrap();
        std::fs::write(checkout.join("cuda/saxpy.cu"), KERNEL_CU).unwrap();
        std::fs::create_dir_all(checkout.join("src")).unwrap();
        std::fs::write(checkout.join("src/lib.rs"), "").unwrap();
        std::fs::write(
            checkout.join("Cargo.toml"),
            "[package]\nname = \"ci_kernels\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[package.metadata.ptx]\narchs = [\"sm_80\"]\nrust = false\n\n[workspace]\n",
        )
        .unwrap();
        let local = tempfile::tempdir().unwrap();
        let mut cmd = cargo_ptx();
        cmd.arg("build").arg(&checkout).arg("--target-dir").arg(checkout.join("target")).args(["--message-format", "json"]);
        env(&mut cmd, local.path());
        Run::from(cmd.output().unwrap()).assert_ok();
        let s = stats(local.path());
        stop(local.path());
        let st = &s["stats"];
        hits.push((st["cache_hits"]["counts"].clone(), st["cache_misses"]["counts"].clone()));
        artifacts.push(
            ["ptx", "cubin"].map(|ext| std::fs::read(checkout.join(format!("target/ptx/release/ci_kernels/sm_80/saxpy.{ext}"))).unwrap()),
        );
        if run == 0 {
            assert!(hits[0].1.get("PTX").is_some() && hits[0].1.get("CUBIN").is_some(), "the first runner compiles: {s}");
        }
    }
    assert_eq!(hits[1].0.get("PTX"), Some(&serde_json::json!(1)), "nvcc served by sccache: {:?}", hits[1]);
    assert_eq!(hits[1].0.get("CUBIN"), Some(&serde_json::json!(1)), "ptxas served by sccache: {:?}", hits[1]);
    assert!(artifacts[0] == artifacts[1], "identical artifacts");
}

fn a_launcher_that_is_not_installed_is_named() {
    let k = common::KernelCrate::new("launcher_cuda", "archs = [\"sm_80\"]\nrust = false\nlauncher = \"no-such-launcher\"", "");
    k.write("cuda/k.cu", KERNEL_CU);
    k.build(&[]).assert_error(&["the launcher `no-such-launcher` not found", "cargo ptx setup --with sccache"]);
}

pub fn tests() -> Vec<crate::harness::Test> {
    crate::tests![a_second_runner_gets_nvcc_and_ptxas_from_sccache_over_redis, a_launcher_that_is_not_installed_is_named,]
}
