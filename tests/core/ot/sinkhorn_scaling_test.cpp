// The scaling-domain forward pass (sinkhorn_scaling.cpp) against the log domain it replaces when no tape is
// recorded: the same plans, potentials, summaries and iteration counts to rounding, in both layouts, with masks,
// zero-mass points, early stopping and similarities; outside its proven range (tiny eps, extreme marginals) and
// whenever a tape is recorded, the log domain runs and the bits are the log domain's.
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
    if (std::isfinite(a.f[i])) ASSERT_NEAR(a.f[i], b.f[i], potential_tol) << what << ": f " << i;
  }
  for (size_t j = 0; j < a.g.size(); ++j) {
    ASSERT_EQ(std::isinf(a.g[j]), std::isinf(b.g[j])) << what << ": g " << j;
    if (std::isfinite(a.g[j])) ASSERT_NEAR(a.g[j], b.g[j], potential_tol) << what << ": g " << j;
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
      if (tol > 0) EXPECT_LT(log.iters[0], o.max_iter) << "the tolerance should stop the loop early";
    }
  }
}

TEST(SinkhornScaling, AgreesInFloatAtOtkesShapeWithSimilarities) {
  // 8 sets of 400 x 64, similarities in [-1, 1] (normalised features), eps 0.5, 10 iterations: OTKE's pooling.
  const int batch = 8, n = 400, p = 64;
  const auto s = testing::random_vector<float>(static_cast<size_t>(batch) * n * p, 5, -1.0, 1.0);
  std::vector<int32_t> rows = {400, 350, 200, 399, 1, 64, 65, 300};
  SinkhornProblem<float> pr{s.data(), batch, n, p, rows.data()};
  SinkhornOptions o;
  o.eps = 0.5;
  o.max_iter = 10;
  o.similarity = true;
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

TEST(SinkhornScaling, ATapedSolveIsAlwaysTheLogDomains) {
  testing::MaskedBatch bt({10, 8}, {7, 7}, 92);
  SinkhornOptions o;
  o.eps = 0.3;
  o.max_iter = 15;
  SinkhornTape<double> t0, t1;
  const auto automatic = solve(bt.problem(bt.cost), o, 0, 0, &t0);
  const auto log = solve(bt.problem(bt.cost), o, 1, 0, &t1);
  EXPECT_TRUE(automatic == log);
  EXPECT_EQ(t0.lse, t1.lse);
}

}  // namespace
}  // namespace inductive
