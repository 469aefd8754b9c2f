// Entry points of the per-ISA translation units (each compiled with its own -m flags).
#pragma once
#include "simd/lse_kernels.h"

namespace inductive::simd {
#if defined(INDUCTIVE_SIMD_X86_DISPATCH)
template <typename T>
const LseKernels<T>& kernels_sse2();
template <typename T>
const LseKernels<T>& kernels_avx2();
template <typename T>
const LseKernels<T>& kernels_avx512();
#else
// Wasm (and any non-x86 build): the ISA fixed at compile time, e.g. SSE4.1 lowered to wasm SIMD128.
template <typename T>
const LseKernels<T>& kernels_default();
#endif
}  // namespace inductive::simd
