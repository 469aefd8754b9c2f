// The sample working set (SolverOptions::working_set) of both solvers: the same certified optimum as the plain
// solver, whatever the warm start leaves out, and a reported gap that is the full problem's, checked here with the
// library's duality_gap on every sample.
#include <cmath>

#include <gtest/gtest.h>

#include "inductive/screening.h"
#include "screening/rows.h"
#include "../test_util.h"
#include "screening_test_util.h"

namespace inductive {
namespace {

using testing::random_problem;

SolverOptions proximal(bool working_set, bool dynamic, double tol = 1e-9,
                       SolverKind kind = SolverKind::kProximalGradient) {
  SolverOptions o;
  o.kind = kind;
  o.tol = tol;
  o.max_epochs = 100000;
  o.working_set = working_set;
  o.dynamic_screening = dynamic;
  return o;
}

// The gap of (x, nu) on the whole problem, computed from scratch.
DualityGap full_gap(const ErmProblem& problem, const SolveResult& r) { return duality_gap(problem, r.x, r.nu); }

struct Case {
  Loss loss;
  Penalty penalty;
  double lambda;
  double scale;  // the warm start is this multiple of the optimum at 2 lambda
  SolverKind kind = SolverKind::kProximalGradient;
};

// Warm starts from the optimum at twice the lambda, and from multiples of it that push most samples into the flat
// region (so they start outside the working set and must come back): the plain solver's optimum, certified.
TEST(WorkingSet, ReachesThePlainSolversCertifiedOptimumFromAnyWarmStart) {
  const std::vector<Case> cases = {
      {Loss::safe_logistic(0.2), Penalty::elastic_net(0.9), 0.02, 1.0},
      {Loss::safe_logistic(0.2), Penalty::elastic_net(0.9), 0.02, 6.0},
      {Loss::safe_logistic(0.2), Penalty::l1(), 0.02, 4.0},
      {Loss::squared_hinge(), Penalty::elastic_net(0.5), 0.02, 5.0},
      {Loss::interval_regression(0.6), Penalty::l1(), 0.05, 1.0},
      {Loss::interval_regression(0.6), Penalty::elastic_net(0.5), 0.05, 0.2},
      {Loss::squared_hinge(), Penalty::l2(), 0.02, 1.0, SolverKind::kDualCoordinateAscent},
      {Loss::squared_hinge(), Penalty::l2(), 0.02, 5.0, SolverKind::kDualCoordinateAscent},
      {Loss::safe_logistic(0.2), Penalty::l2(), 0.01, 4.0, SolverKind::kDualCoordinateAscent},
      {Loss::interval_regression(0.6), Penalty::l2(), 0.05, 0.3, SolverKind::kDualCoordinateAscent}};
  for (const Case& c : cases)
    for (bool intercept : {false, true})
      for (bool dynamic : {false, true}) {
        auto rp = random_problem(11, 150, 8, c.loss, c.penalty, 2 * c.lambda, false, intercept);
        ErmProblem& p = rp.problem;
        WarmStart warm;
        warm.x = c.scale * solve_erm(p, proximal(false, false, 1e-9, c.kind)).x;
        p.lambda = c.lambda;
        const SolveResult plain = solve_erm(p, proximal(false, false, 1e-9, c.kind), &warm);
        const SolveResult ws = solve_erm(p, proximal(true, dynamic, 1e-9, c.kind), &warm);
        const std::string what = std::string(c.loss.name()) + "/" + c.penalty.name() + " kind " +
                                 std::to_string(static_cast<int>(c.kind)) + " scale " + std::to_string(c.scale) +
                                 (intercept ? " intercept" : "") + (dynamic ? " dynamic" : "");
        ASSERT_TRUE(ws.converged) << what;
        const DualityGap g = full_gap(p, ws);
        EXPECT_LE(g.gap, 1e-9 * std::abs(g.primal) + 1e-14) << what;
        EXPECT_NEAR(ws.gap.primal, g.primal, 1e-12 * (1 + std::abs(g.primal))) << what;
        EXPECT_NEAR(g.primal, plain.gap.primal, 2e-9 * std::abs(plain.gap.primal) + 1e-14) << what;
      }
}

// A working set's rows are copied into one matrix (ProblemRows::pack) so its passes stream them; every margin and
// update reads the same floats through the same kernels, so nothing moves by a bit, packed sample or not.
TEST(WorkingSet, PackedRowsGiveTheSameBitsAsTheProblemsOwn) {
  for (bool intercept : {false, true}) {
    auto rp = random_problem(5, 40, 13, Loss::squared_hinge(), Penalty::l2(), 0.1, false, intercept);
    const detail::ProblemRows plain(rp.problem);
    detail::ProblemRows packed(rp.problem);
    packed.pack({1, 4, 5, 17, 39});
    VecD w = VecD::LinSpaced(rp.problem.dim(), -1.0, 2.0);
    for (int i = 0; i < 40; ++i) {
      EXPECT_EQ(packed.margin(i, w.data()), plain.margin(i, w.data())) << i;
      EXPECT_EQ(packed.sq_norm(i), plain.sq_norm(i)) << i;
      VecD a = w, b = w;
      packed.axpy(i, -0.7, a.data());
      plain.axpy(i, -0.7, b.data());
      EXPECT_TRUE(a == b) << i;
    }
  }
}

// A run stopped by the epoch cap with samples still outside the set reports the full problem's gap, not the set's.
TEST(WorkingSet, AnUnconvergedRunReportsTheFullProblemsGap) {
  auto rp = random_problem(3, 200, 10, Loss::safe_logistic(0.2), Penalty::elastic_net(0.9), 0.04);
  ErmProblem& p = rp.problem;
  WarmStart warm;
  warm.x = 8.0 * solve_erm(p, proximal(false, false)).x;
  p.lambda = 0.01;
  SolverOptions o = proximal(true, false, 1e-14);
  o.max_epochs = 5;
  const SolveResult r = solve_erm(p, o, &warm);
  EXPECT_FALSE(r.converged);
  const DualityGap g = full_gap(p, r);
  EXPECT_NEAR(r.gap.primal, g.primal, 1e-12 * (1 + std::abs(g.primal)));
  EXPECT_GE(r.gap.gap, g.gap * (1 - 1e-9));  // the best dual seen may be below the final point's: never smaller
}

}  // namespace
}  // namespace inductive
