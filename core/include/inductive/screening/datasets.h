// inductive/screening/datasets.h - ERM datasets: a design matrix and its labels, built from the method-neutral
// tables of inductive/feature_table.h (LIBSVM, CSV, MNIST idx) by moving their storage, and the label transforms
// screening's problems take.
//
//   Dataset d = to_dataset(read_libsvm("a9a.txt"));   // CSR design, no copy of the values
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "inductive/feature_table.h"
#include "inductive/screening/design_matrix.h"
#include "inductive/screening/problem.h"

namespace inductive {

struct Dataset {
  std::shared_ptr<DesignMatrix> x;  // n x p
  std::vector<double> y;            // n raw labels / targets as read
  int n() const { return x ? x->rows() : 0; }
  int p() const { return x ? x->cols() : 0; }
};

// The table's storage moved into a design matrix (DenseDesign or CsrDesign, which checks it); `table` is left
// empty.
Dataset to_dataset(FeatureTable&& table);

// The rows `rows` of `data` in LIBSVM format (1-based indices, exact zeros left out, the labels as read), so that
// a compressed dataset reads back with read_libsvm: labels print with 17 digits and the float values with 9, which
// round-trips both.
std::string format_libsvm(const Dataset& data, const std::vector<int>& rows);

// ---- labels ----------------------------------------------------------------------------------------------------
// +1 where label == positive, -1 elsewhere (one-vs-rest).
std::vector<double> one_vs_rest(const std::vector<double>& labels, double positive);
// Two-valued labels to -1/+1: the smaller value becomes -1 (so 0/1, -1/+1, 1/2 all map as expected). Throws when
// the labels take one value or more than two.
std::vector<double> to_signed_labels(const std::vector<double>& labels);
// The targets of an ERM problem from raw labels: one_vs_rest(labels, *positive) when `positive` is given, else
// to_signed_labels for classification losses, else the labels themselves (regression).
std::vector<double> erm_targets(const std::vector<double>& labels, bool classification,
                                const double* positive = nullptr);

// The ERM problem on `data` (borrowed: it must outlive the problem), as `inductive screen|path|compress` and the
// browser's dataset build it: targets erm_targets(data.y, loss is a classification loss, positive), then the loss,
// penalty, lambda and intercept. Not validated (the caller may set lambda later).
ErmProblem erm_problem(const Dataset& data, const Loss& loss, const Penalty& penalty, double lambda, bool intercept,
                       const double* positive = nullptr);

}  // namespace inductive
