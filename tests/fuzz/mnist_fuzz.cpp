// libFuzzer target: parse_mnist_idx on arbitrary image and label files (the idx files users drop into the screening
// demo). The first two bytes give where the image file ends within the rest. A returned dataset must satisfy
// check_dataset: samples and features, one label per sample, finite values.
#include <vector>

#include "dataset_checks.h"
#include "inductive/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const size_t rest = size - 2;
  const size_t split = std::min<size_t>(rest, (static_cast<size_t>(data[0]) << 8) | data[1]);
  const std::vector<uint8_t> images(data + 2, data + 2 + split), labels(data + 2 + split, data + size);
  inductive::Dataset d;
  try {
    d = inductive::to_dataset(inductive::parse_mnist_idx(images, labels, 1.0 / 255.0, "fuzz"));
  } catch (const inductive::Error&) {
    return 0;
  }
  inductive::fuzz::check_dataset("mnist_fuzz", d);
  return 0;
}
