// libFuzzer target: parse_index_list, the reader of GraphiT's fold files (test_idx-K.txt, inner_folds/...). The
// first byte gives the number of graphs (1..256), the rest is the file. Every returned index must lie in
// [0, n_graphs) and appear once.
#include <set>

#include "fuzz_util.h"
#include "inductive/error.h"
#include "inductive/graph.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const int n_graphs = 1 + data[0];
  std::vector<int32_t> idx;
  try {
    idx = inductive::parse_index_list(inductive::fuzz::text(data + 1, size - 1), "fuzz_idx.txt", n_graphs);
  } catch (const inductive::Error&) {
    return 0;
  }
  std::set<int32_t> seen;
  for (int32_t i : idx) {
    if (i < 0 || i >= n_graphs) inductive::fuzz::finding("folds_fuzz", "an index outside [0, n_graphs)");
    if (!seen.insert(i).second) inductive::fuzz::finding("folds_fuzz", "an index listed twice");
  }
  return 0;
}
