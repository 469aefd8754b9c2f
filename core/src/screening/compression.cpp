// Dataset compression experiments (see inductive/screening/compression.h).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "inductive/error.h"
#include "inductive/screening/compression.h"
#include "solver_detail.h"

namespace inductive {

std::vector<int> order_by_score(const VecD& score) {
  std::vector<int> order(static_cast<size_t>(score.size()));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return score[a] > score[b]; });
  return order;
}

std::vector<int> random_order(int n, uint32_t seed) {
  INDUCTIVE_CHECK(n >= 0, ErrorCode::kInvalidArgument, "random order: n must be >= 0: got ", n);
  std::vector<int> order = detail::all_rows(n);
  detail::SplitMix64 rng(seed);
  detail::shuffle(order, rng);
  return order;
}

VecD margin_scores(const ErmProblem& problem, const VecD& x) {
  const VecD t = margins(problem, x);
  const Interval flat = problem.loss.flat_region();
  VecD s(t.size());
  for (Eigen::Index i = 0; i < t.size(); ++i)
    s[i] = problem.loss.is_classification() ? t[i] - problem.loss.margin_threshold() : flat.hi - std::abs(t[i]);
  return s;
}

std::vector<CompressionPoint> compression_curve(const ErmProblem& train, const std::vector<int>& order,
                                                const std::vector<double>& fractions, const DesignMatrix& test_x,
                                                const std::vector<double>& test_y, const SolverOptions& solver) {
  train.validate();
  const int n = train.n();
  INDUCTIVE_CHECK(order.size() == static_cast<size_t>(n), ErrorCode::kShapeMismatch, "compression: order has ",
                  order.size(), " entries for ", n, " samples");
  INDUCTIVE_CHECK(test_x.cols() == train.features(), ErrorCode::kShapeMismatch, "compression: test set has ",
                  test_x.cols(), " features, expected ", train.features());
  INDUCTIVE_CHECK(test_y.size() == static_cast<size_t>(test_x.rows()), ErrorCode::kShapeMismatch,
                  "compression: ", test_y.size(), " test labels for ", test_x.rows(), " test samples");
  std::vector<CompressionPoint> curve;
  WarmStart warm;
  for (double f : fractions) {
    INDUCTIVE_CHECK(f >= 0 && f < 1, ErrorCode::kInvalidArgument, "compression: fractions must be in [0, 1): got ", f);
    const int drop = static_cast<int>(std::lround(f * n));
    std::vector<uint8_t> removed(static_cast<size_t>(n), 0);
    for (int k = 0; k < drop; ++k) removed[order[k]] = 1;
    ActiveSet kept;
    for (int i = 0; i < n; ++i)
      if (!removed[i]) kept.push_back(i);
    const SolveResult fit = solve_erm(train, solver, warm.x.size() > 0 ? &warm : nullptr, &kept);
    warm.x = fit.x;
    CompressionPoint point;
    point.fraction_removed = f;
    point.n_kept = static_cast<int>(kept.size());
    point.train_objective = primal_objective(train, fit.x);
    const VecD score = decision_function(test_x, fit.x, train.intercept, train.intercept_scaling);
    int good = 0;
    double loss = 0;
    for (Eigen::Index i = 0; i < score.size(); ++i) {
      const double t = train.loss.is_classification() ? test_y[i] * score[i] : score[i] - test_y[i];
      loss += train.loss.value(t);
      good += train.loss.is_classification() ? (t > 0) : (std::abs(t) <= train.loss.mu);
    }
    point.test_accuracy = score.size() > 0 ? static_cast<double>(good) / score.size() : 0.0;
    point.test_loss = score.size() > 0 ? loss / score.size() : 0.0;
    curve.push_back(point);
  }
  return curve;
}

}  // namespace inductive
