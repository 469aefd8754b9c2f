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
  // These sets, then those of `more` (same dim), n_max = the longer of the two.
  SetBatch concat(const SetBatch& more) const;
};

// Builds a batch from flat per-set arrays (each n_i x dim, row-major).
SetBatch make_set_batch(const std::vector<std::vector<float>>& sets, int dim);

// Runs `compute` on features checked by validate_shape only, where a non-finite feature is certain to make `compute`
// throw an Error (OTK pooling: Inf and NaN survive the products and sums of x z^T, so every similarity of their row is
// non-finite, and Sinkhorn rejects it). On an Error the finiteness scan runs and, if it finds the culprit, throws
// validate's message naming the set, element and coordinate; otherwise the Error propagates. This saves the scan's
// pass over the n x dim features on every call: at dim 512 as long as a product with 10 references.
template <class Compute>
auto with_finiteness_scan_on_error(const SetBatch& features, const char* where, Compute&& compute)
    -> decltype(compute()) {
  try {
    return compute();
  } catch (const Error&) {
    features.validate(where);
    throw;
  }
}

}  // namespace inductive
