// Specification of the implicit Sinkhorn gradient: at convergence it is the derivative of the map C -> P, checked
// by central finite differences of a converged solve (double, batched, masked, non-uniform marginals, a zero-mass
// point); it agrees with the unrolled gradient once the iterations have converged; it needs no tape.
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

// Two masked problems, 7 x 5 and 3 x 2 in 7 x 5 padding; optionally row 2 of problem 0 without mass.
struct Batch : testing::MaskedBatch {
  explicit Batch(bool zero_mass_row = false) : MaskedBatch({7, 3}, {5, 2}, 170) {
    if (zero_mass_row) zero_row_mass(0, 2, 0);
  }
};

SinkhornOptions converged_options(double eps) {
  SinkhornOptions o;
  o.eps = eps;
  o.max_iter = 20000;
  o.tol = 1e-14;
  return o;
}

std::vector<double> plan_of(const Batch& bt, const std::vector<double>& c, const SinkhornOptions& o) {
  std::vector<double> plan(c.size());
  sinkhorn_log(bt.problem(c), o, SinkhornOutput<double>{plan.data()});
  return plan;
}

class ImplicitGradient : public ::testing::TestWithParam<double> {};

TEST_P(ImplicitGradient, IsTheDerivativeOfTheConvergedPlan) {
  for (bool zero_mass : {false, true}) {
    const Batch bt(zero_mass);
    const SinkhornOptions o = converged_options(GetParam());
    const auto w = random_vector<double>(bt.cost.size(), 5, -1.0, 1.0);
    const auto plan = plan_of(bt, bt.cost, o);
    std::vector<double> grad(bt.cost.size(), 123.0);
    sinkhorn_implicit_backward(bt.problem(bt.cost), o, plan.data(), w.data(), grad.data());
    const double h = 1e-6;
    for (size_t k = 0; k < bt.cost.size(); ++k) {
      if (!bt.valid(static_cast<int>(k))) {
        EXPECT_EQ(grad[k], 0.0) << "padding gradient must be 0";
        continue;
      }
      auto cp = bt.cost, cm = bt.cost;
      cp[k] += h;
      cm[k] -= h;
      const auto pp = plan_of(bt, cp, o), pm = plan_of(bt, cm, o);
      double fd = 0;
      for (size_t m = 0; m < w.size(); ++m) fd += w[m] * (pp[m] - pm[m]) / (2 * h);
      EXPECT_NEAR(grad[k], fd, 1e-7 + 1e-5 * std::fabs(fd))
          << "entry " << k << ", eps " << o.eps << (zero_mass ? ", with a zero-mass row" : "");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Eps, ImplicitGradient, ::testing::Values(0.1, 0.5, 2.0));

TEST(ImplicitGradientVsUnrolled, AgreeOnceTheIterationsHaveConverged) {
  const Batch bt;
  SinkhornOptions o;
  o.eps = 0.3;
  o.max_iter = 3000;  // far beyond convergence for these sizes
  const auto w = random_vector<double>(bt.cost.size(), 6, -1.0, 1.0);
  std::vector<double> plan(bt.cost.size()), unrolled(bt.cost.size()), implicit(bt.cost.size());
  SinkhornTape<double> tape;
  sinkhorn_log(bt.problem(bt.cost), o, SinkhornOutput<double>{plan.data()}, &tape);
  sinkhorn_log_backward(bt.problem(bt.cost), o, tape, plan.data(), w.data(), unrolled.data());
  sinkhorn_implicit_backward(bt.problem(bt.cost), o, plan.data(), w.data(), implicit.data());
  for (size_t k = 0; k < plan.size(); ++k) EXPECT_NEAR(implicit[k], unrolled[k], 1e-9) << "entry " << k;
}

TEST(ImplicitGradientVsUnrolled, TenIterationsAtTheOtkeDefaultsAreClose) {
  // OTKE trains with 10 iterations at eps 0.5 on similarities of unit-norm features: the implicit gradient there
  // approximates the unrolled one (it differentiates the converged map), which is what makes it usable instead.
  const int n = 40, p = 8;
  const auto s = random_vector<float>(static_cast<size_t>(n) * p, 21, -1.0f, 1.0f);
  const auto w = random_vector<float>(s.size(), 22, -1.0f, 1.0f);
  SinkhornOptions o;
  o.eps = 0.5;
  o.max_iter = 10;
  o.similarity = true;
  SinkhornProblem<float> pr{s.data(), 1, n, p};
  std::vector<float> plan(s.size()), unrolled(s.size()), implicit(s.size());
  SinkhornTape<float> tape;
  sinkhorn_log(pr, o, SinkhornOutput<float>{plan.data()}, &tape);
  sinkhorn_log_backward(pr, o, tape, plan.data(), w.data(), unrolled.data());
  sinkhorn_implicit_backward(pr, o, plan.data(), w.data(), implicit.data());
  double diff = 0, norm = 0;
  for (size_t k = 0; k < s.size(); ++k) {
    diff += (implicit[k] - unrolled[k]) * (implicit[k] - unrolled[k]);
    norm += unrolled[k] * unrolled[k];
  }
  EXPECT_LT(std::sqrt(diff / norm), 0.05);
}

TEST(ImplicitGradientSimilarity, IsTheNegatedCostGradient) {
  const int n = 5, p = 3;
  const auto c = random_cost<double>(n, p, 12);
  std::vector<double> s(c.size());
  for (size_t k = 0; k < c.size(); ++k) s[k] = -c[k];
  const auto w = random_vector<double>(c.size(), 13, -1, 1);
  auto grad_of = [&](const std::vector<double>& m, bool sim) {
    SinkhornOptions o;
    o.max_iter = 200;
    o.similarity = sim;
    SinkhornProblem<double> pr{m.data(), 1, n, p};
    std::vector<double> plan(m.size()), grad(m.size());
    sinkhorn_log(pr, o, SinkhornOutput<double>{plan.data()});
    sinkhorn_implicit_backward(pr, o, plan.data(), w.data(), grad.data());
    return grad;
  };
  const auto gc = grad_of(c, false), gs = grad_of(s, true);
  for (size_t k = 0; k < c.size(); ++k) EXPECT_NEAR(gs[k], -gc[k], 1e-12);
}

TEST(ImplicitGradientErrors, NamesMissingBuffers) {
  const auto c = random_cost<float>(4, 3, 16);
  SinkhornProblem<float> pr{c.data(), 1, 4, 3};
  std::vector<float> plan(12);
  testing::expect_error(
      [&] {
        sinkhorn_implicit_backward(pr, SinkhornOptions{}, plan.data(), plan.data(), static_cast<float*>(nullptr));
      },
      ErrorCode::kInvalidArgument, "grad_cost");
}

}  // namespace
}  // namespace inductive
