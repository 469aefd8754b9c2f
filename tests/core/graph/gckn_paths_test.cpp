// GCKN path features (core/src/graph/gckn_paths.cpp): path enumeration counts, the cap, and the embedding against
// a direct evaluation of its definition.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "../test_util.h"
#include "inductive/gckn_paths.h"

namespace inductive {
namespace {

using testing::expect_error;

std::string repo_data(const std::string& rel) { return std::string(INDUCTIVE_TEST_DATA) + "/../../data/" + rel; }

Graph complete_graph(int n) {
  std::vector<std::array<int32_t, 2>> e;
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j) e.push_back({i, j});
  return Graph::from_edges(n, e);
}

TEST(GcknPathsTest, CountsPathsOnTriangleStarAndIsolatedNode) {
  // Triangle: from each node 1 path of 1 node, 2 of 2, 2 of 3, none longer.
  for (const auto& c : count_paths(complete_graph(3), 4, 1000)) EXPECT_EQ(c, (std::vector<int64_t>{1, 2, 2, 0}));
  // Star with centre 0 and leaves 1..3: centre 1 + 3 + 0; leaf 1 + 1 + 2.
  const Graph star = Graph::from_edges(4, {{0, 1}, {0, 2}, {0, 3}});
  const auto star_counts = count_paths(star, 3, 1000);
  EXPECT_EQ(star_counts[0], (std::vector<int64_t>{1, 3, 0}));
  for (int leaf = 1; leaf <= 3; ++leaf) EXPECT_EQ(star_counts[leaf], (std::vector<int64_t>{1, 1, 2}));
  // Isolated node and a self-loop (dropped): only the 1-node path.
  const Graph g = Graph::from_edges(3, {{0, 1}, {2, 2}});
  EXPECT_EQ(count_paths(g, 3, 1000)[2], (std::vector<int64_t>{1, 0, 0}));
  // K_n: (n-1)!/(n-l)! paths of l nodes from each node; simple paths only.
  const auto k5 = count_paths(complete_graph(5), 5, 100000);
  EXPECT_EQ(k5[0], (std::vector<int64_t>{1, 4, 12, 24, 24}));
  std::set<std::vector<int32_t>> seen;
  for_each_path(complete_graph(4), 4, 1000, [&](const int32_t* p, int l) {
    std::vector<int32_t> v(p, p + l);
    EXPECT_TRUE(seen.insert(v).second);
    EXPECT_EQ(std::set<int32_t>(v.begin(), v.end()).size(), v.size());
  });
  EXPECT_EQ(seen.size(), 4u * (1 + 3 + 6 + 6));
}

TEST(GcknPathsTest, CapStopsEnumerationWithAClearError) {
  // K_8 has 8 * (1 + 7 + 42 + 210 + 840) = 8800 paths of <= 5 nodes.
  EXPECT_EQ(count_paths(complete_graph(8), 5, 8800)[0][4], 840);
  expect_error([] { count_paths(complete_graph(8), 5, 8799); }, ErrorCode::kInvalidArgument,
               "a graph with 8 nodes and 28 edges has more than 8799 simple paths of 1..5 nodes");
  GcknOptions o;
  o.max_paths_per_graph = 100;
  o.n_filters = 2;
  expect_error([&] { GcknPathFeatures::fit({complete_graph(8)}, {0}, 1, o); }, ErrorCode::kInvalidArgument,
               "expected at most max_paths_per_graph = 100");
}

// The definition, evaluated directly: sum over paths of kappa(mean_j cos(x_pj, z_aj)), times the Nystrom factor.
MatF direct_features(const GcknPathFeatures& f, const Graph& g, int vocab) {
  const MatF x = gckn_node_features(g, vocab, f.use_attributes());
  const int k = f.options().path_size, nf = f.options().n_filters, d = f.feature_dim();
  const float s2 = f.options().sigma * f.options().sigma;
  MatF out = MatF::Zero(g.n_nodes, k * nf);
  std::vector<MatF> sums(k, MatF::Zero(g.n_nodes, nf));
  for_each_path(g, k, 1 << 30, [&](const int32_t* p, int l) {
    const MatF& z = f.layers()[l - 1].anchors();  // nf x (l d), each position block of norm 1/sqrt(l)
    for (int a = 0; a < nf; ++a) {
      double mean_cos = 0;
      for (int j = 0; j < l; ++j) {
        const VecF xj = x.row(p[j]).transpose();
        const VecF zj = z.row(a).segment(j * d, d).transpose();
        mean_cos += xj.dot(zj) / (xj.norm() * zj.norm()) / l;
      }
      sums[l - 1](p[0], a) += static_cast<float>(std::exp((mean_cos - 1) / s2));
    }
  });
  for (int l = 1; l <= k; ++l) out.middleCols((l - 1) * nf, nf) = sums[l - 1] * f.layers()[l - 1].factor();
  return out;
}

TEST(GcknPathsTest, FitsOnMutagAndMatchesTheDefinition) {
  const GraphDataset ds = read_tu_dataset(repo_data("tu-MUTAG"), "MUTAG");
  std::vector<int32_t> train;
  for (int i = 0; i < 60; ++i) train.push_back(i);
  GcknOptions o;
  o.path_size = 3;
  o.n_filters = 8;
  o.n_sampled_paths = 2000;
  o.kmeans_iter = 20;
  o.seed = 5;
  const GcknPathFeatures f = GcknPathFeatures::fit(ds.graphs, train, ds.n_node_labels(), o);
  EXPECT_EQ(f.dim(), 24);
  EXPECT_EQ(f.feature_dim(), 7);
  EXPECT_FALSE(f.use_attributes());
  ASSERT_EQ(f.layers().size(), 3u);
  for (int l = 1; l <= 3; ++l) {
    const MatF& z = f.layers()[l - 1].anchors();
    ASSERT_EQ(z.rows(), 8);
    ASSERT_EQ(z.cols(), 7 * l);
    for (int a = 0; a < 8; ++a)
      for (int j = 0; j < l; ++j) EXPECT_NEAR(z.row(a).segment(j * 7, 7).norm(), 1.0 / std::sqrt(l), 1e-5);
  }
  const Graph& g = ds.graphs[100];
  const MatF raw = f.transform_raw(g);
  ASSERT_EQ(raw.rows(), g.n_nodes);
  ASSERT_EQ(raw.cols(), 24);
  const MatF direct = direct_features(f, g, ds.n_node_labels());
  EXPECT_LT((raw - direct).cwiseAbs().maxCoeff(), 1e-4f * std::max(1.0f, direct.cwiseAbs().maxCoeff()));
  // Standardised on the training nodes: mean 0, std 1 there.
  Eigen::VectorXd sum = Eigen::VectorXd::Zero(24), sq = Eigen::VectorXd::Zero(24);
  int64_t n = 0;
  for (int32_t t : train) {
    const MatF z = f.transform(ds.graphs[t]);
    ASSERT_TRUE(z.allFinite());
    for (int i = 0; i < z.rows(); ++i) {
      sum += z.row(i).transpose().cast<double>();
      sq += z.row(i).transpose().cast<double>().cwiseAbs2();
    }
    n += z.rows();
  }
  for (int c = 0; c < 24; ++c) {
    EXPECT_NEAR(sum[c] / n, 0.0, 1e-3);
    const double var = sq[c] / n;
    EXPECT_TRUE(std::fabs(var - 1.0) < 1e-3 || var < 1e-6) << c;
  }
  // Deterministic given the seed, and restorable from its stored parts.
  const GcknPathFeatures again = GcknPathFeatures::fit(ds.graphs, train, ds.n_node_labels(), o);
  EXPECT_EQ(again.transform(g), f.transform(g));
  std::vector<MatF> anchors;
  for (const auto& layer : f.layers()) anchors.push_back(layer.anchors());
  const GcknPathFeatures stored =
      GcknPathFeatures::from_stored(anchors, f.mean(), f.stddev(), f.feature_dim(), false, o);
  EXPECT_LT((stored.transform(g) - f.transform(g)).cwiseAbs().maxCoeff(), 1e-4f);
}

TEST(GcknPathsTest, UsesAttributesAndHandlesSingleNodeGraphs) {
  Graph a = Graph::from_edges(3, {{0, 1}, {1, 2}});
  a.node_attributes = MatF(3, 2);
  a.node_attributes << 1, 0, 0, 2, 0, 0;  // the zero row has cosine 0 with every anchor
  Graph b = Graph::from_edges(1, {});
  b.node_attributes = MatF(1, 2);
  b.node_attributes << 3, 4;
  GcknOptions o;
  o.path_size = 2;
  o.n_filters = 3;
  o.use_node_attributes = true;
  const GcknPathFeatures f = GcknPathFeatures::fit({a, b}, {0, 1}, 0, o);
  EXPECT_TRUE(f.use_attributes());
  EXPECT_EQ(f.feature_dim(), 2);
  const MatF fb = f.transform(b);
  ASSERT_EQ(fb.rows(), 1);
  EXPECT_TRUE(fb.allFinite());
  EXPECT_LT((f.transform_raw(a) - direct_features(f, a, 0)).cwiseAbs().maxCoeff(), 1e-4f);
  // Features fitted on attributes refuse a graph without them, and vice versa.
  expect_error([&] { f.transform(Graph::from_edges(2, {{0, 1}})); }, ErrorCode::kShapeMismatch, "expected 2");
  // By default (as the reference) attributes are ignored and labels one-hot encoded.
  o.use_node_attributes = false;
  const GcknPathFeatures labels = GcknPathFeatures::fit({a, b}, {0, 1}, 1, o);
  EXPECT_EQ(labels.feature_dim(), 1);
  EXPECT_TRUE(labels.transform(a).allFinite());
  expect_error([] { GcknPathFeatures::fit({Graph::from_edges(1, {})}, {0}, 1, GcknOptions{}); },
               ErrorCode::kInvalidArgument, "no path of 2 nodes");
  GcknOptions bad;
  bad.sigma = 0;
  expect_error([&] { bad.validate(); }, ErrorCode::kInvalidArgument, "sigma");
}

}  // namespace
}  // namespace inductive
