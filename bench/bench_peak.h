// bench/bench_peak.h - the 1-thread GEMM peak the roofline tables divide by, measured in the same process as the
// figures it divides, so that clock and machine load are the same. Needs core/src on the include path.
#pragma once

#include <algorithm>

#include "bench_timing.h"
#include "inductive/linalg.h"
#include "simd/small_gemm.h"

namespace inductive::bench {

struct GemmPeak {
  double eigen = 0;   // GFLOP/s of a float32 1024^3 product through Eigen
  double kernel = 0;  // GFLOP/s of the library's register-blocked kernel on a cache-resident product
  double fma = 0;     // GFLOP/s of independent fused multiply-adds in registers: the core's arithmetic limit
  double best() const { return std::max(eigen, kernel); }
};

// The most float32 multiply-adds this core retires per second: 16 independent chains of the widest vector the build
// targets (enough to cover an FMA's latency times the FMA pipes of any current x86 core), nothing loaded or stored.
// No product can run faster, so dividing a workload's FLOPs by this bounds its time from below: what the same-run
// comparisons print as the ratio no implementation could pass on this machine. Vector extensions, not xsimd: this
// header is compiled with Eigen, and xsimd's inline code must not be compiled here with other flags than the core's
// kernel units. Where the ISA has no FMA (wasm SIMD128), a multiply and an add, counted as the same two FLOPs.
inline double fma_peak_gflops() {
#if defined(__AVX512F__)
  constexpr int kLanes = 16;
#elif defined(__AVX__)
  constexpr int kLanes = 8;
#else
  constexpr int kLanes = 4;
#endif
  typedef float Vec __attribute__((vector_size(kLanes * sizeof(float))));
  constexpr int kChains = 16;
  constexpr long kIters = 1L << 15;
  Vec acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = Vec{} + (0.5f + 0.01f * static_cast<float>(c));
  const Vec a = Vec{} + 0.999999f, b = Vec{} + 1e-7f;  // acc stays near 0.1: no overflow, no denormals
  const double t = median_seconds_within(0.5, [&] {
    Vec r[kChains];  // a local array, fully unrolled: registers, not memory
#pragma GCC unroll 16
    for (int c = 0; c < kChains; ++c) r[c] = acc[c];
    for (long i = 0; i < kIters; ++i) {
#pragma GCC unroll 16
      for (int c = 0; c < kChains; ++c) r[c] = r[c] * a + b;
    }
#pragma GCC unroll 16
    for (int c = 0; c < kChains; ++c) acc[c] = r[c];
  });
  float sink = 0;
  for (int c = 0; c < kChains; ++c) sink += acc[c][0];
  volatile float keep = sink;  // the chains' results are used, so the loop stays
  (void)keep;
  return 2.0 * kLanes * kChains * static_cast<double>(kIters) / t / 1e9;
}

// Two GEMMs on the calling thread (callers set 1 thread first). Eigen's large square product was the peak while the
// models multiplied with Eigen; on an AVX2 core it runs at about half of what the library's 6 x 2W kernel reaches on
// a product that stays in L1/L2 (48 x 64 times 64 x 64, repeated), which bounds what the models' products can reach.
inline GemmPeak gemm_peak_gflops() {
  GemmPeak peak;
  {
    const int n = 1024;
    MatF a = MatF::Random(n, n), b = MatF::Random(n, n), c(n, n);
    const double t = median_seconds_within(1.0, [&] { c.noalias() = a * b; });
    peak.eigen = 2.0 * n * n * n / t / 1e9;
  }
  {
    const int m = 48, k = 64, n = 64, reps = 200;
    MatF a = MatF::Random(m, k), b = MatF::Random(k, n), c(m, n);
    const double t = median_seconds_within(1.0, [&] {
      for (int r = 0; r < reps; ++r) simd::gemm_ab(a.data(), k, b.data(), n, c.data(), n, m, n, k, r > 0);
    });
    peak.kernel = 2.0 * m * n * k * reps / t / 1e9;
  }
  peak.fma = fma_peak_gflops();
  return peak;
}

}  // namespace inductive::bench
