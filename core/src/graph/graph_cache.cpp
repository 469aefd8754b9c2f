// Per-dataset precomputation and its versioned, checksummed cache file (see inductive/graph_cache.h).
#include "inductive/graph_cache.h"

#include <cstring>
#include <iterator>
#include <sstream>

#include "inductive/atomic_file.h"
#include "inductive/files.h"
#include "inductive/error.h"

namespace inductive {

namespace {

constexpr char kMagic[8] = {'I', 'N', 'D', 'G', 'C', 'A', 'C', 'H'};

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

class Writer {
 public:
  void u32(uint32_t v) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  void u64(uint64_t v) {
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  void raw(const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    out.insert(out.end(), b, b + n);
  }
  void matrix(const MatF& m) {
    u32(static_cast<uint32_t>(m.rows()));
    u32(static_cast<uint32_t>(m.cols()));
    for (Eigen::Index i = 0; i < m.size(); ++i) {
      uint32_t bits;
      std::memcpy(&bits, m.data() + i, 4);
      u32(bits);
    }
  }
  std::vector<uint8_t> out;
};

class Reader {
 public:
  Reader(const uint8_t* p, size_t n, const std::string& what) : p_(p), n_(n), what_(what) {}
  void need(uint64_t bytes, const char* field) {
    INDUCTIVE_CHECK(bytes <= n_ - pos_, ErrorCode::kBadModelFile, what_, ": truncated graph cache: ", field, " needs ",
                    bytes, " bytes at offset ", pos_, ", got ", n_ - pos_);
  }
  uint32_t u32(const char* field) {
    need(4, field);
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(p_[pos_ + i]) << (8 * i);
    pos_ += 4;
    return v;
  }
  uint64_t u64(const char* field) {
    const uint64_t lo = u32(field), hi = u32(field);
    return lo | (hi << 32);
  }
  std::string text(size_t len, const char* field) {
    need(len, field);
    std::string s(reinterpret_cast<const char*>(p_ + pos_), len);
    pos_ += len;
    return s;
  }
  MatF matrix(const char* field) {
    const uint64_t rows = u32(field), cols = u32(field);
    INDUCTIVE_CHECK(rows <= (1u << 28) && cols <= (1u << 28) && rows * cols <= (n_ - pos_) / 4,
                    ErrorCode::kBadModelFile, what_, ": graph cache: ", field, " claims ", rows, " x ", cols,
                    " floats, more than the ", n_ - pos_, " bytes left");
    MatF m(static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(cols));
    for (Eigen::Index i = 0; i < m.size(); ++i) {
      const uint32_t bits = u32(field);
      std::memcpy(m.data() + i, &bits, 4);
    }
    INDUCTIVE_CHECK(m.allFinite(), ErrorCode::kBadModelFile, what_, ": graph cache: ", field, " contains NaN or Inf");
    return m;
  }
  size_t pos() const { return pos_; }

 private:
  const uint8_t* p_;
  size_t n_, pos_ = 0;
  std::string what_;
};

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

std::vector<uint8_t> serialise_graph_cache(const std::string& key, const PrecomputedDataset& data,
                                           const GraphPrecomputeOptions& o) {
  Writer payload;
  payload.u32(static_cast<uint32_t>(data.graphs.size()));
  for (const PrecomputedGraph& g : data.graphs) {
    payload.matrix(g.kernel);
    payload.matrix(g.lap_pe);
    payload.matrix(g.gckn);
  }
  payload.u32(o.gckn ? 1 : 0);
  if (o.gckn) {
    payload.u32(static_cast<uint32_t>(data.gckn.feature_dim()));
    payload.u32(data.gckn.use_attributes() ? 1 : 0);
    for (const Nystrom& layer : data.gckn.layers()) payload.matrix(layer.anchors());
    payload.matrix(data.gckn.mean().transpose());
    payload.matrix(data.gckn.stddev().transpose());
  }
  Writer file;
  file.raw(kMagic, 8);
  file.u32(kGraphCacheVersion);
  file.u32(static_cast<uint32_t>(key.size()));
  file.raw(key.data(), key.size());
  file.u64(payload.out.size());
  file.raw(payload.out.data(), payload.out.size());
  file.u64(fnv1a(file.out.data(), file.out.size()));
  return file.out;
}

PrecomputedDataset parse_graph_cache(const uint8_t* bytes, size_t size, const std::string& expected_key,
                                     const GraphPrecomputeOptions& o, const std::string& what) {
  INDUCTIVE_CHECK(size >= 8 + 4 + 4 + 8 + 8, ErrorCode::kBadModelFile, what, ": not a graph cache: got ", size,
                  " bytes, expected at least 32");
  INDUCTIVE_CHECK(std::memcmp(bytes, kMagic, 8) == 0, ErrorCode::kBadModelFile, what,
                  ": not a graph cache: bad magic bytes, expected \"INDGCACH\"");
  uint64_t stored = 0;
  for (int i = 0; i < 8; ++i) stored |= static_cast<uint64_t>(bytes[size - 8 + i]) << (8 * i);
  const uint64_t actual = fnv1a(bytes, size - 8);
  INDUCTIVE_CHECK(stored == actual, ErrorCode::kBadModelFile, what, ": graph cache checksum mismatch: got ",
                  hex(actual), ", file says ", hex(stored), " (corrupt or truncated)");
  Reader r(bytes, size - 8, what);
  r.text(8, "magic");
  const uint32_t version = r.u32("format version");
  INDUCTIVE_CHECK(version == kGraphCacheVersion, ErrorCode::kUnsupportedVersion, what, ": graph cache format version ",
                  version, ", this build writes and reads version ", kGraphCacheVersion);
  const uint32_t key_len = r.u32("key length");
  const std::string key = r.text(key_len, "key");
  INDUCTIVE_CHECK(key == expected_key, ErrorCode::kInvalidArgument, what, ": stale graph cache: key \"",
                  key.substr(0, 300), "\", expected \"", expected_key.substr(0, 300), "\"");
  const uint64_t payload = r.u64("payload length");
  INDUCTIVE_CHECK(payload == size - 8 - r.pos(), ErrorCode::kBadModelFile, what, ": graph cache payload is ",
                  size - 8 - r.pos(), " bytes, header says ", payload);
  PrecomputedDataset out;
  const uint32_t n = r.u32("graph count");
  INDUCTIVE_CHECK(n <= payload / 24, ErrorCode::kBadModelFile, what, ": graph cache claims ", n,
                  " graphs in a payload of ", payload, " bytes");
  out.graphs.resize(n);
  for (auto& g : out.graphs) {
    g.kernel = r.matrix("kernel");
    g.lap_pe = r.matrix("lap_pe");
    g.gckn = r.matrix("gckn features");
  }
  const uint32_t has_gckn = r.u32("gckn flag");
  INDUCTIVE_CHECK(has_gckn == (o.gckn ? 1u : 0u), ErrorCode::kBadModelFile, what, ": graph cache gckn flag ", has_gckn,
                  ", expected ", o.gckn ? 1 : 0);
  if (o.gckn) {
    const int feature_dim = static_cast<int>(r.u32("gckn feature dim"));
    const bool use_attributes = r.u32("gckn attribute flag") != 0;
    std::vector<MatF> anchors;
    for (int l = 1; l <= o.gckn_options.path_size; ++l) anchors.push_back(r.matrix("gckn anchors"));
    const MatF mean = r.matrix("gckn mean"), sd = r.matrix("gckn std");
    INDUCTIVE_CHECK(mean.rows() == 1 && sd.rows() == 1, ErrorCode::kBadModelFile, what,
                    ": graph cache gckn mean/std must be row vectors");
    try {
      out.gckn = GcknPathFeatures::from_stored(std::move(anchors), mean.row(0).transpose(), sd.row(0).transpose(),
                                               feature_dim, use_attributes, o.gckn_options);
    } catch (const Error& e) {
      INDUCTIVE_FAIL(ErrorCode::kBadModelFile, what, ": graph cache gckn parameters: ", e.what());
    }
  }
  INDUCTIVE_CHECK(r.pos() == size - 8, ErrorCode::kBadModelFile, what, ": graph cache has ", size - 8 - r.pos(),
                  " unexplained bytes before its checksum");
  return out;
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
