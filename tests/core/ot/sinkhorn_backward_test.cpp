// Specification of the Sinkhorn gradients: central finite differences in double for dL/dC with L = <W, P>
// (plan gradient) and for the regularised cost, on batched masked problems; the tape stays O(iters (n + p)).
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "inductive/sinkhorn.h"
#include "masked_batch.h"

namespace inductive {
namespace {

using testing::random_cost;
using testing::random_marginal;
using testing::random_vector;

// Two masked problems, 6 x 5 and 3 x 2 in 6 x 5 padding.
struct Batch : testing::MaskedBatch {
  Batch() : MaskedBatch({6, 3}, {5, 2}, 70) {}
};

// L(C) = sum_k W_k P_k(C), and optionally the sum of regularised costs.
double loss(const Batch& bt, const std::vector<double>& c, const std::vector<double>& w, const SinkhornOptions& o,
            bool cost_value) {
  std::vector<double> plan(c.size()), value(bt.batch);
  sinkhorn_log(bt.problem(c), o,
               SinkhornOutput<double>{plan.data(), nullptr, nullptr, nullptr, nullptr, nullptr, value.data()});
  double l = 0;
  if (cost_value) {
    for (double v : value) l += v;
  } else {
    for (size_t k = 0; k < c.size(); ++k) l += w[k] * plan[k];
  }
  return l;
}

class SinkhornGradient : public ::testing::TestWithParam<int> {};

TEST_P(SinkhornGradient, PlanGradientMatchesFiniteDifferences) {
  const Batch bt;
  SinkhornOptions o;
  o.eps = 0.3;
  o.max_iter = GetParam();
  const auto w = random_vector<double>(bt.cost.size(), 5, -1.0, 1.0);
  std::vector<double> plan(bt.cost.size()), grad(bt.cost.size(), 123.0);
  SinkhornTape<double> tape;
  sinkhorn_log(bt.problem(bt.cost), o, SinkhornOutput<double>{plan.data()}, &tape);
  sinkhorn_log_backward(bt.problem(bt.cost), o, tape, plan.data(), w.data(), grad.data());
  const double h = 1e-6;
  for (size_t k = 0; k < bt.cost.size(); ++k) {
    if (!bt.valid(static_cast<int>(k))) {
      EXPECT_EQ(grad[k], 0.0) << "padding gradient must be 0";
      continue;
    }
    auto cp = bt.cost, cm = bt.cost;
    cp[k] += h;
    cm[k] -= h;
    const double fd = (loss(bt, cp, w, o, false) - loss(bt, cm, w, o, false)) / (2 * h);
    EXPECT_NEAR(grad[k], fd, 1e-6 + 1e-5 * std::fabs(fd)) << "entry " << k << " with " << o.max_iter << " iterations";
  }
}

TEST_P(SinkhornGradient, CostGradientMatchesFiniteDifferences) {
  const Batch bt;
  SinkhornOptions o;
  o.eps = 0.3;
  o.max_iter = GetParam();
  std::vector<double> plan(bt.cost.size()), f(bt.a.size()), g(bt.b.size()), grad(bt.cost.size());
  SinkhornTape<double> tape;
  sinkhorn_log(bt.problem(bt.cost), o, SinkhornOutput<double>{plan.data(), f.data(), g.data()}, &tape);
  sinkhorn_cost_backward(bt.problem(bt.cost), o, tape, plan.data(), f.data(), g.data(), grad.data());
  const double h = 1e-6;
  for (size_t k = 0; k < bt.cost.size(); ++k) {
    if (!bt.valid(static_cast<int>(k))) continue;
    auto cp = bt.cost, cm = bt.cost;
    cp[k] += h;
    cm[k] -= h;
    const double fd = (loss(bt, cp, {}, o, true) - loss(bt, cm, {}, o, true)) / (2 * h);
    EXPECT_NEAR(grad[k], fd, 1e-7 + 1e-5 * std::fabs(fd)) << "entry " << k;
  }
}

INSTANTIATE_TEST_SUITE_P(Iterations, SinkhornGradient, ::testing::Values(1, 3, 10, 50));

TEST(SinkhornGradientSimilarity, IsTheNegatedCostGradient) {
  const int n = 4, p = 3;
  const auto c = random_cost<double>(n, p, 12);
  std::vector<double> s(c.size());
  for (size_t k = 0; k < c.size(); ++k) s[k] = -c[k];
  const auto w = random_vector<double>(c.size(), 13, -1, 1);
  SinkhornOptions o;
  o.max_iter = 10;
  auto grad_of = [&](const std::vector<double>& m, bool sim) {
    SinkhornOptions oo = o;
    oo.similarity = sim;
    SinkhornProblem<double> pr{m.data(), 1, n, p};
    std::vector<double> plan(m.size()), grad(m.size());
    SinkhornTape<double> tape;
    sinkhorn_log(pr, oo, SinkhornOutput<double>{plan.data()}, &tape);
    sinkhorn_log_backward(pr, oo, tape, plan.data(), w.data(), grad.data());
    return grad;
  };
  const auto gc = grad_of(c, false), gs = grad_of(s, true);
  for (size_t k = 0; k < c.size(); ++k) EXPECT_NEAR(gs[k], -gc[k], 1e-12);
}

TEST(SinkhornGradientMemory, TapeGrowsWithIterationsOnlyAsNPlusP) {
  const int n = 50, p = 20;
  const auto c = random_cost<float>(n, p, 14);
  SinkhornProblem<float> pr{c.data(), 1, n, p};
  std::vector<float> plan(c.size());
  for (int iters : {10, 100}) {
    SinkhornOptions o;
    o.max_iter = iters;
    SinkhornTape<float> tape;
    sinkhorn_log(pr, o, SinkhornOutput<float>{plan.data()}, &tape);
    EXPECT_EQ(tape.lse.size(), static_cast<size_t>(iters) * (n + p));
    EXPECT_EQ(tape.n_iter[0], iters);
  }
}

TEST(SinkhornGradientMemory, EarlyStopRecordsOnlyTheIterationsRun) {
  const int n = 10, p = 8;
  const auto c = random_cost<double>(n, p, 15);
  SinkhornProblem<double> pr{c.data(), 1, n, p};
  SinkhornOptions o;
  o.tol = 1e-6;
  o.max_iter = 1000;
  std::vector<double> plan(c.size());
  int32_t iters = 0;
  SinkhornTape<double> tape;
  sinkhorn_log(pr, o, SinkhornOutput<double>{plan.data(), nullptr, nullptr, &iters}, &tape);
  EXPECT_EQ(tape.n_iter[0], iters);
  EXPECT_EQ(tape.lse.size(), static_cast<size_t>(iters) * (n + p));
}

TEST(SinkhornGradientErrors, RejectsATapeOfAnotherProblem) {
  const auto c = random_cost<float>(4, 3, 16);
  SinkhornProblem<float> pr{c.data(), 1, 4, 3};
  SinkhornTape<float> empty;
  std::vector<float> plan(12), grad(12);
  testing::expect_error(
      [&] { sinkhorn_log_backward(pr, SinkhornOptions{}, empty, plan.data(), plan.data(), grad.data()); },
      ErrorCode::kShapeMismatch, "tape");
}

// Narrow problems run on K transposed (detail::solve_narrow); both layouts must give the same plan, potentials,
// summaries and gradient, with and without early stopping, zero-mass rows and clamped logits.
TEST(SinkhornLayouts, RowsAndColumnsAgree) {
  Batch bt;
  bt.zero_row_mass(0, 2, 0);
  bt.cost[7] = 1e35;  // clamped
  for (double tol : {0.0, 1e-7}) {
    SinkhornOptions o;
    o.eps = 0.2;
    o.max_iter = 40;
    o.tol = tol;
    const auto w = random_vector<double>(bt.cost.size(), 8, -1.0, 1.0);
    struct Out {
      std::vector<double> plan, f, g, value, err, grad;
      std::vector<int32_t> iters;
    } out[2];
    for (int layout : {1, 2}) {
      SinkhornOptions forced = o;
      forced.layout = layout == 1 ? SinkhornOptions::Layout::kRows : SinkhornOptions::Layout::kColumns;
      Out& r = out[layout - 1];
      r.plan.resize(bt.cost.size());
      r.f.resize(bt.a.size());
      r.g.resize(bt.b.size());
      r.value.resize(bt.batch);
      r.err.resize(bt.batch);
      r.iters.resize(bt.batch);
      r.grad.resize(bt.cost.size());
      SinkhornTape<double> tape;
      sinkhorn_log(bt.problem(bt.cost), forced,
                   SinkhornOutput<double>{r.plan.data(), r.f.data(), r.g.data(), r.iters.data(), r.err.data(), nullptr,
                                          r.value.data()},
                   &tape);
      sinkhorn_log_backward(bt.problem(bt.cost), forced, tape, r.plan.data(), w.data(), r.grad.data());
    }
    for (size_t k = 0; k < bt.cost.size(); ++k) {
      EXPECT_NEAR(out[0].plan[k], out[1].plan[k], 1e-14) << "plan " << k;
      EXPECT_NEAR(out[0].grad[k], out[1].grad[k], 1e-10) << "grad " << k;
    }
    for (size_t i = 0; i < bt.a.size(); ++i) EXPECT_EQ(std::isinf(out[0].f[i]), std::isinf(out[1].f[i]));
    for (size_t i = 0; i < bt.a.size(); ++i)
      if (std::isfinite(out[0].f[i])) {
        EXPECT_NEAR(out[0].f[i], out[1].f[i], 1e-10) << "f " << i;
      }
    for (size_t j = 0; j < bt.b.size(); ++j) EXPECT_NEAR(out[0].g[j], out[1].g[j], 1e-10) << "g " << j;
    for (int bi = 0; bi < bt.batch; ++bi) {
      EXPECT_EQ(out[0].iters[bi], out[1].iters[bi]);
      EXPECT_NEAR(out[0].value[bi], out[1].value[bi], 1e-12);
      EXPECT_NEAR(out[0].err[bi], out[1].err[bi], 1e-12);
    }
  }
}

}  // namespace
}  // namespace inductive
