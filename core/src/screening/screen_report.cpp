// The report of a solve-and-screen run (see inductive/screening/screen_report.h).
#include "inductive/screening/screen_report.h"

#include <cmath>

#include "inductive/json_number.h"

namespace inductive {

nlohmann::json screen_report(const ErmProblem& problem, const SolveAndScreenResult& r, const KernelSpec* spec,
                             const KernelScreenResult* kernel) {
  const int p = problem.features();
  const SolveResult& fit = r.fit;
  const ScreenResult& stat = r.at_solution;
  nlohmann::json kernel_report = nullptr;
  if (kernel && spec)
    kernel_report = {{"type", spec->kind},
                     {"description", spec->describe(p)},
                     {"gamma", spec->gamma_for(p)},
                     {"degree", spec->degree},
                     {"coef0", spec->coef0},
                     {"rank", kernel->kernel_problem->rank()},
                     {"seconds", kernel->kernel_seconds}};
  return {{"n", problem.n()},
          {"p", p},
          {"loss", problem.loss.name()},
          {"mu", problem.loss.mu},
          {"penalty", problem.penalty.name()},
          {"lambda", problem.lambda},
          {"intercept", kernel ? kernel->intercept : fit.intercept(problem)},
          {"n_screened", r.n_screened},
          {"n_dynamic", r.n_dynamic},
          {"n_static", stat.n_screened},
          {"n_static_by_balls", stat.n_by_balls},
          {"ellipsoid_steps", stat.ellipsoid ? stat.ellipsoid->steps() : 0},
          {"l1_support_size", stat.support_size >= 0 ? nlohmann::json(stat.support_size) : nlohmann::json(nullptr)},
          {"fraction_screened", r.fraction_screened()},
          {"epochs", fit.epochs},
          {"converged", fit.converged},
          {"cancelled", fit.cancelled},
          {"primal", json_number(fit.gap.primal)},
          {"dual", json_number(fit.gap.dual)},
          {"gap", json_number(fit.gap.gap)},
          {"relative_gap", json_number(fit.gap.primal != 0 ? fit.gap.gap / std::fabs(fit.gap.primal) : fit.gap.gap)},
          {"solve_seconds", fit.seconds},
          {"screen_seconds", stat.seconds},
          {"kernel", kernel_report},
          {"history", {{"epoch", fit.history_epoch}, {"gap", fit.history_gap}, {"active", fit.history_active}}}};
}

nlohmann::json path_point_report(const PathPoint& pt, int n) {
  return {{"lambda", pt.lambda},
          {"n_screened", pt.n_removed},
          {"n_static_screened", pt.n_screened_static},
          {"fraction_screened", static_cast<double>(pt.n_removed) / n},
          {"epochs", pt.epochs},
          {"seconds", pt.seconds},
          {"converged", pt.fit.converged},
          {"primal", json_number(pt.fit.gap.primal)},
          {"gap", json_number(pt.fit.gap.gap)}};
}

nlohmann::json path_report(const ErmProblem& problem, const PathOptions& o, const std::vector<PathPoint>& points) {
  nlohmann::json list = nlohmann::json::array();
  std::vector<double> lambdas;
  double seconds = 0;
  for (const PathPoint& pt : points) {
    list.push_back(path_point_report(pt, problem.n()));
    lambdas.push_back(pt.lambda);
    seconds += pt.seconds;
  }
  return {{"n", problem.n()},
          {"p", problem.features()},
          {"loss", problem.loss.name()},
          {"mu", problem.loss.mu},
          {"penalty", problem.penalty.name()},
          {"intercept", problem.intercept},
          {"screening", o.screening},
          {"static_screen", o.static_screen},
          {"ellipsoid_steps", o.static_screen ? o.screen.ellipsoid_steps : 0},
          {"working_set", o.solver.working_set},
          {"lambdas", lambdas},
          {"points", list},
          {"seconds", seconds}};
}

nlohmann::json compression_report(const ErmProblem& train, int n_test, const CompressionReport& r) {
  nlohmann::json curves = nlohmann::json::array();
  for (const CompressionCurve& curve : r.curves) {
    nlohmann::json points = nlohmann::json::array();
    for (const CompressionPoint& p : curve.points)
      points.push_back({{"fraction_removed", p.fraction_removed},
                        {"n_kept", p.n_kept},
                        {"test_accuracy", p.test_accuracy},
                        {"test_loss", json_number(p.test_loss)},
                        {"train_objective", json_number(p.train_objective)},
                        {"certified_gap", json_number(p.certified_gap)},
                        {"epochs", p.epochs}});
    curves.push_back({{"ranking", curve.ranking}, {"points", points}});
  }
  return {{"n_train", train.n()},
          {"n_test", n_test},
          {"p", train.features()},
          {"loss", train.loss.name()},
          {"mu", train.loss.mu},
          {"penalty", train.penalty.name()},
          {"lambda", train.lambda},
          {"full_primal", json_number(r.full.gap.primal)},
          {"full_gap", json_number(r.full.gap.gap)},
          {"full_epochs", r.full.epochs},
          {"full_converged", r.full.converged},
          {"full_test_accuracy", r.full_test_accuracy},
          {"n_certified", r.n_certified},
          {"fraction_certified", static_cast<double>(r.n_certified) / train.n()},
          {"curves", curves},
          {"seconds", r.seconds}};
}

}  // namespace inductive
