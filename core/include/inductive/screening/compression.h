// inductive/screening/compression.h - dataset compression by screening scores (thesis ch. 4, "Dataset
// compression"): drop the easiest samples first and refit on the rest; compare with random deletions and with
// "margin screening" (the margin at an approximate solution).
//
// Refits use the solver on the kept samples with the full problem's 1/n (scikit-learn's fixed C: deleting samples
// deletes their loss terms), so deleting screened samples leaves the model unchanged.
#pragma once

#include <cstdint>
#include <vector>

#include "inductive/screening/problem.h"
#include "inductive/screening/solver.h"

namespace inductive {

// Samples sorted by decreasing score (ties by index): the order in which to delete them.
std::vector<int> order_by_score(const VecD& score);
// A reproducible random order (the same on every platform).
std::vector<int> random_order(int n, uint32_t seed);
// How far each sample's margin at x sits inside the flat region (classification t_i - (1 - mu); regression
// mu - |t_i|): the score of "margin screening".
VecD margin_scores(const ErmProblem& problem, const VecD& x);

struct CompressionPoint {
  double fraction_removed = 0;
  int n_kept = 0;
  double test_accuracy = 0;    // classification: sign agreement; regression: |prediction - target| <= mu
  double test_loss = 0;        // mean loss phi on the test set
  double train_objective = 0;  // P of the full training problem at the refit
};

// For each fraction f (in [0, 1)), deletes the first round(f n) samples of `order`, refits, evaluates on the test
// set (features with the training problem's p columns, labels/targets as in problem.h).
std::vector<CompressionPoint> compression_curve(const ErmProblem& train, const std::vector<int>& order,
                                                const std::vector<double>& fractions, const DesignMatrix& test_x,
                                                const std::vector<double>& test_y, const SolverOptions& solver);

}  // namespace inductive
