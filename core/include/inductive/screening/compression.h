// inductive/screening/compression.h - dataset compression by screening scores (thesis ch. 4, "Dataset
// compression"): drop the easiest samples first and refit on the rest; compare with random deletions and with
// "margin screening" (the margin at an approximate solution).
//
// Refits use the solver on the kept samples with the full problem's 1/n (scikit-learn's fixed C: deleting samples
// deletes their loss terms), so deleting screened samples leaves the model unchanged.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "inductive/enum_names.h"
#include "inductive/progress.h"
#include "inductive/screening/problem.h"
#include "inductive/screening/screen.h"
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
  // The full problem's certified duality gap at the refit (P - D with the dual point of the refit's margins): an
  // upper bound on train_objective - P*, i.e. how far the model of the kept samples is from the full data's.
  double certified_gap = 0;
  int epochs = 0;  // of the refit
};

// For each fraction f (in [0, 1)), deletes the first round(f n) samples of `order`, refits, evaluates on the test
// set (features with the training problem's p columns, labels/targets as in problem.h).
// `progress`, when given, is called after each refit with the fraction of the curve done (stage "refit").
std::vector<CompressionPoint> compression_curve(const ErmProblem& train, const std::vector<int>& order,
                                                const std::vector<double>& fractions, const DesignMatrix& test_x,
                                                const std::vector<double>& test_y, const SolverOptions& solver,
                                                const ProgressFn& progress = {});

// The three orders of deleting samples the thesis compares: by screening score at the full solution (the static
// test's score: certified-removable samples first, then the nearest to being removable), by margin (how deep in
// the loss's flat region the sample sits at the full solution), and at random.
enum class CompressionRanking { kScreening, kMargin, kRandom };
inline constexpr EnumName<CompressionRanking> kCompressionRankings[] = {{CompressionRanking::kScreening, "screening"},
                                                                        {CompressionRanking::kMargin, "margin"},
                                                                        {CompressionRanking::kRandom, "random"}};
template <>
struct EnumTable<CompressionRanking> {
  static constexpr const auto& names = kCompressionRankings;
};

struct CompressionOptions {
  std::vector<double> fractions = {0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9};  // removed, each in [0, 1)
  std::vector<CompressionRanking> rankings = {CompressionRanking::kScreening, CompressionRanking::kMargin,
                                              CompressionRanking::kRandom};
  uint32_t seed = 0;     // of the random ranking
  SolverOptions solver;  // the full fit and every refit (warm-started along each curve)
  ScreenOptions screen;  // the static test whose scores rank samples
  // Stage "fit" (the full problem, once) then "refit" with the fraction of all refits done. Throw to cancel.
  ProgressFn progress;
  void validate() const;  // Error{kInvalidArgument} naming the bad field
};

struct CompressionCurve {
  CompressionRanking ranking = CompressionRanking::kScreening;
  std::vector<CompressionPoint> points;  // one per fraction, in the options' order
};

struct CompressionReport {
  SolveResult full;     // the full training problem's solution
  int n_certified = 0;  // samples the static test screens at it (deleting up to this many by score is free)
  double full_test_accuracy = 0;
  std::vector<CompressionCurve> curves;  // one per ranking, in the options' order
  double seconds = 0;
};

// A held-out test set drawn from one dataset: round(test_fraction n) samples (stratified by label for
// classification, seeded random for regression: inductive/splits.h, identical in every build), the rest to train.
struct HeldOut {
  std::unique_ptr<DesignMatrix> train_x, test_x;
  ErmProblem train;  // `all`'s settings on train_x (which it points into)
  std::vector<double> test_y;
  std::vector<int32_t> train_rows, test_rows;  // indices into `all`, increasing
};
HeldOut hold_out(const ErmProblem& all, double test_fraction, uint64_t seed);
constexpr double kDefaultTestFraction = 0.2;  // held out when no test set is given (`inductive compress`, the browser)

// What `inductive compress` and the browser's compressionCurve() run: solve the full problem, rank the samples
// each way, and refit on the kept samples of each fraction (compression_curve). Throws Error.
CompressionReport compress_dataset(const ErmProblem& train, const DesignMatrix& test_x,
                                   const std::vector<double>& test_y, const CompressionOptions& options);

}  // namespace inductive
