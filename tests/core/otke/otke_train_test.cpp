// Supervised OTKE: the model-level gradient of the cross-entropy matches finite differences for every parameter
// and every embedding/pooling combination; training learns a motif task; an interrupted run resumes exactly.
#include <cmath>
#include <cstdio>
#include <random>

#include <gtest/gtest.h>

#include "inductive/otke_train.h"
#include "inductive/parallel.h"
#include "../test_util.h"
#include "motif_sets.h"

namespace inductive {
namespace {

// Sequences with the motif "GATTACA" are class 1, the others class 0.
testing::MotifSets motif_data(int count, uint32_t seed) {
  return testing::motif_sets(count, seed, 20, 15, {{"GATTACA"}});
}

OtkeModel small_model(const std::string& embedding, const std::string& pooling, const SetBatch& feats) {
  OtkeModel m;
  m.config.kmer = 3;
  m.config.embedding = parse_enum(kOtkeEmbeddings, embedding, "embedding");
  m.config.anchors = 6;
  m.config.filters = 5;
  m.config.pooling = parse_enum(kOtkePoolings, pooling, "pooling");
  m.config.otk.p = 3;
  m.config.otk.q = 2;
  m.config.otk.iters = 5;
  m.config.otk.sigma_pos = 0.5f;
  m.config.classes = 2;
  fit_otke_unsupervised(m, feats, OtkeFitOptions{});
  std::mt19937 rng(9);
  std::normal_distribution<float> nd(0, 0.5f);
  m.head.weight.resize(2, m.config.output_dim());
  for (Eigen::Index i = 0; i < m.head.weight.size(); ++i) m.head.weight.data()[i] = nd(rng);
  m.head.bias = VecF::Constant(2, 0.1f);
  return m;
}

using Combo = std::pair<const char*, const char*>;
class OtkeLossGradient : public ::testing::TestWithParam<Combo> {};

TEST_P(OtkeLossGradient, MatchesFiniteDifferencesForEveryParameter) {
  const auto data = motif_data(6, 1);
  OtkeModel probe;
  probe.config.kmer = 3;
  const SetBatch feats = probe.sequence_features(data.seqs);
  OtkeModel m = small_model(GetParam().first, GetParam().second, feats);
  OtkeGradients g;
  otke_loss(m, feats, data.labels, &g);
  const float h = 1e-3f;
  auto check = [&](const char* what, float* value, const float* grad, Eigen::Index size, auto&& refresh) {
    ASSERT_NE(grad, nullptr) << what;
    for (Eigen::Index i = 0; i < size; i += std::max<Eigen::Index>(1, size / 12)) {
      const float keep = value[i];
      value[i] = keep + h;
      refresh();
      const double lp = otke_loss(m, feats, data.labels, nullptr);
      value[i] = keep - h;
      refresh();
      const double lm = otke_loss(m, feats, data.labels, nullptr);
      value[i] = keep;
      refresh();
      const double fd = (lp - lm) / (2 * h);
      EXPECT_NEAR(grad[i], fd, 2e-3 + 5e-3 * std::fabs(fd)) << what << "[" << i << "]";
    }
  };
  auto nothing = [] {};
  check("head.weight", m.head.weight.data(), g.head_weight.data(), m.head.weight.size(), nothing);
  check("head.bias", m.head.bias.data(), g.head_bias.data(), m.head.bias.size(), nothing);
  if (m.config.pooling == OtkePooling::kOtk) {
    for (int r = 0; r < 2; ++r) {
      std::vector<MatF> refs = m.pooling.references();
      check("references", refs[r].data(), g.references[r].data(), refs[r].size(),
            [&] { m.pooling.set_references(refs); });
    }
  }
  if (m.config.embedding == OtkeEmbedding::kConv) {
    check("conv.weight", m.conv_weight.data(), g.conv_weight.data(), m.conv_weight.size(), nothing);
    check("conv.bias", m.conv_bias.data(), g.conv_bias.data(), m.conv_bias.size(), nothing);
  }
  if (m.config.embedding == OtkeEmbedding::kNystrom) {
    // Anchors are renormalised by set_anchors: the gradient is the tangent one (see Nystrom::anchor_gradient).
    MatF w = m.nystrom.anchors();
    check("anchors", w.data(), g.anchors.data(), w.size(), [&] { m.nystrom.set_anchors(w); });
  }
}

INSTANTIATE_TEST_SUITE_P(Layers, OtkeLossGradient,
                         ::testing::Values(Combo{"nystrom", "otk"}, Combo{"conv", "otk"}, Combo{"identity", "otk"},
                                           Combo{"nystrom", "mean"}, Combo{"conv", "max"}));

// A step on OTK pooling under a linear head pools and differentiates each set in one pass (OtkeLossOptions::fuse_sets).
// Its loss and gradients are the batch's forward-then-backward ones, to rounding (each row's logits come from a
// product of one row instead of the batch's): identity, Nystrom and conv embeddings, one-class and multilabel heads,
// both Sinkhorn gradients, on one and two threads.
TEST(OtkeLoss, EachSetInOnePassGivesTheBatchsLossAndGradients) {
  const auto data = motif_data(7, 4);
  OtkeModel probe;
  probe.config.kmer = 3;
  const SetBatch feats = probe.sequence_features(data.seqs);
  for (const char* embedding : {"identity", "nystrom", "conv"}) {
    for (bool multilabel : {false, true}) {
      for (SinkhornGradient gradient : {SinkhornGradient::kUnrolled, SinkhornGradient::kImplicit}) {
        OtkeModel m = small_model(embedding, "otk", feats);
        std::vector<int32_t> labels = data.labels;
        if (multilabel) {
          m.config.multilabel = true;
          for (size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<int32_t>(i % 4);  // 2 labels as bits
        }
        const std::string where = std::string(embedding) + (multilabel ? " multilabel" : " classes") +
                                  (gradient == SinkhornGradient::kImplicit ? " implicit" : " unrolled");
        OtkeLossOptions batch_path;
        batch_path.sinkhorn_gradient = gradient;
        batch_path.fuse_sets = false;
        OtkeGradients expect;
        const double expect_loss = otke_loss(m, feats, labels, &expect, batch_path);
        for (int threads : {1, 2}) {
          set_parallel_threads(threads);
          OtkeLossOptions fused = batch_path;
          fused.fuse_sets = true;
          OtkeGradients got;
          const double loss = otke_loss(m, feats, labels, &got, fused);
          EXPECT_NEAR(loss, expect_loss, 1e-6 * std::fabs(expect_loss)) << where;
          EXPECT_NEAR(loss, otke_loss(m, feats, labels, nullptr), 1e-6 * std::fabs(expect_loss)) << where;
          const auto close = [&](const MatF& a, const MatF& b, const char* what) {
            ASSERT_EQ(a.rows(), b.rows()) << where << " " << what;
            ASSERT_EQ(a.cols(), b.cols()) << where << " " << what;
            EXPECT_LE((a - b).cwiseAbs().maxCoeff(), 1e-5f * (1.0f + b.cwiseAbs().maxCoeff())) << where << " " << what;
          };
          close(got.head_weight, expect.head_weight, "head.weight");
          close(got.head_bias, expect.head_bias, "head.bias");
          ASSERT_EQ(got.references.size(), expect.references.size()) << where;
          for (size_t r = 0; r < got.references.size(); ++r) close(got.references[r], expect.references[r], "refs");
          if (m.config.embedding == OtkeEmbedding::kNystrom) close(got.anchors, expect.anchors, "anchors");
          if (m.config.embedding == OtkeEmbedding::kConv) {
            close(got.conv_weight, expect.conv_weight, "conv.weight");
            close(got.conv_bias, expect.conv_bias, "conv.bias");
          }
        }
        set_parallel_threads(0);
      }
    }
  }
}

OtkeTrainOptions quick_options() {
  OtkeTrainOptions o;
  o.epochs = 4;
  o.batch_size = 8;
  o.adam.lr = 0.05;
  o.seed = 3;
  return o;
}

TEST(OtkeTrain, LearnsAMotifAndKeepsTheBestEpoch) {
  const auto tr = motif_data(64, 2), va = motif_data(32, 3);
  OtkeModel probe;
  probe.config.kmer = 3;
  const SetBatch ftr = probe.sequence_features(tr.seqs), fva = probe.sequence_features(va.seqs);
  OtkeModel m = small_model("nystrom", "otk", ftr);
  const double before = otke_loss(m, ftr, tr.labels, nullptr);
  OtkeTrainOptions o = quick_options();
  o.epochs = 15;
  const auto report = train_otke_supervised(m, ftr, tr.labels, fva, va.labels, o);
  EXPECT_LT(otke_loss(m, ftr, tr.labels, nullptr), before);
  EXPECT_GE(report.best_epoch, 1);
  double best = 1e9;
  for (const auto& e : report.history) best = std::min(best, e.val_loss);
  EXPECT_DOUBLE_EQ(report.best_val_loss, best);
  EXPECT_NEAR(otke_loss(m, fva, va.labels, nullptr), best, 1e-5) << "the best epoch's model is kept";
}

TEST(OtkeTrain, ImplicitSinkhornGradientLearnsWithoutATape) {
  // 200 Sinkhorn iterations: the unrolled tape would hold 200 (n + p) floats per set; the implicit gradient none.
  const auto tr = motif_data(64, 2), va = motif_data(32, 3);
  OtkeModel probe;
  probe.config.kmer = 3;
  const SetBatch ftr = probe.sequence_features(tr.seqs), fva = probe.sequence_features(va.seqs);
  OtkeModel m = small_model("nystrom", "otk", ftr);
  m.config.otk.iters = 200;
  m.pooling = OtkPooling(m.pooling.references(), m.config.otk);
  const double before = otke_loss(m, ftr, tr.labels, nullptr);
  OtkeTrainOptions o = quick_options();
  o.epochs = 15;
  o.sinkhorn_gradient = SinkhornGradient::kImplicit;
  train_otke_supervised(m, ftr, tr.labels, fva, va.labels, o);
  EXPECT_LT(otke_loss(m, ftr, tr.labels, nullptr), 0.8 * before);
}

TEST(OtkeTrain, ResumingFromACheckpointEqualsAnUninterruptedRun) {
  const auto tr = motif_data(24, 4), va = motif_data(8, 5);
  OtkeModel probe;
  probe.config.kmer = 3;
  const SetBatch ftr = probe.sequence_features(tr.seqs), fva = probe.sequence_features(va.seqs);
  const OtkeModel init = small_model("nystrom", "otk", ftr);

  OtkeModel straight = init;
  train_otke_supervised(straight, ftr, tr.labels, fva, va.labels, quick_options());

  const std::string ck = inductive::testing::temp_path("otke_resume_test.ckpt");
  std::remove(ck.c_str());
  OtkeModel first = init;
  OtkeTrainOptions o = quick_options();
  o.checkpoint_path = ck;
  o.epochs = 2;
  train_otke_supervised(first, ftr, tr.labels, fva, va.labels, o);  // "interrupted" after 2 epochs
  OtkeModel resumed = init;
  o.epochs = 4;
  const auto report = train_otke_supervised(resumed, ftr, tr.labels, fva, va.labels, o);
  EXPECT_TRUE(report.resumed);
  EXPECT_EQ(report.resumed_from_epoch, 2);
  EXPECT_EQ(report.history.size(), 4u);
  EXPECT_EQ(resumed.nystrom.anchors(), straight.nystrom.anchors());
  EXPECT_EQ(resumed.pooling.references()[0], straight.pooling.references()[0]);
  EXPECT_EQ(resumed.head.weight, straight.head.weight);

  OtkeModel other = init;
  other.config.otk.eps = 0.7;
  testing::expect_error([&] { train_otke_supervised(other, ftr, tr.labels, fva, va.labels, o); },
                        ErrorCode::kInvalidArgument, "another model configuration");
  std::remove(ck.c_str());
}

TEST(OtkeTrain, RejectsModelsWithoutHeadAndBadLabels) {
  const auto tr = motif_data(4, 6);
  OtkeModel m;
  m.config.kmer = 3;
  m.config.anchors = 4;
  m.config.otk.p = 2;
  const SetBatch f = m.sequence_features(tr.seqs);
  fit_otke_unsupervised(m, f, OtkeFitOptions{});
  testing::expect_error([&] { otke_loss(m, f, tr.labels, nullptr); }, ErrorCode::kInvalidArgument, "needs a head");
  OtkeModel h = small_model("nystrom", "otk", f);
  testing::expect_error(
      [&] {
        otke_loss(h, f, {0, 1, 2, 0}, nullptr);
      },
      ErrorCode::kInvalidArgument, "label of set 2 out of range");
}

}  // namespace
}  // namespace inductive
