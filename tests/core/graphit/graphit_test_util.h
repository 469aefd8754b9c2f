// tests/core/graphit/graphit_test_util.h - synthetic graphs for the GraphiT suites: random symmetric adjacency,
// degrees, the normalised Laplacian (PyG's convention: isolated nodes get L_ii = 1), its diffusion kernel
// exp(-beta L) and LapPE, all computed simply with Eigen's symmetric eigensolver.
#pragma once

#include <cmath>
#include <ostream>
#include <random>
#include <vector>

#include <Eigen/Eigenvalues>

#include "inductive/graphit.h"
#include "inductive/graphit_train.h"

namespace inductive::testing {

struct TestGraphOptions {
  int vocab = 4;
  int features = 0;
  int pe = 0;
  int path = 0;
  double edge_prob = 0.4;
  double beta = 1.0;
  bool adjacency_kernel = false;  // D^-1/2 A D^-1/2 (zero rows for isolated nodes) instead of exp(-beta L)
};

// Builds the model inputs of a graph from its adjacency matrix (symmetric, zero diagonal).
inline GraphitGraph graph_from_adjacency(const Eigen::MatrixXd& adj, const std::vector<int32_t>& labels,
                                         const TestGraphOptions& o, std::mt19937& rng) {
  const int n = static_cast<int>(adj.rows());
  GraphitGraph g;
  g.num_nodes = n;
  g.node_labels = labels;
  Eigen::VectorXd deg = adj.rowwise().sum();
  g.degree = deg.cast<float>();
  Eigen::MatrixXd norm_adj(n, n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      norm_adj(i, j) = deg[i] > 0 && deg[j] > 0 ? adj(i, j) / std::sqrt(deg[i] * deg[j]) : 0.0;
  const Eigen::MatrixXd lap = Eigen::MatrixXd::Identity(n, n) - norm_adj;
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(lap);
  if (o.adjacency_kernel) {
    g.kernel = norm_adj.cast<float>();
  } else {
    const Eigen::VectorXd ev = (-o.beta * es.eigenvalues().array()).exp();
    g.kernel = (es.eigenvectors() * ev.asDiagonal() * es.eigenvectors().transpose()).cast<float>();
  }
  std::normal_distribution<float> nd(0.0f, 1.0f);
  if (o.features > 0) {
    g.node_features.resize(n, o.features);
    for (Eigen::Index i = 0; i < g.node_features.size(); ++i) g.node_features.data()[i] = nd(rng);
  }
  if (o.pe > 0) {
    g.pe = MatF::Zero(n, o.pe);
    for (int k = 0; k < o.pe && k + 1 < n; ++k) g.pe.col(k) = es.eigenvectors().col(k + 1).cast<float>();
  }
  if (o.path > 0) {
    g.path_features.resize(n, o.path);
    for (Eigen::Index i = 0; i < g.path_features.size(); ++i) g.path_features.data()[i] = nd(rng);
  }
  return g;
}

inline Eigen::MatrixXd random_adjacency(int n, double p, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(0, 1);
  Eigen::MatrixXd a = Eigen::MatrixXd::Zero(n, n);
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j)
      if (u(rng) < p) a(i, j) = a(j, i) = 1;
  return a;
}

inline GraphitGraph random_graph(int n, const TestGraphOptions& o, std::mt19937& rng) {
  std::vector<int32_t> labels(n);
  for (auto& l : labels) l = static_cast<int32_t>(rng() % o.vocab);
  return graph_from_adjacency(random_adjacency(n, o.edge_prob, rng), labels, o, rng);
}

inline std::vector<GraphitGraph> random_graphs(int count, int n_min, int n_max, const TestGraphOptions& o,
                                               uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<GraphitGraph> gs;
  for (int k = 0; k < count; ++k)
    gs.push_back(random_graph(n_min + static_cast<int>(rng() % (n_max - n_min + 1)), o, rng));
  return gs;
}

// A training set of `count` random graphs of n_min..n_max nodes for config `c` (its LapPE and path widths), with
// random targets of its task: classes, or regression values in [-2, 2).
inline GraphitDataset random_dataset(const GraphitConfig& c, int count, int n_min, int n_max, uint32_t seed) {
  TestGraphOptions o;
  o.pe = c.pe_dim;
  o.path = c.path_dim;
  GraphitDataset d;
  d.graphs = random_graphs(count, n_min, n_max, o, seed);
  std::mt19937 rng(seed + 1);
  for (int g = 0; g < count; ++g) {
    if (c.classification())
      d.classes.push_back(static_cast<int32_t>(rng() % c.outputs));
    else
      for (int k = 0; k < c.outputs; ++k) d.values.push_back(static_cast<float>(rng() % 100) / 25.0f - 2.0f);
  }
  return d;
}

// A small model for the suites that run one check over many shapes: the fields in the order the tables of
// variants list them, so each row names only what differs from the default. adjacency_kernel is a graph option
// (TestGraphOptions) the gradient suite carries along.
struct GraphitVariant {
  const char* name;
  bool kernel = true;
  GraphitNorm norm = GraphitNorm::kLayer;
  double dropout = 0.0;
  int pe = 0, path = 0, features = 0, vocab = 4;
  GraphitTask task = GraphitTask::kClassification;
  GraphitPooling pooling = GraphitPooling::kMean;
  int heads = 2;
  int d = 8;  // the head width dh = d / heads picks the attention kernel's path (graphit_attention.cpp)
  bool adjacency_kernel = false;
};

inline std::ostream& operator<<(std::ostream& os, const GraphitVariant& v) { return os << v.name; }

// Two layers, three classes or two regression targets.
inline GraphitConfig small_config(const GraphitVariant& v) {
  GraphitConfig c = GraphitConfig::with_dim(v.d, 2, v.heads);
  c.vocab = v.vocab;
  c.features = v.features;
  c.pe_dim = v.pe;
  c.path_dim = v.path;
  c.kernel = v.kernel;
  c.degree_scaling = v.kernel;
  c.norm = v.norm;
  c.dropout = v.dropout;
  c.pooling = v.pooling;
  c.task = v.task;
  c.outputs = c.classification() ? 3 : 2;
  return c;
}

}  // namespace inductive::testing
