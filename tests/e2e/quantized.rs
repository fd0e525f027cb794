//! A CUDA library in candle's style through build.rs: quantized kernels stamped out by macros
//! over `const void *` blocks, headers shared by several .cu files, and a kernel that truly has
//! no typed form. The `void *` parameters take any device buffer, and a no-op build says at most
//! one line per module.

use std::path::Path;
use std::process::Command;

use crate::build_script::{build_script_ran, cargo_build, cuda_host, generated_module, write_at};
use crate::common;

/// Shared by every .cu file, as candle's `cuda_utils.cuh`.
const COMPAT: &str = r#"#pragma once
#include <stdint.h>
#include <cuda_fp16.h>

static __device__ __forceinline__ int global_index() { return blockIdx.x * blockDim.x + threadIdx.x; }
"#;

/// ggml's block layouts, as candle's quantized.cu declares them.
const QUANTS: &str = r#"#pragma once
#include "compat.cuh"

typedef float dfloat; // candle's: the type dequantized values are computed in

#define QK8_0 32
typedef struct {
    half d;
    int8_t qs[QK8_0];
} block_q8_0;

#define QK8_1 32
typedef struct {
    half d;
    half s;
    int8_t qs[QK8_1];
} block_q8_1;
"#;

const QUANTIZED: &str = r#"#include "quants.cuh"

// One macro, one kernel per output type, over blocks of any layout behind `const void *`.
#define DEQUANTIZE_Q8_0(NAME, DST_T, CONVERT)                                                    \
    extern "C" __global__ void NAME(const void * __restrict__ vx, DST_T * __restrict__ y, const int k) { \
        const int i = global_index();                                                            \
        if (i >= k) return;                                                                      \
        const block_q8_0 *x = (const block_q8_0 *) vx;                                           \
        const float v = __half2float(x[i / QK8_0].d) * x[i / QK8_0].qs[i % QK8_0];               \
        y[i] = CONVERT(v);                                                                       \
    }

DEQUANTIZE_Q8_0(dequantize_block_q8_0_f32, float, )
DEQUANTIZE_Q8_0(dequantize_block_q8_0_f16, half, __float2half)
DEQUANTIZE_Q8_0(dequantize_block_q8_K_f32, float, )

extern "C" __global__ void quantize_q8_1(const float * __restrict__ x, void * __restrict__ vy, const int kx, const int kx_padded) {
    const int i = global_index();
    if (i >= kx_padded) return;
    block_q8_1 *y = (block_q8_1 *) vy;
    const float xi = i < kx ? x[i] : 0.0f;
    y[i / QK8_1].qs[i % QK8_1] = (int8_t) roundf(xi);
    if (i % QK8_1 == 0) {
        y[i / QK8_1].d = __float2half(1.0f);
        y[i / QK8_1].s = __float2half(0.0f);
    }
}

// A parameter through a typedef of the shared header.
extern "C" __global__ void scale_dfloat(dfloat * __restrict__ y, const dfloat s, const int k) {
    const int i = global_index();
    if (i < k) y[i] *= s;
}

extern "C" __global__ void mul_mat_vec_q8_0_q8_1_cuda1(const void * __restrict__ vx, const void * __restrict__ vy, float * __restrict__ dst, const int ncols_x, const int nrows_x) {
    const int row = global_index();
    if (row >= nrows_x) return;
    const block_q8_0 *x = (const block_q8_0 *) vx;
    const block_q8_1 *y = (const block_q8_1 *) vy;
    float sum = 0.0f;
    for (int b = 0; b < ncols_x / QK8_0; ++b) {
        int acc = 0;
        for (int j = 0; j < QK8_0; ++j) acc += x[row * (ncols_x / QK8_0) + b].qs[j] * y[b].qs[j];
        sum += __half2float(x[row * (ncols_x / QK8_0) + b].d) * __half2float(y[b].d) * acc;
    }
    dst[row] = sum;
}
"#;

const BYTES: &str = r#"#include "compat.cuh"

extern "C" __global__ void copy_bytes(const void *src, void *dst, size_t n) {
    const size_t i = global_index();
    if (i < n) ((uint8_t *) dst)[i] = ((const uint8_t *) src)[i];
}

// Rows through a table of row pointers: a buffer of device addresses.
extern "C" __global__ void gather_rows(const float * const * rows, float *out, int ncols) {
    const int i = global_index();
    out[i] = rows[i / ncols][i % ncols];
}

// A struct by value that the host does not define: no typed launch.
struct Strides { int s[4]; };
extern "C" __global__ void strided_copy(const float *src, float *dst, Strides st) {
    const int i = global_index();
    dst[i] = src[i * st.s[0]];
}
"#;

/// The calls compile only if every `void *` parameter takes buffers of any element type (`u8`
/// and `f32` to the same parameter), views and raw addresses.
const USES: &str = r#"
use ptx_runtime::cudarc::driver::{CudaSlice, CudaStream, CudaView, CudaViewMut, LaunchConfig};
use ptx_runtime::half::f16;
use ptx_runtime::DeviceAddress;

#[allow(dead_code, clippy::too_many_arguments)]
unsafe fn call(k: &kernels::Kernels, s: &CudaStream, cfg: LaunchConfig, blocks: &CudaSlice<u8>, floats: &CudaSlice<f32>,
    y: &mut CudaSlice<f32>, yh: &mut CudaSlice<f16>, q: &mut CudaSlice<u8>, view: CudaView<'_, u8>, mut out: CudaViewMut<'_, u16>, raw: DeviceAddress, rows: &CudaSlice<u64>) {
    unsafe {
        k.dequantize_block_q8_0_f32(s, cfg, blocks, y, 64).unwrap();
        k.dequantize_block_q8_0_f32(s, cfg, floats, y, 64).unwrap();
        k.dequantize_block_q8_0_f16(s, cfg, &view, yh, 64).unwrap();
        k.dequantize_block_q8_K_f32(s, cfg, blocks, y, 64).unwrap();
        let _ = k.plan_of("dequantize_block_q8_K_f32", 0);
        k.quantize_q8_1(s, cfg, floats, q, 64, 64).unwrap();
        k.quantize_q8_1(s, cfg, floats, y, 64, 64).unwrap();
        k.quantize_q8_1(s, cfg, floats, &mut out, 64, 64).unwrap();
        k.scale_dfloat(s, cfg, y, 2.0f32, 64).unwrap();
        k.mul_mat_vec_q8_0_q8_1_cuda1(s, cfg, blocks, &raw, y, 64, 2).unwrap();
        k.copy_bytes(s, cfg, &raw, &mut DeviceAddress(raw.0 + 64), 64usize).unwrap();
        k.gather_rows(s, cfg, rows, y, 64).unwrap();
        let _ = k.launch_builder(s, "strided_copy");
    }
}
"#;

fn quantized_host(host: &str) -> tempfile::TempDir {
    cuda_host(
        host,
        &[("cuda/compat.cuh", COMPAT), ("cuda/quants.cuh", QUANTS), ("cuda/quantized.cu", QUANTIZED), ("cuda/bytes.cu", BYTES)],
        USES,
    )
}

/// `cargo build -v` of the host with extra variables.
fn cargo_build_with(dir: &Path, vars: &[(&str, &str)]) -> (bool, String) {
    let mut cmd = Command::new(env!("CARGO"));
    cmd.args(["build", "-v"])
        .current_dir(dir.join("host"))
        .env("CARGO_TARGET_DIR", Path::new(env!("CARGO_TARGET_TMPDIR")).join("host-target"))
        .env_remove("CARGO_PTX_ARCH")
        // A launcher (sccache) keeps no preprocessed unit: the counts of nvcc runs would differ.
        .env_remove("CARGO_PTX_LAUNCHER");
    cmd.envs(vars.iter().copied());
    let out = cmd.output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn warning_lines<'a>(log: &'a str, host: &str) -> Vec<&'a str> {
    log.lines().filter(|l| l.starts_with(&format!("warning: {host}@0.1.0:"))).collect()
}

fn candle_style_void_pointer_kernels_are_typed_and_a_no_op_build_says_one_line() {
    common::nvcc();
    let p = quantized_host("host_quantized");
    let (ok, log) = cargo_build(p.path());
    assert!(ok, "the host's calls compile against buffers of two element types:\n{log}");
    let generated = generated_module("host_quantized");
    assert!(generated.contains("vx: &impl ::ptx_runtime::DeviceAnyIn"), "{generated}");
    assert!(generated.contains("vy: &mut impl ::ptx_runtime::DeviceAnyInOut"), "{generated}");
    // The macro's kernels are documented at the line of the macro's use.
    assert!(generated.contains("quantized.cu:13)") && generated.contains("quantized.cu:14)"), "{generated}");
    // Methods keep ggml's names (`q8_K`): no lint warning from the generated module.
    assert!(!log.contains("warning: `host_quantized` (lib) generated"), "{log}");

    // `quantized` is typed entirely: no line for it; `bytes` has one untyped kernel: one line.
    let lines = warning_lines(&log, "host_quantized");
    assert_eq!(lines.len(), 1, "{log}");
    assert!(lines[0].contains("1 of 3 kernels of `bytes` has no typed launch method"), "{log}");
    let (ok, noop) = cargo_build(p.path());
    assert!(ok && !build_script_ran(&noop), "{noop}");
    assert_eq!(warning_lines(&noop, "host_quantized"), lines, "a no-op build replays the same one line:\n{noop}");

    // The whole list, on demand: the build script reruns for the variable.
    let (ok, log) = cargo_build_with(p.path(), &[("CARGO_PTX_VERBOSE", "1")]);
    assert!(ok && build_script_ran(&log), "{log}");
    let lines = warning_lines(&log, "host_quantized");
    assert_eq!(lines.len(), 2, "the count, then one line per untyped kernel:\n{log}");
    assert!(
        lines[1].contains("`strided_copy` (") && lines[1].contains("bytes.cu:16): parameter `st`: the host crate has no type `Strides`"),
        "{log}"
    );

    // Accepted silently: no line, on this build or the no-op after it.
    let manifest = p.path().join("host/Cargo.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(3600);
    write_at(&manifest, &format!("{text}[package.metadata.ptx]\nuntyped-kernels = \"allow\"\n"), later);
    let (ok, log) = cargo_build(p.path());
    assert!(ok && build_script_ran(&log), "{log}");
    assert!(warning_lines(&log, "host_quantized").is_empty(), "{log}");
    let (ok, noop) = cargo_build(p.path());
    assert!(ok && warning_lines(&noop, "host_quantized").is_empty(), "{noop}");
}

/// C++ the way DeepSpeed and llama.cpp write it: templates over `bool`, enum and `size_t`
/// values, instantiated explicitly or by a host launcher's `switch` (ggml's `static` kernels), a
/// plain kernel and a template of one name, two templates of one name, template parameters in
/// snake case, all in a host whose module is included by a binary. Value templates get methods
/// generic over const parameters (`k.ssm_scan::<128, 16>(..)`), a template over a device
/// function over its marker types (`k.unary_op::<kernels::gelu::op_abs>(..)`, the function a
/// `static` one); a combination the PTX lacks does not compile and the error lists those it
/// has; only the template over a template is launched by name. Parameters through a header's
/// typedefs (sppark's `fr_t`) take the types the mangled names spell; a kernel whose `extern "C"`
/// a macro spells (boojum-cuda's `EXTERN`) is typed from the preprocessed unit. No warning from
/// the module.
fn cxx_value_templates_get_const_generic_methods_and_overloads_build_quietly() {
    common::nvcc();
    const GELU: &str = r#"#include <cuda_fp16.h>
__global__ void fused_bias_residual(float* r, const float* x, int n) { int i = threadIdx.x; if (i < n) r[i] += x[i]; }
template <typename T>
__global__ void fused_bias_residual(T* r, const T* x, int n) { int i = threadIdx.x; if (i < n) r[i] = __hadd(r[i], x[i]); }
template __global__ void fused_bias_residual<__half>(__half*, const __half*, int);

template <bool has_bias>
__global__ void add_bias(float* y, const float* b, int n) { int i = threadIdx.x; if (i < n) y[i] += has_bias ? b[i] : 0.f; }
template __global__ void add_bias<true>(float*, const float*, int);
template __global__ void add_bias<false>(float*, const float*, int);

template <typename src_t, typename dst_t>
__global__ void convert(const src_t* x, dst_t* y, int n) { int i = threadIdx.x; if (i < n) y[i] = (dst_t)x[i]; }
template __global__ void convert<float, __half>(const float*, __half*, int);

static __device__ float op_abs(const float x) { return fabsf(x); }
static __device__ float op_neg(const float x) { return -x; }
template <float (*op)(const float)>
static __global__ void unary_op(const float* x, float* y, int n) { int i = threadIdx.x; if (i < n) y[i] = op(x[i]); }
void unary_cuda(const float* x, float* y, int n, bool neg, cudaStream_t s) {
    if (neg) unary_op<op_neg><<<1, 32, 0, s>>>(x, y, n); else unary_op<op_abs><<<1, 32, 0, s>>>(x, y, n);
}

template <typename T> struct Vec2 { T x, y; };
template <template <typename> class V>
__global__ void k_tt(float* x) { x[0] = sizeof(V<float>); }
template __global__ void k_tt<Vec2>(float*);
"#;
    const ARGSORT: &str = r#"#include <stddef.h>
#include "field.cuh"
enum sort_order { SORT_ASC, SORT_DESC };
template <sort_order order>
__global__ void k_argsort(const float* x, int* dst, int n) { int i = threadIdx.x; if (i < n) dst[i] = order == SORT_ASC ? i : n - 1 - i; }
template __global__ void k_argsort<SORT_ASC>(const float*, int*, int);
template __global__ void k_argsort<SORT_DESC>(const float*, int*, int);

template <size_t splitD, size_t N>
__global__ void ssm_scan(const float* x, float* y, int n) { int i = threadIdx.x; if (i < n) y[i] = x[i] * splitD + N; }
template __global__ void ssm_scan<128, 16>(const float*, float*, int);
template __global__ void ssm_scan<128, 256>(const float*, float*, int);

template <typename T>
__global__ void dequantize(T* out, const signed char* in, const float* scale, int n, int groups) { int i = threadIdx.x; if (i < n) out[i] = T(in[i] * scale[i / groups]); }
template <typename T>
__global__ void dequantize(T* out, const signed char* in, const float* scale, unsigned n) { unsigned i = threadIdx.x; if (i < n) out[i] = T(in[i] * scale[0]); }
template __global__ void dequantize<float>(float*, const signed char*, const float*, int, int);
template __global__ void dequantize<float>(float*, const signed char*, const float*, unsigned);

// Two names that are one in CamelCase: instance types of their own, and no lint warning.
template <int N> __global__ void addOne(float* x) { x[0] += N; }
template __global__ void addOne<1>(float*);
template <int N> __global__ void add_one(float* x) { x[0] += N; }
template __global__ void add_one<2>(float*);

// ggml's mmvf.cu: a `static` template over a type and values, instantiated by the host
// launcher's switch, never explicitly.
template <typename T, int ncols_dst, bool has_fusion>
static __global__ void mul_mat_vec_f(const T* x, const float* y, float* dst, const int ncols2) {
    int i = threadIdx.x; if (i < ncols2) dst[i] = (float)x[i] * y[i] * ncols_dst + (has_fusion ? 1.f : 0.f);
}
template <typename T>
static void launch_mul_mat_vec_f(const T* x, const float* y, float* dst, int ncols, int ncols_dst, bool fusion, cudaStream_t s) {
    switch (ncols_dst) {
        case 1: if (fusion) mul_mat_vec_f<T, 1, true><<<1, 32, 0, s>>>(x, y, dst, ncols); else mul_mat_vec_f<T, 1, false><<<1, 32, 0, s>>>(x, y, dst, ncols); break;
        default: mul_mat_vec_f<T, 8, false><<<1, 32, 0, s>>>(x, y, dst, ncols); break;
    }
}
void mul_mat_vec_f_cuda(const float* x, const float* y, float* dst, int ncols, int ncols_dst, bool fusion, cudaStream_t s) {
    launch_mul_mat_vec_f(x, y, dst, ncols, ncols_dst, fusion, s);
}

// sppark's style: parameters through a header's typedefs, which the mangled names spell by
// what they stand for.
template <int POW>
__global__ void fr_pow(fr_t* x, const real* w, real s, size_t n) { size_t i = threadIdx.x; if (i < n) x[i].v = x[i].v * POW + (unsigned long long)(w[i] * s); }
template __global__ void fr_pow<3>(fr_t*, const real*, real, size_t);
template __global__ void fr_pow<7>(fr_t*, const real*, real, size_t);
__global__ void fr_scale(fr_t* x, real s) { x[threadIdx.x].v *= (unsigned long long)s; }

// boojum-cuda's style: C linkage through a macro, which the text alone reads as C++.
#define EXTERN extern "C" [[maybe_unused]]
EXTERN __global__ void pow_search(const unsigned long long* seed, const unsigned bits, unsigned long long* result) {
    if (threadIdx.x == 0) result[0] = seed[0] >> bits;
}

// cuBLAS's batched style: arrays of device addresses, one matrix or vector each.
__global__ void gemv_batched(const float *const *A, const float *const *x, float **y, int n) {
    int b = blockIdx.x, i = threadIdx.x; if (i < n) y[b][i] = A[b][i] * x[b][i];
}
template <typename T>
__global__ void scale_batched(T *const *xs, T a, int n) { if (threadIdx.x < n) xs[blockIdx.x][threadIdx.x] *= a; }
template __global__ void scale_batched<float>(float *const *, float, int);
template __global__ void scale_batched<double>(double *const *, double, int);
template <typename T>
__global__ void zero_batched(T **xs, int n) { if (threadIdx.x < n) xs[blockIdx.x][threadIdx.x] = T(0); }
template __global__ void zero_batched<float>(float **, int);
template __global__ void zero_batched<double>(double **, int);
"#;
    const FIELD: &str = "#pragma once\nstruct gl64_t { unsigned long long v; };\ntypedef gl64_t fr_t;\ntypedef float real;\n";
    let p = cuda_host("host_cxx_values", &[("cuda/gelu.cu", GELU), ("cuda/argsort.cu", ARGSORT), ("cuda/field.cuh", FIELD)], "");
    let host = p.path().join("host");
    // The README's form in a binary: `mod kernels { include_kernels!(); }` in main.rs, one typed
    // method of each overload used, the rest of the module not.
    std::fs::write(host.join("src/lib.rs"), "").unwrap();
    let main_rs = r#"mod kernels { ptx_runtime::include_kernels!(); }
use ptx_runtime::cudarc::driver::{CudaSlice, CudaStream, LaunchConfig};
use ptx_runtime::half::f16;
#[allow(non_camel_case_types, dead_code)]
#[repr(C)]
#[derive(Clone, Copy)]
struct gl64_t { v: u64 }
unsafe impl ptx_runtime::cudarc::driver::DeviceRepr for gl64_t {}
#[allow(clippy::too_many_arguments)]
unsafe fn launch(k: &kernels::Kernels, s: &CudaStream, cfg: LaunchConfig, r: &mut CudaSlice<f32>, x: &CudaSlice<f32>, h: &mut CudaSlice<f16>, h2: &CudaSlice<f16>, q: &CudaSlice<i8>, idx: &mut CudaSlice<i32>, fr: &mut CudaSlice<gl64_t>, seed: &CudaSlice<u64>, found: &mut CudaSlice<u64>) {
    unsafe {
        // Buffers of device addresses are buffers of `u64`.
        k.gemv_batched(s, cfg, seed, seed, found, 4).unwrap();
        k.scale_batched::<f64>(s, cfg, seed, 2.0f64, 4).unwrap();
        k.scale_batched(s, cfg, seed, 2.0f32, 4).unwrap();
        k.zero_batched::<f64>(s, cfg, found, 4).unwrap();
        k.pow_search(s, cfg, seed, 3u32, found).unwrap();
        k.fr_pow::<7>(s, cfg, fr, x, 2.0f32, 4usize).unwrap();
        k.fr_scale(s, cfg, fr, 2.0f32).unwrap();
        k.fused_bias_residual_f32_f32_i32(s, cfg, r, x, 4).unwrap();
        k.fused_bias_residual::<f16>(s, cfg, h, h2, 4).unwrap();
        k.convert::<f32, f16>(s, cfg, x, h, 4).unwrap();
        k.dequantize_t_i8_f32_i32_i32::<f32>(s, cfg, r, q, x, 4, 2).unwrap();
        k.dequantize_t_i8_f32_u32::<f32>(s, cfg, r, q, x, 4).unwrap();
        k.add_bias::<true>(s, cfg, r, x, 4).unwrap();
        k.k_argsort::<1>(s, cfg, x, idx, 4).unwrap();
        k.ssm_scan::<128, 256>(s, cfg, x, r, 4).unwrap();
        k.mul_mat_vec_f::<f32, 1, true>(s, cfg, x, x, r, 4).unwrap();
        k.mul_mat_vec_f::<f32, 8, false>(s, cfg, x, x, r, 4).unwrap();
        k.unary_op::<kernels::gelu::op_abs>(s, cfg, x, r, 4).unwrap();
        k.unary_op::<kernels::gelu::op_neg>(s, cfg, x, r, 4).unwrap();
        k.addOne::<1>(s, cfg, r).unwrap();
        k.add_one::<2>(s, cfg, r).unwrap();
    }
}
fn main() {
    let _ = launch;
    println!("{}", kernels::KERNEL_NAMES.len());
}
"#;
    std::fs::write(host.join("src/main.rs"), main_rs).unwrap();
    let (ok, log) = cargo_build(p.path());
    assert!(ok, "every method compiles against cudarc buffers:\n{log}");
    assert!(!log.contains("warning: `host_cxx_values` (bin"), "no warning from the generated module:\n{log}");
    assert!(!log.contains("never used") && !log.contains("camel case") && !log.contains("upper case"), "{log}");
    let lines = warning_lines(&log, "host_cxx_values");
    assert_eq!(lines.len(), 1, "one line for the crate:\n{log}");
    assert!(lines[0].contains("1 of 8 kernels of `gelu` has no typed launch method"), "{log}");
    let generated = generated_module("host_cxx_values");
    assert!(generated.contains("`order` is a `sort_order` by its integer value."), "{generated}");
    // What a buffer of `u64` holds, said where its type no longer does.
    assert!(
        generated.contains("/// `A`: device addresses (`u64`, as cudarc's `DevicePtr::device_ptr` gives them), each a `*const f32`."),
        "{generated}"
    );
    let (ok, log) = cargo_build_with(p.path(), &[("CARGO_PTX_VERBOSE", "1")]);
    assert!(ok, "{log}");
    for expected in ["`_Z4k_ttI4Vec2EvPf`", "template parameter `template class V` is a template template parameter"] {
        assert!(log.contains(expected), "`{expected}` in:\n{log}");
    }

    // A combination no instance has is a compile error that names the ones there are.
    std::fs::write(host.join("src/main.rs"), main_rs.replace("ssm_scan::<128, 256>", "ssm_scan::<64, 256>")).unwrap();
    let (ok, log) = cargo_build(p.path());
    assert!(!ok, "{log}");
    assert!(log.contains("the trait bound `SsmScanInstance<64, 256>: SsmScanInstances` is not satisfied"), "{log}");
    assert!(log.contains("SsmScanInstance<128, 16>") && log.contains("SsmScanInstance<128, 256>"), "{log}");
}

fn a_value_that_is_not_device_memory_for_void_pointer_says_what_to_pass() {
    common::nvcc();
    let p = quantized_host("host_quantized_wrong");
    let lib = p.path().join("host/src/lib.rs");
    let text = std::fs::read_to_string(&lib).unwrap();
    write_at(
        &lib,
        &text.replace("k.dequantize_block_q8_0_f32(s, cfg, floats, y, 64)", "k.dequantize_block_q8_0_f32(s, cfg, &64u32, y, 64)"),
        std::time::SystemTime::now(),
    );
    let (ok, log) = cargo_build(p.path());
    assert!(!ok, "{log}");
    assert!(log.contains("`u32` is not device memory that the kernel can read"), "{log}");
    assert!(log.contains("the kernel parameter is `const void *`: pass `&CudaSlice<T>` or `&CudaView<T>` of any element type"), "{log}");
}

fn a_cuda_struct_without_a_host_twin_is_launched_by_name_until_the_host_defines_it() {
    common::nvcc();
    let cu = "struct Params {\n    float scale;\n    int n;\n};\n\nextern \"C\" __global__ void scale_rows(Params p, float *x) {\n    if (threadIdx.x < p.n) x[threadIdx.x] *= p.scale;\n}\nextern \"C\" __global__ void zero(float *x) { x[threadIdx.x] = 0.0f; }\n";
    let by_name = "#[allow(dead_code)]\nfn by_name(k: &kernels::Kernels, s: &ptx_runtime::cudarc::driver::CudaStream) -> bool {\n    k.launch_builder(s, \"scale_rows\").is_some()\n}\n";
    let p = cuda_host("host_no_twin", &[("cuda/rows.cu", cu)], by_name);
    let (ok, log) = cargo_build(p.path());
    assert!(ok, "the generated module compiles without a host `Params`:\n{log}");
    let lines = warning_lines(&log, "host_no_twin");
    assert_eq!(lines.len(), 1, "{log}");
    assert!(lines[0].contains("1 of 2 kernels of `rows` has no typed launch method"), "{log}");
    let list = std::fs::read_to_string(lines[0].split(" in ").nth(1).and_then(|r| r.split(" (or set").next()).unwrap()).unwrap();
    assert!(list.contains("`scale_rows` (") && list.contains("rows.cu:6): parameter `p`: the host crate has no type `Params`"), "{list}");

    // The host defines the twin: the build script reruns and the kernel is typed.
    let twin = "#[repr(C)]\n#[derive(Clone, Copy)]\npub struct Params {\n    pub scale: f32,\n    pub n: i32,\n}\nunsafe impl ptx_runtime::cudarc::driver::DeviceRepr for Params {}\n#[allow(dead_code)]\nunsafe fn call(k: &kernels::Kernels, s: &ptx_runtime::cudarc::driver::CudaStream, cfg: ptx_runtime::cudarc::driver::LaunchConfig, x: &mut ptx_runtime::cudarc::driver::CudaSlice<f32>) {\n    unsafe { k.scale_rows(s, cfg, Params { scale: 2.0, n: 4 }, x).unwrap() };\n}\n";
    let lib = p.path().join("host/src/lib.rs");
    let text = std::fs::read_to_string(&lib).unwrap();
    write_at(&lib, &format!("{text}{twin}"), std::time::SystemTime::now() + std::time::Duration::from_secs(3600));
    let (ok, log) = cargo_build(p.path());
    assert!(ok && build_script_ran(&log), "{log}");
    assert!(warning_lines(&log, "host_no_twin").is_empty(), "every kernel is typed:\n{log}");
}

/// One inline-PTX pattern at four places (a header of store helpers, as vendored ggml code has).
const STORES: &str = r#"__device__ __forceinline__ void st_a(unsigned *p, unsigned v) { asm volatile("st.global.u32 [%0], %1;" :: "l"(p), "r"(v)); }
__device__ __forceinline__ void st_b(unsigned *p, unsigned v) { asm volatile("st.global.u32 [%0], %1;" :: "l"(p + 1), "r"(v)); }
__device__ __forceinline__ void st_c(unsigned *p, unsigned v) { asm volatile("st.global.u32 [%0], %1;" :: "l"(p + 2), "r"(v)); }
__device__ __forceinline__ void st_d(unsigned *p, unsigned v) { asm volatile("st.global.u32 [%0], %1;" :: "l"(p + 3), "r"(v)); }

extern "C" __global__ void stores(unsigned *p) { st_a(p, 1); st_b(p, 2); st_c(p, 3); st_d(p, 4); }
"#;

fn a_warning_repeated_at_many_places_is_one_warning_and_one_line_naming_the_rest() {
    common::nvcc();
    let p = cuda_host("host_repeated", &[("cuda/stores.cu", STORES)], "");
    let (ok, log) = cargo_build(p.path());
    assert!(ok, "{log}");
    let lines = warning_lines(&log, "host_repeated");
    let clobber = "asm writes memory (`st.global.u32`) without a \"memory\" clobber";
    assert_eq!(lines.iter().filter(|l| l.contains(clobber)).count(), 1, "{log}");
    assert!(lines.iter().any(|l| l.contains("stores.cu:1:")), "the first place in full:\n{log}");
    let rest = lines.iter().find(|l| l.contains("the same warning at 3 more places")).unwrap_or_else(|| panic!("{log}"));
    assert!(rest.contains("stores.cu:2, ") && rest.contains("stores.cu:4") && rest.contains("CARGO_PTX_VERBOSE=1"), "{rest}");
    assert_eq!(lines.len(), 7, "one warning in full (6 lines), one line for the rest:\n{log}");

    // Each in full on demand.
    let (ok, log) = cargo_build_with(p.path(), &[("CARGO_PTX_VERBOSE", "1")]);
    assert!(ok, "{log}");
    assert_eq!(warning_lines(&log, "host_repeated").iter().filter(|l| l.contains(clobber)).count(), 4, "{log}");
}

/// A second checkout at another path with the machine's step cache warm starts no nvcc at all:
/// the PTX is fetched, and so are the signatures of the kernels macros stamp out, which nvcc's
/// preprocessor would otherwise have to read again for each file. Both get the same module.
fn a_second_checkout_reads_macro_stamped_signatures_from_the_shared_cache() {
    let real = common::nvcc();
    let scratch = tempfile::tempdir().unwrap();
    let (log, cache) = (scratch.path().join("nvcc.log"), scratch.path().join("steps"));
    let wrapper = common::logging_wrapper(&scratch.path().join("nvcc"), &real, &log, "");
    let vars = [("NVCC", wrapper.to_str().unwrap()), ("CARGO_PTX_CACHE_DIR", cache.to_str().unwrap())];
    // What nvcc was asked to compile or preprocess since the last call (not `--version`).
    let runs = || {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        std::fs::remove_file(&log).ok();
        text.lines().filter(|l| l.split(' ').any(|a| a == "-ptx" || a == "-E")).map(str::to_string).collect::<Vec<_>>()
    };
    let (one, two) = (quantized_host("host_checkouts"), quantized_host("host_checkouts"));
    let (ok, first) = cargo_build_with(one.path(), &vars);
    assert!(ok, "{first}");
    assert_eq!(runs().len(), 2, "the first checkout compiles both files once (keeping their preprocessed units)");
    let module = generated_module("host_checkouts");
    assert!(module.contains("quantized.cu:13)"), "{module}");
    // The same target dir (cargo gives both the same unit): the stamps there name the first
    // checkout's files, so only the machine's cache can answer for the second.
    let (ok, second) = cargo_build_with(two.path(), &vars);
    assert!(ok && build_script_ran(&second), "{second}");
    assert_eq!(runs(), Vec::<String>::new(), "no nvcc for the second checkout:\n{second}");
    assert_eq!(warning_lines(&second, "host_checkouts"), warning_lines(&first, "host_checkouts"), "{second}");
    assert_eq!(generated_module("host_checkouts"), module, "the same typed methods, documented at the same files and lines");
}

/// candle's cast.cu in small: bf16 kernels stamped out under `#if __CUDA_ARCH__ >= 800`, an
/// older arch's fallback under `#else`, and a kernel no arch built has (`#ifdef` off).
const ARCH_GUARDED: &str = r#"#include "compat.cuh"
#include <cuda_bf16.h>
#define CAST_OP(SRC, DST, NAME) \
extern "C" __global__ void NAME(const size_t n, const SRC *in, DST *out) { \
    int i = global_index(); \
    if (i < n) out[i] = (DST)in[i]; \
}
CAST_OP(float, float, cast_f32_f32)
#if __CUDA_ARCH__ >= 800
CAST_OP(__nv_bfloat16, float, cast_bf16_f32)
extern "C" __global__ void scale_bf16(__nv_bfloat16 *x, float a) { x[0] = __float2bfloat16(a * __bfloat162float(x[0])); }
#else
extern "C" __global__ void scale_fallback(float *x, float a) { x[0] *= a; }
#endif
#ifdef USE_FP8
extern "C" __global__ void cast_f8_f32(const unsigned char *in, float *out) { out[0] = in[0]; }
#endif
"#;

/// [`cuda_host`] built for `sm_75,sm_80`, whose `#if __CUDA_ARCH__` branches differ.
fn two_arch_cuda_host(host: &str, files: &[(&str, &str)], uses: &str) -> tempfile::TempDir {
    let p = cuda_host(host, files, uses);
    write_at(
        p.path().join("host/build.rs"),
        "fn main() -> Result<(), ptx_build::Error> {\n    ptx_build::Builder::new().cuda(\"cuda/*.cu\").arch(\"sm_75,sm_80\").build()?;\n    Ok(())\n}\n",
        std::time::SystemTime::now() - std::time::Duration::from_secs(3600),
    );
    p
}

fn kernels_an_arch_leaves_out_are_typed_and_documented_with_the_archs_that_have_them() {
    common::nvcc();
    let uses = "#[allow(dead_code)]\nunsafe fn call(k: &kernels::Kernels, s: &ptx_runtime::cudarc::driver::CudaStream, cfg: ptx_runtime::cudarc::driver::LaunchConfig,\n    x: &ptx_runtime::cudarc::driver::CudaSlice<f32>, y: &mut ptx_runtime::cudarc::driver::CudaSlice<f32>,\n    b: &mut ptx_runtime::cudarc::driver::CudaSlice<ptx_runtime::half::bf16>) -> Result<(), ptx_runtime::LaunchError> {\n    unsafe {\n        k.cast_f32_f32(s, cfg, 4usize, x, y)?;\n        k.cast_bf16_f32(s, cfg, 4usize, b, y)?;\n        k.scale_bf16(s, cfg, b, 2.0)?;\n        k.scale_fallback(s, cfg, y, 2.0)\n    }\n}\n";
    let p = two_arch_cuda_host("host_arch_guarded", &[("cuda/compat.cuh", COMPAT), ("cuda/cast.cu", ARCH_GUARDED)], uses);
    let (ok, log) = cargo_build(p.path());
    assert!(ok, "every kernel of either arch has its method, and the calls compile:\n{log}");
    assert_eq!(warning_lines(&log, "host_arch_guarded"), Vec::<&str>::new(), "no kernel untyped:\n{log}");
    let module = generated_module("host_arch_guarded");
    let note = |archs: &str| {
        format!("/// It is only in the {archs} image (its source leaves it out for other archs): on a GPU that loads another image the launch returns `LaunchError::NotInImage`.")
    };
    for (kernel, archs) in [("cast_bf16_f32", "sm_80"), ("scale_bf16", "sm_80"), ("scale_fallback", "sm_75")] {
        let doc = module.split(&format!("/// Launches `{kernel}`")).nth(1).unwrap_or_else(|| panic!("{kernel}:\n{module}"));
        assert!(doc.split("pub unsafe fn").next().unwrap().contains(&note(archs)), "{kernel}:\n{module}");
    }
    let f32_doc = module.split("/// Launches `cast_f32_f32`").nth(1).unwrap().split("pub unsafe fn").next().unwrap();
    assert!(!f32_doc.contains("NotInImage"), "in every image:\n{module}");
    assert!(!module.contains("cast_f8_f32"), "no arch built it:\n{module}");
}

/// One kernel name defined on both sides of an arch's `#if` (nvcc compiles one side per arch):
/// the source text shows both definitions. Same parameters: one typed method. Other parameters
/// (a bf16 buffer for sm_80, a float one before): launched by name, with the reason; before, a
/// valid file failed the build as a kernel "defined twice".
const TWINS: &str = r#"#include <cuda_bf16.h>
#if __CUDA_ARCH__ >= 800
extern "C" __global__ void scale(__nv_bfloat16 *x, float a) { x[0] = __float2bfloat16(a * __bfloat162float(x[0])); }
extern "C" __global__ void add(float *x, float a) { x[0] = __fadd_rn(x[0], a); }
#else
extern "C" __global__ void scale(float *x, float a) { x[0] *= a; }
extern "C" __global__ void add(float *y, float b) { y[0] += b; }
#endif
"#;

/// The same with a macro-stamped kernel, whose signatures come from the preprocessed unit.
const TWINS_STAMPED: &str = r#"#include <cuda_bf16.h>
#define NEG(T, NAME) extern "C" __global__ void NAME(T *x) { x[0] = -x[0]; }
NEG(float, neg_f32)
#if __CUDA_ARCH__ >= 800
extern "C" __global__ void scale2(__nv_bfloat16 *x, float a) { x[0] = __float2bfloat16(a * __bfloat162float(x[0])); }
#else
extern "C" __global__ void scale2(float *x, float a) { x[0] *= a; }
#endif
"#;

fn a_kernel_defined_on_both_sides_of_an_arch_if_is_typed_once_or_launched_by_name() {
    common::nvcc();
    let uses = "#[allow(dead_code)]\nunsafe fn call(k: &kernels::Kernels, s: &ptx_runtime::cudarc::driver::CudaStream, cfg: ptx_runtime::cudarc::driver::LaunchConfig,\n    y: &mut ptx_runtime::cudarc::driver::CudaSlice<f32>) -> Result<(), ptx_runtime::LaunchError> {\n    unsafe {\n        k.add(s, cfg, y, 1.0)?;\n        k.neg_f32(s, cfg, y)\n    }\n}\n";
    let p = two_arch_cuda_host("host_twins", &[("cuda/twins.cu", TWINS), ("cuda/twins_stamped.cu", TWINS_STAMPED)], uses);
    let (ok, log) = cargo_build_with(p.path(), &[("CARGO_PTX_VERBOSE", "1")]);
    assert!(ok, "the file builds, and the typed calls compile:\n{log}");
    let module = generated_module("host_twins");
    assert_eq!(module.matches("pub unsafe fn add(").count(), 1, "{module}");
    assert!(!module.contains("pub unsafe fn scale(") && !module.contains("pub unsafe fn scale2("), "{module}");
    assert!(module.contains("\"scale\"") && module.contains("\"scale2\""), "both load, by name:\n{module}");
    for (kernel, first, second) in
        [("scale", "cuda/twins.cu:3", "cuda/twins.cu:6"), ("scale2", "cuda/twins_stamped.cu:5", "cuda/twins_stamped.cu:7")]
    {
        let reason =
            format!("its definitions under `#if`s ({first}, {second}) take other parameters: no one typed method fits every arch's image");
        assert!(log.contains(&format!("`{kernel}`")) && log.contains(&reason), "{kernel}: {reason}\n{log}");
    }
}

pub fn tests() -> Vec<crate::harness::Test> {
    crate::tests![
        kernels_an_arch_leaves_out_are_typed_and_documented_with_the_archs_that_have_them,
        a_kernel_defined_on_both_sides_of_an_arch_if_is_typed_once_or_launched_by_name,
        candle_style_void_pointer_kernels_are_typed_and_a_no_op_build_says_one_line,
        cxx_value_templates_get_const_generic_methods_and_overloads_build_quietly,
        a_value_that_is_not_device_memory_for_void_pointer_says_what_to_pass,
        a_cuda_struct_without_a_host_twin_is_launched_by_name_until_the_host_defines_it,
        a_warning_repeated_at_many_places_is_one_warning_and_one_line_naming_the_rest,
        a_second_checkout_reads_macro_stamped_signatures_from_the_shared_cache,
    ]
}
