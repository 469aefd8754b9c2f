// Dataset compression by screening scores: removing screened samples leaves the model unchanged; orders are
// reproducible; the curve is reported for each fraction.
#include <cmath>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

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

TEST(Compression, CompressDatasetKeepsTheModelUpToTheCertifiedFractionAndRandomDoesNot) {
  // The thesis' setting on real data: digits 9 vs rest, squared hinge + L2, lambda 1 (77% certified removable).
  const std::string path = std::string(INDUCTIVE_TEST_DATA) + "/../../data/screening/digits.csv.gz";  // vendored
  ASSERT_TRUE(std::ifstream(path).good()) << path << " is missing (data/SOURCE.md)";
  const Dataset d = to_dataset(read_csv(path));
  testing::RandomProblem all{nullptr, {d.x.get(), one_vs_rest(d.y, 9), Loss::squared_hinge(), Penalty::l2(), 1.0}};
  const HeldOut h = hold_out(all.problem, 0.25, 3);
  ASSERT_EQ(h.train.n() + static_cast<int>(h.test_y.size()), 1797);
  CompressionOptions o;
  o.solver = tight_solver_options();
  std::vector<std::string> stages;
  o.progress = [&](const char* stage, double f) {
    if (stages.empty() || stages.back() != stage) stages.emplace_back(stage);
    EXPECT_GE(f, 0.0);
    EXPECT_LE(f, 1.0);
  };
  const CompressionReport r = compress_dataset(h.train, *h.test_x, h.test_y, o);
  EXPECT_EQ(stages, (std::vector<std::string>{"fit", "refit"}));
  ASSERT_EQ(r.curves.size(), 3u);
  ASSERT_GT(r.n_certified, 0.7 * h.train.n());
  const double certified = static_cast<double>(r.n_certified) / h.train.n();
  const double p_star = r.full.gap.primal;
  for (const CompressionCurve& c : r.curves) {
    ASSERT_EQ(c.points.size(), o.fractions.size());
    for (const CompressionPoint& p : c.points) {
      // The certified gap bounds the distance to the full optimum, whatever the ranking.
      EXPECT_GE(p.train_objective - p_star, -1e-9);
      EXPECT_LE(p.train_objective - p_star, p.certified_gap + 1e-9);
      if (c.ranking == CompressionRanking::kScreening &&
          std::lround(p.fraction_removed * h.train.n()) <= r.n_certified) {
        // Only certified-removable samples are gone: the same model.
        EXPECT_LT(p.certified_gap, 1e-6) << p.fraction_removed;
        EXPECT_DOUBLE_EQ(p.test_accuracy, r.full_test_accuracy);
      }
    }
  }
  // Random deletions of as many samples change the model (the thesis' comparison).
  const CompressionCurve& random = r.curves[2];
  ASSERT_EQ(random.ranking, CompressionRanking::kRandom);
  for (const CompressionPoint& p : random.points)
    if (p.fraction_removed >= 0.2 && p.fraction_removed <= certified) {
      EXPECT_GT(p.certified_gap, 1e-4);
    }
}

TEST(Compression, HoldOutIsStratifiedAndReproducibleAndOptionsAreChecked) {
  auto all = testing::random_problem(43, 101, 3, Loss::squared_hinge(), Penalty::l2(), 0.05);
  const HeldOut a = hold_out(all.problem, 0.3, 9), b = hold_out(all.problem, 0.3, 9);
  EXPECT_EQ(a.test_rows, b.test_rows);
  int pos_all = 0, pos_test = 0;
  for (double y : all.problem.y) pos_all += y > 0;
  for (double y : a.test_y) pos_test += y > 0;
  EXPECT_NEAR(pos_test, 0.3 * pos_all, 1.0);
  EXPECT_NEAR(static_cast<double>(a.test_y.size()), 30.3, 1.0);
  testing::expect_error([&] { hold_out(all.problem, 1.0, 0); }, ErrorCode::kInvalidArgument,
                        "test fraction must be in (0, 1)");
  CompressionOptions o;
  o.fractions = {0.5, 1.0};
  testing::expect_error([&] { compress_dataset(a.train, *a.test_x, a.test_y, o); }, ErrorCode::kInvalidArgument,
                        "fractions must be in [0, 1)");
  o.fractions = {0.5};
  std::vector<double> short_y(a.test_y.begin(), a.test_y.end() - 1);
  testing::expect_error([&] { compress_dataset(a.train, *a.test_x, short_y, o); }, ErrorCode::kShapeMismatch,
                        "test labels for");
}

}  // namespace
}  // namespace inductive
