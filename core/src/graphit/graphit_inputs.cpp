// core/src/graphit/graphit_inputs.cpp - see inductive/graphit_inputs.h.
#include "inductive/graphit_inputs.h"

#include "inductive/error.h"
#include "inductive/graph_kernels.h"
#include "io/json_section.h"

namespace inductive {

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

// Read strictly through io/json_section.h, as the rest of the config: unknown keys are errors, and numbers are
// range-checked before they are converted (a config fuzzer found `"lap_pe": 1.9e111` read through a plain get<int>).
GraphitInputSpec GraphitInputSpec::from_json(const nlohmann::json& j) {
  const char* what = "graphit config";
  GraphitInputSpec s;
  JsonSection graph(j, what, "graph");
  if (const nlohmann::json* k = graph.object_or_null("kernel")) {
    s.kernel = true;
    JsonSection kernel(*k, what, "graph.kernel");
    s.kernel_options.type = parse_graph_kernel_type(kernel.str("type", "diffusion"));
    s.kernel_options.beta = kernel.number("beta", 1.0);
    s.kernel_options.gamma = kernel.number("gamma", 0.5);
    s.kernel_options.p = kernel.integer("p", 2);
    s.kernel_options.zero_diagonal = kernel.boolean("zero_diagonal", false);
    kernel.finish();
  } else {
    s.kernel = false;
  }
  s.lap_pe = graph.integer("lap_pe", 0);
  if (const nlohmann::json* g = graph.object_or_null("gckn")) {
    s.gckn = true;
    JsonSection gckn(*g, what, "graph.gckn");
    s.gckn_options.path_size = gckn.integer("path_size", 5);
    s.gckn_options.n_filters = gckn.integer("n_filters", 32);
    s.gckn_options.sigma = gckn.number32("sigma", 0.6f);
    s.gckn_options.reg = gckn.number32("reg", 1e-2f);
    s.gckn_options.standardize = gckn.boolean("standardize", true);
    s.gckn_options.use_node_attributes = gckn.boolean("attributes", false);
    s.gckn_options.max_paths_per_graph = gckn.integer64("max_paths", 5'000'000);
    s.gckn_feature_dim = gckn.integer("feature_dim", 0);
    gckn.finish();
  }
  // Absent in files written before molecules could be typed by charge: those were typed by element.
  const std::string typing = graph.str("atom_typing", "element");
  graph.finish();
  try {
    s.atom_typing = parse_atom_typing(typing);
  } catch (const Error& e) {
    throw Error(e.code(), std::string("graphit config.graph: ") + e.what());
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
  return gckn ? gckn_tensor_specs(gckn_options, gckn_feature_dim) : std::vector<TensorSpec>{};
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

}  // namespace inductive
