// native/cuda/otke_head_ops.h - the loss at the top of OTKE's head, one row (set) per item, written once for the CUDA
// kernel (otke_kernels.cu's head_loss) and for the CPU executor that tests it (tests/device/otke_head_pass_test.cpp).
//
// Each row first takes the head's bias, logits[b, c] += bias[c]. With labels (a training step) it then writes
// dL/dlogits and returns the row's share of the summed loss, computed in double as core does:
// - one class of C (inductive::cross_entropy): loss log sum_c e^z_c - z_y, dlogits = (softmax(z) - onehot(y)) / B;
// - multilabel (inductive::binary_cross_entropy, labels as bit sets): loss sum_c softplus(z_c) - t_c z_c, dlogits =
//   (sigmoid(z) - t) / (B C), since core's loss is the mean over all B C entries.
// The caller divides the summed loss by B (softmax) or B C (multilabel), as `loss_divisor` says.
#pragma once

#include <cmath>
#include <cstdint>

#include "inductive/elementwise.h"

namespace inductive::otke_head {

struct Args {
  float* logits = nullptr;          // [batch, classes], the bias added in place
  const float* bias = nullptr;      // [classes]
  const int32_t* labels = nullptr;  // [batch]: class indices, or bit sets (multilabel); null: only add the bias
  float* dlogits = nullptr;         // [batch, classes], written with labels
  int batch = 0, classes = 0;
  bool multilabel = false;

  INDUCTIVE_HD double loss_divisor() const {
    return multilabel ? static_cast<double>(batch) * classes : static_cast<double>(batch);
  }
};

struct RowLoss {
  Args a;
  INDUCTIVE_HD double operator()(int b) const {
    const int C = a.classes;
    float* l = a.logits + static_cast<int64_t>(b) * C;
    for (int c = 0; c < C; ++c) l[c] += a.bias[c];
    if (!a.labels) return 0.0;
    float* d = a.dlogits + static_cast<int64_t>(b) * C;
    const int32_t y = a.labels[b];
    if (a.multilabel) {
      const float entries = static_cast<float>(a.batch * C);
      double loss = 0;
      for (int c = 0; c < C; ++c) {
        const bool t = (y >> c) & 1;
        loss += elementwise::softplus(l[c]) - (t ? static_cast<double>(l[c]) : 0.0);
        d[c] = (elementwise::sigmoid(l[c]) - (t ? 1.0f : 0.0f)) / entries;
      }
      return loss;
    }
    float m = l[0];
    for (int c = 1; c < C; ++c) m = fmaxf(m, l[c]);
    double s = 0;
    float fs = 0;
    for (int c = 0; c < C; ++c) {
      s += std::exp(static_cast<double>(l[c]) - m);
      fs += std::exp(l[c] - m);
    }
    for (int c = 0; c < C; ++c) d[c] = (std::exp(l[c] - m) / fs - (c == y ? 1.0f : 0.0f)) / static_cast<float>(a.batch);
    return static_cast<double>(m) + std::log(s) - l[y];
  }
};

}  // namespace inductive::otke_head
