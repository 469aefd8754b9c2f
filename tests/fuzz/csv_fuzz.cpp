// libFuzzer target: parse_csv on arbitrary text, with and without a header line and with the label in the first
// or the last column (the CSV files users drop into the screening demo).
#include "dataset_checks.h"
#include "inductive/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  // The first byte picks the options, the rest is the file.
  inductive::CsvOptions o;
  o.header = data[0] & 1;
  o.label_column = (data[0] & 2) ? 0 : -1;
  inductive::Dataset d;
  try {
    d = inductive::to_dataset(inductive::parse_csv(inductive::fuzz::text(data + 1, size - 1), o, "fuzz.csv"));
  } catch (const inductive::Error&) {
    return 0;
  }
  inductive::fuzz::check_dataset("csv_fuzz", d);
  return 0;
}
