#include "inductive/set_batch.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "common/finite.h"
#include "inductive/parallel.h"

namespace inductive {

SetBatch::SetBatch(int batch_, int n_max_, int dim_) : batch(batch_), n_max(n_max_), dim(dim_) {
  INDUCTIVE_CHECK(batch_ >= 0 && n_max_ >= 0 && dim_ >= 0, ErrorCode::kInvalidArgument, "set batch: negative size");
  x.assign(static_cast<size_t>(batch_) * n_max_ * dim_, 0.0f);
  n.assign(batch_, n_max_);
}

void SetBatch::validate(const char* where) const {
  validate_shape(where);
  // The sets are checked in parallel (this pass reads every feature once: at k 512 it was 5-13 % of an OTK embedding
  // on one thread, and all of it serial on two); the message names the first bad set, as a serial loop would.
  std::vector<char> finite(static_cast<size_t>(batch));
  parallel_for(batch, 1, 0, [&](int b, int) {
    finite[static_cast<size_t>(b)] = detail::all_finite(row(b, 0), static_cast<int64_t>(n[b]) * dim);
  });
  for (int b = 0; b < batch; ++b) {
    if (finite[static_cast<size_t>(b)]) continue;
    for (int i = 0; i < n[b]; ++i) {
      const float* r = row(b, i);
      for (int c = 0; c < dim; ++c)
        INDUCTIVE_CHECK(std::isfinite(r[c]), ErrorCode::kInvalidArgument, where, ": set ", b,
                        " has a non-finite feature at element ", i, ", coordinate ", c, ": got ", r[c]);
    }
  }
}

void SetBatch::validate_shape(const char* where) const {
  INDUCTIVE_CHECK(batch >= 1, ErrorCode::kInvalidArgument, where, ": empty batch: got 0 sets, expected >= 1");
  INDUCTIVE_CHECK(dim >= 1, ErrorCode::kInvalidArgument, where, ": feature dimension must be >= 1: got ", dim);
  INDUCTIVE_CHECK(static_cast<int64_t>(x.size()) == static_cast<int64_t>(batch) * n_max * dim &&
                      static_cast<int>(n.size()) == batch,
                  ErrorCode::kShapeMismatch, where, ": batch arrays do not match batch ", batch, " x n_max ", n_max,
                  " x dim ", dim);
  for (int b = 0; b < batch; ++b) {
    INDUCTIVE_CHECK(n[b] >= 1 && n[b] <= n_max, ErrorCode::kInvalidArgument, where, ": set ", b,
                    (n[b] == 0 ? " is empty" : " has a bad length"), ": got n = ", n[b], ", expected 1..", n_max);
  }
}

SetBatch SetBatch::slice(int begin, int end) const {
  INDUCTIVE_CHECK(0 <= begin && begin <= end && end <= batch, ErrorCode::kInvalidArgument, "set batch: bad slice [",
                  begin, ", ", end, ") of ", batch);
  int longest = 0;
  for (int b = begin; b < end; ++b) longest = std::max(longest, n[b]);
  SetBatch out(end - begin, longest, dim);
  for (int b = begin; b < end; ++b) {
    out.n[b - begin] = n[b];
    std::copy(row(b, 0), row(b, 0) + static_cast<int64_t>(n[b]) * dim, out.row(b - begin, 0));
  }
  return out;
}

SetBatch SetBatch::gather(const std::vector<int>& indices) const {
  int longest = 0;
  for (int b : indices) {
    INDUCTIVE_CHECK(b >= 0 && b < batch, ErrorCode::kInvalidArgument, "set batch: index ", b, " out of range 0..",
                    batch - 1);
    longest = std::max(longest, n[b]);
  }
  SetBatch out(static_cast<int>(indices.size()), longest, dim);
  for (size_t t = 0; t < indices.size(); ++t) {
    const int b = indices[t];
    out.n[t] = n[b];
    std::copy(row(b, 0), row(b, 0) + static_cast<int64_t>(n[b]) * dim, out.row(static_cast<int>(t), 0));
  }
  return out;
}

SetBatch SetBatch::concat(const SetBatch& more) const {
  INDUCTIVE_CHECK(more.batch == 0 || batch == 0 || more.dim == dim, ErrorCode::kShapeMismatch,
                  "set batch: concatenating sets of dimension ", more.dim, " to sets of dimension ", dim);
  if (more.batch == 0) return *this;
  if (batch == 0) return more;
  SetBatch all(batch + more.batch, std::max(n_max, more.n_max), dim);
  for (int s = 0; s < all.batch; ++s) {
    const SetBatch& from = s < batch ? *this : more;
    const int t = s < batch ? s : s - batch;
    all.n[s] = from.n[t];
    std::copy(from.row(t, 0), from.row(t, 0) + static_cast<int64_t>(from.n[t]) * dim, all.row(s, 0));
  }
  return all;
}

SetBatch make_set_batch(const std::vector<std::vector<float>>& sets, int dim) {
  INDUCTIVE_CHECK(dim >= 1, ErrorCode::kInvalidArgument, "set batch: dim must be >= 1: got ", dim);
  int longest = 0;
  for (size_t b = 0; b < sets.size(); ++b) {
    INDUCTIVE_CHECK(sets[b].size() % dim == 0, ErrorCode::kShapeMismatch, "set batch: set ", b, " has ", sets[b].size(),
                    " values, not a multiple of dim ", dim);
    longest = std::max<int>(longest, static_cast<int>(sets[b].size() / dim));
  }
  SetBatch out(static_cast<int>(sets.size()), longest, dim);
  for (size_t b = 0; b < sets.size(); ++b) {
    out.n[b] = static_cast<int32_t>(sets[b].size() / dim);
    std::copy(sets[b].begin(), sets[b].end(), out.row(static_cast<int>(b), 0));
  }
  return out;
}

}  // namespace inductive
