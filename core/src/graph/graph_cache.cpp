// Per-dataset precomputation and its versioned, checksummed cache file (see inductive/graph_cache.h).
#include "inductive/graph_cache.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <sstream>

#include "inductive/atomic_file.h"
#include "inductive/error.h"
#include "inductive/files.h"
#include "inductive/model_file.h"
#include "io/json_section.h"

namespace inductive {

namespace {

uint64_t fnv1a(const uint8_t* p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
  return h;
}

std::string hex(uint64_t v) {
  static const char* digits = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) s[i] = digits[v & 15];
  return s;
}

}  // namespace

void GraphPrecomputeOptions::validate(int n_graphs) const {
  if (kernel) kernel_options.validate();
  INDUCTIVE_CHECK(lap_pe_dim >= 0, ErrorCode::kInvalidArgument, "graph precompute: lap_pe_dim must be >= 0: got ",
                  lap_pe_dim);
  if (gckn) {
    gckn_options.validate();
    INDUCTIVE_CHECK(!gckn_train.empty(), ErrorCode::kInvalidArgument,
                    "graph precompute: GCKN features need training graphs (gckn_train is empty)");
    for (int32_t t : gckn_train)
      INDUCTIVE_CHECK(t >= 0 && t < n_graphs, ErrorCode::kInvalidArgument, "graph precompute: gckn_train index ", t,
                      " is out of range: expected 0..", n_graphs - 1);
  }
}

std::string GraphPrecomputeOptions::describe() const {
  std::ostringstream out;
  out << "kernel=" << (kernel ? kernel_options.describe() : std::string("none")) << " lap_pe=" << lap_pe_dim;
  if (gckn) {
    const auto* p = reinterpret_cast<const uint8_t*>(gckn_train.data());
    out << " " << gckn_options.describe() << " gckn_train=" << gckn_train.size() << ":"
        << hex(fnv1a(p, gckn_train.size() * sizeof(int32_t)));
  } else {
    out << " gckn=none";
  }
  return out.str();
}

PrecomputedDataset precompute_graph_data(const GraphDataset& ds, const GraphPrecomputeOptions& o) {
  o.validate(ds.n_graphs());
  PrecomputedDataset out;
  out.graphs.resize(ds.graphs.size());
  if (o.kernel || o.lap_pe_dim > 0)
    for (size_t i = 0; i < ds.graphs.size(); ++i) {
      const GraphSpectrum s = graph_spectrum(ds.graphs[i]);
      if (o.kernel) out.graphs[i].kernel = graph_kernel(s, o.kernel_options);
      if (o.lap_pe_dim > 0) out.graphs[i].lap_pe = laplacian_pe(s, o.lap_pe_dim);
    }
  if (o.gckn) {
    out.gckn = GcknPathFeatures::fit(ds.graphs, o.gckn_train, ds.n_node_labels(), o.gckn_options, o.communicator);
    for (size_t i = 0; i < ds.graphs.size(); ++i) out.graphs[i].gckn = out.gckn.transform(ds.graphs[i]);
  }
  return out;
}

std::string graph_cache_key(const GraphDataset& ds, const GraphPrecomputeOptions& o) {
  std::ostringstream out;
  out << "inductive-graph-cache v" << kGraphCacheVersion << " dataset=" << ds.name << ":" << hex(dataset_hash(ds))
      << ":" << ds.n_graphs() << " " << o.describe();
  return out.str();
}

// The cache is a safetensors file of the model-file container (inductive/model_file.h), model kind "graph-cache":
// tensors "nodes" (I32 [G], every graph's node count), "kernels" (F32 [sum n^2], the graphs' n x n kernels one after
// the other), "lap_pe" ([sum n, lap_pe_dim]), "gckn.features" ([sum n, D]) and the GCKN model ("gckn.anchors.<l>",
// "gckn.factor.<l>", "gckn.mean", "gckn.std": gckn_tensors, as GraphiT models hold it), each present only when asked
// for; config {"version", "key", "graphs", "checksum" (FNV-1a of the data section: the container checks the structure,
// the checksum the numbers), "gckn": {"feature_dim", "use_attributes"}}. Concatenating the graphs keeps the header
// small whatever their number. The GCKN model comes back bit for bit (factors included).
constexpr const char* kCacheKind = "graph-cache";

int64_t nodes_of(const PrecomputedGraph& g) { return std::max({g.kernel.rows(), g.lap_pe.rows(), g.gckn.rows()}); }

std::vector<uint8_t> serialise_graph_cache(const std::string& key, const PrecomputedDataset& data,
                                           const GraphPrecomputeOptions& o) {
  const int64_t G = static_cast<int64_t>(data.graphs.size());
  std::vector<int32_t> nodes;
  int64_t total = 0, squares = 0;
  for (const PrecomputedGraph& g : data.graphs) {
    nodes.push_back(static_cast<int32_t>(nodes_of(g)));
    total += nodes.back();
    squares += static_cast<int64_t>(nodes.back()) * nodes.back();
  }
  // Every graph's matrix of one kind, one after the other.
  auto concat = [&](const MatF PrecomputedGraph::*field, int64_t floats) {
    std::vector<float> out;
    out.reserve(static_cast<size_t>(floats));
    for (const PrecomputedGraph& g : data.graphs)
      out.insert(out.end(), (g.*field).data(), (g.*field).data() + (g.*field).size());
    INDUCTIVE_CHECK(static_cast<int64_t>(out.size()) == floats, ErrorCode::kInternal,
                    "graph cache: a graph's precomputed matrix does not have its node count's shape");
    return out;
  };
  ModelContents c;
  c.model = kCacheKind;
  c.config = {{"version", kGraphCacheVersion}, {"key", key}, {"graphs", G}, {"checksum", hex(0)}};
  c.tensors.push_back({"nodes", DType::kI32, {G}, nodes.data()});
  std::vector<float> kernels, lap_pe, gckn;
  if (o.kernel) {
    kernels = concat(&PrecomputedGraph::kernel, squares);
    c.tensors.push_back({"kernels", DType::kF32, {squares}, kernels.data()});
  }
  if (o.lap_pe_dim > 0) {
    lap_pe = concat(&PrecomputedGraph::lap_pe, total * o.lap_pe_dim);
    c.tensors.push_back({"lap_pe", DType::kF32, {total, o.lap_pe_dim}, lap_pe.data()});
  }
  if (o.gckn) {
    const int64_t D = data.gckn.dim();
    gckn = concat(&PrecomputedGraph::gckn, total * D);
    c.tensors.push_back({"gckn.features", DType::kF32, {total, D}, gckn.data()});
    c.config["gckn"] = {{"feature_dim", data.gckn.feature_dim()}, {"use_attributes", data.gckn.use_attributes()}};
    for (TensorData& t : gckn_tensors(data.gckn)) c.tensors.push_back(std::move(t));  // as GraphiT models hold it
  }
  // The checksum covers the data section, whose layout write_model fixes: write, sum, write again (the checksum's
  // text has a fixed width, so the layout does not move).
  const std::vector<uint8_t> draft = write_model(c);
  const ModelView view = read_model(draft.data(), draft.size());
  c.config["checksum"] = hex(fnv1a(view.data, view.data_size));
  return write_model(c);
}

PrecomputedDataset parse_graph_cache(const uint8_t* bytes, size_t size, const std::string& expected_key,
                                     const GraphPrecomputeOptions& o, const std::string& what) {
  // Version 1 had a format of its own, which began with these bytes.
  INDUCTIVE_CHECK(size < 8 || std::memcmp(bytes, "INDGCACH", 8) != 0, ErrorCode::kUnsupportedVersion, what,
                  ": graph cache format version 1, this build writes and reads version ", kGraphCacheVersion);
  ModelView view;
  try {
    view = read_model(bytes, size);
  } catch (const Error& e) {
    INDUCTIVE_FAIL(
        e.code() == ErrorCode::kUnsupportedVersion ? ErrorCode::kUnsupportedVersion : ErrorCode::kBadModelFile, what,
        ": not a readable graph cache: ", e.what());
  }
  INDUCTIVE_CHECK(view.model == kCacheKind, ErrorCode::kBadModelFile, what, ": not a graph cache: a \"", view.model,
                  "\" model file");
  // The config: anything unexpected is corruption, except a newer version and another key (stale).
  int version = 0;
  int64_t G = 0;
  std::string key, checksum;
  int feature_dim = 0;
  bool use_attributes = false;
  try {
    JsonSection top(view.config, what, "config");
    version = top.integer("version", 0);
    if (version != static_cast<int>(kGraphCacheVersion)) {
      INDUCTIVE_FAIL(ErrorCode::kUnsupportedVersion, what, ": graph cache format version ", version,
                     ", this build writes and reads version ", kGraphCacheVersion);
    }
    key = top.str("key", "");
    G = top.integer64("graphs", -1);
    checksum = top.str("checksum", "");
    if (const nlohmann::json* section = top.object_or_null("gckn")) {
      JsonSection g(*section, what, "gckn");
      feature_dim = g.integer("feature_dim", 0);
      use_attributes = g.boolean("use_attributes", false);
      g.finish();
    }
    top.finish();
  } catch (const Error& e) {
    if (e.code() == ErrorCode::kUnsupportedVersion) throw;
    INDUCTIVE_FAIL(ErrorCode::kBadModelFile, what, ": graph cache config: ", e.what());
  }
  INDUCTIVE_CHECK(checksum == hex(fnv1a(view.data, view.data_size)), ErrorCode::kBadModelFile, what,
                  ": graph cache checksum mismatch: got ", hex(fnv1a(view.data, view.data_size)), ", file says ",
                  checksum.substr(0, 20), " (corrupt or truncated)");
  INDUCTIVE_CHECK(key == expected_key, ErrorCode::kInvalidArgument, what, ": stale graph cache: key \"",
                  key.substr(0, 300), "\", expected \"", expected_key.substr(0, 300), "\"");
  INDUCTIVE_CHECK(G >= 0 && (o.gckn == (feature_dim > 0)), ErrorCode::kBadModelFile, what, ": graph cache claims ", G,
                  " graphs and ", feature_dim > 0 ? "" : "no ", "GCKN model");
  try {
    const int32_t* nodes = view.i32("nodes", {G});
    int64_t total = 0, squares = 0;
    for (int64_t i = 0; i < G; ++i) {
      INDUCTIVE_CHECK(nodes[i] >= 0, ErrorCode::kBadModelFile, "graph ", i, " has ", nodes[i], " nodes");
      total += nodes[i];
      squares += static_cast<int64_t>(nodes[i]) * nodes[i];
    }
    const int64_t D = o.gckn ? static_cast<int64_t>(o.gckn_options.path_size) * o.gckn_options.n_filters : 0;
    const float* kernels = o.kernel ? view.f32("kernels", {squares}) : nullptr;
    const float* lap_pe = o.lap_pe_dim > 0 ? view.f32("lap_pe", {total, o.lap_pe_dim}) : nullptr;
    const float* gckn = o.gckn ? view.f32("gckn.features", {total, D}) : nullptr;
    auto finite = [](const MatF& m, const char* name) {
      INDUCTIVE_CHECK(m.allFinite(), ErrorCode::kBadModelFile, name, " contains NaN or Inf");
      return m;
    };
    PrecomputedDataset out;
    out.graphs.resize(static_cast<size_t>(G));
    for (int64_t i = 0; i < G; ++i) {
      PrecomputedGraph& g = out.graphs[static_cast<size_t>(i)];
      const int n = nodes[i];
      if (kernels) (g.kernel = finite(CMapF(kernels, n, n), "kernels"), kernels += static_cast<int64_t>(n) * n);
      if (lap_pe) (g.lap_pe = finite(CMapF(lap_pe, n, o.lap_pe_dim), "lap_pe"), lap_pe += int64_t{n} * o.lap_pe_dim);
      if (gckn) (g.gckn = finite(CMapF(gckn, n, D), "gckn.features"), gckn += int64_t{n} * D);
    }
    if (o.gckn) out.gckn = gckn_from_view(view, o.gckn_options, feature_dim, use_attributes, what);
    INDUCTIVE_CHECK(static_cast<int>(view.tensors.size()) == 1 + (o.kernel ? 1 : 0) + (o.lap_pe_dim > 0 ? 1 : 0) +
                                                                 (o.gckn ? 3 + 2 * o.gckn_options.path_size : 0),
                    ErrorCode::kBadModelFile, "the file holds ", view.tensors.size(),
                    " tensors, more than its options imply");
    return out;
  } catch (const Error& e) {
    INDUCTIVE_FAIL(ErrorCode::kBadModelFile, what, ": graph cache: ", e.what());
  }
}

const char* graph_cache_status_name(GraphCacheStatus status) {
  switch (status) {
    case GraphCacheStatus::kHit:
      return "hit";
    case GraphCacheStatus::kMissing:
      return "missing";
    case GraphCacheStatus::kStale:
      return "stale";
    case GraphCacheStatus::kCorrupt:
      return "corrupt";
  }
  return "unknown";
}

CachedGraphData load_or_precompute(const std::string& path, const GraphDataset& ds, const GraphPrecomputeOptions& o) {
  o.validate(ds.n_graphs());
  const std::string key = graph_cache_key(ds, o);
  CachedGraphData result;
  if (file_exists(path)) {
    try {
      const std::vector<uint8_t> bytes = read_file_bytes(path, "graph cache");
      PrecomputedDataset data = parse_graph_cache(bytes.data(), bytes.size(), key, o, path);
      // The key fixes the dataset, so a well-formed cache must agree with it on every graph's shape.
      bool shapes = data.graphs.size() == ds.graphs.size();
      for (size_t i = 0; shapes && i < ds.graphs.size(); ++i) {
        const int n = ds.graphs[i].n_nodes;
        const PrecomputedGraph& g = data.graphs[i];
        shapes = (o.kernel ? g.kernel.rows() == n && g.kernel.cols() == n : g.kernel.size() == 0) &&
                 (o.lap_pe_dim > 0 ? g.lap_pe.rows() == n && g.lap_pe.cols() == o.lap_pe_dim : g.lap_pe.size() == 0) &&
                 (o.gckn ? g.gckn.rows() == n && g.gckn.cols() == data.gckn.dim() : g.gckn.size() == 0);
      }
      INDUCTIVE_CHECK(shapes, ErrorCode::kBadModelFile, path,
                      ": graph cache shapes do not match the dataset it is keyed to");
      result.data = std::move(data);
      result.status = GraphCacheStatus::kHit;
      return result;
    } catch (const Error& e) {
      result.status = e.code() == ErrorCode::kInvalidArgument || e.code() == ErrorCode::kUnsupportedVersion
                          ? GraphCacheStatus::kStale
                          : GraphCacheStatus::kCorrupt;
      result.reason = e.what();
    }
  } else {
    result.status = GraphCacheStatus::kMissing;
    result.reason = path + ": no cache file";
  }
  result.data = precompute_graph_data(ds, o);
  write_file_atomic(path, serialise_graph_cache(key, result.data, o));
  return result;
}

}  // namespace inductive
