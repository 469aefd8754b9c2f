// inductive/feature_table.h - tables of real features with a label per row, as dataset files hold them: LIBSVM /
// svmlight, CSV and MNIST idx readers (method-neutral: screening builds its design matrices from these tables by
// moving their storage, and any other method may read them too).
//
// Readers parse bytes (so the browser build can hand over a fetched buffer) and have path conveniences; gzip
// input is recognised by its magic bytes and inflated by the library's own inflater (inductive/gzip.h), the same
// code natively and in WebAssembly.
//
// Errors: malformed text throws Error{kInvalidArgument} "<what>: line L[, column C]: <problem>: got X, expected Y";
// corrupt binary (idx, gzip) throws Error{kBadModelFile}; unreadable files throw Error{kIo}.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "inductive/linalg.h"

namespace inductive {

// Compressed sparse rows: row i holds col[row_ptr[i] .. row_ptr[i+1]) with values val[...], column indices strictly
// increasing within a row; row offsets are int64 (nnz may exceed 2^31).
struct SparseRows {
  int rows = 0, cols = 0;
  std::vector<int64_t> row_ptr{0};
  std::vector<int32_t> col;
  std::vector<float> val;
  MatF to_dense() const;
};

// n rows x p features, dense (row-major float) or sparse, and the raw labels / targets as read (one per row; empty
// when the file has none).
struct FeatureTable {
  bool sparse = false;
  MatF dense;      // when !sparse
  SparseRows csr;  // when sparse
  std::vector<double> y;
  int rows() const { return sparse ? csr.rows : static_cast<int>(dense.rows()); }
  int cols() const { return sparse ? csr.cols : static_cast<int>(dense.cols()); }
};

// ---- LIBSVM / svmlight -----------------------------------------------------------------------------------------
// "label idx:val idx:val ... [# comment]"; blank lines and comment lines are skipped; "qid:N" is ignored.
enum class IndexBase { kAuto, kZero, kOne };  // kAuto: 0-based iff some index is 0 (scikit-learn's rule)
struct LibsvmOptions {
  IndexBase index_base = IndexBase::kAuto;
  int n_features = 0;  // > 0: declared dimension (e.g. the training set's for a test set); 0: max index seen
  bool dense = false;  // a dense table instead of CSR
};
FeatureTable parse_libsvm(const std::string& text, const LibsvmOptions& options = {},
                          const std::string& what = "libsvm");
FeatureTable read_libsvm(const std::string& path, const LibsvmOptions& options = {});

// ---- CSV -------------------------------------------------------------------------------------------------------
struct CsvOptions {
  char delimiter = ',';
  bool header = false;    // skip the first line
  int label_column = -1;  // column of the label; negative counts from the end (-1 = last)
  bool has_label = true;  // false: every column is a feature, y is empty
};
FeatureTable parse_csv(const std::string& text, const CsvOptions& options = {}, const std::string& what = "csv");
FeatureTable read_csv(const std::string& path, const CsvOptions& options = {});

// ---- MNIST idx -------------------------------------------------------------------------------------------------
// images: magic 0x00000803, count, rows, cols (big-endian uint32), uint8 pixels; labels: 0x00000801, count, uint8.
// Features are pixel * scale (the thesis-style pixels / 255 by default), stored dense float.
FeatureTable parse_mnist_idx(const std::vector<uint8_t>& images, const std::vector<uint8_t>& labels,
                             double scale = 1.0 / 255.0, const std::string& what = "mnist");
FeatureTable read_mnist_idx(const std::string& images_path, const std::string& labels_path, double scale = 1.0 / 255.0);

}  // namespace inductive
