// Shared bookkeeping of the ERM solvers: active set, gap checks, dynamic ball screening. Internal to core.
#pragma once

#include <algorithm>
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
  ProblemRows rows;
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

// The sample working set of SolverOptions::working_set. The iterations run over `work`; the samples in `outside`
// were flat at the start (phi = phi' = 0 there) and hold nu_i = 0, so every dual point the solver builds is one of
// the full problem and bounds P* from below, while the primal over `work` only bounds the full primal from below.
// The outside samples' margins are therefore computed (`due`) when the point's relative gap over the set falls
// below 1e-2, then each time it has fallen 10 times lower, at the tolerance and at the last epoch: those that have
// left the flat region join the set (`bring_back`), and the gap that can stop the solver is the full problem's.
// Looking only at the tolerance was slow: 17 samples brought back there cost MNIST's elastic net 285 more epochs
// to certify again; found early, they cost little. The set only grows, so the solver ends as the plain one would.
struct WorkingSet {
  std::vector<int> work, outside;  // sorted; together the run's active samples
  double tol;                      // the solver's: no look is due below it
  double verify_at;                // the relative gap over the set at which the next look is due
  double stride = 10;              // how far the gap falls between looks: 10, more after quiet looks (see bring_back)

  // The largest copy a working set makes of its rows: past it, packing would add too much to a large problem's
  // memory (a browser tab's wasm heap, too), and the set reads the rows where they are.
  static constexpr double kMaxPackBytes = 256.0 * (1 << 20);

  // All active samples work, or with `on` those for which `leave_out(i)` is true stay outside. When a tenth or more
  // of dense rows stay outside, the set's rows are packed into one matrix (ProblemRows::pack); those brought back
  // later are read where they are. Sparse rows are not packed: a9a's have 14 entries, the hops between them cost
  // little, and its squared-hinge path took 0.83-0.96x of the plain solver's time with the copies against
  // 1.02-1.13x without.
  template <class LeaveOut>
  WorkingSet(SolverRun& run, bool on, LeaveOut leave_out)
      : tol(run.options.tol), verify_at(std::max(run.options.tol, 1e-2)) {
    for (int i : run.active) (on && leave_out(i) ? outside : work).push_back(i);
    const DesignMatrix& x = *run.problem.x;
    const double copy_bytes = static_cast<double>(work.size()) * x.cols() * sizeof(double);  // at most
    if (!outside.empty() && outside.size() * 10 >= run.active.size() && !x.is_sparse() && copy_bytes <= kMaxPackBytes)
      run.rows.pack(work);
  }
  bool partial() const { return !outside.empty(); }
  // Whether the outside samples must be looked at now, given the point's own gap over the set.
  bool due(const SolverRun& run, const DualityGap& own, int epoch);
  // Moves `back` (sorted, from outside) into the set.
  void bring_back(const std::vector<int>& back);
  // Forgets samples the dynamic screening removed (sorted).
  void remove(const std::vector<int>& removed);
  bool is_outside(int i) const { return std::binary_search(outside.begin(), outside.end(), i); }
};

SolveResult solve_dual_coordinate_ascent(const ErmProblem& problem, const SolverOptions& options, const WarmStart* warm,
                                         const ActiveSet* active);
SolveResult solve_proximal_gradient(const ErmProblem& problem, const SolverOptions& options, const WarmStart* warm,
                                    const ActiveSet* active);

}  // namespace inductive::detail
