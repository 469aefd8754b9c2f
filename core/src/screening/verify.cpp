// A posteriori verification of screenings (see inductive/screening/verify.h).
#include <cmath>
#include <limits>

#include "inductive/error.h"
#include "inductive/screening/verify.h"
#include "rows.h"

namespace inductive {

SolverOptions tight_solver_options() {
  SolverOptions o;
  o.tol = 1e-12;
  o.max_epochs = 100000;
  return o;
}

VerifyReport verify_screening(const ErmProblem& problem, const std::vector<uint8_t>& screened, SolverOptions options) {
  problem.validate();
  INDUCTIVE_CHECK(screened.size() == static_cast<size_t>(problem.n()), ErrorCode::kShapeMismatch,
                  "verify: ", screened.size(), " flags for ", problem.n(), " samples");
  options.dynamic_screening = false;  // the reference solutions must not rely on screening themselves
  VerifyReport rep;
  ActiveSet kept;
  for (int i = 0; i < problem.n(); ++i) {
    if (screened[i])
      ++rep.n_screened;
    else
      kept.push_back(i);
  }
  rep.full = solve_erm(problem, options);
  rep.kept = solve_erm(problem, options, nullptr, &kept);
  rep.primal_full = rep.full.gap.primal;
  rep.primal_kept = primal_objective(problem, rep.kept.x);
  rep.distance = (rep.kept.x - rep.full.x).norm();

  const double kappa = problem.penalty.strong_convexity(problem.lambda);
  const double r_full =
      kappa > 0 ? std::sqrt(2.0 * rep.full.gap.certified() / kappa) : std::numeric_limits<double>::infinity();
  const double r_kept =
      kappa > 0 ? std::sqrt(2.0 * rep.kept.gap.certified() / kappa) : std::numeric_limits<double>::infinity();
  rep.distance_bound = r_full + r_kept;

  const detail::ProblemRows rows(problem);
  const Interval flat = problem.loss.flat_region();
  rep.worst_inside = std::numeric_limits<double>::infinity();
  for (int i = 0; i < problem.n(); ++i) {
    if (!screened[i]) continue;
    const double t = rows.margin(i, rep.full.x.data());
    const double inside = std::min(t - flat.lo, flat.hi - t);
    rep.worst_inside = std::min(rep.worst_inside, inside);
    const double half =
        std::isfinite(r_full) ? r_full * std::sqrt(rows.sq_norm(i)) : std::numeric_limits<double>::infinity();
    if (t + half <= flat.lo || t - half >= flat.hi || flat.empty()) rep.violations.push_back(i);
  }
  if (rep.n_screened == 0) rep.worst_inside = 0;
  const bool kept_below = rep.kept.gap.primal < rep.full.gap.dual - 1e-9 * std::abs(rep.full.gap.dual);
  rep.safe = rep.violations.empty() && !kept_below && !(rep.distance > rep.distance_bound * (1 + 1e-9) + 1e-12);
  return rep;
}

}  // namespace inductive
