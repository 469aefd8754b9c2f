// libFuzzer target: parse_libsvm on arbitrary text (LIBSVM/svmlight files users drop into the screening demo).
//
// It either returns n >= 1 samples of p >= 1 features with finite labels and values, or throws inductive::Error.
#include <cmath>

#include "fuzz_util.h"
#include "inductive/error.h"
#include "inductive/screening/datasets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using inductive::fuzz::finding;
  inductive::Dataset d;
  try {
    d = inductive::parse_libsvm(inductive::fuzz::text(data, size), {}, "fuzz.svm");
  } catch (const inductive::Error&) {
    return 0;
  }
  if (!d.x || d.n() < 1 || d.p() < 1) finding("libsvm_fuzz", "an empty dataset was returned");
  if (d.y.size() != static_cast<size_t>(d.n())) finding("libsvm_fuzz", "one label per sample expected");
  for (int i = 0; i < d.n(); ++i) {
    if (!std::isfinite(d.y[i]) || !std::isfinite(d.x->row_sq_norm(i))) finding("libsvm_fuzz", "a non-finite value");
  }
  return 0;
}
