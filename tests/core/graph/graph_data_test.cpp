// Graph, TU reader and GraphiT folds (core/src/graph/{graph,tu_dataset,graph_folds}.cpp) on the vendored MUTAG copy
// and on small malformed inputs.
#include <gtest/gtest.h>

#include <fstream>
#include <numeric>
#include <set>

#include "../test_util.h"
#include "inductive/graph.h"
#include "inductive/gzip.h"

namespace inductive {
namespace {

using testing::expect_error;

// INDUCTIVE_TEST_DATA is <repo>/tests/data; the vendored datasets live in <repo>/data.
std::string repo_data(const std::string& rel) { return std::string(INDUCTIVE_TEST_DATA) + "/../../data/" + rel; }

TEST(GraphTest, FromEdgesNormalisesDeduplicatesAndDropsSelfLoops) {
  const Graph g = Graph::from_edges(4, {{1, 0}, {0, 1}, {2, 2}, {1, 2}, {2, 1}, {0, 1}}, {3, 1, 2, 0});
  ASSERT_EQ(g.n_edges(), 2);
  EXPECT_EQ(g.edges[0], (std::array<int32_t, 2>{0, 1}));
  EXPECT_EQ(g.edges[1], (std::array<int32_t, 2>{1, 2}));
  EXPECT_EQ(g.n_self_loops, 1);
  EXPECT_EQ(g.degrees(), (std::vector<int32_t>{1, 2, 1, 0}));  // node 3 isolated, self-loop not counted
  EXPECT_EQ(g.neighbours()[1], (std::vector<int32_t>{0, 2}));
}

TEST(GraphTest, FromEdgesRejectsBadInput) {
  expect_error([] { Graph::from_edges(0, {}); }, ErrorCode::kInvalidArgument, "at least one node");
  expect_error([] { Graph::from_edges(3, {{0, 3}}); }, ErrorCode::kInvalidArgument, "outside the graph");
  expect_error([] { Graph::from_edges(3, {{-1, 0}}); }, ErrorCode::kInvalidArgument, "outside the graph");
  expect_error([] { Graph::from_edges(3, {}, {0, 1}); }, ErrorCode::kShapeMismatch, "expected 3");
  Graph g = Graph::from_edges(2, {{0, 1}}, {0, 5});
  expect_error([&] { g.validate("g", 3); }, ErrorCode::kInvalidArgument, "node 1 has label 5");
}

TEST(GraphTuTest, ReadsVendoredMutag) {
  const GraphDataset ds = read_tu_dataset(repo_data("tu-MUTAG"), "MUTAG");
  // Counts from data/tu-MUTAG/SOURCE.md.
  EXPECT_EQ(ds.name, "MUTAG");
  ASSERT_EQ(ds.n_graphs(), 188);
  EXPECT_EQ(ds.n_nodes_total(), 3371);
  int64_t edges = 0;
  int min_n = 1 << 30, max_n = 0, positives = 0;
  for (const Graph& g : ds.graphs) {
    edges += g.n_edges();
    min_n = std::min(min_n, g.n_nodes);
    max_n = std::max(max_n, g.n_nodes);
    positives += g.label == 1;
    EXPECT_EQ(g.n_self_loops, 0);
    EXPECT_EQ(g.node_attributes.size(), 0);
    g.validate("mutag", ds.n_node_labels());
  }
  EXPECT_EQ(edges, 3721);
  EXPECT_EQ(min_n, 10);
  EXPECT_EQ(max_n, 28);
  EXPECT_EQ(ds.class_values, (std::vector<int64_t>{-1, 1}));  // -1/1 mapped to 0/1, originals kept
  EXPECT_EQ(positives, 125);
  EXPECT_EQ(ds.node_label_values, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(ds.node_attribute_dim, 0);
  // Graph 1 of the file: node 1 is carbon (label 0), and its first edge line is "2, 1".
  EXPECT_EQ(ds.graphs[0].node_labels[0], 0);
  EXPECT_EQ(ds.graphs[0].edges[0], (std::array<int32_t, 2>{0, 1}));
  // The hash is a function of the content.
  EXPECT_EQ(dataset_hash(ds), dataset_hash(read_tu_dataset(repo_data("tu-MUTAG"), "MUTAG")));
  GraphDataset changed = ds;
  changed.graphs[100].node_labels[3] = (changed.graphs[100].node_labels[3] + 1) % 7;
  EXPECT_NE(dataset_hash(ds), dataset_hash(changed));
}

TuTexts two_graphs() {
  // Graph 1: nodes 1-3, a path 1-2-3 and an isolated... no: node 3 isolated; graph 2: nodes 4-5, an edge.
  TuTexts t;
  t.graph_indicator = "1\n1\n1\n2\n2\n";
  t.a = "1, 2\n2, 1\n4, 5\n5, 4\n";
  t.graph_labels = "2\n-7\n";
  t.node_labels = "10\n30\n10\n20\n30\n";
  return t;
}

TEST(GraphTuTest, ParsesIsolatedNodesAndMapsLabels) {
  const GraphDataset ds = parse_tu_dataset(two_graphs(), "T");
  ASSERT_EQ(ds.n_graphs(), 2);
  EXPECT_EQ(ds.graphs[0].n_nodes, 3);
  EXPECT_EQ(ds.graphs[0].degrees(), (std::vector<int32_t>{1, 1, 0}));
  EXPECT_EQ(ds.graphs[1].n_nodes, 2);
  EXPECT_EQ(ds.graphs[1].edges[0], (std::array<int32_t, 2>{0, 1}));
  EXPECT_EQ(ds.class_values, (std::vector<int64_t>{-7, 2}));
  EXPECT_EQ(ds.graphs[0].label, 1);
  EXPECT_EQ(ds.graphs[1].label, 0);
  EXPECT_EQ(ds.node_label_values, (std::vector<int64_t>{10, 20, 30}));
  EXPECT_EQ(ds.graphs[0].node_labels, (std::vector<int32_t>{0, 2, 0}));
  EXPECT_EQ(ds.graphs[1].node_labels, (std::vector<int32_t>{1, 2}));
}

TEST(GraphTuTest, ParsesAttributesAndOptionalNodeLabels) {
  TuTexts t = two_graphs();
  t.node_labels.clear();
  t.node_attributes = "1.5, 2\n0,0\n-1,3e2\n4,4\n5,5\n";
  const GraphDataset ds = parse_tu_dataset(t, "T");
  EXPECT_EQ(ds.node_attribute_dim, 2);
  EXPECT_EQ(ds.node_label_values, (std::vector<int64_t>{0}));
  ASSERT_EQ(ds.graphs[0].node_attributes.rows(), 3);
  EXPECT_FLOAT_EQ(ds.graphs[0].node_attributes(0, 0), 1.5f);
  EXPECT_FLOAT_EQ(ds.graphs[0].node_attributes(2, 1), 300.0f);
  EXPECT_FLOAT_EQ(ds.graphs[1].node_attributes(1, 0), 5.0f);
}

TEST(GraphTuTest, RejectsMalformedInput) {
  auto bad = [](auto edit, const std::string& fragment) {
    TuTexts t = two_graphs();
    edit(t);
    expect_error([&] { parse_tu_dataset(t, "T"); }, ErrorCode::kInvalidArgument, fragment);
  };
  bad([](TuTexts& t) { t.a += "5, 6\n"; }, "T_A.txt: line 5: node id 6 is out of range: expected 1..5");
  bad([](TuTexts& t) { t.a += "0, 1\n"; }, "node id 0 is out of range");
  bad([](TuTexts& t) { t.a += "3, 4\n"; }, "T_A.txt: line 5: edge (3, 4) joins graph 1 and graph 2");
  bad([](TuTexts& t) { t.a += "1, x\n"; }, "node id 'x' is not an integer");
  bad([](TuTexts& t) { t.a += "1 2\n"; }, "is not 'row, col'");
  bad([](TuTexts& t) { t.graph_indicator = ""; }, "T_graph_indicator.txt: no node");
  bad([](TuTexts& t) { t.graph_indicator = "1\n1\n1\n3\n3\n"; }, "graph id 3 after 1: expected 1 or 2");
  bad([](TuTexts& t) { t.graph_indicator = "1\n1\n2\n1\n2\n"; }, "graph id 1 after 2");
  // Found by tests/fuzz/tu_fuzz.cpp: a first id of 0 opened no graph and the next line indexed before the start.
  bad([](TuTexts& t) { t.graph_indicator = "0\n1\n1\n2\n2\n"; }, "line 1: graph id 0: expected 1");
  bad([](TuTexts& t) { t.graph_indicator = "2\n2\n2\n3\n3\n"; }, "line 1: graph id 2: expected 1");
  bad([](TuTexts& t) { t.graph_indicator = "1\n1\none\n2\n2\n"; }, "line 3: graph id 'one' is not an integer");
  bad([](TuTexts& t) { t.graph_indicator = "1\n\n1\n1\n2\n2\n"; }, "line 2: blank line");
  bad([](TuTexts& t) { t.graph_labels = "1\n"; }, "got 1 graph labels, expected 2");
  bad([](TuTexts& t) { t.graph_labels = ""; }, "got 0 graph labels, expected 2");
  bad([](TuTexts& t) { t.graph_labels = "1\n1.5\n"; }, "graph label '1.5' is not an integer");
  bad([](TuTexts& t) { t.node_labels = "1\n2\n3\n4\n"; }, "got 4 node labels, expected 5");
  bad([](TuTexts& t) { t.node_attributes = "1\n2\n3\n4\n5,6\n"; }, "line 5: got 2 attributes, expected 1");
  bad([](TuTexts& t) { t.node_attributes = "1\n2\nnan\n4\n5\n"; }, "'nan' is not a finite number");
  // Trailing blank lines and CRLF are fine.
  TuTexts t = two_graphs();
  t.graph_labels = "2\r\n-7\r\n\r\n\n";
  EXPECT_EQ(parse_tu_dataset(t, "T").n_graphs(), 2);
}

TEST(GraphTuTest, ReportsMissingFilesAndReadsFromDisk) {
  expect_error([] { read_tu_dataset(repo_data("tu-MUTAG"), "NOPE"); }, ErrorCode::kIo, "NOPE_A.txt: cannot open");
  // Bad files on disk: the message names the file.
  const std::string dir = ::testing::TempDir();
  const std::string name = "inductive_graph_test_bad_" + std::to_string(::getpid());  // other builds run it too
  auto write = [&](const std::string& suffix, const std::string& text) {
    std::ofstream(dir + "/" + name + suffix, std::ios::binary) << text;
  };
  write("_graph_indicator.txt", "1\n1\n2\n");
  write("_graph_labels.txt", "0\n1\n");
  write("_node_labels.txt", "0\n0\n0\n");
  write("_A.txt", "1, 3\n3, 1\n");
  expect_error([&] { read_tu_dataset(dir, name); }, ErrorCode::kInvalidArgument,
               name + "_A.txt: line 1: edge (1, 3) joins graph 1 and graph 2");
  write("_A.txt", "");
  const GraphDataset ds = read_tu_dataset(dir, name);  // no edge at all is a valid dataset
  EXPECT_EQ(ds.n_graphs(), 2);
  EXPECT_EQ(ds.graphs[0].n_edges(), 0);
  for (const char* s : {"_graph_indicator.txt", "_graph_labels.txt", "_node_labels.txt", "_A.txt"})
    std::remove((dir + "/" + name + s).c_str());
}

TEST(GraphFoldsTest, ReadsVendoredMutagFolds) {
  const std::vector<GraphFold> folds = read_graphit_folds(repo_data("graphit-folds/MUTAG"), 188);
  ASSERT_EQ(folds.size(), 10u);
  // Sizes from graphit-fold-idx/SOURCE.md (fold 1: test/train/val 18/152/18).
  EXPECT_EQ(folds[0].test.size(), 18u);
  EXPECT_EQ(folds[0].train.size(), 152u);
  EXPECT_EQ(folds[0].val.size(), 18u);
  EXPECT_EQ(folds[0].test[0], 109);  // first line of test_idx-1.txt
  std::set<int32_t> tested;
  for (const auto& f : folds) tested.insert(f.test.begin(), f.test.end());
  EXPECT_EQ(tested.size(), 180u);  // GIN's quirk: 8 graphs never appear in a test fold
  EXPECT_EQ(tested.count(0), 0u);
  EXPECT_EQ(tested.count(187), 0u);
  // Validated against the dataset size.
  expect_error([] { read_graphit_folds(repo_data("graphit-folds/MUTAG"), 100); }, ErrorCode::kInvalidArgument,
               "is out of range: expected 0..99");
  expect_error([] { read_graphit_folds(repo_data("graphit-folds/MUTAG"), 200); }, ErrorCode::kInvalidArgument,
               "cover 188 graphs, expected all 200");
  expect_error([] { read_graphit_folds(repo_data("graphit-folds/NOPE"), 188); }, ErrorCode::kIo, "cannot open");
}

TEST(GraphFoldsTest, ParseIndexListRejectsBadLines) {
  EXPECT_EQ(parse_index_list("3\n1\n\n2\n", "f", 4), (std::vector<int32_t>{3, 1, 2}));
  expect_error([] { parse_index_list("1\n1\n", "f", 4); }, ErrorCode::kInvalidArgument,
               "f: line 2: graph index 1 repeats line 1");
  expect_error([] { parse_index_list("-1\n", "f", 4); }, ErrorCode::kInvalidArgument, "not a non-negative integer");
  expect_error([] { parse_index_list("a\n", "f", 4); }, ErrorCode::kInvalidArgument, "'a'");
  expect_error([] { parse_index_list("", "f", 4); }, ErrorCode::kInvalidArgument, "f: no index");
}

}  // namespace
}  // namespace inductive

namespace inductive {
namespace {

// The other TU datasets GraphiT reports on, all vendored in data/ (a missing copy fails): PTC_MR as text, NCI1 and
// PROTEINS gzipped (NAME_A.txt.gz, ...), read under their usual names. Counts from each folder's SOURCE.md.
TEST(GraphTuTest, ReadsTheOtherTuDatasetsOfTheThesis) {
  struct Expected {
    std::string dir, folds;
    const char* name;
    int graphs;
    int64_t nodes, edges;
    std::vector<int64_t> classes;
    int node_labels, attributes;
  };
  const Expected all[] = {
      {repo_data("tu-PTC_MR"), repo_data("graphit-folds/PTC"), "PTC_MR", 344, 4915, 5054, {-1, 1}, 18, 0},
      {repo_data("tu-PROTEINS"), repo_data("graphit-folds/PROTEINS"), "PROTEINS", 1113, 43471, 81044, {1, 2}, 3, 1},
      {repo_data("tu-NCI1"), repo_data("graphit-folds/NCI1"), "NCI1", 4110, 122747, 132753, {0, 1}, 37, 0}};
  for (const Expected& e : all) {
    ASSERT_TRUE(dataset_file_exists(e.dir + "/" + e.name + "_A.txt")) << e.dir << " is missing (data/SOURCE.md)";
    const GraphDataset ds = read_tu_dataset(e.dir, e.name);
    EXPECT_EQ(ds.n_graphs(), e.graphs) << e.name;
    EXPECT_EQ(ds.n_nodes_total(), e.nodes) << e.name;
    int64_t edges = 0;
    for (const Graph& g : ds.graphs) edges += g.n_edges();
    EXPECT_EQ(edges, e.edges) << e.name;
    EXPECT_EQ(ds.class_values, e.classes) << e.name;
    EXPECT_EQ(ds.n_node_labels(), e.node_labels) << e.name;
    EXPECT_EQ(ds.node_attribute_dim, e.attributes) << e.name;
    EXPECT_EQ(read_graphit_folds(e.folds, ds.n_graphs()).size(), 10u) << e.name;
  }
}

}  // namespace
}  // namespace inductive
