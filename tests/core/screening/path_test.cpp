// Regularisation paths: warm starts and sequential screening give the same solutions as solving each lambda from
// scratch, and screening removes samples along the way.
#include <cmath>

#include <gtest/gtest.h>

#include "inductive/screening.h"
#include "../test_util.h"
#include "screening_test_util.h"

namespace inductive {
namespace {

TEST(Path, ScreenedPathMatchesIndependentSolves) {
  for (const auto& combo : std::vector<testing::Combo>{{Loss::squared_hinge(), Penalty::l2(), 0},
                                                       {Loss::safe_logistic(0.2), Penalty::elastic_net(0.5), 0},
                                                       {Loss::interval_regression(0.6), Penalty::l1(), 0}}) {
    auto rp = testing::random_problem(12, 90, 5, combo.loss, combo.penalty, 1.0, false, true);
    const auto lambdas = geometric_lambdas(0.5, 0.02, 6);
    PathOptions with, without;
    with.solver.tol = without.solver.tol = 1e-9;
    with.solver.max_epochs = without.solver.max_epochs = 100000;
    without.screening = false;
    const auto a = regularization_path(rp.problem, lambdas, with);
    const auto b = regularization_path(rp.problem, lambdas, without);
    ASSERT_EQ(a.size(), lambdas.size());
    int removed = 0;
    for (size_t k = 0; k < lambdas.size(); ++k) {
      ErmProblem at = rp.problem;
      at.lambda = lambdas[k];
      SolverOptions o = with.solver;
      const double p_star = solve_erm(at, o).gap.primal;
      EXPECT_DOUBLE_EQ(a[k].lambda, lambdas[k]);
      EXPECT_NEAR(primal_objective(at, a[k].fit.x), p_star, 1e-7 * (1 + p_star)) << combo.loss.name() << " k=" << k;
      EXPECT_NEAR(primal_objective(at, b[k].fit.x), p_star, 1e-7 * (1 + p_star)) << combo.loss.name() << " k=" << k;
      EXPECT_EQ(b[k].n_removed, 0);
      removed += a[k].n_removed;
    }
    if (combo.penalty.kind != PenaltyKind::kL1) {
      EXPECT_GT(removed, 0) << combo.loss.name();
    }
  }
}

// Two walkers interleaved lambda by lambda (how `inductive path` times its two runs) give each the points it gives
// alone: a walker's warm start is its own previous solution, never the other's.
TEST(Path, InterleavedWalkersGiveTheSamePointsAsSeparatePaths) {
  auto rp = testing::random_problem(5, 80, 6, Loss::safe_logistic(0.2), Penalty::elastic_net(0.9), 1.0, false, true);
  const auto lambdas = geometric_lambdas(0.3, 0.01, 5);
  PathOptions with, without;
  with.solver.tol = without.solver.tol = 1e-8;
  without.screening = false;
  const auto a = regularization_path(rp.problem, lambdas, with);
  const auto b = regularization_path(rp.problem, lambdas, without);
  PathWalker wa(rp.problem, with), wb(rp.problem, without);
  for (size_t k = 0; k < lambdas.size(); ++k) {
    const PathPoint pb = wb.next(lambdas[k]), pa = wa.next(lambdas[k]);
    EXPECT_EQ(pa.epochs, a[k].epochs) << "k=" << k;
    EXPECT_EQ(pb.epochs, b[k].epochs) << "k=" << k;
    EXPECT_EQ(pa.n_removed, a[k].n_removed) << "k=" << k;
    EXPECT_EQ(pb.n_removed, 0);
    EXPECT_EQ(pa.fit.gap.primal, a[k].fit.gap.primal) << "k=" << k;
    EXPECT_EQ(pb.fit.gap.primal, b[k].fit.gap.primal) << "k=" << k;
  }
  testing::expect_error([&] { wa.next(std::nan("")); }, ErrorCode::kInvalidArgument, "lambdas must be finite");
}

TEST(Path, GeometricGridAndValidation) {
  const auto l = geometric_lambdas(1.0, 0.01, 3);
  ASSERT_EQ(l.size(), 3u);
  EXPECT_DOUBLE_EQ(l[0], 1.0);
  EXPECT_NEAR(l[1], 0.1, 1e-15);
  EXPECT_NEAR(l[2], 0.01, 1e-15);
  auto rp = testing::random_problem(1, 10, 2, Loss::squared_hinge(), Penalty::l2(), 1.0);
  testing::expect_error([&] { regularization_path(rp.problem, {}, {}); }, ErrorCode::kInvalidArgument, "no lambda");
  testing::expect_error(
      [&] {
        regularization_path(rp.problem, {1.0, -2.0}, {});
      },
      ErrorCode::kInvalidArgument, "lambdas must be finite and > 0: got -2");
}

}  // namespace
}  // namespace inductive
