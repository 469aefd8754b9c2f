// inductive/set_batch.h - a batch of sets of vectors of different sizes, padded, with their true lengths.
#pragma once

#include <cstdint>
#include <vector>

#include "inductive/error.h"

namespace inductive {

// x[(b * n_max + i) * dim + c] for i < n[b]; rows i >= n[b] are padding, never read, kept at 0.
struct SetBatch {
  int batch = 0;
  int n_max = 0;
  int dim = 0;
  std::vector<float> x;
  std::vector<int32_t> n;

  SetBatch() = default;
  SetBatch(int batch, int n_max, int dim);
  float* row(int b, int i) { return x.data() + (static_cast<int64_t>(b) * n_max + i) * dim; }
  const float* row(int b, int i) const { return x.data() + (static_cast<int64_t>(b) * n_max + i) * dim; }
  // Shapes consistent, lengths in [1, n_max], valid entries finite; `where` prefixes messages.
  void validate(const char* where) const;
  // The same without the finiteness scan (for layers whose input was already validated upstream).
  void validate_shape(const char* where) const;
  // Samples [begin, end) as a new batch with n_max = their longest length.
  SetBatch slice(int begin, int end) const;
  // The sets at `indices` (any order, repeats allowed), n_max = their longest length.
  SetBatch gather(const std::vector<int>& indices) const;
};

// Builds a batch from flat per-set arrays (each n_i x dim, row-major).
SetBatch make_set_batch(const std::vector<std::vector<float>>& sets, int dim);

}  // namespace inductive
