// inductive/screening/datasets.h - datasets for ERM and screening: LIBSVM/svmlight, CSV, MNIST idx readers and
// label transforms (gzip and file reading are method-neutral: inductive/gzip.h, inductive/files.h).
//
// Readers parse bytes (so the browser build can hand over a fetched buffer) and have path conveniences. gzip input
// is recognised by its magic bytes and inflated by the library's own inflater (RFC 1951/1952, CRC-checked), the
// same code natively and in WebAssembly: Debian's zlib is native-only and Emscripten's zlib port needs a network
// download at build time, so neither would give the wasm build .gz support.
//
// Errors: malformed text throws Error{kInvalidArgument} "<what>: line L[, column C]: <problem>: got X, expected Y";
// corrupt binary (idx, gzip) throws Error{kBadModelFile}; unreadable files throw Error{kIo}.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "inductive/gzip.h"  // gunzip, read_dataset_bytes (general; declared there)
#include "inductive/screening/design_matrix.h"

namespace inductive {

struct Dataset {
  std::shared_ptr<DesignMatrix> x;  // n x p
  std::vector<double> y;            // n raw labels / targets as read
  int n() const { return x ? x->rows() : 0; }
  int p() const { return x ? x->cols() : 0; }
};

// ---- LIBSVM / svmlight -----------------------------------------------------------------------------------------
// "label idx:val idx:val ... [# comment]"; blank lines and comment lines are skipped; "qid:N" is ignored.
enum class IndexBase { kAuto, kZero, kOne };  // kAuto: 0-based iff some index is 0 (scikit-learn's rule)
struct LibsvmOptions {
  IndexBase index_base = IndexBase::kAuto;
  int n_features = 0;  // > 0: declared dimension (e.g. the training set's for a test set); 0: max index seen
  bool dense = false;  // store as a DenseDesign instead of CSR
};
Dataset parse_libsvm(const std::string& text, const LibsvmOptions& options = {}, const std::string& what = "libsvm");
Dataset read_libsvm(const std::string& path, const LibsvmOptions& options = {});

// ---- CSV -------------------------------------------------------------------------------------------------------
struct CsvOptions {
  char delimiter = ',';
  bool header = false;    // skip the first line
  int label_column = -1;  // column of the label; negative counts from the end (-1 = last)
  bool has_label = true;  // false: every column is a feature, y is empty
};
Dataset parse_csv(const std::string& text, const CsvOptions& options = {}, const std::string& what = "csv");
Dataset read_csv(const std::string& path, const CsvOptions& options = {});

// ---- MNIST idx -------------------------------------------------------------------------------------------------
// images: magic 0x00000803, count, rows, cols (big-endian uint32), uint8 pixels; labels: 0x00000801, count, uint8.
// Features are pixel * scale (the thesis-style pixels / 255 by default), stored dense float.
Dataset parse_mnist_idx(const std::vector<uint8_t>& images, const std::vector<uint8_t>& labels,
                        double scale = 1.0 / 255.0, const std::string& what = "mnist");
Dataset read_mnist_idx(const std::string& images_path, const std::string& labels_path, double scale = 1.0 / 255.0);

// ---- labels ----------------------------------------------------------------------------------------------------
// +1 where label == positive, -1 elsewhere (one-vs-rest).
std::vector<double> one_vs_rest(const std::vector<double>& labels, double positive);
// Two-valued labels to -1/+1: the smaller value becomes -1 (so 0/1, -1/+1, 1/2 all map as expected). Throws when
// the labels take one value or more than two.
std::vector<double> to_signed_labels(const std::vector<double>& labels);
// The targets of an ERM problem from raw labels: one_vs_rest(labels, *positive) when `positive` is given, else
// to_signed_labels for classification losses, else the labels themselves (regression).
std::vector<double> erm_targets(const std::vector<double>& labels, bool classification,
                                const double* positive = nullptr);

}  // namespace inductive
