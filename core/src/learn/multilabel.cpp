// Multi-label targets and binary cross-entropy (see inductive/multilabel.h).
#include "inductive/multilabel.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "inductive/elementwise.h"
#include "inductive/error.h"
#include "inductive/metrics.h"

namespace inductive {

namespace {

void check_rows(const Eigen::Ref<const MatF>& logits, const std::vector<int32_t>& bits) {
  INDUCTIVE_CHECK(static_cast<Eigen::Index>(bits.size()) == logits.rows(), ErrorCode::kShapeMismatch,
                  "multilabel: ", bits.size(), " label sets for ", logits.rows(), " rows of logits");
  INDUCTIVE_CHECK(logits.cols() <= kMaxMultilabels, ErrorCode::kInvalidArgument, "multilabel: ", logits.cols(),
                  " labels, at most ", kMaxMultilabels);
}

}  // namespace

MatF sigmoid(const Eigen::Ref<const MatF>& logits) {
  return logits.unaryExpr([](float z) { return elementwise::sigmoid(z); });
}

double binary_cross_entropy(const Eigen::Ref<const MatF>& logits, const std::vector<int32_t>& bits) {
  check_rows(logits, bits);
  // -[t log s(z) + (1 - t) log(1 - s(z))] = softplus(z) - t z.
  double sum = 0;
  for (Eigen::Index b = 0; b < logits.rows(); ++b)
    for (Eigen::Index c = 0; c < logits.cols(); ++c) {
      const double z = logits(b, c);
      sum += elementwise::softplus(z) - (has_label(bits[b], static_cast<int>(c)) ? z : 0.0);
    }
  return logits.size() ? sum / static_cast<double>(logits.size()) : 0.0;
}

MatF binary_cross_entropy_gradient(const Eigen::Ref<const MatF>& logits, const std::vector<int32_t>& bits) {
  check_rows(logits, bits);
  return binary_cross_entropy_gradient_rows(logits, bits.data(), logits.rows());
}

MatF binary_cross_entropy_gradient_rows(const Eigen::Ref<const MatF>& logits, const int32_t* bits, int64_t batch_rows) {
  MatF g = sigmoid(logits);
  for (Eigen::Index b = 0; b < g.rows(); ++b)
    for (Eigen::Index c = 0; c < g.cols(); ++c)
      if (has_label(bits[b], static_cast<int>(c))) g(b, c) -= 1.0f;
  if (const int64_t entries = batch_rows * g.cols()) g /= static_cast<float>(entries);
  return g;
}

double multilabel_accuracy(const Eigen::Ref<const MatF>& logits, const std::vector<int32_t>& bits) {
  check_rows(logits, bits);
  int64_t right = 0;
  for (Eigen::Index b = 0; b < logits.rows(); ++b)
    for (Eigen::Index c = 0; c < logits.cols(); ++c)
      right += (logits(b, c) > 0) == has_label(bits[b], static_cast<int>(c));
  return logits.size() ? static_cast<double>(right) / static_cast<double>(logits.size()) : 0.0;
}

std::vector<int32_t> label_column(const std::vector<int32_t>& bits, int c) {
  std::vector<int32_t> out(bits.size());
  for (size_t i = 0; i < bits.size(); ++i) out[i] = has_label(bits[i], c) ? 1 : 0;
  return out;
}

MultilabelScores score_multilabel(const Eigen::Ref<const MatF>& logits, const Eigen::Ref<const MatF>& probabilities,
                                  const std::vector<int32_t>& bits) {
  check_rows(logits, bits);
  INDUCTIVE_CHECK(probabilities.rows() == logits.rows() && probabilities.cols() == logits.cols(),
                  ErrorCode::kShapeMismatch, "multilabel: probabilities and logits differ in shape");
  const int C = static_cast<int>(logits.cols());
  MultilabelScores s;
  double sum_roc = 0, sum_prc = 0;
  int defined = 0;
  for (int c = 0; c < C; ++c) {
    std::vector<float> score(probabilities.rows());
    std::vector<uint8_t> positive(bits.size());
    for (Eigen::Index i = 0; i < probabilities.rows(); ++i) {
      score[i] = probabilities(i, c);
      positive[i] = has_label(bits[i], c) ? 1 : 0;
    }
    const int64_t pos = std::count(positive.begin(), positive.end(), uint8_t{1});
    s.positives.push_back(pos);
    if (pos == 0 || pos == static_cast<int64_t>(positive.size())) {  // one value only: neither metric is defined
      s.auroc.emplace_back();
      s.auprc.emplace_back();
      continue;
    }
    s.auroc.emplace_back(roc_auc(score, positive));
    s.auprc.emplace_back(average_precision(score, positive));
    sum_roc += *s.auroc.back();
    sum_prc += *s.auprc.back();
    ++defined;
  }
  if (defined) s.mean_auroc = sum_roc / defined, s.mean_auprc = sum_prc / defined;
  int64_t exact = 0;
  for (Eigen::Index i = 0; i < logits.rows(); ++i) {
    int32_t predicted = 0;
    for (int c = 0; c < C; ++c) predicted |= (logits(i, c) > 0 ? 1 : 0) << c;
    exact += predicted == bits[i];
  }
  s.label_accuracy = multilabel_accuracy(logits, bits);
  s.exact_match = bits.empty() ? 0.0 : static_cast<double>(exact) / static_cast<double>(bits.size());
  s.bce = binary_cross_entropy(logits, bits);
  return s;
}

std::vector<std::string> parse_label_set(const std::string& text) {
  const auto trim = [](const std::string& t) {
    const size_t b = t.find_first_not_of(" \t"), e = t.find_last_not_of(" \t");
    return b == std::string::npos ? std::string() : t.substr(b, e - b + 1);
  };
  std::vector<std::string> out;
  if (trim(text) == "-") return out;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string name = trim(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    INDUCTIVE_CHECK(!name.empty(), ErrorCode::kInvalidArgument, "label set '", text,
                    "': empty label name (write names separated by commas, or '-' for none)");
    INDUCTIVE_CHECK(std::find(out.begin(), out.end(), name) == out.end(), ErrorCode::kInvalidArgument, "label set '",
                    text, "': label '", name, "' repeated");
    out.push_back(name);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::vector<int32_t> label_bits(const std::vector<int32_t>& combination_of,
                                const std::vector<std::string>& combinations, std::vector<std::string>& names) {
  std::vector<std::vector<std::string>> sets;
  for (const std::string& c : combinations) sets.push_back(parse_label_set(c));
  if (names.empty()) {
    std::set<std::string> found;
    for (const auto& s : sets) found.insert(s.begin(), s.end());
    names.assign(found.begin(), found.end());
  }
  INDUCTIVE_CHECK(static_cast<int>(names.size()) <= kMaxMultilabels, ErrorCode::kInvalidArgument,
                  "multilabel: ", names.size(), " label names, at most ", kMaxMultilabels);
  std::vector<int32_t> bits_of(sets.size(), 0);
  for (size_t c = 0; c < sets.size(); ++c)
    for (const std::string& name : sets[c]) {
      const auto it = std::find(names.begin(), names.end(), name);
      if (it == names.end()) {
        std::string known;
        for (const std::string& n : names) known += (known.empty() ? "" : ", ") + n;
        INDUCTIVE_FAIL(ErrorCode::kInvalidArgument, "multilabel: label '", name, "' (in '", combinations[c],
                       "') is not one of the model's labels: ", known);
      }
      bits_of[c] |= int32_t{1} << (it - names.begin());
    }
  std::vector<int32_t> out(combination_of.size());
  for (size_t i = 0; i < out.size(); ++i) {
    INDUCTIVE_CHECK(combination_of[i] >= 0 && combination_of[i] < static_cast<int32_t>(sets.size()),
                    ErrorCode::kInvalidArgument, "multilabel: sample ", i, " has combination ", combination_of[i],
                    ", expected 0..", sets.size() - 1);
    out[i] = bits_of[combination_of[i]];
  }
  return out;
}

}  // namespace inductive
