// Sparse (CSR) design matrices (see inductive/screening/design_matrix.h).
#include <cmath>

#include "inductive/error.h"
#include "inductive/screening/design_matrix.h"

namespace inductive {

CsrDesign::CsrDesign(int rows, int cols, std::vector<int64_t> row_ptr, std::vector<int32_t> col, std::vector<float> val)
    : rows_(rows), cols_(cols), row_ptr_(std::move(row_ptr)), col_(std::move(col)), val_(std::move(val)) {
  INDUCTIVE_CHECK(rows >= 0 && cols >= 0, ErrorCode::kInvalidArgument, "csr matrix: negative shape: got ", rows, " x ",
                  cols);
  INDUCTIVE_CHECK(row_ptr_.size() == static_cast<size_t>(rows) + 1, ErrorCode::kShapeMismatch,
                  "csr matrix: row_ptr has ", row_ptr_.size(), " entries, expected rows + 1 = ", rows + 1);
  INDUCTIVE_CHECK(col_.size() == val_.size(), ErrorCode::kShapeMismatch, "csr matrix: ", col_.size(),
                  " column indices for ", val_.size(), " values");
  INDUCTIVE_CHECK(row_ptr_.front() == 0 && row_ptr_.back() == static_cast<int64_t>(val_.size()),
                  ErrorCode::kInvalidArgument, "csr matrix: row_ptr must run from 0 to nnz = ", val_.size(), ": got ",
                  row_ptr_.front(), " .. ", row_ptr_.back());
  sq_norms_.assign(static_cast<size_t>(rows), 0.0);
  for (int i = 0; i < rows; ++i) {
    INDUCTIVE_CHECK(row_ptr_[i] <= row_ptr_[i + 1], ErrorCode::kInvalidArgument,
                    "csr matrix: row_ptr decreases at row ", i);
    for (int64_t k = row_ptr_[i]; k < row_ptr_[i + 1]; ++k) {
      INDUCTIVE_CHECK(col_[k] >= 0 && col_[k] < cols, ErrorCode::kInvalidArgument, "csr matrix: row ", i, ": column ",
                      col_[k], " out of range 0..", cols - 1);
      INDUCTIVE_CHECK(k == row_ptr_[i] || col_[k - 1] < col_[k], ErrorCode::kInvalidArgument, "csr matrix: row ", i,
                      ": column indices must increase strictly: got ", col_[k - 1], " then ", col_[k]);
      INDUCTIVE_CHECK(std::isfinite(val_[k]), ErrorCode::kInvalidArgument, "csr matrix: row ", i, ", column ", col_[k],
                      ": value must be finite: got ", val_[k]);
      sq_norms_[static_cast<size_t>(i)] += static_cast<double>(val_[k]) * val_[k];  // in the same pass
    }
  }
}

CsrDesign CsrDesign::from_dense(const MatF& dense) {
  std::vector<int64_t> ptr(1, 0);
  std::vector<int32_t> col;
  std::vector<float> val;
  for (Eigen::Index i = 0; i < dense.rows(); ++i) {
    for (Eigen::Index j = 0; j < dense.cols(); ++j)
      if (dense(i, j) != 0.0f) {
        col.push_back(static_cast<int32_t>(j));
        val.push_back(dense(i, j));
      }
    ptr.push_back(static_cast<int64_t>(val.size()));
  }
  return CsrDesign(static_cast<int>(dense.rows()), static_cast<int>(dense.cols()), std::move(ptr), std::move(col),
                   std::move(val));
}

double CsrDesign::row_dot(int i, const double* x) const {
  double s = 0;
  for (int64_t k = row_ptr_[i]; k < row_ptr_[i + 1]; ++k) s += static_cast<double>(val_[k]) * x[col_[k]];
  return s;
}

void CsrDesign::row_axpy(int i, double alpha, double* x) const {
  for (int64_t k = row_ptr_[i]; k < row_ptr_[i + 1]; ++k) x[col_[k]] += alpha * static_cast<double>(val_[k]);
}

void CsrDesign::rows_times(const std::vector<int>& rows, const MatDc& v, MatDc& out) const {
  INDUCTIVE_CHECK(v.rows() == cols_, ErrorCode::kShapeMismatch, "csr matrix: rows_times: V has ", v.rows(),
                  " rows, expected ", cols_);
  const Eigen::Index m = v.cols();
  out.setZero(static_cast<Eigen::Index>(rows.size()), m);
  // V is column-major, so a row of V (one feature across the m vectors) is strided; transpose it once so each
  // non-zero adds one contiguous row.
  const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> vr = v;
  Eigen::Matrix<double, 1, Eigen::Dynamic> acc(m);
  for (size_t r = 0; r < rows.size(); ++r) {
    const int i = rows[r];
    acc.setZero();
    for (int64_t k = row_ptr_[i]; k < row_ptr_[i + 1]; ++k)
      acc.noalias() += static_cast<double>(val_[k]) * vr.row(col_[k]);
    out.row(static_cast<Eigen::Index>(r)) = acc;
  }
}

std::unique_ptr<DesignMatrix> CsrDesign::select_rows(const std::vector<int>& rows) const {
  std::vector<int64_t> ptr(1, 0);
  std::vector<int32_t> col;
  std::vector<float> val;
  for (int i : rows) {
    INDUCTIVE_CHECK(i >= 0 && i < rows_, ErrorCode::kInvalidArgument, "csr matrix: select_rows: row ", i,
                    " out of range 0..", rows_ - 1);
    col.insert(col.end(), col_.begin() + row_ptr_[i], col_.begin() + row_ptr_[i + 1]);
    val.insert(val.end(), val_.begin() + row_ptr_[i], val_.begin() + row_ptr_[i + 1]);
    ptr.push_back(static_cast<int64_t>(val.size()));
  }
  std::vector<double> norms;
  norms.reserve(rows.size());
  for (int i : rows) norms.push_back(sq_norms_[static_cast<size_t>(i)]);
  return std::unique_ptr<DesignMatrix>(new CsrDesign(Checked{}, static_cast<int>(rows.size()), cols_, std::move(ptr),
                                                     std::move(col), std::move(val), std::move(norms)));
}

MatF CsrDesign::to_dense() const {
  MatF d = MatF::Zero(rows_, cols_);
  for (int i = 0; i < rows_; ++i)
    for (int64_t k = row_ptr_[i]; k < row_ptr_[i + 1]; ++k) d(i, col_[k]) = val_[k];
  return d;
}

}  // namespace inductive
