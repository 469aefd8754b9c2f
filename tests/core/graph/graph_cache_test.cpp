// Per-dataset precomputation and its cache file (core/src/graph/graph_cache.cpp): hits reproduce the computed data
// exactly; stale keys, other versions and corrupt bytes are detected and recomputed.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <iterator>

#include "../test_util.h"
#include "inductive/graph_cache.h"
#include "inductive/model_file.h"

namespace inductive {
namespace {

using testing::expect_error;

std::string repo_data(const std::string& rel) { return std::string(INDUCTIVE_TEST_DATA) + "/../../data/" + rel; }

GraphDataset small_mutag() {
  GraphDataset ds = read_tu_dataset(repo_data("tu-MUTAG"), "MUTAG");
  ds.graphs.resize(20);
  return ds;
}

GraphPrecomputeOptions all_options() {
  GraphPrecomputeOptions o;
  o.kernel_options.type = GraphKernelType::kPStep;
  o.kernel_options.gamma = 0.5;
  o.kernel_options.p = 3;
  o.lap_pe_dim = 4;
  o.gckn = true;
  o.gckn_options.path_size = 3;
  o.gckn_options.n_filters = 4;
  o.gckn_options.kmeans_iter = 10;
  o.gckn_train = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  return o;
}

std::vector<uint8_t> read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}
void write_all(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

void expect_same(const PrecomputedDataset& a, const PrecomputedDataset& b) {
  ASSERT_EQ(a.graphs.size(), b.graphs.size());
  for (size_t i = 0; i < a.graphs.size(); ++i) {
    EXPECT_EQ(a.graphs[i].kernel, b.graphs[i].kernel);
    EXPECT_EQ(a.graphs[i].lap_pe, b.graphs[i].lap_pe);
    EXPECT_EQ(a.graphs[i].gckn, b.graphs[i].gckn);
  }
}

TEST(GraphCacheTest, PrecomputesShapesFromOneSpectrum) {
  const GraphDataset ds = small_mutag();
  const PrecomputedDataset d = precompute_graph_data(ds, all_options());
  ASSERT_EQ(d.graphs.size(), 20u);
  for (size_t i = 0; i < 20; ++i) {
    const int n = ds.graphs[i].n_nodes;
    EXPECT_EQ(d.graphs[i].kernel.rows(), n);
    EXPECT_EQ(d.graphs[i].kernel.cols(), n);
    EXPECT_EQ(d.graphs[i].lap_pe.cols(), 4);
    EXPECT_EQ(d.graphs[i].gckn.cols(), 12);
    EXPECT_EQ(d.graphs[i].kernel, graph_kernel(ds.graphs[i], all_options().kernel_options));
  }
  GraphPrecomputeOptions bad = all_options();
  bad.gckn_train = {25};
  expect_error([&] { precompute_graph_data(ds, bad); }, ErrorCode::kInvalidArgument, "gckn_train index 25");
}

TEST(GraphCacheTest, HitsReproduceAndStaleOrCorruptFilesAreRecomputed) {
  const GraphDataset ds = small_mutag();
  const GraphPrecomputeOptions o = all_options();
  const std::string path = inductive::testing::temp_path("inductive_graph_cache_test.bin");
  std::remove(path.c_str());

  const CachedGraphData first = load_or_precompute(path, ds, o);
  EXPECT_EQ(first.status, GraphCacheStatus::kMissing);
  const CachedGraphData second = load_or_precompute(path, ds, o);
  EXPECT_EQ(second.status, GraphCacheStatus::kHit) << second.reason;
  expect_same(first.data, second.data);
  // The GCKN model comes back bit for bit (its factors are stored, not recomputed): it embeds a graph exactly as the
  // fitted one does, so a run from the cache writes the model of a run without it.
  ASSERT_EQ(second.data.gckn.layers().size(), first.data.gckn.layers().size());
  for (size_t l = 0; l < first.data.gckn.layers().size(); ++l) {
    EXPECT_EQ(second.data.gckn.layers()[l].anchors(), first.data.gckn.layers()[l].anchors());
    EXPECT_EQ(second.data.gckn.layers()[l].factor(), first.data.gckn.layers()[l].factor());
  }
  EXPECT_EQ(second.data.gckn.transform(ds.graphs[3]), first.data.gckn.transform(ds.graphs[3]));

  // Other options: stale, recomputed, and the file now holds the new key.
  GraphPrecomputeOptions other = o;
  other.kernel_options.p = 2;
  const CachedGraphData stale = load_or_precompute(path, ds, other);
  EXPECT_EQ(stale.status, GraphCacheStatus::kStale);
  EXPECT_NE(stale.reason.find("stale graph cache"), std::string::npos) << stale.reason;
  EXPECT_EQ(load_or_precompute(path, ds, other).status, GraphCacheStatus::kHit);

  // Another dataset (one label changed): stale.
  GraphDataset changed = ds;
  changed.graphs[7].node_labels[0] = (changed.graphs[7].node_labels[0] + 1) % 7;
  EXPECT_EQ(load_or_precompute(path, changed, other).status, GraphCacheStatus::kStale);

  // One flipped byte, a truncation, garbage: corrupt (the checksum catches what the structure would not).
  std::vector<uint8_t> bytes = read_all(path);
  for (size_t at : {bytes.size() / 2, size_t(12), bytes.size() - 1}) {
    std::vector<uint8_t> bad = bytes;
    bad[at] ^= 0x10;
    write_all(path, bad);
    const CachedGraphData r = load_or_precompute(path, changed, other);
    EXPECT_EQ(r.status, GraphCacheStatus::kCorrupt) << at << ": " << r.reason;
    EXPECT_EQ(load_or_precompute(path, changed, other).status, GraphCacheStatus::kHit);
  }
  write_all(path, std::vector<uint8_t>(bytes.begin(), bytes.begin() + bytes.size() / 3));
  EXPECT_EQ(load_or_precompute(path, changed, other).status, GraphCacheStatus::kCorrupt);
  write_all(path, std::vector<uint8_t>(5, 'x'));
  EXPECT_EQ(load_or_precompute(path, changed, other).status, GraphCacheStatus::kCorrupt);
  std::remove(path.c_str());
}

TEST(GraphCacheTest, ParseReportsVersionKeyAndChecksum) {
  const GraphDataset ds = small_mutag();
  GraphPrecomputeOptions o;
  o.lap_pe_dim = 2;
  const std::string key = graph_cache_key(ds, o);
  EXPECT_NE(key.find("inductive-graph-cache v2 dataset=MUTAG:"), std::string::npos) << key;
  EXPECT_NE(key.find("kernel=diffusion(beta=1) lap_pe=2 gckn=none"), std::string::npos) << key;
  const PrecomputedDataset d = precompute_graph_data(ds, o);
  std::vector<uint8_t> bytes = serialise_graph_cache(key, d, o);
  expect_same(parse_graph_cache(bytes.data(), bytes.size(), key, o, "c"), d);
  expect_error([&] { parse_graph_cache(bytes.data(), bytes.size(), key + "x", o, "c"); }, ErrorCode::kInvalidArgument,
               "c: stale graph cache");

  // The cache is a file of the model-file container: the tensors of every graph, one after the other.
  const ModelView view = read_model(bytes.data(), bytes.size());
  EXPECT_EQ(view.model, "graph-cache");
  int64_t nodes = 0, squares = 0;
  for (const Graph& g : ds.graphs) {
    nodes += g.n_nodes;
    squares += int64_t{g.n_nodes} * g.n_nodes;
  }
  EXPECT_NE(view.f32("kernels", {squares}), nullptr);
  EXPECT_NE(view.f32("lap_pe", {nodes, 2}), nullptr);
  EXPECT_EQ(view.config["graphs"], ds.n_graphs());

  // A future version (checksum intact): reported as a version, not as corruption; so is the version-1 format.
  ModelContents future;
  future.model = view.model;
  future.config = view.config;
  future.config["version"] = 3;
  for (const TensorInfo& t : view.tensors) future.tensors.push_back({t.name, t.dtype, t.shape, view.data + t.begin});
  const std::vector<uint8_t> later = write_model(future);
  expect_error([&] { parse_graph_cache(later.data(), later.size(), key, o, "c"); }, ErrorCode::kUnsupportedVersion,
               "format version 3, this build writes and reads version 2");
  const std::string v1 = "INDGCACH\x01\x00\x00\x00 and the rest";
  expect_error([&] { parse_graph_cache(reinterpret_cast<const uint8_t*>(v1.data()), v1.size(), key, o, "c"); },
               ErrorCode::kUnsupportedVersion, "format version 1, this build writes and reads version 2");
  // Flipped bits in the numbers: the checksum; in the header: the container's checks; another kind: named.
  std::vector<uint8_t> bad = bytes;
  bad.back() ^= 1;
  expect_error([&] { parse_graph_cache(bad.data(), bad.size(), key, o, "c"); }, ErrorCode::kBadModelFile,
               "checksum mismatch");
  bad = bytes;
  bad[9] ^= 0x40;
  expect_error([&] { parse_graph_cache(bad.data(), bad.size(), key, o, "c"); }, ErrorCode::kBadModelFile,
               "c: not a readable graph cache");
  future.model = "otke-like";
  future.config["version"] = 2;
  const std::vector<uint8_t> other = write_model(future);
  expect_error([&] { parse_graph_cache(other.data(), other.size(), key, o, "c"); }, ErrorCode::kBadModelFile,
               "not a graph cache: a \"otke-like\" model file");
  // Options that imply other tensors than the file holds: corrupt, naming the tensor.
  GraphPrecomputeOptions more = o;
  more.lap_pe_dim = 3;
  expect_error([&] { parse_graph_cache(bytes.data(), bytes.size(), key, more, "c"); }, ErrorCode::kBadModelFile,
               "lap_pe");
}

}  // namespace
}  // namespace inductive
