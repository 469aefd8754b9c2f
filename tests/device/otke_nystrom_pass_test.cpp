// The Nystrom embedding's input gradient on the device (native/cuda/otke_nystrom_ops.h), run by the host executor
// between the same products the stepper runs through cuBLAS (here Eigen's): it is core's Nystrom::backward grad_x,
// with and without keep_norm, on rows of every norm regime (zero, below the 1e-2 floor, above it). The CUDA suite
// runs it inside the OTKE stepper (tests/cuda/otke_cuda_test.cpp, the token variants under Nystrom).
#include <gtest/gtest.h>

#include <vector>

#include "../core/test_util.h"
#include "graphit_exec_host.h"
#include "inductive/linalg.h"
#include "inductive/nystrom.h"
#include "otke_nystrom_ops.h"

namespace inductive {
namespace {

// Rows of x: random ones, a zero row, rows of norm 3e-3 and 1e-2 exactly (at and below the floor), a large one.
MatF make_inputs(int rows, int d, uint32_t seed) {
  MatF x = testing::random_mat(rows, d, seed) * 2.0f - MatF::Ones(rows, d);
  x.row(1).setZero();
  x.row(2) = x.row(2).normalized() * 3e-3f;
  x.row(3) = x.row(3).normalized() * 1e-2f;
  x.row(4) *= 40.0f;
  return x;
}

// The device's sequence: products as the stepper writes them, the functors in between.
MatF device_input_gradient(const Nystrom& ny, const MatF& x, const MatF& dpsi_in) {
  Nystrom::Cache cache;
  const MatF psi = ny.forward(x, cache);
  const bool keep_norm = ny.options().keep_norm;
  MatF dpsi = dpsi_in, dx(x.rows(), x.cols());
  VecF grad_norm = VecF::Constant(x.rows(), std::nanf(""));
  otke_nystrom::Args a;
  a.xhat = cache.xhat.data();
  a.norm = cache.norm.data();
  a.psi = psi.data();
  a.dpsi = dpsi.data();
  a.grad_norm = grad_norm.data();
  a.dx = dx.data();
  a.rows = x.rows();
  a.d = static_cast<int>(x.cols());
  a.k = ny.num_anchors();
  a.keep_norm = keep_norm;
  graphit_device::HostExec exec;
  if (keep_norm) {
    otke_nystrom::norm_gradient(exec, a);
    dpsi = cache.norm.asDiagonal() * dpsi;  // scale_rows
  }
  MatF da = dpsi * ny.factor();
  const float s2 = ny.options().sigma * ny.options().sigma;
  da.array() *= cache.kx.array() / s2;  // kappa_backward
  dx.noalias() = da * ny.anchors();     // dL/dxhat
  otke_nystrom::input_gradient(exec, a);
  return dx;
}

TEST(OtkeNystromPass, InputGradientIsCoresNystromBackwardInEveryNormRegime) {
  for (const bool keep_norm : {false, true}) {
    for (const int k : {1, 6, 17}) {
      SCOPED_TRACE(::testing::Message() << (keep_norm ? "keep-norm " : "") << "K " << k);
      NystromOptions o;
      o.sigma = 0.5f;
      o.keep_norm = keep_norm;
      const int d = 9, rows = 12;
      const Nystrom ny(testing::random_mat(k, d, 100 + k), o);
      const MatF x = make_inputs(rows, d, 200 + k);
      const MatF dpsi = testing::random_mat(rows, k, 300 + k) * 2.0f - MatF::Ones(rows, k);
      Nystrom::Cache cache;
      ny.forward(x, cache);
      MatF expected;
      ny.backward(cache, dpsi, &expected, nullptr, nullptr);
      const MatF got = device_input_gradient(ny, x, dpsi);
      ASSERT_EQ(got.rows(), expected.rows());
      for (int i = 0; i < rows; ++i)
        for (int c = 0; c < d; ++c)
          EXPECT_NEAR(got(i, c), expected(i, c), 2e-5f * (1.0f + std::fabs(expected(i, c)))) << i << ", " << c;
    }
  }
}

TEST(OtkeNystromPass, AZeroRowHasNoNormGradientAndAFlooredGradient) {
  NystromOptions o;
  o.keep_norm = true;
  const Nystrom ny(testing::random_mat(4, 3, 9), o);
  MatF x = MatF::Zero(1, 3);
  Nystrom::Cache cache;
  const MatF psi = ny.forward(x, cache);
  EXPECT_EQ(psi.norm(), 0.0f);  // keep_norm scales by ||x|| = 0
  const MatF dpsi = MatF::Ones(1, 4);
  float grad_norm = 7.0f;
  MatF dx = MatF::Ones(1, 3);
  otke_nystrom::Args a;
  a.xhat = cache.xhat.data();
  a.norm = cache.norm.data();
  a.psi = psi.data();
  a.dpsi = dpsi.data();
  a.grad_norm = &grad_norm;
  a.dx = dx.data();
  a.rows = 1;
  a.d = 3;
  a.k = 4;
  a.keep_norm = true;
  graphit_device::HostExec exec;
  otke_nystrom::norm_gradient(exec, a);
  EXPECT_EQ(grad_norm, 0.0f);
  otke_nystrom::input_gradient(exec, a);
  for (int c = 0; c < 3; ++c) EXPECT_FLOAT_EQ(dx(0, c), 1.0f / 1e-2f);
}

}  // namespace
}  // namespace inductive
