// native/cli/graphit_data.cpp - see graphit_data.h.
#include "graphit_data.h"

#include "inductive/error.h"

namespace inductive::cli {

void add_graph_data_options(CLI::App* cmd, GraphDataArgs& a) {
  GraphSource& s = a.source;
  auto* tu = cmd->add_option("--tu", s.tu, "TU dataset directory (NAME_A.txt, NAME_graph_indicator.txt, ...)");
  cmd->add_option("--name", s.name, "TU dataset name (default: the directory's name without 'tu-')")->needs(tu);
  auto* csv = cmd->add_option("--smiles-csv", s.smiles_csv, "Molecules: CSV with a header, SMILES and label columns");
  tu->excludes(csv);
  cmd->add_option("--smiles-column", s.smiles_column, "SMILES column of --smiles-csv")->capture_default_str();
  cmd->add_option("--label-column", s.label_column, "Label column of --smiles-csv (integer classes)");
  cmd->add_option("--task", a.task, "classification | regression (default: classification; predict: the model's)");
  cmd->add_option("--target-column", s.target_column, "Regression target column of --smiles-csv (real values)");
  cmd->add_option("--atom-types", a.atom_types,
                  "Molecules: node labels = element | element-charge (symbol + formal charge: C, N+, O-); "
                  "default element; predict: the model's");
  cmd->add_option("--node-label-names", s.node_label_names, "Names of the TU node labels, in value order")
      ->delimiter(',')
      ->needs(tu);
  cmd->add_option("--class-names", s.class_names, "Names of the graph classes, in value order")->delimiter(',');
}

GraphSource graph_source(const GraphDataArgs& a) {
  GraphSource s = a.source;
  if (!a.task.empty()) s.task = parse_enum(kGraphitTasks, a.task, "--task");
  if (!a.atom_types.empty()) {
    try {
      s.atom_typing = parse_atom_typing(a.atom_types);
    } catch (const Error& e) {
      throw Error(e.code(), std::string("--atom-types: ") + e.what());
    }
  }
  return s;
}

}  // namespace inductive::cli
