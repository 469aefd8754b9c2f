// The head-fitting recipe (inductive/head_fit.h): the standardisation folds back exactly, the few-labels mode
// chooses lambda as documented, and the holdout mode is the thesis' protocol (choose on the holdout, keep that
// model or refit) with its refusals.
#include <algorithm>
#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "../test_util.h"
#include "inductive/head_fit.h"
#include "inductive/splits.h"

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
  EXPECT_EQ(fit_head(d.x, d.y, 3, o).lambda_choice, LambdaChoice::kGiven);
  o.lambda = 0;
  o.min_per_class = 31;  // 30 per class: too few to cross-validate
  HeadFit f = fit_head(d.x, d.y, 3, o);
  EXPECT_EQ(f.lambda_choice, LambdaChoice::kDefault);
  EXPECT_EQ(f.lambda, kDefaultHeadLambda);
  o.min_per_class = 10;
  f = fit_head(d.x, d.y, 3, o);
  EXPECT_EQ(f.lambda_choice, LambdaChoice::kCrossValidation);
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
  EXPECT_EQ(f.lambda_choice, LambdaChoice::kHoldout);
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
  EXPECT_EQ(g.lambda_choice, LambdaChoice::kGiven);
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
  o.grid.clear();
  o.lambda = -1;
  expect_error([&] { fit_head(d.x, d.y, 3, o); }, ErrorCode::kInvalidArgument, "lambda must be >= 0");
  o.lambda = 0;
  o.min_per_class = 1;
  expect_error([&] { fit_head(d.x, d.y, 3, o); }, ErrorCode::kInvalidArgument, "minPerClass and maxFolds must be >= 2");
  o.min_per_class = 10;
  std::vector<int32_t> two(d.y.size(), 0);
  for (size_t i = 0; i < two.size(); i += 2) two[i] = 1;
  o.class_names = {"a", "b", "c"};
  expect_error([&] { fit_head(d.x, two, 3, o); }, ErrorCode::kInvalidArgument,
               "class 'c' has no labelled sample; every class needs at least one");
  o.holdout_fraction = 1.5;
  expect_error([&] { fit_head(d.x, d.y, 3, o); }, ErrorCode::kInvalidArgument, "holdoutFraction must be in [0, 1)");
}

// One recipe, one grid per way of choosing: the few-labels cross-validation searches 2^1 .. 2^-20, the thesis'
// holdout protocol the thesis' 2^-5 .. 2^-20 (METHODS.md: "grid 1/2^(5..20)"), whoever calls (CLI or browser).
TEST(HeadFit, EachWayOfChoosingHasItsDefaultGrid) {
  EXPECT_EQ(default_head_lambda_grid(false), head_lambda_grid(1, -20));
  EXPECT_EQ(default_head_lambda_grid(true), head_lambda_grid(-5, -20));
  const std::vector<double> thesis = default_head_lambda_grid(true);
  ASSERT_EQ(thesis.size(), 16u);
  for (size_t g = 0; g < thesis.size(); ++g) EXPECT_EQ(thesis[g], 1.0 / std::ldexp(1.0, 5 + static_cast<int>(g)));
  const Blobs d(90);
  HeadFitOptions o;
  o.holdout = {0, 1, 2, 30, 31, 32};
  EXPECT_EQ(fit_head(d.x, d.y, 3, o).grid, default_head_lambda_grid(true));
}

// The holdout `otke fit --val-fraction F --seed S` draws and the browser's holdoutFraction: a stratified share of
// every class, the same rows for the same seed, other rows for another.
TEST(HeadFit, TheThesisHoldoutIsAStratifiedSeededShareOfEachClass) {
  const Blobs d(90);  // 30 per class
  const std::vector<int32_t> h = head_holdout(d.y, 3, 0.2, 7);
  ASSERT_EQ(h.size(), 18u);  // 6 of each class
  EXPECT_TRUE(std::is_sorted(h.begin(), h.end()));
  int per_class[3] = {0, 0, 0};
  for (int32_t i : h) ++per_class[d.y[i]];
  for (int c : per_class) EXPECT_EQ(c, 6);
  EXPECT_EQ(head_holdout(d.y, 3, 0.2, 7), h);
  EXPECT_NE(head_holdout(d.y, 3, 0.2, 8), h);
  std::vector<int32_t> y_train, y_val;
  stratified_split(d.y, {"0", "1", "2"}, 0.2, 7, y_train, y_val);
  EXPECT_EQ(h, y_val);  // the splits.h split, whose train part otke train uses
  expect_error(
      [&] {
        head_holdout({0, 0, 1}, 2, 0.2, 1, {"x", "y"});
      },
      ErrorCode::kInvalidArgument, "class 'y' has 1 labelled sample(s)");

  // holdout_fraction is that holdout, drawn inside the fit: the same head as the rows given.
  HeadFitOptions drawn, given;
  drawn.holdout_fraction = 0.2;
  drawn.seed = 7;
  given.holdout = h;
  const HeadFit a = fit_head(d.x, d.y, 3, drawn), b = fit_head(d.x, d.y, 3, given);
  EXPECT_EQ(a.lambda_choice, LambdaChoice::kHoldout);
  EXPECT_EQ(a.holdout_size, 18);
  EXPECT_EQ(a.lambda, b.lambda);
  EXPECT_TRUE(same(a.head, b.head));
}

// select_lambda on its own: the strongest penalty first, every lambda scored, the best validation accuracy kept and
// ties broken by the lower validation loss; an empty grid or validation set is refused.
TEST(SelectLambda, KeepsTheBestValidationAccuracyAndBreaksTiesByLoss) {
  const Blobs d(60, 9);
  MatF x_train = d.x.topRows(45), x_val = d.x.bottomRows(15);
  const Standardizer st = Standardizer::fit(x_train);
  x_train = st.apply(x_train);
  x_val = st.apply(x_val);
  const std::vector<int32_t> y_train(d.y.begin(), d.y.begin() + 45), y_val(d.y.begin() + 45, d.y.end());
  const std::vector<double> grid{1e-4, 10.0, 1e-2, 1.0};  // in no order
  std::vector<double> fractions;
  const LambdaSelection sel =
      select_lambda(x_train, y_train, x_val, y_val, 3, grid, LogisticOptions{}, [&](const char* stage, double f) {
        EXPECT_STREQ(stage, "lambda selection");
        fractions.push_back(f);
      });
  EXPECT_EQ(sel.lambdas, (std::vector<double>{10.0, 1.0, 1e-2, 1e-4}));
  EXPECT_EQ(fractions, (std::vector<double>{0.25, 0.5, 0.75, 1.0}));
  // An independent walk over the same fits: the choice is the most accurate, then the lowest loss.
  double best_acc = -1, best_loss = 0, best_lambda = 0;
  LinearHead warm;
  for (double l : sel.lambdas) {
    LogisticOptions lo;
    lo.lambda = l;
    warm = fit_logistic(x_train, y_train, 3, lo, warm.weight.size() ? &warm : nullptr).head;
    const double acc = accuracy(warm.logits(x_val), y_val), loss = cross_entropy(warm.logits(x_val), y_val);
    if (acc > best_acc || (acc == best_acc && loss < best_loss)) best_acc = acc, best_loss = loss, best_lambda = l;
  }
  EXPECT_EQ(sel.lambda, best_lambda);
  EXPECT_EQ(sel.val_accuracy, best_acc);
  // Separable classes: several lambdas reach the same accuracy, and the loss decides among them.
  int at_best = 0;
  for (double a : sel.val_accuracies) at_best += a == best_acc;
  EXPECT_GE(at_best, 2) << "the data should tie so that the loss breaks it";
  EXPECT_NE(sel.lambda, sel.lambdas.front());

  expect_error([&] { select_lambda(x_train, y_train, x_val, y_val, 3, {}, LogisticOptions{}); },
               ErrorCode::kInvalidArgument, "empty lambda grid");
  expect_error([&] { select_lambda(x_train, y_train, MatF(0, 6), {}, 3, grid, LogisticOptions{}); },
               ErrorCode::kInvalidArgument, "empty validation set");
}

// The report every front end prints (the CLI under "head", the browser's headFit camelCased): the keys of each way.
TEST(HeadFitReport, HoldsTheKeysOfTheWayLambdaWasChosen) {
  const Blobs d(90);
  HeadFitOptions o;
  o.lambda = 0.5;
  nlohmann::json r = head_fit_report(fit_head(d.x, d.y, 3, o));
  EXPECT_EQ(r["lambda_choice"], "given");
  EXPECT_EQ(r["class_counts"], (std::vector<int>{30, 30, 30}));
  EXPECT_FALSE(r.contains("lambda_path"));
  o.lambda = 0;
  const HeadFit cv = fit_head(d.x, d.y, 3, o);
  r = head_fit_report(cv);
  EXPECT_EQ(r["lambda_choice"], "cross-validation");
  EXPECT_EQ(r["folds"], 5);
  EXPECT_EQ(r["cv_loss"], cv.cv_loss);
  ASSERT_EQ(r["lambda_path"].size(), cv.grid.size());
  EXPECT_EQ(r["lambda_path"][0].size(), 3u);  // lambda, accuracy, loss
  o.holdout_fraction = 0.2;
  const HeadFit h = fit_head(d.x, d.y, 3, o);
  r = head_fit_report(h);
  EXPECT_EQ(r["lambda_choice"], "holdout");
  EXPECT_EQ(r["holdout_accuracy"], h.holdout_accuracy);
  EXPECT_EQ(r["lambda_path"].size(), 16u);
  EXPECT_EQ(r["lambda_path"][0].size(), 2u);  // lambda, holdout accuracy
  EXPECT_FALSE(r.contains("folds"));
}

}  // namespace
}  // namespace inductive
