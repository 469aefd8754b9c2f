// GraphiT internals shared by the forward and backward passes: LayerNorm / BatchNorm over packed nodes.
#pragma once

#include <cmath>
#include <vector>

#include "graphit/graphit_attention.h"
#include "graphit/graphit_gemm.h"
#include "inductive/communicator.h"
#include "inductive/graphit.h"

namespace inductive::graphit_detail {

constexpr float kNormEps = 1e-5f;    // PyTorch's LayerNorm / BatchNorm1d default
constexpr float kBnMomentum = 0.1f;  // PyTorch's BatchNorm1d default

// PyTorch's update of BatchNorm's running statistics with a batch's mean and (biased) variance over `count` nodes.
inline void update_running(VecF& running_mean, VecF& running_var, const Eigen::RowVectorXf& mu,
                           const Eigen::RowVectorXf& var, double count) {
  running_mean.array() = (1 - kBnMomentum) * running_mean.array() + kBnMomentum * mu.transpose().array();
  const float unbias = count > 1 ? static_cast<float>(count) / static_cast<float>(count - 1) : 1.0f;
  running_var.array() = (1 - kBnMomentum) * running_var.array() + kBnMomentum * unbias * var.transpose().array();
}

// sum_c f(c) for c < d in 16 partial sums: vectorised, where one running sum would be a serial chain of d adds.
template <typename F>
inline float row_sum(Eigen::Index d, F&& f) {
  float part[16] = {};
  Eigen::Index c = 0;
  for (; c + 16 <= d; c += 16)
    for (int k = 0; k < 16; ++k) part[k] += f(c + k);
  float s = 0;
  for (; c < d; ++c) s += f(c);
  for (int k = 0; k < 16; ++k) s += part[k];
  return s;
}

// ReLU's backward over `count` floats: d = f > 0 ? d : 0. As a select on __restrict pointers, which vectorises; Eigen
// ran the multiply by (f > 0).cast<float>() one float at a time (2.6 % of config (b)'s training step).
inline void relu_backward(float* __restrict d, const float* __restrict f, int64_t count) {
  for (int64_t i = 0; i < count; ++i) d[i] = f[i] > 0.0f ? d[i] : 0.0f;
}

// The per-row loops of the norms, as functions of __restrict rows: with five to seven operands GCC gives up on the
// run-time alias checks that vectorising needs, and ran them one float at a time.
namespace norm_rows {
// x = (y - shift) * scale, out = x w + b (shift and scale per column).
inline void standardise(const float* __restrict y, const float* __restrict shift, const float* __restrict scale,
                        const float* __restrict w, const float* __restrict b, float* __restrict x,
                        float* __restrict out, Eigen::Index d) {
  for (Eigen::Index c = 0; c < d; ++c) {
    x[c] = (y[c] - shift[c]) * scale[c];
    out[c] = x[c] * w[c] + b[c];
  }
}
// x *= scale (per column, or the scalar `s` when scale is null), out = x w + b.
inline void rescale(float* __restrict x, const float* __restrict scale, float s, const float* __restrict w,
                    const float* __restrict b, float* __restrict out, Eigen::Index d) {
  for (Eigen::Index c = 0; c < d; ++c) {
    x[c] *= scale ? scale[c] : s;
    out[c] = x[c] * w[c] + b[c];
  }
}
// x = y - shift, sq += x^2 (double, per column).
inline void centre(const float* __restrict y, const float* __restrict shift, float* __restrict x, double* __restrict sq,
                   Eigen::Index d) {
  for (Eigen::Index c = 0; c < d; ++c) {
    x[c] = y[c] - shift[c];
    sq[c] += static_cast<double>(x[c]) * x[c];
  }
}
// dw += g x, db += g, t = g w (the gradient w.r.t. xhat) times `scale` when given.
inline void affine_grad(const float* __restrict g, const float* __restrict x, const float* __restrict w,
                        const float* __restrict scale, float* __restrict dw, float* __restrict db, float* __restrict t,
                        Eigen::Index d) {
  for (Eigen::Index c = 0; c < d; ++c) {
    dw[c] += g[c] * x[c];
    db[c] += g[c];
    t[c] = scale ? g[c] * w[c] * scale[c] : g[c] * w[c];
  }
}
// dw += g x, db += g, s1 += g w, s2 += g w x (the last two in double, per column).
inline void affine_grad_sums(const float* __restrict g, const float* __restrict x, const float* __restrict w,
                             float* __restrict dw, float* __restrict db, double* __restrict s1, double* __restrict s2,
                             Eigen::Index d) {
  for (Eigen::Index c = 0; c < d; ++c) {
    dw[c] += g[c] * x[c];
    db[c] += g[c];
    const float t = g[c] * w[c];
    s1[c] += static_cast<double>(t);
    s2[c] += static_cast<double>(t) * x[c];
  }
}
// out = (g w - m1 - x m2) rstd, per column.
inline void batch_input_grad(const float* __restrict g, const float* __restrict x, const float* __restrict w,
                             const float* __restrict m1, const float* __restrict m2, const float* __restrict rstd,
                             float* __restrict out, Eigen::Index d) {
  for (Eigen::Index c = 0; c < d; ++c) out[c] = (g[c] * w[c] - m1[c] - x[c] * m2[c]) * rstd[c];
}
}  // namespace norm_rows

// row(i) for each of n rows, in the products' kChunkRows blocks over the threads they would use (graphit_gemm.h).
// For passes whose rows are computed alone, so the bits do not depend on the threads. The norms were the largest
// part of an evaluation pass left on one thread: with only the products and the attention shared, 2 threads
// predicted the browser benchmark's molecules 0.94-1.18x as fast as one (1.17-1.56x with the norms shared too).
template <typename F>
void for_each_row(Eigen::Index n, const F& row) {
  for_each_row_block(n, [&](Eigen::Index r0, Eigen::Index r1) {
    for (Eigen::Index i = r0; i < r1; ++i) row(i);
  });
}

// out = Norm(y) (n x d). LayerNorm: per row. BatchNorm: per column over the real nodes of the batch (training)
// or with the running statistics (evaluation); `running` (training only) is updated as PyTorch does. `comm`
// (training BatchNorm, data parallel): the statistics are those of every rank's nodes (GraphitRunOptions::sync_norm).
//
// Each variant reads y and writes xhat and out in as few passes over the n x d matrices as its statistics allow
// (LayerNorm and evaluation BatchNorm: one; training BatchNorm: three, as its column statistics need two reductions
// before any output): at ZINC's batch sizes the matrices live in L3, and the pass count, not arithmetic, set the cost.
// The norms whose rows are computed alone: LayerNorm, and BatchNorm in evaluation (running statistics). First
// norm_rows_prepare sizes xhat, rstd and `out` for n x d (and sets evaluation BatchNorm's per-column rstd from
// `eval_var`); then norm_forward_rows computes any rows [r0, r1), on any thread (each row the same operations
// whatever the range, so the bits do not depend on how the rows are split). xhat and rstd are a GraphitCache::Norm's,
// apart so that an inference pass can share one xhat between its layers (GraphitRunOptions::keep_layers).
inline void norm_rows_prepare(bool batch_norm, Eigen::Index n, Eigen::Index d, MatF& xhat, VecF& rstd, MatF& out,
                              const VecF* eval_var) {
  xhat.resize(n, d);
  out.resize(n, d);
  if (!batch_norm)
    rstd.resize(n);
  else
    rstd = (eval_var->array() + kNormEps).rsqrt();
}
inline void norm_forward_rows(bool batch_norm, const MatF& y, const VecF& weight, const VecF& bias, MatF& xhat,
                              VecF& rstd_out, MatF& out, const VecF* eval_mean, Eigen::Index r0, Eigen::Index r1) {
  const Eigen::Index d = y.cols();
  const float* w = weight.data();
  const float* b = bias.data();
  const auto row = [d](auto& m, Eigen::Index i) { return m.data() + i * d; };
  for (Eigen::Index i = r0; i < r1; ++i) {
    if (batch_norm) {
      norm_rows::standardise(row(y, i), eval_mean->data(), rstd_out.data(), w, b, row(xhat, i), row(out, i), d);
      continue;
    }
    const float* yi = row(y, i);
    float* xi = row(xhat, i);
    const float mu = row_sum(d, [&](Eigen::Index c) { return yi[c]; }) / static_cast<float>(d);
    for (Eigen::Index c = 0; c < d; ++c) xi[c] = yi[c] - mu;
    const float sq = row_sum(d, [&](Eigen::Index c) { return xi[c] * xi[c]; });
    const float rstd = 1.0f / std::sqrt(sq / static_cast<float>(d) + kNormEps);
    rstd_out[i] = rstd;
    norm_rows::rescale(xi, nullptr, rstd, w, b, row(out, i), d);
  }
}

inline void norm_forward(bool batch_norm, bool training, const MatF& y, const VecF& weight, const VecF& bias,
                         GraphitCache::Norm& cache, MatF& out, VecF* running_mean, VecF* running_var,
                         const VecF* eval_mean, const VecF* eval_var, Communicator* comm) {
  const Eigen::Index n = y.rows(), d = y.cols();
  if (!batch_norm || !training) {
    norm_rows_prepare(batch_norm, n, d, cache.xhat, cache.rstd, out, eval_var);
    for_each_row_block(n, [&](Eigen::Index r0, Eigen::Index r1) {
      norm_forward_rows(batch_norm, y, weight, bias, cache.xhat, cache.rstd, out, eval_mean, r0, r1);
    });
    return;
  }
  cache.xhat.resize(n, d);
  out.resize(n, d);
  const float* w = weight.data();
  const float* b = bias.data();
  const auto row = [d](auto& m, Eigen::Index i) { return m.data() + i * d; };
  // Statistics in double: column sums, then the centred squares (two passes), over this process's nodes or, with
  // `comm`, every rank's. Double sums of floats taken in another order (ranks) differ far below a float's
  // precision, so N ranks and one process nearly always round them to the same floats.
  std::vector<double> s(static_cast<size_t>(d) + 1, 0.0);
  for (Eigen::Index i = 0; i < n; ++i) {
    const float* yi = row(y, i);
    for (Eigen::Index c = 0; c < d; ++c) s[c] += static_cast<double>(yi[c]);
  }
  s[d] = static_cast<double>(n);
  if (comm) comm->allreduce_sum(s.data(), static_cast<int>(d) + 1);
  const double count = s[d];
  Eigen::RowVectorXf mu(d), var(d);
  for (Eigen::Index c = 0; c < d; ++c) mu[c] = static_cast<float>(s[c] / count);
  std::fill(s.begin(), s.begin() + d, 0.0);
  for (Eigen::Index i = 0; i < n; ++i) norm_rows::centre(row(y, i), mu.data(), row(cache.xhat, i), s.data(), d);
  if (comm) comm->allreduce_sum(s.data(), static_cast<int>(d));
  for (Eigen::Index c = 0; c < d; ++c) var[c] = static_cast<float>(s[c] / count);
  cache.count = count;
  cache.rstd = (var.array() + kNormEps).rsqrt().transpose();
  if (running_mean) update_running(*running_mean, *running_var, mu, var, count);
  for_each_row(
      n, [&](Eigen::Index i) { norm_rows::rescale(row(cache.xhat, i), cache.rstd.data(), 0, w, b, row(out, i), d); });
}

// Given d_out, accumulates d_weight/d_bias and writes d_y (a matrix other than d_out). `comm`: as norm_forward's.
// One pass over the matrices (LayerNorm, evaluation BatchNorm) or two (training BatchNorm: its statistics' gradient
// sums come first), as norm_forward.
inline void norm_backward(bool batch_norm, bool training, const GraphitCache::Norm& cache, const VecF& weight,
                          const MatF& d_out, MatF& d_y, VecF& d_weight, VecF& d_bias, Communicator* comm) {
  const Eigen::Index n = d_out.rows(), d = d_out.cols();
  d_y.resize(n, d);
  const float* w = weight.data();
  const auto row = [d](auto& m, Eigen::Index i) { return m.data() + i * d; };
  if (!batch_norm) {
    for (Eigen::Index i = 0; i < n; ++i) {
      const float* xi = row(cache.xhat, i);
      float* ti = row(d_y, i);
      norm_rows::affine_grad(row(d_out, i), xi, w, nullptr, d_weight.data(), d_bias.data(), ti, d);
      const float m1 = row_sum(d, [&](Eigen::Index c) { return ti[c]; }) / static_cast<float>(d);
      const float m2 = row_sum(d, [&](Eigen::Index c) { return ti[c] * xi[c]; }) / static_cast<float>(d);
      const float rstd = cache.rstd[i];
      for (Eigen::Index c = 0; c < d; ++c) ti[c] = rstd * (ti[c] - m1 - xi[c] * m2);
    }
    return;
  }
  if (!training) {
    for (Eigen::Index i = 0; i < n; ++i)
      norm_rows::affine_grad(row(d_out, i), row(cache.xhat, i), w, cache.rstd.data(), d_weight.data(), d_bias.data(),
                             row(d_y, i), d);
    return;
  }
  // The statistics' gradient sums, in double, over the nodes the statistics were taken over (norm_forward).
  std::vector<double> s(2 * static_cast<size_t>(d), 0.0);
  for (Eigen::Index i = 0; i < n; ++i)
    norm_rows::affine_grad_sums(row(d_out, i), row(cache.xhat, i), w, d_weight.data(), d_bias.data(), s.data(),
                                s.data() + d, d);
  if (comm) comm->allreduce_sum(s.data(), 2 * static_cast<int>(d));
  Eigen::RowVectorXf m1(d), m2(d);
  for (Eigen::Index c = 0; c < d; ++c) {
    m1[c] = static_cast<float>(s[c] / cache.count);
    m2[c] = static_cast<float>(s[d + c] / cache.count);
  }
  for_each_row(n, [&](Eigen::Index i) {
    norm_rows::batch_input_grad(row(d_out, i), row(cache.xhat, i), w, m1.data(), m2.data(), cache.rstd.data(),
                                row(d_y, i), d);
  });
}

// The row-local half of norm_backward (LayerNorm, evaluation BatchNorm): d_y's rows [r0, r1) from d_out's, without
// the weight and bias gradients, which norm_backward_sums adds afterwards over every row in order. Each value is the
// one norm_backward computes.
inline void norm_backward_rows(bool batch_norm, const GraphitCache::Norm& cache, const VecF& weight, const MatF& d_out,
                               MatF& d_y, Eigen::Index r0, Eigen::Index r1) {
  const Eigen::Index d = d_out.cols();
  const float* w = weight.data();
  const auto row = [d](auto& m, Eigen::Index i) { return m.data() + i * d; };
  for (Eigen::Index i = r0; i < r1; ++i) {
    const float* g = row(d_out, i);
    const float* xi = row(cache.xhat, i);
    float* ti = row(d_y, i);
    if (batch_norm) {
      for (Eigen::Index c = 0; c < d; ++c) ti[c] = g[c] * w[c] * cache.rstd[c];
      continue;
    }
    for (Eigen::Index c = 0; c < d; ++c) ti[c] = g[c] * w[c];
    const float m1 = row_sum(d, [&](Eigen::Index c) { return ti[c]; }) / static_cast<float>(d);
    const float m2 = row_sum(d, [&](Eigen::Index c) { return ti[c] * xi[c]; }) / static_cast<float>(d);
    const float rstd = cache.rstd[i];
    for (Eigen::Index c = 0; c < d; ++c) ti[c] = rstd * (ti[c] - m1 - xi[c] * m2);
  }
}
// The other half: d_weight += sum_i d_out_i o xhat_i and d_bias += sum_i d_out_i, row by row in order (the sums
// norm_backward takes).
inline void norm_backward_sums(const GraphitCache::Norm& cache, const MatF& d_out, VecF& d_weight, VecF& d_bias) {
  const Eigen::Index n = d_out.rows(), d = d_out.cols();
  float* __restrict dw = d_weight.data();
  float* __restrict db = d_bias.data();
  for (Eigen::Index i = 0; i < n; ++i) {
    const float* __restrict g = d_out.data() + i * d;
    const float* __restrict x = cache.xhat.data() + i * d;
    for (Eigen::Index c = 0; c < d; ++c) {
      dw[c] += g[c] * x[c];
      db[c] += g[c];
    }
  }
}

// A batch cut into chunks of whole graphs of about `rows` rows each: chunk k holds graphs [first[k], first[k + 1]).
// The passes whose rows or graphs are computed alone deal such chunks to the threads, each chunk through every
// layer on one thread (GraphitModel::forward and backward).
inline std::vector<int> graph_chunks(const std::vector<int>& offsets, int rows) {
  const int graphs = static_cast<int>(offsets.size()) - 1;
  std::vector<int> first{0};
  for (int g = 0; g < graphs; ++g)
    if (offsets[g + 1] - offsets[first.back()] >= rows || g + 1 == graphs) first.push_back(g + 1);
  return first;
}
constexpr int kGraphChunkRows = 64;

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
