// bench/bench_timing.h - the one timing rule of the screening benchmarks: median wall time of repeated runs.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

namespace inductive::bench {

inline double median_seconds(int reps, const std::function<void()>& body) {
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const auto s = std::chrono::steady_clock::now();
    body();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - s).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace inductive::bench
