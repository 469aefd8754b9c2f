// native/cli/graphit_data.cpp - see graphit_data.h.
#include "graphit_data.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>

#include "inductive/error.h"
#include "inductive/model_file.h"
#include "inductive/smiles.h"

namespace inductive::cli {

void add_graph_data_options(CLI::App* cmd, GraphDataArgs& a) {
  auto* tu = cmd->add_option("--tu", a.tu, "TU dataset directory (NAME_A.txt, NAME_graph_indicator.txt, ...)");
  cmd->add_option("--name", a.name, "TU dataset name (default: the directory's name without 'tu-')")->needs(tu);
  auto* csv = cmd->add_option("--smiles-csv", a.smiles_csv, "Molecules: CSV with a header, SMILES and label columns");
  tu->excludes(csv);
  cmd->add_option("--smiles-column", a.smiles_column, "SMILES column of --smiles-csv")->capture_default_str();
  cmd->add_option("--label-column", a.label_column, "Label column of --smiles-csv (integer classes)");
  cmd->add_option("--task", a.task, "classification | regression (default: classification; predict: the model's)");
  cmd->add_option("--target-column", a.target_column, "Regression target column of --smiles-csv (real values)");
  cmd->add_option("--atom-types", a.atom_types,
                  "Molecules: node labels = element | element-charge (symbol + formal charge: C, N+, O-); "
                  "default element; predict: the model's");
  cmd->add_option("--node-label-names", a.node_label_names, "Names of the TU node labels, in value order")
      ->delimiter(',')
      ->needs(tu);
  cmd->add_option("--class-names", a.class_names, "Names of the graph classes, in value order")->delimiter(',');
}

namespace {

// Options that contradict each other, refused before any file is read.
void check_data_args(const GraphDataArgs& a) {
  INDUCTIVE_CHECK(a.task.empty() || a.task == "classification" || a.task == "regression", ErrorCode::kInvalidArgument,
                  "--task must be classification or regression: got '", a.task, "'");
  if (!a.atom_types.empty()) {
    try {
      parse_atom_typing(a.atom_types);
    } catch (const Error& e) {
      throw Error(e.code(), std::string("--atom-types: ") + e.what());
    }
    INDUCTIVE_CHECK(a.tu.empty(), ErrorCode::kInvalidArgument,
                    "--atom-types types the atoms of molecules (--smiles-csv, --smiles); a TU dataset has its own "
                    "node labels");
  }
  if (a.regression()) {
    INDUCTIVE_CHECK(a.tu.empty(), ErrorCode::kInvalidArgument,
                    "--task regression reads molecules with real-valued targets (--smiles-csv FILE --target-column "
                    "COL), not a TU dataset");
    INDUCTIVE_CHECK(a.label_column.empty(), ErrorCode::kInvalidArgument,
                    "--label-column names integer classes; with --task regression name the target with "
                    "--target-column");
    INDUCTIVE_CHECK(a.class_names.empty(), ErrorCode::kInvalidArgument,
                    "--class-names names classes; --task regression has none");
  } else {
    INDUCTIVE_CHECK(a.target_column.empty(), ErrorCode::kInvalidArgument,
                    "--target-column is for --task regression (classification reads --label-column)");
  }
}

}  // namespace

NamedGraphs load_graph_data(const GraphDataArgs& a) {
  check_data_args(a);
  NamedGraphs out;
  if (!a.tu.empty()) {
    std::string name = a.name;
    if (name.empty()) {
      std::string dir = a.tu;
      while (!dir.empty() && dir.back() == '/') dir.pop_back();
      name = dir.substr(dir.find_last_of('/') == std::string::npos ? 0 : dir.find_last_of('/') + 1);
      if (name.rfind("tu-", 0) == 0) name = name.substr(3);
    }
    out.data = read_tu_dataset(a.tu, name);
    out.source = a.tu;
    if (!a.node_label_names.empty()) {
      INDUCTIVE_CHECK(static_cast<int>(a.node_label_names.size()) == out.data.n_node_labels(),
                      ErrorCode::kInvalidArgument, "--node-label-names: ", a.node_label_names.size(), " names for ",
                      out.data.n_node_labels(), " node label values in ", name);
      out.node_label_names = a.node_label_names;
    } else {
      for (int64_t v : out.data.node_label_values) out.node_label_names.push_back(std::to_string(v));
    }
  } else {
    INDUCTIVE_CHECK(!a.smiles_csv.empty(), ErrorCode::kInvalidArgument,
                    "a dataset is required: --tu DIR or --smiles-csv FILE --label-column COL");
    const AtomTyping typing = parse_atom_typing(a.atom_types.empty() ? "element" : a.atom_types);
    MoleculeDataset m;
    if (a.regression()) {
      INDUCTIVE_CHECK(!a.target_column.empty(), ErrorCode::kInvalidArgument,
                      "--task regression needs --target-column COL (the real-valued column of --smiles-csv)");
      const std::vector<uint8_t> bytes = read_file_bytes(a.smiles_csv);
      m = parse_molecule_regression_csv(std::string(bytes.begin(), bytes.end()), a.smiles_column, a.target_column,
                                        a.smiles_csv, {}, typing);
      out.targets = std::move(m.targets);
      out.regression = true;
    } else {
      INDUCTIVE_CHECK(!a.label_column.empty(), ErrorCode::kInvalidArgument,
                      "--smiles-csv needs --label-column (classes) or --task regression --target-column (values)");
      const std::vector<uint8_t> bytes = read_file_bytes(a.smiles_csv);
      m = parse_molecule_csv(std::string(bytes.begin(), bytes.end()), a.smiles_column, a.label_column, a.smiles_csv, {},
                             typing);
    }
    out.atom_typing = typing;
    out.data = std::move(m.dataset);
    out.node_label_names = std::move(m.atom_types);
    out.smiles = std::move(m.smiles);
    out.source = a.smiles_csv;
  }
  if (out.regression) return out;
  if (!a.class_names.empty()) {
    INDUCTIVE_CHECK(static_cast<int>(a.class_names.size()) == out.data.n_classes(), ErrorCode::kInvalidArgument,
                    "--class-names: ", a.class_names.size(), " names for ", out.data.n_classes(), " classes in ",
                    out.source);
    out.class_names = a.class_names;
  } else {
    for (int64_t v : out.data.class_values) out.class_names.push_back(std::to_string(v));
  }
  return out;
}

void map_to_vocabulary(NamedGraphs& g, const std::vector<std::string>& vocabulary) {
  std::map<std::string, int32_t> index;
  for (size_t i = 0; i < vocabulary.size(); ++i) index[vocabulary[i]] = static_cast<int32_t>(i);
  std::vector<int32_t> remap(g.node_label_names.size(), -1);
  for (size_t v = 0; v < g.node_label_names.size(); ++v) {
    auto it = index.find(g.node_label_names[v]);
    if (it != index.end()) remap[v] = it->second;
  }
  for (int gi = 0; gi < g.data.n_graphs(); ++gi) {
    for (int32_t& l : g.data.graphs[gi].node_labels) {
      if (remap[l] < 0) {
        std::string known;
        for (const auto& s : vocabulary) known += (known.empty() ? "" : ", ") + s;
        INDUCTIVE_FAIL(ErrorCode::kInvalidArgument, g.source, ": graph ", gi, " has node label '",
                       g.node_label_names[l], "', which the model does not know (its labels: ", known, ")");
      }
      l = remap[l];
    }
  }
  g.node_label_names = vocabulary;
  g.data.node_label_values.resize(vocabulary.size());
  std::iota(g.data.node_label_values.begin(), g.data.node_label_values.end(), 0);
}

std::vector<int32_t> append_graphs(NamedGraphs& into, NamedGraphs more) {
  INDUCTIVE_CHECK(into.regression == more.regression, ErrorCode::kInvalidArgument, more.source, " and ", into.source,
                  " hold different tasks");
  std::vector<std::string> vocabulary = into.node_label_names;
  for (const std::string& name : more.node_label_names)
    if (std::find(vocabulary.begin(), vocabulary.end(), name) == vocabulary.end()) vocabulary.push_back(name);
  if (vocabulary.size() != into.node_label_names.size()) map_to_vocabulary(into, vocabulary);
  map_to_vocabulary(more, vocabulary);
  // Classes by the value written in the files (the names may differ: --class-names names the first file's).
  const std::vector<int64_t>& values = into.data.class_values;
  std::vector<int32_t> class_map(more.data.class_values.size(), -1);
  for (size_t c = 0; c < more.data.class_values.size(); ++c) {
    const auto it = std::find(values.begin(), values.end(), more.data.class_values[c]);
    INDUCTIVE_CHECK(it != values.end(), ErrorCode::kInvalidArgument, more.source, ": class ", more.data.class_values[c],
                    " does not occur in ", into.source);
    class_map[c] = static_cast<int32_t>(it - values.begin());
  }
  std::vector<int32_t> index;
  for (int i = 0; i < more.data.n_graphs(); ++i) {
    Graph& gr = more.data.graphs[i];
    if (gr.label >= 0) gr.label = class_map[gr.label];
    index.push_back(into.data.n_graphs());
    into.data.graphs.push_back(std::move(gr));
    if (!more.smiles.empty()) into.smiles.push_back(more.smiles[i]);
    if (more.regression) into.targets.push_back(more.targets[i]);
  }
  return index;
}

}  // namespace inductive::cli
