// Linear heads on standardised embeddings (see inductive/head_fit.h).
#include "inductive/head_fit.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include "inductive/communicator.h"
#include "inductive/error.h"
#include "inductive/splits.h"

namespace inductive {

Standardizer Standardizer::fit(const Eigen::Ref<const MatF>& x, Communicator* comm) {
  Standardizer st;
  if (comm == nullptr || comm->size() == 1) {
    st.mu = x.colwise().mean();
    const double ms = (x.rowwise() - st.mu).rowwise().squaredNorm().mean();
    st.s = ms > 1e-30 ? static_cast<float>(std::sqrt(ms)) : 1.0f;
    return st;
  }
  // Every rank's rows: the column sums and the row count, then the centred squares (as the one-process passes).
  const Eigen::Index D = x.cols();
  std::vector<double> sums(static_cast<size_t>(D) + 1);
  Eigen::Map<Eigen::RowVectorXd>(sums.data(), D) = x.cast<double>().colwise().sum();
  sums[D] = static_cast<double>(x.rows());
  comm->allreduce_sum(sums.data(), D + 1);
  const double m = sums[D];
  st.mu = (Eigen::Map<const Eigen::RowVectorXd>(sums.data(), D) / std::max(m, 1.0)).cast<float>();
  double sq = x.rows() > 0 ? static_cast<double>((x.rowwise() - st.mu).rowwise().squaredNorm().sum()) : 0.0;
  comm->allreduce_sum(&sq, 1);
  const double ms = m > 0 ? sq / m : 0.0;
  st.s = ms > 1e-30 ? static_cast<float>(std::sqrt(ms)) : 1.0f;
  return st;
}

MatF Standardizer::apply(const Eigen::Ref<const MatF>& x) const { return (x.rowwise() - mu) / s; }

LinearHead Standardizer::fold(const LinearHead& h) const {
  LinearHead raw;
  raw.weight = h.weight / s;
  raw.bias = h.bias - raw.weight * mu.transpose();
  return raw;
}

namespace {

MatF rows_of(const Eigen::Ref<const MatF>& x, const std::vector<int>& which) {
  MatF out(static_cast<Eigen::Index>(which.size()), x.cols());
  for (size_t i = 0; i < which.size(); ++i) out.row(static_cast<Eigen::Index>(i)) = x.row(which[i]);
  return out;
}

// K-fold cross-validation over the grid: each fold fits the whole path from the strongest penalty down with warm
// starts on its standardised training part and scores the held-out part. The choice is the most correct held-out
// predictions, ties to the lowest held-out cross-entropy: with a few labels accuracy takes few values and ties are
// common, while the loss still tells a confident right answer from a lucky one.
void cross_validate(const Eigen::Ref<const MatF>& x, const std::vector<int32_t>& y, int C, int folds,
                    const HeadFitOptions& o, HeadFit& fit) {
  fit.grid = o.grid.empty() ? default_head_lambda_grid(false) : o.grid;
  std::sort(fit.grid.begin(), fit.grid.end(), std::greater<double>());  // strongest first: warm starts
  const size_t G = fit.grid.size();
  // Stratified folds: the j-th sample of each class (in input order) goes to fold j mod K.
  std::vector<int> fold(y.size()), seen(C, 0);
  for (size_t i = 0; i < y.size(); ++i) fold[i] = seen[y[i]]++ % folds;
  std::vector<double> correct(G, 0.0), loss(G, 0.0);
  int done = 0;
  for (int k = 0; k < folds; ++k) {
    std::vector<int> train, val;
    for (size_t i = 0; i < y.size(); ++i) (fold[i] == k ? val : train).push_back(static_cast<int>(i));
    std::vector<int32_t> y_train, y_val;
    for (int i : train) y_train.push_back(y[i]);
    for (int i : val) y_val.push_back(y[i]);
    const MatF x_train = rows_of(x, train);
    const Standardizer st = Standardizer::fit(x_train);
    const MatF xs_train = st.apply(x_train), xs_val = st.apply(rows_of(x, val));
    LinearHead warm;
    for (size_t g = 0; g < G; ++g) {
      LogisticOptions lo = o.logistic;
      lo.lambda = fit.grid[g];
      warm = fit_logistic(xs_train, y_train, C, lo, g > 0 ? &warm : nullptr).head;
      const MatF logits = warm.logits(xs_val);
      const double n_val = static_cast<double>(val.size());
      correct[g] += accuracy(logits, y_val) * n_val;
      loss[g] += cross_entropy(logits, y_val) * n_val;
      if (o.progress) o.progress("cross-validation", ++done / (static_cast<double>(folds) * G));
    }
  }
  size_t best = 0;
  for (size_t g = 1; g < G; ++g) {
    const bool more = correct[g] > correct[best] + 0.5;  // counts of right answers: integers
    if (more || (correct[g] > correct[best] - 0.5 && loss[g] < loss[best])) best = g;
  }
  const double m = static_cast<double>(y.size());
  for (size_t g = 0; g < G; ++g) {
    fit.grid_accuracy.push_back(correct[g] / m);
    fit.grid_loss.push_back(loss[g] / m);
  }
  fit.folds = folds;
  fit.cv_accuracy = correct[best] / m;
  fit.cv_loss = loss[best] / m;
  fit.lambda = fit.grid[best];
}

std::vector<int32_t> labels_of(const std::vector<int32_t>& y, const std::vector<int>& rows) {
  std::vector<int32_t> out;
  out.reserve(rows.size());
  for (int i : rows) out.push_back(y[i]);
  return out;
}

// The thesis' protocol: choose on the holdout, keep the head fitted on the other rows (or refit on all). `m` rows in
// all; x holds rows offset .. offset + x.rows() - 1 of them (all of them in one process).
void fit_on_holdout(const Eigen::Ref<const MatF>& x, const std::vector<int32_t>& y, int C, const HeadFitOptions& o,
                    const std::vector<int32_t>& holdout, int64_t m, int64_t offset, Communicator* comm, HeadFit& fit) {
  std::vector<uint8_t> held(static_cast<size_t>(m), 0);
  for (int32_t i : holdout) {
    INDUCTIVE_CHECK(i >= 0 && i < m, ErrorCode::kInvalidArgument, "fitHead: holdout row ", i, " is not in [0, ", m,
                    ")");
    INDUCTIVE_CHECK(!held[i], ErrorCode::kInvalidArgument, "fitHead: holdout row ", i, " is listed twice");
    held[i] = 1;
  }
  INDUCTIVE_CHECK(static_cast<int64_t>(holdout.size()) < m, ErrorCode::kInvalidArgument,
                  "fitHead: the holdout leaves no row to fit on");
  std::vector<int> train, val;
  for (Eigen::Index i = 0; i < x.rows(); ++i) (held[offset + i] ? val : train).push_back(static_cast<int>(i));
  const MatF x_train = rows_of(x, train);
  const std::vector<int32_t> y_train = labels_of(y, train), y_val = labels_of(y, val);
  const Standardizer st = Standardizer::fit(x_train, comm);
  const std::vector<double> grid = o.lambda > 0     ? std::vector<double>{o.lambda}
                                   : o.grid.empty() ? default_head_lambda_grid(true)
                                                    : o.grid;
  if (o.progress) o.progress("lambda selection", 0.0);
  const LambdaSelection sel = select_lambda(st.apply(x_train), y_train, st.apply(rows_of(x, val)), y_val, C, grid,
                                            o.logistic, o.progress, comm);
  fit.lambda = sel.lambda;
  fit.lambda_choice = o.lambda > 0 ? LambdaChoice::kGiven : LambdaChoice::kHoldout;
  fit.holdout_size = static_cast<int64_t>(holdout.size());
  fit.grid = sel.lambdas;
  fit.grid_accuracy = sel.val_accuracies;
  fit.holdout_accuracy = sel.val_accuracy;
  LinearHead head = sel.head;
  if (o.refit) {
    if (o.progress) o.progress("fit", 0.0);
    LogisticOptions lo = o.logistic;
    lo.lambda = sel.lambda;
    const LogisticFit lf = fit_logistic(st.apply(x), y, C, lo, &sel.head, comm);
    head = lf.head;
    fit.iterations = lf.iterations;
    if (o.progress) o.progress("fit", 1.0);
  }
  fit.head = st.fold(head);
  fit.standardizer = st;
  const HeadScore train_score = score_head(fit.head.logits(x_train), y_train, comm);
  fit.train_accuracy = train_score.accuracy;
  fit.train_loss = train_score.cross_entropy;
}

}  // namespace

nlohmann::json head_fit_report(const HeadFit& fit) {
  nlohmann::json info = {{"lambda", fit.lambda},
                         {"lambda_choice", name_of(fit.lambda_choice)},
                         {"train_accuracy", fit.train_accuracy},
                         {"train_loss", fit.train_loss},
                         {"iterations", fit.iterations},
                         {"class_counts", fit.class_counts}};
  nlohmann::json path = nlohmann::json::array();
  if (fit.lambda_choice == LambdaChoice::kHoldout ||
      (fit.lambda_choice == LambdaChoice::kGiven && !fit.grid_accuracy.empty())) {
    for (size_t g = 0; g < fit.grid.size(); ++g) path.push_back({fit.grid[g], fit.grid_accuracy[g]});
    info["holdout_accuracy"] = fit.holdout_accuracy;
    info["lambda_path"] = path;
  }
  if (fit.lambda_choice == LambdaChoice::kCrossValidation) {
    for (size_t g = 0; g < fit.grid.size(); ++g) path.push_back({fit.grid[g], fit.grid_accuracy[g], fit.grid_loss[g]});
    info["folds"] = fit.folds;
    info["cv_accuracy"] = fit.cv_accuracy;
    info["cv_loss"] = fit.cv_loss;
    info["lambda_path"] = path;
  }
  return info;
}

std::vector<double> default_head_lambda_grid(bool holdout) {
  return holdout ? head_lambda_grid(-5, -20) : head_lambda_grid(1, -20);
}

std::vector<int32_t> head_holdout(const std::vector<int32_t>& y, int classes, double fraction, uint64_t seed,
                                  const std::vector<std::string>& class_names) {
  std::vector<std::string> names = class_names;
  for (int c = static_cast<int>(names.size()); c < classes; ++c) names.push_back(std::to_string(c));
  names.resize(static_cast<size_t>(std::max(classes, 0)));
  std::vector<int32_t> train, val;
  stratified_split(y, names, fraction, seed, train, val);
  return val;
}

std::vector<double> head_lambda_grid(int hi_log2, int lo_log2) {
  std::vector<double> grid;
  for (int e = hi_log2; e >= lo_log2; --e) grid.push_back(std::ldexp(1.0, e));
  return grid;
}

HeadFit fit_head(const Eigen::Ref<const MatF>& x, const std::vector<int32_t>& y, int C, const HeadFitOptions& o) {
  Communicator* comm = o.communicator != nullptr && o.communicator->size() > 1 ? o.communicator : nullptr;
  INDUCTIVE_CHECK(C >= 2, ErrorCode::kInvalidArgument, "fitHead: need at least 2 classes: got ", C);
  INDUCTIVE_CHECK(static_cast<Eigen::Index>(y.size()) == x.rows(), ErrorCode::kShapeMismatch, "fitHead: ", y.size(),
                  " labels for ", x.rows(), " samples");
  INDUCTIVE_CHECK(std::isfinite(o.lambda) && o.lambda >= 0, ErrorCode::kInvalidArgument,
                  "fitHead: lambda must be >= 0 (0: choose it): got ", o.lambda);
  INDUCTIVE_CHECK(o.min_per_class >= 2 && o.max_folds >= 2, ErrorCode::kInvalidArgument,
                  "fitHead: minPerClass and maxFolds must be >= 2: got ", o.min_per_class, " and ", o.max_folds);
  INDUCTIVE_CHECK(comm == nullptr || o.lambda > 0 || !o.holdout.empty(), ErrorCode::kInvalidArgument,
                  "fitHead: a fit sharded over ranks chooses lambda on a holdout (or takes it given)");
  // What the rows say, summed over the ranks when sharded, so that every rank passes or fails the checks together:
  // the class counts, then the rows, the non-finite flag and the first bad label's flag.
  HeadFit fit;
  fit.class_counts.assign(C, 0);
  int64_t bad = -1;
  for (Eigen::Index i = 0; i < x.rows() && bad < 0; ++i) {
    if (y[i] < 0 || y[i] >= C)
      bad = i;
    else
      ++fit.class_counts[y[i]];
  }
  std::vector<double> counts(fit.class_counts.begin(), fit.class_counts.end());
  counts.insert(counts.end(), {static_cast<double>(x.rows()), x.allFinite() ? 0.0 : 1.0, bad >= 0 ? 1.0 : 0.0});
  if (comm) comm->allreduce_sum(counts.data(), static_cast<int64_t>(counts.size()));
  const int64_t m = static_cast<int64_t>(counts[C]);
  INDUCTIVE_CHECK(m >= 1, ErrorCode::kInvalidArgument, "fitHead: no labelled sample given");
  INDUCTIVE_CHECK(counts[C + 1] == 0, ErrorCode::kInvalidArgument, "fitHead: embeddings contain NaN or Inf");
  INDUCTIVE_CHECK(bad < 0, ErrorCode::kInvalidArgument, "fitHead: label of sample ", bad + (comm ? o.row_offset : 0),
                  " out of range: got ", bad >= 0 ? y[bad] : 0, ", expected 0..", C - 1);
  INDUCTIVE_CHECK(counts[C + 2] == 0, ErrorCode::kInvalidArgument,
                  "fitHead: a label on another rank is out of range 0..", C - 1);
  for (int k = 0; k < C; ++k) fit.class_counts[k] = static_cast<int>(counts[k]);
  for (int k = 0; k < C; ++k)
    INDUCTIVE_CHECK(fit.class_counts[k] > 0, ErrorCode::kInvalidArgument, "fitHead: class ",
                    k < static_cast<int>(o.class_names.size()) ? "'" + o.class_names[k] + "'" : std::to_string(k),
                    " has no labelled sample; every class needs at least one");
  for (double l : o.grid)
    INDUCTIVE_CHECK(std::isfinite(l) && l > 0, ErrorCode::kInvalidArgument, "fitHead: grid lambdas must be > 0: got ",
                    l);
  INDUCTIVE_CHECK(std::isfinite(o.holdout_fraction) && o.holdout_fraction >= 0 && o.holdout_fraction < 1,
                  ErrorCode::kInvalidArgument, "fitHead: holdoutFraction must be in [0, 1): got ", o.holdout_fraction);
  INDUCTIVE_CHECK(comm == nullptr || o.holdout_fraction == 0 || !o.holdout.empty(), ErrorCode::kInvalidArgument,
                  "fitHead: a fit sharded over ranks takes its holdout rows given (head_holdout on every label)");
  if (!o.holdout.empty() || o.holdout_fraction > 0) {
    const std::vector<int32_t> holdout =
        !o.holdout.empty() ? o.holdout : head_holdout(y, C, o.holdout_fraction, o.seed, o.class_names);
    fit_on_holdout(x, y, C, o, holdout, m, comm ? o.row_offset : 0, comm, fit);
    return fit;
  }
  const int fewest = *std::min_element(fit.class_counts.begin(), fit.class_counts.end());
  if (o.lambda > 0) {
    fit.lambda = o.lambda;
    fit.lambda_choice = LambdaChoice::kGiven;
  } else if (fewest >= o.min_per_class) {
    cross_validate(x, y, C, std::min(o.max_folds, fewest), o, fit);
    fit.lambda_choice = LambdaChoice::kCrossValidation;
  } else {
    fit.lambda = kDefaultHeadLambda;
    fit.lambda_choice = LambdaChoice::kDefault;
  }
  if (o.progress) o.progress("fit", 0.0);
  const Standardizer st = Standardizer::fit(x, comm);
  LogisticOptions lo = o.logistic;
  lo.lambda = fit.lambda;
  const LogisticFit lf = fit_logistic(st.apply(x), y, C, lo, nullptr, comm);
  fit.head = st.fold(lf.head);
  fit.standardizer = st;
  fit.iterations = lf.iterations;
  const HeadScore score = score_head(fit.head.logits(x), y, comm);
  fit.train_accuracy = score.accuracy;
  fit.train_loss = score.cross_entropy;
  if (o.progress) o.progress("fit", 1.0);
  return fit;
}

}  // namespace inductive
