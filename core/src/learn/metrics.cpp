// Classification metrics (see inductive/metrics.h).
#include "inductive/metrics.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "inductive/error.h"

namespace inductive {

namespace {

void check_labels(const Eigen::Ref<const MatF>& scores, const std::vector<int32_t>& y, const char* where) {
  INDUCTIVE_CHECK(static_cast<Eigen::Index>(y.size()) == scores.rows(), ErrorCode::kShapeMismatch, where, ": ",
                  y.size(), " labels for ", scores.rows(), " score rows");
  INDUCTIVE_CHECK(scores.rows() >= 1 && scores.cols() >= 1, ErrorCode::kInvalidArgument, where,
                  ": no sample or no class (scores are ", scores.rows(), " x ", scores.cols(), ")");
  for (size_t i = 0; i < y.size(); ++i)
    INDUCTIVE_CHECK(y[i] >= 0 && y[i] < scores.cols(), ErrorCode::kInvalidArgument, where, ": label of sample ", i,
                    " out of range: got ", y[i], ", expected 0..", scores.cols() - 1);
}

// Index of the first maximum of row i (the argmax rule every metric here shares).
Eigen::Index argmax_row(const Eigen::Ref<const MatF>& s, Eigen::Index i) {
  Eigen::Index best = 0;
  for (Eigen::Index j = 1; j < s.cols(); ++j)
    if (s(i, j) > s(i, best)) best = j;
  return best;
}

void check_binary(const std::vector<float>& scores, const std::vector<uint8_t>& positive, const char* where) {
  INDUCTIVE_CHECK(scores.size() == positive.size(), ErrorCode::kShapeMismatch, where, ": ", scores.size(),
                  " scores for ", positive.size(), " labels");
  for (size_t i = 0; i < scores.size(); ++i)
    INDUCTIVE_CHECK(!std::isnan(scores[i]), ErrorCode::kInvalidArgument, where, ": score ", i, " is NaN");
}

// Per class c, `metric` of column c of `probs` for "label == c", where the class has at least one positive sample
// (and one negative, when `needs_negative`); std::nullopt elsewhere.
template <class Metric>
std::vector<std::optional<double>> one_vs_rest(const Eigen::Ref<const MatF>& probs, const std::vector<int32_t>& y,
                                               bool needs_negative, Metric metric) {
  const Eigen::Index m = probs.rows(), C = probs.cols();
  std::vector<int64_t> count(C, 0);
  for (int32_t label : y) ++count[label];
  std::vector<std::optional<double>> out(C);
  std::vector<float> column(m);
  std::vector<uint8_t> positive(m);
  for (Eigen::Index c = 0; c < C; ++c) {
    if (count[c] == 0 || (needs_negative && count[c] == m)) continue;  // undefined, not an error here
    for (Eigen::Index i = 0; i < m; ++i) {
      column[i] = probs(i, c);
      positive[i] = y[i] == c;
    }
    out[c] = metric(column, positive);
  }
  return out;
}

std::optional<double> mean_of_defined(const std::vector<std::optional<double>>& values) {
  double sum = 0;
  int defined = 0;
  for (const auto& v : values)
    if (v) sum += *v, ++defined;
  if (defined == 0) return std::nullopt;
  return sum / defined;
}

// Ranks the samples by score (ascending, or descending when `descending`) and calls visit(start, end, positives)
// for each run of equal scores, ranks [start, end) with `positives` of them positive: a tie is one step of a ranking
// curve, whichever order its samples come in.
template <class Visit>
void for_each_tie(const std::vector<float>& scores, const std::vector<uint8_t>& positive, bool descending,
                  Visit visit) {
  std::vector<size_t> order(scores.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return descending ? scores[a] > scores[b] : scores[a] < scores[b]; });
  for (size_t start = 0; start < order.size();) {
    size_t end = start + 1;
    while (end < order.size() && scores[order[end]] == scores[order[start]]) ++end;
    int64_t positives = 0;
    for (size_t t = start; t < end; ++t) positives += positive[order[t]] != 0;
    visit(start, end, positives);
    start = end;
  }
}

}  // namespace

double roc_auc(const std::vector<float>& scores, const std::vector<uint8_t>& positive) {
  check_binary(scores, positive, "roc_auc");
  const int64_t n_pos = std::count_if(positive.begin(), positive.end(), [](uint8_t v) { return v != 0; });
  const int64_t n_neg = static_cast<int64_t>(positive.size()) - n_pos;
  INDUCTIVE_CHECK(n_pos > 0 && n_neg > 0, ErrorCode::kInvalidArgument, "roc_auc: undefined without both classes: got ",
                  n_pos, " positive and ", n_neg, " negative samples");
  // Mann-Whitney U from ranks: tied scores share their mean rank, which counts each tied (positive, negative) pair
  // as 1/2 - exactly the trapezoid the ROC curve draws through a tie. O(m log m) instead of O(n_pos n_neg).
  double rank_sum = 0;  // sum of the (1-based, tie-averaged) ranks of the positives
  for_each_tie(scores, positive, false, [&](size_t start, size_t end, int64_t positives) {
    rank_sum += static_cast<double>(positives) * 0.5 * static_cast<double>(start + 1 + end);  // mean of start+1..end
  });
  const double u = rank_sum - 0.5 * static_cast<double>(n_pos) * static_cast<double>(n_pos + 1);
  return u / (static_cast<double>(n_pos) * static_cast<double>(n_neg));
}

std::vector<std::optional<double>> roc_auc_one_vs_rest(const Eigen::Ref<const MatF>& probs,
                                                       const std::vector<int32_t>& y) {
  check_labels(probs, y, "roc_auc_one_vs_rest");
  return one_vs_rest(probs, y, true, roc_auc);
}

std::optional<double> macro_roc_auc(const Eigen::Ref<const MatF>& probs, const std::vector<int32_t>& y) {
  return mean_of_defined(roc_auc_one_vs_rest(probs, y));
}

double average_precision(const std::vector<float>& scores, const std::vector<uint8_t>& positive) {
  check_binary(scores, positive, "average_precision");
  const int64_t n_pos = std::count_if(positive.begin(), positive.end(), [](uint8_t v) { return v != 0; });
  INDUCTIVE_CHECK(n_pos > 0, ErrorCode::kInvalidArgument,
                  "average_precision: undefined without a positive sample (recall has nothing to count)");
  // Thresholds at the distinct scores, highest first: tied samples enter together, as one point of the curve.
  double area = 0;
  int64_t true_pos = 0;
  for_each_tie(scores, positive, true, [&](size_t, size_t end, int64_t positives) {
    true_pos += positives;
    // (R_n - R_{n-1}) P_n with R_n = tp / positives and P_n = tp / taken (`end` samples taken so far).
    area += static_cast<double>(positives) / static_cast<double>(n_pos) *
            (static_cast<double>(true_pos) / static_cast<double>(end));
  });
  return area;
}

std::vector<std::optional<double>> average_precision_one_vs_rest(const Eigen::Ref<const MatF>& probs,
                                                                 const std::vector<int32_t>& y) {
  check_labels(probs, y, "average_precision_one_vs_rest");
  return one_vs_rest(probs, y, false, average_precision);
}

std::optional<double> macro_average_precision(const Eigen::Ref<const MatF>& probs, const std::vector<int32_t>& y) {
  return mean_of_defined(average_precision_one_vs_rest(probs, y));
}

double top_k_accuracy(const Eigen::Ref<const MatF>& scores, const std::vector<int32_t>& y, int k) {
  check_labels(scores, y, "top_k_accuracy");
  INDUCTIVE_CHECK(k >= 1 && k <= scores.cols(), ErrorCode::kInvalidArgument, "top_k_accuracy: k must be in 1..",
                  scores.cols(), " (the number of classes): got ", k);
  int64_t hits = 0;
  for (Eigen::Index i = 0; i < scores.rows(); ++i) {
    const float s = scores(i, y[i]);
    // Rank of the true class: classes scoring higher, plus equal-scoring classes with a lower index (argmax rule).
    int ahead = 0;
    for (Eigen::Index j = 0; j < scores.cols(); ++j) ahead += scores(i, j) > s || (scores(i, j) == s && j < y[i]);
    hits += ahead < k;
  }
  return static_cast<double>(hits) / static_cast<double>(scores.rows());
}

std::vector<std::vector<int64_t>> confusion_matrix(const Eigen::Ref<const MatF>& scores,
                                                   const std::vector<int32_t>& y) {
  check_labels(scores, y, "confusion_matrix");
  std::vector<std::vector<int64_t>> counts(scores.cols(), std::vector<int64_t>(scores.cols(), 0));
  for (Eigen::Index i = 0; i < scores.rows(); ++i) ++counts[y[i]][argmax_row(scores, i)];
  return counts;
}

}  // namespace inductive
