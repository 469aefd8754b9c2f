// The free-support Wasserstein barycenter: equal to a brute-force barycenter on problems small enough to enumerate,
// decreasing its objective, and refusing bad input.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

#include <gtest/gtest.h>

#include "inductive/barycenter.h"
#include "../test_util.h"

namespace inductive {
namespace {

// `sets` sets of m * p points in 2-D: point i of a set is near centre (i mod p), shuffled within the set.
SetBatch clustered_sets(int sets, int p, int m, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> noise(0.0f, 0.15f);
  std::vector<std::vector<float>> out;
  for (int b = 0; b < sets; ++b) {
    std::vector<int> order(m * p);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    std::vector<float> x;
    for (int i : order) {
      const int c = i % p;
      x.push_back(2.0f * std::cos(2.0f * c) + noise(rng));
      x.push_back(2.0f * std::sin(2.0f * c) + noise(rng));
    }
    out.push_back(x);
  }
  return make_set_batch(out, 2);
}

// The exact (unregularised) barycenter with p supports of sets of n = m p points: the optimal plans between uniform
// measures of n and p points are then assignments of m points to each support, and for fixed assignments the best
// supports are the means of what they receive. Enumerating every assignment of every set (as permutations of the
// set's points, point t of the permutation going to support t / m) finds the global minimum.
MatF brute_force_barycenter(const SetBatch& sets, int p) {
  const int n = sets.n[0], m = n / p, k = sets.dim;
  std::vector<std::vector<int>> perms;
  std::vector<int> perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  do perms.push_back(perm);
  while (std::next_permutation(perm.begin(), perm.end()));
  double best = std::numeric_limits<double>::infinity();
  MatF best_z;
  std::vector<size_t> choice(sets.batch, 0);
  while (true) {
    Eigen::MatrixXd z = Eigen::MatrixXd::Zero(p, k);
    for (int b = 0; b < sets.batch; ++b)
      for (int t = 0; t < n; ++t)
        for (int c = 0; c < k; ++c) z(t / m, c) += sets.row(b, perms[choice[b]][t])[c];
    z /= static_cast<double>(sets.batch * m);
    double cost = 0;
    for (int b = 0; b < sets.batch; ++b)
      for (int t = 0; t < n; ++t)
        for (int c = 0; c < k; ++c) cost += std::pow(sets.row(b, perms[choice[b]][t])[c] - z(t / m, c), 2) / n;
    if (cost < best) best = cost, best_z = z.cast<float>();
    int b = 0;
    while (b < sets.batch && ++choice[b] == perms.size()) choice[b++] = 0;
    if (b == sets.batch) break;
  }
  return best_z;
}

// Largest distance from a support of `a` to its nearest support of `b` (supports are unordered).
double support_distance(const MatF& a, const MatF& b) {
  double worst = 0;
  for (Eigen::Index i = 0; i < a.rows(); ++i) {
    double nearest = std::numeric_limits<double>::infinity();
    for (Eigen::Index j = 0; j < b.rows(); ++j) nearest = std::min<double>(nearest, (a.row(i) - b.row(j)).norm());
    worst = std::max(worst, nearest);
  }
  return worst;
}

TEST(WassersteinBarycenter, EqualsTheBruteForceBarycenterOnSmallProblems) {
  struct Case {
    int sets, p, m;
  };
  for (const Case& cs : {Case{3, 3, 1}, Case{3, 2, 2}, Case{2, 3, 2}}) {
    SCOPED_TRACE(::testing::Message() << cs.sets << " sets, p " << cs.p << ", m " << cs.m);
    const SetBatch sets = clustered_sets(cs.sets, cs.p, cs.m, 7 + cs.p);
    const MatF exact = brute_force_barycenter(sets, cs.p);
    BarycenterOptions o;
    o.iters = 30;
    o.eps = 0.001;  // relative: about 0.005 in squared distance, far below the clusters' spread
    o.sinkhorn_iters = 20000;
    o.sinkhorn_tol = 1e-7;
    // Start from the first set's first p points, one near each centre or not: the fixed point must get there.
    const MatF start = CMapF(sets.row(0, 0), cs.p, 2);
    const MatF ours = wasserstein_barycenter(sets, {}, start, o);
    EXPECT_LT(support_distance(ours, exact), 2e-3);
    EXPECT_LT(support_distance(exact, ours), 2e-3);
  }
}

TEST(WassersteinBarycenter, NeverIncreasesItsObjectiveAndBeatsItsStart) {
  std::vector<std::vector<float>> raw;
  for (int b = 0; b < 12; ++b)
    raw.push_back(testing::random_vector<float>(static_cast<size_t>(5 + b % 7) * 3, 40 + b, -1, 1));
  const SetBatch sets = make_set_batch(raw, 3);
  BarycenterOptions o;
  o.eps = 0.05;
  o.sinkhorn_iters = 5000;
  o.sinkhorn_tol = 1e-7;
  MatF z = testing::random_mat(4, 3, 9);
  double previous = mean_w2_cost(sets, {}, z, o);
  const double start = previous;
  o.iters = 1;
  for (int it = 0; it < 15; ++it) {
    z = wasserstein_barycenter(sets, {}, z, o);
    const double now = mean_w2_cost(sets, {}, z, o);
    EXPECT_LE(now, previous + 1e-5) << "step " << it;
    previous = now;
  }
  EXPECT_LT(previous, 0.8 * start);
}

TEST(WassersteinBarycenter, UsesOnlyTheChosenSets) {
  const SetBatch sets = clustered_sets(4, 2, 2, 3);
  BarycenterOptions o;
  const MatF start = testing::random_mat(2, 2, 5);
  const MatF some = wasserstein_barycenter(sets, {1, 3}, start, o);
  const SetBatch picked = make_set_batch(
      {std::vector<float>(sets.row(1, 0), sets.row(1, 0) + 8), std::vector<float>(sets.row(3, 0), sets.row(3, 0) + 8)},
      2);
  EXPECT_LT((some - wasserstein_barycenter(picked, {}, start, o)).cwiseAbs().maxCoeff(), 1e-6);
}

TEST(WassersteinBarycenter, RefusesBadInput) {
  const SetBatch sets = clustered_sets(2, 2, 1, 1);
  BarycenterOptions o;
  testing::expect_error([&] { wasserstein_barycenter(sets, {}, testing::random_mat(2, 3, 1), o); },
                        ErrorCode::kShapeMismatch, "expected p x 2");
  testing::expect_error([&] { wasserstein_barycenter(sets, {5}, testing::random_mat(2, 2, 1), o); },
                        ErrorCode::kInvalidArgument, "set 5 is out of range");
  MatF bad = testing::random_mat(2, 2, 1);
  bad(1, 1) = NAN;
  testing::expect_error([&] { wasserstein_barycenter(sets, {}, bad, o); }, ErrorCode::kInvalidArgument, "NaN");
  o.eps = 0;
  testing::expect_error([&] { wasserstein_barycenter(sets, {}, testing::random_mat(2, 2, 1), o); },
                        ErrorCode::kInvalidArgument, "eps must be");
}

}  // namespace
}  // namespace inductive
