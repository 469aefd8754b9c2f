// inductive/logistic.h - multinomial logistic regression with an L2 penalty (the OTKE unsupervised head).
//
// Minimises  (1/m) sum_i CE(softmax(W x_i + b), y_i) + (lambda / 2) ||W||_F^2  (bias not penalised) by L-BFGS with
// an Armijo backtracking line search, to a gradient-norm tolerance. Two classes use the same softmax form (C = 2),
// so the head always has one row per class. `select_lambda` fits a path from the largest lambda down (warm starts)
// and keeps the one with the best validation accuracy (ties: validation loss), as in the thesis (grid 2^-5..2^-20).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "inductive/linalg.h"
#include "inductive/progress.h"

namespace inductive {

class Communicator;  // inductive/communicator.h

struct LogisticOptions {
  double lambda = 1e-4;
  int max_iter = 500;
  double tol = 1e-6;  // on the gradient's infinity norm
  int memory = 10;    // L-BFGS history
};

struct LinearHead {
  MatF weight;                                         // C x D
  VecF bias;                                           // C
  MatF logits(const Eigen::Ref<const MatF>& x) const;  // m x C
};

struct LogisticFit {
  LinearHead head;
  double loss = 0;  // penalised objective at the end
  int iterations = 0;
};

// x: m x D, y in [0, classes). `init` (optional) warm-starts.
// Sharded (`comm`, several ranks): x and y are this rank's rows (any number, 0 included; every rank calls with the
// same classes, options and init). The objective and its gradient are summed over every rank's rows, so every rank
// takes the same L-BFGS steps and returns the same head: the fit on all rows, up to the order of the sums.
LogisticFit fit_logistic(const Eigen::Ref<const MatF>& x, const std::vector<int32_t>& y, int classes,
                         const LogisticOptions& options, const LinearHead* init = nullptr,
                         Communicator* comm = nullptr);

struct LambdaSelection {
  LinearHead head;
  double lambda = 0;
  double val_accuracy = 0;
  std::vector<double> lambdas, val_accuracies;  // the path, for reports
};

LambdaSelection select_lambda(const Eigen::Ref<const MatF>& x_train, const std::vector<int32_t>& y_train,
                              const Eigen::Ref<const MatF>& x_val, const std::vector<int32_t>& y_val, int classes,
                              const std::vector<double>& lambdas, const LogisticOptions& options,
                              const ProgressFn& progress = {},  // "lambda selection", fraction of the grid
                              Communicator* comm = nullptr);    // sharded rows, as fit_logistic's

// Mean cross-entropy of logits (m x C) against labels, and accuracy.
double cross_entropy(const Eigen::Ref<const MatF>& logits, const std::vector<int32_t>& y);
double accuracy(const Eigen::Ref<const MatF>& logits, const std::vector<int32_t>& y);
// Both over every rank's rows (`comm` null: these rows), on every rank: {accuracy, cross-entropy}.
struct HeadScore {
  double accuracy = 0, cross_entropy = 0;
};
HeadScore score_head(const Eigen::Ref<const MatF>& logits, const std::vector<int32_t>& y, Communicator* comm);
// Softmax of logits, row-wise, numerically stable.
MatF softmax_rows(const Eigen::Ref<const MatF>& logits);

}  // namespace inductive
