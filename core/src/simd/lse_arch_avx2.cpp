// avx2 instantiation of the LseKernels (compiled with the matching -m flags; see core/CMakeLists.txt).
#include "simd/lse_arch.h"
#include "simd/lse_kernels_xsimd.h"

namespace inductive::simd {
template <typename T>
const LseKernels<T>& kernels_avx2() {
  return XsimdKernels<T, xsimd::fma3<xsimd::avx2>>::table("avx2");
}
template const LseKernels<float>& kernels_avx2<float>();
template const LseKernels<double>& kernels_avx2<double>();
}  // namespace inductive::simd
