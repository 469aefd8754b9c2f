// inductive/graphit_inputs.h - how a GraphiT model turns a graph into its inputs (kernel on the graph, LapPE,
// GCKN path features), stored in the model file's config as "graph" so that a graph given at prediction time (a
// TU graph, a SMILES string in the browser) is prepared exactly like the training graphs.
//
//   "graph": {"kernel": {"type": "diffusion", "beta": 1, "gamma": 0.5, "p": 2, "zero_diagonal": false} | null,
//             "lap_pe": 0,
//             "gckn": {"path_size": 5, "n_filters": 32, "sigma": 0.6, "reg": 0.01, "standardize": true,
//                      "attributes": false, "max_paths": 5000000} | null,
//             "atom_typing": "element" | "element-charge"}
// "atom_typing" says how a molecule's atoms became node labels (inductive/smiles.h AtomTyping), so a SMILES given
// at prediction time (CLI, browser) is typed as the training molecules were; files without it are "element".
// With "gckn", the fitted layer travels as tensors gckn.anchors.<l> [n_filters, l * f] and its Nystrom factor
// gckn.factor.<l> [n_filters, n_filters] (l = 1..path_size, f = one-hot width or attribute count; the factor is
// stored so that every build embeds paths bit-identically), gckn.mean and gckn.std [path_size * n_filters].
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "inductive/gckn_paths.h"
#include "inductive/graph_cache.h"
#include "inductive/model_file.h"
#include "inductive/smiles.h"

namespace inductive {

struct GraphitInputSpec {
  bool kernel = true;
  GraphKernelOptions kernel_options;
  int lap_pe = 0;
  bool gckn = false;
  GcknOptions gckn_options;
  int gckn_feature_dim = 0;                       // one-hot width / attribute count the GCKN anchors were fitted on
  AtomTyping atom_typing = AtomTyping::kElement;  // molecules: how atoms become node labels

  void validate() const;
  nlohmann::json to_json() const;
  static GraphitInputSpec from_json(const nlohmann::json& j);  // strict: unknown keys and bad values are errors
  // The dataset precomputation these inputs need (GCKN anchors fitted on `gckn_train`).
  GraphPrecomputeOptions precompute_options(std::vector<int32_t> gckn_train = {}) const;
  // Model-file tensors of the fitted GCKN layer (names and shapes; empty without gckn).
  std::vector<TensorSpec> tensor_specs() const;
};

// The kernel / LapPE / GCKN features of one new graph (one eigendecomposition), with the fitted GCKN layer when
// spec.gckn.
PrecomputedGraph prepare_graph_inputs(const Graph& g, const GraphitInputSpec& spec, const GcknPathFeatures* gckn);

}  // namespace inductive
