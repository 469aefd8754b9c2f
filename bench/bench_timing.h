// bench/bench_timing.h - the timing rules of the benchmarks: the median wall time of repeated runs, either a fixed
// number of them or as many as fit a time budget (the roofline tables' GEMM peak: bench_peak.h).
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

#include "inductive/linalg.h"

namespace inductive::bench {

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

inline double median_seconds(int reps, const std::function<void()>& body) {
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const auto s = std::chrono::steady_clock::now();
    body();
    t.push_back(seconds_since(s));
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Median over repetitions until `budget` seconds have passed (at least `min_repeats`, at most 200).
inline double median_seconds_within(double budget, const std::function<void()>& body, int min_repeats = 3) {
  std::vector<double> t;
  const auto start = std::chrono::steady_clock::now();
  while (static_cast<int>(t.size()) < min_repeats || (seconds_since(start) < budget && t.size() < 200)) {
    const auto s = std::chrono::steady_clock::now();
    body();
    t.push_back(seconds_since(s));
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace inductive::bench
