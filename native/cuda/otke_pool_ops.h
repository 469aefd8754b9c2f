// native/cuda/otke_pool_ops.h - OTKE's mean and max pooling baselines (core's mean_pool / max_pool and their
// gradients in otke_loss) as per-item functors, written once for the CUDA kernels (otke_kernels.cu) and for the CPU
// executor that tests them (tests/device/otke_pool_pass_test.cpp).
//
// Forward, one item per (set b, feature j): phi[b, j] = mean or max of psi[b, i, j] over the set's valid elements
// i < n_b, summed in element order as the CPU does; max pooling also records the first index that attains the
// maximum (Eigen's maxCoeff, which otke_loss's backward uses). Backward, one item per (b, i, j) of dpsi: dphi[b, j] /
// n_b (mean), dphi[b, j] at the recorded index and 0 elsewhere (max), 0 on padding rows. Padding rows of psi are
// never read, so they may hold anything.
#pragma once

#include <cstdint>

#include "inductive/elementwise.h"

namespace inductive::otke_pool {

struct Args {
  const float* psi = nullptr;  // [batch, n_max, k]
  const int32_t* n = nullptr;  // [batch], valid elements per set (clamped to 0..n_max)
  int batch = 0, n_max = 0, k = 0;
  bool max = false;             // max pooling, else mean
  float* phi = nullptr;         // forward output [batch, k]
  int32_t* argmax = nullptr;    // max pooling: [batch, k], written by forward (-1 for an empty set), read by backward
  const float* dphi = nullptr;  // backward input [batch, k]
  float* dpsi = nullptr;        // backward output [batch, n_max, k]

  INDUCTIVE_HD int length(int b) const {
    const int x = n[b];
    return x < 0 ? 0 : (x > n_max ? n_max : x);
  }
};

struct Forward {
  Args a;
  INDUCTIVE_HD void operator()(int64_t item) const {
    const int b = static_cast<int>(item / a.k), j = static_cast<int>(item % a.k);
    const int n = a.length(b);
    const float* col = a.psi + static_cast<int64_t>(b) * a.n_max * a.k + j;
    if (n == 0) {  // an empty set pools to 0 (the CPU refuses such batches before pooling)
      a.phi[item] = 0.0f;
      if (a.max) a.argmax[item] = -1;
      return;
    }
    float acc = col[0];
    int at = 0;
    for (int i = 1; i < n; ++i) {
      const float x = col[static_cast<int64_t>(i) * a.k];
      if (!a.max) {
        acc += x;
      } else if (x > acc) {
        acc = x;
        at = i;
      }
    }
    if (a.max) {
      a.phi[item] = acc;
      a.argmax[item] = at;
    } else {
      a.phi[item] = acc / static_cast<float>(n);
    }
  }
};

struct Backward {
  Args a;
  INDUCTIVE_HD void operator()(int64_t item) const {
    const int j = static_cast<int>(item % a.k);
    const int64_t row = item / a.k;
    const int i = static_cast<int>(row % a.n_max), b = static_cast<int>(row / a.n_max);
    const int n = a.length(b);
    const int64_t out = static_cast<int64_t>(b) * a.k + j;
    float g = 0.0f;
    if (i < n) g = a.max ? (a.argmax[out] == i ? a.dphi[out] : 0.0f) : a.dphi[out] / static_cast<float>(n);
    a.dpsi[item] = g;
  }
};

// The two passes on an executor with `launch(count, functor)` (graphit_exec_host.h's HostExec, or the CUDA one).
template <typename Exec>
void forward(Exec& exec, const Args& a) {
  exec.launch(static_cast<int64_t>(a.batch) * a.k, Forward{a});
}
template <typename Exec>
void backward(Exec& exec, const Args& a) {
  exec.launch(static_cast<int64_t>(a.batch) * a.n_max * a.k, Backward{a});
}

}  // namespace inductive::otke_pool
