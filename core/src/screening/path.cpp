// Regularisation paths with sequential screening (see inductive/screening/path.h).
#include <chrono>
#include <cmath>

#include "inductive/error.h"
#include "inductive/screening/path.h"

namespace inductive {

std::vector<double> geometric_lambdas(double lambda_max, double ratio, int count) {
  INDUCTIVE_CHECK(std::isfinite(lambda_max) && lambda_max > 0, ErrorCode::kInvalidArgument,
                  "lambda grid: lambda_max must be finite and > 0: got ", lambda_max);
  INDUCTIVE_CHECK(ratio > 0 && ratio <= 1, ErrorCode::kInvalidArgument, "lambda grid: ratio must be in (0, 1]: got ",
                  ratio);
  INDUCTIVE_CHECK(count >= 1, ErrorCode::kInvalidArgument, "lambda grid: count must be >= 1: got ", count);
  std::vector<double> l(static_cast<size_t>(count));
  for (int k = 0; k < count; ++k)
    l[k] = lambda_max * std::pow(ratio, count == 1 ? 0.0 : static_cast<double>(k) / (count - 1));
  return l;
}

PathWalker::PathWalker(const ErmProblem& problem, const PathOptions& options)
    : problem_(problem), options_(options), solver_(options.solver) {
  options_.solver.validate();
  options_.screen.validate();
  solver_.dynamic_screening = options_.screening;
}

PathPoint PathWalker::next(double lambda) {
  INDUCTIVE_CHECK(std::isfinite(lambda) && lambda > 0, ErrorCode::kInvalidArgument,
                  "path: lambdas must be finite and > 0: got ", lambda);
  const auto start = std::chrono::steady_clock::now();
  ErmProblem& prob = problem_;
  prob.lambda = lambda;
  prob.validate();
  PathPoint point;
  point.lambda = lambda;
  const bool has_warm = warm_.x.size() > 0;
  if (options_.screening && options_.static_screen && has_warm) {
    // For L2 the consistent primal point of the warm dual at the new lambda is what the solver starts from, so
    // screen around it; otherwise around the previous solution.
    const bool dual_pair = warm_.nu.size() > 0 && prob.penalty.l2_weight(lambda) > 0 &&
                           SolverOptions::resolve(solver_.kind, prob) == SolverKind::kDualCoordinateAscent;
    const VecD x0 = dual_pair ? primal_point(prob, warm_.nu) : warm_.x;
    const ScreenResult s = screen_samples(prob, x0, options_.screen, dual_pair ? &warm_.nu : nullptr);
    point.n_screened_static = s.n_screened;
    const ActiveSet kept = s.kept();
    point.fit = solve_erm(prob, solver_, &warm_, &kept);
  } else {
    point.fit = solve_erm(prob, solver_, has_warm ? &warm_ : nullptr);
  }
  // A solve stopped by its progress callback ends the path: the later lambdas would start from an unfinished point.
  INDUCTIVE_CHECK(!point.fit.cancelled, ErrorCode::kCancelled, "path: cancelled at lambda ", lambda);
  point.n_removed = point.fit.n_removed();
  point.epochs = point.fit.epochs;
  point.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  warm_.x = point.fit.x;
  warm_.nu = point.fit.nu;
  return point;
}

std::vector<PathPoint> regularization_path(const ErmProblem& problem, const std::vector<double>& lambdas,
                                           const PathOptions& options, const EventFn<PathPoint>& progress) {
  INDUCTIVE_CHECK(!lambdas.empty(), ErrorCode::kInvalidArgument, "path: no lambda given");
  for (double l : lambdas)
    INDUCTIVE_CHECK(std::isfinite(l) && l > 0, ErrorCode::kInvalidArgument,
                    "path: lambdas must be finite and > 0: got ", l);
  PathWalker walker(problem, options);
  std::vector<PathPoint> path;
  for (double lambda : lambdas) {
    path.push_back(walker.next(lambda));
    if (progress) progress(path.back());
  }
  return path;
}

}  // namespace inductive
