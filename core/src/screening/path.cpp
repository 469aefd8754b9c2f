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

std::vector<PathPoint> regularization_path(const ErmProblem& problem, const std::vector<double>& lambdas,
                                           const PathOptions& options,
                                           const std::function<void(const PathPoint&)>& progress) {
  INDUCTIVE_CHECK(!lambdas.empty(), ErrorCode::kInvalidArgument, "path: no lambda given");
  for (double l : lambdas)
    INDUCTIVE_CHECK(std::isfinite(l) && l > 0, ErrorCode::kInvalidArgument,
                    "path: lambdas must be finite and > 0: got ", l);
  options.solver.validate();
  options.screen.validate();

  ErmProblem prob = problem;
  SolverOptions solver = options.solver;
  solver.dynamic_screening = options.screening;
  std::vector<PathPoint> path;
  WarmStart warm;
  for (double lambda : lambdas) {
    const auto start = std::chrono::steady_clock::now();
    prob.lambda = lambda;
    prob.validate();
    PathPoint point;
    point.lambda = lambda;
    const bool has_warm = warm.x.size() > 0;
    if (options.screening && options.static_screen && has_warm) {
      // For L2 the consistent primal point of the warm dual at the new lambda is what the solver starts from, so
      // screen around it; otherwise around the previous solution.
      const bool dual_pair = warm.nu.size() > 0 && prob.penalty.l2_weight(lambda) > 0 &&
                             SolverOptions::resolve(solver.kind, prob) == SolverKind::kDualCoordinateAscent;
      const VecD x0 = dual_pair ? primal_point(prob, warm.nu) : warm.x;
      const ScreenResult s = screen_samples(prob, x0, options.screen, dual_pair ? &warm.nu : nullptr);
      point.n_screened_static = s.n_screened;
      const ActiveSet kept = s.kept();
      point.fit = solve_erm(prob, solver, &warm, &kept);
    } else {
      point.fit = solve_erm(prob, solver, has_warm ? &warm : nullptr);
    }
    point.n_removed = point.fit.n_removed();
    point.epochs = point.fit.epochs;
    point.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    warm.x = point.fit.x;
    warm.nu = point.fit.nu;
    if (progress) progress(point);
    path.push_back(std::move(point));
  }
  return path;
}

}  // namespace inductive
