// Dataset compression by screening scores: removing screened samples leaves the model unchanged; orders are
// reproducible; the curve is reported for each fraction.
#include <numeric>

#include <gtest/gtest.h>

#include "inductive/screening.h"
#include "../test_util.h"
#include "screening_test_util.h"

namespace inductive {
namespace {

TEST(Compression, DeletingScreenedSamplesFirstKeepsTheModel) {
  // One random problem split into 150 training and 60 test samples (same underlying model).
  auto all = testing::random_problem(41, 210, 4, Loss::squared_hinge(), Penalty::l2(), 0.05);
  std::vector<int> first(150), rest(60);
  std::iota(first.begin(), first.end(), 0);
  std::iota(rest.begin(), rest.end(), 150);
  const auto train_x = all.x->select_rows(first), test_x = all.x->select_rows(rest);
  testing::RandomProblem train{nullptr, all.problem}, test{nullptr, all.problem};
  train.problem.x = train_x.get();
  train.problem.y.assign(all.problem.y.begin(), all.problem.y.begin() + 150);
  test.problem.y.assign(all.problem.y.begin() + 150, all.problem.y.end());
  const SolveResult approx = solve_erm(train.problem, tight_solver_options());
  const ScreenResult s = screen_samples(train.problem, approx.x, {}, &approx.nu);
  ASSERT_GT(s.n_screened, 20);
  const auto order = order_by_score(s.score);
  for (int k = 0; k + 1 < s.n_screened; ++k) EXPECT_GE(s.score[order[k]], s.score[order[k + 1]]);
  const double f = (s.n_screened - 1) / 150.0;  // delete only screened samples
  const auto curve = compression_curve(train.problem, order, {0.0, f}, *test_x, test.problem.y, tight_solver_options());
  ASSERT_EQ(curve.size(), 2u);
  EXPECT_EQ(curve[0].n_kept, 150);
  EXPECT_NEAR(curve[1].train_objective, curve[0].train_objective, 1e-9);
  EXPECT_DOUBLE_EQ(curve[1].test_accuracy, curve[0].test_accuracy);
  EXPECT_GT(curve[0].test_accuracy, 0.6);
}

TEST(Compression, RandomOrderIsAReproduciblePermutationAndMarginScoresRankEasyFirst) {
  const auto a = random_order(100, 7), b = random_order(100, 7), c = random_order(100, 8);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  std::vector<int> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  for (int i = 0; i < 100; ++i) EXPECT_EQ(sorted[i], i);
  auto rp = testing::random_problem(2, 30, 3, Loss::interval_regression(0.5), Penalty::l2(), 0.1);
  const VecD x = solve_erm(rp.problem, {}).x;
  const VecD m = margin_scores(rp.problem, x), t = margins(rp.problem, x);
  for (int i = 0; i < 30; ++i) EXPECT_DOUBLE_EQ(m[i], 0.5 - std::abs(t[i]));
}

}  // namespace
}  // namespace inductive
