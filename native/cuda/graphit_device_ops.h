// native/cuda/graphit_device_ops.h - GraphiT's forward and backward maths as per-item functors, written once for the
// CUDA kernels and for the CPU executor that tests them (graphit_device_pass.h).
//
// Each functor computes the outputs of one item (a node row of one head, a node row, a column, a graph, an element)
// and writes nothing another item writes, so it is race-free on the device without atomics and runs unchanged as a
// plain loop on the host. The matrix products around them are GEMMs (cuBLAS on the device). The equations are
// core's (inductive/graphit.h and graphit_backward.cpp): the same expressions in the same order per item, so the
// device and the CPU model differ only in the rounding of sums taken in another order (exp is expf, not xsimd's).
//
// Layouts (packed batch, as GraphitBatch): node rows i < N grouped by graph; `graph_of[i]` its graph, `offsets`
// (B + 1) the first row of each; per graph and head an n x n block of probabilities at H sq_off[g] + h n n (row
// r, column j); kernels one n x n block per graph at sq_off[g]; floored/argmax at offsets[g] H + h n + r.
#pragma once

#include <cmath>
#include <cstdint>

#include "inductive/elementwise.h"

namespace inductive::graphit_ops {

constexpr float kRowSumFloor = 1e-6f;  // the reference's clamp(min=1e-6) of the attention row sums
constexpr float kNormEps = 1e-5f;      // LayerNorm / BatchNorm1d eps
constexpr float kBnMomentum = 0.1f;    // BatchNorm1d momentum

// A row-major matrix operand of a GEMM: op(A) = A or A^T, `ld` its row stride.
struct MatOperand {
  const float* data;
  int ld;
  bool transposed = false;
};

// Where node i's graph lies: n nodes from row o, its row r = i - o, its attention blocks.
struct GraphRows {
  int g, o, n, r;
  int64_t sq;  // sq_off[g]
};
INDUCTIVE_HD GraphRows graph_rows(const int32_t* graph_of, const int32_t* offsets, const int64_t* sq_off, int i) {
  const int g = graph_of[i];
  const int o = offsets[g];
  return {g, o, offsets[g + 1] - o, i - o, sq_off[g]};
}

// The item of the attention functors: node i's row in head h (item t = i * heads + h). block: where the head's n x n
// block of the graph's attention starts; row: this node's row in it; flag: the index of its floor flag and argmax.
struct HeadRow {
  int i, h;
  GraphRows gr;
  int64_t block, row, flag;
};
INDUCTIVE_HD HeadRow head_row(int64_t t, int heads_n, const int32_t* graph_of, const int32_t* offsets,
                              const int64_t* sq_off) {
  const int i = static_cast<int>(t / heads_n), h = static_cast<int>(t % heads_n);
  const GraphRows gr = graph_rows(graph_of, offsets, sq_off, i);
  const int64_t n = gr.n;
  const int64_t block = heads_n * gr.sq + h * n * n;
  return {i, h, gr, block, block + gr.r * n, static_cast<int64_t>(gr.o) * heads_n + h * n + gr.r};
}

// Where head h's dh columns of node `node` start in a node-major matrix of width d (q, v, the heads' outputs).
INDUCTIVE_HD int64_t head_cols(int node, int h, int d, int dh) { return static_cast<int64_t>(node) * d + h * dh; }

// ---- input embedding ---------------------------------------------------------------------------------------------

// x[i, c] = E[label_i, c] (or 0) + pe_bias[c] + path_bias[c]; the GEMMs add the linear terms.
struct EmbedInit {
  float* x;
  const int32_t* labels;  // null without a vocabulary
  const float *embedding, *pe_bias, *path_bias;
  int d;
  INDUCTIVE_HD void operator()(int64_t t) const {
    const int64_t i = t / d, c = t % d;
    float v = labels ? embedding[static_cast<int64_t>(labels[i]) * d + c] : 0.0f;
    if (pe_bias) v += pe_bias[c];
    if (path_bias) v += path_bias[c];
    x[t] = v;
  }
};

// ---- attention -----------------------------------------------------------------------------------------------------

// One node row of one head: scores S_r. = q_r Q^T scale, A = exp(S - max) ⊙ K / max(rowsum, floor), the floor flag and
// the argmax, then heads_r = (A ⊙ M)_r V (M = dropout multipliers, or 1).
struct AttentionForwardRow {
  const float *q, *v, *kernel, *drop;  // kernel, drop: null when absent
  const int32_t *graph_of, *offsets;
  const int64_t* sq_off;
  float* probs;
  float* heads;
  uint8_t* floored;
  int32_t* argmax;
  int heads_n, dh, d;
  float scale;
  INDUCTIVE_HD void operator()(int64_t t) const {
    const HeadRow hr = head_row(t, heads_n, graph_of, offsets, sq_off);
    const GraphRows& gr = hr.gr;
    const int n = gr.n, h = hr.h;
    float* a = probs + hr.row;
    const float* qi = q + head_cols(hr.i, h, d, dh);
    float m = -INFINITY;
    for (int j = 0; j < n; ++j) {
      const float* qj = q + head_cols(gr.o + j, h, d, dh);
      float s = 0.0f;
      for (int k = 0; k < dh; ++k) s += qi[k] * (scale * qj[k]);
      a[j] = s;
      m = fmaxf(m, s);
    }
    // The row max of S (first of equals); a NaN row has none and takes column 0.
    int am = 0;
    for (int j = 0; j < n; ++j)
      if (a[j] == m) {
        am = j;
        break;
      }
    const float* kr = kernel ? kernel + gr.sq + static_cast<int64_t>(gr.r) * n : nullptr;
    float sum = 0.0f;
    for (int j = 0; j < n; ++j) {
      float e = expf(a[j] - m);
      if (kr) e *= kr[j];
      a[j] = e;
      sum += e;
    }
    const bool is_floored = !(sum > kRowSumFloor);
    floored[hr.flag] = is_floored;
    argmax[hr.flag] = am;
    const float inv = 1.0f / (is_floored ? kRowSumFloor : sum);
    for (int j = 0; j < n; ++j) a[j] *= inv;
    const float* mr = drop ? drop + hr.row : nullptr;
    float* out = heads + head_cols(hr.i, h, d, dh);
    for (int k = 0; k < dh; ++k) out[k] = 0.0f;
    for (int j = 0; j < n; ++j) {
      const float w = mr ? a[j] * mr[j] : a[j];
      const float* vj = v + head_cols(gr.o + j, h, d, dh);
      for (int k = 0; k < dh; ++k) out[k] += w * vj[k];
    }
  }
};

// Backward, first half, one node row of one head: dA_r = (dO_r V^T) ⊙ M_r, sigma = dA_r . A_r, and the row of dS
// (times `scale`) into ds (the probabilities' layout); the floor's case sends sigma to the row's argmax.
struct AttentionBackwardScores {
  const float *v, *probs, *drop, *d_heads;
  const uint8_t* floored;
  const int32_t *argmax, *graph_of, *offsets;
  const int64_t* sq_off;
  float* ds;
  int heads_n, dh, d;
  float scale;
  INDUCTIVE_HD void operator()(int64_t t) const {
    const HeadRow hr = head_row(t, heads_n, graph_of, offsets, sq_off);
    const int n = hr.gr.n, h = hr.h;
    const float* a = probs + hr.row;
    const float* mr = drop ? drop + hr.row : nullptr;
    float* out = ds + hr.row;
    const float* doi = d_heads + head_cols(hr.i, h, d, dh);
    float sigma = 0.0f;
    for (int j = 0; j < n; ++j) {
      const float* vj = v + head_cols(hr.gr.o + j, h, d, dh);
      float s = 0.0f;
      for (int k = 0; k < dh; ++k) s += doi[k] * vj[k];
      if (mr) s *= mr[j];
      out[j] = s;
      sigma += s * a[j];
    }
    if (!floored[hr.flag]) {
      for (int j = 0; j < n; ++j) out[j] = scale * ((out[j] - sigma) * a[j]);
    } else {
      for (int j = 0; j < n; ++j) out[j] = scale * (out[j] * a[j]);
      out[argmax[hr.flag]] -= scale * sigma;
    }
  }
};

// Backward, second half, one node row of one head: dQ_r = (dS + dS^T)_r Q (queries are keys) and
// dV_r = sum_j (A ⊙ M)_jr dO_j.
struct AttentionBackwardRows {
  const float *q, *probs, *drop, *d_heads, *ds;
  const int32_t *graph_of, *offsets;
  const int64_t* sq_off;
  float *dq, *dv;
  int heads_n, dh, d;
  INDUCTIVE_HD void operator()(int64_t t) const {
    const HeadRow hr = head_row(t, heads_n, graph_of, offsets, sq_off);
    const int n = hr.gr.n, r = hr.gr.r, h = hr.h;
    float* oq = dq + head_cols(hr.i, h, d, dh);
    float* ov = dv + head_cols(hr.i, h, d, dh);
    for (int k = 0; k < dh; ++k) oq[k] = ov[k] = 0.0f;
    for (int j = 0; j < n; ++j) {
      const int64_t jr = hr.block + static_cast<int64_t>(j) * n + r;
      const float s = ds[hr.row + j] + ds[jr];
      const float w = drop ? probs[jr] * drop[jr] : probs[jr];
      const float* qj = q + head_cols(hr.gr.o + j, h, d, dh);
      const float* gj = d_heads + head_cols(hr.gr.o + j, h, d, dh);
      for (int k = 0; k < dh; ++k) {
        oq[k] += s * qj[k];
        ov[k] += w * gj[k];
      }
    }
  }
};

// ---- elementwise ---------------------------------------------------------------------------------------------------

// y[i, c] = (y + bias[c]) * scale[i] (* drop[i, c]) + x[i, c]: the out-projection's bias, degree scaling, dropout and
// residual (scale null: 1).
struct BiasScaleResidual {
  float* y;
  const float *bias, *scale, *drop, *x;
  int d;
  INDUCTIVE_HD void operator()(int64_t t) const {
    float v = y[t] + bias[t % d];
    if (scale) v *= scale[t / d];
    if (drop) v *= drop[t];
    y[t] = v + x[t];
  }
};

// y[i, c] = max(y + bias[c], 0).
struct BiasRelu {
  float* y;
  const float* bias;
  int d;
  INDUCTIVE_HD void operator()(int64_t t) const { y[t] = fmaxf(y[t] + bias[t % d], 0.0f); }
};

// y[i, c] += bias[c].
struct BiasAdd {
  float* y;
  const float* bias;
  int d;
  INDUCTIVE_HD void operator()(int64_t t) const { y[t] += bias[t % d]; }
};

// out = a ⊙ b.
struct Multiply {
  float* out;
  const float *a, *b;
  INDUCTIVE_HD void operator()(int64_t t) const { out[t] = a[t] * b[t]; }
};

// g *= m1 (when given) * m2[row] (when given) * [ref > 0] (when given): dropout, degree scaling and ReLU gates.
struct GradGate {
  float* g;
  const float *m1, *row_scale, *relu_of;
  int d;
  INDUCTIVE_HD void operator()(int64_t t) const {
    float v = g[t];
    if (m1) v *= m1[t];
    if (row_scale) v *= row_scale[t / d];
    if (relu_of) v *= relu_of[t] > 0.0f ? 1.0f : 0.0f;
    g[t] = v;
  }
};

// dst = src.
struct Copy {
  float* dst;
  const float* src;
  INDUCTIVE_HD void operator()(int64_t t) const { dst[t] = src[t]; }
};

// dst[c] += sum_r src[r, c] over `rows` rows (a bias gradient), one column per item.
struct ColumnSumAdd {
  float* dst;
  const float* src;
  int64_t rows;
  int cols;
  INDUCTIVE_HD void operator()(int64_t c) const {
    float s = 0.0f;
    for (int64_t r = 0; r < rows; ++r) s += src[r * cols + c];
    dst[c] += s;
  }
};

// The embedding's gradient, one column per item: E[label_i, c] += dx[i, c] for every node (nodes sharing a label add
// into the same row, so a column, not a node, is the item).
struct EmbeddingGrad {
  float* d_embedding;
  const float* dx;
  const int32_t* labels;
  int64_t nodes;
  int d;
  INDUCTIVE_HD void operator()(int64_t c) const {
    for (int64_t i = 0; i < nodes; ++i) d_embedding[static_cast<int64_t>(labels[i]) * d + c] += dx[i * d + c];
  }
};

// ---- norms ---------------------------------------------------------------------------------------------------------

// LayerNorm, one row: xhat = (y - mean) rstd, out = xhat w + b.
struct LayerNormRow {
  const float *y, *w, *b;
  float *xhat, *out, *rstd;
  int d;
  INDUCTIVE_HD void operator()(int64_t i) const {
    const float* yi = y + i * d;
    float* xi = xhat + i * d;
    float mu = 0.0f;
    for (int c = 0; c < d; ++c) mu += yi[c];
    mu /= static_cast<float>(d);
    float sq = 0.0f;
    for (int c = 0; c < d; ++c) {
      xi[c] = yi[c] - mu;
      sq += xi[c] * xi[c];
    }
    const float rs = 1.0f / sqrtf(sq / static_cast<float>(d) + kNormEps);
    rstd[i] = rs;
    for (int c = 0; c < d; ++c) {
      xi[c] *= rs;
      out[i * d + c] = xi[c] * w[c] + b[c];
    }
  }
};

// Dropout multipliers, one element: position first + i of the mask stream (inductive/graphit.h,
// graphit_dropout_mask), so the device draws the CPU's masks without a generator's state.
struct DropoutMask {
  float* mask;
  uint64_t stream;
  int64_t first;
  float p, keep;
  INDUCTIVE_HD void operator()(int64_t i) const {
    mask[i] = elementwise::dropout_multiplier(stream, static_cast<uint64_t>(first + i), p, keep);
  }
};

// BatchNorm's training statistics in three steps of one column each, so that a data-parallel pass can sum the
// column sums of every rank in between (DeviceAllreduce): core's norm_forward, the same double sums.
// 1. sums[c] = sum_i y[i, c] over this batch's nodes; sums[d] = their count.
struct BatchNormColumnSums {
  const float* y;
  double* sums;
  int64_t nodes;
  int d;
  INDUCTIVE_HD void operator()(int64_t c) const {
    double s = 0;
    for (int64_t i = 0; i < nodes; ++i) s += static_cast<double>(y[i * d + c]);
    sums[c] = s;
    if (c == 0) sums[d] = static_cast<double>(nodes);
  }
};

// 2. mean[c] = sums[c] / count (the nodes the sums were taken over), sq[c] = sum_i (y[i, c] - mean[c])^2.
struct BatchNormCentredSums {
  const float* y;
  const double* sums;
  float* mean;
  double* sq;
  int64_t nodes;
  int d;
  INDUCTIVE_HD void operator()(int64_t c) const {
    const float mu = static_cast<float>(sums[c] / sums[d]);
    mean[c] = mu;
    double s = 0;
    for (int64_t i = 0; i < nodes; ++i) {
      const float x = y[i * d + c] - mu;
      s += static_cast<double>(x) * x;
    }
    sq[c] = s;
  }
};

// 3. rstd from the biased variance sq[c] / count, and PyTorch's update of the running statistics (when given:
// unbiased variance, momentum 0.1).
struct BatchNormFinish {
  const double *sums, *sq;
  const float* mean;
  float *rstd, *running_mean, *running_var;
  int d;
  INDUCTIVE_HD void operator()(int64_t c) const {
    const double count = sums[d];
    const float var = static_cast<float>(sq[c] / count);
    rstd[c] = 1.0f / sqrtf(var + kNormEps);
    if (running_mean) {
      running_mean[c] = (1 - kBnMomentum) * running_mean[c] + kBnMomentum * mean[c];
      const float unbias = count > 1 ? static_cast<float>(count) / static_cast<float>(count - 1) : 1.0f;
      running_var[c] = (1 - kBnMomentum) * running_var[c] + kBnMomentum * unbias * var;
    }
  }
};

// BatchNorm's evaluation statistics: rstd from the running variance, one column.
struct BatchNormEvalRstd {
  const float* var;
  float* rstd;
  INDUCTIVE_HD void operator()(int64_t c) const { rstd[c] = 1.0f / sqrtf(var[c] + kNormEps); }
};

// BatchNorm, one element: xhat = (y - mean) rstd, out = xhat w + b.
struct BatchNormApply {
  const float *y, *mean, *rstd, *w, *b;
  float *xhat, *out;
  int d;
  INDUCTIVE_HD void operator()(int64_t t) const {
    const int c = static_cast<int>(t % d);
    const float x = (y[t] - mean[c]) * rstd[c];
    xhat[t] = x;
    out[t] = x * w[c] + b[c];
  }
};

// A norm's affine gradient, one column: dw += sum_i g x, db += sum_i g; with `sums` (training BatchNorm) also the
// double sums of its statistics' gradient, sums[c] = sum_i g w and sums[d + c] = sum_i g w x (BatchNormGradMeans
// turns them into means, after a data-parallel pass summed them over ranks).
struct NormAffineGrad {
  const float *g, *xhat, *w;
  float *dw, *db;
  double* sums;
  int64_t nodes;
  int d;
  INDUCTIVE_HD void operator()(int64_t c) const {
    float sw = 0.0f, sb = 0.0f;
    double s1 = 0, s2 = 0;
    for (int64_t i = 0; i < nodes; ++i) {
      const float gi = g[i * d + c], xi = xhat[i * d + c];
      sw += gi * xi;
      sb += gi;
      const float t = gi * w[c];
      s1 += static_cast<double>(t);
      s2 += static_cast<double>(t) * xi;
    }
    dw[c] += sw;
    db[c] += sb;
    if (sums) {
      sums[c] = s1;
      sums[d + c] = s2;
    }
  }
};

// m1 = mean_i(g w), m2 = mean_i(g w x) over the nodes the forward statistics were taken over (`count`, the
// forward's sums[d]), one column.
struct BatchNormGradMeans {
  const double *sums, *count;
  float *m1, *m2;
  int d;
  INDUCTIVE_HD void operator()(int64_t c) const {
    m1[c] = static_cast<float>(sums[c] / *count);
    m2[c] = static_cast<float>(sums[d + c] / *count);
  }
};

// LayerNorm's input gradient, one row: dy = rstd (t - mean(t) - xhat mean(t xhat)), t = g w.
struct LayerNormInputGrad {
  const float *g, *xhat, *w, *rstd;
  float* dy;
  int d;
  INDUCTIVE_HD void operator()(int64_t i) const {
    const float* gi = g + i * d;
    const float* xi = xhat + i * d;
    float* o = dy + i * d;
    float m1 = 0.0f, m2 = 0.0f;
    for (int c = 0; c < d; ++c) {
      o[c] = gi[c] * w[c];
      m1 += o[c];
      m2 += o[c] * xi[c];
    }
    m1 /= static_cast<float>(d);
    m2 /= static_cast<float>(d);
    for (int c = 0; c < d; ++c) o[c] = rstd[i] * (o[c] - m1 - xi[c] * m2);
  }
};

// BatchNorm's input gradient, one element: training (m1 given) (g w - m1 - xhat m2) rstd, evaluation g w rstd.
struct BatchNormInputGrad {
  const float *g, *xhat, *w, *rstd, *m1, *m2;
  float* dy;
  int d;
  INDUCTIVE_HD void operator()(int64_t t) const {
    const int c = static_cast<int>(t % d);
    dy[t] = m1 ? (g[t] * w[c] - m1[c] - xhat[t] * m2[c]) * rstd[c] : g[t] * w[c] * rstd[c];
  }
};

// ---- readout and losses --------------------------------------------------------------------------------------------

// pooled[g, c] = sum (or mean) of x over graph g's rows.
struct Pool {
  const float* x;
  const int32_t* offsets;
  float* pooled;
  int d;
  bool mean;
  INDUCTIVE_HD void operator()(int64_t t) const {
    const int64_t g = t / d, c = t % d;
    float s = 0.0f;
    for (int i = offsets[g]; i < offsets[g + 1]; ++i) s += x[static_cast<int64_t>(i) * d + c];
    pooled[t] = mean ? s / static_cast<float>(offsets[g + 1] - offsets[g]) : s;
  }
};

// dx[i, c] = d_pooled[g, c] (/ n_g for mean pooling).
struct Unpool {
  const float* d_pooled;
  const int32_t *graph_of, *offsets;
  float* dx;
  int d;
  bool mean;
  INDUCTIVE_HD void operator()(int64_t t) const {
    const int64_t i = t / d, c = t % d;
    const int g = graph_of[i];
    const float w = mean ? 1.0f / static_cast<float>(offsets[g + 1] - offsets[g]) : 1.0f;
    dx[t] = w * d_pooled[static_cast<int64_t>(g) * d + c];
  }
};

// One graph's loss and d loss / d output (times grad_scale): softmax cross-entropy against `classes`, or L1 against
// `values` (mean over graphs and targets, as PyTorch's L1Loss); `graphs` is the batch's size B.
struct GraphLoss {
  const float* out;
  const int32_t* classes;  // classification
  const float* values;     // regression
  double* loss;            // per graph: its term of the batch's sum
  float* d_out;
  int outputs, graphs;
  float grad_scale;
  INDUCTIVE_HD void operator()(int64_t g) const {
    const float* o = out + g * outputs;
    float* dg = d_out + g * outputs;
    if (classes) {
      double mx = o[0];
      for (int k = 1; k < outputs; ++k) mx = fmax(mx, static_cast<double>(o[k]));
      double z = 0;
      for (int k = 0; k < outputs; ++k) z += exp(static_cast<double>(o[k]) - mx);
      loss[g] = mx + log(z) - o[classes[g]];
      for (int k = 0; k < outputs; ++k)
        dg[k] = grad_scale * static_cast<float>((exp(static_cast<double>(o[k]) - mx) / z - (k == classes[g])) / graphs);
    } else {
      const double n = static_cast<double>(graphs) * outputs;
      double total = 0;
      for (int k = 0; k < outputs; ++k) {
        const double r = static_cast<double>(o[k]) - values[g * outputs + k];
        total += fabs(r);
        dg[k] = grad_scale * (static_cast<float>((r > 0) - (r < 0)) / static_cast<float>(n));
      }
      loss[g] = total * static_cast<double>(graphs) / n;
    }
  }
};

// ---- optimiser -----------------------------------------------------------------------------------------------------

// One AdamW step over the flat parameter vector (every GraphiT parameter takes the decay, as on the CPU).
struct AdamStep {
  float *value, *m, *v;
  const float* grad;
  elementwise::AdamCoefficients c;
  INDUCTIVE_HD void operator()(int64_t t) const { elementwise::adam_update(value[t], m[t], v[t], grad[t], c, true); }
};

}  // namespace inductive::graphit_ops
