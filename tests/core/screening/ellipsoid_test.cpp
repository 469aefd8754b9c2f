// The ellipsoid method with low-rank storage: it equals the textbook full-matrix update, keeps the optimum inside
// at every step, shrinks, and guards zero subgradients and one dimension.
#include <cmath>
#include <random>

#include <Eigen/LU>

#include <gtest/gtest.h>

#include "inductive/screening.h"
#include "../test_util.h"
#include "screening_test_util.h"

namespace inductive {
namespace {

// The algorithm as printed in the thesis (Algorithm "Building ellipsoidal test regions"), on a dense matrix.
struct FullEllipsoid {
  VecD z;
  MatDc e;
  void step(const VecD& g) {
    const double p = static_cast<double>(z.size());
    const VecD gt = g / std::sqrt(g.dot(e * g));
    const VecD eg = e * gt;
    z -= eg / (p + 1);
    e = p * p / (p * p - 1) * (e - 2.0 / (p + 1) * eg * eg.transpose());
  }
};

TEST(Ellipsoid, LowRankUpdateEqualsTheFullMatrixUpdateOverManySteps) {
  // 40 steps in 8 dimensions cross the refactoring at rank 2p = 16 twice.
  std::mt19937 rng(3);
  std::normal_distribution<double> normal;
  VecD c(8);
  for (auto& v : c) v = normal(rng);
  Ellipsoid low = Ellipsoid::ball(c, 2.5);
  FullEllipsoid full{c, 6.25 * MatDc::Identity(8, 8)};
  for (int k = 0; k < 40; ++k) {
    VecD g(8);
    for (auto& v : g) v = normal(rng);
    ASSERT_TRUE(low.step(g));
    full.step(g);
    EXPECT_LT((low.centre() - full.z).norm(), 1e-9 * (1 + full.z.norm())) << "step " << k;
    EXPECT_LT((low.dense() - full.e).norm(), 1e-9 * full.e.norm()) << "step " << k;
    EXPECT_LE(low.rank(), 16);
  }
  EXPECT_EQ(low.steps(), 40);
}

TEST(Ellipsoid, MethodKeepsTheOptimumInsideAndShrinks) {
  // Started from the certified gap ball of an approximate solution, every step still contains x*.
  auto rp = testing::random_problem(21, 120, 4, Loss::squared_hinge(), Penalty::l2(), 0.05);
  SolverOptions o;
  o.tol = 1e-13;
  o.max_epochs = 100000;
  const VecD xstar = solve_erm(rp.problem, o).x;
  SolverOptions rough;
  rough.max_epochs = 2;
  const SolveResult approx = solve_erm(rp.problem, rough);
  const DualityGap gap = duality_gap(rp.problem, approx.x, approx.nu);
  const double kappa = rp.problem.penalty.strong_convexity(rp.problem.lambda);
  Ellipsoid e = Ellipsoid::ball(approx.x, std::sqrt(2 * gap.certified() / kappa));
  ASSERT_TRUE(e.contains(xstar));
  const double det0 = e.dense().determinant();
  for (int k = 0; k < 60; ++k) {
    if (!e.step(subgradient(rp.problem, e.centre()))) break;
    ASSERT_TRUE(e.contains(xstar, 1e-7)) << "step " << k;
  }
  // Volume ratio per step is < exp(-1 / (2 (p + 1))).
  EXPECT_LT(e.dense().determinant(), det0 * std::exp(-60.0 / (2 * 5)));
}

TEST(Ellipsoid, ZeroSubgradientLeavesItUnchanged) {
  Ellipsoid e = Ellipsoid::ball(VecD::Zero(3), 1.0);
  EXPECT_FALSE(e.step(VecD::Zero(3)));
  EXPECT_EQ(e.steps(), 0);
  EXPECT_EQ(e.rank(), 0);
  Ellipsoid point = Ellipsoid::ball(VecD::Ones(2), 0.0);  // a zero radius is a point, never replaced by a guess
  EXPECT_FALSE(point.step(VecD::Ones(2)));
  EXPECT_DOUBLE_EQ(point.quadratic(VecD::Ones(2)), 0.0);
}

TEST(Ellipsoid, OneDimensionIsBisection) {
  Ellipsoid e = Ellipsoid::ball(VecD::Constant(1, 0.0), 4.0);  // [-4, 4]
  VecD g(1);
  g << 1.0;  // optimum to the left
  ASSERT_TRUE(e.step(g));
  EXPECT_DOUBLE_EQ(e.centre()[0], -2.0);
  EXPECT_DOUBLE_EQ(e.quadratic(VecD::Ones(1)), 4.0);  // [-4, 0]
}

TEST(Ellipsoid, RejectsInvalidInput) {
  testing::expect_error([] { Ellipsoid::ball(VecD::Zero(2), -1.0); }, ErrorCode::kInvalidArgument,
                        "radius must be finite and >= 0: got -1");
  testing::expect_error([] { Ellipsoid::ball(VecD(), 1.0); }, ErrorCode::kInvalidArgument, "dimension 0");
  Ellipsoid e = Ellipsoid::ball(VecD::Zero(2), 1.0);
  testing::expect_error([&] { e.step(VecD::Zero(3)); }, ErrorCode::kShapeMismatch,
                        "subgradient has 3 entries, expected 2");
}

}  // namespace
}  // namespace inductive
