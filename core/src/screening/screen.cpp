// Static screening from certified regions (see inductive/screening/screen.h).
#include <algorithm>
#include <chrono>
#include <cmath>

#include "inductive/error.h"
#include "inductive/screening/screen.h"
#include "rows.h"

namespace inductive {

void ScreenOptions::validate() const {
  INDUCTIVE_CHECK(ellipsoid_steps >= 0, ErrorCode::kInvalidArgument, "screen: ellipsoid_steps must be >= 0: got ",
                  ellipsoid_steps);
}

ActiveSet ScreenResult::kept() const {
  ActiveSet k;
  for (size_t i = 0; i < screened.size(); ++i)
    if (!screened[i]) k.push_back(static_cast<int>(i));
  return k;
}

namespace {

MarginBounds test_region(const ErmProblem& problem, const Ellipsoid& region, bool cut, const ActiveSet* active,
                         const std::vector<int>& rows) {
  if (!cut) return margin_bounds(problem, region, nullptr, rows);
  const VecD g = subgradient(problem, region.centre(), active);
  return margin_bounds(problem, region, &g, rows);
}

void apply_scores(const ErmProblem& problem, ScreenResult& r) {
  r.score = screening_scores(problem.loss, r.bounds);
  r.screened.assign(static_cast<size_t>(problem.n()), 0);
  r.n_screened = 0;
  for (int i = 0; i < problem.n(); ++i)
    if (r.score[i] > 0) {
      r.screened[i] = 1;
      ++r.n_screened;
    }
}

}  // namespace

ScreenResult screen_samples(const ErmProblem& problem, const VecD& x0, const ScreenOptions& options, const VecD* nu0) {
  const auto start = std::chrono::steady_clock::now();
  problem.validate();
  options.validate();
  INDUCTIVE_CHECK(x0.size() == problem.dim(), ErrorCode::kShapeMismatch, "screen: x0 has ", x0.size(),
                  " entries, expected ", problem.dim());
  INDUCTIVE_CHECK(x0.allFinite(), ErrorCode::kInvalidArgument, "screen: x0 must be finite");
  INDUCTIVE_CHECK(nu0 == nullptr || nu0->size() == problem.n(), ErrorCode::kShapeMismatch, "screen: nu0 has ",
                  nu0 != nullptr ? nu0->size() : 0, " entries, expected ", problem.n());

  ScreenResult r;
  const int n = problem.n();
  const auto all = detail::all_rows(n);
  const double inf = std::numeric_limits<double>::infinity();
  r.bounds.lower = VecD::Constant(n, -inf);
  r.bounds.upper = VecD::Constant(n, inf);
  r.gap = nu0 != nullptr ? duality_gap(problem, x0, *nu0) : duality_gap(problem, x0);
  std::optional<Ellipsoid> smallest;
  auto consider = [&](const Ellipsoid& ball) {
    tighten(r.bounds, test_region(problem, ball, options.cut, nullptr, all));
    if (!smallest || ball.scale() < smallest->scale()) smallest = ball;
  };

  const double kappa = problem.penalty.strong_convexity(problem.lambda);
  if (options.gap_ball && kappa > 0 && std::isfinite(r.gap.dual)) {
    r.gap_radius = std::sqrt(2.0 * r.gap.certified() / kappa);
    consider(Ellipsoid::ball(x0, r.gap_radius));
  }
  const double a = problem.penalty.l1_weight(problem.lambda);
  if (options.l1_ball && a > 0) {
    const VecD zero = VecD::Zero(problem.dim());
    const double bound = std::min(r.gap.primal, primal_objective(problem, zero));
    r.l1_radius = bound / a * (1.0 + 1e-12);
    consider(Ellipsoid::ball(zero, r.l1_radius));
  }
  apply_scores(problem, r);
  r.n_by_balls = r.n_screened;

  if (options.ellipsoid_steps > 0 && smallest) {
    // Cuts from the problem reduced to the kept samples: it has the same minimiser, and each step is cheaper.
    const ActiveSet kept = r.kept();
    Ellipsoid e = *smallest;
    // Every iterate holds x* (each step keeps the half containing it), so each one's bounds tighten the combined
    // ones: more steps never screen fewer samples (the last ellipsoid alone may be thinner along some samples'
    // directions than an earlier one). Only the samples still kept are tested again.
    for (int s = 0; s < options.ellipsoid_steps; ++s) {
      if (!e.step(subgradient(problem, e.centre(), &kept))) break;
      std::vector<int> open;
      for (int i = 0; i < n; ++i)
        if (!r.screened[i]) open.push_back(i);
      if (open.empty()) break;
      const MarginBounds b = test_region(problem, e, options.cut, &kept, open);
      for (size_t k = 0; k < open.size(); ++k) {
        r.bounds.lower[open[k]] = std::max(r.bounds.lower[open[k]], b.lower[static_cast<Eigen::Index>(k)]);
        r.bounds.upper[open[k]] = std::min(r.bounds.upper[open[k]], b.upper[static_cast<Eigen::Index>(k)]);
      }
      apply_scores(problem, r);
    }
    r.ellipsoid = std::move(e);
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace inductive
