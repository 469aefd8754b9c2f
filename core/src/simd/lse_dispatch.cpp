// Picks the kernel table once per process. Natively the CPU is asked (xsimd's cpuid); in wasm there is no
// runtime dispatch, so the compile-time table is used.
#include <cstdlib>
#include <cstring>

#include "simd/lse_arch.h"
#if defined(INDUCTIVE_SIMD_X86_DISPATCH)
#include <xsimd/config/xsimd_cpuid.hpp>
#endif

namespace inductive::simd {

template <typename T>
int available_kernels(const LseKernels<T>** out, int capacity) {
  int n = 0;
  auto add = [&](const LseKernels<T>& k) {
    if (n < capacity) out[n] = &k;
    ++n;
  };
  add(scalar_kernels<T>());
#if defined(INDUCTIVE_SIMD_X86_DISPATCH)
  const auto arch = xsimd::available_architectures();
  if (arch.sse2) add(kernels_sse2<T>());
  if (arch.avx2 && arch.fma3_avx2) add(kernels_avx2<T>());
  if (arch.avx512bw) add(kernels_avx512<T>());
#else
  add(kernels_default<T>());
#endif
  return n < capacity ? n : capacity;
}

template <typename T>
const LseKernels<T>& best_kernels() {
  // INDUCTIVE_SIMD=scalar|sse2|avx2|avx512 pins a table (benchmarks, debugging); default: the last = best.
  static const LseKernels<T>* chosen = [] {
    const LseKernels<T>* all[8];
    const int n = available_kernels<T>(all, 8);
    if (const char* want = std::getenv("INDUCTIVE_SIMD")) {
      for (int i = 0; i < n; ++i)
        if (std::strcmp(all[i]->name, want) == 0) return all[i];
    }
    return all[n - 1];
  }();
  return *chosen;
}

template const LseKernels<float>& best_kernels<float>();
template const LseKernels<double>& best_kernels<double>();
template int available_kernels<float>(const LseKernels<float>**, int);
template int available_kernels<double>(const LseKernels<double>**, int);

}  // namespace inductive::simd
