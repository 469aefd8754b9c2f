// The register-blocked products used by OTK pooling in the wasm build equal Eigen's, for every remainder of the
// 4 x 4 and 4 x 2W blocks and the vector width, with row strides wider than the rows.
#include <gtest/gtest.h>

#include "inductive/linalg.h"
#include "simd/small_gemm.h"
#include "../test_util.h"

namespace inductive {
namespace {

using testing::random_mat;

TEST(SmallGemm, RowsTimesRowsTransposedEqualsEigen) {
  for (int m : {1, 3, 4, 9})
    for (int n : {1, 4, 6, 10, 64})
      for (int k : {1, 3, 4, 17, 128}) {
        // Operands inside wider matrices: row strides k + 3 and an output stride n + 2.
        const MatF a = random_mat(m, k + 3, 1), b = random_mat(n, k + 3, 2);
        MatF c = MatF::Constant(m, n + 2, 7.0f);
        simd::gemm_abt(a.data(), k + 3, b.data(), k + 3, c.data(), n + 2, m, n, k);
        const MatF want = a.leftCols(k) * b.leftCols(k).transpose();
        EXPECT_LT((c.leftCols(n) - want).cwiseAbs().maxCoeff(), 1e-5f) << m << " x " << n << " x " << k;
        EXPECT_TRUE((c.rightCols(2).array() == 7.0f).all()) << "wrote outside its block";
      }
}

TEST(SmallGemm, TransposedTimesRowsEqualsEigen) {
  for (int m : {1, 4, 7, 10, 64})
    for (int n : {1, 3, 4, 8, 19, 128})
      for (int r : {1, 5, 300}) {
        const MatF a = random_mat(r, m + 1, 3), b = random_mat(r, n + 2, 4);
        MatF c = MatF::Constant(m, n + 1, 7.0f);
        simd::gemm_atb(a.data(), m + 1, b.data(), n + 2, c.data(), n + 1, m, n, r, 0.5f);
        const MatF want = 0.5f * (a.leftCols(m).transpose() * b.leftCols(n));
        EXPECT_LT((c.leftCols(n) - want).cwiseAbs().maxCoeff(), 1e-4f) << m << " x " << n << " over " << r;
        EXPECT_TRUE((c.rightCols(1).array() == 7.0f).all()) << "wrote outside its block";
      }
}

}  // namespace
}  // namespace inductive
