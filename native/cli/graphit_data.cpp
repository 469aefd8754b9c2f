// native/cli/graphit_data.cpp - see graphit_data.h.
#include "graphit_data.h"

#include <algorithm>
#include <map>

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
  cmd->add_option("--node-label-names", a.node_label_names, "Names of the TU node labels, in value order")
      ->delimiter(',')
      ->needs(tu);
  cmd->add_option("--class-names", a.class_names, "Names of the graph classes, in value order")->delimiter(',');
}

NamedGraphs load_graph_data(const GraphDataArgs& a) {
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
    INDUCTIVE_CHECK(!a.label_column.empty(), ErrorCode::kInvalidArgument, "--smiles-csv needs --label-column");
    const std::vector<uint8_t> bytes = read_file_bytes(a.smiles_csv);
    MoleculeDataset m = parse_molecule_csv(std::string(bytes.begin(), bytes.end()), a.smiles_column, a.label_column,
                                           a.smiles_csv);
    out.data = std::move(m.dataset);
    out.node_label_names = std::move(m.atom_types);
    out.smiles = std::move(m.smiles);
    out.source = a.smiles_csv;
  }
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
}

GraphitDataset graphit_subset(const NamedGraphs& g, const PrecomputedDataset& pre, const GraphitConfig& config,
                              const std::vector<int32_t>& index) {
  GraphitDataset out;
  for (int i : index) {
    out.graphs.push_back(make_graphit_graph(g.data.graphs[i], pre.graphs[i], config));
    out.classes.push_back(g.data.graphs[i].label);
  }
  return out;
}

}  // namespace inductive::cli
