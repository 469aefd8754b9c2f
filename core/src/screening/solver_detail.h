// Shared bookkeeping of the ERM solvers: active set, gap checks, dynamic ball screening. Internal to core.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "inductive/screening/solver.h"
#include "rows.h"

namespace inductive::detail {

// A small deterministic generator and Fisher-Yates shuffle: std::shuffle and the std distributions differ between
// libstdc++ (native) and libc++ (wasm), and results must not.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, bound) (bound < 2^32; the multiply-shift bias is below 2^-32).
  uint32_t below(uint32_t bound) { return static_cast<uint32_t>(((next() >> 32) * bound) >> 32); }

 private:
  uint64_t state_;
};

inline void shuffle(std::vector<int>& v, SplitMix64& rng) {
  for (size_t k = v.size(); k > 1; --k) std::swap(v[k - 1], v[rng.below(static_cast<uint32_t>(k))]);
}

class SolverRun {
 public:
  SolverRun(const ErmProblem& problem, const SolverOptions& options, const ActiveSet* active, SolverKind kind);

  const ErmProblem& problem;
  const SolverOptions& options;
  const ProblemRows rows;
  std::vector<double> sq_norm;  // ||r_i||^2 of every sample (0 for samples never active)
  std::vector<int> active;
  SolveResult result;

  // Records a gap check (history, progress callback). Returns true when the solver must stop: converged or
  // cancelled by the callback.
  bool check(int epoch, const DualityGap& gap);
  bool meets_tolerance(const DualityGap& gap) const;
  // Removes the active samples whose margins t (indexed by sample) stay in the flat region over the ball of
  // `radius` around the current point; returns them.
  std::vector<int> screen_ball(const std::vector<double>& t, double radius, double x_norm, int epoch);
  // Fills the result's end state.
  SolveResult finish(VecD x, VecD nu, const DualityGap& gap, int epochs);

 private:
  std::chrono::steady_clock::time_point start_;
};

SolveResult solve_dual_coordinate_ascent(const ErmProblem& problem, const SolverOptions& options, const WarmStart* warm,
                                         const ActiveSet* active);
SolveResult solve_proximal_gradient(const ErmProblem& problem, const SolverOptions& options, const WarmStart* warm,
                                    const ActiveSet* active);

}  // namespace inductive::detail
