// Solvers: certified duality gaps for every supported loss/penalty pair, the two solvers agree, dense and sparse
// agree, warm starts help, options are validated, and runs are reproducible.
#include <cmath>

#include <gtest/gtest.h>

#include "inductive/screening.h"
#include "../test_util.h"
#include "screening_test_util.h"

namespace inductive {
namespace {

using testing::expect_error;
using testing::random_problem;

SolverOptions tight(SolverKind kind = SolverKind::kAuto) {
  SolverOptions o;
  o.kind = kind;
  o.tol = 1e-10;
  o.max_epochs = 50000;
  return o;
}

TEST(Solver, EveryLossPenaltyPairConvergesToACertifiedOptimum) {
  const std::vector<testing::Combo> combos = {{Loss::squared_hinge(), Penalty::l2(), 0.05},
                                              {Loss::hinge(), Penalty::l2(), 0.05},
                                              {Loss::safe_logistic(0.2), Penalty::l2(), 0.05},
                                              {Loss::logistic(), Penalty::l2(), 0.05},
                                              {Loss::interval_regression(0.5), Penalty::l2(), 0.05},
                                              {Loss::squared(), Penalty::l2(), 0.05},
                                              {Loss::squared_hinge(), Penalty::l1(), 0.05},
                                              {Loss::safe_logistic(0.2), Penalty::l1(), 0.05},
                                              {Loss::logistic(), Penalty::l1(), 0.02},
                                              {Loss::interval_regression(0.5), Penalty::l1(), 0.1},
                                              {Loss::squared(), Penalty::elastic_net(0.5), 0.1},
                                              {Loss::squared_hinge(), Penalty::elastic_net(0.5), 0.05}};
  for (const auto& c : combos)
    for (bool intercept : {false, true}) {
      auto rp = random_problem(7, 60, 5, c.loss, c.penalty, c.lambda, false, intercept);
      const SolveResult r = solve_erm(rp.problem, tight());
      const std::string what = testing::describe(rp.problem);
      EXPECT_TRUE(r.converged) << what << " gap " << r.gap.gap;
      EXPECT_GE(r.gap.gap, -1e-12) << what;  // weak duality
      // The reported objectives are those of the returned points, recomputed independently.
      EXPECT_NEAR(r.gap.primal, primal_objective(rp.problem, r.x), 1e-12) << what;
      EXPECT_NEAR(r.gap.dual, dual_objective(rp.problem, r.nu), 1e-9) << what;
      // Optimality: the subgradient of P vanishes for smooth losses and the L2 penalty.
      if (c.loss.is_smooth() && c.penalty.kind == PenaltyKind::kL2) {
        EXPECT_LT(subgradient(rp.problem, r.x).norm(), 1e-4) << what;
      }
    }
}

TEST(Solver, DualCoordinateAscentAndProximalGradientReachTheSameOptimum) {
  for (const Loss& loss : {Loss::squared_hinge(), Loss::safe_logistic(0.3), Loss::interval_regression(0.4)}) {
    auto rp = random_problem(11, 80, 6, loss, Penalty::l2(), 0.03, false, true);
    const SolveResult a = solve_erm(rp.problem, tight(SolverKind::kDualCoordinateAscent));
    const SolveResult b = solve_erm(rp.problem, tight(SolverKind::kProximalGradient));
    EXPECT_NEAR(a.gap.primal, b.gap.primal, 1e-9) << loss.name();
    // lambda ||x||^2 is 2 lambda-strongly convex: both points are within sqrt(gap / lambda) of x*.
    EXPECT_LT((a.x - b.x).norm(), 1e-3) << loss.name();
  }
}

TEST(Solver, DenseAndSparseDesignsGiveTheSameSolution) {
  for (auto combo : std::vector<testing::Combo>{{Loss::squared_hinge(), Penalty::l2(), 0.05},
                                                {Loss::safe_logistic(0.2), Penalty::l1(), 0.02}}) {
    auto dense = random_problem(5, 70, 8, combo.loss, combo.penalty, combo.lambda, true, true);
    const auto& csr = static_cast<const CsrDesign&>(*dense.x);
    DenseDesign as_dense(csr.to_dense());
    ErmProblem other = dense.problem;
    other.x = &as_dense;
    const SolveResult a = solve_erm(dense.problem, tight()), b = solve_erm(other, tight());
    EXPECT_NEAR(a.gap.primal, b.gap.primal, 1e-10);
    EXPECT_LT((a.x - b.x).norm(), 1e-4);
  }
}

TEST(Solver, WarmStartFromTheOptimumStopsAtOnce) {
  auto rp = random_problem(2, 100, 6, Loss::squared_hinge(), Penalty::l2(), 0.05);
  SolverOptions o = tight();
  const SolveResult cold = solve_erm(rp.problem, o);
  WarmStart warm{cold.x, cold.nu};
  const SolveResult hot = solve_erm(rp.problem, o, &warm);
  EXPECT_EQ(hot.epochs, 0);  // checked before the first epoch
  EXPECT_TRUE(hot.converged);
  // A primal-only warm start also helps the dual solver (its dual point phi'(t) is near-optimal).
  WarmStart primal_only{cold.x, VecD()};
  EXPECT_LT(solve_erm(rp.problem, o, &primal_only).epochs, cold.epochs);
}

TEST(Solver, RunsAreReproducibleAndCancellable) {
  auto rp = random_problem(4, 50, 4, Loss::hinge(), Penalty::l2(), 0.1);
  SolverOptions o = tight();
  o.seed = 17;
  const SolveResult a = solve_erm(rp.problem, o), b = solve_erm(rp.problem, o);
  EXPECT_EQ(a.x, b.x);
  EXPECT_EQ(a.history_gap, b.history_gap);
  int calls = 0;
  o.progress = [&](const SolverProgress& p) {
    ++calls;
    if (p.epoch >= 3) throw Error(ErrorCode::kCancelled, "cancelled");
  };
  const SolveResult c = solve_erm(rp.problem, o);
  EXPECT_TRUE(c.cancelled);
  EXPECT_FALSE(c.converged);
  EXPECT_EQ(c.epochs, 3);
  EXPECT_EQ(calls, 3);
}

TEST(Solver, GapHistoryIsRecordedAtEachCheck) {
  auto rp = random_problem(6, 60, 5, Loss::squared_hinge(), Penalty::l2(), 0.05);
  SolverOptions o = tight();
  o.gap_every = 2;
  const SolveResult r = solve_erm(rp.problem, o);
  ASSERT_FALSE(r.history_epoch.empty());
  EXPECT_EQ(r.history_epoch.front(), 2);
  EXPECT_EQ(r.history_gap.size(), r.history_epoch.size());
  EXPECT_EQ(r.history_active.back(), 60);
  EXPECT_NEAR(r.history_gap.back(), r.gap.gap, 0.0);
}

TEST(Solver, RefusesProblemsItCannotSolve) {
  auto rp = random_problem(1, 20, 3, Loss::hinge(), Penalty::l1(), 0.1);
  expect_error([&] { solve_erm(rp.problem, {}); }, ErrorCode::kInvalidArgument,
               "proximal gradient needs a smooth loss: got hinge");
  rp.problem.penalty = Penalty::l2();
  SolverOptions o;
  o.kind = SolverKind::kDualCoordinateAscent;
  ErmProblem l1 = rp.problem;
  l1.penalty = Penalty::l1();
  l1.loss = Loss::squared_hinge();
  expect_error([&] { solve_erm(l1, o); }, ErrorCode::kInvalidArgument,
               "dual coordinate ascent handles the l2 penalty only");
  ErmProblem bad = rp.problem;
  bad.y[3] = 0.0;
  expect_error([&] { solve_erm(bad, {}); }, ErrorCode::kInvalidArgument, "sample 3 has label 0");
  bad = rp.problem;
  bad.lambda = 0;
  expect_error([&] { solve_erm(bad, {}); }, ErrorCode::kInvalidArgument, "lambda must be finite and > 0: got 0");
  bad = rp.problem;
  bad.y.pop_back();
  expect_error([&] { solve_erm(bad, {}); }, ErrorCode::kShapeMismatch, "19 labels for 20 samples");
  o.tol = -1;
  expect_error([&] { solve_erm(rp.problem, o); }, ErrorCode::kInvalidArgument, "tol (relative duality gap) must be");
  WarmStart w{VecD::Zero(7), VecD()};
  expect_error([&] { solve_erm(rp.problem, {}, &w); }, ErrorCode::kShapeMismatch,
               "warm start x has 7 entries, expected 3");
}

TEST(Solver, ActiveSubsetSolvesTheReducedProblem) {
  auto rp = random_problem(8, 40, 4, Loss::squared_hinge(), Penalty::l2(), 0.05);
  ActiveSet half;
  for (int i = 0; i < 40; i += 2) half.push_back(i);
  const SolveResult r = solve_erm(rp.problem, tight(), nullptr, &half);
  EXPECT_EQ(r.n_removed(), 20);
  EXPECT_EQ(r.removed_at[1], 0);
  EXPECT_EQ(r.removed_at[0], -1);
  EXPECT_NEAR(r.gap.primal, primal_objective(rp.problem, r.x, &half), 1e-12);
  // Same as solving the subset as its own dataset with lambda scaled by n_sub / n (the reduced problem keeps 1/n).
  auto sub = rp.x->select_rows(half);
  ErmProblem own = rp.problem;
  own.x = sub.get();
  own.y.clear();
  for (int i : half) own.y.push_back(rp.problem.y[i]);
  own.lambda = rp.problem.lambda * 40 / 20;
  EXPECT_LT((solve_erm(own, tight()).x - r.x).norm(), 1e-4);
}

}  // namespace
}  // namespace inductive
