// inductive/graph.h - graphs with categorical node labels, TU benchmark datasets and GraphiT's 10-fold splits
// (thesis ch. 3).
//
// Usage:
//   GraphDataset ds = read_tu_dataset("data/tu-MUTAG", "MUTAG");       // 188 graphs, labels mapped to 0..C-1
//   std::vector<GraphFold> folds = read_graphit_folds("data/graphit-folds/MUTAG", ds.num_graphs());
//   const Graph& g = ds.graphs[folds[0].train[0]];
//   std::vector<int32_t> deg = g.degrees();
//
// Conventions (those of PyTorch Geometric, which the public GraphiT code uses):
// - Node ids are 0-based and local to their graph. Edges are undirected, stored once as (u, v) with u < v, sorted
//   and deduplicated (the TU files list each edge in both directions).
// - Self-loops are not edges: they are dropped and counted in Graph::n_self_loops, because PyG's normalised
//   Laplacian (get_laplacian, which every GraphiT kernel and LapPE is built from) removes them first. Degrees
//   count neighbours, self-loops excluded.
// - Isolated nodes (no incident edge) are nodes like any other; their degree is 0.
//
// Errors: malformed files throw Error{kInvalidArgument} "<file>: line L: <problem>: got X, expected Y"; files that
// cannot be read throw Error{kIo}. Nothing here is thread-unsafe (no global state).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "inductive/linalg.h"

namespace inductive {

struct Graph {
  int n_nodes = 0;
  std::vector<std::array<int32_t, 2>> edges;  // undirected, u < v, sorted, unique
  int n_self_loops = 0;                       // self-loops seen in the input and dropped
  std::vector<int32_t> node_labels;           // n_nodes categorical labels in [0, vocabulary size)
  MatF node_attributes;                       // n_nodes x a continuous attributes, or 0 x 0 when absent
  int32_t label = -1;                         // class in [0, C) for classification; -1 when none
  float target = 0.0f;                        // regression target (meaningful when has_target)
  bool has_target = false;

  // Builds a graph from any list of (u, v) pairs (either direction, duplicates allowed): self-loops are counted and
  // dropped, the rest normalised to u < v, sorted and deduplicated. `node_labels` must have n_nodes entries >= 0
  // (empty: every label 0). Throws on ids outside [0, n_nodes).
  static Graph from_edges(int n_nodes, const std::vector<std::array<int32_t, 2>>& pairs,
                          std::vector<int32_t> node_labels = {});

  int n_edges() const { return static_cast<int>(edges.size()); }
  // Number of neighbours of each node (self-loops excluded): GraphiT's deg_i in x_i + (1 + deg_i)^-1/2 attn_i.
  std::vector<int32_t> degrees() const;
  // Sorted neighbour lists.
  std::vector<std::vector<int32_t>> neighbours() const;
  // Checks the invariants above (ids in range, u < v, sorted, unique, label count, attribute rows); `vocabulary`
  // > 0 also checks labels < vocabulary. Throws Error{kInvalidArgument} naming `what` and the first violation.
  void validate(const std::string& what, int vocabulary = 0) const;
};

// A dataset of graphs with the vocabularies needed to store a model and read new graphs the same way.
struct GraphDataset {
  std::string name;
  std::vector<Graph> graphs;
  // node_label_values[v] is the label as written in the files for mapped label v (sorted ascending).
  std::vector<int64_t> node_label_values;
  // class_values[c] is the graph label as written in the files for class c (sorted ascending: MUTAG -1/1 -> 0/1,
  // PROTEINS 1/2 -> 0/1, NCI1 0/1 -> 0/1).
  std::vector<int64_t> class_values;
  int node_attribute_dim = 0;  // 0 when the dataset has no node attributes

  int n_graphs() const { return static_cast<int>(graphs.size()); }
  int n_node_labels() const { return static_cast<int>(node_label_values.size()); }
  int n_classes() const { return static_cast<int>(class_values.size()); }
  int64_t n_nodes_total() const;
};

// The text of the TU files of one dataset (so the browser build can parse fetched buffers).
struct TuTexts {
  std::string a;                // DS_A.txt: "row, col" per directed edge, 1-based global node ids
  std::string graph_indicator;  // DS_graph_indicator.txt: graph id (1-based) of each node, non-decreasing
  std::string graph_labels;     // DS_graph_labels.txt: one integer class label per graph
  std::string node_labels;      // DS_node_labels.txt: one integer label per node (optional: empty = all 0)
  std::string node_attributes;  // DS_node_attributes.txt: comma-separated floats per node (optional)
};

// Parses the TU benchmark format (README.txt of each dataset): global 1-based node ids, graphs numbered 1..N in
// file order with contiguous nodes, isolated nodes counted from the graph indicator. An edge naming a node outside
// 1..n or joining two graphs, a graph id that skips or goes back, a graph with no node, a count mismatch between
// files or a non-integer token is an error naming the file and line. `name` prefixes file names in messages.
GraphDataset parse_tu_dataset(const TuTexts& texts, const std::string& name);
// Reads dir/NAME_{A,graph_indicator,graph_labels,node_labels[,node_attributes]}.txt (node labels optional).
GraphDataset read_tu_dataset(const std::string& dir, const std::string& name);

// One outer fold of GraphiT's 10-fold cross-validation: 0-based graph indices in dataset order.
struct GraphFold {
  std::vector<int32_t> train, val, test;
};

// Reads GraphiT's fold files from `dir` (e.g. graphit-fold-idx/MUTAG): test_idx-K.txt and
// inner_folds/{train,val}_idx-K-1.txt for K = 1..n_folds, one index per line. Checks every index is in
// [0, n_graphs), unique within its list, and that train, val and test partition 0..n_graphs-1 for each fold.
std::vector<GraphFold> read_graphit_folds(const std::string& dir, int n_graphs, int n_folds = 10);
// Parses one index file's text (exposed for tests and the browser).
std::vector<int32_t> parse_index_list(const std::string& text, const std::string& what, int n_graphs);

// A 64-bit FNV-1a hash of everything a model sees in a dataset (structure, labels, attributes, targets), in a
// fixed byte order: equal datasets hash equally on every build. Used to key precomputed-data caches.
uint64_t dataset_hash(const GraphDataset& ds);

}  // namespace inductive
