// scikit-learn as the oracle: on the problems of sklearn_oracle_fixture.h (LinearSVC squared hinge / hinge with and
// without its penalised intercept, LogisticRegression L1 (liblinear) and L2 (lbfgs)), our solvers reach the
// optimum of the same objective at lambda = 1 / (2 C n) (L2) or 1 / (C n) (L1): never worse than scikit-learn's
// point, equal to solver precision, on dense and sparse storage. Regenerate with make_fixtures.py.
#include <string>

#include <gtest/gtest.h>

#include "inductive/screening.h"
#include "sklearn_oracle_fixture.h"

namespace inductive {
namespace {

TEST(SklearnOracle, SameObjectiveSameOptimumAtTheMappedLambda) {
  const MatF x = Eigen::Map<const MatF>(oracle::kX, oracle::kN, oracle::kP);
  const DenseDesign dense(x);
  const CsrDesign sparse = CsrDesign::from_dense(x);
  for (const auto& c : oracle::kCases)
    for (const DesignMatrix* design :
         {static_cast<const DesignMatrix*>(&dense), static_cast<const DesignMatrix*>(&sparse)}) {
      ErmProblem prob;
      prob.x = design;
      prob.y.assign(oracle::kY, oracle::kY + oracle::kN);
      prob.loss = Loss::from_name(c.loss);
      prob.penalty = Penalty::from_name(c.penalty);
      prob.lambda = c.lambda;
      prob.intercept = c.intercept;
      const VecD sk = Eigen::Map<const VecD>(c.x, prob.dim());
      const SolveResult ours = solve_erm(prob, tight_solver_options());
      const double p_sk = primal_objective(prob, sk);
      const std::string what = std::string(c.name) + (design->is_sparse() ? " sparse" : " dense");
      EXPECT_TRUE(ours.converged) << what;
      EXPECT_LE(ours.gap.primal, p_sk + 1e-10) << what;
      EXPECT_NEAR(ours.gap.primal, p_sk, 1e-7 * p_sk) << what;
      // sklearn's point is optimal for our dual too: its gap against our dual optimum is tiny.
      EXPECT_LE(p_sk - ours.gap.dual, 1e-6 * p_sk) << what;
      // L2 problems are strongly convex: the solutions coincide.
      if (prob.penalty.kind == PenaltyKind::kL2) {
        EXPECT_LT((ours.x - sk).norm(), 2e-3 * (1 + sk.norm())) << what;
      }
    }
}

}  // namespace
}  // namespace inductive
