// A transpose in tiles, for the row-major buffers of the OTK and Sinkhorn code (float or double).
#pragma once

#include <algorithm>
#include <cstdint>

namespace inductive::simd {

// dst (cols x rows, row stride ld_dst) = alpha src^T, src given as rows x cols with row stride ld_src. In tiles of
// 8 source rows: walked down its columns, a 64 x 512 float source (an OTK gradient) strides 2 KB, which maps all of
// its rows to 2 of L1's 64 sets, and Eigen's transpose of it ran at 3 ns an entry. alpha 1 copies exactly.
template <typename T>
void transpose(const T* src, int rows, int cols, int64_t ld_src, T alpha, T* dst, int64_t ld_dst) {
  constexpr int kTileRows = 8, kTileCols = 64;  // 8 source rows per tile: one L1 set's ways where their stride aliases
  for (int i0 = 0; i0 < rows; i0 += kTileRows) {
    const int i1 = std::min(rows, i0 + kTileRows);
    for (int j0 = 0; j0 < cols; j0 += kTileCols) {
      const int j1 = std::min(cols, j0 + kTileCols);
      for (int j = j0; j < j1; ++j)
        for (int i = i0; i < i1; ++i) dst[j * ld_dst + i] = alpha * src[i * ld_src + j];
    }
  }
}

}  // namespace inductive::simd
