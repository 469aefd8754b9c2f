// ERM datasets from feature tables, their LIBSVM text and the label transforms (see inductive/screening/datasets.h).
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "inductive/error.h"
#include "inductive/screening/datasets.h"

namespace inductive {

Dataset to_dataset(FeatureTable&& table) {
  Dataset d;
  if (table.sparse) {
    SparseRows& s = table.csr;
    d.x = std::make_shared<CsrDesign>(s.rows, s.cols, std::move(s.row_ptr), std::move(s.col), std::move(s.val));
    s = SparseRows{};
  } else {
    d.x = std::make_shared<DenseDesign>(std::move(table.dense));
    table.dense = MatF();
  }
  d.y = std::move(table.y);
  table.y.clear();
  return d;
}

std::string format_libsvm(const Dataset& data, const std::vector<int>& rows) {
  std::string text;
  std::vector<double> row(static_cast<size_t>(data.p()));
  char buf[64];
  for (int i : rows) {
    std::fill(row.begin(), row.end(), 0.0);
    data.x->row_axpy(i, 1.0, row.data());
    std::snprintf(buf, sizeof buf, "%.17g", data.y[static_cast<size_t>(i)]);
    text += buf;
    for (int j = 0; j < data.p(); ++j) {
      if (row[static_cast<size_t>(j)] == 0.0) continue;
      // Stored values are float: %.9g round-trips them exactly.
      std::snprintf(buf, sizeof buf, " %d:%.9g", j + 1, row[static_cast<size_t>(j)]);
      text += buf;
    }
    text += '\n';
  }
  return text;
}

std::vector<double> one_vs_rest(const std::vector<double>& labels, double positive) {
  std::vector<double> y(labels.size());
  size_t n_positive = 0;
  for (size_t i = 0; i < labels.size(); ++i) {
    y[i] = labels[i] == positive ? 1.0 : -1.0;
    n_positive += labels[i] == positive;
  }
  // A label that never occurs (a typo, 10 on digits) would silently make every sample negative.
  INDUCTIVE_CHECK(n_positive > 0, ErrorCode::kInvalidArgument, "labels: one-vs-rest label ", positive,
                  " does not occur in the ", labels.size(), " labels");
  INDUCTIVE_CHECK(n_positive < labels.size(), ErrorCode::kInvalidArgument, "labels: every label is ", positive,
                  ": one-vs-rest needs at least one other label");
  return y;
}

std::vector<double> to_signed_labels(const std::vector<double>& labels) {
  INDUCTIVE_CHECK(!labels.empty(), ErrorCode::kInvalidArgument, "labels: no label");
  std::vector<double> values = labels;
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  INDUCTIVE_CHECK(values.size() == 2, ErrorCode::kInvalidArgument,
                  "labels: binary classification needs two distinct labels: got ", values.size(),
                  values.size() > 2 ? " (use one_vs_rest)" : "");
  std::vector<double> y(labels.size());
  for (size_t i = 0; i < labels.size(); ++i) y[i] = labels[i] == values[1] ? 1.0 : -1.0;
  return y;
}

ErmProblem erm_problem(const Dataset& data, const Loss& loss, const Penalty& penalty, double lambda, bool intercept,
                       const double* positive) {
  ErmProblem problem;
  problem.x = data.x.get();
  problem.y = erm_targets(data.y, loss.is_classification(), positive);
  problem.loss = loss;
  problem.penalty = penalty;
  problem.lambda = lambda;
  problem.intercept = intercept;
  return problem;
}

std::vector<double> erm_targets(const std::vector<double>& labels, bool classification, const double* positive) {
  if (positive != nullptr) return one_vs_rest(labels, *positive);
  if (classification) return to_signed_labels(labels);
  return labels;
}

}  // namespace inductive
