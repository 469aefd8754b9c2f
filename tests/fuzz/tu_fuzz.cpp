// libFuzzer target: parse_tu_dataset on arbitrary file texts (the TU graph benchmark format users download and the
// browser build parses from fetched buffers). The input holds the five files separated by 0x1f bytes: A, graph
// indicator, graph labels, node labels, node attributes (missing parts are empty files). A returned dataset must be
// consistent: every graph has nodes, every edge joins two of its nodes, labels index their value tables.
#include <string>
#include <vector>

#include "fuzz_util.h"
#include "inductive/error.h"
#include "inductive/graph.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> parts(5);
  size_t k = 0;
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == 0x1f && k + 1 < parts.size()) {
      ++k;
      continue;
    }
    parts[k].push_back(static_cast<char>(data[i]));
  }
  inductive::TuTexts t{parts[0], parts[1], parts[2], parts[3], parts[4]};
  inductive::GraphDataset ds;
  try {
    ds = inductive::parse_tu_dataset(t, "FUZZ");
  } catch (const inductive::Error&) {
    return 0;
  }
  using inductive::fuzz::finding;
  if (ds.n_graphs() < 1) finding("tu_fuzz", "a dataset without graphs was returned");
  for (const inductive::Graph& g : ds.graphs) {
    if (g.n_nodes < 1) finding("tu_fuzz", "a graph without nodes");
    if (g.label < 0 || g.label >= ds.n_classes()) finding("tu_fuzz", "a graph label outside the class table");
    if (!g.node_labels.empty() && static_cast<int>(g.node_labels.size()) != g.n_nodes)
      finding("tu_fuzz", "node labels do not match the nodes");
    for (int32_t l : g.node_labels)
      if (l < 0 || l >= ds.n_node_labels()) finding("tu_fuzz", "a node label outside its table");
    for (const auto& e : g.edges)
      if (e[0] < 0 || e[0] >= e[1] || e[1] >= g.n_nodes) finding("tu_fuzz", "an edge leaving its graph or not u < v");
    if (g.node_attributes.size() > 0 && g.node_attributes.rows() != g.n_nodes)
      finding("tu_fuzz", "node attributes do not match the nodes");
  }
  return 0;
}
