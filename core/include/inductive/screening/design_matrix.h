// inductive/screening/design_matrix.h - the n x p design matrix A of an ERM problem, dense or sparse (CSR).
//
// Solvers and screening tests touch A only through the few operations below, all row-wise (samples are the unit
// of screening: a removed sample is a removed row). The model vector x is double (duality gaps are certified in
// double); the stored values are float by default (the project's array type, and half the memory in a browser),
// with a double dense variant for callers that hold doubles.
//
// Indices are `int` rows (n < 2^31) and `int` columns; CSR row offsets are int64 (nnz may exceed 2^31).
// Thread safety: const methods are re-entrant.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <Eigen/Core>

#include "inductive/linalg.h"

namespace inductive {

using VecD = Eigen::VectorXd;
// Column-major double matrix: the "V" of A V products (p x m) and their results (rows x m).
using MatDc = Eigen::MatrixXd;

class DesignMatrix {
 public:
  virtual ~DesignMatrix() = default;

  virtual int rows() const = 0;
  virtual int cols() const = 0;
  virtual int64_t nnz() const = 0;  // stored entries (rows * cols when dense)
  virtual bool is_sparse() const = 0;

  // a_i^T x, x of length cols().
  virtual double row_dot(int i, const double* x) const = 0;
  // x += alpha * a_i.
  virtual void row_axpy(int i, double alpha, double* x) const = 0;
  // ||a_i||^2, computed once when the matrix is built: a path's every solve and screening test asks for all n,
  // and recomputing them was a sixth of a short solve's time (MNIST 10k, 5 epochs).
  virtual double row_sq_norm(int i) const = 0;
  // out(k, :) = a_{rows[k]}^T V for V: cols() x m; out is resized to rows.size() x m. This is the vectorised
  // kernel of the screening tests (one GEMM instead of n * m dot products).
  virtual void rows_times(const std::vector<int>& rows, const MatDc& v, MatDc& out) const = 0;

  // A copy holding only `rows`, in that order (for refits, compression experiments and a solver's working set). It
  // copies the rows and their norms without checking the values again: they were checked when this was built.
  virtual std::unique_ptr<DesignMatrix> select_rows(const std::vector<int>& rows) const = 0;
};

// Dense row-major storage; Scalar is float (default) or double.
template <typename Scalar>
class DenseDesignT final : public DesignMatrix {
 public:
  using Matrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

  explicit DenseDesignT(Matrix values);  // throws kInvalidArgument on NaN/Inf
  int rows() const override { return static_cast<int>(values_.rows()); }
  int cols() const override { return static_cast<int>(values_.cols()); }
  int64_t nnz() const override { return static_cast<int64_t>(values_.size()); }
  bool is_sparse() const override { return false; }
  double row_dot(int i, const double* x) const override;
  void row_axpy(int i, double alpha, double* x) const override;
  double row_sq_norm(int i) const override { return sq_norms_[static_cast<size_t>(i)]; }
  void rows_times(const std::vector<int>& rows, const MatDc& v, MatDc& out) const override;
  std::unique_ptr<DesignMatrix> select_rows(const std::vector<int>& rows) const override;

  const Matrix& values() const { return values_; }

 private:
  struct Checked {};  // values already checked (finite), norms already computed: select_rows
  DenseDesignT(Checked, Matrix values, std::vector<double> sq_norms)
      : values_(std::move(values)), sq_norms_(std::move(sq_norms)) {}

  Matrix values_;
  std::vector<double> sq_norms_;
};

using DenseDesign = DenseDesignT<float>;
using DenseDesignD = DenseDesignT<double>;

// Compressed sparse rows: row i holds col[row_ptr[i] .. row_ptr[i+1]) with values val[...], column indices
// strictly increasing within a row (the readers produce that; the constructor checks it).
class CsrDesign final : public DesignMatrix {
 public:
  CsrDesign(int rows, int cols, std::vector<int64_t> row_ptr, std::vector<int32_t> col, std::vector<float> val);
  static CsrDesign from_dense(const MatF& dense);  // drops exact zeros

  int rows() const override { return rows_; }
  int cols() const override { return cols_; }
  int64_t nnz() const override { return static_cast<int64_t>(val_.size()); }
  bool is_sparse() const override { return true; }
  double row_dot(int i, const double* x) const override;
  void row_axpy(int i, double alpha, double* x) const override;
  double row_sq_norm(int i) const override { return sq_norms_[static_cast<size_t>(i)]; }
  void rows_times(const std::vector<int>& rows, const MatDc& v, MatDc& out) const override;
  std::unique_ptr<DesignMatrix> select_rows(const std::vector<int>& rows) const override;

  const std::vector<int64_t>& row_ptr() const { return row_ptr_; }
  const std::vector<int32_t>& col() const { return col_; }
  const std::vector<float>& val() const { return val_; }
  MatF to_dense() const;

 private:
  struct Checked {};  // see DenseDesignT::Checked
  CsrDesign(Checked, int rows, int cols, std::vector<int64_t> row_ptr, std::vector<int32_t> col, std::vector<float> val,
            std::vector<double> sq_norms)
      : rows_(rows),
        cols_(cols),
        row_ptr_(std::move(row_ptr)),
        col_(std::move(col)),
        val_(std::move(val)),
        sq_norms_(std::move(sq_norms)) {}

  int rows_, cols_;
  std::vector<int64_t> row_ptr_;
  std::vector<int32_t> col_;
  std::vector<float> val_;
  std::vector<double> sq_norms_;
};

}  // namespace inductive
