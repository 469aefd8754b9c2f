// inductive/kmeans.h - k-means (Euclidean and spherical) with k-means++ seeding, deterministic given a seed.
//
// Used to learn Nystrom anchors (spherical k-means on sampled unit-norm local features, thesis ch. 2) and OTKE
// references (k-means on embedded features). Empty clusters are re-seeded with the point farthest from its centre,
// so exactly k distinct centres come out whenever the data has k distinct points.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "inductive/linalg.h"
#include "inductive/progress.h"

namespace inductive {

class Communicator;

struct KMeansOptions {
  int k = 8;
  int max_iter = 100;
  double tol = 1e-4;       // stop when the relative change of the objective is below tol
  bool spherical = false;  // cosine similarity, unit-norm centres (data rows should be unit norm)
  uint64_t seed = 0;
  ProgressFn progress;            // optional: (stage, iterations done / max_iter) once per iteration
  const char* stage = "k-means";  // the stage name progress reports
  // Data parallelism (inductive/communicator.h; null: one process). Every rank passes the same x; each computes the
  // distances of its share of the rows (the m x k x d product, where the time goes), and the ranks exchange the
  // assignments and distances, so that every rank then updates the centres from all rows in the serial order: the
  // result is the one-process result on every rank (seeding is the serial one, run on every rank).
  Communicator* communicator = nullptr;
};

struct KMeansResult {
  MatF centers;  // k x d
  std::vector<int32_t> assignment;
  double objective = 0;  // mean squared distance (Euclidean) or mean (1 - cosine) (spherical)
  int iterations = 0;
};

// x: m x d with m >= 1. When m < k, the centres repeat points (k-means++ cannot find k distinct ones) - the
// caller decides whether that is acceptable; it is reported through KMeansResult::centers' duplicates.
KMeansResult kmeans(const Eigen::Ref<const MatF>& x, const KMeansOptions& options);

}  // namespace inductive
