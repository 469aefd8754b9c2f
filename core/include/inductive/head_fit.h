// inductive/head_fit.h - fitting a linear head on embeddings, for the CLI (`otke fit`) and the browser (`fitHead`).
//
// Both fit through an affine standardisation x -> (x - mu) / s (mu the mean row, s the root mean squared norm of
// the centred rows) that is folded back into the head afterwards, so model files keep a plain head on raw inputs.
// Why: OTK embeddings share a large common component and are small, so an L2 penalty on raw embeddings means
// something different for every model (on E. coli promoters the smallest lambda of the thesis' grid always won);
// on centred unit-scale inputs one grid and one default suit all.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "inductive/enum_names.h"
#include "inductive/logistic.h"
#include "inductive/progress.h"

namespace inductive {

struct Standardizer {
  Eigen::RowVectorXf mu;
  float s = 1.0f;
  // Sharded (`comm`, several ranks): x is this rank's rows; the statistics are every rank's rows'.
  static Standardizer fit(const Eigen::Ref<const MatF>& x, Communicator* comm = nullptr);
  MatF apply(const Eigen::Ref<const MatF>& x) const;
  // W' ((x - mu) / s) + b' = (W' / s) x + (b' - (W' / s) mu)
  LinearHead fold(const LinearHead& head) const;
};

// One recipe for every front end, two ways to choose lambda, each with its grid defined here once:
// - few labels (the browser's fitHead, GraphiT's refitHead): lambda given (> 0), or chosen by stratified K-fold
//   cross-validation over the grid (default 2^1 .. 2^-20) when every class has >= min_per_class labels, else the
//   default 2^-4 (measured in web/README.md, "Fitting a head"); the head is fitted on every sample;
// - a holdout (the thesis' protocol: `otke fit`, and fitHead with holdout or holdoutFraction): the head is fitted
//   on the samples outside the holdout for every lambda of the grid (default the thesis' 2^-5 .. 2^-20) or the given
//   one, strongest penalty first with warm starts, and the one with the best holdout accuracy (ties: holdout loss)
//   is kept as it is, or refitted on every sample when `refit`. The standardisation is then the non-holdout
//   samples'. The holdout is `holdout`, or head_holdout(y, holdout_fraction, seed): the stratified split `otke fit`
//   draws.
struct HeadFitOptions {
  double lambda = 0;  // > 0: use it; 0: choose
  int min_per_class = 10;
  int max_folds = 5;
  std::vector<double> grid;      // lambdas to choose from; empty: default_head_lambda_grid(holdout or not)
  std::vector<int32_t> holdout;  // rows of x that choose lambda (sorted or not, distinct); empty: see below
  double holdout_fraction = 0;   // > 0 and no holdout: the holdout is head_holdout(y, holdout_fraction, seed)
  uint64_t seed = 0;             // of that split
  bool refit = false;            // holdout: refit on every row at the chosen lambda
  LogisticOptions logistic;
  std::vector<std::string> class_names;  // optional, for messages
  ProgressFn progress;                   // stages "cross-validation" or "lambda selection", then "fit"
  // Sharded fit (data-parallel `otke fit`; inductive/communicator.h): x and y are this rank's rows, the samples
  // row_offset .. row_offset + rows - 1 of all of them (ranks hold consecutive shares, in rank order), and `holdout`
  // names rows of all of them. Every rank gets the head of the fit on all rows (sums are all-reduced, so up to
  // their order) and the same report; no rank needs every embedding. Lambda comes from the holdout or is given
  // (the K-fold choice needs every row).
  Communicator* communicator = nullptr;
  int64_t row_offset = 0;
};

// 2^hi, 2^(hi-1), ..., 2^lo.
std::vector<double> head_lambda_grid(int hi_log2, int lo_log2);
// The grid HeadFitOptions::grid stands for when empty: with a holdout the thesis' head_lambda_grid(-5, -20) (METHODS:
// "grid 1/2^(5..20)"), else the few-labels head_lambda_grid(1, -20).
std::vector<double> default_head_lambda_grid(bool holdout = false);

// The thesis' holdout of labelled samples: `fraction` of each class (at least one, leaving one to fit on), drawn
// with `seed` (stratified_split, inductive/splits.h); sorted rows. Every class needs >= 2 samples; class_names
// (optional) name them in that message.
std::vector<int32_t> head_holdout(const std::vector<int32_t>& y, int classes, double fraction, uint64_t seed,
                                  const std::vector<std::string>& class_names = {});

enum class LambdaChoice : uint8_t { kGiven, kCrossValidation, kDefault, kHoldout };
inline constexpr EnumName<LambdaChoice> kLambdaChoices[] = {{LambdaChoice::kGiven, "given"},
                                                            {LambdaChoice::kCrossValidation, "cross-validation"},
                                                            {LambdaChoice::kDefault, "default"},
                                                            {LambdaChoice::kHoldout, "holdout"}};
template <>
struct EnumTable<LambdaChoice> {
  static constexpr const auto& names = kLambdaChoices;
};

struct HeadFit {
  LinearHead head;  // on raw embeddings
  double lambda = 0;
  LambdaChoice lambda_choice = LambdaChoice::kGiven;
  int folds = 0;
  double cv_accuracy = 0, cv_loss = 0;
  std::vector<double> grid, grid_accuracy, grid_loss;  // cross-validation path (holdout: accuracy only)
  double holdout_accuracy = 0;                         // holdout: of the kept head (before any refit)
  int64_t holdout_size = 0;                            // holdout: its rows
  double train_accuracy = 0, train_loss = 0;           // holdout: on the rows outside it
  Standardizer standardizer;                           // the one the head was fitted through (folded into it)
  int iterations = 0;
  std::vector<int> class_counts;
};

// The fit's report, defined once for every front end (`otke fit` prints it under "head"; the browser's headFit is
// it with camelCase keys): lambda, lambda_choice, train_accuracy, train_loss, iterations, class_counts; with a
// holdout (or a given lambda scored on one) holdout_accuracy and lambda_path [[lambda, accuracy]]; chosen by
// cross-validation folds, cv_accuracy, cv_loss and lambda_path [[lambda, accuracy, loss]].
nlohmann::json head_fit_report(const HeadFit& fit);

constexpr double kDefaultHeadLambda = 0.0625;  // 2^-4, on standardised embeddings

// x: m x D embeddings, y in [0, classes); every class needs at least one label. Throws Error naming the problem.
HeadFit fit_head(const Eigen::Ref<const MatF>& x, const std::vector<int32_t>& y, int classes,
                 const HeadFitOptions& options);

}  // namespace inductive
