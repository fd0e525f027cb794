//! Host twins of CUDA's vendor types that have no Rust primitive, for kernel parameters by value
//! and behind pointers: the same size and alignment as in the PTX (the generated module asserts
//! it at compile time), holding the raw bits.

use cudarc::driver::{DeviceRepr, ValidAsZeroBits};
use half::{bf16, f16};

/// `__nv_fp8_e4m3`: an 8-bit float (4 exponent and 3 mantissa bits), as its byte.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Fp8E4M3(pub u8);

/// `__nv_fp8_e5m2`: an 8-bit float (5 exponent and 2 mantissa bits), as its byte.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Fp8E5M2(pub u8);

/// `__half2`: two `f16`, aligned to 4 bytes as CUDA's type is.
#[repr(C, align(4))]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Half2 {
    /// `.x`
    pub x: f16,
    /// `.y`
    pub y: f16,
}

/// `__nv_bfloat162`: two `bf16`, aligned to 4 bytes as CUDA's type is.
#[repr(C, align(4))]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Bf16x2 {
    /// `.x`
    pub x: bf16,
    /// `.y`
    pub y: bf16,
}

// SAFETY: plain bits with CUDA's layout (size and alignment asserted above each kernel's
// use by the generated module); all-zero bits are a valid value (+0.0).
unsafe impl DeviceRepr for Fp8E4M3 {}
unsafe impl DeviceRepr for Fp8E5M2 {}
unsafe impl DeviceRepr for Half2 {}
unsafe impl DeviceRepr for Bf16x2 {}
unsafe impl ValidAsZeroBits for Fp8E4M3 {}
unsafe impl ValidAsZeroBits for Fp8E5M2 {}
unsafe impl ValidAsZeroBits for Half2 {}
unsafe impl ValidAsZeroBits for Bf16x2 {}

/// CUDA's vector types (`vector_types.h`), each `Name("doc name"): element, alignment, [fields];`.
macro_rules! vectors {
    ($($name:ident($c:literal): $t:ty, $align:literal, [$($f:ident),+];)*) => {$(
        #[doc = concat!($c, ": `", stringify!($t), "` fields (", stringify!($($f),+), "), aligned to ", $align, " bytes as CUDA's type is.")]
        #[repr(C, align($align))]
        #[derive(Clone, Copy, Debug, Default, PartialEq)]
        pub struct $name {
            $(
                #[doc = concat!("`.", stringify!($f), "`")]
                pub $f: $t,
            )+
        }

        // SAFETY: plain numbers with CUDA's layout (size and alignment tested below, and asserted
        // against the PTX by the generated module where one is passed by value); all-zero bits
        // are a valid value.
        unsafe impl DeviceRepr for $name {}
        unsafe impl ValidAsZeroBits for $name {}
    )*};
}

vectors! {
    Char2("`char2`"): i8, 2, [x, y];
    Char3("`char3`"): i8, 1, [x, y, z];
    Char4("`char4`"): i8, 4, [x, y, z, w];
    UChar2("`uchar2`"): u8, 2, [x, y];
    UChar3("`uchar3`"): u8, 1, [x, y, z];
    UChar4("`uchar4`"): u8, 4, [x, y, z, w];
    Short2("`short2`"): i16, 4, [x, y];
    Short3("`short3`"): i16, 2, [x, y, z];
    Short4("`short4`"): i16, 8, [x, y, z, w];
    UShort2("`ushort2`"): u16, 4, [x, y];
    UShort3("`ushort3`"): u16, 2, [x, y, z];
    UShort4("`ushort4`"): u16, 8, [x, y, z, w];
    Int2("`int2`"): i32, 8, [x, y];
    Int3("`int3`"): i32, 4, [x, y, z];
    Int4("`int4`"): i32, 16, [x, y, z, w];
    UInt2("`uint2`"): u32, 8, [x, y];
    UInt3("`uint3` (and `dim3`)"): u32, 4, [x, y, z];
    UInt4("`uint4`"): u32, 16, [x, y, z, w];
    LongLong2("`longlong2` and `long2`"): i64, 16, [x, y];
    LongLong3("`longlong3` and `long3`"): i64, 8, [x, y, z];
    LongLong4("`longlong4` and `long4`"): i64, 16, [x, y, z, w];
    ULongLong2("`ulonglong2` and `ulong2`"): u64, 16, [x, y];
    ULongLong3("`ulonglong3` and `ulong3`"): u64, 8, [x, y, z];
    ULongLong4("`ulonglong4` and `ulong4`"): u64, 16, [x, y, z, w];
    Float2("`float2` (and `cuFloatComplex`, `cufftComplex`)"): f32, 8, [x, y];
    Float3("`float3`"): f32, 4, [x, y, z];
    Float4("`float4`"): f32, 16, [x, y, z, w];
    Double2("`double2` (and `cuDoubleComplex`, `cufftDoubleComplex`)"): f64, 16, [x, y];
    Double3("`double3`"): f64, 8, [x, y, z];
    Double4("`double4`"): f64, 16, [x, y, z, w];
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_are_cudas() {
        assert_eq!((std::mem::size_of::<Fp8E4M3>(), std::mem::align_of::<Fp8E4M3>()), (1, 1));
        assert_eq!((std::mem::size_of::<Fp8E5M2>(), std::mem::align_of::<Fp8E5M2>()), (1, 1));
        assert_eq!((std::mem::size_of::<Half2>(), std::mem::align_of::<Half2>()), (4, 4));
        assert_eq!((std::mem::size_of::<Bf16x2>(), std::mem::align_of::<Bf16x2>()), (4, 4));
    }

    /// Sizes and alignments as `vector_types.h` of CUDA 13.0 declares them (`__align__(N)`, or
    /// the element's own alignment where it declares none).
    #[test]
    fn vector_layouts_are_cudas() {
        fn layout<T>() -> (usize, usize) {
            (std::mem::size_of::<T>(), std::mem::align_of::<T>())
        }
        assert_eq!([layout::<Char2>(), layout::<Char3>(), layout::<Char4>(), layout::<UChar4>()], [(2, 2), (3, 1), (4, 4), (4, 4)]);
        assert_eq!([layout::<Short2>(), layout::<Short3>(), layout::<Short4>(), layout::<UShort4>()], [(4, 4), (6, 2), (8, 8), (8, 8)]);
        assert_eq!([layout::<Int2>(), layout::<Int3>(), layout::<Int4>(), layout::<UInt4>()], [(8, 8), (12, 4), (16, 16), (16, 16)]);
        assert_eq!(
            [layout::<LongLong2>(), layout::<LongLong3>(), layout::<LongLong4>(), layout::<ULongLong2>()],
            [(16, 16), (24, 8), (32, 16), (16, 16)]
        );
        assert_eq!([layout::<Float2>(), layout::<Float3>(), layout::<Float4>()], [(8, 8), (12, 4), (16, 16)]);
        assert_eq!([layout::<Double2>(), layout::<Double3>(), layout::<Double4>()], [(16, 16), (24, 8), (32, 16)]);
        assert_eq!(Float4 { x: 1.0, y: 2.0, z: 3.0, w: 4.0 }.w, 4.0);
    }
}
