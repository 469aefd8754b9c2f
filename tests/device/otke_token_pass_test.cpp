// A tokens model's lookup on the device (native/cuda/otke_token_ops.h) and its adjoint (GraphiT's EmbeddingGrad over
// the ids the lookup writes), run by the host executor: the lookup is core's OtkeModel::local_features on every valid
// element, whatever the padding holds; the adjoint passes the dot-product test <lookup(T), G> = <T, adjoint(G)>
// and adds occurrences in element order, as otke_loss does. The CUDA suite runs both inside the OTKE stepper.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "../core/test_util.h"
#include "graphit_device_ops.h"
#include "graphit_exec_host.h"
#include "inductive/error.h"
#include "inductive/otke.h"
#include "inductive/otke_train.h"
#include "otke_token_ops.h"

namespace inductive {
namespace {

constexpr int kVocab = 13, kDim = 6;

OtkeModel tokens_model() {
  OtkeModel m;
  m.config.input_type = OtkeInput::kTokens;
  m.config.input_dim = kDim;
  m.config.embedding = OtkeEmbedding::kIdentity;
  m.config.tokens = {"<unk>"};
  for (int t = 1; t < kVocab; ++t) m.config.tokens.push_back("w" + std::to_string(t));
  m.token_table = testing::random_mat(kVocab, kDim, 7);
  return m;
}

// Lengths 1..n_max (set 0 full); padding entries hold values that are no index (huge, negative, NaN).
SetBatch token_sets(int batch, int n_max, uint32_t seed) {
  SetBatch x(batch, n_max, 1);
  const auto len = testing::random_vector<double>(batch, seed);
  const auto v = testing::random_vector<double>(x.x.size(), seed + 1);
  const float junk[] = {1e9f, -3.0f, std::nanf(""), 2.5f};
  for (int b = 0; b < batch; ++b) {
    x.n[b] = b == 0 ? n_max : 1 + static_cast<int>(len[b] * (n_max - 1));
    for (int i = 0; i < n_max; ++i)
      *x.row(b, i) =
          i < x.n[b] ? static_cast<float>(static_cast<int>(v[b * n_max + i] * kVocab) % kVocab) : junk[i % 4];
  }
  return x;
}

struct Looked {
  std::vector<float> local;
  std::vector<int32_t> ids;
};

Looked lookup(const OtkeModel& m, const SetBatch& x) {
  const int64_t rows = static_cast<int64_t>(x.batch) * x.n_max;
  Looked out{std::vector<float>(rows * kDim, std::nanf("")), std::vector<int32_t>(rows, -1)};
  otke_tokens::Lookup l{x.x.data(), x.n.data(), x.n_max,          m.token_table.data(),
                        kVocab,     kDim,       out.local.data(), out.ids.data()};
  graphit_device::HostExec exec;
  exec.launch(rows * kDim, l);
  return out;
}

TEST(OtkeTokenPass, LookupIsCoresLocalFeaturesAndPaddingIsNeverAnIndex) {
  const OtkeModel m = tokens_model();
  const SetBatch x = token_sets(6, 17, 40);
  const Looked d = lookup(m, x);
  const SetBatch cpu = m.local_features(x);
  for (int b = 0; b < x.batch; ++b)
    for (int i = 0; i < x.n_max; ++i) {
      const int64_t row = static_cast<int64_t>(b) * x.n_max + i;
      if (i < x.n[b]) {
        EXPECT_EQ(d.ids[row], static_cast<int>(*x.row(b, i)));
        for (int c = 0; c < kDim; ++c) EXPECT_EQ(d.local[row * kDim + c], cpu.row(b, i)[c]) << b << ", " << i;
      } else {
        EXPECT_EQ(d.ids[row], 0) << "padding " << b << ", " << i;
        for (int c = 0; c < kDim; ++c) EXPECT_TRUE(std::isfinite(d.local[row * kDim + c]));
      }
    }
}

// The host check the steppers run before a lookup is core's: same error for an index outside the vocabulary.
TEST(OtkeTokenPass, TheHostCheckRefusesWhatTheLookupWouldNotFollow) {
  const OtkeModel m = tokens_model();
  SetBatch x = token_sets(2, 5, 41);
  EXPECT_NO_THROW(check_otke_tokens(m, x));
  *x.row(1, 0) = static_cast<float>(kVocab);
  try {
    check_otke_tokens(m, x);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("set 1 element 0 holds token index 13, expected an integer in 0..12"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(m.local_features(x), Error);
}

TEST(OtkeTokenPass, TheTableGradientIsTheLookupsAdjointInElementOrder) {
  const OtkeModel m = tokens_model();
  const SetBatch x = token_sets(5, 21, 42);
  const int64_t rows = static_cast<int64_t>(x.batch) * x.n_max;
  const Looked d = lookup(m, x);
  // dL/d(local features): random on valid rows, 0 on padding (what every backward pass above the lookup gives).
  std::vector<float> dx = testing::random_vector<float>(rows * kDim, 43, -1, 1);
  for (int b = 0; b < x.batch; ++b)
    for (int i = x.n[b]; i < x.n_max; ++i)
      for (int c = 0; c < kDim; ++c) dx[(static_cast<int64_t>(b) * x.n_max + i) * kDim + c] = 0.0f;
  std::vector<float> g(static_cast<size_t>(kVocab) * kDim, 0.0f);
  graphit_device::HostExec exec;
  exec.launch(kDim, graphit_ops::EmbeddingGrad{g.data(), dx.data(), d.ids.data(), rows, kDim});
  // Dot-product test, in double.
  double lhs = 0, rhs = 0;
  for (int64_t e = 0; e < rows * kDim; ++e) lhs += static_cast<double>(d.local[e]) * dx[e];
  for (size_t e = 0; e < g.size(); ++e) rhs += static_cast<double>(m.token_table.data()[e]) * g[e];
  EXPECT_NEAR(lhs, rhs, 1e-5 * std::max(1.0, std::fabs(lhs)));
  // otke_loss's loop: occurrences added to their token's row in element order (the same float sums exactly).
  MatF cpu = MatF::Zero(kVocab, kDim);
  for (int b = 0; b < x.batch; ++b)
    for (int i = 0; i < x.n[b]; ++i)
      for (int c = 0; c < kDim; ++c)
        cpu(static_cast<int>(*x.row(b, i)), c) += dx[(static_cast<int64_t>(b) * x.n_max + i) * kDim + c];
  for (int t = 0; t < kVocab; ++t)
    for (int c = 0; c < kDim; ++c) EXPECT_EQ(g[static_cast<size_t>(t) * kDim + c], cpu(t, c)) << t << ", " << c;
}

}  // namespace
}  // namespace inductive
