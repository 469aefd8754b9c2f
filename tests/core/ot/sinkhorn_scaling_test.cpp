// The scaling-domain forward pass (sinkhorn_scaling.cpp) against the log domain it replaces when no tape is
// recorded: the same plans, potentials, summaries and iteration counts to rounding, in both layouts, with masks,
// zero-mass points, early stopping and similarities; with a tape (wide problems) the log domain's tape, and a
// backward through it that gives the log domain's gradient; outside its proven range (tiny eps, extreme marginals)
// and for narrow taped problems, the log domain runs and the bits are the log domain's.
#include <algorithm>
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "inductive/sinkhorn.h"
#include "masked_batch.h"

namespace inductive {
namespace {

template <typename T>
struct Outputs {
  std::vector<T> plan, f, g, err, value;
  std::vector<int32_t> iters;
  std::vector<uint8_t> converged;
  bool operator==(const Outputs& o) const {
    return plan == o.plan && f == o.f && g == o.g && err == o.err && value == o.value && iters == o.iters &&
           converged == o.converged;
  }
};

// Solves `pr` with the domain chosen automatically (0) or forced to the log domain (1); `layout` 0: automatic,
// 1: rows, 2: columns (SinkhornOptions::domain and ::layout).
template <typename T>
Outputs<T> solve(const SinkhornProblem<T>& pr, const SinkhornOptions& o, int domain, int layout = 0,
                 SinkhornTape<T>* tape = nullptr) {
  Outputs<T> r;
  const size_t cells = static_cast<size_t>(pr.batch) * pr.n_max * pr.p_max;
  r.plan.resize(cells);
  r.f.resize(static_cast<size_t>(pr.batch) * pr.n_max);
  r.g.resize(static_cast<size_t>(pr.batch) * pr.p_max);
  r.err.resize(pr.batch);
  r.value.resize(pr.batch);
  r.iters.resize(pr.batch);
  r.converged.resize(pr.batch);
  SinkhornOptions forced = o;
  forced.domain = domain ? SinkhornOptions::Domain::kLog : SinkhornOptions::Domain::kAuto;
  forced.layout = static_cast<SinkhornOptions::Layout>(layout);
  sinkhorn_log(pr, forced,
               SinkhornOutput<T>{r.plan.data(), r.f.data(), r.g.data(), r.iters.data(), r.err.data(),
                                 r.converged.data(), r.value.data()},
               tape);
  return r;
}

template <typename T>
void expect_close(const Outputs<T>& a, const Outputs<T>& b, double plan_tol, double potential_tol, double err_tol,
                  const char* what) {
  ASSERT_EQ(a.plan.size(), b.plan.size());
  for (size_t k = 0; k < a.plan.size(); ++k) ASSERT_NEAR(a.plan[k], b.plan[k], plan_tol) << what << ": plan " << k;
  for (size_t i = 0; i < a.f.size(); ++i) {
    ASSERT_EQ(std::isinf(a.f[i]), std::isinf(b.f[i])) << what << ": f " << i;
    if (std::isfinite(a.f[i])) {
      ASSERT_NEAR(a.f[i], b.f[i], potential_tol) << what << ": f " << i;
    }
  }
  for (size_t j = 0; j < a.g.size(); ++j) {
    ASSERT_EQ(std::isinf(a.g[j]), std::isinf(b.g[j])) << what << ": g " << j;
    if (std::isfinite(a.g[j])) {
      ASSERT_NEAR(a.g[j], b.g[j], potential_tol) << what << ": g " << j;
    }
  }
  for (size_t bi = 0; bi < a.iters.size(); ++bi) {
    EXPECT_EQ(a.iters[bi], b.iters[bi]) << what << ": iterations of problem " << bi;
    EXPECT_EQ(a.converged[bi], b.converged[bi]) << what << ": converged " << bi;
    EXPECT_NEAR(a.value[bi], b.value[bi], potential_tol) << what << ": cost " << bi;
    EXPECT_NEAR(a.err[bi], b.err[bi], err_tol) << what << ": marginal error " << bi;
  }
}

TEST(SinkhornScaling, AgreesWithTheLogDomainOnMaskedBatchesInBothLayouts) {
  testing::MaskedBatch bt({40, 23}, {6, 5}, 90);  // narrow (p <= 32 < n): the columns layout when automatic
  bt.zero_row_mass(0, 3, 0);
  for (int layout : {1, 2}) {
    for (double tol : {0.0, 1e-9}) {
      SinkhornOptions o;
      o.eps = 0.1;
      o.max_iter = 200;
      o.tol = tol;
      const auto log = solve(bt.problem(bt.cost), o, 1, layout);
      const auto scaled = solve(bt.problem(bt.cost), o, 0, layout);
      expect_close(scaled, log, 1e-13, 1e-10, 1e-12, layout == 1 ? "rows" : "columns");
      EXPECT_FALSE(scaled == log) << "the scaling domain did not run (the bits are the log domain's)";
      if (tol > 0) {
        EXPECT_LT(log.iters[0], o.max_iter) << "the tolerance should stop the loop early";
      }
    }
  }
}

// OTKE's pooling: 8 sets of up to 400 rows against p supports, similarities in [-1, 1] (normalised features),
// eps 0.5, 10 iterations.
struct OtkeShape {
  static constexpr int kBatch = 8, kRows = 400;
  int p;
  std::vector<float> s;
  std::vector<int32_t> rows = {400, 350, 200, 399, 1, 64, 65, 300};
  SinkhornOptions o;
  OtkeShape(int supports, uint32_t seed)
      : p(supports), s(testing::random_vector<float>(static_cast<size_t>(kBatch) * kRows * p, seed, -1.0, 1.0)) {
    o.eps = 0.5;
    o.max_iter = 10;
    o.similarity = true;
  }
  SinkhornProblem<float> problem() const { return {s.data(), kBatch, kRows, p, rows.data()}; }
};

TEST(SinkhornScaling, AgreesInFloatAtOtkesShapeWithSimilarities) {
  const OtkeShape shape(64, 5);
  const SinkhornProblem<float> pr = shape.problem();
  const SinkhornOptions& o = shape.o;
  const auto log = solve(pr, o, 1);
  const auto scaled = solve(pr, o, 0);
  // The marginal error sums 464 float residuals: it agrees to float rounding of that sum.
  expect_close(scaled, log, 2e-8, 2e-5, 1e-6, "float");
  EXPECT_FALSE(scaled == log);
}

TEST(SinkhornScaling, OutsideItsRangeTheLogDomainSolvesItBitForBit) {
  testing::MaskedBatch bt({12, 7}, {9, 4}, 91);
  SinkhornOptions o;
  o.max_iter = 50;
  o.eps = 0.005;  // logits span ~ 200 > 30 (float) ... and for double, costs up to ~3 / 0.005 = 600 > 200
  EXPECT_TRUE(solve(bt.problem(bt.cost), o, 0) == solve(bt.problem(bt.cost), o, 1));
  // Float: eps 0.02 (span ~ 150).
  const auto c = testing::random_cost<float>(30, 20, 7);
  SinkhornProblem<float> pf{c.data(), 1, 30, 20};
  o.eps = 0.02;
  EXPECT_TRUE(solve(pf, o, 0) == solve(pf, o, 1));
  // Marginals 1e-15 apart: outside the range too, whatever eps.
  o.eps = 1;
  std::vector<float> a(30, 1.0f), b(20, 1.0f / 20);
  a[0] = 1e-15f;
  float mass = 0;
  for (float w : a) mass += w;
  for (float& w : a) w /= mass;
  pf.a = a.data();
  pf.b = b.data();
  EXPECT_TRUE(solve(pf, o, 0) == solve(pf, o, 1));
}

// Backward of `pr` through its tape, the domain chosen automatically (0) or forced to the log domain (1).
template <typename T>
std::vector<T> backward(const SinkhornProblem<T>& pr, const SinkhornOptions& o, int domain, const SinkhornTape<T>& tape,
                        const std::vector<T>& plan, const std::vector<T>& dplan) {
  SinkhornOptions forced = o;
  forced.domain = domain ? SinkhornOptions::Domain::kLog : SinkhornOptions::Domain::kAuto;
  std::vector<T> grad(plan.size(), T(7));
  sinkhorn_log_backward(pr, forced, tape, plan.data(), dplan.data(), grad.data());
  return grad;
}

// A taped solve in the scaling domain records the log domain's tape, and the backward through either tape, in either
// domain, gives the log domain's gradient to rounding.
void expect_taped_solve_and_gradient_as_the_log_domains(testing::MaskedBatch& bt) {
  for (double tol : {0.0, 1e-9}) {
    SinkhornOptions o;
    o.eps = 0.3;
    o.max_iter = 25;
    o.tol = tol;
    SinkhornTape<double> t0, t1;
    const auto scaled = solve(bt.problem(bt.cost), o, 0, 0, &t0);
    const auto log = solve(bt.problem(bt.cost), o, 1, 0, &t1);
    expect_close(scaled, log, 1e-13, 1e-10, 1e-12, "taped");
    EXPECT_FALSE(scaled == log) << "the scaling domain did not run (the bits are the log domain's)";
    ASSERT_EQ(t0.n_iter, t1.n_iter);
    ASSERT_EQ(t0.offset, t1.offset);
    ASSERT_EQ(t0.lse.size(), t1.lse.size());
    for (size_t k = 0; k < t0.lse.size(); ++k) ASSERT_NEAR(t0.lse[k], t1.lse[k], 1e-10) << "tape entry " << k;
    // The gradient through either tape, in either domain, is the log domain's to rounding.
    const auto dplan = testing::random_vector<double>(log.plan.size(), 94, -1.0, 1.0);
    const auto want = backward(bt.problem(bt.cost), o, 1, t1, log.plan, dplan);
    for (const auto* tape : {&t0, &t1}) {
      const auto got = backward(bt.problem(bt.cost), o, 0, *tape, log.plan, dplan);
      EXPECT_NE(got, want) << "the scaling-domain backward did not run";
      for (size_t k = 0; k < want.size(); ++k) ASSERT_NEAR(got[k], want[k], 1e-10) << "dC " << k << ", tol " << tol;
    }
  }
}

TEST(SinkhornScaling, AWideTapedSolveRunsScaledAndRecordsTheLogDomainsTapeAndGradient) {
  // p > 32: the rows layout. A zero-mass row, masks, non-uniform marginals, early stopping or a fixed count.
  testing::MaskedBatch bt({40, 35}, {36, 33}, 93);
  bt.zero_row_mass(0, 5, 1);
  expect_taped_solve_and_gradient_as_the_log_domains(bt);
}

TEST(SinkhornScaling, ANarrowTapedSolveRunsScaledOnETransposedWithTheLogDomainsTapeAndGradient) {
  // p <= 32 < n: the columns layout, E and dK kept p x n. A zero-mass row in each problem, masks, non-uniform
  // marginals.
  testing::MaskedBatch bt({40, 23}, {6, 5}, 92);
  bt.zero_row_mass(0, 3, 0);
  bt.zero_row_mass(1, 7, 1);
  expect_taped_solve_and_gradient_as_the_log_domains(bt);
}

// L(C) = sum_k W_k P_k(C) through a taped scaling-domain solve and its backward, against central differences.
void expect_scaled_gradient_as_finite_differences(const testing::MaskedBatch& bt) {
  SinkhornOptions o;
  o.eps = 0.3;
  o.max_iter = 10;
  const auto w = testing::random_vector<double>(bt.cost.size(), 98, -1.0, 1.0);
  SinkhornTape<double> tape;
  const auto at = solve(bt.problem(bt.cost), o, 0, 0, &tape);
  const auto grad = backward(bt.problem(bt.cost), o, 0, tape, at.plan, w);
  SinkhornTape<double> log_tape;
  const auto log = solve(bt.problem(bt.cost), o, 1, 0, &log_tape);
  EXPECT_NE(grad, backward(bt.problem(bt.cost), o, 1, log_tape, log.plan, w)) << "the scaling domain did not run";
  auto loss = [&](const std::vector<double>& c) {
    const auto r = solve(bt.problem(c), o, 0);
    double l = 0;
    for (size_t k = 0; k < c.size(); ++k) l += w[k] * r.plan[k];
    return l;
  };
  const double h = 1e-6;
  for (size_t k = 0; k < bt.cost.size(); ++k) {
    if (!bt.valid(static_cast<int>(k))) continue;
    auto cp = bt.cost, cm = bt.cost;
    cp[k] += h;
    cm[k] -= h;
    EXPECT_NEAR(grad[k], (loss(cp) - loss(cm)) / (2 * h), 1e-7) << "dC " << k;
  }
}

TEST(SinkhornScaling, TheScaledGradientMatchesFiniteDifferences) {
  expect_scaled_gradient_as_finite_differences(testing::MaskedBatch({5, 4}, {7, 6}, 97));   // n < p: rows layout
  expect_scaled_gradient_as_finite_differences(testing::MaskedBatch({12, 9}, {4, 3}, 99));  // p < n: E transposed
}

TEST(SinkhornScaling, TheScaledGradientAgreesInFloatAtOtkesShapes) {
  // OTKE's training step: 8 sets of 400 x 64 (rows layout) or 400 x 10 (E transposed) similarities in [-1, 1],
  // eps 0.5, 10 iterations, a tape.
  for (const int p : {64, 10}) {
    const OtkeShape shape(p, 6);
    const SinkhornProblem<float> pr = shape.problem();
    const SinkhornOptions& o = shape.o;
    SinkhornTape<float> t0, t1;
    const auto scaled = solve(pr, o, 0, 0, &t0);
    const auto log = solve(pr, o, 1, 0, &t1);
    expect_close(scaled, log, 2e-8, 2e-5, 1e-6, "float, taped");
    const auto dplan = testing::random_vector<float>(log.plan.size(), 95, -1.0, 1.0);
    const auto want = backward(pr, o, 1, t1, log.plan, dplan);
    const auto got = backward(pr, o, 0, t0, scaled.plan, dplan);
    float scale = 0;
    for (float w : want) scale = std::max(scale, std::fabs(w));
    ASSERT_GT(scale, 0.0f);
    for (size_t k = 0; k < want.size(); ++k) ASSERT_NEAR(got[k], want[k], 1e-4f * scale) << "p " << p << ", dS " << k;
  }
}

TEST(SinkhornScaling, OutsideItsRangeTheBackwardIsTheLogDomainsBitForBit) {
  const auto c = testing::random_cost<double>(40, 36, 8);
  SinkhornProblem<double> pr{c.data(), 1, 40, 36};
  SinkhornOptions o;
  o.eps = 0.005;  // logits span far more than 200
  o.max_iter = 20;
  SinkhornTape<double> t0, t1;
  const auto automatic = solve(pr, o, 0, 0, &t0);
  const auto log = solve(pr, o, 1, 0, &t1);
  EXPECT_TRUE(automatic == log);
  const auto dplan = testing::random_vector<double>(log.plan.size(), 96, -1.0, 1.0);
  EXPECT_EQ(backward(pr, o, 0, t0, log.plan, dplan), backward(pr, o, 1, t1, log.plan, dplan));
}

}  // namespace
}  // namespace inductive
