// Dense and CSR design matrices answer every operation alike; malformed CSR input is refused with its location.
#include <gtest/gtest.h>

#include "inductive/screening/design_matrix.h"
#include "../test_util.h"
#include "screening_test_util.h"

namespace inductive {
namespace {

using testing::expect_error;

MatF sparse_matrix() {
  MatF m = MatF::Zero(4, 5);
  m(0, 1) = 2.0f;
  m(0, 4) = -1.0f;
  m(2, 0) = 0.5f;
  m(2, 2) = 3.0f;
  m(2, 3) = -2.0f;
  m(3, 4) = 1.5f;  // row 1 stays empty
  return m;
}

TEST(DesignMatrix, DenseSparseAndDoubleAgreeOnEveryOperation) {
  const MatF m = sparse_matrix();
  const DenseDesign dense(m);
  const CsrDesign csr = CsrDesign::from_dense(m);
  const DenseDesignD dbl(m.cast<double>());
  EXPECT_EQ(csr.nnz(), 6);
  VecD x(5);
  x << 1.0, -1.0, 0.5, 2.0, 0.25;
  const std::vector<const DesignMatrix*> all = {&dense, &csr, &dbl};
  for (int i = 0; i < 4; ++i) {
    const double want = m.row(i).cast<double>().dot(x);
    for (const DesignMatrix* d : all) {
      EXPECT_DOUBLE_EQ(d->row_dot(i, x.data()), want);
      EXPECT_DOUBLE_EQ(d->row_sq_norm(i), m.row(i).cast<double>().squaredNorm());
      VecD y = x;
      d->row_axpy(i, -0.5, y.data());
      EXPECT_TRUE(y.isApprox(x - 0.5 * m.row(i).cast<double>().transpose()));
    }
  }
  MatDc v = MatDc::Random(5, 3), want, got;
  const std::vector<int> rows = {3, 1, 2, 2};
  dense.rows_times(rows, v, want);
  for (const DesignMatrix* d : all) {
    d->rows_times(rows, v, got);
    EXPECT_TRUE(got.isApprox(want, 1e-12));
  }
  const auto sub = csr.select_rows({2, 0});
  EXPECT_EQ(sub->rows(), 2);
  EXPECT_DOUBLE_EQ(sub->row_dot(0, x.data()), csr.row_dot(2, x.data()));
  EXPECT_TRUE(csr.to_dense() == m);
}

// The squared norms are computed once, when the matrix is built, and a row selection carries them with its rows.
TEST(DesignMatrix, ASelectionHoldsItsRowsAndTheirNormsBitForBit) {
  const MatF m = sparse_matrix();
  const DenseDesign dense(m);
  const CsrDesign csr = CsrDesign::from_dense(m);
  const DenseDesignD dbl(m.cast<double>());
  VecD x(5);
  x << 1.0, -1.0, 0.5, 2.0, 0.25;
  const std::vector<int> rows = {3, 1, 2, 2, 0};
  for (const DesignMatrix* d : std::vector<const DesignMatrix*>{&dense, &csr, &dbl}) {
    const auto sub = d->select_rows(rows);
    ASSERT_EQ(sub->rows(), 5);
    EXPECT_EQ(sub->cols(), 5);
    EXPECT_EQ(sub->is_sparse(), d->is_sparse());
    for (size_t k = 0; k < rows.size(); ++k) {
      const int i = rows[k], r = static_cast<int>(k);
      EXPECT_EQ(sub->row_sq_norm(r), d->row_sq_norm(i));
      EXPECT_EQ(sub->row_dot(r, x.data()), d->row_dot(i, x.data()));
      VecD a = x, b = x;
      sub->row_axpy(r, 0.3, a.data());
      d->row_axpy(i, 0.3, b.data());
      EXPECT_TRUE(a == b);
    }
    expect_error([&] { d->select_rows({0, 4}); }, ErrorCode::kInvalidArgument, "out of range 0..3");
  }
}

TEST(DesignMatrix, ManyRowsTimesCrossesTheGatherBlocks) {
  // More rows than one gather block (256) of the dense implementation.
  auto rp = testing::random_problem(3, 700, 9, Loss::squared_hinge(), Penalty::l2(), 1.0);
  const CsrDesign csr = CsrDesign::from_dense(static_cast<const DenseDesign&>(*rp.x).values());
  std::vector<int> rows(700);
  for (int i = 0; i < 700; ++i) rows[i] = (i * 37) % 700;
  MatDc v = MatDc::Random(9, 4), a, b;
  rp.x->rows_times(rows, v, a);
  csr.rows_times(rows, v, b);
  EXPECT_TRUE(a.isApprox(b, 1e-12));
}

TEST(DesignMatrix, MalformedCsrIsRefusedWithItsLocation) {
  expect_error([] { CsrDesign(2, 3, {0, 1}, {0}, {1.0f}); }, ErrorCode::kShapeMismatch, "expected rows + 1 = 3");
  expect_error(
      [] {
        CsrDesign(1, 3, {0, 2}, {2, 1}, {1.0f, 1.0f});
      },
      ErrorCode::kInvalidArgument, "row 0: column indices must increase strictly: got 2 then 1");
  expect_error([] { CsrDesign(1, 3, {0, 1}, {3}, {1.0f}); }, ErrorCode::kInvalidArgument, "column 3 out of range 0..2");
  expect_error([] { CsrDesign(1, 3, {0, 1}, {0}, {std::nanf("")}); }, ErrorCode::kInvalidArgument, "must be finite");
  MatF bad = MatF::Zero(2, 2);
  bad(1, 1) = std::numeric_limits<float>::infinity();
  expect_error([&] { DenseDesign d(bad); }, ErrorCode::kInvalidArgument, "values must be finite");
}

}  // namespace
}  // namespace inductive
