// core/src/screening/solve_and_screen.cpp - see inductive/screening/solve_and_screen.h.
#include "inductive/screening/solve_and_screen.h"

namespace inductive {

double SolveAndScreenResult::fraction_screened() const {
  return screened.empty() ? 0.0 : static_cast<double>(n_screened) / static_cast<double>(screened.size());
}

SolveAndScreenResult solve_and_screen(const ErmProblem& problem, const SolverOptions& options,
                                      const ScreenOptions& screen) {
  SolveAndScreenResult r;
  r.fit = solve_erm(problem, options);
  // Certified regions only, around the solver's final iterate (its dual point is derived from x by
  // screen_samples, which is valid for every solver; the solver's own nu has zeros for removed samples).
  r.at_solution = screen_samples(problem, r.fit.x, screen);
  const int n = problem.n();
  r.screened.assign(static_cast<size_t>(n), 0);
  for (int i = 0; i < n; ++i) {
    const bool dynamic = i < static_cast<int>(r.fit.removed_at.size()) && r.fit.removed_at[i] >= 0;
    if (dynamic) ++r.n_dynamic;
    if (dynamic || r.at_solution.screened[i] != 0) {
      r.screened[i] = 1;
      ++r.n_screened;
    } else {
      r.kept.push_back(i);
    }
  }
  return r;
}

}  // namespace inductive
