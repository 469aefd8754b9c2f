// The DeepSEA-style OTKE model (thesis ch. 2): conv front end -> OT pooling -> MLP head with dropout, multilabel
// outputs with binary cross-entropy. Specified here: the loss against its closed form, every gradient against
// finite differences (dropout mask fixed by its seed), the config and file round trip, and training that learns
// two independent labels and resumes exactly.
#include <cmath>
#include <cstdio>
#include <random>

#include <gtest/gtest.h>

#include "inductive/metrics.h"
#include "inductive/otke_train.h"
#include "../test_util.h"
#include "motif_sets.h"

namespace inductive {
namespace {

// Two independent labels: "GATTACA" inside (bit 0) and "CCCGGG" inside (bit 1); every combination equally often.
testing::MotifSets two_motifs(int count, uint32_t seed) {
  return testing::motif_sets(count, seed, 30, 10, {{"GATTACA", 0, 10}, {"CCCGGG", 15, 10}});
}

OtkeModel deepsea_model(const std::string& embedding, const SetBatch& feats, int hidden, float dropout) {
  OtkeModel m;
  m.config.kmer = 3;
  m.config.embedding = parse_enum(kOtkeEmbeddings, embedding, "embedding");
  m.config.anchors = 6;
  m.config.filters = 6;
  m.config.otk.p = 3;
  m.config.otk.iters = 5;
  m.config.otk.sigma_pos = 0.5f;
  m.config.classes = 2;
  m.config.labels = {"gattaca", "cccggg"};
  m.config.multilabel = true;
  m.config.hidden = hidden;
  m.config.dropout = dropout;
  OtkeFitOptions fo;
  fo.seed = 5;
  fit_otke_unsupervised(m, feats, fo);
  init_otke_head(m, 11);
  return m;
}

SetBatch features_of(const std::vector<std::string>& seqs) {
  OtkeModel probe;
  probe.config.kmer = 3;
  return probe.sequence_features(seqs);
}

TEST(BinaryCrossEntropy, IsTheMeanOfSoftplusMinusTargetTimesLogitAndStableForLargeLogits) {
  MatF z(2, 2);
  z << 0.5f, -1.0f, 100.0f, -100.0f;
  const std::vector<int32_t> bits = {0b01, 0b10};  // row 0: label 0; row 1: label 1
  const auto sp = [](double x) { return std::log1p(std::exp(x)); };
  const double want = (sp(0.5) - 0.5 + sp(-1.0) + (100.0) + (100.0 + 0.0)) / 4;
  // row 1: label 0 absent with z = 100 costs softplus(100) = 100; label 1 present with z = -100 costs
  // softplus(-100) + 100 = 100.
  EXPECT_NEAR(binary_cross_entropy(z, bits), want, 1e-9);
  const MatF g = binary_cross_entropy_gradient(z, bits);
  const MatF s = sigmoid(z);
  EXPECT_NEAR(g(0, 0), (s(0, 0) - 1) / 4, 1e-7);
  EXPECT_NEAR(g(0, 1), s(0, 1) / 4, 1e-7);
  EXPECT_NEAR(g(1, 0), 1.0f / 4, 1e-7);
  EXPECT_NEAR(g(1, 1), -1.0f / 4, 1e-7);
  EXPECT_TRUE(s.allFinite());
  EXPECT_DOUBLE_EQ(multilabel_accuracy(z, bits), 0.5);  // row 0: (1, 0) right; row 1: (1, 0) both wrong
  EXPECT_EQ(label_column({0b01, 0b11, 0b10}, 1), (std::vector<int32_t>{0, 1, 1}));
}

struct Case {
  const char* embedding;
  int hidden;
  float dropout;
};
class DeepseaGradient : public ::testing::TestWithParam<Case> {};

TEST_P(DeepseaGradient, MatchesFiniteDifferencesForEveryParameterWithTheDropoutMaskFixed) {
  const auto data = two_motifs(8, 1);
  const SetBatch feats = features_of(data.seqs);
  OtkeModel m = deepsea_model(GetParam().embedding, feats, GetParam().hidden, GetParam().dropout);
  OtkeLossOptions lo;
  lo.dropout = true;
  lo.dropout_seed = 77;
  OtkeGradients g;
  otke_loss(m, feats, data.labels, &g, lo);
  const float h = 1e-3f;
  auto check = [&](const char* what, float* value, const float* grad, Eigen::Index size, auto&& refresh) {
    ASSERT_NE(grad, nullptr) << what;
    for (Eigen::Index i = 0; i < size; i += std::max<Eigen::Index>(1, size / 12)) {
      const float keep = value[i];
      value[i] = keep + h;
      refresh();
      const double lp = otke_loss(m, feats, data.labels, nullptr, lo);
      value[i] = keep - h;
      refresh();
      const double lm = otke_loss(m, feats, data.labels, nullptr, lo);
      value[i] = keep;
      refresh();
      const double fd = (lp - lm) / (2 * h);
      EXPECT_NEAR(grad[i], fd, 1e-3 + 5e-3 * std::fabs(fd)) << what << "[" << i << "]";
    }
  };
  auto nothing = [] {};
  check("head.weight", m.head.weight.data(), g.head_weight.data(), m.head.weight.size(), nothing);
  check("head.bias", m.head.bias.data(), g.head_bias.data(), m.head.bias.size(), nothing);
  if (m.config.hidden > 0) {
    check("head.hidden.weight", m.hidden.weight.data(), g.hidden_weight.data(), m.hidden.weight.size(), nothing);
    check("head.hidden.bias", m.hidden.bias.data(), g.hidden_bias.data(), m.hidden.bias.size(), nothing);
  }
  std::vector<MatF> refs = m.pooling.references();
  check("references", refs[0].data(), g.references[0].data(), refs[0].size(), [&] { m.pooling.set_references(refs); });
  if (m.config.embedding == OtkeEmbedding::kConv) {
    check("conv.weight", m.conv_weight.data(), g.conv_weight.data(), m.conv_weight.size(), nothing);
    check("conv.bias", m.conv_bias.data(), g.conv_bias.data(), m.conv_bias.size(), nothing);
  } else {
    MatF w = m.nystrom.anchors();
    check("anchors", w.data(), g.anchors.data(), w.size(), [&] { m.nystrom.set_anchors(w); });
  }
}

INSTANTIATE_TEST_SUITE_P(Heads, DeepseaGradient,
                         ::testing::Values(Case{"conv", 8, 0.3f}, Case{"conv", 8, 0.0f}, Case{"nystrom", 0, 0.0f},
                                           Case{"nystrom", 5, 0.5f}));

TEST(DeepseaModel, DropoutIsTrainingOnlyAndItsMaskFollowsTheSeed) {
  const auto data = two_motifs(8, 2);
  const SetBatch feats = features_of(data.seqs);
  const OtkeModel m = deepsea_model("conv", feats, 16, 0.5f);
  // Without dropout the loss is that of predict(), the network the model file describes.
  const MatF logits = m.predict(m.embed(feats));
  EXPECT_NEAR(otke_loss(m, feats, data.labels, nullptr), binary_cross_entropy(logits, data.labels), 1e-6);
  OtkeLossOptions a;
  a.dropout = true;
  a.dropout_seed = 1;
  OtkeLossOptions b = a;
  b.dropout_seed = 2;
  EXPECT_EQ(otke_loss(m, feats, data.labels, nullptr, a), otke_loss(m, feats, data.labels, nullptr, a));
  EXPECT_NE(otke_loss(m, feats, data.labels, nullptr, a), otke_loss(m, feats, data.labels, nullptr, b));
  // Probabilities: an independent sigmoid per label, not a softmax over them.
  const MatF p = output_probabilities(m.config, logits);
  EXPECT_TRUE(p.isApprox(sigmoid(logits)));
  EXPECT_GT((p.rowwise().sum().array() - 1.0f).abs().maxCoeff(), 1e-3f);
}

TEST(DeepseaModel, ConfigKeysAreWrittenOnlyWhenSetAndBadValuesAreRefused) {
  OtkeConfig c;
  c.classes = 2;
  EXPECT_FALSE(c.to_json()["head"].contains("hidden"));
  EXPECT_FALSE(c.to_json()["head"].contains("multilabel"));
  c.hidden = 32;
  c.dropout = 0.2f;
  c.multilabel = true;
  const OtkeConfig back = OtkeConfig::from_json(c.to_json());
  EXPECT_EQ(back.hidden, 32);
  EXPECT_FLOAT_EQ(back.dropout, 0.2f);
  EXPECT_TRUE(back.multilabel);
  EXPECT_EQ(back.head_dim(), 32);
  OtkeConfig bad = c;
  bad.dropout = 1.0f;
  testing::expect_error([&] { bad.validate(); }, ErrorCode::kInvalidArgument, "head.dropout must be in [0, 1)");
  bad = c;
  bad.hidden = 0;
  testing::expect_error([&] { bad.validate(); }, ErrorCode::kInvalidArgument, "set head.hidden > 0");
  bad = c;
  bad.classes = 32;
  bad.labels.clear();
  testing::expect_error([&] { bad.validate(); }, ErrorCode::kInvalidArgument, "at most 31 labels");
}

TEST(DeepseaModel, SavesAndLoadsIdenticallyAndOldLinearFilesAreUnchanged) {
  const auto data = two_motifs(8, 3);
  const SetBatch feats = features_of(data.seqs);
  const OtkeModel m = deepsea_model("conv", feats, 8, 0.2f);
  const std::vector<uint8_t> bytes = m.to_bytes();
  const OtkeModel back = OtkeModel::from_bytes(bytes.data(), bytes.size());
  EXPECT_EQ(back.to_bytes(), bytes);
  EXPECT_EQ(back.predict(back.embed(feats)), m.predict(m.embed(feats)));
  // A linear one-of-C head writes no hidden tensor and no new key.
  OtkeModel linear = m;
  linear.config.hidden = 0;
  linear.config.dropout = 0;
  linear.config.multilabel = false;
  init_otke_head(linear, 1);
  const std::vector<uint8_t> lb = linear.to_bytes();
  const std::string text(lb.begin(), lb.end());
  EXPECT_EQ(text.find("head.hidden"), std::string::npos);
  EXPECT_EQ(text.find("multilabel"), std::string::npos);
}

OtkeTrainOptions deepsea_options() {
  OtkeTrainOptions o;
  o.epochs = 30;
  o.batch_size = 16;
  o.adam.lr = 0.02;
  o.seed = 3;
  return o;
}

TEST(DeepseaTrain, LearnsTwoIndependentLabelsEachWithAHighAuroc) {
  const auto tr = two_motifs(160, 4), va = two_motifs(64, 5), te = two_motifs(96, 6);
  const SetBatch ftr = features_of(tr.seqs), fva = features_of(va.seqs), fte = features_of(te.seqs);
  OtkeModel m = deepsea_model("conv", ftr, 16, 0.2f);
  m.config.filters = 16;
  fit_otke_unsupervised(m, ftr, OtkeFitOptions{});
  init_otke_head(m, 2);
  const double before = otke_loss(m, fte, te.labels, nullptr);
  const OtkeTrainReport report = train_otke_supervised(m, ftr, tr.labels, fva, va.labels, deepsea_options());
  EXPECT_LT(otke_loss(m, fte, te.labels, nullptr), 0.7 * before);
  EXPECT_GT(report.best_val_accuracy, 0.8);  // the share of (set, label) entries right
  const MatF p = output_probabilities(m.config, m.predict(m.embed(fte)));
  for (int c = 0; c < 2; ++c) {
    std::vector<float> score(p.rows());
    for (Eigen::Index i = 0; i < p.rows(); ++i) score[i] = p(i, c);
    const std::vector<int32_t> col = label_column(te.labels, c);
    EXPECT_GT(roc_auc(score, std::vector<uint8_t>(col.begin(), col.end())), 0.9) << "label " << c;
  }
}

TEST(DeepseaTrain, ResumingWithDropoutEqualsAnUninterruptedRun) {
  const auto tr = two_motifs(32, 7), va = two_motifs(8, 8);
  const SetBatch ftr = features_of(tr.seqs), fva = features_of(va.seqs);
  const OtkeModel init = deepsea_model("conv", ftr, 8, 0.3f);
  OtkeTrainOptions o = deepsea_options();
  o.epochs = 4;
  OtkeModel straight = init;
  train_otke_supervised(straight, ftr, tr.labels, fva, va.labels, o);
  const std::string ck = inductive::testing::temp_path("otke_deepsea_resume.ckpt");
  std::remove(ck.c_str());
  o.checkpoint_path = ck;
  o.epochs = 2;
  OtkeModel first = init;
  train_otke_supervised(first, ftr, tr.labels, fva, va.labels, o);
  o.epochs = 4;
  OtkeModel resumed = init;
  EXPECT_TRUE(train_otke_supervised(resumed, ftr, tr.labels, fva, va.labels, o).resumed);
  EXPECT_EQ(resumed.to_bytes(), straight.to_bytes());
  std::remove(ck.c_str());
}

TEST(DeepseaTrain, RefusesLabelBitsOutOfRangeAndHeadRefits) {
  const auto tr = two_motifs(8, 9);
  const SetBatch f = features_of(tr.seqs);
  OtkeModel m = deepsea_model("conv", f, 4, 0.0f);
  testing::expect_error(
      [&] {
        otke_loss(m, f, {0, 1, 2, 3, 4, 0, 0, 0}, nullptr);
      },
      ErrorCode::kInvalidArgument, "label bits of set 4 out of range: got 4, expected 0..3");
  OtkeTrainOptions o = deepsea_options();
  o.head_refit_every = 2;
  testing::expect_error([&] { train_otke_supervised(m, f, tr.labels, f, tr.labels, o); }, ErrorCode::kInvalidArgument,
                        "head refits");
}

}  // namespace
}  // namespace inductive
