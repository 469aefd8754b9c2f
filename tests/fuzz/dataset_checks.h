// tests/fuzz/dataset_checks.h - what a parsed screening dataset must satisfy, whatever the text format it came from
// (libsvm_fuzz, csv_fuzz): at least one sample and one feature, one label per sample, every value finite.
#pragma once

#include <cmath>

#include "fuzz_util.h"
#include "inductive/screening/datasets.h"

namespace inductive::fuzz {

inline void check_dataset(const char* target, const Dataset& d) {
  if (!d.x || d.n() < 1 || d.p() < 1) finding(target, "an empty dataset was returned");
  if (d.y.size() != static_cast<size_t>(d.n())) finding(target, "one label per sample expected");
  for (int i = 0; i < d.n(); ++i) {
    if (!std::isfinite(d.y[i]) || !std::isfinite(d.x->row_sq_norm(i))) finding(target, "a non-finite value");
  }
}

}  // namespace inductive::fuzz
