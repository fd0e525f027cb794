//! `cargo run -p cuda-static-lib`: asks the CUDA runtime linked with `libmoe.a` how many GPUs it
//! sees (an error code, not a crash, on a machine without a GPU).

fn main() {
    match cuda_static_lib::device_count() {
        Ok(n) => println!("cudaGetDeviceCount: {n} GPU(s)"),
        Err(e) => println!("cudaGetDeviceCount failed: {e}"),
    }
}
