// inductive/screening/verify.h - a posteriori safety check of a screening: solve the full problem and the problem
// on the kept samples tightly, and compare (METHODS §3: "Every discard must be safe: refitting on the kept samples
// gives the same optimum").
//
// What is certified (strongly convex problems, kappa > 0): x_full and x_kept lie within r = sqrt(2 gap / kappa)
// of their problems' minimisers, so a safe screening gives ||x_kept - x_full|| <= r_full + r_kept; and a
// screened sample whose margin interval [t_i(x_full) -+ r_full ||r_i||] lies outside the open flat region was
// certainly not removable (a violation). For every penalty: if the kept problem's optimum is certainly below the
// full one (P_kept(x_kept) < D_full(nu_full)), screening changed the problem.
#pragma once

#include <cstdint>
#include <vector>

#include "inductive/screening/problem.h"
#include "inductive/screening/solver.h"

namespace inductive {

struct VerifyReport {
  bool safe = true;
  int n_screened = 0;
  std::vector<int> violations;  // screened samples certainly outside the flat region at x*
  double worst_inside = 0;      // min over screened samples of how far t_i(x_full) is inside the flat region
  double primal_full = 0;       // P(x_full)
  double primal_kept = 0;       // P(x_kept) on the full problem
  double distance = 0;          // ||x_kept - x_full||
  double distance_bound = 0;    // r_full + r_kept (inf without strong convexity)
  SolveResult full, kept;
};

// Relative gap 1e-12, up to 100000 epochs.
SolverOptions tight_solver_options();

// `screened`: n flags.
VerifyReport verify_screening(const ErmProblem& problem, const std::vector<uint8_t>& screened,
                              SolverOptions options = tight_solver_options());

}  // namespace inductive
