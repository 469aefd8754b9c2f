// GraphiT internals shared by the forward and backward passes: LayerNorm / BatchNorm over packed nodes.
#pragma once

#include <cmath>
#include <vector>

#include "inductive/communicator.h"
#include "inductive/graphit.h"

namespace inductive::graphit_detail {

constexpr float kNormEps = 1e-5f;      // PyTorch's LayerNorm / BatchNorm1d default
constexpr float kBnMomentum = 0.1f;    // PyTorch's BatchNorm1d default
constexpr float kRowSumFloor = 1e-6f;  // the reference's clamp(min=1e-6) of the attention row sums

// PyTorch's update of BatchNorm's running statistics with a batch's mean and (biased) variance over `count` nodes.
inline void update_running(VecF& running_mean, VecF& running_var, const Eigen::RowVectorXf& mu,
                           const Eigen::RowVectorXf& var, double count) {
  running_mean.array() = (1 - kBnMomentum) * running_mean.array() + kBnMomentum * mu.transpose().array();
  const float unbias = count > 1 ? static_cast<float>(count) / static_cast<float>(count - 1) : 1.0f;
  running_var.array() = (1 - kBnMomentum) * running_var.array() + kBnMomentum * unbias * var.transpose().array();
}

// out = Norm(y) (n x d). LayerNorm: per row. BatchNorm: per column over the real nodes of the batch (training)
// or with the running statistics (evaluation); `running` (training only) is updated as PyTorch does. `comm`
// (training BatchNorm, data parallel): the statistics are those of every rank's nodes (GraphitRunOptions::sync_norm).
inline void norm_forward(bool batch_norm, bool training, const MatF& y, const VecF& weight, const VecF& bias,
                         GraphitCache::Norm& cache, MatF& out, VecF* running_mean, VecF* running_var,
                         const VecF* eval_mean, const VecF* eval_var, Communicator* comm) {
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
    // Statistics in double: column sums, then the centred squares (two passes), over this process's nodes or, with
    // `comm`, every rank's. Double sums of floats taken in another order (ranks) differ far below a float's
    // precision, so N ranks and one process nearly always round them to the same floats.
    Eigen::RowVectorXd s(d + 1);
    s.head(d) = y.cast<double>().colwise().sum();
    s[d] = static_cast<double>(n);
    if (comm) comm->allreduce_sum(s.data(), d + 1);
    const double count = s[d];
    const Eigen::RowVectorXf mu = (s.head(d) / count).cast<float>();
    cache.xhat = y.rowwise() - mu;
    s.head(d) = cache.xhat.cast<double>().colwise().squaredNorm();
    if (comm) comm->allreduce_sum(s.data(), d);
    const Eigen::RowVectorXf var = (s.head(d) / count).cast<float>();
    cache.count = count;
    cache.rstd = (var.array() + kNormEps).rsqrt().transpose();
    cache.xhat.array().rowwise() *= cache.rstd.transpose().array();
    if (running_mean) update_running(*running_mean, *running_var, mu, var, count);
  } else {
    cache.rstd = (eval_var->array() + kNormEps).rsqrt();
    cache.xhat = y.rowwise() - eval_mean->transpose();
    cache.xhat.array().rowwise() *= cache.rstd.transpose().array();
  }
  out = cache.xhat;
  out.array().rowwise() *= weight.transpose().array();
  out.rowwise() += bias.transpose();
}

// Given d_out, accumulates d_weight/d_bias and writes d_y (a matrix other than d_out). `comm`: as norm_forward's.
inline void norm_backward(bool batch_norm, bool training, const GraphitCache::Norm& cache, const VecF& weight,
                          const MatF& d_out, MatF& d_y, VecF& d_weight, VecF& d_bias, Communicator* comm) {
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
    // The statistics' gradient sums, in double, over the nodes the statistics were taken over (norm_forward).
    Eigen::RowVectorXd s(2 * d);
    s.head(d) = d_y.cast<double>().colwise().sum();
    s.tail(d) = (d_y.cast<double>().array() * cache.xhat.cast<double>().array()).colwise().sum();
    if (comm) comm->allreduce_sum(s.data(), 2 * d);
    const Eigen::RowVectorXf m1 = (s.head(d) / cache.count).cast<float>();
    const Eigen::RowVectorXf m2 = (s.tail(d) / cache.count).cast<float>();
    d_y = d_y.rowwise() - m1;
    d_y.array() -= cache.xhat.array().rowwise() * m2.array();
    d_y.array().rowwise() *= cache.rstd.transpose().array();
  } else {
    d_y.array().rowwise() *= cache.rstd.transpose().array();
  }
}

// What norm_forward and norm_backward all-reduce, made by a rank without nodes: the same calls, zeros.
// The batch's statistics still come back, and update the running ones as on the ranks with nodes.
inline void norm_forward_idle(Communicator& comm, int d, VecF* running_mean, VecF* running_var) {
  Eigen::RowVectorXd s = Eigen::RowVectorXd::Zero(d + 1);
  comm.allreduce_sum(s.data(), d + 1);
  const double count = s[d];
  const Eigen::RowVectorXf mu = (s.head(d) / count).cast<float>();
  s.setZero();
  comm.allreduce_sum(s.data(), d);
  const Eigen::RowVectorXf var = (s.head(d) / count).cast<float>();
  if (running_mean) update_running(*running_mean, *running_var, mu, var, count);
}
inline void norm_backward_idle(Communicator& comm, int d) {
  std::vector<double> s(2 * static_cast<size_t>(d), 0.0);
  comm.allreduce_sum(s.data(), 2 * d);
}

}  // namespace inductive::graphit_detail
