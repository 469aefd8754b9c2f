// GraphiT internals shared by the forward and backward passes: LayerNorm / BatchNorm over packed nodes.
#pragma once

#include <cmath>

#include "inductive/graphit.h"

namespace inductive::graphit_detail {

constexpr float kNormEps = 1e-5f;      // PyTorch's LayerNorm / BatchNorm1d default
constexpr float kBnMomentum = 0.1f;    // PyTorch's BatchNorm1d default
constexpr float kRowSumFloor = 1e-6f;  // the reference's clamp(min=1e-6) of the attention row sums

// out = Norm(y) (n x d). LayerNorm: per row. BatchNorm: per column over the real nodes of the batch (training)
// or with the running statistics (evaluation); `running` (training only) is updated as PyTorch does.
inline void norm_forward(bool batch_norm, bool training, const MatF& y, const VecF& weight, const VecF& bias,
                         GraphitCache::Norm& cache, MatF& out, VecF* running_mean, VecF* running_var,
                         const VecF* eval_mean, const VecF* eval_var) {
  const Eigen::Index n = y.rows(), d = y.cols();
  cache.xhat.resize(n, d);
  if (!batch_norm) {
    cache.rstd.resize(n);
    for (Eigen::Index i = 0; i < n; ++i) {
      const float mu = y.row(i).mean();
      cache.xhat.row(i) = y.row(i).array() - mu;
      const float var = cache.xhat.row(i).squaredNorm() / static_cast<float>(d);
      const float rstd = 1.0f / std::sqrt(var + kNormEps);
      cache.rstd[i] = rstd;
      cache.xhat.row(i) *= rstd;
    }
  } else if (training) {
    const Eigen::RowVectorXf mu = y.colwise().mean();
    cache.xhat = y.rowwise() - mu;
    const Eigen::RowVectorXf var = cache.xhat.colwise().squaredNorm() / static_cast<float>(n);
    cache.rstd = (var.array() + kNormEps).rsqrt().transpose();
    cache.xhat.array().rowwise() *= cache.rstd.transpose().array();
    if (running_mean) {
      running_mean->array() = (1 - kBnMomentum) * running_mean->array() + kBnMomentum * mu.transpose().array();
      const float unbias = n > 1 ? static_cast<float>(n) / static_cast<float>(n - 1) : 1.0f;
      running_var->array() = (1 - kBnMomentum) * running_var->array() + kBnMomentum * unbias * var.transpose().array();
    }
  } else {
    cache.rstd = (eval_var->array() + kNormEps).rsqrt();
    cache.xhat = y.rowwise() - eval_mean->transpose();
    cache.xhat.array().rowwise() *= cache.rstd.transpose().array();
  }
  out = cache.xhat;
  out.array().rowwise() *= weight.transpose().array();
  out.rowwise() += bias.transpose();
}

// Given d_out, accumulates d_weight/d_bias and writes d_y (a matrix other than d_out).
inline void norm_backward(bool batch_norm, bool training, const GraphitCache::Norm& cache, const VecF& weight,
                          const MatF& d_out, MatF& d_y, VecF& d_weight, VecF& d_bias) {
  const Eigen::Index n = d_out.rows(), d = d_out.cols();
  d_weight += (d_out.array() * cache.xhat.array()).colwise().sum().transpose().matrix();
  d_bias += d_out.colwise().sum().transpose();
  d_y = d_out;
  d_y.array().rowwise() *= weight.transpose().array();  // d xhat
  if (!batch_norm) {
    for (Eigen::Index i = 0; i < n; ++i) {
      const float m1 = d_y.row(i).mean();
      const float m2 = d_y.row(i).dot(cache.xhat.row(i)) / static_cast<float>(d);
      d_y.row(i) = cache.rstd[i] * (d_y.row(i).array() - m1 - cache.xhat.row(i).array() * m2);
    }
  } else if (training) {
    const Eigen::RowVectorXf m1 = d_y.colwise().mean();
    const Eigen::RowVectorXf m2 = (d_y.array() * cache.xhat.array()).colwise().sum() / static_cast<float>(n);
    d_y = d_y.rowwise() - m1;
    d_y.array() -= cache.xhat.array().rowwise() * m2.array();
    d_y.array().rowwise() *= cache.rstd.transpose().array();
  } else {
    d_y.array().rowwise() *= cache.rstd.transpose().array();
  }
}

}  // namespace inductive::graphit_detail
