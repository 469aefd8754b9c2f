// native/cuda/otke_token_ops.h - a tokens model's lookup (OtkeModel::local_features) as a per-item functor, written
// once for the CUDA kernel (otke_kernels.cu) and the CPU executor that tests it
// (tests/device/otke_token_pass_test.cpp). Its adjoint, the token table's gradient, is GraphiT's EmbeddingGrad
// (graphit_device_ops.h) over the ids this writes.
#pragma once

#include <cstdint>

#include "inductive/elementwise.h"

namespace inductive::otke_tokens {

// One item per (row, c) of out [batch * n_max, e]: out[row] = table[tokens[row]], and ids[row] = that index. The
// valid elements were checked on the host (check_otke_tokens); a padding row reads row 0, which no output uses, so
// whatever a padding entry holds is never an index (nor is anything outside 0..V-1: memory safety does not rest on
// the host's check).
struct Lookup {
  const float* tokens;  // [batch, n_max], one index per element (a set batch of width 1)
  const int32_t* n;     // [batch]
  int n_max;
  const float* table;  // [V, e]
  int vocab, e;
  float* out;    // [batch * n_max, e]
  int32_t* ids;  // [batch * n_max]
  INDUCTIVE_HD void operator()(int64_t t) const {
    const int64_t row = t / e;
    const int c = static_cast<int>(t % e);
    const int b = static_cast<int>(row / n_max), i = static_cast<int>(row % n_max);
    const float v = i < n[b] ? tokens[row] : 0.0f;
    const int id = v >= 0.0f && v < static_cast<float>(vocab) ? static_cast<int>(v) : 0;  // never out of the table
    if (c == 0) ids[row] = id;
    out[t] = table[static_cast<int64_t>(id) * e + c];
  }
};

}  // namespace inductive::otke_tokens
