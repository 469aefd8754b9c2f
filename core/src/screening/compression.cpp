// Dataset compression experiments (see inductive/screening/compression.h).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

#include "inductive/error.h"
#include "inductive/screening/compression.h"
#include "inductive/splits.h"
#include "solver_detail.h"

namespace inductive {
namespace {

// Test accuracy (classification: sign agreement; regression: |prediction - target| <= mu) and mean test loss.
void evaluate_on_test(const ErmProblem& train, const VecD& x, const DesignMatrix& test_x,
                      const std::vector<double>& test_y, CompressionPoint& point) {
  const VecD score = decision_function(test_x, x, train.intercept, train.intercept_scaling);
  int good = 0;
  double loss = 0;
  for (Eigen::Index i = 0; i < score.size(); ++i) {
    const double t = train.loss.is_classification() ? test_y[i] * score[i] : score[i] - test_y[i];
    loss += train.loss.value(t);
    good += train.loss.is_classification() ? (t > 0) : (std::abs(t) <= train.loss.mu);
  }
  point.test_accuracy = score.size() > 0 ? static_cast<double>(good) / score.size() : 0.0;
  point.test_loss = score.size() > 0 ? loss / score.size() : 0.0;
}

}  // namespace

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
                                                const std::vector<double>& test_y, const SolverOptions& solver,
                                                const ProgressFn& progress) {
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
  }
  for (double f : fractions) {
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
    point.epochs = fit.epochs;
    const DualityGap gap = duality_gap(train, fit.x);  // the full problem, every sample: certified
    point.train_objective = gap.primal;
    point.certified_gap = gap.certified();
    evaluate_on_test(train, fit.x, test_x, test_y, point);
    curve.push_back(point);
    if (progress) progress("refit", static_cast<double>(curve.size()) / fractions.size());
  }
  return curve;
}

void CompressionOptions::validate() const {
  INDUCTIVE_CHECK(!fractions.empty(), ErrorCode::kInvalidArgument, "compression: no fractions");
  for (double f : fractions) {
    INDUCTIVE_CHECK(f >= 0 && f < 1, ErrorCode::kInvalidArgument, "compression: fractions must be in [0, 1): got ", f);
  }
  INDUCTIVE_CHECK(!rankings.empty(), ErrorCode::kInvalidArgument, "compression: no rankings");
  solver.validate();
  screen.validate();
}

CompressionReport compress_dataset(const ErmProblem& train, const DesignMatrix& test_x,
                                   const std::vector<double>& test_y, const CompressionOptions& options) {
  options.validate();
  train.validate();
  INDUCTIVE_CHECK(test_x.rows() > 0, ErrorCode::kInvalidArgument, "compression: the test set is empty");
  INDUCTIVE_CHECK(test_x.cols() == train.features(), ErrorCode::kShapeMismatch, "compression: test set has ",
                  test_x.cols(), " features, expected ", train.features());
  INDUCTIVE_CHECK(test_y.size() == static_cast<size_t>(test_x.rows()), ErrorCode::kShapeMismatch,
                  "compression: ", test_y.size(), " test labels for ", test_x.rows(), " test samples");
  const auto start = std::chrono::steady_clock::now();
  CompressionReport report;
  if (options.progress) options.progress("fit", 0.0);
  SolverOptions full = options.solver;
  full.dynamic_screening = false;  // the scores come from the static test at the solution, below
  report.full = solve_erm(train, full);
  if (options.progress) options.progress("fit", 1.0);
  const ScreenResult screened = screen_samples(train, report.full.x, options.screen);
  report.n_certified = screened.n_screened;
  const double total = static_cast<double>(options.rankings.size());
  for (size_t k = 0; k < options.rankings.size(); ++k) {
    const CompressionRanking ranking = options.rankings[k];
    const std::vector<int> order = ranking == CompressionRanking::kScreening ? order_by_score(screened.score)
                                   : ranking == CompressionRanking::kMargin
                                       ? order_by_score(margin_scores(train, report.full.x))
                                       : random_order(train.n(), options.seed);
    ProgressFn inner;
    if (options.progress) inner = [&](const char* stage, double f) { options.progress(stage, (k + f) / total); };
    report.curves.push_back(
        {ranking, compression_curve(train, order, options.fractions, test_x, test_y, options.solver, inner)});
  }
  CompressionPoint whole;
  evaluate_on_test(train, report.full.x, test_x, test_y, whole);
  report.full_test_accuracy = whole.test_accuracy;
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

HeldOut hold_out(const ErmProblem& all, double test_fraction, uint64_t seed) {
  all.validate();
  INDUCTIVE_CHECK(std::isfinite(test_fraction) && test_fraction > 0 && test_fraction < 1, ErrorCode::kInvalidArgument,
                  "compression: the test fraction must be in (0, 1): got ", test_fraction);
  const int n = all.n();
  HeldOut h;
  if (all.loss.is_classification()) {
    std::vector<int32_t> y(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) y[i] = all.y[i] > 0 ? 1 : 0;
    stratified_split(y, {"-1", "+1"}, test_fraction, seed, h.train_rows, h.test_rows);
  } else {
    INDUCTIVE_CHECK(n >= 2, ErrorCode::kInvalidArgument, "compression: a held-out test set needs >= 2 samples: got ",
                    n);
    random_split(n, test_fraction, seed, h.train_rows, h.test_rows);
  }
  h.train_x = all.x->select_rows(std::vector<int>(h.train_rows.begin(), h.train_rows.end()));
  h.test_x = all.x->select_rows(std::vector<int>(h.test_rows.begin(), h.test_rows.end()));
  h.train = all;
  h.train.x = h.train_x.get();
  h.train.y.clear();
  for (int32_t i : h.train_rows) h.train.y.push_back(all.y[i]);
  for (int32_t i : h.test_rows) h.test_y.push_back(all.y[i]);
  return h;
}

}  // namespace inductive
