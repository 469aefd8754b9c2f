// GraphiT's datasets, named as models name things, and what runs make of them (see inductive/graphit_data.h).
#include "inductive/graphit_data.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

#include "inductive/error.h"
#include "inductive/files.h"
#include "inductive/graphit_protocol.h"

namespace inductive {

namespace {

// Settings that contradict each other, refused before any file is read.
void check_source(const GraphSource& a) {
  if (a.atom_typing) {
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

// A TU dataset's name when none is given: the folder's last component without a "tu-" prefix.
std::string tu_name(const GraphSource& a) {
  if (!a.name.empty()) return a.name;
  std::string dir = a.tu;
  while (!dir.empty() && dir.back() == '/') dir.pop_back();
  std::string name = dir.substr(dir.find_last_of('/') == std::string::npos ? 0 : dir.find_last_of('/') + 1);
  if (name.rfind("tu-", 0) == 0) name = name.substr(3);
  return name;
}

}  // namespace

NamedGraphs load_named_graphs(const GraphSource& a) {
  check_source(a);
  NamedGraphs out;
  if (!a.tu.empty()) {
    const std::string name = tu_name(a);
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
    const AtomTyping typing = a.atom_typing.value_or(AtomTyping::kElement);
    MoleculeDataset m;
    if (a.regression()) {
      INDUCTIVE_CHECK(!a.target_column.empty(), ErrorCode::kInvalidArgument,
                      "--task regression needs --target-column COL (the real-valued column of --smiles-csv)");
      m = parse_molecule_regression_csv(read_file_text(a.smiles_csv), a.smiles_column, a.target_column, a.smiles_csv,
                                        {}, typing);
      out.targets = std::move(m.targets);
      out.regression = true;
    } else {
      INDUCTIVE_CHECK(!a.label_column.empty(), ErrorCode::kInvalidArgument,
                      "--smiles-csv needs --label-column (classes) or --task regression --target-column (values)");
      m = parse_molecule_csv(read_file_text(a.smiles_csv), a.smiles_column, a.label_column, a.smiles_csv, {}, typing);
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
  // Classes by the value written in the files (the names may differ: class_names names the first file's).
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

GraphitConfig graphit_config_for(const NamedGraphs& g, const GraphitInputSpec& spec, const GraphitConfig& a) {
  GraphitConfig c = GraphitConfig::with_dim(a.d, a.layers, a.heads);
  c.vocab = g.data.n_node_labels();
  c.node_labels = g.node_label_names;
  c.has_graph = true;
  c.graph = spec;
  c.kernel = spec.kernel;
  c.degree_scaling = spec.kernel;  // the reference scales attention by node degrees exactly when a kernel is used
  c.pe_dim = spec.lap_pe;
  c.path_dim = spec.gckn ? spec.gckn_options.path_size * spec.gckn_options.n_filters : 0;
  c.norm = a.norm;
  c.dropout = a.dropout;
  c.pooling = a.pooling;
  if (g.regression) {
    c.task = GraphitTask::kRegression;
    c.outputs = 1;
  } else {
    c.outputs = g.data.n_classes();
    c.class_labels = g.class_names;
  }
  c.validate();
  return c;
}

GraphitRunSplit graphit_run_split(NamedGraphs& g, const std::vector<GraphFold>& folds, int fold, double val_fraction,
                                  uint64_t seed, NamedGraphs* test) {
  GraphitRunSplit s;
  if (!folds.empty()) {
    INDUCTIVE_CHECK(test == nullptr, ErrorCode::kInvalidArgument,
                    "--test-csv and --folds both give a test set: use one");
    INDUCTIVE_CHECK(fold >= 1 && fold <= static_cast<int>(folds.size()), ErrorCode::kInvalidArgument,
                    "--fold must be in [1, ", folds.size(), "]: got ", fold);
    s.train = folds[fold - 1].train;
    s.val = folds[fold - 1].val;
    s.test = folds[fold - 1].test;
    return s;
  }
  graphit_validation_split(g.data, g.regression, g.class_names, val_fraction, seed, s.train, s.val);
  if (test) s.test = append_graphs(g, std::move(*test));
  return s;
}

GraphSource source_for_model(GraphSource d, const GraphitModel& model) {
  const GraphitConfig& c = model.config;
  INDUCTIVE_CHECK(!d.task || *d.task == c.task, ErrorCode::kInvalidArgument, "--task ",
                  d.task ? enum_name(kGraphitTasks, *d.task) : "", ": the model was trained for ",
                  enum_name(kGraphitTasks, c.task));
  d.task = c.task;
  const AtomTyping typing = c.has_graph ? c.graph.atom_typing : AtomTyping::kElement;
  INDUCTIVE_CHECK(!d.atom_typing || *d.atom_typing == typing, ErrorCode::kInvalidArgument, "--atom-types ",
                  d.atom_typing ? atom_typing_name(*d.atom_typing) : "", ": the model types atoms as ",
                  atom_typing_name(typing), " (molecules are read as in training)");
  if (d.tu.empty()) d.atom_typing = typing;  // a TU dataset has its own node labels
  return d;
}

LabelledGraphs molecules_for_model(const GraphitModel& model, const std::vector<std::string>& smiles) {
  LabelledGraphs in;
  for (const std::string& s : smiles) {
    in.graphs.push_back(model.molecule_graph(parse_smiles(s)));
    in.names.push_back(s);
    in.classes.push_back(-1);
    in.targets.push_back(std::numeric_limits<float>::quiet_NaN());
  }
  return in;
}

LabelledGraphs dataset_for_model(const GraphitModel& model, const GraphSource& source, int only) {
  NamedGraphs g = load_named_graphs(source_for_model(source, model));
  map_to_vocabulary(g, model.config.node_labels);
  INDUCTIVE_CHECK(only < g.data.n_graphs(), ErrorCode::kInvalidArgument, "--graph ", only, " is not in [0, ",
                  g.data.n_graphs(), ")");
  // Classes by name when the dataset's names match the model's, else unknown.
  std::vector<int32_t> class_map(g.class_names.size(), -1);
  for (size_t c = 0; c < g.class_names.size(); ++c)
    for (size_t m = 0; m < model.config.class_labels.size(); ++m)
      if (g.class_names[c] == model.config.class_labels[m]) class_map[c] = static_cast<int32_t>(m);
  LabelledGraphs in;
  for (int i = 0; i < g.data.n_graphs(); ++i) {
    if (only >= 0 && i != only) continue;
    in.graphs.push_back(g.data.graphs[i]);
    in.names.push_back(g.smiles.empty() ? g.source + " graph " + std::to_string(i) : g.smiles[i]);
    in.classes.push_back(g.data.graphs[i].label >= 0 ? class_map[g.data.graphs[i].label] : -1);
    in.targets.push_back(g.regression ? g.targets[i] : std::numeric_limits<float>::quiet_NaN());
  }
  return in;
}

}  // namespace inductive
