// avx512 instantiation of the LseKernels (compiled with the matching -m flags; see core/CMakeLists.txt).
#include "simd/lse_arch.h"
#include "simd/lse_kernels_xsimd.h"

namespace inductive::simd {
template <typename T>
const LseKernels<T>& kernels_avx512() {
  return XsimdKernels<T, xsimd::avx512bw>::table("avx512");
}
template const LseKernels<float>& kernels_avx512<float>();
template const LseKernels<double>& kernels_avx512<double>();
}  // namespace inductive::simd
