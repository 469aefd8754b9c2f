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

// The coordinates (features, then the intercept) that can be non-zero in a minimiser of a pure-L1 problem with a
// smooth loss, from the dual ball around nu0 (see screen.h); all of them when the ball certifies none zero.
std::vector<int> certified_support(const ErmProblem& problem, const VecD& nu0, const DualityGap& gap, double& radius) {
  const int n = problem.n(), dim = problem.dim();
  radius = std::sqrt(2.0 * n * problem.loss.smoothness() * gap.certified());
  const detail::ProblemRows rows(problem);
  VecD u = VecD::Zero(dim), col_sq = VecD::Zero(dim), r(dim);
  for (int i = 0; i < n; ++i) {
    if (nu0[i] != 0.0) rows.axpy(i, nu0[i], u.data());  // R^T nu0
    r.setZero();
    rows.axpy(i, 1.0, r.data());
    col_sq += r.cwiseAbs2();
  }
  const double a = problem.penalty.l1_weight(problem.lambda);
  std::vector<int> support;
  for (int j = 0; j < dim; ++j) {
    // Rounding: the bound is inflated by a relative 1e-12 and the test made strict, so it can only keep more.
    const double bound = (std::fabs(u[j]) + std::sqrt(col_sq[j]) * radius) / n;
    if (bound * (1.0 + 1e-12) + 1e-300 >= a) support.push_back(j);
  }
  return support;
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

  if (options.l1_support && kappa == 0 && a > 0 && problem.loss.is_smooth() && std::isfinite(r.gap.dual)) {
    const VecD nu = nu0 != nullptr ? *nu0 : dual_point(problem, x0);
    r.support = certified_support(problem, nu, r.gap, r.dual_radius);
    const std::vector<int>& support = r.support;
    r.support_size = static_cast<int>(support.size());
    if (r.support_size < problem.dim()) {
      // The problem on the support's features (and the intercept when it survives): the same minimisers, padded
      // with zeros. Its regions hold x*_S, and its margins are the full problem's at x*.
      const int p = problem.features();
      std::vector<int> features;
      bool intercept = false;
      for (int j : support) (j < p ? features.push_back(j) : void(intercept = true));
      DenseDesignD::Matrix reduced(n, static_cast<Eigen::Index>(features.size()));
      VecD row(p);
      for (int i = 0; i < n; ++i) {
        row.setZero();
        problem.x->row_axpy(i, 1.0, row.data());
        for (size_t k = 0; k < features.size(); ++k) reduced(i, static_cast<Eigen::Index>(k)) = row[features[k]];
      }
      const DenseDesignD design(std::move(reduced));
      ErmProblem sub = problem;
      sub.x = &design;
      sub.intercept = intercept;
      VecD x0_sub(static_cast<Eigen::Index>(support.size()));
      for (size_t k = 0; k < support.size(); ++k) x0_sub[static_cast<Eigen::Index>(k)] = x0[support[k]];
      ScreenOptions inner = options;
      inner.l1_support = false;
      const ScreenResult in_support = screen_samples(sub, x0_sub, inner);
      const int by_full_balls = r.n_screened;
      tighten(r.bounds, in_support.bounds);
      apply_scores(problem, r);
      r.ellipsoid = in_support.ellipsoid;
      r.n_by_balls = std::max(by_full_balls, in_support.n_by_balls);
      r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      return r;
    }
  }
  r.n_by_balls = r.n_screened;

  if (options.ellipsoid_steps > 0 && smallest) {
    // Cuts from the problem reduced to the kept samples: it has the same minimiser, and each step is cheaper.
    const ActiveSet kept = r.kept();
    Ellipsoid e = *smallest;
    // Every iterate holds x* (each step keeps the half containing it), so each one's bounds tighten the combined
    // ones: more steps never screen fewer samples (the last ellipsoid alone may be thinner along some samples'
    // directions than an earlier one). Only the samples still kept are tested again.
    // Testing an iterate costs O(n p k) (k <= 2p, the ellipsoid's rank) and a step O(nnz + p k): past a few hundred
    // steps, test a spread of iterates and the last rather than every one (all hold x*; fewer tests only loosen).
    const int steps = options.ellipsoid_steps;
    const int test_every = steps <= 200 ? 1 : steps / 128;
    auto test = [&]() {
      std::vector<int> open;
      for (int i = 0; i < n; ++i)
        if (!r.screened[i]) open.push_back(i);
      if (open.empty()) return false;
      const MarginBounds b = test_region(problem, e, options.cut, &kept, open);
      for (size_t k = 0; k < open.size(); ++k) {
        r.bounds.lower[open[k]] = std::max(r.bounds.lower[open[k]], b.lower[static_cast<Eigen::Index>(k)]);
        r.bounds.upper[open[k]] = std::min(r.bounds.upper[open[k]], b.upper[static_cast<Eigen::Index>(k)]);
      }
      apply_scores(problem, r);
      return true;
    };
    bool tested_last = true;
    for (int s = 0; s < steps; ++s) {
      if (!e.step(subgradient(problem, e.centre(), &kept))) break;
      tested_last = false;
      if (s < 32 || (s + 1) % test_every == 0 || s + 1 == steps) {
        tested_last = true;
        if (!test()) break;
      }
    }
    if (!tested_last) test();
    r.ellipsoid = std::move(e);
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace inductive
