// Kernel screening through the empirical kernel map (see inductive/screening/kernel.h).
#include <cmath>

#include <Eigen/Eigenvalues>

#include "inductive/error.h"
#include "inductive/screening/kernel.h"

namespace inductive {
namespace {

VecD row_of(const DesignMatrix& x, int i) {
  // a_i through the row interface, dense or sparse: an axpy into zeros costs nnz(a_i).
  VecD r = VecD::Zero(x.cols());
  x.row_axpy(i, 1.0, r.data());
  return r;
}

}  // namespace

MatD gaussian_cross_gram(const DesignMatrix& test, const DesignMatrix& train, double gamma) {
  INDUCTIVE_CHECK(std::isfinite(gamma) && gamma > 0, ErrorCode::kInvalidArgument,
                  "gaussian kernel: gamma must be finite and > 0: got ", gamma);
  INDUCTIVE_CHECK(test.cols() == train.cols(), ErrorCode::kShapeMismatch, "gaussian kernel: ", test.cols(),
                  " features against ", train.cols());
  MatD k(test.rows(), train.rows());
  std::vector<VecD> rows(static_cast<size_t>(train.rows()));
  for (int j = 0; j < train.rows(); ++j) rows[j] = row_of(train, j);
  for (int i = 0; i < test.rows(); ++i) {
    const VecD a = row_of(test, i);
    for (int j = 0; j < train.rows(); ++j) k(i, j) = std::exp(-gamma * (a - rows[j]).squaredNorm());
  }
  return k;
}

MatD gaussian_gram(const DesignMatrix& x, double gamma) { return gaussian_cross_gram(x, x, gamma); }

KernelProblem::KernelProblem(const MatD& gram, std::vector<double> y, Loss loss, double lambda, bool intercept,
                             double intercept_scaling, double rel_tol) {
  const Eigen::Index n = gram.rows();
  INDUCTIVE_CHECK(n > 0 && gram.cols() == n, ErrorCode::kShapeMismatch,
                  "kernel problem: gram must be square and non-empty: got ", gram.rows(), " x ", gram.cols());
  INDUCTIVE_CHECK(gram.allFinite(), ErrorCode::kInvalidArgument, "kernel problem: gram must be finite");
  INDUCTIVE_CHECK(rel_tol >= 0 && rel_tol < 1, ErrorCode::kInvalidArgument,
                  "kernel problem: rel_tol must be in [0, 1): got ", rel_tol);
  const double asym = (gram - gram.transpose()).cwiseAbs().maxCoeff(), scale = gram.cwiseAbs().maxCoeff();
  INDUCTIVE_CHECK(asym <= 1e-8 * std::max(scale, 1e-300), ErrorCode::kInvalidArgument,
                  "kernel problem: gram is not symmetric: max |K - K^T| = ", asym);
  const MatDc sym = 0.5 * (gram + gram.transpose());
  Eigen::SelfAdjointEigenSolver<MatDc> eig(sym);
  const VecD& ev = eig.eigenvalues();
  const double top = std::max(ev.maxCoeff(), 0.0);
  INDUCTIVE_CHECK(ev.minCoeff() >= -1e-6 * std::max(top, 1e-300), ErrorCode::kInvalidArgument,
                  "kernel problem: gram is not positive semi-definite: smallest eigenvalue ", ev.minCoeff(),
                  " for a largest of ", top);
  std::vector<Eigen::Index> keep;
  for (Eigen::Index j = 0; j < n; ++j)
    if (ev[j] > rel_tol * top && ev[j] > 0) keep.push_back(j);
  INDUCTIVE_CHECK(!keep.empty(), ErrorCode::kInvalidArgument, "kernel problem: gram is zero");
  const auto r = static_cast<Eigen::Index>(keep.size());
  basis_.resize(n, r);
  eigenvalues_.resize(r);
  DenseDesignD::Matrix phi(n, r);
  for (Eigen::Index k = 0; k < r; ++k) {
    basis_.col(k) = eig.eigenvectors().col(keep[k]);
    eigenvalues_[k] = ev[keep[k]];
    phi.col(k) = basis_.col(k) * std::sqrt(eigenvalues_[k]);
  }
  map_ = std::make_unique<DenseDesignD>(std::move(phi));
  problem_.x = map_.get();
  problem_.y = std::move(y);
  problem_.loss = loss;
  problem_.penalty = Penalty::l2();
  problem_.lambda = lambda;
  problem_.intercept = intercept;
  problem_.intercept_scaling = intercept_scaling;
  problem_.validate();
}

VecD KernelProblem::alpha(const VecD& x) const {
  INDUCTIVE_CHECK(x.size() == problem_.dim(), ErrorCode::kShapeMismatch, "kernel problem: solution has ", x.size(),
                  " entries, expected ", problem_.dim());
  // K alpha = U ev U^T U ev^{-1/2} x_f = U ev^{1/2} x_f = Phi x_f.
  return basis_ * x.head(rank()).cwiseQuotient(eigenvalues_.cwiseSqrt());
}

double KernelProblem::intercept(const VecD& x) const {
  return problem_.intercept ? problem_.intercept_scaling * x[rank()] : 0.0;
}

VecD KernelProblem::decision_function(const MatD& cross_gram, const VecD& x) const {
  INDUCTIVE_CHECK(cross_gram.cols() == basis_.rows(), ErrorCode::kShapeMismatch, "kernel problem: cross gram has ",
                  cross_gram.cols(), " columns, expected ", basis_.rows(), " (training points)");
  return (cross_gram * alpha(x)).array() + intercept(x);
}

}  // namespace inductive
