// core/src/common/finite.h - the library's vector-friendly NaN/Inf scan, shared by the set batches' and Sinkhorn's
// input checks. Each runs it first, on the threads, and searches entry by entry for the culprit (to name it) only
// where it fails.
#pragma once

#include <cstdint>

namespace inductive::detail {

// Whether x[0..count) are all finite. No branch and no early exit, so the loop vectorises (a branch per value, or a
// float reduction without -ffast-math, would not): x - x is 0 for a finite x and NaN for +-Inf and NaN.
template <typename T>
bool all_finite(const T* x, int64_t count) {
  int bad = 0;
  for (int64_t k = 0; k < count; ++k) bad |= !(x[k] - x[k] == T(0));
  return bad == 0;
}

}  // namespace inductive::detail
