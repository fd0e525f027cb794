//! The static library's host launchers on a GPU against the CPU. cudarc allocates and copies;
//! the library's `extern "C"` functions launch with `<<<...>>>` on cudarc's stream (the CUDA
//! runtime and cudarc share the device's primary context). ptx-runtime's test harness: without
//! a CUDA driver each GPU test reports `ignored (no GPU: <reason>)`.

use std::ffi::c_void;

use cuda_static_lib::{gather_scale_cpu, mmvq_cpu, tile_cpu, BlockQ8, Stream};
use ptx_runtime::cudarc::driver::{sys::CUdevice_attribute, CudaStream, DevicePtr, DevicePtrMut};
use ptx_runtime::half::f16;
use ptx_runtime::harness::{self, Context};

fn main() {
    harness::run(vec![
        harness::gpu("host_launchers_match_the_cpu", host_launchers_match_the_cpu),
        harness::gpu("the_fatbin_runs_this_gpus_own_cubin", the_fatbin_runs_this_gpus_own_cubin),
        harness::test("the_runtime_answers_without_crashing", the_runtime_answers_without_crashing),
    ]);
}

fn stream_of(s: &CudaStream) -> Stream {
    s.cu_stream() as Stream
}

/// A launcher's status: 0, or the runtime's error name in the failure.
fn ok(code: i32, what: &str) {
    assert_eq!(code, 0, "{what}: {}", cuda_static_lib::error_name(code));
}

fn host_launchers_match_the_cpu(ctx: &Context) {
    ctx.bind_to_thread().unwrap();
    let s = ctx.default_stream();
    let raw = stream_of(&s);

    // MoE gather-scale, f32 and f16 instances of one template. Multiples of 1/4 times small
    // weights: exact in f32 and f16.
    let n = 10_007usize;
    let inp: Vec<f32> = (0..4096).map(|i| (i % 200) as f32 * 0.25 - 25.0).collect();
    let ids: Vec<i32> = (0..n).map(|i| ((i * 7919) % 4096) as i32).collect();
    let w: Vec<f32> = (0..n).map(|i| (i % 5) as f32 * 0.5).collect();
    let want = gather_scale_cpu(&inp, &ids, &w);
    let inp_h: Vec<f16> = inp.iter().map(|v| f16::from_f32(*v)).collect();
    let (d_inp, d_inp_h, d_ids, d_w) =
        (s.clone_htod(&inp).unwrap(), s.clone_htod(&inp_h).unwrap(), s.clone_htod(&ids).unwrap(), s.clone_htod(&w).unwrap());
    for half in [false, true] {
        let mut d_out = s.alloc_zeros::<f32>(n).unwrap();
        {
            let (pi, _a) = d_ids.device_ptr(&s);
            let (pw, _b) = d_w.device_ptr(&s);
            let (po, _c) = d_out.device_ptr_mut(&s);
            let code = unsafe {
                if half {
                    let (px, _d) = d_inp_h.device_ptr(&s);
                    cuda_static_lib::moe_gather_scale_f16(
                        px as *const u16,
                        pi as *const i32,
                        pw as *const f32,
                        po as *mut f32,
                        n as i32,
                        raw,
                    )
                } else {
                    let (px, _d) = d_inp.device_ptr(&s);
                    cuda_static_lib::moe_gather_scale_f32(
                        px as *const f32,
                        pi as *const i32,
                        pw as *const f32,
                        po as *mut f32,
                        n as i32,
                        raw,
                    )
                }
            };
            ok(code, "moe_gather_scale");
        }
        assert_eq!(s.clone_dtoh(&d_out).unwrap(), want, "moe_gather_scale (f16 input: {half})");
    }
    // n = 0 is refused by the launcher before any launch.
    assert_ne!(
        unsafe {
            cuda_static_lib::moe_gather_scale_f32(std::ptr::null(), std::ptr::null(), std::ptr::null(), std::ptr::null_mut(), 0, raw)
        },
        0
    );

    // One tensor-core tile: small integers, exact in f16 and the f32 accumulator.
    let a: Vec<f32> = (0..256).map(|i| ((i * 3) % 7) as f32 - 3.0).collect();
    let b: Vec<f32> = (0..256).map(|i| ((i * 5) % 9) as f32 - 4.0).collect();
    let to_h = |v: &[f32]| v.iter().map(|x| f16::from_f32(*x)).collect::<Vec<f16>>();
    let (da, db) = (s.clone_htod(&to_h(&a)).unwrap(), s.clone_htod(&to_h(&b)).unwrap());
    let mut dc = s.alloc_zeros::<f32>(256).unwrap();
    {
        let ((pa, _a), (pb, _b), (pc, _c)) = (da.device_ptr(&s), db.device_ptr(&s), dc.device_ptr_mut(&s));
        ok(unsafe { cuda_static_lib::moe_wmma_16x16x16(pa as *const u16, pb as *const u16, pc as *mut f32, raw) }, "moe_wmma_16x16x16");
    }
    assert_eq!(s.clone_dtoh(&dc).unwrap(), tile_cpu(&a, &b), "wmma tile");

    // Q8_0 mat-vec behind `const void *`: scales of 1/8, bytes and inputs small integers, so
    // every product and partial sum is exact whatever order the warp adds them in.
    let (ncols, nrows) = (256usize, 37usize);
    let rows: Vec<BlockQ8> = (0..nrows * ncols / 32)
        .map(|b| BlockQ8 { d: ((b % 4) + 1) as f32 * 0.125, qs: std::array::from_fn(|j| (((b * 31 + j * 7) % 17) as i8) - 8) })
        .collect();
    let y: Vec<f32> = (0..ncols).map(|i| ((i % 11) as f32) - 5.0).collect();
    let bytes: &[u8] = unsafe { std::slice::from_raw_parts(rows.as_ptr() as *const u8, std::mem::size_of_val(rows.as_slice())) };
    let (dx, dy) = (s.clone_htod(bytes).unwrap(), s.clone_htod(&y).unwrap());
    let mut dd = s.alloc_zeros::<f32>(nrows).unwrap();
    {
        let ((px, _a), (py, _b), (pd, _c)) = (dx.device_ptr(&s), dy.device_ptr(&s), dd.device_ptr_mut(&s));
        let code = unsafe {
            cuda_static_lib::mmvq_q8_0_f32(px as *const c_void, py as *const f32, pd as *mut f32, ncols as i32, nrows as i32, raw)
        };
        ok(code, "mmvq_q8_0_f32");
    }
    assert_eq!(s.clone_dtoh(&dd).unwrap(), mmvq_cpu(&rows, &y, ncols), "mmvq");
}

/// The library carries a cubin for sm_75, sm_80 and sm_90 and sm_90's PTX: a GPU of one of those
/// archs runs its own cubin (`__CUDA_ARCH__` of its major and minor), a newer one the PTX (900).
fn the_fatbin_runs_this_gpus_own_cubin(ctx: &Context) {
    ctx.bind_to_thread().unwrap();
    let s = ctx.default_stream();
    let major = ctx.attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR).unwrap();
    let minor = ctx.attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR).unwrap();
    let mut d = s.alloc_zeros::<i32>(1).unwrap();
    {
        let (p, _sync) = d.device_ptr_mut(&s);
        ok(unsafe { cuda_static_lib::moe_arch(p as *mut i32, stream_of(&s)) }, "moe_arch");
    }
    let ran = s.clone_dtoh(&d).unwrap()[0];
    let cc = major * 100 + minor * 10;
    let want = match cc {
        750..=799 => 750,
        800..=899 => 800,
        900..=999 => 900,
        _ => 900, // newer: the sm_90 PTX, JIT-compiled
    };
    assert_eq!(ran, want, "a GPU of compute capability {major}.{minor} ran the code for {ran}");
}

/// The runtime linked in answers (a count with a GPU, an error name without one), never a crash.
fn the_runtime_answers_without_crashing() {
    match cuda_static_lib::device_count() {
        Ok(n) => assert!(n >= 0),
        Err(e) => assert!(e.starts_with("cudaError"), "{e}"),
    }
}
