// The head-fitting recipe (inductive/head_fit.h): the standardisation folds back exactly, the few-labels mode
// chooses lambda as documented, and the holdout mode is the thesis' protocol (choose on the holdout, keep that
// model or refit) with its refusals.
#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "../test_util.h"
#include "inductive/head_fit.h"

namespace inductive {
namespace {

using testing::expect_error;

// Three noisy classes on far-from-centred, small-scale inputs (as OTK embeddings are), so that standardising
// matters.
struct Blobs {
  MatF x;
  std::vector<int32_t> y;
  explicit Blobs(int m, uint32_t seed = 4) : x(m, 6), y(m) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> nd(0, 1);
    for (int i = 0; i < m; ++i) {
      y[i] = i % 3;
      for (int c = 0; c < 6; ++c) x(i, c) = 3.0f + 0.01f * (nd(rng) + (c == y[i] ? 3.0f : 0.0f));
    }
  }
};

bool same(const LinearHead& a, const LinearHead& b) { return a.weight == b.weight && a.bias == b.bias; }

TEST(HeadFit, StandardisationFoldsIntoTheHeadExactly) {
  const Blobs d(60);
  const Standardizer st = Standardizer::fit(d.x);
  EXPECT_LT(st.apply(d.x).colwise().mean().cwiseAbs().maxCoeff(), 1e-4);  // float32: 3 + 0.01 noise keeps ~5 digits
  EXPECT_NEAR(st.apply(d.x).rowwise().squaredNorm().mean(), 1.0, 1e-4);   // unit root mean squared norm
  LinearHead h;
  h.weight = MatF::Random(3, 6);
  h.bias = VecF::Random(3);
  const MatF on_standardised = h.logits(st.apply(d.x)), on_raw = st.fold(h).logits(d.x);
  EXPECT_LT((on_standardised - on_raw).cwiseAbs().maxCoeff(), 1e-3);
}

TEST(HeadFit, FewLabelsGivenDefaultOrCrossValidatedLambda) {
  const Blobs d(90);
  HeadFitOptions o;
  o.lambda = 0.5;
  EXPECT_EQ(fit_head(d.x, d.y, 3, o).lambda_choice, "given");
  o.lambda = 0;
  o.min_per_class = 31;  // 30 per class: too few to cross-validate
  HeadFit f = fit_head(d.x, d.y, 3, o);
  EXPECT_EQ(f.lambda_choice, "default");
  EXPECT_EQ(f.lambda, kDefaultHeadLambda);
  o.min_per_class = 10;
  f = fit_head(d.x, d.y, 3, o);
  EXPECT_EQ(f.lambda_choice, "cross-validation");
  EXPECT_EQ(f.folds, 5);
  EXPECT_EQ(f.grid, head_lambda_grid(1, -20));
  ASSERT_EQ(f.grid.size(), 22u);
  EXPECT_EQ(f.grid.front(), 2.0);
  EXPECT_EQ(f.grid.back(), std::ldexp(1.0, -20));
  // The choice is the grid point with the most right held-out answers (then the lowest loss).
  size_t best = 0;
  for (size_t g = 0; g < f.grid.size(); ++g) {
    if (f.grid[g] == f.lambda) best = g;
  }
  for (size_t g = 0; g < f.grid.size(); ++g) EXPECT_LE(f.grid_accuracy[g], f.grid_accuracy[best] + 1e-12);
  EXPECT_EQ(f.cv_accuracy, f.grid_accuracy[best]);
  EXPECT_GT(f.train_accuracy, 0.9);
}

TEST(HeadFit, HoldoutModeIsTheThesisProtocol) {
  const Blobs d(120);
  std::vector<int32_t> holdout, train;
  for (int i = 0; i < 120; ++i) (i % 5 == 0 ? holdout : train).push_back(i);
  HeadFitOptions o;
  o.grid = head_lambda_grid(-5, -20);
  o.holdout = holdout;
  const HeadFit f = fit_head(d.x, d.y, 3, o);
  EXPECT_EQ(f.lambda_choice, "holdout");
  EXPECT_EQ(f.grid, o.grid);

  // The same steps spelled out: standardise on the rows outside the holdout, select on the holdout, fold back.
  MatF x_train(train.size(), 6), x_val(holdout.size(), 6);
  std::vector<int32_t> y_train, y_val;
  for (size_t i = 0; i < train.size(); ++i) x_train.row(i) = d.x.row(train[i]), y_train.push_back(d.y[train[i]]);
  for (size_t i = 0; i < holdout.size(); ++i) x_val.row(i) = d.x.row(holdout[i]), y_val.push_back(d.y[holdout[i]]);
  const Standardizer st = Standardizer::fit(x_train);
  const LambdaSelection sel =
      select_lambda(st.apply(x_train), y_train, st.apply(x_val), y_val, 3, o.grid, LogisticOptions{});
  EXPECT_EQ(f.lambda, sel.lambda);
  EXPECT_EQ(f.holdout_accuracy, sel.val_accuracy);
  EXPECT_EQ(f.grid_accuracy, sel.val_accuracies);
  EXPECT_TRUE(same(f.head, st.fold(sel.head)));
  EXPECT_EQ(f.train_accuracy, accuracy(f.head.logits(x_train), y_train));
  EXPECT_EQ(f.standardizer.s, st.s);

  // --refit: the chosen lambda refitted on every row from the chosen head, through the same standardisation.
  o.refit = true;
  const HeadFit r = fit_head(d.x, d.y, 3, o);
  LogisticOptions lo;
  lo.lambda = sel.lambda;
  EXPECT_TRUE(same(r.head, st.fold(fit_logistic(st.apply(d.x), d.y, 3, lo, &sel.head).head)));
  EXPECT_FALSE(same(r.head, f.head));

  // A given lambda is scored on the holdout too.
  o.refit = false;
  o.lambda = 1e-3;
  const HeadFit g = fit_head(d.x, d.y, 3, o);
  EXPECT_EQ(g.lambda_choice, "given");
  EXPECT_EQ(g.grid, std::vector<double>{1e-3});
}

TEST(HeadFit, RefusalsNameTheProblem) {
  const Blobs d(30);
  HeadFitOptions o;
  o.holdout = {0, 30};
  expect_error([&] { fit_head(d.x, d.y, 3, o); }, ErrorCode::kInvalidArgument, "holdout row 30 is not in [0, 30)");
  o.holdout = {2, 2};
  expect_error([&] { fit_head(d.x, d.y, 3, o); }, ErrorCode::kInvalidArgument, "holdout row 2 is listed twice");
  o.holdout.clear();
  for (int i = 0; i < 30; ++i) o.holdout.push_back(i);
  expect_error([&] { fit_head(d.x, d.y, 3, o); }, ErrorCode::kInvalidArgument, "leaves no row to fit on");
  o.holdout.clear();
  o.grid = {0.1, 0.0};
  expect_error([&] { fit_head(d.x, d.y, 3, o); }, ErrorCode::kInvalidArgument, "grid lambdas must be > 0");
}

}  // namespace
}  // namespace inductive
