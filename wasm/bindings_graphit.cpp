// Embind bindings of GraphiT (core: inductive/graphit.h, inductive/smiles.h, thesis ch. 3). Translation only: a
// GraphitHandle owns one GraphitModel; a molecule (SMILES) or a graph (node count, edge list, node-label names)
// becomes a Graph with the core's parser / Graph::from_edges, the model prepares it (kernel on the graph, as in
// training) and predicts or explains it. `analyse*` keeps the arrays of its last result in the handle (read them
// at resultAddress(k), then releaseResult()), since their sizes are known only after parsing. Errors are data
// (guarded.h).
#include <emscripten/bind.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "camel_case.h"
#include "guarded.h"
#include "model_handle.h"
#include "inductive/graphit_head_fit.h"
#include "inductive/error.h"
#include "inductive/graph.h"
#include "inductive/graphit.h"
#include "inductive/logistic.h"
#include "inductive/model_file.h"
#include "inductive/smiles.h"
#include "inductive/version.h"

namespace {

using inductive::ErrorCode;
using inductive::wasm::guarded;
using inductive::wasm::ptr;
using nlohmann::json;

// The molecule as the TS layer describes it: atoms (symbols, RDKit's order), bonds [[u, v]] in the order the
// string closes them, bond orders (1..4, 5 = aromatic), aromatic flags, formal charges.
json molecule_json(const inductive::Molecule& m) {
  json bonds = json::array();
  for (const auto& b : m.bonds) bonds.push_back({b[0], b[1]});
  return json{{"atoms", m.symbols},
              {"bonds", bonds},
              {"bondOrders", m.bond_orders},
              {"aromatic", m.aromatic},
              {"charges", m.charges}};
}

// A message prefixed with where it happened, same code.
[[noreturn]] void rethrow_with(const std::string& prefix, const inductive::Error& e) {
  throw inductive::Error(e.code(), prefix + e.what());
}

// The names of a graph's node labels: a JSON array of strings (the TS layer writes it).
std::vector<std::string> label_names(const std::string& text) {
  const json j = json::parse(text);
  INDUCTIVE_CHECK(j.is_array(), ErrorCode::kInvalidArgument, "graph: labels must be an array of strings");
  std::vector<std::string> out;
  out.reserve(j.size());
  for (const auto& v : j) {
    INDUCTIVE_CHECK(v.is_string(), ErrorCode::kInvalidArgument, "graph: labels must be an array of strings");
    out.push_back(v.get<std::string>());
  }
  return out;
}

class GraphitHandle : private inductive::wasm::ModelHandle<inductive::GraphitModel> {
 public:
  bool load(uintptr_t address, size_t size) {
    return load_file(address, size, [](const inductive::GraphitModel& m) {
      INDUCTIVE_CHECK(m.config.has_graph, ErrorCode::kBadModelFile,
                      "graphit model: its config has no 'graph' section, so it cannot prepare new graphs");
    });
  }

  // {"config", "nodeLabels", "classes", "task", "outputs", "layers", "heads", "dim", "kernel" (description or
  // null), "formatVersion", "producer"}; "" when nothing is loaded.
  std::string describe() const {
    if (!loaded_) return "";
    const inductive::GraphitConfig& c = model_.config;
    std::vector<std::string> classes = c.class_labels;
    if (c.classification() && classes.empty())
      for (int k = 0; k < c.outputs; ++k) classes.push_back(std::to_string(k));
    return json{{"config", c.to_json()},
                {"nodeLabels", c.node_labels},
                {"classes", classes},
                {"task", inductive::enum_name(inductive::kGraphitTasks, c.task)},
                {"outputs", c.outputs},
                {"layers", c.layers},
                {"heads", c.heads},
                {"dim", c.d},
                {"kernel", c.kernel && c.graph.kernel ? json(c.graph.kernel_options.describe()) : json(nullptr)},
                {"formatVersion", format_version_},
                {"producer", producer_}}
        .dump();
  }

  // Probabilities (classification; regression: the outputs) of the molecules of a JSON array of SMILES, into
  // [count, outputs] floats at `out`.
  bool predict_smiles(const std::string& smiles_json, int first_index, uintptr_t out) {
    return guarded([&] {
      check_loaded("predictSmiles");
      write(outputs(prepare_smiles(json::parse(smiles_json), "predictSmiles", {}, first_index)), out);
    });
  }

  // A new model into `out`: this one with its output layer refitted on labelled molecules (core
  // refit_graphit_head; the encoder and hidden layer frozen). `smiles_json`: a JSON array of SMILES; labels: count
  // int32 class indices at `labels`; `options_json`: {"classes": [names], "lambda", "minPerClass", "maxFolds",
  // "maxIter", "tol"}. Returns the fit report as JSON ("" on failure); `progress` may cancel (js_progress).
  std::string refit_head(const std::string& smiles_json, uintptr_t labels, int count, const std::string& options_json,
                         GraphitHandle& out, emscripten::val progress) {
    std::string report;
    guarded([&] {
      check_loaded("refitHead");
      const json list = json::parse(smiles_json);
      INDUCTIVE_CHECK(static_cast<int>(list.size()) == count, ErrorCode::kShapeMismatch, "refitHead: ", list.size(),
                      " molecules for ", count, " labels; expected one label per molecule");
      const auto report_progress = inductive::wasm::js_progress(progress, "refitHead");
      const std::vector<inductive::GraphitGraph> graphs = prepare_smiles(list, "refitHead", report_progress);
      const json o = json::parse(options_json);
      std::vector<std::string> classes = o.at("classes").get<std::vector<std::string>>();
      inductive::HeadFitOptions options;  // keys left out keep core's defaults
      options.lambda = o.value("lambda", options.lambda);
      options.min_per_class = o.value("minPerClass", options.min_per_class);
      options.max_folds = o.value("maxFolds", options.max_folds);
      options.logistic.max_iter = o.value("maxIter", options.logistic.max_iter);
      options.logistic.tol = o.value("tol", options.logistic.tol);
      options.class_names = classes;
      options.progress = report_progress;
      const std::vector<int32_t> y(ptr<const int32_t>(labels), ptr<const int32_t>(labels) + count);
      inductive::GraphitHeadRefit r = inductive::refit_graphit_head(model_, graphs, y, classes, options);
      out.adopt(std::move(r.model));
      report = inductive::wasm::camel_case_keys(inductive::head_fit_report(r.fit)).dump();
    });
    return report;
  }

  bool serialize() { return serialize_model(); }
  uintptr_t bytes_address() const { return model_bytes_address(); }
  size_t bytes_size() const { return model_bytes_size(); }
  void release_bytes() { release_model_bytes(); }

  // Probabilities of one graph: n nodes, edges [n_edges, 2] int32 at `edges`, node-label names (JSON), into
  // [outputs] floats at `out`.
  bool predict_graph(int n, uintptr_t edges, int n_edges, const std::string& labels, uintptr_t out) {
    return guarded([&] {
      check_loaded("predictGraph");
      write(outputs({model_.prepare(graph(n, edges, n_edges, labels, "predictGraph"))}), out);
    });
  }

  // Explains one molecule: the JSON summary ("" on failure); the arrays stay in the handle (resultAddress).
  std::string analyse_smiles(const std::string& smiles) {
    std::string text;
    guarded([&] {
      check_loaded("attention");
      const inductive::Molecule m = inductive::parse_smiles(smiles);
      const inductive::Graph g = model_.molecule_graph(m);
      json summary = analyse(g);
      json mol = molecule_json(m);
      for (auto& item : mol.items()) summary[item.key()] = item.value();
      text = summary.dump();
    });
    return text;
  }

  std::string analyse_graph(int n, uintptr_t edges, int n_edges, const std::string& labels) {
    std::string text;
    guarded([&] {
      check_loaded("attention");
      const inductive::Graph g = graph(n, edges, n_edges, labels, "attention");
      json summary = analyse(g);
      json names = json::array();
      for (int32_t v : g.node_labels) names.push_back(model_.config.node_labels.at(static_cast<size_t>(v)));
      summary["atoms"] = names;
      summary["bonds"] = g.edges;
      text = summary.dump();
    });
    return text;
  }

  // Arrays of the last analyse: 0 probabilities [outputs], 1 attention [layers, n, n], 2 saliency [layers, n],
  // 3 mean saliency [n], 4 kernel [n, n] (0 when the model has none). Valid until the next call on this handle.
  uintptr_t result_address(int which) const {
    if (which < 0 || which >= static_cast<int>(result_.size()) || result_[which].empty()) return 0;
    return reinterpret_cast<uintptr_t>(result_[which].data());
  }

  void release_result() {
    for (auto& r : result_) std::vector<float>().swap(r);
  }

 private:
  // The model inputs of a JSON array of SMILES, prepared across the module's threads (GraphitModel::prepare_many);
  // errors name the molecule by its index in the caller's whole list ("<where>: molecule first_index + i ('...'):
  // ..."). `progress` (optional) on this thread, stage "prepare", about every 16 molecules and at the end.
  std::vector<inductive::GraphitGraph> prepare_smiles(const json& list, const std::string& where,
                                                      const inductive::ProgressFn& progress = {},
                                                      int first_index = 0) const {
    std::vector<std::string> smiles;
    smiles.reserve(list.size());
    for (const json& s : list) smiles.push_back(s.get<std::string>());
    const int count = static_cast<int>(smiles.size());
    double reported = 0;
    std::vector<inductive::GraphitGraph> graphs = model_.prepare_many(
        count, [&](int i) { return molecule_graph(smiles[static_cast<size_t>(i)]); },
        [&](int i) {
          return where + ": molecule " + std::to_string(first_index + i) + " ('" + smiles[static_cast<size_t>(i)] +
                 "')";
        },
        [&](const char* stage, double fraction) {
          if (progress && (fraction - reported) * count >= 16) {
            reported = fraction;
            progress(stage, fraction);
          }
        });
    if (progress && count > 0) progress("prepare", 1.0);
    return graphs;
  }

  // Typed as the model's training molecules were (its config's atom typing): the core decides, not the binding.
  inductive::Graph molecule_graph(const std::string& smiles) const {
    return model_.molecule_graph(inductive::parse_smiles(smiles));
  }

  inductive::Graph graph(int n, uintptr_t edges, int n_edges, const std::string& labels, const char* where) const {
    try {
      INDUCTIVE_CHECK(n_edges >= 0, ErrorCode::kInvalidArgument, "graph: negative edge count ", n_edges);
      const int32_t* e = ptr<const int32_t>(edges);
      std::vector<std::array<int32_t, 2>> pairs(static_cast<size_t>(n_edges));
      for (int k = 0; k < n_edges; ++k) pairs[k] = {e[2 * k], e[2 * k + 1]};
      const std::vector<std::string> names = label_names(labels);
      INDUCTIVE_CHECK(static_cast<int>(names.size()) == n, ErrorCode::kShapeMismatch, "graph: ", names.size(),
                      " node labels for ", n, " nodes (one per node)");
      std::vector<int32_t> indices;
      try {
        indices = model_.label_indices(names);
      } catch (const inductive::Error& e) {
        std::string known;
        for (const auto& v : model_.config.node_labels) known += (known.empty() ? "" : ", ") + v;
        throw inductive::Error(e.code(), std::string(e.what()) + " (its labels: " + known + ")");
      }
      return inductive::Graph::from_edges(n, pairs, std::move(indices));
    } catch (const inductive::Error& e) {
      rethrow_with(std::string(where) + ": ", e);
    }
  }

  // Evaluation-mode outputs, softmax for classification.
  inductive::MatF outputs(const std::vector<inductive::GraphitGraph>& graphs) const {
    return model_.shown_outputs(graphs);
  }

  static void write(const inductive::MatF& m, uintptr_t address) {
    // Row-major [graphs, outputs] (MatF is row-major).
    if (address != 0) std::memcpy(ptr<float>(address), m.data(), sizeof(float) * static_cast<size_t>(m.size()));
  }

  // core's explanation (GraphitModel::explain, what `inductive graphit attention` writes), its arrays kept here.
  json analyse(const inductive::Graph& g) {
    release_result();
    inductive::GraphitModel::Explanation e = model_.explain(g);
    const bool has_kernel = !e.kernel.empty();
    json summary = {
        {"n", e.n},         {"layers", e.layers},         {"outputs", e.outputs.cols()}, {"kernel", has_kernel},
        {"edges", g.edges}, {"selfLoops", g.n_self_loops}};
    if (e.class_index >= 0) summary["classIndex"] = e.class_index;
    result_[0].assign(e.outputs.data(), e.outputs.data() + e.outputs.size());
    result_[1] = std::move(e.attention);
    result_[2] = std::move(e.saliency);
    result_[3] = std::move(e.mean_saliency);
    result_[4] = std::move(e.kernel);
    return summary;
  }

  std::vector<std::vector<float>> result_ = std::vector<std::vector<float>>(5);
};

// The molecule of a SMILES string as JSON (molecule_json); "" on failure.
std::string parse_smiles_json(const std::string& smiles) {
  std::string text;
  guarded([&] { text = molecule_json(inductive::parse_smiles(smiles)).dump(); });
  return text;
}

int max_graph_nodes() { return inductive::kMaxGraphitNodes; }

}  // namespace

EMSCRIPTEN_BINDINGS(inductive_graphit) {
  emscripten::class_<GraphitHandle>("GraphitHandle")
      .constructor<>()
      .function("load", &GraphitHandle::load)
      .function("describe", &GraphitHandle::describe)
      .function("predictSmiles", &GraphitHandle::predict_smiles)
      .function("predictGraph", &GraphitHandle::predict_graph)
      .function("analyseSmiles", &GraphitHandle::analyse_smiles)
      .function("analyseGraph", &GraphitHandle::analyse_graph)
      .function("resultAddress", &GraphitHandle::result_address)
      .function("releaseResult", &GraphitHandle::release_result)
      .function("refitHead", &GraphitHandle::refit_head)
      .function("serialize", &GraphitHandle::serialize)
      .function("bytesAddress", &GraphitHandle::bytes_address)
      .function("bytesSize", &GraphitHandle::bytes_size)
      .function("releaseBytes", &GraphitHandle::release_bytes);
  emscripten::function("parseSmiles", &parse_smiles_json);
  emscripten::function("maxGraphNodes", &max_graph_nodes);
}
