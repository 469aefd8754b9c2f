// OTKE on text (input "tokens"): tokeniser, vocabulary, strict config, the token table's gradient against finite
// differences, training on a toy sentiment task, and the model file round trip.
#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "inductive/otke_train.h"
#include "inductive/tokens.h"
#include "../test_util.h"

namespace inductive {
namespace {

using testing::expect_error;
using Tokens = std::vector<std::string>;

TEST(OtkeTokens, TokeniserSplitsWhitespaceAndEdgePunctuation) {
  EXPECT_EQ(tokenize("  It 's a GOOD movie . ", true), (Tokens{"it", "'s", "a", "good", "movie", "."}));
  EXPECT_EQ(tokenize("It's good.", false), (Tokens{"It's", "good", "."}));
  EXPECT_EQ(tokenize("(great) -- ... ``fun''", true),
            (Tokens{"(", "great", ")", "--", "...", "`", "`", "fun", "'", "'"}));
  EXPECT_EQ(tokenize("n't co-star 3.5 -lrb- '90s", true), (Tokens{"n't", "co-star", "3.5", "-", "lrb", "-", "'90s"}));
  EXPECT_EQ(tokenize("caf\xc3\xa9\tNAÏVE\r\n", true), (Tokens{"caf\xc3\xa9", "na\xc3\x8fve"}));  // non-ASCII kept
  EXPECT_TRUE(tokenize(" \t\n", true).empty());
  EXPECT_TRUE(tokenize("", true).empty());
}

TEST(OtkeTokens, VocabularyIsFrequencyOrderedWithUnknownFirst) {
  const std::vector<std::string> texts = {"b a c", "a b", "a d", "e"};
  VocabularyOptions o;
  const Vocabulary all = Vocabulary::build(texts, o);
  EXPECT_EQ(all.tokens(), (Tokens{"<unk>", "a", "b", "c", "d", "e"}));  // a: 3, b: 2, then ties in byte order
  o.min_count = 2;
  EXPECT_EQ(Vocabulary::build(texts, o).tokens(), (Tokens{"<unk>", "a", "b"}));
  o.min_count = 1;
  o.max_size = 3;
  const Vocabulary capped = Vocabulary::build(texts, o);
  EXPECT_EQ(capped.tokens(), (Tokens{"<unk>", "a", "b"}));
  EXPECT_EQ(capped.encode("A b z c"), (std::vector<int32_t>{1, 2, 0, 0}));
  EXPECT_TRUE(capped.encode("   ").empty());

  expect_error([] { Vocabulary({"a", "<unk>"}, true); }, ErrorCode::kInvalidArgument, "entry 0 must be '<unk>'");
  expect_error([] { Vocabulary({"<unk>", "a", "a"}, true); }, ErrorCode::kInvalidArgument, "entry 2 ('a') repeats");
  expect_error([] { Vocabulary({"<unk>", "a b"}, true); }, ErrorCode::kInvalidArgument, "contains whitespace");
  expect_error([] { Vocabulary({"<unk>", ""}, true); }, ErrorCode::kInvalidArgument, "entry 1 is empty");
  o.max_size = 1;
  expect_error([&] { Vocabulary::build(texts, o); }, ErrorCode::kInvalidArgument, "max_size must be in 2..2^20");
}

OtkeConfig tokens_config(const std::string& embedding, const std::string& pooling) {
  OtkeConfig c;
  c.input_type = OtkeInput::kTokens;
  c.tokens = {"<unk>", "good", "bad", "movie", "the", "plot", "great", "awful"};
  c.input_dim = 6;
  c.embedding = parse_enum(kOtkeEmbeddings, embedding, "embedding");
  c.anchors = 5;
  c.filters = 4;
  c.pooling = parse_enum(kOtkePoolings, pooling, "pooling");
  c.otk.p = 3;
  c.otk.q = 2;
  c.otk.eps = 0.5;
  c.otk.iters = 5;
  c.classes = 2;
  c.labels = {"neg", "pos"};
  return c;
}

TEST(OtkeTokens, ConfigRoundTripsAndIsStrict) {
  const OtkeConfig c = tokens_config("identity", "otk");
  const auto j = c.to_json();
  EXPECT_EQ(j["input"]["vocab"], 8);
  EXPECT_EQ(j["input"]["dim"], 6);
  EXPECT_EQ(j["input"]["lowercase"], true);
  const OtkeConfig back = OtkeConfig::from_json(j);
  EXPECT_EQ(back.to_json(), j);
  EXPECT_EQ(back.feature_dim(), 6);
  EXPECT_EQ(back.input_width(), 1);
  EXPECT_EQ(back.output_dim(), 2 * 3 * 6);

  auto bad = j;
  bad["input"]["vocab"] = 9;
  expect_error([&] { OtkeConfig::from_json(bad); }, ErrorCode::kInvalidArgument,
               "input.vocab is 9 but input.tokens lists 8");
  bad = j;
  bad["input"].erase("tokens");
  expect_error([&] { OtkeConfig::from_json(bad); }, ErrorCode::kInvalidArgument, "needs 'vocab', 'dim' and 'tokens'");
  bad = j;
  bad["input"]["alphabet"] = "dna";
  expect_error([&] { OtkeConfig::from_json(bad); }, ErrorCode::kInvalidArgument, "unknown key 'input.alphabet'");
  bad = j;
  bad["input"]["lowercase"] = 1;
  expect_error([&] { OtkeConfig::from_json(bad); }, ErrorCode::kInvalidArgument,
               "'input.lowercase' must be true or false");
  bad = j;
  bad["input"]["tokens"][3] = "good";
  expect_error([&] { OtkeConfig::from_json(bad); }, ErrorCode::kInvalidArgument,
               "input.tokens: vocabulary: entry 3 ('good') repeats entry 1");
  bad = j;
  bad["input"]["dim"] = 0;
  expect_error([&] { OtkeConfig::from_json(bad); }, ErrorCode::kInvalidArgument, "input.dim must be in 1..65536");
  bad = j;
  bad["input"]["type"] = "words";
  expect_error([&] { OtkeConfig::from_json(bad); }, ErrorCode::kInvalidArgument, "must be sequence, vectors or tokens");
}

const std::vector<std::string> kPositive = {"good movie", "great plot", "the movie good", "great great", "good"};
const std::vector<std::string> kNegative = {"bad movie", "awful plot", "the movie bad", "awful awful", "bad the"};

struct ToyText {
  std::vector<std::string> sentences;
  std::vector<int32_t> labels;
};
ToyText toy_text(int count, uint32_t seed) {
  std::mt19937 rng(seed);
  ToyText t;
  for (int i = 0; i < count; ++i) {
    const int label = i % 2;
    const auto& pool = label ? kPositive : kNegative;
    t.sentences.push_back(pool[rng() % pool.size()] + (rng() % 2 ? " the plot" : "") + (rng() % 3 ? "" : " zzz"));
    t.labels.push_back(label);
  }
  return t;
}

OtkeModel fitted_model(const std::string& embedding, const std::string& pooling, const SetBatch& ids) {
  OtkeModel m;
  m.config = tokens_config(embedding, pooling);
  OtkeFitOptions fo;
  fo.seed = 4;
  fit_otke_unsupervised(m, ids, fo);
  std::mt19937 rng(7);
  std::normal_distribution<float> nd(0, 0.5f);
  m.head.weight.resize(2, m.config.output_dim());
  for (Eigen::Index i = 0; i < m.head.weight.size(); ++i) m.head.weight.data()[i] = nd(rng);
  m.head.bias = VecF::Constant(2, 0.1f);
  return m;
}

TEST(OtkeTokens, SentencesBecomeTokenIndices) {
  OtkeModel m;
  m.config = tokens_config("identity", "mean");
  const SetBatch ids = m.sequence_features({"The GOOD movie", "zzz"});
  EXPECT_EQ(ids.dim, 1);
  EXPECT_EQ(ids.n, (std::vector<int32_t>{3, 1}));
  EXPECT_EQ(std::vector<float>(ids.x.begin(), ids.x.begin() + 3), (std::vector<float>{4, 1, 3}));
  EXPECT_EQ(*ids.row(1, 0), 0.0f);  // unknown -> <unk>
  expect_error(
      [&] {
        m.sequence_features({"good", "  "}, {"a.tsv line 2", "a.tsv line 3"});
      },
      ErrorCode::kInvalidArgument, "a.tsv line 3: no token");

  // The table is drawn by the unsupervised fit; an index outside the vocabulary is refused.
  m = fitted_model("identity", "mean", ids);
  ASSERT_EQ(m.token_table.rows(), 8);
  ASSERT_EQ(m.token_table.cols(), 6);
  const MatF e = m.embed(ids);
  EXPECT_TRUE(e.row(1).isApprox(m.token_table.row(0)));
  EXPECT_TRUE(e.row(0).isApprox((m.token_table.row(4) + m.token_table.row(1) + m.token_table.row(3)) / 3.0f));
  SetBatch bad = ids;
  bad.x[0] = 8;
  expect_error([&] { m.embed(bad); }, ErrorCode::kInvalidArgument, "holds token index 8, expected an integer in 0..7");
  bad.x[0] = 1.5f;
  expect_error([&] { m.embed(bad); }, ErrorCode::kInvalidArgument, "holds token index 1.5");
}

using Combo = std::pair<const char*, const char*>;
class OtkeTokenGradient : public ::testing::TestWithParam<Combo> {};

TEST_P(OtkeTokenGradient, TableGradientMatchesFiniteDifferences) {
  const ToyText data = toy_text(6, 1);
  OtkeModel probe;
  probe.config = tokens_config("identity", "mean");
  const SetBatch ids = probe.sequence_features(data.sentences);
  OtkeModel m = fitted_model(GetParam().first, GetParam().second, ids);
  OtkeGradients g;
  otke_loss(m, ids, data.labels, &g);
  ASSERT_EQ(g.tokens.rows(), 8);
  ASSERT_EQ(g.tokens.cols(), 6);
  const float h = 1e-3f;
  for (Eigen::Index i = 0; i < m.token_table.size(); ++i) {
    float& v = m.token_table.data()[i];
    const float keep = v;
    v = keep + h;
    const double lp = otke_loss(m, ids, data.labels, nullptr);
    v = keep - h;
    const double lm = otke_loss(m, ids, data.labels, nullptr);
    v = keep;
    const double fd = (lp - lm) / (2 * h);
    EXPECT_NEAR(g.tokens.data()[i], fd, 2e-3 + 5e-3 * std::fabs(fd)) << "tokens.embedding[" << i << "]";
  }
  // A frozen table gets no gradient.
  OtkeLossOptions frozen;
  frozen.tokens = false;
  otke_loss(m, ids, data.labels, &g, frozen);
  EXPECT_EQ(g.tokens.size(), 0);
}

INSTANTIATE_TEST_SUITE_P(OtkeTokenLayers, OtkeTokenGradient,
                         ::testing::Values(Combo{"identity", "otk"}, Combo{"identity", "mean"}, Combo{"nystrom", "otk"},
                                           Combo{"conv", "max"}));

TEST(OtkeTokens, TrainingLearnsTheTableAndTheFileRoundTrips) {
  const ToyText tr = toy_text(64, 2), va = toy_text(32, 3);
  OtkeModel m;
  m.config = tokens_config("identity", "otk");
  const SetBatch x_tr = m.sequence_features(tr.sentences), x_va = m.sequence_features(va.sentences);
  m = fitted_model("identity", "otk", x_tr);
  m.head.weight.setZero();
  const MatF table0 = m.token_table;
  OtkeTrainOptions o;
  o.epochs = 15;
  o.batch_size = 8;
  o.adam.lr = 0.05;
  o.seed = 3;
  const OtkeTrainReport r = train_otke_supervised(m, x_tr, tr.labels, x_va, va.labels, o);
  EXPECT_GE(r.best_val_accuracy, 0.95);
  EXPECT_GT((m.token_table - table0).norm(), 0.1f);  // the table was trained

  // Save / load: the same config, table and embeddings, bit for bit.
  const std::vector<uint8_t> bytes = m.to_bytes();
  const OtkeModel back = OtkeModel::from_bytes(bytes.data(), bytes.size());
  EXPECT_EQ(back.config.to_json(), m.config.to_json());
  EXPECT_EQ(back.token_table, m.token_table);
  const MatF e = m.embed(x_va), e_back = back.embed(back.sequence_features(va.sentences));
  EXPECT_EQ(e, e_back);

  // A table of the wrong shape in the file is named.
  OtkeModel wrong = m;
  wrong.token_table.conservativeResize(7, 6);
  expect_error([&] { wrong.to_bytes(); }, ErrorCode::kInvalidArgument, "tensor tokens.embedding has 42 values");
}

}  // namespace
}  // namespace inductive
