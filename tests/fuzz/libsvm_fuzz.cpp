// libFuzzer target: parse_libsvm on arbitrary text (LIBSVM/svmlight files users drop into the screening demo).
//
// It either returns n >= 1 samples of p >= 1 features with finite labels and values, or throws inductive::Error.
#include "dataset_checks.h"
#include "inductive/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  inductive::Dataset d;
  try {
    d = inductive::to_dataset(inductive::parse_libsvm(inductive::fuzz::text(data, size), {}, "fuzz.svm"));
  } catch (const inductive::Error&) {
    return 0;
  }
  inductive::fuzz::check_dataset("libsvm_fuzz", d);
  return 0;
}
