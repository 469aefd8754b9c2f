// inductive/gckn_paths.h - GCKN path features for GraphiT (thesis ch. 3; Chen, Jacob & Mairal, ICML 2020).
//
// For every node u and every path length l = 1..k (in nodes), the node's feature block l is
//     phi_l(u) = kappa(Z_l Z_l^T / l)^{-1/2} sum_{simple paths P = (u = p_1, ..., p_l)} kappa_P,
//     (kappa_P)_a = kappa( (1/l) sum_{j=1..l} cos(x_{p_j}, z_{a,j}) ),     kappa(s) = exp((s - 1) / sigma^2),
// with Z_l the n_filters anchors of length l (each an l x d matrix with unit rows z_{a,j}) and x the node features:
// one-hot node labels (as the reference, whose PyG TUDataset drops attributes by default), or the node attributes
// with use_node_attributes. Writing a path and an anchor as the
// concatenation of their unit rows divided by sqrt(l) turns both into unit vectors of dimension l*d and the mean of
// cosines into a dot product, so each length is exactly the Nystrom embedding of inductive/nystrom.h (reused here,
// with the same (sqrt(lambda) + 0.01)^-1 regularised inverse square root), summed over paths. Output: n x (k *
// n_filters), block l-1 for length l, then standardised with a per-column mean and std learnt on training graphs.
//
// Anchors: spherical k-means++ (inductive/kmeans.h) on up to n_sampled_paths paths of each length drawn uniformly
// (reservoir sampling) from the training graphs, with rows renormalised per position afterwards. Deterministic
// given `seed`.
//
// Paths are simple (no repeated node) and directed from their start node, so an undirected path of l >= 2 nodes is
// counted once from each end, as the reference's DFS does. Their number grows like degree^(k-1): enumeration stops
// with Error{kInvalidArgument} as soon as a graph has more than max_paths_per_graph paths, naming the graph size and
// the bound, instead of running out of memory or time.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "inductive/graph.h"
#include "inductive/linalg.h"
#include "inductive/model_file.h"
#include "inductive/nystrom.h"

namespace inductive {

class Communicator;  // inductive/communicator.h

struct GcknOptions {
  int path_size = 5;                        // k: paths of 1..k nodes (thesis: 5 on TU datasets, 8 on ZINC)
  int n_filters = 32;                       // anchors per path length
  float sigma = 0.6f;                       // kappa bandwidth
  float reg = 1e-2f;                        // Nystrom: (sqrt(lambda) + reg)^-1
  int64_t max_paths_per_graph = 5'000'000;  // enumeration cap (all start nodes, all lengths together)
  int64_t n_sampled_paths = 300'000;        // per length, for k-means (the reference samples 300k paths)
  int kmeans_iter = 100;
  uint64_t seed = 0;
  bool standardize = true;
  bool use_node_attributes = false;  // paths over node attributes instead of one-hot labels
  void validate() const;
  std::string describe() const;  // stable text of every option, for cache keys
};

// Calls visit(path, l) for every simple path of 1..k nodes starting at each node (start nodes in order, then DFS in
// neighbour order). `path` holds l node ids, path[0] the start. Throws when more than `max_paths` paths exist.
void for_each_path(const Graph& g, int k, int64_t max_paths,
                   const std::function<void(const int32_t* path, int l)>& visit);
// counts[s][l-1] = number of simple paths of l nodes starting at node s.
std::vector<std::vector<int64_t>> count_paths(const Graph& g, int k, int64_t max_paths);

// Node features for paths: the node attributes with `use_attributes` (throws when the graph has none), else one-hot
// labels of width `n_node_labels`.
MatF gckn_node_features(const Graph& g, int n_node_labels, bool use_attributes);

class GcknPathFeatures {
 public:
  GcknPathFeatures() = default;
  // Learns the anchors on graphs[train] and the standardisation on the same graphs. `n_node_labels` is the
  // vocabulary size (one-hot width), ignored with options.use_node_attributes. With a `communicator` (data-parallel
  // training; every rank passes the same graphs and options) the anchors' k-means splits its distances over the
  // ranks and each rank transforms a share of the training graphs for the standardisation's sums: every rank gets
  // the one-process result (the sampling of paths stays serial: its random stream runs over every path in order).
  static GcknPathFeatures fit(const std::vector<Graph>& graphs, const std::vector<int32_t>& train, int n_node_labels,
                              const GcknOptions& options, Communicator* communicator = nullptr);
  // Restores a fitted model (e.g. from a model file or a cache): anchors[l-1] is n_filters x (l * feature_dim).
  // With `factors` (kappa(Z Z^T)^-1/2 per length, as stored in a model file) the layers are restored bit for bit
  // (no renormalisation, no eigendecomposition: the same features on every build); without, they are recomputed.
  static GcknPathFeatures from_stored(std::vector<MatF> anchors, VecF mean, VecF stddev, int feature_dim,
                                      bool use_attributes, const GcknOptions& options, std::vector<MatF> factors = {});

  // n x (path_size * n_filters), standardised when options.standardize.
  MatF transform(const Graph& g) const;
  // Before standardisation.
  MatF transform_raw(const Graph& g) const;

  int dim() const { return options_.path_size * options_.n_filters; }
  int feature_dim() const { return feature_dim_; }  // d: one-hot width or attribute count
  bool use_attributes() const { return use_attributes_; }
  const GcknOptions& options() const { return options_; }
  const std::vector<Nystrom>& layers() const { return layers_; }  // one per path length
  const VecF& mean() const { return mean_; }
  const VecF& stddev() const { return stddev_; }

 private:
  GcknOptions options_;
  int feature_dim_ = 0;
  bool use_attributes_ = false;
  std::vector<Nystrom> layers_;
  VecF mean_, stddev_;
};

// The fitted layer in a model-file container (inductive/model_file.h): "gckn.anchors.<l>" [n_filters, l d] and
// "gckn.factor.<l>" [n_filters, n_filters] for l = 1..path_size, "gckn.mean" and "gckn.std" [path_size n_filters].
// GraphiT model files and graph caches both hold it this way. gckn_tensors are views into `gckn` (keep it alive
// while writing); gckn_from_view restores it bit for bit (Error{kBadModelFile} for a missing, misshapen or
// non-finite tensor; `what` names the file).
std::vector<TensorSpec> gckn_tensor_specs(const GcknOptions& options, int feature_dim);
std::vector<TensorData> gckn_tensors(const GcknPathFeatures& gckn);
GcknPathFeatures gckn_from_view(const ModelView& view, const GcknOptions& options, int feature_dim, bool use_attributes,
                                const std::string& what);

}  // namespace inductive
