// OTKE's mean/max pooling functors (native/cuda/otke_pool_ops.h), run by the host executor: forward held to core's
// mean_pool / max_pool on masked batches whose padding is NaN (never read), backward held to central finite
// differences of <dphi, pool(psi)>. The CUDA suite runs the same functors inside the OTKE stepper
// (tests/cuda/otke_cuda_test.cpp, the mean and max variants); these run everywhere.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "../core/test_util.h"
#include "graphit_exec_host.h"
#include "inductive/linalg.h"
#include "inductive/otke.h"
#include "otke_pool_ops.h"

namespace inductive {
namespace {

struct Shape {
  int batch, n_max, k;
};
const Shape kShapes[] = {{1, 1, 1}, {3, 17, 5}, {7, 40, 9}, {2, 64, 33}, {5, 3, 128}};

// Lengths in [1, n_max] (set 0 full) and NaN padding. Each column's values are a shuffled ladder 2/n_max apart plus
// noise below a tenth of the step, so max pooling has no near-ties for the finite differences to cross.
SetBatch make_batch(const Shape& s, uint32_t seed) {
  SetBatch x(s.batch, s.n_max, s.k);
  std::fill(x.x.begin(), x.x.end(), std::numeric_limits<float>::quiet_NaN());
  std::mt19937 rng(seed);
  const double step = 2.0 / s.n_max;
  std::uniform_real_distribution<double> noise(0.0, 0.1 * step);
  for (int b = 0; b < s.batch; ++b) {
    x.n[b] = b == 0 ? s.n_max : 1 + static_cast<int>(rng() % s.n_max);
    for (int j = 0; j < s.k; ++j) {
      std::vector<int> order(x.n[b]);
      std::iota(order.begin(), order.end(), 0);
      std::shuffle(order.begin(), order.end(), rng);
      for (int i = 0; i < x.n[b]; ++i) x.row(b, i)[j] = static_cast<float>(order[i] * step - 1.0 + noise(rng));
    }
  }
  return x;
}

struct Pooled {
  std::vector<float> phi;
  std::vector<int32_t> argmax;
};

// The pass's arguments over a batch; the caller points the outputs (and, backward, the inputs) at its buffers.
otke_pool::Args args_of(const SetBatch& x, bool max) {
  otke_pool::Args a;
  a.psi = x.x.data();
  a.n = x.n.data();
  a.batch = x.batch;
  a.n_max = x.n_max;
  a.k = x.dim;
  a.max = max;
  return a;
}

Pooled pool(const SetBatch& x, bool max) {
  Pooled out{std::vector<float>(static_cast<size_t>(x.batch) * x.dim, std::numeric_limits<float>::quiet_NaN()),
             std::vector<int32_t>(static_cast<size_t>(x.batch) * x.dim, -2)};
  otke_pool::Args a = args_of(x, max);
  a.phi = out.phi.data();
  a.argmax = out.argmax.data();
  graphit_device::HostExec exec;
  otke_pool::forward(exec, a);
  return out;
}

std::vector<float> pool_backward(const SetBatch& x, bool max, const std::vector<float>& dphi) {
  Pooled fwd = pool(x, max);
  std::vector<float> dpsi(x.x.size(), std::numeric_limits<float>::quiet_NaN());
  otke_pool::Args a = args_of(x, max);
  a.argmax = fwd.argmax.data();
  a.dphi = dphi.data();
  a.dpsi = dpsi.data();
  graphit_device::HostExec exec;
  otke_pool::backward(exec, a);
  return dpsi;
}

TEST(OtkePoolPass, ForwardIsCoresMeanAndMaxPoolAndNeverReadsPadding) {
  uint32_t seed = 10;
  for (const Shape& s : kShapes) {
    SCOPED_TRACE(::testing::Message() << s.batch << " x " << s.n_max << " x " << s.k);
    const SetBatch x = make_batch(s, seed += 7);
    const MatF mean = mean_pool(x), max = max_pool(x);
    const Pooled pm = pool(x, false), px = pool(x, true);
    for (int b = 0; b < s.batch; ++b)
      for (int j = 0; j < s.k; ++j) {
        const size_t e = static_cast<size_t>(b) * s.k + j;
        EXPECT_NEAR(pm.phi[e], mean(b, j), 1e-6f * std::max(1.0f, std::fabs(mean(b, j)))) << b << ", " << j;
        EXPECT_EQ(px.phi[e], max(b, j)) << b << ", " << j;
        // The index otke_loss's backward routes the gradient to: Eigen's first maximum of the valid column.
        Eigen::Index at = -1;
        CMapF(x.row(b, 0), x.n[b], s.k).col(j).maxCoeff(&at);
        EXPECT_EQ(px.argmax[e], at) << b << ", " << j;
      }
  }
}

TEST(OtkePoolPass, BackwardIsTheFiniteDifferenceGradientAndZeroOnPadding) {
  uint32_t seed = 50;
  for (const Shape& s : kShapes) {
    for (const bool max : {false, true}) {
      SCOPED_TRACE(::testing::Message() << (max ? "max " : "mean ") << s.batch << " x " << s.n_max << " x " << s.k);
      SetBatch x = make_batch(s, seed += 11);
      const std::vector<float> dphi = testing::random_vector<float>(static_cast<size_t>(s.batch) * s.k, seed, -1, 1);
      const std::vector<float> dpsi = pool_backward(x, max, dphi);
      const auto objective = [&] {
        const Pooled p = pool(x, max);
        double l = 0;
        for (size_t e = 0; e < dphi.size(); ++e) l += static_cast<double>(dphi[e]) * p.phi[e];
        return l;
      };
      // Perturbations well inside a ladder step (no change of argmax); padding entries perturbed too: the objective
      // must not move, and the gradient there is 0.
      const float h = static_cast<float>(0.02 / s.n_max);
      for (int b = 0; b < s.batch; ++b)
        for (int i = 0; i < s.n_max; ++i)
          for (int j = 0; j < s.k; ++j) {
            float& v = x.row(b, i)[j];
            const float keep = v;
            const float base = std::isnan(keep) ? 0.0f : keep;
            v = base + h;
            const double up = objective();
            v = base - h;
            const double down = objective();
            v = keep;
            const double fd = (up - down) / (static_cast<double>(base + h) - static_cast<double>(base - h));
            const float g = dpsi[(static_cast<size_t>(b) * s.n_max + i) * s.k + j];
            if (i >= x.n[b]) {
              ASSERT_EQ(g, 0.0f) << "padding " << b << ", " << i << ", " << j;
              ASSERT_EQ(up, down) << "padding was read at " << b << ", " << i << ", " << j;
            } else {
              ASSERT_NEAR(g, fd, 2e-3 * std::max(1.0, std::fabs(fd))) << b << ", " << i << ", " << j;
            }
          }
    }
  }
}

// Core refuses empty sets before pooling; the functors still give a defined result for one: 0, and no gradient.
TEST(OtkePoolPass, AnEmptySetPoolsToZeroAndTakesNoGradient) {
  SetBatch x = make_batch({2, 4, 3}, 5);
  x.n[1] = 0;
  for (const bool max : {false, true}) {
    const Pooled p = pool(x, max);
    for (int j = 0; j < 3; ++j) {
      EXPECT_EQ(p.phi[3 + j], 0.0f);
      if (max) {
        EXPECT_EQ(p.argmax[3 + j], -1);
      }
    }
    const std::vector<float> dpsi = pool_backward(x, max, std::vector<float>(6, 1.0f));
    for (size_t e = 12; e < dpsi.size(); ++e) EXPECT_EQ(dpsi[e], 0.0f) << e;
  }
}

}  // namespace
}  // namespace inductive
