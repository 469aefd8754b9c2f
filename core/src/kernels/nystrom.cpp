// Nystrom embedding of the Gaussian kernel on the sphere (see inductive/nystrom.h).
#include "inductive/nystrom.h"

#include <cmath>

#include <Eigen/Eigenvalues>

#include "inductive/elementwise.h"
#include "inductive/error.h"
#include "simd/small_gemm.h"

namespace inductive {

namespace {

constexpr float kNormFloor = elementwise::kNystromNormFloor;

// f(lambda) = 1 / (sqrt(max(lambda, 0)) + reg) and its derivative.
double inv_sqrt_reg(double lambda, double reg) { return 1.0 / (std::sqrt(std::max(lambda, 0.0)) + reg); }
double inv_sqrt_reg_prime(double lambda, double reg) {
  if (lambda <= 0) return 0.0;
  const double s = std::sqrt(lambda);
  return -1.0 / (2.0 * s * (s + reg) * (s + reg));
}

}  // namespace

void NystromOptions::validate() const {
  INDUCTIVE_CHECK(std::isfinite(sigma) && sigma > 0, ErrorCode::kInvalidArgument,
                  "nystrom: sigma must be a finite number > 0: got ", sigma);
  INDUCTIVE_CHECK(std::isfinite(reg) && reg > 0, ErrorCode::kInvalidArgument,
                  "nystrom: reg must be a finite number > 0: got ", reg);
}

void gaussian_on_sphere(MatF& dots, float sigma) {
  const float inv = 1.0f / (sigma * sigma);
  dots = ((dots.array() - 1.0f) * inv).exp().matrix();
}

Nystrom::Nystrom(MatF anchors, NystromOptions options) : options_(options) {
  options_.validate();
  set_anchors(std::move(anchors));
}

void Nystrom::set_anchors(MatF anchors) {
  INDUCTIVE_CHECK(anchors.rows() >= 1 && anchors.cols() >= 1, ErrorCode::kInvalidArgument,
                  "nystrom: anchors must be a non-empty K x d matrix: got ", anchors.rows(), " x ", anchors.cols());
  INDUCTIVE_CHECK(anchors.allFinite(), ErrorCode::kInvalidArgument, "nystrom: anchors contain NaN or Inf");
  for (Eigen::Index r = 0; r < anchors.rows(); ++r) {
    const float nrm = anchors.row(r).norm();
    INDUCTIVE_CHECK(nrm > 0, ErrorCode::kInvalidArgument, "nystrom: anchor ", r, " is the zero vector");
    anchors.row(r) /= nrm;
  }
  anchors_ = std::move(anchors);
  update_factor();
}

void Nystrom::ensure_eigen() const {
  if (eigval_.size() == anchors_.rows()) return;
  MatF kww = anchors_ * anchors_.transpose();
  gaussian_on_sphere(kww, options_.sigma);
  Eigen::SelfAdjointEigenSolver<MatD> eig(kww.cast<double>());
  INDUCTIVE_CHECK(eig.info() == Eigen::Success, ErrorCode::kInternal, "nystrom: eigendecomposition failed");
  eigvec_ = eig.eigenvectors();
  eigval_ = eig.eigenvalues();
}

void Nystrom::update_factor() {
  eigval_.resize(0);
  ensure_eigen();
  Eigen::VectorXd f(eigval_.size());
  for (Eigen::Index i = 0; i < f.size(); ++i) f[i] = inv_sqrt_reg(eigval_[i], options_.reg);
  factor_ = (eigvec_ * f.asDiagonal() * eigvec_.transpose()).cast<float>();
}

Nystrom Nystrom::from_stored(MatF anchors, MatF factor, NystromOptions options) {
  options.validate();
  INDUCTIVE_CHECK(anchors.rows() >= 1 && anchors.cols() >= 1 && anchors.allFinite(), ErrorCode::kInvalidArgument,
                  "nystrom: stored anchors must be a finite non-empty matrix");
  INDUCTIVE_CHECK(factor.rows() == anchors.rows() && factor.cols() == anchors.rows(), ErrorCode::kShapeMismatch,
                  "nystrom: factor must be K x K = ", anchors.rows(), " x ", anchors.rows(), ": got ", factor.rows(),
                  " x ", factor.cols());
  INDUCTIVE_CHECK(factor.allFinite(), ErrorCode::kInvalidArgument, "nystrom: factor contains NaN or Inf");
  Nystrom ny;
  ny.options_ = options;
  ny.anchors_ = std::move(anchors);
  ny.factor_ = std::move(factor);
  return ny;
}

MatF Nystrom::forward(const Eigen::Ref<const MatF>& x) const {
  Cache cache;
  return forward(x, cache);
}

MatF Nystrom::forward(const Eigen::Ref<const MatF>& x, Cache& cache) const {
  INDUCTIVE_CHECK(x.cols() == anchors_.cols(), ErrorCode::kShapeMismatch, "nystrom: features have dimension ", x.cols(),
                  ", expected ", anchors_.cols(), " (the anchors' dimension)");
  cache.norm = x.rowwise().norm();
  cache.xhat = x;
  for (Eigen::Index i = 0; i < x.rows(); ++i) cache.xhat.row(i) /= std::max(cache.norm[i], kNormFloor);
  // Both products through the register-blocked kernel (simd/small_gemm.h): Eigen's GEMM is unvectorised in wasm, and
  // natively these shapes (n x dim times dim x K, K a few dozen) are the tall-skinny ones it packs for nothing.
  const int n = static_cast<int>(x.rows()), dim = static_cast<int>(x.cols()), K = static_cast<int>(anchors_.rows());
  const MatF anchors_t = anchors_.transpose();
  cache.kx.resize(n, K);
  simd::gemm_ab(cache.xhat.data(), dim, anchors_t.data(), K, cache.kx.data(), K, n, K, dim);
  gaussian_on_sphere(cache.kx, options_.sigma);
  MatF psi(n, K);
  simd::RowEpilogue by_norm;  // keep_norm: psi_i = ||x_i|| (kx factor)_i
  by_norm.row_scale = cache.norm.data();
  simd::gemm_ab(cache.kx.data(), K, factor_.data(), K, psi.data(), K, n, K, K, false,  // factor is symmetric
                options_.keep_norm ? &by_norm : nullptr);
  return psi;
}

void Nystrom::backward(const Cache& cache, const Eigen::Ref<const MatF>& grad_psi, MatF* grad_x, MatF* grad_w_direct,
                       MatF* grad_factor) const {
  const Eigen::Index m = cache.kx.rows();
  MatF g = grad_psi;
  VecF grad_norm;
  if (options_.keep_norm) {
    // psi_i = ||x_i|| (kx factor)_i
    grad_norm = ((cache.kx * factor_).array() * g.array()).rowwise().sum().matrix();
    g = cache.norm.asDiagonal() * g;
  }
  if (grad_factor) grad_factor->noalias() += cache.kx.transpose() * g;
  MatF da;
  da.noalias() = g * factor_;
  da.array() *= cache.kx.array() / (options_.sigma * options_.sigma);  // d kappa / d dot = kappa / sigma^2
  if (grad_w_direct) grad_w_direct->noalias() += da.transpose() * cache.xhat;
  if (!grad_x) return;
  MatF dxhat;
  dxhat.noalias() = da * anchors_;
  grad_x->resize(m, anchors_.cols());
  for (Eigen::Index i = 0; i < m; ++i) {
    const float nrm = cache.norm[i];
    if (nrm > kNormFloor) {
      // xhat = x / ||x||: project out the radial component.
      const float radial = cache.xhat.row(i).dot(dxhat.row(i));
      grad_x->row(i) = (dxhat.row(i) - radial * cache.xhat.row(i)) / nrm;
    } else {
      grad_x->row(i) = dxhat.row(i) / kNormFloor;
    }
    if (options_.keep_norm && nrm > 0)
      grad_x->row(i) += grad_norm[i] * cache.xhat.row(i) * (nrm > kNormFloor ? 1.0f : nrm / kNormFloor);
  }
}

MatF Nystrom::anchor_gradient(const MatF& grad_w_direct, const MatF& grad_factor) const {
  // factor = f(Kww) with Kww = V diag(lambda) V^T: d factor = V (F o (V^T dKww V)) V^T, F the divided differences
  // of f (Daleckii-Krein); by symmetry the same F maps dL/dfactor back to dL/dKww.
  ensure_eigen();
  const Eigen::Index k = eigval_.size();
  const MatD gsym = 0.5 * (grad_factor.cast<double>() + grad_factor.transpose().cast<double>());
  MatD h = eigvec_.transpose() * gsym * eigvec_;
  const double reg = options_.reg;
  for (Eigen::Index i = 0; i < k; ++i)
    for (Eigen::Index j = 0; j < k; ++j) {
      const double li = eigval_[i], lj = eigval_[j];
      const double scale = std::max({std::fabs(li), std::fabs(lj), 1e-30});
      const double dd = std::fabs(li - lj) > 1e-9 * scale ? (inv_sqrt_reg(li, reg) - inv_sqrt_reg(lj, reg)) / (li - lj)
                                                          : inv_sqrt_reg_prime(0.5 * (li + lj), reg);
      h(i, j) *= dd;
    }
  const MatD dkww = eigvec_ * h * eigvec_.transpose();
  MatF kww = anchors_ * anchors_.transpose();
  gaussian_on_sphere(kww, options_.sigma);
  MatF da = (dkww.cast<float>().array() * kww.array() / (options_.sigma * options_.sigma)).matrix();
  MatF grad = grad_w_direct;
  grad.noalias() += (da + da.transpose()) * anchors_;
  // Anchors live on the sphere (set_anchors normalises them): keep the tangent part, the gradient w.r.t. the raw
  // anchors at unit norm, so that an optimiser step followed by normalisation follows it.
  for (Eigen::Index r = 0; r < grad.rows(); ++r) grad.row(r) -= grad.row(r).dot(anchors_.row(r)) * anchors_.row(r);
  return grad;
}

}  // namespace inductive
