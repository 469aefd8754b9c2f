// inductive/metrics.h - classification metrics for the heads' scores (what `inductive otke eval` reports).
//
// Scores are an m x C matrix (logits or probabilities; each metric says which), labels are class indices in
// [0, C). Conventions follow scikit-learn so results can be compared with it (tests/oracle/test_metrics_sklearn.py):
//   - roc_auc: the Mann-Whitney statistic, P(score of a positive > score of a negative) with ties counted 1/2,
//     which equals the area under the trapezoidal ROC curve (sklearn.metrics.roc_auc_score);
//   - macro one-vs-rest auROC over classes (sklearn's multi_class="ovr", average="macro"), on probabilities;
//   - average precision (auPRC): sum over the distinct scores, highest first, of (R_n - R_{n-1}) P_n, the step-wise
//     area without interpolation (sklearn.metrics.average_precision_score); one-vs-rest and macro as for auROC;
//   - top-k accuracy, with ties between a class and the true class broken towards the lower class index, the
//     same rule as argmax, so that top-1 accuracy is exactly `accuracy` (logistic.h);
//   - confusion matrix with rows = true class, columns = predicted class (argmax).
// All functions are pure and thread-safe; bad shapes or labels throw Error{kShapeMismatch | kInvalidArgument}.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "inductive/linalg.h"

namespace inductive {

// auROC of `scores` for the binary labels `positive` (true = positive class). Throws kInvalidArgument when there is
// no positive or no negative sample (the area is undefined), or when a score is NaN.
double roc_auc(const std::vector<float>& scores, const std::vector<uint8_t>& positive);

// Per class c, the auROC of column c of `probs` for "label == c" (one-vs-rest); std::nullopt for classes that have
// no sample or every sample in `y` (undefined). For two-class probabilities (p0 = 1 - p1) both entries equal the
// binary auROC.
std::vector<std::optional<double>> roc_auc_one_vs_rest(const Eigen::Ref<const MatF>& probs,
                                                       const std::vector<int32_t>& y);
// The mean of the defined one-vs-rest areas; std::nullopt when none is defined.
std::optional<double> macro_roc_auc(const Eigen::Ref<const MatF>& probs, const std::vector<int32_t>& y);

// Average precision (auPRC) of `scores` for the binary labels `positive`. Throws kInvalidArgument when there is no
// positive sample (recall is undefined), or when a score is NaN. Without a negative sample it is 1.
double average_precision(const std::vector<float>& scores, const std::vector<uint8_t>& positive);

// Per class c, the average precision of column c of `probs` for "label == c"; std::nullopt for classes without a
// sample. Unlike the auROC, the two entries of a two-class problem differ (each class is the positive one in turn).
std::vector<std::optional<double>> average_precision_one_vs_rest(const Eigen::Ref<const MatF>& probs,
                                                                 const std::vector<int32_t>& y);
// The mean of the defined one-vs-rest average precisions; std::nullopt when none is defined.
std::optional<double> macro_average_precision(const Eigen::Ref<const MatF>& probs, const std::vector<int32_t>& y);

// Fraction of samples whose true class is among the k highest scores (1 <= k <= C).
double top_k_accuracy(const Eigen::Ref<const MatF>& scores, const std::vector<int32_t>& y, int k);

// C x C counts: entry (t, p) = samples of true class t predicted as p (argmax, first maximum on ties).
std::vector<std::vector<int64_t>> confusion_matrix(const Eigen::Ref<const MatF>& scores, const std::vector<int32_t>& y);

}  // namespace inductive
