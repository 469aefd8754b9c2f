// A GraphiT model carries how its graphs were prepared (kernel, LapPE, GCKN layer) in its file, so a graph given at
// prediction time is prepared exactly like the training graphs, after a save/load round trip too.
#include <gtest/gtest.h>

#include "inductive/graph.h"
#include "inductive/graph_cache.h"
#include "inductive/graphit.h"
#include "inductive/smiles.h"
#include "../test_util.h"

namespace inductive {
namespace {

const std::string kMutag = std::string(INDUCTIVE_TEST_DATA) + "/../../data/tu-MUTAG";

GraphitConfig config_for(const GraphitInputSpec& spec, int vocab) {
  GraphitConfig c = GraphitConfig::with_dim(16, 2, 2);
  c.vocab = vocab;
  c.has_graph = true;
  c.graph = spec;
  c.kernel = spec.kernel;
  c.degree_scaling = spec.kernel;
  c.pe_dim = spec.lap_pe;
  c.path_dim = spec.gckn ? spec.gckn_options.path_size * spec.gckn_options.n_filters : 0;
  return c;
}

TEST(GraphitInputs, PreparedGraphsMatchTheDatasetPrecomputationAfterARoundTrip) {
  const GraphDataset ds = read_tu_dataset(kMutag, "MUTAG");
  GraphitInputSpec spec;
  spec.kernel_options.type = GraphKernelType::kPStep;
  spec.kernel_options.p = 3;
  spec.lap_pe = 4;
  spec.gckn = true;
  spec.gckn_options.path_size = 3;
  spec.gckn_options.n_filters = 8;
  spec.gckn_options.n_sampled_paths = 2000;
  spec.gckn_feature_dim = ds.n_node_labels();
  std::vector<int32_t> train;
  for (int i = 0; i < 100; ++i) train.push_back(i);
  const PrecomputedDataset pre = precompute_graph_data(ds, spec.precompute_options(train));

  GraphitModel model = GraphitModel::create(config_for(spec, ds.n_node_labels()), 3);
  model.gckn = pre.gckn;
  const std::vector<uint8_t> bytes = model.to_bytes();
  const GraphitModel loaded = GraphitModel::from_bytes(bytes.data(), bytes.size());
  EXPECT_TRUE(loaded.config.has_graph);
  EXPECT_EQ(loaded.config.graph.to_json(), spec.to_json());
  const std::vector<uint8_t> again = loaded.to_bytes();
  ASSERT_EQ(again.size(), bytes.size());
  size_t first = 0;
  while (first < bytes.size() && again[first] == bytes[first]) ++first;
  EXPECT_EQ(first, bytes.size()) << "first difference at byte " << first << ": "
                                 << std::string(bytes.begin() + std::max<size_t>(first, 40) - 40,
                                                bytes.begin() + std::min(bytes.size(), first + 40));

  for (int i : {0, 57, 150, 187}) {  // training and unseen graphs
    const GraphitGraph a = make_graphit_graph(ds.graphs[i], pre.graphs[i], model.config);
    const GraphitGraph b = loaded.prepare(ds.graphs[i]);
    EXPECT_EQ(a.node_labels, b.node_labels);
    EXPECT_EQ(a.degree, b.degree);
    EXPECT_EQ(a.kernel, b.kernel);
    EXPECT_EQ(a.pe, b.pe);
    EXPECT_LT((a.path_features - b.path_features).cwiseAbs().maxCoeff(), 1e-5f) << "graph " << i;
    const MatF pa = model.predict({a}), pb = loaded.predict({b});
    EXPECT_LT((pa - pb).cwiseAbs().maxCoeff(), 1e-5f);
  }
}

TEST(GraphitInputs, InconsistentSectionsAreRejected) {
  GraphitInputSpec spec;  // diffusion kernel, no LapPE, no GCKN
  GraphitConfig c = config_for(spec, 7);
  c.pe_dim = 2;
  testing::expect_error([&] { c.validate(); }, ErrorCode::kInvalidArgument, "input.pe is 2 but graph.lap_pe is 0");
  c = config_for(spec, 7);
  c.kernel = false;
  testing::expect_error([&] { c.validate(); }, ErrorCode::kInvalidArgument, "encoder.kernel is false");
  nlohmann::json j = config_for(spec, 7).to_json();
  j["graph"]["kernel"]["type"] = "heat";
  testing::expect_error([&] { GraphitConfig::from_json(j); }, ErrorCode::kInvalidArgument, "heat");
  j = config_for(spec, 7).to_json();
  j["graph"]["lap_pee"] = 3;
  testing::expect_error([&] { GraphitConfig::from_json(j); }, ErrorCode::kInvalidArgument,
                        "unknown key 'graph.lap_pee'");
  // A model without a graph section cannot prepare graphs itself.
  GraphitConfig bare = GraphitConfig::with_dim(16, 1, 2);
  bare.vocab = 7;
  const GraphitModel m = GraphitModel::create(bare, 1);
  testing::expect_error(
      [&] {
        m.prepare(Graph::from_edges(2, {{0, 1}}));
      },
      ErrorCode::kInvalidArgument, "no 'graph' section");
}

TEST(GraphitInputs, AtomTypingTravelsInTheGraphSectionAndTypesSmiles) {
  GraphitInputSpec spec;
  spec.atom_typing = AtomTyping::kElementCharge;
  GraphitConfig c = config_for(spec, 4);
  c.node_labels = {"C", "N", "N+", "O-"};
  const GraphitModel model = GraphitModel::create(c, 3);
  const std::vector<uint8_t> bytes = model.to_bytes();
  const GraphitModel loaded = GraphitModel::from_bytes(bytes.data(), bytes.size());
  EXPECT_EQ(loaded.config.to_json()["graph"]["atom_typing"], "element-charge");
  EXPECT_EQ(loaded.config.graph.atom_typing, AtomTyping::kElementCharge);
  // SMILES given at prediction time are typed as in training: [N+] and [O-] are their own node labels.
  const Molecule nitro = parse_smiles("C[N+](=O)[O-]");
  testing::expect_error([&] { loaded.molecule_graph(nitro); }, ErrorCode::kInvalidArgument, "atom 3 is O,");
  EXPECT_EQ(loaded.molecule_graph(parse_smiles("C[N+]([O-])N")).node_labels, (std::vector<int32_t>{0, 2, 3, 1}));
  // Files written before the key existed read as element typing, which ignores charges.
  nlohmann::json j = c.to_json();
  j["graph"].erase("atom_typing");
  const GraphitConfig old = GraphitConfig::from_json(j);
  EXPECT_EQ(old.graph.atom_typing, AtomTyping::kElement);
  EXPECT_FALSE(old.to_json()["graph"].contains("atom_typing")) << "the default is not written: old readers stay able";
  GraphitModel by_element = GraphitModel::create(old, 3);
  EXPECT_EQ(by_element.molecule_graph(parse_smiles("C[N+]N")).node_labels, (std::vector<int32_t>{0, 1, 1}));
  // The default molecule model of the repository (no key in its file) still loads, typed by element.
  const GraphitModel mutag =
      GraphitModel::load(std::string(INDUCTIVE_TEST_DATA) + "/../../data/models/graphit-mutag.safetensors");
  EXPECT_EQ(mutag.config.graph.atom_typing, AtomTyping::kElement);
  j["graph"]["atom_typing"] = "charge";
  testing::expect_error([&] { GraphitConfig::from_json(j); }, ErrorCode::kInvalidArgument,
                        "graphit config.graph: atom typing must be element or element-charge: got 'charge'");
  j["graph"]["atom_typing"] = 1;
  testing::expect_error([&] { GraphitConfig::from_json(j); }, ErrorCode::kInvalidArgument,
                        "graphit config: 'graph.atom_typing' must be a string");
}

// Numbers in the graph section are range-checked before they are converted. The config fuzzer found `"lap_pe":
// 1.9e111` read through a plain json get<int> (undefined behaviour; tests/fuzz/seeds/config_fuzz/
// finding_lap_pe_1e111.json); every number of the section now goes through io/json_section.h, as the rest of the
// config does.
TEST(GraphitInputs, ConfigNumbersOutOfTheirTypesRangeAreRefused) {
  GraphitInputSpec spec;
  spec.gckn = true;
  spec.gckn_feature_dim = 4;
  const nlohmann::json good = spec.to_json();
  EXPECT_EQ(GraphitInputSpec::from_json(good).to_json(), good);
  const struct {
    const char* section;
    const char* key;
    nlohmann::json value;
    const char* message;
  } cases[] = {
      {"", "lap_pe", 1.88888e111, "graphit config: 'graph.lap_pe' must be an integer"},
      {"", "lap_pe", 2.5, "graphit config: 'graph.lap_pe' must be an integer"},
      {"", "lap_pe", 4294967296LL, "graphit config: 'graph.lap_pe' out of range"},
      {"kernel", "p", -3e100, "graphit config: 'graph.kernel.p' must be an integer"},
      {"kernel", "beta", "1", "graphit config: 'graph.kernel.beta' must be a number"},
      {"gckn", "sigma", 1e300, "graphit config: 'graph.gckn.sigma' must be a float32 number"},
      {"gckn", "max_paths", 18446744073709551615ULL, "graphit config: 'graph.gckn.max_paths' must be an integer below"},
      {"gckn", "n_filters", nullptr, "graphit config: 'graph.gckn.n_filters' must be an integer"},
      {"gckn", "colour", 1, "graphit config: unknown key 'graph.gckn.colour'"},
      {"", "kernel", 3, "graphit config: 'graph.kernel' must be an object or null"},
  };
  for (const auto& c : cases) {
    nlohmann::json j = good;
    (*c.section ? j[c.section] : j)[c.key] = c.value;
    testing::expect_error([&] { GraphitInputSpec::from_json(j); }, ErrorCode::kInvalidArgument, c.message);
  }
  // null kernel and gckn mean "none", as written by to_json.
  nlohmann::json none = good;
  none["kernel"] = nullptr;
  none["gckn"] = nullptr;
  const GraphitInputSpec plain = GraphitInputSpec::from_json(none);
  EXPECT_FALSE(plain.kernel);
  EXPECT_FALSE(plain.gckn);
}

// Graphs past the build's size limit are refused before any work (no kernel, no eigendecomposition), naming the
// limit: 4096 nodes natively, 1024 in the browser build (this suite runs in both).
TEST(GraphitInputs, GraphsPastTheBuildsLimitAreRefusedBeforeAnyWork) {
  GraphitInputSpec spec;
  GraphitConfig c = config_for(spec, 4);
  c.node_labels = {"C", "N", "O", "S"};
  const GraphitModel m = GraphitModel::create(c, 1);
  const int n = kMaxGraphitNodes + 1;
  std::vector<std::array<int32_t, 2>> chain;
  for (int i = 0; i + 1 < n; ++i) chain.push_back({i, i + 1});
  const std::string limit = "at most " + std::to_string(kMaxGraphitNodes);
  testing::expect_error([&] { m.prepare(Graph::from_edges(n, chain, std::vector<int32_t>(n, 0))); },
                        ErrorCode::kInvalidArgument,
                        "the graph has " + std::to_string(n) + " nodes; this build runs graphs of " + limit);
  testing::expect_error([&] { m.molecule_graph(parse_smiles(std::string(n, 'C'))); }, ErrorCode::kInvalidArgument,
                        "the molecule has " + std::to_string(n) + " atoms");
  // At the limit it is accepted (the molecule graph only: preparing it is the expensive part).
  EXPECT_EQ(m.molecule_graph(parse_smiles(std::string(kMaxGraphitNodes, 'C'))).n_nodes, kMaxGraphitNodes);
}

}  // namespace
}  // namespace inductive
