// inductive/screening/path.h - regularisation paths with warm starts and sequential safe screening (thesis ch. 4,
// "Computational gains").
//
// Lambdas are visited in the given order (normally decreasing). At each lambda the solver starts from the previous
// solution (primal x and, for dual coordinate ascent, dual nu, which stays feasible for every lambda). With
// `screening` on, the solver's dynamic screening tests the warm start's gap ball at the new lambda before its first
// epoch (sequential screening: one pass, its margins reused) and again at every gap check. `static_screen` adds a
// static screening of the warm start with screen.h's regions (cuts, ellipsoid steps) before solving; it costs
// about three passes and on digits removes nothing the solver's first check does not. Samples removed at one
// lambda are NOT carried to the next (a different problem). Each point reports epochs and seconds, screening
// included, so a path with screening can be compared with one without (same solver, same tol).
#pragma once

#include <functional>
#include <vector>

#include "inductive/screening/screen.h"
#include "inductive/screening/solver.h"

namespace inductive {

struct PathOptions {
  SolverOptions solver;  // per lambda; dynamic_screening is set from `screening`
  bool screening = true;
  bool static_screen = false;  // also screen each warm start with `screen` before solving
  ScreenOptions screen;
};

struct PathPoint {
  double lambda = 0;
  SolveResult fit;
  int n_screened_static = 0;  // removed by the static screening of the warm start (static_screen)
  int n_removed = 0;          // removed in total (static + dynamic)
  int epochs = 0;
  double seconds = 0;  // screening + solving
};

// One path, a lambda at a time: each call to next() solves at that lambda from the previous call's solution.
// Two walkers over the same lambdas (with and without screening) can so be interleaved, lambda by lambda, which is
// how `inductive path` times them: a load that comes and goes on the machine then falls on both alike.
class PathWalker {
 public:
  // Copies `problem` (its design matrix stays borrowed); its lambda is ignored. Throws for invalid options.
  PathWalker(const ErmProblem& problem, const PathOptions& options);
  // Throws for a lambda that is not finite and > 0.
  PathPoint next(double lambda);

 private:
  ErmProblem problem_;
  PathOptions options_;
  SolverOptions solver_;
  WarmStart warm_;
};

// `problem.lambda` is ignored. Throws for an empty or non-positive lambda list.
std::vector<PathPoint> regularization_path(const ErmProblem& problem, const std::vector<double>& lambdas,
                                           const PathOptions& options, const EventFn<PathPoint>& progress = {});

// The default grid of `inductive path` and the browser's dataset.path(): 20 lambdas from 1 down to 0.01.
constexpr double kDefaultPathLambdaMax = 1.0;
constexpr double kDefaultPathRatio = 0.01;
constexpr int kDefaultPathCount = 20;

// count lambdas from lambda_max down to lambda_max * ratio, evenly spaced in log scale.
std::vector<double> geometric_lambdas(double lambda_max, double ratio, int count);

}  // namespace inductive
