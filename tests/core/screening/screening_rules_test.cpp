// The closed-form test (thesis Lemma "closed-form screening test") against brute-force maximisation over the cut
// ellipsoid, and the factor the printed lemma gets wrong.
#include <cmath>
#include <random>

#include <Eigen/Cholesky>
#include <gtest/gtest.h>

#include "inductive/screening.h"
#include "screening_test_util.h"

namespace inductive {
namespace {

// Random ellipsoid: a few ellipsoid-method steps from a ball, so that E has the low-rank form.
Ellipsoid random_ellipsoid(std::mt19937& rng, int p) {
  std::normal_distribution<double> normal;
  VecD c(p);
  for (auto& v : c) v = normal(rng);
  Ellipsoid e = Ellipsoid::ball(c, 1.5);
  for (int k = 0; k < 3; ++k) {
    VecD g(p);
    for (auto& v : g) v = normal(rng);
    e.step(g);
  }
  return e;
}

// max r^T x over {x = z + E^{1/2} u : ||u|| <= 1, g^T E^{1/2} u <= 0}. The linear maximum lies on the boundary:
// the sphere cap or the flat face of the cut; sample both densely.
double brute_force_max(const Ellipsoid& e, const VecD* g, const VecD& r, std::mt19937& rng) {
  const MatDc half = Eigen::LLT<MatDc>(e.dense()).matrixL();
  const VecD a = half.transpose() * r;                                    // r^T E^{1/2} u = a^T u
  const VecD h = g ? VecD(half.transpose() * *g) : VecD::Zero(r.size());  // cut: h^T u <= 0
  std::normal_distribution<double> normal;
  double best = -1e300;
  const int p = static_cast<int>(r.size());
  for (int s = 0; s < 60000; ++s) {
    VecD u(p);
    for (auto& v : u) v = normal(rng);
    if (g != nullptr && s % 2 == 1) u -= h * (h.dot(u) / h.squaredNorm());  // on the cut's face
    u /= u.norm();
    if (g != nullptr && h.dot(u) > 1e-12) u = -u;  // use the kept half of the sphere
    if (g != nullptr && h.dot(u) > 1e-12) continue;
    best = std::max(best, a.dot(u));
  }
  return r.dot(e.centre()) + best;
}

TEST(ClosedFormTest, MatchesBruteForceOverTheCutEllipsoid) {
  std::mt19937 rng(5);
  std::normal_distribution<double> normal;
  for (int trial = 0; trial < 12; ++trial) {
    const int p = 2 + trial % 2;
    const Ellipsoid e = random_ellipsoid(rng, p);
    VecD r(p), g(p);
    for (auto& v : r) v = normal(rng);
    for (auto& v : g) v = normal(rng);
    const double exact_cut = max_linear_form(e, &g, r), exact = max_linear_form(e, nullptr, r);
    const double brute_cut = brute_force_max(e, &g, r, rng), brute = brute_force_max(e, nullptr, r, rng);
    // Brute force approaches from below; the closed form is the supremum.
    EXPECT_GE(exact_cut, brute_cut - 1e-9) << "trial " << trial;
    EXPECT_NEAR(exact_cut, brute_cut, 2e-3 * (1 + std::abs(exact_cut))) << "trial " << trial;
    EXPECT_NEAR(exact, brute, 2e-3 * (1 + std::abs(exact))) << "trial " << trial;
    EXPECT_LE(exact_cut, exact + 1e-12);  // the cut can only lower the maximum
  }
}

TEST(ClosedFormTest, ThePrintedLemmaUnderestimatesTheMaximumWhenTheCutIsActive) {
  // Thesis: max = r^T (z + E (r - nu g) / (2 gamma)), gamma = sqrt((r - nu g)^T E (r - nu g) / 2). That is
  // r^T z + sqrt(q / 2) with q = r^T E r - (g^T E r)^2 / g^T E g, below the true r^T z + sqrt(q): unsafe.
  Ellipsoid e = Ellipsoid::ball(VecD::Zero(2), 1.0);
  VecD r(2), g(2);
  r << 1.0, 0.0;
  g << 1.0, 1.0;  // g^T E r > 0: the cut is active
  const MatDc E = e.dense();
  const double nu = g.dot(E * r) / g.dot(E * g);
  const VecD d = r - nu * g;
  const double gamma = std::sqrt(d.dot(E * d) / 2.0);
  const double printed = r.dot(e.centre() + E * d / (2 * gamma));
  const double ours = max_linear_form(e, &g, r);
  EXPECT_NEAR(ours, std::sqrt(0.5), 1e-12);  // the unit disk cut by x + y <= 0: max x is at (1/sqrt2, -1/sqrt2)
  EXPECT_NEAR(printed, 0.5, 1e-12);          // = sqrt(q / 2) with q = 1/2
  EXPECT_LT(printed, ours);
}

TEST(ClosedFormTest, VectorisedBoundsEqualTheSingleVectorForm) {
  auto rp = testing::random_problem(9, 50, 3, Loss::interval_regression(0.5), Penalty::l2(), 0.1, true, true);
  std::mt19937 rng(1);
  const Ellipsoid e = random_ellipsoid(rng, 4);
  VecD g(4);
  g << 0.3, -1.0, 0.2, 0.5;
  std::vector<int> rows = {0, 7, 13, 49};
  const MarginBounds b = margin_bounds(rp.problem, e, &g, rows);
  for (size_t k = 0; k < rows.size(); ++k) {
    VecD r = VecD::Zero(4);
    rp.x->row_axpy(rows[k], 1.0, r.data());
    r[3] = 1.0;  // the intercept column
    const double y = rp.problem.y[rows[k]];
    EXPECT_NEAR(b.upper[k], max_linear_form(e, &g, r) - y, 1e-6);
    const VecD neg = -r;
    EXPECT_NEAR(b.lower[k], -max_linear_form(e, &g, neg) - y, 1e-6);
  }
}

TEST(ClosedFormTest, ScoresArePositiveExactlyWhenTheBoundsSitInsideTheFlatRegion) {
  MarginBounds b;
  b.lower.resize(3);
  b.upper.resize(3);
  b.lower << 1.2, 0.9, 2.0;
  b.upper << 3.0, 3.0, 2.5;
  const VecD s = screening_scores(Loss::squared_hinge(), b);  // flat for t > 1
  EXPECT_NEAR(s[0], 0.2, 1e-15);
  EXPECT_LT(s[1], 0);
  EXPECT_NEAR(s[2], 1.0, 1e-15);
  const VecD r = screening_scores(Loss::interval_regression(1.0), b);  // flat for |t| < 1
  EXPECT_LT(r.maxCoeff(), 0);
}

}  // namespace
}  // namespace inductive
