// The report of a solve-and-screen run (see inductive/screening/screen_report.h).
#include "inductive/screening/screen_report.h"

#include <cmath>

namespace inductive {

namespace {

nlohmann::json num(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

}  // namespace

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
          {"primal", num(fit.gap.primal)},
          {"dual", num(fit.gap.dual)},
          {"gap", num(fit.gap.gap)},
          {"relative_gap", num(fit.gap.primal != 0 ? fit.gap.gap / std::fabs(fit.gap.primal) : fit.gap.gap)},
          {"solve_seconds", fit.seconds},
          {"screen_seconds", stat.seconds},
          {"kernel", kernel_report},
          {"history", {{"epoch", fit.history_epoch}, {"gap", fit.history_gap}, {"active", fit.history_active}}}};
}

}  // namespace inductive
