// The register-blocked products used by OTK pooling and GraphiT's Linear layers equal Eigen's, for every remainder of
// the 4 x 4 and 6 x 2W blocks and the vector width, with row strides wider than the rows, and for sums longer than
// one chunk of terms; they accumulate when asked; and a row's bits do not depend on the rows computed with it
// (threads split by rows).
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
  for (int m : {1, 4, 6, 7, 10, 11, 64})
    for (int n : {1, 3, 4, 8, 19, 128})
      for (int r : {1, 5, 128, 129, 300}) {
        const MatF a = random_mat(r, m + 1, 3), b = random_mat(r, n + 2, 4);
        MatF c = MatF::Constant(m, n + 1, 7.0f);
        simd::gemm_atb(a.data(), m + 1, b.data(), n + 2, c.data(), n + 1, m, n, r, 0.5f);
        const MatF want = 0.5f * (a.leftCols(m).transpose() * b.leftCols(n));
        EXPECT_LT((c.leftCols(n) - want).cwiseAbs().maxCoeff(), 1e-4f) << m << " x " << n << " over " << r;
        EXPECT_TRUE((c.rightCols(1).array() == 7.0f).all()) << "wrote outside its block";
      }
}

TEST(SmallGemm, TransposedTimesRowsAccumulates) {
  // 40 terms: one chunk; 300: three, whose partial sums wait in C (with alpha 1 the chain starts from C's old value;
  // with another alpha the sum runs in one chunk).
  for (int r : {40, 300})
    for (float alpha : {0.5f, 1.0f}) {
      const MatF a = random_mat(r, 9, 5), b = random_mat(r, 37, 6);
      MatF c = random_mat(9, 37, 7);
      const MatF want = c + alpha * (a.transpose() * b);
      simd::gemm_atb(a.data(), 9, b.data(), 37, c.data(), 37, 9, 37, r, alpha, true);
      EXPECT_LT((c - want).cwiseAbs().maxCoeff(), 1e-4f) << r << " terms, alpha " << alpha;
    }
}

TEST(SmallGemm, RowsTimesMatrixEqualsEigenAndAccumulates) {
  for (int m : {1, 2, 3, 4, 6, 9, 11, 37})
    for (int n : {1, 3, 4, 8, 19, 64, 128})
      for (int k : {1, 5, 64, 128}) {
        const MatF a = random_mat(m, k + 3, 8), b = random_mat(k, n + 2, 9);
        MatF c = MatF::Constant(m, n + 1, 7.0f);
        simd::gemm_ab(a.data(), k + 3, b.data(), n + 2, c.data(), n + 1, m, n, k);
        const MatF want = a.leftCols(k) * b.leftCols(n);
        EXPECT_LT((c.leftCols(n) - want).cwiseAbs().maxCoeff(), 1e-4f) << m << " x " << n << " x " << k;
        EXPECT_TRUE((c.rightCols(1).array() == 7.0f).all()) << "wrote outside its block";
        simd::gemm_ab(a.data(), k + 3, b.data(), n + 2, c.data(), n + 1, m, n, k, true);
        EXPECT_LT((c.leftCols(n) - 2 * want).cwiseAbs().maxCoeff(), 2e-4f) << "accumulate " << m << " x " << n;
      }
}

TEST(SmallGemm, TheEpilogueAddsTheBiasScalesTheRowAddsTheResidualAndRectifiesInThatOrder) {
  // n 19: two vector strips, a single one and scalar columns on AVX2 and in wasm; m 13: two 6-row blocks and one row.
  const int m = 13, n = 19, k = 64;
  const MatF a = random_mat(m, k, 13), b = random_mat(k, n, 14), residual = random_mat(m, n + 3, 15);
  const MatF bias = random_mat(1, n, 16), scale = random_mat(m, 1, 17);
  for (int steps = 0; steps < 16; ++steps) {
    simd::RowEpilogue e;
    MatF want = a * b;
    if (steps & 1) e.bias = bias.data(), want.rowwise() += bias.row(0);
    if (steps & 2) e.row_scale = scale.data(), want.array().colwise() *= scale.col(0).array();
    if (steps & 4) e.residual = residual.data(), e.ld_residual = n + 3, want += residual.leftCols(n);
    if (steps & 8) e.relu = true, want = want.cwiseMax(0.0f);
    MatF c = MatF::Constant(m, n, 7.0f);
    simd::gemm_ab(a.data(), k, b.data(), n, c.data(), n, m, n, k, false, &e);
    EXPECT_LT((c - want).cwiseAbs().maxCoeff(), 1e-4f) << "steps " << steps;
  }
}

TEST(SmallGemm, ARowBlockWalksItsWholeStripsThenTheLastVectorsAndColumnsWithTheEpilogueOnEach) {
  // One call per row block walks its strips of columns (small_gemm.cpp's outer_block): 7 and 11 vectors and 3 more
  // columns leave every remainder after the whole strips (a strip is 2 vectors natively, 4 with relaxed SIMD).
  const int w = simd::vector_floats(), k = 64;
  for (int n : {7 * w + 3, 11 * w + 3})
    for (int m : {1, 7, 13}) {
      const MatF a = random_mat(m, k, 20), b = random_mat(k, n, 21), residual = random_mat(m, n, 22);
      const MatF bias = random_mat(1, n, 23), scale = random_mat(m, 1, 24);
      simd::RowEpilogue e;
      e.bias = bias.data(), e.row_scale = scale.data(), e.residual = residual.data(), e.ld_residual = n;
      e.relu = true;
      MatF want = a * b;
      want.rowwise() += bias.row(0);
      want.array().colwise() *= scale.col(0).array();
      want = (want + residual).cwiseMax(0.0f);
      MatF c = MatF::Constant(m, n, 7.0f);
      simd::gemm_ab(a.data(), k, b.data(), n, c.data(), n, m, n, k, false, &e);
      EXPECT_LT((c - want).cwiseAbs().maxCoeff(), 1e-4f) << m << " x " << n;
      MatF plain = MatF::Constant(m, n, 1.0f);
      simd::gemm_ab(a.data(), k, b.data(), n, plain.data(), n, m, n, k, true);
      EXPECT_LT((plain.array() - (a * b).array() - 1.0f).abs().maxCoeff(), 1e-4f) << "accumulate " << m << " x " << n;
    }
}

TEST(SmallGemm, ARowsBitsDoNotDependOnTheRowsAroundIt) {
  // Threads split a product by rows: rows 5..11 computed alone must equal the same rows of the whole product.
  const MatF a = random_mat(16, 64, 10), w = random_mat(48, 64, 11), b = random_mat(64, 48, 12);
  MatF whole(16, 48), part(7, 48);
  for (int pass = 0; pass < 2; ++pass) {
    if (pass == 0) {
      simd::gemm_abt(a.data(), 64, w.data(), 64, whole.data(), 48, 16, 48, 64);
      simd::gemm_abt(a.row(5).data(), 64, w.data(), 64, part.data(), 48, 7, 48, 64);
    } else {
      simd::gemm_ab(a.data(), 64, b.data(), 48, whole.data(), 48, 16, 48, 64);
      simd::gemm_ab(a.row(5).data(), 64, b.data(), 48, part.data(), 48, 7, 48, 64);
    }
    EXPECT_TRUE((whole.middleRows(5, 7).array() == part.array()).all()) << (pass == 0 ? "gemm_abt" : "gemm_ab");
  }
}

}  // namespace
}  // namespace inductive
