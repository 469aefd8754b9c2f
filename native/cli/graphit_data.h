// native/cli/graphit_data.h - how the `graphit` commands read graphs and build the model's inputs.
//
// Datasets (one per command line):
//   --tu DIR [--name NAME]            a TU benchmark dataset (DIR/NAME_A.txt, ...; NAME defaults to DIR's last
//                                     component without a "tu-" prefix); --node-label-names C,N,O,... names its
//                                     node labels in the order of their values (MUTAG: C,N,O,F,I,Cl,Br), so that a
//                                     model trained on it reads molecules; --class-names names the graph classes
//   --smiles-csv FILE --label-column COL [--smiles-column smiles]
//                                     molecules (MoleculeNet-style CSV); node labels = element symbols
// Single graphs (predict / attention): --smiles S, or a dataset and --graph I (0-based).
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "inductive/graph.h"
#include "inductive/graphit.h"
#include "inductive/graphit_train.h"

namespace inductive::cli {

struct GraphDataArgs {
  std::string tu, name, smiles_csv, smiles_column = "smiles", label_column;
  std::vector<std::string> node_label_names, class_names;
};
void add_graph_data_options(CLI::App* cmd, GraphDataArgs& args);

// A dataset with names for its node labels and classes (strings, as a model stores them).
struct NamedGraphs {
  GraphDataset data;
  std::vector<std::string> node_label_names;  // per node label index
  std::vector<std::string> class_names;       // per class
  std::vector<std::string> smiles;            // molecules only
  std::string source;
};
NamedGraphs load_graph_data(const GraphDataArgs& args);

// Re-indexes node labels to a model's vocabulary (config.node_labels) by name: an unknown label is an error naming
// the graph, the label and the vocabulary.
void map_to_vocabulary(NamedGraphs& graphs, const std::vector<std::string>& vocabulary);

// Model inputs of graphs[index] (empty index: empty set) from precomputed parts, with classes.
GraphitDataset graphit_subset(const NamedGraphs& graphs, const PrecomputedDataset& pre, const GraphitConfig& config,
                              const std::vector<int32_t>& index);

}  // namespace inductive::cli
