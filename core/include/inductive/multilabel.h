// inductive/multilabel.h - multi-label targets and their loss (the thesis' DeepSEA model: many binary labels per
// sequence, a sigmoid per output, binary cross-entropy).
//
// A set's labels travel as the bits of one int32 (bit c set: label c applies), so that the trainers' label
// vectors, batches, splits and checkpoints carry them unchanged; hence at most kMaxMultilabels labels.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "inductive/linalg.h"

namespace inductive {

inline constexpr int kMaxMultilabels = 31;

// Whether label c is set in `bits`.
inline bool has_label(int32_t bits, int c) { return (bits >> c) & 1; }

// Elementwise logistic sigmoid, stable for large |logit|.
MatF sigmoid(const Eigen::Ref<const MatF>& logits);

// Mean over every (set, label) entry of the binary cross-entropy of sigmoid(logits) against the bits (PyTorch's
// BCEWithLogitsLoss with its default mean), computed from the logits without overflow.
double binary_cross_entropy(const Eigen::Ref<const MatF>& logits, const std::vector<int32_t>& bits);

// Its gradient with respect to the logits: (sigmoid(logit) - target) / (rows * cols).
MatF binary_cross_entropy_gradient(const Eigen::Ref<const MatF>& logits, const std::vector<int32_t>& bits);
// The same for rows of a larger batch of `batch_rows` rows (bits[r]: row r's labels): the batch mean's gradient with
// respect to these rows alone, the same bits as the batch's rows (a training step that takes its sets one at a time).
MatF binary_cross_entropy_gradient_rows(const Eigen::Ref<const MatF>& logits, const int32_t* bits, int64_t batch_rows);

// Share of (set, label) entries predicted right at the 0.5 threshold (logit > 0 means "present").
double multilabel_accuracy(const Eigen::Ref<const MatF>& logits, const std::vector<int32_t>& bits);

// Labels 0/1 of column c (one label's binary targets, for per-label metrics).
std::vector<int32_t> label_column(const std::vector<int32_t>& bits, int c);

// What a multilabel head is evaluated by (`otke eval` reports it): per label, the auROC and auPRC of its probability
// against its 0/1 targets (nullopt where the label takes one value only) and its count of positives; their means
// over the labels where both are defined (nullopt when none is); the share of (sample, label) entries right at 0.5,
// the share of samples whose whole label set is right, and the mean binary cross-entropy.
struct MultilabelScores {
  std::vector<std::optional<double>> auroc, auprc;
  std::vector<int64_t> positives;
  std::optional<double> mean_auroc, mean_auprc;
  double label_accuracy = 0, exact_match = 0, bce = 0;
};
MultilabelScores score_multilabel(const Eigen::Ref<const MatF>& logits, const Eigen::Ref<const MatF>& probabilities,
                                  const std::vector<int32_t>& bits);

// How a sample's labels are written in the front ends' files: the label names separated by commas ("promoter,
// b_subtilis"); "-" is the empty set. Names are trimmed; an empty name or a repeated one is an error.
std::vector<std::string> parse_label_set(const std::string& text);

// Multi-label targets of samples whose labels were read as combinations: sample i has the label set written
// combinations[combination_of[i]]. `names` gives the label order (bit c = names[c]); when it is empty it becomes
// the sorted names found. A name outside a given `names` is an error naming it and the known ones.
std::vector<int32_t> label_bits(const std::vector<int32_t>& combination_of,
                                const std::vector<std::string>& combinations, std::vector<std::string>& names);

}  // namespace inductive
