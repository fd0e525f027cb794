// Shared by every file of the library, as candle's cuda_utils.cuh is.
#pragma once
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <stdint.h>

// Threads per block of the element-wise launchers (build.rs sets it with `-D`).
#ifndef MOE_BLOCK
#define MOE_BLOCK 128
#endif

// An arch switch, as candle's `MIN_CC_DP4A`-style guards: the device pass sees the arch it
// compiles for, the host pass none.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define MOE_AMPERE 1
#else
#define MOE_AMPERE 0
#endif

template <typename T> __device__ __forceinline__ float to_float(T x);
template <> __device__ __forceinline__ float to_float<float>(float x) { return x; }
template <> __device__ __forceinline__ float to_float<__half>(__half x) { return __half2float(x); }

// A launcher's result: the launch's error, as an int the Rust side can read without cudart's
// headers (0 is cudaSuccess).
static inline int launch_status() { return (int)cudaGetLastError(); }
