// Compile-time ISA instantiation of the LseKernels (wasm: -msimd128 -msse4.1 makes xsimd's SSE4.1 backend
// emit wasm SIMD128 instructions).
#include "simd/lse_arch.h"
#include "simd/lse_kernels_xsimd.h"

namespace inductive::simd {
template <typename T>
const LseKernels<T>& kernels_default() {
#if defined(INDUCTIVE_RELAXED_SIMD)  // the relaxed modules (simd/madd.h): what Inductive.simd reports there
  return XsimdKernels<T, xsimd::default_arch>::table("wasm-relaxed-simd");
#elif defined(__EMSCRIPTEN__)
  return XsimdKernels<T, xsimd::default_arch>::table("wasm-simd128");
#else
  return XsimdKernels<T, xsimd::default_arch>::table("default");
#endif
}
template const LseKernels<float>& kernels_default<float>();
template const LseKernels<double>& kernels_default<double>();
}  // namespace inductive::simd
