// native/cli/graphit_data.h - the `graphit` commands' dataset flags, mapped onto core's GraphSource
// (inductive/graphit_data.h, which reads the data and documents the conventions).
//
//   --tu DIR [--name NAME] [--node-label-names C,N,O,...] [--class-names ...]     a TU benchmark dataset
//   --smiles-csv FILE --label-column COL [--smiles-column smiles] [--atom-types element|element-charge]
//   --task regression --smiles-csv FILE --target-column COL [...]                  molecules with a real target
// Single graphs (predict / attention): --smiles S, or a dataset and --graph I (0-based). predict and attention
// take the task and the atom typing from the model (--task / --atom-types, when given, must agree with it).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "inductive/graphit_data.h"

namespace inductive::cli {

// The flags bind to `source` directly; only --task and --atom-types need parsing (graph_source).
struct GraphDataArgs {
  GraphSource source;
  std::string task;        // "classification" | "regression"; empty: classification (predict: the model's)
  std::string atom_types;  // "element" | "element-charge"; empty: element (predict: the model's)
};
void add_graph_data_options(CLI::App* cmd, GraphDataArgs& args);

// The flags as core's GraphSource; a bad --task or --atom-types is an Error{kInvalidArgument} naming the flag.
GraphSource graph_source(const GraphDataArgs& args);

}  // namespace inductive::cli
