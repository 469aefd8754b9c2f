// The GraphiT model: prediction, attention maps, metrics, model-file round trip and schema (see inductive/graphit.h).
#include <algorithm>
#include <map>

#include "inductive/error.h"
#include "inductive/graphit.h"
#include "inductive/backend.h"
#include "inductive/logistic.h"
#include "inductive/parallel.h"

namespace inductive {

namespace {

void check_graph_size(int n, const char* what, const char* unit) {
  INDUCTIVE_CHECK(n <= kMaxGraphitNodes, ErrorCode::kInvalidArgument, "graphit: the ", what, " has ", n, " ", unit,
                  "; this build runs graphs of at most ", kMaxGraphitNodes, " ", unit,
                  " (dense kernels and attention: O(n^2) memory, O(n^3) time)");
}

}  // namespace

namespace {

// Parameter tensors then BatchNorm running statistics: everything a "graphit" file holds, in a fixed order.
std::vector<TensorSpec> graphit_tensors(const GraphitConfig& c) {
  std::vector<TensorSpec> t;
  GraphitParams shapes;
  shapes.layers.resize(c.layers);
  for (const auto& p : shapes.tensors(c)) t.push_back({p.name, DType::kF32, p.shape});
  if (c.norm == GraphitNorm::kBatch)
    for (int l = 0; l < c.layers; ++l)
      for (const char* k : {"norm1", "norm2"})
        for (const char* s : {"running_mean", "running_var"})
          t.push_back({"layers." + std::to_string(l) + "." + k + "." + s, DType::kF32, {c.d}});
  if (c.has_graph)
    for (const TensorSpec& g : c.graph.tensor_specs()) t.push_back(g);
  return t;
}

}  // namespace

ModelSchema graphit_model_schema() {
  ModelSchema schema;
  schema.model = "graphit";
  schema.validate_config = [](const nlohmann::json& config, int) { GraphitConfig::from_json(config); };
  schema.tensors = [](const nlohmann::json& config, int) { return graphit_tensors(GraphitConfig::from_json(config)); };
  return schema;
}

std::vector<std::pair<std::string, const float*>> GraphitModel::state_tensors() const {
  std::vector<std::pair<std::string, const float*>> t;
  for (int l = 0; l < static_cast<int>(norm_stats.size()); ++l) {
    const std::string pre = "layers." + std::to_string(l) + ".";
    const GraphitNormStats& s = norm_stats[l];
    INDUCTIVE_CHECK(s.mean1.size() == config.d && s.var1.size() == config.d && s.mean2.size() == config.d &&
                        s.var2.size() == config.d,
                    ErrorCode::kShapeMismatch, "graphit: running statistics of layer ", l,
                    " do not have d = ", config.d, " entries");
    t.push_back({pre + "norm1.running_mean", s.mean1.data()});
    t.push_back({pre + "norm1.running_var", s.var1.data()});
    t.push_back({pre + "norm2.running_mean", s.mean2.data()});
    t.push_back({pre + "norm2.running_var", s.var2.data()});
  }
  return t;
}

void register_graphit_model_kind() {
  static const bool once = (register_model_schema(graphit_model_schema()), true);
  (void)once;
}

ModelContents GraphitModel::to_contents() const {
  register_graphit_model_kind();  // write_model reads the bytes back, checked against the schema
  config.validate();
  ModelContents m;
  m.model = "graphit";
  m.config = config.to_json();
  std::map<std::string, std::pair<const float*, int64_t>> have;
  for (const auto& t : params.tensors(config)) have[t.name] = {t.data, t.size()};  // throws on a wrong shape
  for (const auto& [name, data] : state_tensors()) have[name] = {data, config.d};
  if (config.has_graph && config.graph.gckn) {
    INDUCTIVE_CHECK(
        gckn.dim() == config.path_dim && !gckn.layers().empty(), ErrorCode::kInvalidArgument,
        "graphit: the config uses GCKN path features but the model holds no fitted GCKN layer of dimension ",
        config.path_dim);
    for (const TensorData& t : gckn_tensors(gckn)) {
      int64_t size = 1;
      for (int64_t d : t.shape) size *= d;
      have[t.name] = {static_cast<const float*>(t.data), size};
    }
  }
  INDUCTIVE_CHECK(config.norm != GraphitNorm::kBatch || static_cast<int>(norm_stats.size()) == config.layers,
                  ErrorCode::kInvalidArgument, "graphit: BatchNorm model lacks running statistics");
  for (const TensorSpec& spec : graphit_tensors(config)) {
    auto it = have.find(spec.name);
    INDUCTIVE_CHECK(it != have.end(), ErrorCode::kInternal, "graphit: tensor ", spec.name, " missing");
    m.tensors.push_back({spec.name, DType::kF32, spec.shape, it->second.first});
  }
  return m;
}

std::vector<uint8_t> GraphitModel::to_bytes() const { return write_model(to_contents()); }

void GraphitModel::save(const std::string& path) const { save_model_file(path, to_contents()); }

GraphitModel GraphitModel::from_view(const ModelView& view) {
  INDUCTIVE_CHECK(view.model == "graphit", ErrorCode::kBadModelFile, "model file holds a '", view.model,
                  "' model, expected a graphit model");
  GraphitModel m;
  m.config = GraphitConfig::from_json(view.config);
  m.params = GraphitParams::zeros(m.config);
  for (auto& t : m.params.tensors(m.config)) {
    const float* src = view.f32(t.name, t.shape);
    std::copy(src, src + t.size(), t.data);
    INDUCTIVE_CHECK(Eigen::Map<const VecF>(t.data, t.size()).allFinite(), ErrorCode::kBadModelFile,
                    "graphit model: tensor ", t.name, " contains NaN or Inf");
  }
  if (m.config.has_graph && m.config.graph.gckn)
    m.gckn = gckn_from_view(view, m.config.graph.gckn_options, m.config.graph.gckn_feature_dim,
                            m.config.graph.gckn_options.use_node_attributes, "graphit model");
  if (m.config.norm == GraphitNorm::kBatch) {
    m.norm_stats.resize(m.config.layers);
    const int64_t d = m.config.d;
    for (int l = 0; l < m.config.layers; ++l) {
      const std::string pre = "layers." + std::to_string(l) + ".";
      auto read = [&](const std::string& name, VecF& v, bool positive) {
        v = Eigen::Map<const VecF>(view.f32(pre + name, {d}), d);
        INDUCTIVE_CHECK(v.allFinite() && (!positive || (v.array() >= 0).all()), ErrorCode::kBadModelFile,
                        "graphit model: ", pre, name, positive ? " must be finite and >= 0" : " contains NaN or Inf");
      };
      read("norm1.running_mean", m.norm_stats[l].mean1, false);
      read("norm1.running_var", m.norm_stats[l].var1, true);
      read("norm2.running_mean", m.norm_stats[l].mean2, false);
      read("norm2.running_var", m.norm_stats[l].var2, true);
    }
  }
  return m;
}

GraphitModel GraphitModel::from_bytes(const uint8_t* bytes, size_t size) {
  register_graphit_model_kind();
  return from_view(read_model(bytes, size));
}

GraphitModel GraphitModel::load(const std::string& path) {
  const std::vector<uint8_t> bytes = read_file_bytes(path);
  try {
    return from_bytes(bytes.data(), bytes.size());
  } catch (const Error& e) {
    throw Error(e.code(), path + ": " + e.what());
  }
}

std::vector<int32_t> GraphitModel::label_indices(const std::vector<std::string>& labels) const {
  INDUCTIVE_CHECK(!config.node_labels.empty(), ErrorCode::kInvalidArgument,
                  "graphit: this model stores no node-label vocabulary (input.node_labels is empty)");
  std::map<std::string, int32_t> index;
  for (size_t i = 0; i < config.node_labels.size(); ++i) index[config.node_labels[i]] = static_cast<int32_t>(i);
  std::vector<int32_t> out(labels.size());
  for (size_t i = 0; i < labels.size(); ++i) {
    auto it = index.find(labels[i]);
    INDUCTIVE_CHECK(it != index.end(), ErrorCode::kInvalidArgument, "graphit: node label '", labels[i], "' (node ", i,
                    ") is not in the model's vocabulary of ", config.node_labels.size(), " labels");
    out[i] = it->second;
  }
  return out;
}

Graph GraphitModel::molecule_graph(const Molecule& molecule) const {
  // A model without a graph section predates atom typing: its molecules were typed by element.
  const AtomTyping typing = config.has_graph ? config.graph.atom_typing : AtomTyping::kElement;
  check_graph_size(molecule.n_atoms(), "molecule", "atoms");
  return inductive::molecule_graph(molecule, config.node_labels, -1, typing);
}

MatF GraphitModel::predict(const std::vector<GraphitGraph>& graphs, int batch_size) const {
  INDUCTIVE_CHECK(batch_size >= 1, ErrorCode::kInvalidArgument, "graphit predict: batch size must be >= 1: got ",
                  batch_size);
  INDUCTIVE_CHECK(!graphs.empty(), ErrorCode::kInvalidArgument, "graphit predict: no graph given");
  const int n = static_cast<int>(graphs.size());
  MatF out(n, config.outputs);
  GraphitRunOptions outputs_only;
  outputs_only.keep_layers = false;
  const int batches = (n + batch_size - 1) / batch_size;
  const auto run_batch = [&](int b, GraphitCache& cache) {
    const int begin = b * batch_size, end = std::min(n, begin + batch_size);
    std::vector<int> idx;
    for (int g = begin; g < end; ++g) idx.push_back(g);
    out.middleRows(begin, end - begin) = forward(GraphitBatch::pack(config, graphs, idx), outputs_only, &cache);
  };
  // A forward pass in evaluation mode is per graph throughout (rows, heads, norms with their running statistics),
  // so batches are independent. With at least two batches a thread, each batch runs whole on one thread (forward's
  // own loops, nested, run on it) and the threads meet once at the end instead of at each of the dozens of loops a
  // batch's layers run: in the threaded wasm module every one of those ends was a wait on the other thread. Fewer
  // batches share out their rows (forward's loops). Each graph's outputs are the same bits either way.
  const int threads = parallel_threads();
  if (threads > 1 && batches >= 2 * threads) {
    // A batch that fails (a graph the model cannot take): the first failing batch's error, as the serial loop's.
    std::vector<GraphitCache> caches(static_cast<size_t>(threads));
    parallel_for_each_checked(
        batches, 1, [&](int b, int worker) { run_batch(b, caches[static_cast<size_t>(worker)]); }, [](int) {});
    return out;
  }
  GraphitCache cache;
  for (int b = 0; b < batches; ++b) run_batch(b, cache);
  return out;
}

MatF GraphitModel::shown_outputs(const std::vector<GraphitGraph>& graphs, Backend* backend) const {
  const MatF out = backend ? backend->graphit_predict(*this, graphs, 64) : predict(graphs);
  return config.classification() ? softmax_rows(out) : out;
}

GraphitModel::Explanation GraphitModel::explain(const Graph& g, Backend* backend) const {
  const GraphitGraph x = prepare(g);
  MatF raw;
  const Attention att = attention(x, backend, &raw);
  Explanation e;
  e.n = g.n_nodes;
  e.layers = static_cast<int>(att.layers.size());
  e.outputs = config.classification() ? softmax_rows(raw) : raw;  // as shown_outputs shows them
  for (int l = 0; l < e.layers; ++l) {
    e.attention.insert(e.attention.end(), att.layers[l].data(), att.layers[l].data() + att.layers[l].size());
    e.saliency.insert(e.saliency.end(), att.saliency[l].data(), att.saliency[l].data() + e.n);
  }
  e.mean_saliency.assign(att.mean_saliency.data(), att.mean_saliency.data() + e.n);
  if (config.kernel && x.kernel.size() == static_cast<int64_t>(e.n) * e.n)
    e.kernel.assign(x.kernel.data(), x.kernel.data() + x.kernel.size());
  if (config.classification()) {
    Eigen::Index arg = 0;
    e.outputs.row(0).maxCoeff(&arg);
    e.class_index = static_cast<int>(arg);
  }
  return e;
}

std::vector<MatF> GraphitModel::attention_maps(const GraphitGraph& graph, MatF* outputs) const {
  const std::vector<GraphitGraph> one{graph};
  // The copy keeps `one` self-contained; kernels point into it.
  const GraphitBatch b = GraphitBatch::pack(config, one);
  GraphitCache cache;
  MatF out = forward(b, {}, &cache);
  if (outputs) *outputs = std::move(out);
  const int n = graph.num_nodes, H = config.heads;
  std::vector<MatF> maps;
  for (const GraphitCache::Layer& ly : cache.layers) {
    MatF avg = MatF::Zero(n, n);
    // probs holds A^T per head (row j: column j of A)
    for (int h = 0; h < H; ++h) avg += CMapF(ly.probs.data() + static_cast<int64_t>(h) * n * n, n, n).transpose();
    avg /= static_cast<float>(H);
    maps.push_back(std::move(avg));
  }
  return maps;
}

GraphitModel::Attention GraphitModel::attention(const GraphitGraph& graph, Backend* backend, MatF* outputs) const {
  const int n = graph.num_nodes;
  Attention a;
  a.layers = backend ? backend->graphit_attention_maps(*this, graph, outputs) : attention_maps(graph, outputs);
  a.mean_saliency = VecF::Zero(n);
  for (const MatF& avg : a.layers) {
    VecF sal = avg.colwise().sum().transpose() / static_cast<float>(n);
    a.mean_saliency += sal;
    a.saliency.push_back(std::move(sal));
  }
  if (!a.layers.empty()) a.mean_saliency /= static_cast<float>(a.layers.size());
  return a;
}

double graphit_accuracy(const Eigen::Ref<const MatF>& outputs, const std::vector<int32_t>& classes) {
  INDUCTIVE_CHECK(outputs.rows() == static_cast<Eigen::Index>(classes.size()) && outputs.rows() > 0,
                  ErrorCode::kShapeMismatch, "graphit accuracy: ", outputs.rows(), " outputs for ", classes.size(),
                  " labels");
  int64_t right = 0;
  for (Eigen::Index i = 0; i < outputs.rows(); ++i) {
    Eigen::Index k;
    outputs.row(i).maxCoeff(&k);
    right += k == classes[i];
  }
  return static_cast<double>(right) / static_cast<double>(outputs.rows());
}

double graphit_mae(const Eigen::Ref<const MatF>& outputs, const std::vector<float>& values) {
  INDUCTIVE_CHECK(outputs.size() == static_cast<Eigen::Index>(values.size()) && outputs.size() > 0,
                  ErrorCode::kShapeMismatch, "graphit mae: ", outputs.size(), " outputs for ", values.size(),
                  " targets");
  double s = 0;
  for (Eigen::Index i = 0; i < outputs.rows(); ++i)
    for (Eigen::Index k = 0; k < outputs.cols(); ++k)
      s += std::fabs(static_cast<double>(outputs(i, k)) - values[i * outputs.cols() + k]);
  return s / static_cast<double>(outputs.size());
}

GraphitGraph make_graphit_graph(const Graph& g, const PrecomputedGraph& pre, const GraphitConfig& config) {
  GraphitGraph out;
  out.num_nodes = g.n_nodes;
  out.node_labels = g.node_labels;
  const std::vector<int32_t> deg = g.degrees();
  out.degree = VecF(g.n_nodes);
  for (int v = 0; v < g.n_nodes; ++v) out.degree[v] = static_cast<float>(deg[v]);
  if (config.features > 0) {
    INDUCTIVE_CHECK(g.node_attributes.cols() == config.features, ErrorCode::kShapeMismatch, "graphit: the model ",
                    "takes ", config.features, " node attributes, the graph has ", g.node_attributes.cols());
    out.node_features = g.node_attributes;
  }
  auto need = [&](const MatF& m, const char* what) {
    INDUCTIVE_CHECK(m.rows() == g.n_nodes, ErrorCode::kInvalidArgument, "graphit: the model needs the ", what,
                    " of every graph; it was not precomputed");
  };
  if (config.kernel) {
    need(pre.kernel, "kernel");
    out.kernel = pre.kernel;
  }
  if (config.pe_dim > 0) {
    need(pre.lap_pe, "LapPE");
    out.pe = pre.lap_pe;
  }
  if (config.path_dim > 0) {
    need(pre.gckn, "GCKN path features");
    out.path_features = pre.gckn;
  }
  return out;
}

std::vector<GraphitGraph> GraphitModel::prepare_many(int count, const std::function<Graph(int)>& graph_of,
                                                     const std::function<std::string(int)>& name_of,
                                                     const ProgressFn& progress) const {
  std::vector<GraphitGraph> graphs(static_cast<size_t>(std::max(0, count)));
  // Chunks of 4: a molecule takes tens of microseconds, a lock per item would show.
  parallel_for_each_checked(
      count, 4,
      [&](int i) {
        try {
          graphs[static_cast<size_t>(i)] = prepare(graph_of(i));
        } catch (const Error& e) {
          throw Error(e.code(), name_of(i) + ": " + e.what());
        }
      },
      [&](int done) {
        if (progress) progress("prepare", static_cast<double>(done) / std::max(count, 1));
      });
  return graphs;
}

GraphitGraph GraphitModel::prepare(const Graph& g) const {
  INDUCTIVE_CHECK(config.has_graph, ErrorCode::kInvalidArgument,
                  "graphit: this model does not say how to prepare graphs (its config has no 'graph' section)");
  check_graph_size(g.n_nodes, "graph", "nodes");
  if (config.vocab > 0) g.validate("graphit input graph", config.vocab);
  return make_graphit_graph(g, prepare_graph_inputs(g, config.graph, config.graph.gckn ? &gckn : nullptr), config);
}

}  // namespace inductive
