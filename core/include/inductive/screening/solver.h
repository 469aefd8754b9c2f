// inductive/screening/solver.h - solvers for the ERM problems of problem.h, certified by duality gaps, with
// warm starts and dynamic gap-safe screening.
//
//   kDualCoordinateAscent  SDCA (Shalev-Shwartz & Zhang 2013) for the L2 penalty, any loss (the hinge included):
//                          exact one-dimensional dual maximisation via the loss's prox; one epoch = one pass of
//                          coordinate steps over the active samples in a random order.
//   kProximalGradient      FISTA with backtracking and gradient restarts (Beck & Teboulle 2009; O'Donoghue &
//                          Candes 2015) for smooth losses with any penalty (L1, elastic net, L2); one epoch =
//                          one iteration (about three passes over the active rows).
//   kAuto                  dual coordinate ascent for L2, proximal gradient otherwise.
// Both are row-oriented, so dense and CSR designs cost O(nnz) per pass.
//
// Stopping: every `gap_every` epochs (and before the first one when warm-started) the duality gap of the (reduced)
// problem is computed; the solver stops when gap <= tol * |P| (relative gap) or after max_epochs. Proximal
// gradient reports the best primal and best dual values seen (its iterates are not monotone) and returns the
// best primal point.
//
// Dynamic screening (`dynamic_screening`): at each gap check on a strongly convex problem (L2, elastic net) the
// gap-safe ball B(x, sqrt(2 gap / kappa)) holds x*, and the margin bounds over it are t_i -+ radius ||r_i||:
// free once the gap pass has computed t_i. Samples whose bounds sit inside the flat region are removed for good
// (their dual variables are set to 0); the reduced problem has the same minimiser, and its gaps keep
// certifying it. For L1 nothing is removed dynamically (no cheap certified region; see screen.h).
//
// Thread safety: re-entrant; no shared state. Deterministic for a given seed on every platform (own shuffle).
#pragma once

#include "inductive/progress.h"

#include <cstdint>
#include <functional>
#include <vector>

#include "inductive/screening/problem.h"

namespace inductive {

enum class SolverKind { kAuto, kDualCoordinateAscent, kProximalGradient };

struct SolverProgress {
  int epoch = 0;
  double primal = 0, dual = 0, gap = 0;
  int n_active = 0;
};

// Whether a run a user starts screens dynamically unless told not to (`inductive screen --no-dynamic`, the
// browser's `dynamic: false`).
constexpr bool kDefaultDynamicScreening = true;

struct SolverOptions {
  SolverKind kind = SolverKind::kAuto;
  double tol = 1e-6;  // relative duality gap
  int max_epochs = 1000;
  int gap_every = 1;               // epochs between gap checks (and dynamic screening tests)
  bool dynamic_screening = false;  // the library's default; a user's run (CLI, browser): kDefaultDynamicScreening
  uint32_t seed = 0;               // order of the coordinate steps
  // A sample working set: with a warm start, the epochs run over the samples not flat there, and those that leave
  // the flat region come back as the gap closes (solver_detail.h). The stop is the full problem's certified gap, so
  // the result is the plain solver's; the gap reported to `progress` before that is the set's. Off by default.
  bool working_set = false;
  // Called after each gap check (inductive/progress.h); throwing Error{kCancelled} from it stops the solver, which
  // returns the certified iterate of that check (converged = false, cancelled = true).
  EventFn<SolverProgress> progress;

  void validate() const;
  static SolverKind resolve(SolverKind kind, const ErmProblem& problem);
};

// Optional starting point: a primal x (dim entries) and/or a dual nu (n entries). Dual coordinate ascent uses nu
// when given (clipped into the conjugate domain), else the dual point of x; proximal gradient uses x.
struct WarmStart {
  VecD x;
  VecD nu;
};

struct SolveResult {
  VecD x;          // dim entries: the coefficients, then the intercept coordinate when on
  VecD nu;         // n dual variables (0 for removed samples)
  DualityGap gap;  // of the reduced problem at the end
  bool converged = false;
  bool cancelled = false;
  int epochs = 0;
  double seconds = 0;
  SolverKind solver = SolverKind::kAuto;
  std::vector<int> history_epoch;   // at each gap check: the epoch,
  std::vector<double> history_gap;  //   the gap,
  std::vector<int> history_active;  //   and the number of active samples after screening
  ActiveSet active;                 // samples still in the problem at the end
  // Per sample: the epoch after which dynamic screening removed it (0: before the first epoch, i.e. left out by
  // the caller's active set or screened at the warm start), -1 if still active.
  std::vector<int> removed_at;

  int n_removed() const;
  // The intercept b of the decision function a^T w + b (0 when the problem has none).
  double intercept(const ErmProblem& problem) const;
};

// Solves the problem restricted to `active` (all samples when nullptr); samples outside it count as removed.
// Throws Error{kInvalidArgument} for an invalid problem/options or a solver that cannot handle the problem
// (proximal gradient needs a smooth loss; dual coordinate ascent needs the L2 penalty).
SolveResult solve_erm(const ErmProblem& problem, const SolverOptions& options, const WarmStart* warm = nullptr,
                      const ActiveSet* active = nullptr);

}  // namespace inductive
