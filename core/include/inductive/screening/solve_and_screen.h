// inductive/screening/solve_and_screen.h - what `inductive screen` and the browser's screenDataset() both do: solve
// one problem to a certified gap (with dynamic screening unless turned off), then apply the static tests at the
// solution, and report a sample as screened when either removed it. One function, so the CLI and the wasm build
// cannot disagree on what "screened" means.
#pragma once

#include <cstdint>
#include <vector>

#include "inductive/screening/screen.h"
#include "inductive/screening/solver.h"

namespace inductive {

struct SolveAndScreenResult {
  SolveResult fit;                // the solver's run (history: epoch, gap, active samples at each gap check)
  ScreenResult at_solution;       // static screening at fit.x (its scores: > 0 <=> screened by the static test)
  std::vector<uint8_t> screened;  // n flags: removed by dynamic or static screening
  std::vector<int32_t> kept;      // indices of the samples not screened, increasing
  int n_dynamic = 0;              // removed by the solver's dynamic screening
  int n_screened = 0;             // removed in total
  double fraction_screened() const;
};

// `options.dynamic_screening` is honoured as given. Throws what solve_erm/screen_samples throw.
SolveAndScreenResult solve_and_screen(const ErmProblem& problem, const SolverOptions& options,
                                      const ScreenOptions& screen = {});

}  // namespace inductive
