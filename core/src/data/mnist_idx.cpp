// MNIST idx reader (see inductive/feature_table.h).
#include <cmath>

#include "inductive/error.h"
#include "inductive/feature_table.h"
#include "inductive/gzip.h"

namespace inductive {
namespace {

uint32_t be32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) << 24 | static_cast<uint32_t>(p[1]) << 16 | static_cast<uint32_t>(p[2]) << 8 |
         static_cast<uint32_t>(p[3]);
}

}  // namespace

FeatureTable parse_mnist_idx(const std::vector<uint8_t>& images, const std::vector<uint8_t>& labels, double scale,
                             const std::string& what) {
  INDUCTIVE_CHECK(std::isfinite(scale), ErrorCode::kInvalidArgument, what, ": scale must be finite: got ", scale);
  INDUCTIVE_CHECK(images.size() >= 16, ErrorCode::kBadModelFile, what, ": images: truncated idx header: got ",
                  images.size(), " bytes, expected at least 16");
  INDUCTIVE_CHECK(be32(images.data()) == 0x803, ErrorCode::kBadModelFile, what, ": images: idx magic ",
                  be32(images.data()), ", expected 2051 (0x00000803, uint8 3-d)");
  INDUCTIVE_CHECK(labels.size() >= 8, ErrorCode::kBadModelFile, what, ": labels: truncated idx header: got ",
                  labels.size(), " bytes, expected at least 8");
  INDUCTIVE_CHECK(be32(labels.data()) == 0x801, ErrorCode::kBadModelFile, what, ": labels: idx magic ",
                  be32(labels.data()), ", expected 2049 (0x00000801, uint8 1-d)");
  const uint64_t n = be32(images.data() + 4), rows = be32(images.data() + 8), cols = be32(images.data() + 12);
  const uint64_t n_labels = be32(labels.data() + 4);
  INDUCTIVE_CHECK(n == n_labels, ErrorCode::kShapeMismatch, what, ": ", n, " images for ", n_labels, " labels");
  INDUCTIVE_CHECK(n > 0 && rows > 0 && cols > 0 && rows * cols <= (1u << 24) && n <= (1u << 30),
                  ErrorCode::kBadModelFile, what, ": implausible idx shape ", n, " x ", rows, " x ", cols);
  INDUCTIVE_CHECK(images.size() - 16 == n * rows * cols, ErrorCode::kBadModelFile, what, ": images: got ",
                  images.size() - 16, " pixel bytes, expected ", n * rows * cols);
  INDUCTIVE_CHECK(labels.size() - 8 == n, ErrorCode::kBadModelFile, what, ": labels: got ", labels.size() - 8,
                  " label bytes, expected ", n);
  const auto p = static_cast<Eigen::Index>(rows * cols);
  FeatureTable t;
  MatF& m = t.dense;
  m.resize(static_cast<Eigen::Index>(n), p);
  const uint8_t* px = images.data() + 16;
  for (Eigen::Index i = 0; i < m.rows(); ++i)
    for (Eigen::Index j = 0; j < p; ++j) m(i, j) = static_cast<float>(px[i * p + j] * scale);
  t.y.assign(labels.begin() + 8, labels.end());
  return t;
}

FeatureTable read_mnist_idx(const std::string& images_path, const std::string& labels_path, double scale) {
  return parse_mnist_idx(read_dataset_bytes(images_path), read_dataset_bytes(labels_path), scale, images_path);
}

}  // namespace inductive
