// Classification metrics: values computed by hand (ties included) and the conventions shared with scikit-learn.
#include <gtest/gtest.h>

#include "inductive/logistic.h"
#include "inductive/metrics.h"
#include "../test_util.h"

namespace inductive {
namespace {

using testing::expect_error;

TEST(MetricsRocAuc, CountsTiedPairsAsOneHalf) {
  // positives score 0.35, 0.8, 0.4; negatives 0.1, 0.4. Of the 6 (positive, negative) pairs the positive wins
  // (0.35,0.1) (0.8,0.1) (0.8,0.4) (0.4,0.1), loses (0.35,0.4) and ties (0.4,0.4): (4 + 0.5) / 6 = 0.75.
  EXPECT_DOUBLE_EQ(roc_auc({0.1f, 0.4f, 0.35f, 0.8f, 0.4f}, {0, 0, 1, 1, 1}), 0.75);
}

TEST(MetricsRocAuc, IsOneForPerfectRankingAndOneHalfForConstantScores) {
  EXPECT_DOUBLE_EQ(roc_auc({0.1f, 0.2f, 0.3f, 0.9f}, {0, 0, 1, 1}), 1.0);
  EXPECT_DOUBLE_EQ(roc_auc({0.9f, 0.8f, 0.3f, 0.1f}, {0, 0, 1, 1}), 0.0);
  EXPECT_DOUBLE_EQ(roc_auc({0.5f, 0.5f, 0.5f}, {1, 0, 0}), 0.5);
}

TEST(MetricsRocAuc, RefusesWhatHasNoArea) {
  expect_error(
      [] {
        roc_auc({0.1f, 0.2f}, {1, 1});
      },
      ErrorCode::kInvalidArgument, "undefined without both classes: got 2 positive and 0 negative");
  expect_error([] { roc_auc({0.1f}, {1, 0}); }, ErrorCode::kShapeMismatch, "1 scores for 2 labels");
  expect_error([] { roc_auc({0.1f, std::nanf("")}, {1, 0}); }, ErrorCode::kInvalidArgument, "score 1 is NaN");
}

TEST(MetricsRocAuc, OneVsRestSkipsClassesWithoutPositivesAndAverages) {
  MatF probs(4, 3);
  probs << 0.7f, 0.2f, 0.1f,  // class 0
      0.2f, 0.7f, 0.1f,       // class 1
      0.6f, 0.3f, 0.1f,       // class 0
      0.3f, 0.3f, 0.4f;       // class 1
  const auto per_class = roc_auc_one_vs_rest(probs, {0, 1, 0, 1});
  ASSERT_EQ(per_class.size(), 3u);
  EXPECT_DOUBLE_EQ(*per_class[0], 1.0);
  EXPECT_DOUBLE_EQ(*per_class[1], 0.875);  // positives 0.7, 0.3 vs negatives 0.2, 0.3: (1 + 1 + 1 + 1/2) / 4
  EXPECT_FALSE(per_class[2].has_value());  // class 2 never occurs: no positive, no area
  EXPECT_DOUBLE_EQ(*macro_roc_auc(probs, {0, 1, 0, 1}), (1.0 + 0.875) / 2);
  EXPECT_FALSE(macro_roc_auc(probs, {2, 2, 2, 2}).has_value());  // only one class present: nothing defined
}

TEST(MetricsAveragePrecision, SumsRecallStepsTimesPrecision) {
  // Highest first: 0.9 (+) R 1/2 P 1; 0.8 (-) no recall step; 0.7 (+) R 1 P 2/3: 1/2 + 1/2 * 2/3 = 5/6.
  EXPECT_DOUBLE_EQ(average_precision({0.9f, 0.8f, 0.7f, 0.6f}, {1, 0, 1, 0}), 5.0 / 6.0);
  EXPECT_DOUBLE_EQ(average_precision({0.1f, 0.2f, 0.9f}, {0, 0, 1}), 1.0);  // the positive ranks first
  EXPECT_DOUBLE_EQ(average_precision({0.3f, 0.2f}, {1, 1}), 1.0);           // no negative: precision is always 1
}

TEST(MetricsAveragePrecision, TiedScoresAreOneThreshold) {
  // 0.5 takes a positive and a negative together (R 1/2, P 1/2), then 0.2 the other positive (R 1, P 2/3):
  // 1/4 + 1/3, whichever order the tied samples come in.
  EXPECT_DOUBLE_EQ(average_precision({0.5f, 0.5f, 0.2f}, {1, 0, 1}), 7.0 / 12.0);
  EXPECT_DOUBLE_EQ(average_precision({0.5f, 0.5f, 0.2f}, {0, 1, 1}), 7.0 / 12.0);
}

TEST(MetricsAveragePrecision, RefusesWhatHasNoRecall) {
  expect_error(
      [] {
        average_precision({0.1f, 0.2f}, {0, 0});
      },
      ErrorCode::kInvalidArgument, "undefined without a positive sample");
  expect_error([] { average_precision({0.1f}, {1, 0}); }, ErrorCode::kShapeMismatch, "1 scores for 2 labels");
  expect_error([] { average_precision({std::nanf(""), 0.1f}, {1, 0}); }, ErrorCode::kInvalidArgument, "score 0 is NaN");
}

TEST(MetricsAveragePrecision, OneVsRestGivesEachClassItsOwnArea) {
  MatF probs(4, 2);
  probs << 0.8f, 0.2f,  // class 0
      0.4f, 0.6f,       // class 0
      0.6f, 0.4f,       // class 0
      0.5f, 0.5f;       // class 1
  const std::vector<int32_t> y{0, 0, 0, 1};
  const auto per_class = average_precision_one_vs_rest(probs, y);
  EXPECT_DOUBLE_EQ(*per_class[0], 1.0 / 3 + 1.0 / 3 + 1.0 / 3 * 3.0 / 4);  // 0.8 (+), 0.6 (+), 0.5 (-), 0.4 (+)
  EXPECT_DOUBLE_EQ(*per_class[1], 0.5);                                    // 0.6 (-), 0.5 (+): R 1 at P 1/2
  EXPECT_DOUBLE_EQ(*macro_average_precision(probs, y), (*per_class[0] + 0.5) / 2);
  const auto only_zero = average_precision_one_vs_rest(probs, {0, 0, 0, 0});
  EXPECT_DOUBLE_EQ(*only_zero[0], 1.0);    // every sample is positive
  EXPECT_FALSE(only_zero[1].has_value());  // no positive: undefined
}

TEST(MetricsTopK, TopOneIsArgmaxAccuracyAndTiesGoToTheLowerIndex) {
  MatF s(3, 3);
  s << 0.5f, 0.5f, 0.0f,                   // tie between 0 and 1: argmax says 0
      0.1f, 0.2f, 0.7f, 0.3f, 0.3f, 0.3f;  // all tied: argmax says 0
  const std::vector<int32_t> y = {1, 1, 2};
  EXPECT_DOUBLE_EQ(top_k_accuracy(s, y, 1), accuracy(s, y));
  EXPECT_DOUBLE_EQ(top_k_accuracy(s, y, 1), 0.0);
  EXPECT_DOUBLE_EQ(top_k_accuracy(s, y, 2), 2.0 / 3.0);  // sample 1 ranks its class 1 third
  EXPECT_DOUBLE_EQ(top_k_accuracy(s, y, 3), 1.0);
  expect_error([&] { top_k_accuracy(s, y, 4); }, ErrorCode::kInvalidArgument, "k must be in 1..3");
  expect_error(
      [&] {
        top_k_accuracy(s, {0, 3, 0}, 1);
      },
      ErrorCode::kInvalidArgument, "label of sample 1 out of range: got 3");
}

TEST(MetricsConfusionMatrix, RowsAreTrueClassesColumnsPredictions) {
  MatF s(4, 2);
  s << 0.9f, 0.1f, 0.2f, 0.8f, 0.4f, 0.6f, 0.5f, 0.5f;  // tie: predicted 0
  const auto cm = confusion_matrix(s, {0, 1, 0, 1});
  EXPECT_EQ(cm, (std::vector<std::vector<int64_t>>{{1, 1}, {1, 1}}));
}

}  // namespace
}  // namespace inductive
