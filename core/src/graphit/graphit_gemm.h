// The dense products of a GraphiT layer over the packed nodes of a batch, split by rows across threads (parallel.h).
//
// A batch packs all its graphs' nodes (32 graphs of ~23 nodes: ~740 rows, d = 64), so each Linear layer is one
// tall-skinny GEMM. Eigen's own threading is off (cmake/Dependencies.cmake: it slows the many small products), so
// these split the rows in contiguous blocks, one per thread: exact for x W^T (rows are independent) and, for the
// weight gradients dY^T X (a sum over rows), a per-thread partial sum added in thread order, so a given thread count
// always gives the same bits. Small batches and calls from inside a parallel region run on the calling thread.
#pragma once

#include <algorithm>
#include <utility>
#include <vector>

#include "inductive/linalg.h"
#include "inductive/parallel.h"

namespace inductive::graphit_detail {

constexpr Eigen::Index kMinRowsPerThread = 256;

inline int row_threads(Eigen::Index rows) {
  return static_cast<int>(
      std::max<Eigen::Index>(1, std::min<Eigen::Index>(parallel_threads(), rows / kMinRowsPerThread)));
}

// Rows [begin, end) of block t of T blocks over `rows` rows.
inline std::pair<Eigen::Index, Eigen::Index> row_block(Eigen::Index rows, int t, int T) {
  return {rows * t / T, rows * (t + 1) / T};
}

// out = a * b (or out += a * b when `accumulate`), out resized to a.rows() x b.cols() when not accumulating.
template <typename A, typename B>
void rows_product(MatF& out, const A& a, const B& b, bool accumulate = false) {
  if (!accumulate) out.resize(a.rows(), b.cols());
  const int T = row_threads(a.rows());
  if (T == 1) {
    if (accumulate)
      out.noalias() += a * b;
    else
      out.noalias() = a * b;
    return;
  }
  parallel_for(T, 1, T, [&](int t, int) {
    const auto [r0, r1] = row_block(a.rows(), t, T);
    if (accumulate)
      out.middleRows(r0, r1 - r0).noalias() += a.middleRows(r0, r1 - r0) * b;
    else
      out.middleRows(r0, r1 - r0).noalias() = a.middleRows(r0, r1 - r0) * b;
  });
}

// out += a^T * b, a sum over the rows of a and b (a weight gradient).
template <typename A, typename B>
void add_transposed_product(MatF& out, const A& a, const B& b) {
  const int T = row_threads(a.rows());
  if (T == 1) {
    out.noalias() += a.transpose() * b;
    return;
  }
  std::vector<MatF> partial(T);
  parallel_for(T, 1, T, [&](int t, int) {
    const auto [r0, r1] = row_block(a.rows(), t, T);
    partial[t].noalias() = a.middleRows(r0, r1 - r0).transpose() * b.middleRows(r0, r1 - r0);
  });
  for (const MatF& p : partial) out += p;
}

}  // namespace inductive::graphit_detail
