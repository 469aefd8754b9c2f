// native/cli/graphit_data.h - how the `graphit` commands read graphs and build the model's inputs.
//
// Datasets (one per command line):
//   --tu DIR [--name NAME]            a TU benchmark dataset (DIR/NAME_A.txt, ...; NAME defaults to DIR's last
//                                     component without a "tu-" prefix); --node-label-names C,N,O,... names its
//                                     node labels in the order of their values (MUTAG: C,N,O,F,I,Cl,Br), so that a
//                                     model trained on it reads molecules; --class-names names the graph classes
//   --smiles-csv FILE --label-column COL [--smiles-column smiles] [--atom-types element|element-charge]
//                                     molecules (MoleculeNet-style CSV), integer classes; node labels = atom types
//   --task regression --smiles-csv FILE --target-column COL [...]
//                                     molecules with one real target each (e.g. ZINC's penalized logP)
// Single graphs (predict / attention): --smiles S, or a dataset and --graph I (0-based). predict and attention
// take the task and the atom typing from the model (--task / --atom-types, when given, must agree with it).
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "inductive/graph.h"
#include "inductive/graphit.h"
#include "inductive/graphit_train.h"
#include "inductive/smiles.h"

namespace inductive::cli {

struct GraphDataArgs {
  std::string tu, name, smiles_csv, smiles_column = "smiles", label_column;
  std::vector<std::string> node_label_names, class_names;
  std::string task;           // "classification" | "regression"; empty: classification (predict: the model's)
  std::string target_column;  // regression target column of --smiles-csv
  std::string atom_types;     // "element" | "element-charge"; empty: element (predict: the model's)
  bool regression() const { return task == "regression"; }
};
void add_graph_data_options(CLI::App* cmd, GraphDataArgs& args);

// A dataset with names for its node labels and classes (strings, as a model stores them).
struct NamedGraphs {
  GraphDataset data;
  std::vector<std::string> node_label_names;  // per node label index
  std::vector<std::string> class_names;       // per class (classification)
  std::vector<float> targets;                 // per graph (regression)
  bool regression = false;
  AtomTyping atom_typing = AtomTyping::kElement;  // molecules: how atoms became node labels
  std::vector<std::string> smiles;                // molecules only
  std::string source;
};
// Reads the dataset the options name; contradictory options (regression with --label-column, --target-column
// without --task regression, --atom-types with a TU dataset, ...) are an Error{kInvalidArgument} saying which.
NamedGraphs load_graph_data(const GraphDataArgs& args);

// Re-indexes node labels to a model's vocabulary (config.node_labels) by name: an unknown label is an error naming
// the graph, the label and the vocabulary.
void map_to_vocabulary(NamedGraphs& graphs, const std::vector<std::string>& vocabulary);

// Appends the graphs of `more` (a second file of the same task, e.g. a test set) to `into` and returns their
// indices there. Node labels join by name: `into`'s vocabulary, then the labels only `more` has (a test molecule
// may hold an atom type the training file lacks; its embedding then stays at its initialisation, as with ZINC's
// fixed type dictionary). Classes join by value (a class `into` lacks is an error).
std::vector<int32_t> append_graphs(NamedGraphs& into, NamedGraphs more);

}  // namespace inductive::cli
