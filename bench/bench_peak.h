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
  double best() const { return std::max(eigen, kernel); }
};

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
  return peak;
}

}  // namespace inductive::bench
