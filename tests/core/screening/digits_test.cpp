// The thesis' digits experiment in small (sklearn digits, 9 vs rest, squared hinge + L2 at the reference's
// lambda 1): how much the screening removes, compared with the ideal (the samples flat at the optimum, 0.775) and
// the public reference (0.725 after 8 TRON iterations). Fractions only; timings belong to benchmarks.
#include <fstream>

#include <gtest/gtest.h>

#include "inductive/screening.h"

namespace inductive {
namespace {

TEST(Digits, DynamicScreeningRemovesNearlyEverySampleFlatAtTheOptimum) {
  const std::string path = std::string(INDUCTIVE_TEST_DATA) + "/../../data/screening/digits.csv.gz";  // vendored
  ASSERT_TRUE(std::ifstream(path).good()) << path << " is missing (data/SOURCE.md)";
  const Dataset d = to_dataset(read_csv(path));
  ErmProblem prob;
  prob.x = d.x.get();
  prob.y = one_vs_rest(d.y, 9);
  prob.loss = Loss::squared_hinge();
  prob.penalty = Penalty::l2();  // lambda ||x||^2: the reference's lambda (sklearn C = 1 / (2 lambda n))
  prob.lambda = 1.0;
  SolverOptions o;
  o.tol = 1e-8;
  o.dynamic_screening = true;
  const SolveResult r = solve_erm(prob, o);
  ASSERT_TRUE(r.converged);
  const VecD t = margins(prob, r.x);
  int ideal = 0;
  for (int i = 0; i < prob.n(); ++i) ideal += t[i] > 1.0;
  EXPECT_EQ(ideal, 1393);          // 0.775 of 1797
  EXPECT_GE(r.n_removed(), 1380);  // the reference screened 0.725 (1303) before solving
  EXPECT_LE(r.n_removed(), ideal);
  const VerifyReport v = verify_screening(prob, [&] {
    std::vector<uint8_t> m(prob.n(), 0);
    for (int i = 0; i < prob.n(); ++i) m[i] = r.removed_at[i] >= 0;
    return m;
  }());
  EXPECT_TRUE(v.safe);
}

}  // namespace
}  // namespace inductive
