// sse2 instantiation of the LseKernels (compiled with the matching -m flags; see core/CMakeLists.txt).
#include "simd/lse_arch.h"
#include "simd/lse_kernels_xsimd.h"

namespace inductive::simd {
template <typename T>
const LseKernels<T>& kernels_sse2() {
  return XsimdKernels<T, xsimd::sse2>::table("sse2");
}
template const LseKernels<float>& kernels_sse2<float>();
template const LseKernels<double>& kernels_sse2<double>();
}  // namespace inductive::simd
