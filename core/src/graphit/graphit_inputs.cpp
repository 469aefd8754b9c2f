// core/src/graphit/graphit_inputs.cpp - see inductive/graphit_inputs.h.
#include "inductive/graphit_inputs.h"

#include <cmath>
#include <set>

#include "inductive/error.h"
#include "inductive/graph_kernels.h"

namespace inductive {
namespace {

void check_keys(const nlohmann::json& j, const std::set<std::string>& known, const char* where) {
  INDUCTIVE_CHECK(j.is_object(), ErrorCode::kInvalidArgument, where, " must be an object: got ", j.dump());
  for (const auto& item : j.items()) {
    INDUCTIVE_CHECK(known.count(item.key()) != 0, ErrorCode::kInvalidArgument, where, ": unknown key '", item.key(),
                    "'");
  }
}

template <typename T>
T get(const nlohmann::json& j, const char* key, T fallback, const char* where) {
  if (!j.contains(key)) return fallback;
  try {
    return j.at(key).get<T>();
  } catch (const nlohmann::json::exception&) {
    INDUCTIVE_FAIL(ErrorCode::kInvalidArgument, where, ".", key, " has the wrong type: got ", j.at(key).dump());
  }
}

}  // namespace

void GraphitInputSpec::validate() const {
  if (kernel) kernel_options.validate();
  INDUCTIVE_CHECK(lap_pe >= 0 && lap_pe <= 4096, ErrorCode::kInvalidArgument,
                  "graphit graph inputs: lap_pe must be in [0, 4096]: got ", lap_pe);
  if (gckn) {
    gckn_options.validate();
    INDUCTIVE_CHECK(gckn_feature_dim >= 1, ErrorCode::kInvalidArgument,
                    "graphit graph inputs: gckn feature_dim must be >= 1: got ", gckn_feature_dim);
  }
}

nlohmann::json GraphitInputSpec::to_json() const {
  nlohmann::json j;
  if (kernel) {
    j["kernel"] = {{"type", graph_kernel_type_name(kernel_options.type)},
                   {"beta", kernel_options.beta},
                   {"gamma", kernel_options.gamma},
                   {"p", kernel_options.p},
                   {"zero_diagonal", kernel_options.zero_diagonal}};
  } else {
    j["kernel"] = nullptr;
  }
  j["lap_pe"] = lap_pe;
  if (gckn) {
    j["gckn"] = {{"path_size", gckn_options.path_size},
                 {"n_filters", gckn_options.n_filters},
                 {"sigma", gckn_options.sigma},
                 {"reg", gckn_options.reg},
                 {"standardize", gckn_options.standardize},
                 {"attributes", gckn_options.use_node_attributes},
                 {"max_paths", gckn_options.max_paths_per_graph},
                 {"feature_dim", gckn_feature_dim}};
  } else {
    j["gckn"] = nullptr;
  }
  // Written only when it is not the default, so that element-typed models stay readable by earlier readers (which
  // refuse unknown keys) and their files do not change.
  if (atom_typing != AtomTyping::kElement) j["atom_typing"] = atom_typing_name(atom_typing);
  return j;
}

GraphitInputSpec GraphitInputSpec::from_json(const nlohmann::json& j) {
  const char* where = "graphit config.graph";
  check_keys(j, {"kernel", "lap_pe", "gckn", "atom_typing"}, where);
  GraphitInputSpec s;
  const nlohmann::json k = j.value("kernel", nlohmann::json(nullptr));
  s.kernel = !k.is_null();
  if (s.kernel) {
    check_keys(k, {"type", "beta", "gamma", "p", "zero_diagonal"}, "graphit config.graph.kernel");
    s.kernel_options.type = parse_graph_kernel_type(get<std::string>(k, "type", "diffusion", where));
    s.kernel_options.beta = get<double>(k, "beta", 1.0, where);
    s.kernel_options.gamma = get<double>(k, "gamma", 0.5, where);
    s.kernel_options.p = get<int>(k, "p", 2, where);
    s.kernel_options.zero_diagonal = get<bool>(k, "zero_diagonal", false, where);
  }
  s.lap_pe = get<int>(j, "lap_pe", 0, where);
  const nlohmann::json g = j.value("gckn", nlohmann::json(nullptr));
  s.gckn = !g.is_null();
  if (s.gckn) {
    check_keys(g, {"path_size", "n_filters", "sigma", "reg", "standardize", "attributes", "max_paths", "feature_dim"},
               "graphit config.graph.gckn");
    s.gckn_options.path_size = get<int>(g, "path_size", 5, where);
    s.gckn_options.n_filters = get<int>(g, "n_filters", 32, where);
    s.gckn_options.sigma = get<float>(g, "sigma", 0.6f, where);
    s.gckn_options.reg = get<float>(g, "reg", 1e-2f, where);
    s.gckn_options.standardize = get<bool>(g, "standardize", true, where);
    s.gckn_options.use_node_attributes = get<bool>(g, "attributes", false, where);
    s.gckn_options.max_paths_per_graph = get<int64_t>(g, "max_paths", 5'000'000, where);
    s.gckn_feature_dim = get<int>(g, "feature_dim", 0, where);
  }
  // Absent in files written before molecules could be typed by charge: those were typed by element.
  try {
    s.atom_typing = parse_atom_typing(get<std::string>(j, "atom_typing", "element", where));
  } catch (const Error& e) {
    throw Error(e.code(), std::string(where) + ": " + e.what());
  }
  s.validate();
  return s;
}

GraphPrecomputeOptions GraphitInputSpec::precompute_options(std::vector<int32_t> gckn_train) const {
  GraphPrecomputeOptions o;
  o.kernel = kernel;
  o.kernel_options = kernel_options;
  o.lap_pe_dim = lap_pe;
  o.gckn = gckn;
  o.gckn_options = gckn_options;
  o.gckn_train = std::move(gckn_train);
  return o;
}

std::vector<TensorSpec> GraphitInputSpec::tensor_specs() const {
  std::vector<TensorSpec> out;
  if (!gckn) return out;
  const int64_t k = gckn_options.path_size, f = gckn_options.n_filters, d = gckn_feature_dim;
  for (int64_t l = 1; l <= k; ++l) {
    out.push_back({"gckn.anchors." + std::to_string(l), DType::kF32, {f, l * d}});
    out.push_back({"gckn.factor." + std::to_string(l), DType::kF32, {f, f}});
  }
  out.push_back({"gckn.mean", DType::kF32, {k * f}});
  out.push_back({"gckn.std", DType::kF32, {k * f}});
  return out;
}

PrecomputedGraph prepare_graph_inputs(const Graph& g, const GraphitInputSpec& spec, const GcknPathFeatures* gckn) {
  PrecomputedGraph out;
  if (spec.kernel || spec.lap_pe > 0) {
    const GraphSpectrum s = graph_spectrum(g);
    if (spec.kernel) out.kernel = graph_kernel(s, spec.kernel_options);
    if (spec.lap_pe > 0) out.lap_pe = laplacian_pe(s, spec.lap_pe);
  }
  if (spec.gckn) {
    INDUCTIVE_CHECK(gckn != nullptr, ErrorCode::kInvalidArgument,
                    "graphit: the model uses GCKN path features but "
                    "holds no fitted GCKN layer");
    out.gckn = gckn->transform(g);
  }
  return out;
}

std::vector<TensorData> gckn_tensors(const GcknPathFeatures& gckn) {
  std::vector<TensorData> out;
  const auto& layers = gckn.layers();
  for (size_t l = 0; l < layers.size(); ++l) {
    const MatF& a = layers[l].anchors();
    out.push_back({"gckn.anchors." + std::to_string(l + 1), DType::kF32, {a.rows(), a.cols()}, a.data()});
    const MatF& z = layers[l].factor();
    out.push_back({"gckn.factor." + std::to_string(l + 1), DType::kF32, {z.rows(), z.cols()}, z.data()});
  }
  out.push_back({"gckn.mean", DType::kF32, {gckn.mean().size()}, gckn.mean().data()});
  out.push_back({"gckn.std", DType::kF32, {gckn.stddev().size()}, gckn.stddev().data()});
  return out;
}

GcknPathFeatures gckn_from_view(const ModelView& view, const GraphitInputSpec& spec) {
  std::vector<MatF> anchors, factors;
  for (const TensorSpec& t : spec.tensor_specs()) {
    const bool anchor = t.name.rfind("gckn.anchors.", 0) == 0, factor = t.name.rfind("gckn.factor.", 0) == 0;
    if (!anchor && !factor) continue;
    MatF m = CMapF(view.f32(t.name, t.shape), t.shape[0], t.shape[1]);
    INDUCTIVE_CHECK(m.allFinite(), ErrorCode::kBadModelFile, "graphit model: ", t.name, " contains NaN or Inf");
    (anchor ? anchors : factors).push_back(std::move(m));
  }
  const int64_t dim = static_cast<int64_t>(spec.gckn_options.path_size) * spec.gckn_options.n_filters;
  VecF mean = Eigen::Map<const VecF>(view.f32("gckn.mean", {dim}), dim);
  VecF stddev = Eigen::Map<const VecF>(view.f32("gckn.std", {dim}), dim);
  INDUCTIVE_CHECK(mean.allFinite() && stddev.allFinite() && (stddev.array() > 0).all(), ErrorCode::kBadModelFile,
                  "graphit model: GCKN standardisation must be finite with std > 0");
  return GcknPathFeatures::from_stored(std::move(anchors), std::move(mean), std::move(stddev), spec.gckn_feature_dim,
                                       spec.gckn_options.use_node_attributes, spec.gckn_options, std::move(factors));
}

}  // namespace inductive
