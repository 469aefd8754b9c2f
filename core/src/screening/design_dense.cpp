// Dense design matrices (see inductive/screening/design_matrix.h).
#include <algorithm>
#include <cmath>

#include "inductive/error.h"
#include "inductive/screening/design_matrix.h"

namespace inductive {

template <typename Scalar>
DenseDesignT<Scalar>::DenseDesignT(Matrix values) : values_(std::move(values)) {
  INDUCTIVE_CHECK(values_.allFinite(), ErrorCode::kInvalidArgument,
                  "design matrix: values must be finite: got NaN or Inf");
  sq_norms_.resize(static_cast<size_t>(values_.rows()));
  for (Eigen::Index i = 0; i < values_.rows(); ++i)
    sq_norms_[static_cast<size_t>(i)] = values_.row(i).template cast<double>().squaredNorm();
}

// The two kernels of coordinate ascent, written as plain loops: Eigen's row().cast<double>() expressions run about
// 2x slower than these for float storage (measured on digits, p = 64). Eight partial sums let the compiler keep
// them in vector registers (it may not reorder one floating-point sum by itself).
template <typename Scalar>
double DenseDesignT<Scalar>::row_dot(int i, const double* x) const {
  const Scalar* a = values_.data() + static_cast<size_t>(i) * static_cast<size_t>(values_.cols());
  const int p = static_cast<int>(values_.cols());
  double s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int j = 0;
  for (; j + 8 <= p; j += 8)
    for (int k = 0; k < 8; ++k) s[k] += static_cast<double>(a[j + k]) * x[j + k];
  double t = ((s[0] + s[4]) + (s[1] + s[5])) + ((s[2] + s[6]) + (s[3] + s[7]));
  for (; j < p; ++j) t += static_cast<double>(a[j]) * x[j];
  return t;
}

template <typename Scalar>
void DenseDesignT<Scalar>::row_axpy(int i, double alpha, double* x) const {
  const Scalar* a = values_.data() + static_cast<size_t>(i) * static_cast<size_t>(values_.cols());
  const int p = static_cast<int>(values_.cols());
  for (int j = 0; j < p; ++j) x[j] += alpha * static_cast<double>(a[j]);
}

template <typename Scalar>
void DenseDesignT<Scalar>::rows_times(const std::vector<int>& rows, const MatDc& v, MatDc& out) const {
  INDUCTIVE_CHECK(v.rows() == values_.cols(), ErrorCode::kShapeMismatch, "design matrix: rows_times: V has ", v.rows(),
                  " rows, expected ", values_.cols());
  const int m = static_cast<int>(rows.size());
  out.resize(m, v.cols());
  // Gather blocks of rows into a double buffer so the product is one GEMM per block (bounded extra memory).
  constexpr int kBlock = 256;
  Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> block;
  for (int start = 0; start < m; start += kBlock) {
    const int len = std::min(kBlock, m - start);
    block.resize(len, values_.cols());
    for (int k = 0; k < len; ++k) block.row(k) = values_.row(rows[start + k]).template cast<double>();
    out.middleRows(start, len).noalias() = block * v;
  }
}

template <typename Scalar>
std::unique_ptr<DesignMatrix> DenseDesignT<Scalar>::select_rows(const std::vector<int>& rows) const {
  for (int i : rows)
    INDUCTIVE_CHECK(i >= 0 && i < values_.rows(), ErrorCode::kInvalidArgument, "design matrix: select_rows: row ", i,
                    " out of range 0..", values_.rows() - 1);
  const auto p = static_cast<size_t>(values_.cols());
  Matrix sub(static_cast<Eigen::Index>(rows.size()), values_.cols());
  std::vector<double> norms(rows.size());
  for (size_t k = 0; k < rows.size(); ++k) {
    std::copy_n(values_.data() + static_cast<size_t>(rows[k]) * p, p, sub.data() + k * p);
    norms[k] = sq_norms_[static_cast<size_t>(rows[k])];
  }
  return std::unique_ptr<DesignMatrix>(new DenseDesignT<Scalar>(Checked{}, std::move(sub), std::move(norms)));
}

template class DenseDesignT<float>;
template class DenseDesignT<double>;

}  // namespace inductive
