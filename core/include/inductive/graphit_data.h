// inductive/graphit_data.h - the graph datasets GraphiT's front ends read, named as a model names things, and what
// a training run or a prediction makes of them. The CLI (`inductive graphit train | cv | predict | attention`), the
// bindings and the MPI runs call these and only parse their arguments and print.
//
// Datasets (one per source):
//   a TU benchmark dataset:  dir/NAME_A.txt, ... (NAME defaults to dir's last component without a "tu-" prefix);
//                            node_label_names names its node labels in the order of their values (MUTAG:
//                            C,N,O,F,I,Cl,Br), so that a model trained on it reads molecules; class_names names the
//                            graph classes
//   molecules:               a SMILES CSV (MoleculeNet style) with a label column of integer classes, or with a
//                            target column of real values (regression); node labels = atom types
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "inductive/graph.h"
#include "inductive/graphit.h"
#include "inductive/graphit_train.h"
#include "inductive/smiles.h"

namespace inductive {

struct GraphSource {
  std::string tu, name;  // a TU dataset (name: optional)
  std::string smiles_csv, smiles_column = "smiles", label_column, target_column;
  std::vector<std::string> node_label_names, class_names;
  std::optional<GraphitTask> task;        // empty: classification (predict: the model's)
  std::optional<AtomTyping> atom_typing;  // empty: element (predict: the model's)
  bool regression() const { return task == GraphitTask::kRegression; }
};

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

// Reads the dataset `source` names. Contradictory settings (regression with a label column, a target column
// without the regression task, an atom typing for a TU dataset, ...) are an Error{kInvalidArgument} saying which,
// before any file is read. Messages name the settings by the CLI's flags (--task, --label-column, ...).
NamedGraphs load_named_graphs(const GraphSource& source);

// Re-indexes node labels to a model's vocabulary (config.node_labels) by name: an unknown label is an error naming
// the graph, the label and the vocabulary.
void map_to_vocabulary(NamedGraphs& graphs, const std::vector<std::string>& vocabulary);

// Appends the graphs of `more` (a second file of the same task, e.g. a test set) to `into` and returns their
// indices there. Node labels join by name: `into`'s vocabulary, then the labels only `more` has (a test molecule
// may hold an atom type the training file lacks; its embedding then stays at its initialisation, as with ZINC's
// fixed type dictionary). Classes join by value (a class `into` lacks is an error).
std::vector<int32_t> append_graphs(NamedGraphs& into, NamedGraphs more);

// A new model's config for these graphs and inputs: `architecture` gives layers, heads, d (with_dim), norm,
// dropout and pooling; the rest follows from the data (vocabulary, node-label names, task, outputs, classes) and
// from `spec` (the kernel, degree scaling with it, LapPE and GCKN widths). Validated.
GraphitConfig graphit_config_for(const NamedGraphs& graphs, const GraphitInputSpec& spec,
                                 const GraphitConfig& architecture);

// The graphs of one training run: fold `fold` (1-based) of `folds` when there are folds (no test file then), else
// a validation split of every graph (graphit_validation_split: `val_fraction`, `seed`) and, when `test` is given,
// its graphs appended to `graphs` (append_graphs) as the test set.
struct GraphitRunSplit {
  std::vector<int32_t> train, val, test;
};
GraphitRunSplit graphit_run_split(NamedGraphs& graphs, const std::vector<GraphFold>& folds, int fold,
                                  double val_fraction, uint64_t seed, NamedGraphs* test = nullptr);

// The source settings as `model` reads data: its task and its atom typing, so that molecules become the graphs it
// was trained on. Settings given that contradict the model are refused rather than overridden.
GraphSource source_for_model(GraphSource source, const GraphitModel& model);

// Graphs to run a model on, with what is known of them: a name, the class in the model's order (-1 unknown) or the
// regression target (NaN unknown).
struct LabelledGraphs {
  std::vector<Graph> graphs;
  std::vector<std::string> names;
  std::vector<int32_t> classes;
  std::vector<float> targets;
};
// SMILES strings as the model's molecules (typed as in training), targets and classes unknown.
LabelledGraphs molecules_for_model(const GraphitModel& model, const std::vector<std::string>& smiles);
// A dataset (source_for_model, load_named_graphs, map_to_vocabulary) with its classes mapped to the model's by
// name (unknown when the names differ); `only` >= 0 keeps graph `only` alone (an error when out of range).
LabelledGraphs dataset_for_model(const GraphitModel& model, const GraphSource& source, int only = -1);

}  // namespace inductive
