// The dense products of a GraphiT layer over the packed nodes of a batch, split by rows across threads (parallel.h).
//
// A batch packs all its graphs' nodes (32 graphs of ~23 nodes: ~740 rows, d = 64), so each Linear layer is one
// tall-skinny GEMM. Eigen's own threading is off (cmake/Dependencies.cmake: it slows the many small products), so
// these split the rows into blocks dealt to the threads as they come free, several blocks per thread: on a machine
// where another process takes a core, a thread that shares it finishes fewer blocks instead of holding back the
// loop with a fixed half (with one block per thread, 2 threads were 3-7% slower than 1 there). The blocks are exact
// for x W^T (rows are independent); for the weight gradients dY^T X (a sum over rows) each block's partial sum is
// added in block order, and the blocks depend on the row count only, so any number of threads gives the same bits.
// Small batches and calls from inside a parallel region run on the calling thread.
//
// A block's product goes through the register-blocked kernels of simd/small_gemm.h when its operands are plain
// row-major matrices (every call in GraphiT: x W^T, dY W, dY^T X); any other expression takes Eigen's path. In the
// wasm build Eigen is unvectorised; natively these kernels run 1.1-1.7x faster than Eigen's GEMM on GraphiT's
// shapes (depth 64 or 128: Eigen's packing of A and zeroing of C cost as much as they save).
#pragma once

#include <algorithm>
#include <type_traits>
#include <utility>
#include <vector>

#include "inductive/linalg.h"
#include "inductive/parallel.h"
#include "simd/small_gemm.h"

namespace inductive::graphit_detail {

template <typename T>
inline constexpr bool kIsMatF = std::is_same_v<std::decay_t<T>, MatF>;
template <typename T>
inline constexpr bool kIsMatFTransposed = std::is_same_v<std::decay_t<T>, Eigen::Transpose<const MatF>> ||
                                          std::is_same_v<std::decay_t<T>, Eigen::Transpose<MatF>>;

// The epilogue's steps on rows [r0, r1) of out, for products that take Eigen's path.
inline void apply_epilogue(MatF& out, Eigen::Index r0, Eigen::Index r1, const simd::RowEpilogue& e) {
  for (Eigen::Index i = r0; i < r1; ++i)
    for (int j = 0; j < static_cast<int>(out.cols()); ++j) out(i, j) = simd::apply_epilogue(out(i, j), e, i, j);
}

// Rows [r0, r1) of out (=, or += when `accumulate`) the same rows of a, times b, then the epilogue (optional; its
// row_scale and residual indexed by out's rows).
template <typename A, typename B>
void product_rows(MatF& out, const A& a, const B& b, Eigen::Index r0, Eigen::Index r1, bool accumulate,
                  const simd::RowEpilogue* epilogue) {
  if constexpr (kIsMatF<A> && kIsMatF<B>) {
    const int m = static_cast<int>(r1 - r0), n = static_cast<int>(out.cols()), k = static_cast<int>(a.cols());
    simd::RowEpilogue rows;
    if (epilogue) {
      rows = *epilogue;
      if (rows.row_scale) rows.row_scale += r0;
      if (rows.residual) rows.residual += r0 * rows.ld_residual;
    }
    simd::gemm_ab(a.data() + r0 * k, k, b.data(), n, out.data() + r0 * n, n, m, n, k, accumulate,
                  epilogue ? &rows : nullptr);
    return;
  }
  if (r0 == 0 && r1 == a.rows()) {  // the whole product, as one Eigen expression
    if (accumulate)
      out.noalias() += a * b;
    else
      out.noalias() = a * b;
  } else if (accumulate) {
    out.middleRows(r0, r1 - r0).noalias() += a.middleRows(r0, r1 - r0) * b;
  } else {
    out.middleRows(r0, r1 - r0).noalias() = a.middleRows(r0, r1 - r0) * b;
  }
  if (epilogue) apply_epilogue(out, r0, r1, *epilogue);
}

// out (=, or += when `accumulate`) a^T b over rows [r0, r1) of a and b.
template <typename A, typename B>
void transposed_product_rows(MatF& out, const A& a, const B& b, Eigen::Index r0, Eigen::Index r1, bool accumulate) {
  if constexpr (kIsMatF<A> && kIsMatF<B>) {
    const int m = static_cast<int>(a.cols()), n = static_cast<int>(b.cols());
    simd::gemm_atb(a.data() + r0 * m, m, b.data() + r0 * n, n, out.data(), n, m, n, static_cast<int>(r1 - r0), 1.0f,
                   accumulate);
    return;
  }
  if (r0 == 0 && r1 == a.rows() && accumulate) {  // the whole sum, as one Eigen expression
    out.noalias() += a.transpose() * b;
  } else if (accumulate) {
    out.noalias() += a.middleRows(r0, r1 - r0).transpose() * b.middleRows(r0, r1 - r0);
  } else {
    out.noalias() = a.middleRows(r0, r1 - r0).transpose() * b.middleRows(r0, r1 - r0);
  }
}

// The products run in blocks of kChunkRows rows, dealt to the threads as they come free. The blocks start at
// multiples of kChunkRows whatever the number of threads, accumulating or not: small_gemm's rows do not depend on
// their block, but an Eigen expression's can (its kernel's row panels and tails: 4 rows of 540 differed at d 32
// between two blockings), and a block's destination (<= 64 KB) is still in L2 when Eigen's GEMM writes it after
// zeroing it.
constexpr Eigen::Index kChunkRows = 128;

constexpr Eigen::Index kMinRowsPerThread = 256;

inline int row_threads(Eigen::Index rows) {
  return static_cast<int>(
      std::max<Eigen::Index>(1, std::min<Eigen::Index>(parallel_threads(), rows / kMinRowsPerThread)));
}

// body(r0, r1) for each kChunkRows block [r0, r1) of `rows` rows, dealt to the threads row_threads allows.
template <typename F>
void for_each_row_block(Eigen::Index rows, const F& body) {
  const int blocks = static_cast<int>((rows + kChunkRows - 1) / kChunkRows);
  parallel_for(blocks, 1, row_threads(rows), [&](int t, int) {
    const Eigen::Index r0 = t * kChunkRows;
    body(r0, std::min(rows, r0 + kChunkRows));
  });
}

// Rows [begin, end) of block t of T blocks over `rows` rows.
inline std::pair<Eigen::Index, Eigen::Index> row_block(Eigen::Index rows, int t, int T) {
  return {rows * t / T, rows * (t + 1) / T};
}

// out = a * b (or out += a * b when `accumulate`), out resized to a.rows() x b.cols() when not accumulating; then
// the epilogue when given (its residual must not be out).
template <typename A, typename B>
void rows_product(MatF& out, const A& a, const B& b, bool accumulate = false,
                  const simd::RowEpilogue* epilogue = nullptr) {
  if constexpr (kIsMatF<A> && kIsMatFTransposed<B>) {
    // x W^T: W^T copied once (d x d, small next to the n x d x d product) so that the product runs as broadcasts and
    // FMAs (gemm_ab); the dot-product form (gemm_abt) ends every 4 x 4 block with 16 horizontal sums, which cost it
    // more than it saved over Eigen here.
    const MatF bt = b;
    rows_product(out, a, bt, accumulate, epilogue);
    return;
  }
  if (!accumulate) out.resize(a.rows(), b.cols());
  for_each_row_block(a.rows(),
                     [&](Eigen::Index r0, Eigen::Index r1) { product_rows(out, a, b, r0, r1, accumulate, epilogue); });
}

// The row blocks of a weight gradient's sum: a function of the row count alone (never of the threads), so that the
// partial sums, and the order they are added in, are the same on any number of threads. At least 256 rows each
// (kMinRowsPerThread: below that a partial GEMM costs more than it shares) and at most 8 blocks: (a)'s ~740-row
// batches give 2, (b)'s ~3000-row ones 8, enough for a busy thread to take fewer.
inline int gradient_blocks(Eigen::Index rows) {
  return static_cast<int>(std::clamp<Eigen::Index>(rows / kMinRowsPerThread, 1, 8));
}

// out += a^T * b, a sum over the rows of a and b (a weight gradient).
template <typename A, typename B>
void add_transposed_product(MatF& out, const A& a, const B& b) {
  const int blocks = gradient_blocks(a.rows());
  if (blocks == 1) {
    transposed_product_rows(out, a, b, 0, a.rows(), true);
    return;
  }
  std::vector<MatF> partial(static_cast<size_t>(blocks));
  parallel_for(blocks, 1, row_threads(a.rows()), [&](int t, int) {
    const auto [r0, r1] = row_block(a.rows(), t, blocks);
    partial[static_cast<size_t>(t)].resize(a.cols(), b.cols());
    transposed_product_rows(partial[static_cast<size_t>(t)], a, b, r0, r1, false);
  });
  for (const MatF& p : partial) out += p;
}

}  // namespace inductive::graphit_detail
