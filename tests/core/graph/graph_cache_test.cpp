// Per-dataset precomputation and its cache file (core/src/graph/graph_cache.cpp): hits reproduce the computed data
// exactly; stale keys, other versions and corrupt bytes are detected and recomputed.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <iterator>

#include "../test_util.h"
#include "inductive/graph_cache.h"

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
  // The GCKN model comes back too: it embeds a graph as the fitted one does.
  EXPECT_LT((second.data.gckn.transform(ds.graphs[3]) - first.data.gckn.transform(ds.graphs[3])).cwiseAbs().maxCoeff(),
            1e-4f);

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
  EXPECT_NE(key.find("inductive-graph-cache v1 dataset=MUTAG:"), std::string::npos) << key;
  EXPECT_NE(key.find("kernel=diffusion(beta=1) lap_pe=2 gckn=none"), std::string::npos) << key;
  const PrecomputedDataset d = precompute_graph_data(ds, o);
  std::vector<uint8_t> bytes = serialise_graph_cache(key, d, o);
  expect_same(parse_graph_cache(bytes.data(), bytes.size(), key, o, "c"), d);
  expect_error([&] { parse_graph_cache(bytes.data(), bytes.size(), key + "x", o, "c"); }, ErrorCode::kInvalidArgument,
               "c: stale graph cache");
  // A future version with a correct checksum: reported as a version, not as corruption.
  std::vector<uint8_t> future = serialise_graph_cache(key, d, o);
  future[8] = 2;
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i + 8 < future.size(); ++i) {
    h ^= future[i];
    h *= 1099511628211ull;
  }
  for (int i = 0; i < 8; ++i) future[future.size() - 8 + i] = static_cast<uint8_t>(h >> (8 * i));
  expect_error([&] { parse_graph_cache(future.data(), future.size(), key, o, "c"); }, ErrorCode::kUnsupportedVersion,
               "format version 2, this build writes and reads version 1");
  bytes[40] ^= 1;
  expect_error([&] { parse_graph_cache(bytes.data(), bytes.size(), key, o, "c"); }, ErrorCode::kBadModelFile,
               "checksum mismatch");
}

}  // namespace
}  // namespace inductive
