// The loss at the top of OTKE's head (native/cuda/otke_head_ops.h), run row by row on the CPU as the CUDA kernel runs
// it: the softmax and the multilabel (binary cross-entropy) losses held to core's cross_entropy /
// binary_cross_entropy and their gradients, and to central finite differences. The CUDA suite runs the same functor
// inside the OTKE stepper (tests/cuda/otke_cuda_test.cpp, the multilabel variants); these run everywhere.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "../core/test_util.h"
#include "inductive/linalg.h"
#include "inductive/logistic.h"
#include "inductive/multilabel.h"
#include "otke_head_ops.h"

namespace inductive {
namespace {

struct Shape {
  int batch, classes;
};
const Shape kShapes[] = {{1, 2}, {5, 3}, {16, 7}, {9, 12}, {3, 30}};

struct Result {
  MatF logits, dlogits;
  double loss = 0;  // the mean, as core returns it
};

// Runs the functor over every row the way the kernel does, summing the rows' losses.
Result run(const MatF& raw, const VecF& bias, const std::vector<int32_t>* labels, bool multilabel) {
  Result r{raw, MatF::Constant(raw.rows(), raw.cols(), std::numeric_limits<float>::quiet_NaN())};
  otke_head::Args a;
  a.logits = r.logits.data();
  a.bias = bias.data();
  a.labels = labels ? labels->data() : nullptr;
  a.dlogits = r.dlogits.data();
  a.batch = static_cast<int>(raw.rows());
  a.classes = static_cast<int>(raw.cols());
  a.multilabel = multilabel;
  const otke_head::RowLoss f{a};
  double sum = 0;
  for (int b = 0; b < a.batch; ++b) sum += f(b);
  r.loss = sum / a.loss_divisor();
  return r;
}

// Logits spread over [-6, 6], with a few far out (+-80) where a naive sigmoid or softplus overflows.
MatF make_logits(const Shape& s, uint32_t seed) {
  MatF z = testing::random_mat(s.batch, s.classes, seed) * 6.0f;
  if (s.batch * s.classes > 6) z(0, 1) = 80.0f, z(s.batch - 1, 0) = -80.0f;
  return z;
}

std::vector<int32_t> make_labels(const Shape& s, bool multilabel, uint32_t seed) {
  const auto r = testing::random_vector<double>(s.batch, seed);
  const int64_t end = multilabel ? int64_t{1} << s.classes : s.classes;
  std::vector<int32_t> y(s.batch);
  for (int b = 0; b < s.batch; ++b) y[b] = static_cast<int32_t>(static_cast<int64_t>(r[b] * end) % end);
  return y;
}

MatF with_bias(const MatF& z, const VecF& bias) { return z.rowwise() + bias.transpose(); }

TEST(OtkeHeadPass, MultilabelLossAndGradientAreCoresBinaryCrossEntropy) {
  uint32_t seed = 10;
  for (const Shape& s : kShapes) {
    SCOPED_TRACE(::testing::Message() << s.batch << " x " << s.classes);
    const MatF raw = make_logits(s, seed += 3);
    const VecF bias = testing::random_mat(s.classes, 1, seed + 1).col(0);
    const std::vector<int32_t> bits = make_labels(s, true, seed + 2);
    const Result r = run(raw, bias, &bits, true);
    const MatF z = with_bias(raw, bias);
    EXPECT_EQ(r.logits, z);
    EXPECT_NEAR(r.loss, binary_cross_entropy(z, bits), 1e-12 * std::max(1.0, r.loss));
    EXPECT_TRUE(std::isfinite(r.loss));
    EXPECT_EQ(r.dlogits, binary_cross_entropy_gradient(z, bits));  // the same expression, bit for bit
  }
}

TEST(OtkeHeadPass, SoftmaxLossAndGradientAreCoresCrossEntropy) {
  uint32_t seed = 40;
  for (const Shape& s : kShapes) {
    SCOPED_TRACE(::testing::Message() << s.batch << " x " << s.classes);
    const MatF raw = make_logits(s, seed += 3);
    const VecF bias = testing::random_mat(s.classes, 1, seed + 1).col(0);
    const std::vector<int32_t> y = make_labels(s, false, seed + 2);
    const Result r = run(raw, bias, &y, false);
    const MatF z = with_bias(raw, bias);
    EXPECT_NEAR(r.loss, cross_entropy(z, y), 1e-6 * std::max(1.0, r.loss));
    MatF expected = softmax_rows(z);
    for (int b = 0; b < s.batch; ++b) expected(b, y[b]) -= 1.0f;
    expected /= static_cast<float>(s.batch);
    for (Eigen::Index e = 0; e < expected.size(); ++e) EXPECT_NEAR(r.dlogits.data()[e], expected.data()[e], 1e-6f) << e;
  }
}

TEST(OtkeHeadPass, GradientsAreTheFiniteDifferencesOfTheMeanLoss) {
  const Shape s{4, 5};
  for (const bool multilabel : {false, true}) {
    SCOPED_TRACE(multilabel ? "multilabel" : "softmax");
    const MatF raw = testing::random_mat(s.batch, s.classes, 70) * 3.0f;
    const VecF bias = VecF::Zero(s.classes);
    const std::vector<int32_t> y = make_labels(s, multilabel, 71);
    const Result r = run(raw, bias, &y, multilabel);
    const float h = 1e-2f;
    for (Eigen::Index e = 0; e < raw.size(); ++e) {
      MatF up = raw, down = raw;
      up.data()[e] += h;
      down.data()[e] -= h;
      const double fd = (run(up, bias, &y, multilabel).loss - run(down, bias, &y, multilabel).loss) /
                        (static_cast<double>(up.data()[e]) - down.data()[e]);
      EXPECT_NEAR(r.dlogits.data()[e], fd, 2e-4) << e;
    }
  }
}

TEST(OtkeHeadPass, WithoutLabelsOnlyTheBiasIsAdded) {
  const Shape s{6, 4};
  const MatF raw = make_logits(s, 90);
  const VecF bias = testing::random_mat(s.classes, 1, 91).col(0);
  for (const bool multilabel : {false, true}) {
    const Result r = run(raw, bias, nullptr, multilabel);
    EXPECT_EQ(r.logits, with_bias(raw, bias));
    EXPECT_EQ(r.loss, 0.0);
    EXPECT_TRUE(r.dlogits.array().isNaN().all()) << "dlogits was written without labels";
  }
}

}  // namespace
}  // namespace inductive
