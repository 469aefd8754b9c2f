// inductive/nystrom.h - Nystrom embedding of the Gaussian kernel on the sphere (thesis ch. 2, §1.2; CKN).
//
// For anchors w_1..w_K (unit rows of W, K x d) and kappa(u) = exp((u - 1) / sigma^2), the Gaussian kernel between
// unit vectors, a local feature x is embedded as
//     psi(x) = kappa(W W^T)^{-1/2} kappa(W xhat),      xhat = x / max(||x||, 1e-2)
// so that <psi(x), psi(y)> is the projection of kappa(xhat, yhat) onto the span of the anchors. The inverse square
// root is V diag(1 / (sqrt(max(lambda, 0)) + reg)) V^T from one symmetric eigendecomposition (reg = 1e-2 as in the
// public OTK/CKN code: it bounds the factor when anchors are close to each other and keeps its gradient finite).
// With `keep_norm`, psi is multiplied by ||x|| (the "norm-preserving" variant).
//
// Gradients w.r.t. the inputs and the anchors are exact (Daleckii-Krein formula for the matrix function), checked by
// finite differences in tests/core/otke/nystrom_test.cpp.
#pragma once

#include "inductive/linalg.h"

namespace inductive {

struct NystromOptions {
  float sigma = 0.6f;  // Gaussian bandwidth on unit vectors (thesis: 0.6 unsupervised, 0.5 supervised)
  float reg = 1e-2f;   // added to sqrt(eigenvalue) before inverting
  bool keep_norm = false;
  void validate() const;
};

class Nystrom {
 public:
  Nystrom() = default;
  // anchors: K x d; rows are normalised here. Throws on empty/non-finite anchors.
  Nystrom(MatF anchors, NystromOptions options);

  int num_anchors() const { return static_cast<int>(anchors_.rows()); }
  int dim() const { return static_cast<int>(anchors_.cols()); }
  const MatF& anchors() const { return anchors_; }
  const MatF& factor() const { return factor_; }  // kappa(W W^T)^{-1/2}, K x K symmetric
  const NystromOptions& options() const { return options_; }

  // Replaces the anchors (e.g. after an optimiser step): normalises rows, recomputes the factor.
  void set_anchors(MatF anchors);
  // Restores anchors and factor stored in a model file as they are (no renormalisation, no recomputation), so a
  // loaded model embeds bit-identically to the one that was saved, in every build.
  static Nystrom from_stored(MatF anchors, MatF factor, NystromOptions options);

  // psi for m rows of x (m x d) -> m x K.
  MatF forward(const Eigen::Ref<const MatF>& x) const;

  // What backward needs from forward, per call.
  struct Cache {
    MatF xhat;  // m x d
    VecF norm;  // m (||x|| before flooring)
    MatF kx;    // kappa(xhat W^T), m x K
  };
  MatF forward(const Eigen::Ref<const MatF>& x, Cache& cache) const;

  // Given dL/dpsi (m x K): returns dL/dx (m x d) when `grad_x` is non-null, and accumulates dL/dkx^T-part of the
  // anchor gradient into `grad_w_direct` (K x d) and dL/dfactor into `grad_factor` (K x K) when non-null.
  // Finish the anchor gradient once per step with anchor_gradient() (the factor part needs one eigendecomposition).
  void backward(const Cache& cache, const Eigen::Ref<const MatF>& grad_psi, MatF* grad_x, MatF* grad_w_direct,
                MatF* grad_factor) const;
  // dL/dW = grad_w_direct + (the factor's contribution through kappa(W W^T)), projected on the sphere's tangent
  // space: the gradient w.r.t. raw anchors that set_anchors() normalises, taken at the current (unit) anchors.
  MatF anchor_gradient(const MatF& grad_w_direct, const MatF& grad_factor) const;

 private:
  void update_factor();
  void ensure_eigen() const;
  MatF anchors_;
  MatF factor_;
  NystromOptions options_;
  // Eigendecomposition of kappa(W W^T), for the gradient of the factor (computed lazily after from_stored).
  mutable MatD eigvec_;
  mutable Eigen::VectorXd eigval_;
};

// kappa(u) = exp((u - 1) / sigma^2), elementwise in place.
void gaussian_on_sphere(MatF& dots, float sigma);

}  // namespace inductive
