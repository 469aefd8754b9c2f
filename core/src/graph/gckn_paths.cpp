// GCKN path features: path enumeration, anchors by spherical k-means, Nystrom embedding summed over paths
// (see inductive/gckn_paths.h).
#include "inductive/gckn_paths.h"

#include <cmath>
#include <random>
#include <sstream>

#include "inductive/communicator.h"
#include "inductive/error.h"
#include "inductive/kmeans.h"

namespace inductive {

namespace {

constexpr int kChunk = 2048;  // paths embedded per matrix product

void dfs(const std::vector<std::vector<int32_t>>& adj, std::vector<int32_t>& path, std::vector<char>& on_path, int k,
         int64_t max_paths, int64_t& count, const Graph& g, const std::function<void(const int32_t*, int)>& visit) {
  INDUCTIVE_CHECK(++count <= max_paths, ErrorCode::kInvalidArgument, "gckn paths: a graph with ", g.n_nodes,
                  " nodes and ", g.n_edges(), " edges has more than ", max_paths, " simple paths of 1..", k,
                  " nodes (reached from start node ", path[0], "): expected at most max_paths_per_graph = ", max_paths,
                  "; lower path_size or raise the cap");
  visit(path.data(), static_cast<int>(path.size()));
  if (static_cast<int>(path.size()) == k) return;
  for (int32_t v : adj[path.back()]) {
    if (on_path[v]) continue;
    on_path[v] = 1;
    path.push_back(v);
    dfs(adj, path, on_path, k, max_paths, count, g, visit);
    path.pop_back();
    on_path[v] = 0;
  }
}

// Unit rows (a zero row, e.g. an all-zero attribute vector, stays zero: its cosine with anything is 0).
MatF unit_rows(MatF x) {
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    const float nrm = x.row(i).norm();
    if (nrm > 0) x.row(i) /= nrm;
  }
  return x;
}

// Concatenation of the unit features along a path, divided by sqrt(l): a unit vector of dimension l*d.
void path_vector(const MatF& unit, const int32_t* path, int l, float* out) {
  const Eigen::Index d = unit.cols();
  const float scale = 1.0f / std::sqrt(static_cast<float>(l));
  for (int j = 0; j < l; ++j)
    for (Eigen::Index c = 0; c < d; ++c) out[j * d + c] = unit(path[j], c) * scale;
}

}  // namespace

void GcknOptions::validate() const {
  INDUCTIVE_CHECK(path_size >= 1 && path_size <= 32, ErrorCode::kInvalidArgument,
                  "gckn: path_size (nodes per path) must be in [1, 32]: got ", path_size);
  INDUCTIVE_CHECK(n_filters >= 1 && n_filters <= 4096, ErrorCode::kInvalidArgument,
                  "gckn: n_filters must be in [1, 4096]: got ", n_filters);
  INDUCTIVE_CHECK(std::isfinite(sigma) && sigma > 0, ErrorCode::kInvalidArgument,
                  "gckn: sigma must be a finite number > 0: got ", sigma);
  INDUCTIVE_CHECK(std::isfinite(reg) && reg > 0, ErrorCode::kInvalidArgument,
                  "gckn: reg must be a finite number > 0: got ", reg);
  INDUCTIVE_CHECK(max_paths_per_graph >= 1, ErrorCode::kInvalidArgument, "gckn: max_paths_per_graph must be >= 1: got ",
                  max_paths_per_graph);
  INDUCTIVE_CHECK(n_sampled_paths >= 1, ErrorCode::kInvalidArgument, "gckn: n_sampled_paths must be >= 1: got ",
                  n_sampled_paths);
  INDUCTIVE_CHECK(kmeans_iter >= 1, ErrorCode::kInvalidArgument, "gckn: kmeans_iter must be >= 1: got ", kmeans_iter);
}

std::string GcknOptions::describe() const {
  std::ostringstream out;
  out.precision(9);
  out << "gckn(k=" << path_size << ",filters=" << n_filters << ",sigma=" << sigma << ",reg=" << reg
      << ",max_paths=" << max_paths_per_graph << ",sampled=" << n_sampled_paths << ",kmeans_iter=" << kmeans_iter
      << ",seed=" << seed << ",standardize=" << (standardize ? 1 : 0) << ",attributes=" << (use_node_attributes ? 1 : 0)
      << ")";
  return out.str();
}

void for_each_path(const Graph& g, int k, int64_t max_paths,
                   const std::function<void(const int32_t* path, int l)>& visit) {
  INDUCTIVE_CHECK(k >= 1, ErrorCode::kInvalidArgument, "gckn paths: path size k must be >= 1: got ", k);
  INDUCTIVE_CHECK(max_paths >= 1, ErrorCode::kInvalidArgument, "gckn paths: max_paths must be >= 1: got ", max_paths);
  g.validate("gckn paths");
  const auto adj = g.neighbours();
  std::vector<int32_t> path;
  path.reserve(k);
  std::vector<char> on_path(g.n_nodes, 0);
  int64_t count = 0;
  for (int32_t s = 0; s < g.n_nodes; ++s) {
    path.assign(1, s);
    on_path[s] = 1;
    dfs(adj, path, on_path, k, max_paths, count, g, visit);
    on_path[s] = 0;
  }
}

std::vector<std::vector<int64_t>> count_paths(const Graph& g, int k, int64_t max_paths) {
  std::vector<std::vector<int64_t>> counts(std::max(g.n_nodes, 0), std::vector<int64_t>(std::max(k, 0), 0));
  for_each_path(g, k, max_paths, [&](const int32_t* path, int l) { ++counts[path[0]][l - 1]; });
  return counts;
}

MatF gckn_node_features(const Graph& g, int n_node_labels, bool use_attributes) {
  if (use_attributes) {
    INDUCTIVE_CHECK(g.node_attributes.cols() > 0, ErrorCode::kInvalidArgument,
                    "gckn: node attributes requested but the graph has none");
    INDUCTIVE_CHECK(g.node_attributes.rows() == g.n_nodes, ErrorCode::kShapeMismatch, "gckn: node attributes have ",
                    g.node_attributes.rows(), " rows, expected ", g.n_nodes);
    return g.node_attributes;
  }
  INDUCTIVE_CHECK(n_node_labels >= 1, ErrorCode::kInvalidArgument,
                  "gckn: the node-label vocabulary size must be >= 1: got ", n_node_labels);
  g.validate("gckn node features", n_node_labels);
  MatF x = MatF::Zero(g.n_nodes, n_node_labels);
  for (int i = 0; i < g.n_nodes; ++i) x(i, g.node_labels[i]) = 1.0f;
  return x;
}

GcknPathFeatures GcknPathFeatures::fit(const std::vector<Graph>& graphs, const std::vector<int32_t>& train,
                                       int n_node_labels, const GcknOptions& o, Communicator* communicator) {
  o.validate();
  INDUCTIVE_CHECK(!train.empty(), ErrorCode::kInvalidArgument, "gckn fit: no training graph");
  for (int32_t t : train)
    INDUCTIVE_CHECK(t >= 0 && t < static_cast<int32_t>(graphs.size()), ErrorCode::kInvalidArgument,
                    "gckn fit: training index ", t, " is out of range: expected 0..", graphs.size() - 1);
  GcknPathFeatures f;
  f.options_ = o;
  f.use_attributes_ = o.use_node_attributes;
  f.feature_dim_ = f.use_attributes_ ? static_cast<int>(graphs[train[0]].node_attributes.cols()) : n_node_labels;
  const int k = o.path_size;

  // Reservoir sample of (graph, path) per length, uniform over all paths of that length in the training graphs.
  struct Sampled {
    int32_t graph;
    std::vector<int32_t> nodes;
  };
  std::vector<std::vector<Sampled>> reservoir(k);
  std::vector<int64_t> seen(k, 0);
  std::mt19937_64 rng(o.seed);
  for (int32_t t : train) {
    const Graph& g = graphs[t];
    INDUCTIVE_CHECK(!f.use_attributes_ || g.node_attributes.cols() == f.feature_dim_, ErrorCode::kShapeMismatch,
                    "gckn fit: graph ", t, " has ", g.node_attributes.cols(), " node attributes, expected ",
                    f.use_attributes_ ? f.feature_dim_ : 0, " (as graph ", train[0], ")");
    for_each_path(g, k, o.max_paths_per_graph, [&](const int32_t* path, int l) {
      auto& r = reservoir[l - 1];
      const int64_t index = seen[l - 1]++;
      if (index < o.n_sampled_paths) {
        r.push_back({t, std::vector<int32_t>(path, path + l)});
      } else {
        const int64_t j = std::uniform_int_distribution<int64_t>(0, index)(rng);
        if (j < o.n_sampled_paths) r[j] = {t, std::vector<int32_t>(path, path + l)};
      }
    });
  }

  NystromOptions ny;
  ny.sigma = o.sigma;
  ny.reg = o.reg;
  const int d = f.feature_dim_;
  for (int l = 1; l <= k; ++l) {
    const auto& r = reservoir[l - 1];
    INDUCTIVE_CHECK(!r.empty(), ErrorCode::kInvalidArgument, "gckn fit: the training graphs have no path of ", l,
                    " nodes: expected path_size <= the longest simple path (got path_size ", k, ")");
    MatF x(static_cast<Eigen::Index>(r.size()), static_cast<Eigen::Index>(l) * d);
    // Unit node features per graph, computed once per graph that has sampled paths.
    int32_t cached = -1;
    MatF unit;
    std::vector<size_t> order(r.size());
    for (size_t i = 0; i < r.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return r[a].graph < r[b].graph; });
    for (size_t i : order) {
      if (r[i].graph != cached) {
        cached = r[i].graph;
        unit = unit_rows(gckn_node_features(graphs[cached], n_node_labels, f.use_attributes_));
      }
      path_vector(unit, r[i].nodes.data(), l, x.row(static_cast<Eigen::Index>(i)).data());
    }
    // Paths whose features are all zero (all-zero attributes) have no direction: they cannot be anchors.
    std::vector<Eigen::Index> keep;
    for (Eigen::Index i = 0; i < x.rows(); ++i)
      if (x.row(i).squaredNorm() > 1e-12f) keep.push_back(i);
    INDUCTIVE_CHECK(!keep.empty(), ErrorCode::kInvalidArgument, "gckn fit: every sampled path of ", l,
                    " nodes has all-zero node features: expected some non-zero features to learn anchors from");
    if (keep.size() < static_cast<size_t>(x.rows())) {
      MatF kept(static_cast<Eigen::Index>(keep.size()), x.cols());
      for (size_t i = 0; i < keep.size(); ++i) kept.row(static_cast<Eigen::Index>(i)) = x.row(keep[i]);
      x = std::move(kept);
    }
    KMeansOptions km;
    km.k = o.n_filters;
    km.max_iter = o.kmeans_iter;
    km.spherical = true;
    km.seed = o.seed + static_cast<uint64_t>(l);
    km.communicator = communicator;
    MatF anchors = kmeans(x, km).centers;
    // Anchors are l unit rows (one per position) over sqrt(l), like the paths.
    for (Eigen::Index a = 0; a < anchors.rows(); ++a)
      for (int j = 0; j < l; ++j) {
        auto block = anchors.row(a).segment(static_cast<Eigen::Index>(j) * d, d);
        const float nrm = block.norm();
        if (nrm > 0) block /= nrm * std::sqrt(static_cast<float>(l));
      }
    f.layers_.emplace_back(std::move(anchors), ny);
  }

  // Standardisation on the training nodes (population std; a constant column keeps std 1, as scikit-learn does).
  // Sums in double: over this rank's share of the graphs, then across ranks.
  const Eigen::Index dim = f.dim();
  Eigen::VectorXd sums = Eigen::VectorXd::Zero(2 * dim + 1);  // sum, sum of squares, node count
  auto sum = sums.head(dim), sum_sq = sums.segment(dim, dim);
  const bool split = communicator != nullptr && communicator->size() > 1;
  const Shard share = split ? shard_of(static_cast<int64_t>(train.size()), communicator->rank(), communicator->size())
                            : Shard{0, static_cast<int64_t>(train.size())};
  for (int64_t k = share.begin; k < share.end; ++k) {
    const MatF raw = f.transform_raw(graphs[train[static_cast<size_t>(k)]]);
    for (Eigen::Index i = 0; i < raw.rows(); ++i) {
      const Eigen::VectorXd row = raw.row(i).transpose().cast<double>();
      sum += row;
      sum_sq += row.cwiseProduct(row);
    }
    sums[2 * dim] += static_cast<double>(raw.rows());
  }
  if (split) communicator->allreduce_sum(sums.data(), sums.size());
  const double n_nodes = sums[2 * dim];
  f.mean_.resize(dim);
  f.stddev_.resize(dim);
  for (Eigen::Index c = 0; c < dim; ++c) {
    const double mean = sum[c] / n_nodes;
    const double var = std::max(sum_sq[c] / n_nodes - mean * mean, 0.0);
    const double sd = std::sqrt(var);
    f.mean_[c] = static_cast<float>(mean);
    f.stddev_[c] = sd > 1e-6 * std::max(1.0, std::fabs(mean)) ? static_cast<float>(sd) : 1.0f;
  }
  return f;
}

GcknPathFeatures GcknPathFeatures::from_stored(std::vector<MatF> anchors, VecF mean, VecF stddev, int feature_dim,
                                               bool use_attributes, const GcknOptions& o, std::vector<MatF> factors) {
  o.validate();
  INDUCTIVE_CHECK(static_cast<int>(anchors.size()) == o.path_size, ErrorCode::kShapeMismatch, "gckn: got ",
                  anchors.size(), " anchor matrices, expected path_size = ", o.path_size);
  INDUCTIVE_CHECK(feature_dim >= 1, ErrorCode::kInvalidArgument, "gckn: feature_dim must be >= 1: got ", feature_dim);
  INDUCTIVE_CHECK(use_attributes == o.use_node_attributes, ErrorCode::kInvalidArgument, "gckn: stored features use ",
                  use_attributes ? "node attributes" : "one-hot labels",
                  " but the options say use_node_attributes = ", o.use_node_attributes);
  GcknPathFeatures f;
  f.options_ = o;
  f.feature_dim_ = feature_dim;
  f.use_attributes_ = use_attributes;
  NystromOptions ny;
  ny.sigma = o.sigma;
  ny.reg = o.reg;
  for (int l = 1; l <= o.path_size; ++l) {
    const MatF& a = anchors[l - 1];
    INDUCTIVE_CHECK(a.rows() == o.n_filters && a.cols() == static_cast<Eigen::Index>(l) * feature_dim,
                    ErrorCode::kShapeMismatch, "gckn: anchors for paths of ", l, " nodes are ", a.rows(), " x ",
                    a.cols(), ", expected ", o.n_filters, " x ", l * feature_dim);
    if (factors.empty()) {
      f.layers_.emplace_back(a, ny);
    } else {
      INDUCTIVE_CHECK(static_cast<int>(factors.size()) == o.path_size && factors[l - 1].rows() == o.n_filters &&
                          factors[l - 1].cols() == o.n_filters,
                      ErrorCode::kShapeMismatch, "gckn: stored Nystrom factors must be path_size = ", o.path_size,
                      " matrices of ", o.n_filters, " x ", o.n_filters);
      f.layers_.push_back(Nystrom::from_stored(a, factors[l - 1], ny));
    }
  }
  INDUCTIVE_CHECK(mean.size() == f.dim() && stddev.size() == f.dim(), ErrorCode::kShapeMismatch,
                  "gckn: standardisation has ", mean.size(), " means and ", stddev.size(), " stds, expected ", f.dim());
  INDUCTIVE_CHECK(mean.allFinite() && stddev.allFinite() && (stddev.array() > 0).all(), ErrorCode::kInvalidArgument,
                  "gckn: standardisation must be finite with std > 0");
  f.mean_ = std::move(mean);
  f.stddev_ = std::move(stddev);
  return f;
}

MatF GcknPathFeatures::transform_raw(const Graph& g) const {
  INDUCTIVE_CHECK(!layers_.empty(), ErrorCode::kInvalidArgument, "gckn: the path features are not fitted");
  if (use_attributes_)
    INDUCTIVE_CHECK(g.node_attributes.cols() == feature_dim_, ErrorCode::kShapeMismatch, "gckn: graph has ",
                    g.node_attributes.cols(), " node attributes, expected ", feature_dim_);
  const MatF unit = unit_rows(gckn_node_features(g, feature_dim_, use_attributes_));
  const int k = options_.path_size, nf = options_.n_filters;
  const Eigen::Index d = feature_dim_;
  MatF out = MatF::Zero(g.n_nodes, static_cast<Eigen::Index>(k) * nf);
  // Per length: a chunk of path vectors, then kappa(P W^T) scattered onto the start nodes.
  std::vector<MatF> chunk(k);
  std::vector<std::vector<int32_t>> start(k);
  std::vector<MatF> sums(k, MatF::Zero(g.n_nodes, nf));
  auto flush = [&](int l) {
    const auto m = static_cast<Eigen::Index>(start[l - 1].size());
    if (m == 0) return;
    MatF dots;
    dots.noalias() = chunk[l - 1].topRows(m) * layers_[l - 1].anchors().transpose();
    gaussian_on_sphere(dots, options_.sigma);
    for (Eigen::Index i = 0; i < m; ++i) sums[l - 1].row(start[l - 1][i]) += dots.row(i);
    start[l - 1].clear();
  };
  for (int l = 1; l <= k; ++l) chunk[l - 1].resize(kChunk, l * d);
  for_each_path(g, k, options_.max_paths_per_graph, [&](const int32_t* path, int l) {
    auto& s = start[l - 1];
    path_vector(unit, path, l, chunk[l - 1].row(static_cast<Eigen::Index>(s.size())).data());
    s.push_back(path[0]);
    if (static_cast<int>(s.size()) == kChunk) flush(l);
  });
  for (int l = 1; l <= k; ++l) {
    flush(l);
    out.middleCols(static_cast<Eigen::Index>(l - 1) * nf, nf).noalias() = sums[l - 1] * layers_[l - 1].factor();
  }
  return out;
}

MatF GcknPathFeatures::transform(const Graph& g) const {
  MatF raw = transform_raw(g);
  if (!options_.standardize) return raw;
  for (Eigen::Index i = 0; i < raw.rows(); ++i)
    raw.row(i) = (raw.row(i) - mean_.transpose()).cwiseQuotient(stddev_.transpose());
  return raw;
}

std::vector<TensorSpec> gckn_tensor_specs(const GcknOptions& o, int feature_dim) {
  std::vector<TensorSpec> out;
  const int64_t k = o.path_size, f = o.n_filters, d = feature_dim;
  for (int64_t l = 1; l <= k; ++l) {
    out.push_back({"gckn.anchors." + std::to_string(l), DType::kF32, {f, l * d}});
    out.push_back({"gckn.factor." + std::to_string(l), DType::kF32, {f, f}});
  }
  out.push_back({"gckn.mean", DType::kF32, {k * f}});
  out.push_back({"gckn.std", DType::kF32, {k * f}});
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

GcknPathFeatures gckn_from_view(const ModelView& view, const GcknOptions& o, int feature_dim, bool use_attributes,
                                const std::string& what) {
  std::vector<MatF> anchors, factors;
  for (const TensorSpec& t : gckn_tensor_specs(o, feature_dim)) {
    const bool anchor = t.name.rfind("gckn.anchors.", 0) == 0, factor = t.name.rfind("gckn.factor.", 0) == 0;
    if (!anchor && !factor) continue;
    MatF m = Eigen::Map<const MatF>(view.f32(t.name, t.shape), t.shape[0], t.shape[1]);
    INDUCTIVE_CHECK(m.allFinite(), ErrorCode::kBadModelFile, what, ": ", t.name, " contains NaN or Inf");
    (anchor ? anchors : factors).push_back(std::move(m));
  }
  const int64_t dim = static_cast<int64_t>(o.path_size) * o.n_filters;
  VecF mean = Eigen::Map<const VecF>(view.f32("gckn.mean", {dim}), dim);
  VecF stddev = Eigen::Map<const VecF>(view.f32("gckn.std", {dim}), dim);
  INDUCTIVE_CHECK(mean.allFinite() && stddev.allFinite() && (stddev.array() > 0).all(), ErrorCode::kBadModelFile, what,
                  ": GCKN standardisation must be finite with std > 0");
  return GcknPathFeatures::from_stored(std::move(anchors), std::move(mean), std::move(stddev), feature_dim,
                                       use_attributes, o, std::move(factors));
}

}  // namespace inductive
