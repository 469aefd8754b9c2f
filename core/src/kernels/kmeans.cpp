// k-means with k-means++ seeding (see inductive/kmeans.h).
#include "inductive/kmeans.h"

#include <cmath>
#include <limits>
#include <random>

#include "inductive/communicator.h"
#include "inductive/error.h"
#include "inductive/random.h"

namespace inductive {

namespace {

// Squared distances (Euclidean) or 1 - cosine (spherical) from every row to every centre: m x k.
MatF distances(const Eigen::Ref<const MatF>& x, const MatF& c, bool spherical, const Eigen::Ref<const VecF>& x_sq) {
  MatF dots;
  dots.noalias() = x * c.transpose();
  if (spherical) return (1.0f - dots.array()).max(0.0f).matrix();
  const VecF c_sq = c.rowwise().squaredNorm();
  MatF d = (-2.0f * dots).rowwise() + c_sq.transpose();
  d.colwise() += x_sq;
  return d.array().max(0.0f).matrix();
}

void normalise_rows(MatF& c) {
  for (Eigen::Index r = 0; r < c.rows(); ++r) {
    const float nrm = c.row(r).norm();
    if (nrm > 0) c.row(r) /= nrm;
  }
}

}  // namespace

KMeansResult kmeans(const Eigen::Ref<const MatF>& x, const KMeansOptions& o) {
  const Eigen::Index m = x.rows(), d = x.cols();
  INDUCTIVE_CHECK(m >= 1 && d >= 1, ErrorCode::kInvalidArgument, "kmeans: empty data: got ", m, " x ", d);
  INDUCTIVE_CHECK(o.k >= 1, ErrorCode::kInvalidArgument, "kmeans: k must be >= 1: got ", o.k);
  INDUCTIVE_CHECK(o.max_iter >= 1, ErrorCode::kInvalidArgument, "kmeans: max_iter must be >= 1: got ", o.max_iter);
  INDUCTIVE_CHECK(x.allFinite(), ErrorCode::kInvalidArgument, "kmeans: data contain NaN or Inf");
  std::mt19937_64 rng(o.seed);
  const VecF x_sq = x.rowwise().squaredNorm();

  // k-means++: each new centre drawn with probability proportional to its distance to the nearest centre.
  KMeansResult res;
  res.centers.resize(o.k, d);
  const auto first = [&] { return static_cast<Eigen::Index>(uniform_below(rng, static_cast<uint64_t>(m))); };
  res.centers.row(0) = x.row(first());
  Eigen::VectorXd nearest(m);
  {
    const MatF d0 = distances(x, res.centers.topRows(1), o.spherical, x_sq);
    for (Eigen::Index i = 0; i < m; ++i) nearest[i] = d0(i, 0);
  }
  for (int c = 1; c < o.k; ++c) {
    const double total = nearest.sum();
    Eigen::Index pick = 0;
    if (total > 0) {
      double target = total * uniform_unit(rng), acc = 0;
      for (pick = 0; pick < m - 1; ++pick) {
        acc += nearest[pick];
        if (acc >= target) break;
      }
    } else {
      pick = first();  // every point already is a centre
    }
    res.centers.row(c) = x.row(pick);
    const MatF dc = distances(x, res.centers.middleRows(c, 1), o.spherical, x_sq);
    for (Eigen::Index i = 0; i < m; ++i) nearest[i] = std::min<double>(nearest[i], dc(i, 0));
  }
  if (o.spherical) normalise_rows(res.centers);

  res.assignment.assign(m, 0);
  // This rank's rows (all of them in one process).
  const int ranks = o.communicator ? o.communicator->size() : 1;
  const Shard mine = shard_of(m, o.communicator ? o.communicator->rank() : 0, ranks);
  std::vector<double> exchange(ranks > 1 ? 2 * m : 0);
  double previous = std::numeric_limits<double>::infinity();
  for (int it = 0; it < o.max_iter; ++it) {
    const MatF dist = distances(x.middleRows(mine.begin, mine.end - mine.begin), res.centers, o.spherical,
                                x_sq.segment(mine.begin, mine.end - mine.begin));
    std::vector<float> best(m);
    for (Eigen::Index i = mine.begin; i < mine.end; ++i) {
      Eigen::Index j;
      best[i] = dist.row(i - mine.begin).minCoeff(&j);
      res.assignment[i] = static_cast<int32_t>(j);
    }
    if (ranks > 1) {
      // Every rank's rows in every rank's hands (zeros elsewhere, summed); floats and small integers are exact in
      // double, so the sum is the values themselves.
      std::fill(exchange.begin(), exchange.end(), 0.0);
      for (Eigen::Index i = mine.begin; i < mine.end; ++i) exchange[i] = best[i], exchange[m + i] = res.assignment[i];
      o.communicator->allreduce_sum(exchange.data(), 2 * m);
      for (Eigen::Index i = 0; i < m; ++i)
        best[i] = static_cast<float>(exchange[i]), res.assignment[i] = static_cast<int32_t>(exchange[m + i]);
    }
    double objective = 0;
    for (Eigen::Index i = 0; i < m; ++i) objective += best[i];
    objective /= m;
    res.objective = objective;
    res.iterations = it + 1;
    if (o.progress) o.progress(o.stage, static_cast<double>(it + 1) / o.max_iter);
    // Update; an empty cluster takes the point farthest from its centre.
    MatF sums = MatF::Zero(o.k, d);
    std::vector<int64_t> count(o.k, 0);
    for (Eigen::Index i = 0; i < m; ++i) {
      sums.row(res.assignment[i]) += x.row(i);
      ++count[res.assignment[i]];
    }
    for (int c = 0; c < o.k; ++c) {
      if (count[c] > 0) {
        res.centers.row(c) = sums.row(c) / static_cast<float>(count[c]);
      } else {
        Eigen::Index far = 0;
        for (Eigen::Index i = 1; i < m; ++i)
          if (best[i] > best[far]) far = i;
        res.centers.row(c) = x.row(far);
        best[far] = 0;
      }
    }
    if (o.spherical) normalise_rows(res.centers);
    if (std::fabs(previous - objective) <= o.tol * std::max(std::fabs(objective), 1e-12)) break;
    previous = objective;
  }
  return res;
}

}  // namespace inductive
