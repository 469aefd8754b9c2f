// Graph invariants, degrees and the dataset hash (see inductive/graph.h).
#include <algorithm>
#include <cstring>

#include "inductive/error.h"
#include "inductive/graph.h"

namespace inductive {

Graph Graph::from_edges(int n_nodes, const std::vector<std::array<int32_t, 2>>& pairs,
                        std::vector<int32_t> node_labels) {
  INDUCTIVE_CHECK(n_nodes >= 1, ErrorCode::kInvalidArgument, "graph: a graph needs at least one node: got ", n_nodes,
                  " nodes");
  Graph g;
  g.n_nodes = n_nodes;
  g.edges.reserve(pairs.size());
  for (size_t e = 0; e < pairs.size(); ++e) {
    int32_t u = pairs[e][0], v = pairs[e][1];
    INDUCTIVE_CHECK(u >= 0 && u < n_nodes && v >= 0 && v < n_nodes, ErrorCode::kInvalidArgument, "graph: edge ", e,
                    " (", u, ", ", v, ") names a node outside the graph: expected ids in [0, ", n_nodes, ")");
    if (u == v) {
      ++g.n_self_loops;
      continue;
    }
    if (u > v) std::swap(u, v);
    g.edges.push_back({u, v});
  }
  std::sort(g.edges.begin(), g.edges.end());
  g.edges.erase(std::unique(g.edges.begin(), g.edges.end()), g.edges.end());
  if (node_labels.empty()) node_labels.assign(n_nodes, 0);
  INDUCTIVE_CHECK(static_cast<int>(node_labels.size()) == n_nodes, ErrorCode::kShapeMismatch,
                  "graph: node labels: got ", node_labels.size(), " labels, expected ", n_nodes, " (one per node)");
  g.node_labels = std::move(node_labels);
  g.validate("graph");
  return g;
}

std::vector<int32_t> Graph::degrees() const {
  std::vector<int32_t> deg(n_nodes, 0);
  for (const auto& e : edges) {
    ++deg[e[0]];
    ++deg[e[1]];
  }
  return deg;
}

std::vector<std::vector<int32_t>> Graph::neighbours() const {
  std::vector<std::vector<int32_t>> adj(n_nodes);
  for (const auto& e : edges) {
    adj[e[0]].push_back(e[1]);
    adj[e[1]].push_back(e[0]);
  }
  for (auto& a : adj) std::sort(a.begin(), a.end());
  return adj;
}

void Graph::validate(const std::string& what, int vocabulary) const {
  INDUCTIVE_CHECK(n_nodes >= 1, ErrorCode::kInvalidArgument, what, ": a graph needs at least one node: got ", n_nodes);
  for (size_t e = 0; e < edges.size(); ++e) {
    const auto& uv = edges[e];
    INDUCTIVE_CHECK(uv[0] >= 0 && uv[1] < n_nodes && uv[0] < uv[1], ErrorCode::kInvalidArgument, what, ": edge ", e,
                    " is (", uv[0], ", ", uv[1], "): expected 0 <= u < v < ", n_nodes);
    INDUCTIVE_CHECK(e == 0 || edges[e - 1] < uv, ErrorCode::kInvalidArgument, what, ": edge ", e, " (", uv[0], ", ",
                    uv[1], ") is out of order or repeated: expected sorted unique edges");
  }
  INDUCTIVE_CHECK(static_cast<int>(node_labels.size()) == n_nodes, ErrorCode::kShapeMismatch, what,
                  ": node labels: got ", node_labels.size(), ", expected ", n_nodes, " (one per node)");
  for (int i = 0; i < n_nodes; ++i)
    INDUCTIVE_CHECK(node_labels[i] >= 0 && (vocabulary <= 0 || node_labels[i] < vocabulary),
                    ErrorCode::kInvalidArgument, what, ": node ", i, " has label ", node_labels[i],
                    ": expected a label in [0, ", vocabulary > 0 ? std::to_string(vocabulary) : std::string("inf"),
                    ")");
  INDUCTIVE_CHECK(node_attributes.size() == 0 || node_attributes.rows() == n_nodes, ErrorCode::kShapeMismatch, what,
                  ": node attributes have ", node_attributes.rows(), " rows, expected ", n_nodes);
  INDUCTIVE_CHECK(node_attributes.allFinite(), ErrorCode::kInvalidArgument, what,
                  ": node attributes contain NaN or Inf");
}

int64_t GraphDataset::n_nodes_total() const {
  int64_t total = 0;
  for (const auto& g : graphs) total += g.n_nodes;
  return total;
}

namespace {

struct Fnv1a {
  uint64_t h = 1469598103934665603ull;
  void bytes(const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    for (size_t i = 0; i < n; ++i) {
      h ^= b[i];
      h *= 1099511628211ull;
    }
  }
  // Little-endian, whatever the host (wasm and x86 are both little-endian, but say so).
  void u64(uint64_t v) {
    uint8_t b[8];
    for (int i = 0; i < 8; ++i) b[i] = static_cast<uint8_t>(v >> (8 * i));
    bytes(b, 8);
  }
  void f32(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    u64(u);
  }
};

}  // namespace

uint64_t dataset_hash(const GraphDataset& ds) {
  Fnv1a h;
  h.u64(ds.graphs.size());
  h.u64(ds.node_label_values.size());
  for (int64_t v : ds.node_label_values) h.u64(static_cast<uint64_t>(v));
  h.u64(ds.class_values.size());
  for (int64_t v : ds.class_values) h.u64(static_cast<uint64_t>(v));
  for (const Graph& g : ds.graphs) {
    h.u64(static_cast<uint64_t>(g.n_nodes));
    h.u64(g.edges.size());
    for (const auto& e : g.edges) h.u64((static_cast<uint64_t>(e[0]) << 32) | static_cast<uint32_t>(e[1]));
    h.u64(static_cast<uint64_t>(g.n_self_loops));
    for (int32_t l : g.node_labels) h.u64(static_cast<uint32_t>(l));
    h.u64(static_cast<uint64_t>(g.node_attributes.rows()));
    h.u64(static_cast<uint64_t>(g.node_attributes.cols()));
    for (Eigen::Index i = 0; i < g.node_attributes.size(); ++i) h.f32(g.node_attributes.data()[i]);
    h.u64(static_cast<uint64_t>(static_cast<int64_t>(g.label)));
    h.u64(g.has_target ? 1 : 0);
    h.f32(g.target);
  }
  return h.h;
}

}  // namespace inductive
