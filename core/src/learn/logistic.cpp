// Multinomial logistic regression by L-BFGS (see inductive/logistic.h).
#include "inductive/logistic.h"

#include <cmath>
#include <deque>
#include <limits>

#include "inductive/communicator.h"
#include "inductive/error.h"

namespace inductive {

MatF LinearHead::logits(const Eigen::Ref<const MatF>& x) const {
  INDUCTIVE_CHECK(x.cols() == weight.cols(), ErrorCode::kShapeMismatch, "linear head: input has dimension ", x.cols(),
                  ", expected ", weight.cols());
  MatF out;
  out.noalias() = x * weight.transpose();
  out.rowwise() += bias.transpose();
  return out;
}

MatF softmax_rows(const Eigen::Ref<const MatF>& logits) {
  MatF p = logits;
  for (Eigen::Index i = 0; i < p.rows(); ++i) {
    const float m = p.row(i).maxCoeff();
    p.row(i) = (p.row(i).array() - m).exp();
    p.row(i) /= p.row(i).sum();
  }
  return p;
}

double cross_entropy(const Eigen::Ref<const MatF>& logits, const std::vector<int32_t>& y) {
  double loss = 0;
  for (Eigen::Index i = 0; i < logits.rows(); ++i) {
    const double m = logits.row(i).maxCoeff();
    const double lse = m + std::log((logits.row(i).cast<double>().array() - m).exp().sum());
    loss += lse - logits(i, y[i]);
  }
  return logits.rows() ? loss / logits.rows() : 0.0;
}

double accuracy(const Eigen::Ref<const MatF>& logits, const std::vector<int32_t>& y) {
  int64_t right = 0;
  for (Eigen::Index i = 0; i < logits.rows(); ++i) {
    Eigen::Index j;
    logits.row(i).maxCoeff(&j);
    right += (j == y[i]);
  }
  return logits.rows() ? static_cast<double>(right) / logits.rows() : 0.0;
}

HeadScore score_head(const Eigen::Ref<const MatF>& logits, const std::vector<int32_t>& y, Communicator* comm) {
  const double rows = static_cast<double>(logits.rows());
  double s[3] = {accuracy(logits, y) * rows, cross_entropy(logits, y) * rows, rows};
  if (comm != nullptr && comm->size() > 1) comm->allreduce_sum(s, 3);
  return s[2] > 0 ? HeadScore{s[0] / s[2], s[1] / s[2]} : HeadScore{};
}

namespace {

bool sharded(const Communicator* comm) { return comm != nullptr && comm->size() > 1; }

// The checks of the rows. Sharded, every rank passes or fails them together (a rank throwing alone would leave the
// others waiting in a sum); the rank holding a bad label names it. Returns the number of rows of every rank.
int64_t check_rows(const Eigen::Ref<const MatF>& x, const std::vector<int32_t>& y, int classes, Communicator* comm) {
  INDUCTIVE_CHECK(static_cast<Eigen::Index>(y.size()) == x.rows(), ErrorCode::kShapeMismatch, "logistic: ", y.size(),
                  " labels for ", x.rows(), " samples");
  int64_t bad = -1;
  for (size_t i = 0; i < y.size() && bad < 0; ++i)
    if (y[i] < 0 || y[i] >= classes) bad = static_cast<int64_t>(i);
  double c[3] = {static_cast<double>(x.rows()), x.allFinite() ? 0.0 : 1.0, bad >= 0 ? 1.0 : 0.0};
  if (sharded(comm)) comm->allreduce_sum(c, 3);
  INDUCTIVE_CHECK(c[0] >= 1 && x.cols() >= 1, ErrorCode::kInvalidArgument, "logistic: empty training data");
  INDUCTIVE_CHECK(c[1] == 0, ErrorCode::kInvalidArgument, "logistic: features contain NaN or Inf");
  INDUCTIVE_CHECK(bad < 0, ErrorCode::kInvalidArgument, "logistic: label of sample ", bad, " out of range: got ",
                  bad >= 0 ? y[bad] : 0, ", expected 0..", classes - 1);
  INDUCTIVE_CHECK(c[2] == 0, ErrorCode::kInvalidArgument, "logistic: a label on another rank is out of range 0..",
                  classes - 1);
  return static_cast<int64_t>(c[0]);
}

// Parameters packed as [W (C x D) row-major, b (C)] in double for the optimiser. Sharded: x holds this rank's rows
// of `m_total`, and the objective and gradient are summed over the ranks.
struct Problem {
  const Eigen::Ref<const MatF>& x;
  const std::vector<int32_t>& y;
  int classes;
  double lambda;
  double m_total;
  Communicator* comm;
  mutable std::vector<double> sums;

  // Objective and gradient at theta.
  double eval(const Eigen::VectorXd& theta, Eigen::VectorXd& grad) const {
    const Eigen::Index m = x.rows(), D = x.cols();
    Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> w(theta.data(), classes,
                                                                                               D);
    Eigen::Map<const Eigen::VectorXd> b(theta.data() + classes * D, classes);
    const MatF wf = w.cast<float>();
    MatF logits;
    logits.noalias() = x * wf.transpose();
    MatD z = logits.cast<double>();
    z.rowwise() += b.transpose();
    double loss = 0;
    for (Eigen::Index i = 0; i < m; ++i) {
      const double mx = z.row(i).maxCoeff();
      z.row(i) = (z.row(i).array() - mx).exp();
      const double s = z.row(i).sum();
      loss += std::log(s) + mx - (std::log(z(i, y[i])) + mx);
      z.row(i) /= s;
      z(i, y[i]) -= 1.0;  // dCE/dlogits = softmax - onehot
    }
    loss /= m_total;
    z /= m_total;
    grad.resize(theta.size());
    Eigen::Map<Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> gw(grad.data(), classes, D);
    const MatF zf = z.cast<float>();
    gw = (zf.transpose() * x).cast<double>();
    grad.tail(classes) = z.colwise().sum().transpose();
    if (sharded(comm)) {  // the data terms of every rank's rows; the penalty is added once, after
      sums.resize(static_cast<size_t>(grad.size()) + 1);
      Eigen::Map<Eigen::VectorXd>(sums.data(), grad.size()) = grad;
      sums.back() = loss;
      comm->allreduce_sum(sums.data(), static_cast<int64_t>(sums.size()));
      grad = Eigen::Map<const Eigen::VectorXd>(sums.data(), grad.size());
      loss = sums.back();
    }
    gw += lambda * w;
    return loss + 0.5 * lambda * w.squaredNorm();
  }
};

}  // namespace

LogisticFit fit_logistic(const Eigen::Ref<const MatF>& x, const std::vector<int32_t>& y, int classes,
                         const LogisticOptions& o, const LinearHead* init, Communicator* comm) {
  INDUCTIVE_CHECK(classes >= 2, ErrorCode::kInvalidArgument, "logistic: need at least 2 classes: got ", classes);
  INDUCTIVE_CHECK(std::isfinite(o.lambda) && o.lambda >= 0, ErrorCode::kInvalidArgument,
                  "logistic: lambda must be >= 0: got ", o.lambda);
  const int64_t m_total = check_rows(x, y, classes, comm);
  const Eigen::Index D = x.cols();
  Problem pb{x, y, classes, o.lambda, static_cast<double>(m_total), comm, {}};
  Eigen::VectorXd theta = Eigen::VectorXd::Zero(classes * D + classes);
  if (init && init->weight.rows() == classes && init->weight.cols() == D) {
    Eigen::Map<Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(theta.data(), classes, D) =
        init->weight.cast<double>();
    theta.tail(classes) = init->bias.cast<double>();
  }
  Eigen::VectorXd grad, new_grad;
  double f = pb.eval(theta, grad);
  std::deque<Eigen::VectorXd> s_hist, y_hist;
  LogisticFit fit;
  int it = 0;
  for (; it < o.max_iter; ++it) {
    if (grad.lpNorm<Eigen::Infinity>() <= o.tol) break;
    // Two-loop recursion: direction = -H grad.
    Eigen::VectorXd q = grad;
    std::vector<double> alpha(s_hist.size());
    for (int i = static_cast<int>(s_hist.size()) - 1; i >= 0; --i) {
      alpha[i] = s_hist[i].dot(q) / y_hist[i].dot(s_hist[i]);
      q -= alpha[i] * y_hist[i];
    }
    if (!s_hist.empty())
      q *= s_hist.back().dot(y_hist.back()) / y_hist.back().squaredNorm();
    else
      q /= std::max(1.0, grad.norm());
    for (size_t i = 0; i < s_hist.size(); ++i) {
      const double beta = y_hist[i].dot(q) / y_hist[i].dot(s_hist[i]);
      q += s_hist[i] * (alpha[i] - beta);
    }
    Eigen::VectorXd dir = -q;
    double slope = grad.dot(dir);
    if (slope >= 0) {  // not a descent direction: restart from steepest descent
      s_hist.clear();
      y_hist.clear();
      dir = -grad / std::max(1.0, grad.norm());
      slope = grad.dot(dir);
    }
    double step = 1.0, f_new = 0;
    Eigen::VectorXd theta_new;
    for (int ls = 0; ls < 40; ++ls) {
      theta_new = theta + step * dir;
      f_new = pb.eval(theta_new, new_grad);
      if (std::isfinite(f_new) && f_new <= f + 1e-4 * step * slope) break;
      step *= 0.5;
    }
    if (!(f_new < f)) break;  // no progress possible at float precision
    const Eigen::VectorXd s = theta_new - theta, yv = new_grad - grad;
    if (s.dot(yv) > 1e-12) {
      s_hist.push_back(s);
      y_hist.push_back(yv);
      if (static_cast<int>(s_hist.size()) > o.memory) {
        s_hist.pop_front();
        y_hist.pop_front();
      }
    }
    const bool flat = std::fabs(f - f_new) <= 1e-12 * std::max(1.0, std::fabs(f));
    theta = theta_new;
    grad = new_grad;
    f = f_new;
    if (flat) break;
  }
  fit.head.weight =
      Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(theta.data(), classes, D)
          .cast<float>();
  fit.head.bias = theta.tail(classes).cast<float>();
  fit.loss = f;
  fit.iterations = it;
  return fit;
}

LambdaSelection select_lambda(const Eigen::Ref<const MatF>& x_train, const std::vector<int32_t>& y_train,
                              const Eigen::Ref<const MatF>& x_val, const std::vector<int32_t>& y_val, int classes,
                              const std::vector<double>& lambdas, const LogisticOptions& options,
                              const ProgressFn& progress, Communicator* comm) {
  INDUCTIVE_CHECK(!lambdas.empty(), ErrorCode::kInvalidArgument, "logistic: empty lambda grid");
  double val_rows = static_cast<double>(x_val.rows());
  if (sharded(comm)) comm->allreduce_sum(&val_rows, 1);
  INDUCTIVE_CHECK(val_rows >= 1, ErrorCode::kInvalidArgument, "logistic: empty validation set");
  std::vector<double> grid = lambdas;
  std::sort(grid.begin(), grid.end(), std::greater<double>());  // strong penalty first: cheap warm starts
  LambdaSelection best;
  best.val_accuracy = -1;
  double best_loss = std::numeric_limits<double>::infinity();
  LinearHead warm;
  for (double lambda : grid) {
    LogisticOptions o = options;
    o.lambda = lambda;
    const LogisticFit fit = fit_logistic(x_train, y_train, classes, o, warm.weight.size() ? &warm : nullptr, comm);
    warm = fit.head;
    const HeadScore score = score_head(fit.head.logits(x_val), y_val, comm);
    const double acc = score.accuracy, loss = score.cross_entropy;
    best.lambdas.push_back(lambda);
    best.val_accuracies.push_back(acc);
    if (progress) progress("lambda selection", static_cast<double>(best.lambdas.size()) / grid.size());
    if (acc > best.val_accuracy || (acc == best.val_accuracy && loss < best_loss)) {
      best.val_accuracy = acc;
      best.lambda = lambda;
      best.head = fit.head;
      best_loss = loss;
    }
  }
  return best;
}

}  // namespace inductive
