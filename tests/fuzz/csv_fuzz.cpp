// libFuzzer target: parse_csv on arbitrary text, with and without a header line and with the label in the first
// or the last column (the CSV files users drop into the screening demo).
#include <cmath>

#include "fuzz_util.h"
#include "inductive/error.h"
#include "inductive/screening/datasets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using inductive::fuzz::finding;
  if (size == 0) return 0;
  // The first byte picks the options, the rest is the file.
  inductive::CsvOptions o;
  o.header = data[0] & 1;
  o.label_column = (data[0] & 2) ? 0 : -1;
  inductive::Dataset d;
  try {
    d = inductive::parse_csv(inductive::fuzz::text(data + 1, size - 1), o, "fuzz.csv");
  } catch (const inductive::Error&) {
    return 0;
  }
  if (!d.x || d.n() < 1 || d.p() < 1) finding("csv_fuzz", "an empty dataset was returned");
  if (d.y.size() != static_cast<size_t>(d.n())) finding("csv_fuzz", "one label per sample expected");
  for (int i = 0; i < d.n(); ++i) {
    if (!std::isfinite(d.y[i]) || !std::isfinite(d.x->row_sq_norm(i))) finding("csv_fuzz", "a non-finite value");
  }
  return 0;
}
