fn main() -> Result<(), ptx_build::Error> {
    // candle's layout: MoE files and a quantized mat-vec, one static library `libmoe.a` with a
    // cubin per arch and the highest arch's PTX; the wmma file needs sm_80+ (tensor cores with
    // the layouts it loads), so it is built for those archs alone. CARGO_PTX_* variables fill in
    // what is not set here.
    ptx_build::Builder::new()
        .cuda_static_lib("moe", "cuda/moe/*.cu")
        .cuda_static_lib("moe", "cuda/mmvq.cu")
        .arch("sm_75")
        .arch("sm_80")
        .arch("sm_90")
        .cuda_file_archs("moe_wmma.cu", "sm_80,sm_90")
        .cuda_define("MOE_BLOCK", Some("256"))
        .build()?;
    Ok(())
}
