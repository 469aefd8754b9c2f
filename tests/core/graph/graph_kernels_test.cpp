// Normalised Laplacian, kernels on graphs and LapPE (core/src/graph/graph_kernels.cpp) against closed forms.
#include <gtest/gtest.h>

#include <cmath>

#include <Eigen/Eigenvalues>

#include "../test_util.h"
#include "inductive/graph_kernels.h"

namespace inductive {
namespace {

using testing::expect_error;

std::string repo_data(const std::string& rel) { return std::string(INDUCTIVE_TEST_DATA) + "/../../data/" + rel; }

Graph path_graph(int n) {
  std::vector<std::array<int32_t, 2>> e;
  for (int i = 0; i + 1 < n; ++i) e.push_back({i, i + 1});
  return Graph::from_edges(n, e);
}
Graph complete_graph(int n) {
  std::vector<std::array<int32_t, 2>> e;
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j) e.push_back({i, j});
  return Graph::from_edges(n, e);
}

GraphKernelOptions diffusion(double beta) {
  GraphKernelOptions o;
  o.type = GraphKernelType::kDiffusion;
  o.beta = beta;
  return o;
}
GraphKernelOptions pstep(double gamma, int p) {
  GraphKernelOptions o;
  o.type = GraphKernelType::kPStep;
  o.gamma = gamma;
  o.p = p;
  return o;
}
GraphKernelOptions adjacency() {
  GraphKernelOptions o;
  o.type = GraphKernelType::kAdjacency;
  return o;
}

// exp(M) by scaling and squaring of a Taylor series: independent of the eigendecomposition.
MatD expm_series(const MatD& m) {
  const int squarings = 8;
  const MatD a = m / std::pow(2.0, squarings);
  MatD term = MatD::Identity(m.rows(), m.cols()), sum = term;
  for (int k = 1; k < 30; ++k) {
    term = (term * a / k).eval();
    sum += term;
  }
  for (int s = 0; s < squarings; ++s) sum = (sum * sum).eval();
  return sum;
}

double max_abs_diff(const MatF& a, const MatD& b) { return (a.cast<double>() - b).cwiseAbs().maxCoeff(); }

double min_eigenvalue(const MatF& k) {
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(k.cast<double>());
  return eig.eigenvalues().minCoeff();
}

TEST(GraphKernelsTest, LaplacianMatchesPygConvention) {
  // Path 0-1-2 plus an isolated node 3 and a self-loop on node 0 (dropped).
  Graph g = Graph::from_edges(4, {{0, 1}, {1, 2}, {0, 0}});
  const MatD L = normalized_laplacian(g);
  const double s = 1.0 / std::sqrt(2.0);
  MatD expected(4, 4);
  expected << 1, -s, 0, 0, -s, 1, -s, 0, 0, -s, 1, 0, 0, 0, 0, 1;
  EXPECT_LT((L - expected).cwiseAbs().maxCoeff(), 1e-15);
}

TEST(GraphKernelsTest, SingleNodeGraph) {
  const Graph g = Graph::from_edges(1, {});
  const GraphSpectrum s = graph_spectrum(g);
  EXPECT_DOUBLE_EQ(s.eigenvalues[0], 1.0);
  EXPECT_NEAR(graph_kernel(s, diffusion(0.7))(0, 0), std::exp(-0.7), 1e-7);
  EXPECT_NEAR(graph_kernel(s, pstep(0.5, 3))(0, 0), 0.125, 1e-7);
  EXPECT_EQ(graph_kernel(s, adjacency())(0, 0), 0.0f);
  const MatF pe = laplacian_pe(s, 2);
  EXPECT_EQ(pe.rows(), 1);
  EXPECT_EQ(pe.cols(), 2);
  EXPECT_EQ(pe.cwiseAbs().maxCoeff(), 0.0f);
}

TEST(GraphKernelsTest, DiffusionAtBetaZeroIsIdentity) {
  const MatF k = graph_kernel(path_graph(6), diffusion(0.0));
  EXPECT_LT(max_abs_diff(k, MatD::Identity(6, 6)), 1e-6);
}

TEST(GraphKernelsTest, DiffusionOnCompleteGraphHasClosedForm) {
  // L = n/(n-1) (I - J/n), so exp(-beta L) = J/n + exp(-beta n/(n-1)) (I - J/n).
  const int n = 5;
  const double beta = 1.3;
  const MatD J = MatD::Constant(n, n, 1.0 / n);
  const MatD expected = J + std::exp(-beta * n / (n - 1.0)) * (MatD::Identity(n, n) - J);
  EXPECT_LT(max_abs_diff(graph_kernel(complete_graph(n), diffusion(beta)), expected), 1e-6);
}

TEST(GraphKernelsTest, DiffusionMatchesSeriesOnPathAndIsolatedNode) {
  // Edge 0-1 and isolated node 2: the edge block has eigenvalues 0 and 2, the isolated node L_22 = 1.
  const double b = 0.8;
  const MatF k = graph_kernel(Graph::from_edges(3, {{0, 1}}), diffusion(b));
  MatD expected = MatD::Zero(3, 3);
  expected(0, 0) = expected(1, 1) = (1 + std::exp(-2 * b)) / 2;
  expected(0, 1) = expected(1, 0) = (1 - std::exp(-2 * b)) / 2;
  expected(2, 2) = std::exp(-b);
  EXPECT_LT(max_abs_diff(k, expected), 1e-6);
  const Graph p = path_graph(7);
  EXPECT_LT(max_abs_diff(graph_kernel(p, diffusion(b)), expm_series(-b * normalized_laplacian(p))), 1e-6);
}

TEST(GraphKernelsTest, PStepMatchesMatrixPowerAndAdjacency) {
  const Graph g = Graph::from_edges(6, {{0, 1}, {1, 2}, {2, 0}, {2, 3}, {4, 5}});  // triangle + tail, separate edge
  const MatD L = normalized_laplacian(g);
  const MatD I = MatD::Identity(6, 6);
  for (int p : {1, 2, 3}) {
    MatD expected = I;
    for (int i = 0; i < p; ++i) expected = (expected * (I - 0.5 * L)).eval();
    EXPECT_LT(max_abs_diff(graph_kernel(g, pstep(0.5, p)), expected), 1e-6) << "p = " << p;
  }
  // p = 1, gamma = 1 is D^-1/2 A D^-1/2 (zero diagonal), the "adjacency" kernel.
  const std::vector<int32_t> deg = g.degrees();
  MatD a = MatD::Zero(6, 6);
  for (const auto& e : g.edges) a(e[0], e[1]) = a(e[1], e[0]) = 1.0 / std::sqrt(double(deg[e[0]]) * deg[e[1]]);
  EXPECT_LT(max_abs_diff(graph_kernel(g, pstep(1.0, 1)), a), 1e-6);
  const MatF adj = graph_kernel(g, adjacency());
  EXPECT_LT(max_abs_diff(adj, a), 1e-7);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(adj(i, i), 0.0f);
}

TEST(GraphKernelsTest, DisconnectedGraphsGiveBlockDiagonalKernels) {
  const Graph g = Graph::from_edges(6, {{0, 1}, {1, 2}, {2, 0}, {3, 4}, {4, 5}, {5, 3}});
  const GraphSpectrum s = graph_spectrum(g);
  EXPECT_NEAR(s.eigenvalues[0], 0.0, 1e-12);  // one zero eigenvalue per component with edges
  EXPECT_NEAR(s.eigenvalues[1], 0.0, 1e-12);
  EXPECT_GT(s.eigenvalues[2], 0.5);
  for (const auto& o : {diffusion(1.0), pstep(0.5, 3), adjacency()}) {
    const MatF k = graph_kernel(s, o);
    EXPECT_EQ(k.block(0, 3, 3, 3).cwiseAbs().maxCoeff() < 1e-7f, true) << o.describe();
    EXPECT_LT((k.topLeftCorner(3, 3) - k.bottomRightCorner(3, 3)).cwiseAbs().maxCoeff(), 1e-6f) << o.describe();
  }
}

TEST(GraphKernelsTest, KernelsAreSymmetricAndPsdWhereTheoryHolds) {
  const GraphDataset ds = read_tu_dataset(repo_data("tu-MUTAG"), "MUTAG");
  for (int gi = 0; gi < ds.n_graphs(); gi += 17) {
    const GraphSpectrum s = graph_spectrum(ds.graphs[gi]);
    EXPECT_GE(s.eigenvalues.minCoeff(), 0.0);
    EXPECT_LE(s.eigenvalues.maxCoeff(), 2.0);
    for (const auto& o : {diffusion(1.0), pstep(0.5, 2), pstep(0.5, 3), pstep(1.0, 2), adjacency()}) {
      const MatF k = graph_kernel(s, o);
      EXPECT_EQ((k - k.transpose()).cwiseAbs().maxCoeff(), 0.0f) << o.describe();
      if (o.type != GraphKernelType::kAdjacency) {
        EXPECT_GT(min_eigenvalue(k), -1e-5) << o.describe();
      }
    }
    EXPECT_GT(min_eigenvalue(graph_kernel(s, diffusion(1.0))), 0.0);  // exp(-beta L) is positive definite
  }
}

TEST(GraphKernelsTest, ZeroDiagonalOption) {
  GraphKernelOptions o = diffusion(1.0);
  o.zero_diagonal = true;
  const MatF k = graph_kernel(path_graph(4), o);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(k(i, i), 0.0f);
  EXPECT_GT(k(0, 1), 0.0f);
  EXPECT_EQ(o.describe(), "diffusion(beta=1)+zero_diagonal");
}

TEST(GraphKernelsTest, RejectsBadOptions) {
  expect_error([] { graph_kernel(path_graph(3), diffusion(-1)); }, ErrorCode::kInvalidArgument, "beta");
  expect_error([] { graph_kernel(path_graph(3), diffusion(NAN)); }, ErrorCode::kInvalidArgument, "beta");
  expect_error([] { graph_kernel(path_graph(3), pstep(0, 2)); }, ErrorCode::kInvalidArgument, "gamma");
  expect_error([] { graph_kernel(path_graph(3), pstep(0.5, 0)); }, ErrorCode::kInvalidArgument, "p must be");
  expect_error([] { parse_graph_kernel_type("heat"); }, ErrorCode::kInvalidArgument, "unknown kernel 'heat'");
  EXPECT_EQ(parse_graph_kernel_type("pstep"), GraphKernelType::kPStep);
}

TEST(GraphKernelsTest, LapPeIsOrthonormalSignFixedAndZeroPadded) {
  const Graph g = path_graph(6);
  const GraphSpectrum s = graph_spectrum(g);
  const MatF pe = laplacian_pe(s, 3);
  ASSERT_EQ(pe.rows(), 6);
  ASSERT_EQ(pe.cols(), 3);
  EXPECT_LT((pe.transpose() * pe - MatF::Identity(3, 3)).cwiseAbs().maxCoeff(), 1e-6f);
  const MatD L = normalized_laplacian(g);
  for (int j = 0; j < 3; ++j) {
    // An eigenvector of the (j+2)-th smallest eigenvalue; orthogonal to the trivial one D^1/2 1.
    const Eigen::VectorXd v = pe.col(j).cast<double>();
    EXPECT_LT((L * v - s.eigenvalues[j + 1] * v).cwiseAbs().maxCoeff(), 1e-6);
    Eigen::Index at;
    v.cwiseAbs().maxCoeff(&at);
    EXPECT_GT(v[at], 0.0);
  }
  EXPECT_LT(s.eigenvalues[1] - s.eigenvalues[0], s.eigenvalues[2] - s.eigenvalues[0]);
  // A 3-node graph has 2 non-trivial eigenvectors: columns 3..4 are zero.
  const MatF small = laplacian_pe(graph_spectrum(path_graph(3)), 5);
  ASSERT_EQ(small.cols(), 5);
  EXPECT_GT(small.leftCols(2).cwiseAbs().maxCoeff(), 0.1f);
  EXPECT_EQ(small.rightCols(3).cwiseAbs().maxCoeff(), 0.0f);
  expect_error([&] { laplacian_pe(s, 0); }, ErrorCode::kInvalidArgument, "m must be >= 1");
}

TEST(GraphKernelsTest, PeSignFlipsAreSeededAndPreserveMagnitudes) {
  const MatF pe = laplacian_pe(graph_spectrum(path_graph(8)), 4);
  std::mt19937_64 a(42), b(42);
  const std::vector<float> sa = draw_pe_signs(4, a), sb = draw_pe_signs(4, b);
  EXPECT_EQ(sa, sb);
  bool any_negative = false, any_positive = false;
  std::mt19937_64 c(7);
  for (int t = 0; t < 20; ++t)
    for (float x : draw_pe_signs(4, c)) {
      EXPECT_TRUE(x == 1.0f || x == -1.0f);
      any_negative |= x < 0;
      any_positive |= x > 0;
    }
  EXPECT_TRUE(any_negative && any_positive);
  MatF flipped = pe;
  apply_pe_signs(flipped, sa);
  for (int j = 0; j < 4; ++j) EXPECT_EQ(flipped.col(j), (sa[j] * pe.col(j)).eval());
  expect_error([&] { apply_pe_signs(flipped, {1.0f}); }, ErrorCode::kShapeMismatch, "got 1 signs for 4 columns");
}

}  // namespace
}  // namespace inductive

namespace inductive {
namespace {

TEST(GraphKernelsLimits, GraphsTooLargeForDenseKernelsAreRefusedNotHung) {
  std::vector<std::array<int32_t, 2>> chain;
  for (int v = 1; v <= kMaxSpectrumNodes; ++v) chain.push_back({v - 1, v});
  const Graph g = Graph::from_edges(kMaxSpectrumNodes + 1, chain);
  try {
    graph_spectrum(g);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("limited to 4096 nodes"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace inductive
