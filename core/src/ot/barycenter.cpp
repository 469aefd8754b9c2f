// The free-support Wasserstein barycenter (see inductive/barycenter.h).
#include "inductive/barycenter.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "inductive/communicator.h"
#include "inductive/error.h"
#include "inductive/sinkhorn.h"

namespace inductive {

namespace {

// Sets are solved in chunks, so the cost and plan buffers stay O(chunk n_max p) whatever the number of sets.
constexpr int kChunk = 256;

std::vector<int> all_if_empty(const SetBatch& sets, const std::vector<int>& members) {
  if (!members.empty()) return members;
  std::vector<int> all(sets.batch);
  std::iota(all.begin(), all.end(), 0);
  return all;
}

// Runs `visit(set, plan n x p, cost value)` for each set of `chosen` (`set`: its n x dim elements), chunk by chunk.
template <typename Visit>
void for_each_plan(const SetLoader& load, const std::vector<int>& chosen, const MatF& z, const BarycenterOptions& bo,
                   Visit visit) {
  const int p = static_cast<int>(z.rows()), k = static_cast<int>(z.cols());
  // Every sum below runs in a fixed order with plain loops: Eigen's reductions peel to the data's alignment, so
  // their rounding would depend on where the allocator put a chunk, and sharp plans amplify a last-bit difference
  // over the fixed-point steps into a different barycenter from run to run.
  MatF zt = z.transpose();  // k x p: the inner loops run over supports, contiguous
  std::vector<float> z_norms(p, 0.0f);
  for (int j = 0; j < p; ++j)
    for (int d = 0; d < k; ++d) z_norms[j] += z(j, d) * z(j, d);
  SinkhornOptions o;
  o.eps = bo.eps;
  o.max_iter = bo.sinkhorn_iters;
  o.tol = bo.sinkhorn_tol;
  for (size_t start = 0; start < chosen.size(); start += kChunk) {
    const size_t count = std::min<size_t>(kChunk, chosen.size() - start);
    const SetBatch sets = load(std::vector<int>(chosen.begin() + static_cast<std::ptrdiff_t>(start),
                                                chosen.begin() + static_cast<std::ptrdiff_t>(start + count)));
    INDUCTIVE_CHECK(sets.batch == static_cast<int>(count) && sets.dim == k, ErrorCode::kShapeMismatch,
                    "barycenter: the loader gave ", sets.batch, " sets of dimension ", sets.dim, ", expected ", count,
                    " of dimension ", k);
    const int n_max = std::max(sets.n_max, 1);
    std::vector<float> cost(count * n_max * p, 0.0f), plan(cost.size()), value(count);
    for (int t = 0; t < sets.batch; ++t) {
      float* c = cost.data() + static_cast<int64_t>(t) * n_max * p;
      double total = 0.0;
      for (int i = 0; i < sets.n[t]; ++i) {
        const float* x = sets.row(t, i);
        float* ci = c + static_cast<int64_t>(i) * p;
        float x_norm = 0.0f;
        for (int d = 0; d < k; ++d) {
          x_norm += x[d] * x[d];
          const float* zd = zt.data() + static_cast<int64_t>(d) * p;
          for (int j = 0; j < p; ++j) ci[j] += x[d] * zd[j];
        }
        for (int j = 0; j < p; ++j) {
          // ||x||^2 - 2 <x, z> + ||z||^2, floored at 0 (rounding can make it slightly negative)
          ci[j] = std::max(0.0f, x_norm - 2.0f * ci[j] + z_norms[j]);
          total += ci[j];
        }
      }
      // eps is relative to the problem's mean cost: the same blur whatever the features' scale.
      const double mean = total / (static_cast<double>(sets.n[t]) * p);
      if (mean > 0)
        for (int64_t e = 0; e < static_cast<int64_t>(sets.n[t]) * p; ++e) c[e] = static_cast<float>(c[e] / mean);
    }
    SinkhornProblem<float> problem{cost.data(), sets.batch, n_max, p, sets.n.data(), nullptr, nullptr, nullptr};
    SinkhornOutput<float> out;
    out.plan = plan.data();
    out.cost_value = value.data();
    sinkhorn_log(problem, o, out);
    for (int t = 0; t < sets.batch; ++t)
      visit(CMapF(sets.row(t, 0), sets.n[t], k), CMapF(plan.data() + static_cast<int64_t>(t) * n_max * p, sets.n[t], p),
            value[t]);
  }
}

SetLoader loader_of(const SetBatch& sets) {
  return [&sets](const std::vector<int>& ids) { return sets.gather(ids); };
}

}  // namespace

void BarycenterOptions::validate() const {
  INDUCTIVE_CHECK(iters >= 0 && iters <= 10000, ErrorCode::kInvalidArgument,
                  "barycenter: iters must be in 0..10000: got ", iters);
  INDUCTIVE_CHECK(std::isfinite(eps) && eps > 0, ErrorCode::kInvalidArgument,
                  "barycenter: eps must be a finite number > 0: got ", eps);
  INDUCTIVE_CHECK(sinkhorn_iters >= 1 && sinkhorn_iters <= 100000, ErrorCode::kInvalidArgument,
                  "barycenter: sinkhorn_iters must be in 1..100000: got ", sinkhorn_iters);
  INDUCTIVE_CHECK(std::isfinite(sinkhorn_tol) && sinkhorn_tol >= 0, ErrorCode::kInvalidArgument,
                  "barycenter: sinkhorn_tol must be a finite number >= 0 (0: always sinkhorn_iters): got ",
                  sinkhorn_tol);
}

MatF wasserstein_barycenter(const SetBatch& sets, const std::vector<int>& members, MatF init,
                            const BarycenterOptions& options) {
  sets.validate("barycenter");
  const std::vector<int> chosen = all_if_empty(sets, members);
  for (int b : chosen)
    INDUCTIVE_CHECK(b >= 0 && b < sets.batch, ErrorCode::kInvalidArgument, "barycenter: set ", b, " is out of range (",
                    sets.batch, " sets)");
  INDUCTIVE_CHECK(init.cols() == sets.dim, ErrorCode::kShapeMismatch, "barycenter: the start is ", init.rows(), " x ",
                  init.cols(), ", expected p x ", sets.dim);
  return wasserstein_barycenter(loader_of(sets), chosen, std::move(init), options);
}

MatF wasserstein_barycenter(const SetLoader& load, const std::vector<int>& members, MatF z,
                            const BarycenterOptions& options) {
  options.validate();
  INDUCTIVE_CHECK(!members.empty(), ErrorCode::kInvalidArgument, "barycenter: no set given");
  INDUCTIVE_CHECK(z.rows() >= 1 && z.cols() >= 1, ErrorCode::kShapeMismatch, "barycenter: the start is ", z.rows(),
                  " x ", z.cols(), ", expected p x dim with p, dim >= 1");
  INDUCTIVE_CHECK(z.allFinite(), ErrorCode::kInvalidArgument, "barycenter: the start contains NaN or Inf");
  Communicator* comm = options.communicator;
  const int ranks = comm ? comm->size() : 1;
  // Ranks take whole chunks, so every set is solved in the same chunk (same batch layout, same float rounding)
  // whatever the number of ranks: sharp plans amplify a last-bit difference over the fixed-point steps.
  const int64_t chunks = (static_cast<int64_t>(members.size()) + kChunk - 1) / kChunk;
  const Shard mine = shard_of(chunks, comm ? comm->rank() : 0, ranks);
  const auto first = static_cast<std::ptrdiff_t>(std::min<int64_t>(mine.begin * kChunk, members.size()));
  const auto last = static_cast<std::ptrdiff_t>(std::min<int64_t>(mine.end * kChunk, members.size()));
  const std::vector<int> share(members.begin() + first, members.begin() + last);
  const int p = static_cast<int>(z.rows()), k = static_cast<int>(z.cols());
  for (int it = 0; it < options.iters; ++it) {
    // Sums in double, laid out [p x k moved points | p masses] for one all-reduce.
    std::vector<double> sums(static_cast<size_t>(p) * (k + 1), 0.0);
    Eigen::Map<Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> moved(sums.data(), p, k);
    Eigen::Map<Eigen::VectorXd> mass(sums.data() + static_cast<size_t>(p) * k, p);
    for_each_plan(load, share, z, options, [&](const CMapF& x, const CMapF& plan, float) {
      for (Eigen::Index i = 0; i < plan.rows(); ++i)
        for (int j = 0; j < p; ++j) {
          const double w = plan(i, j);
          mass[j] += w;
          for (int d = 0; d < k; ++d) moved(j, d) += w * x(i, d);
        }
    });
    if (ranks > 1) comm->allreduce_sum(sums.data(), static_cast<int64_t>(sums.size()));
    // Entropic plans are positive, so every support receives mass; the guard only keeps a support whose mass
    // underflowed where it was.
    for (int j = 0; j < p; ++j)
      if (mass[j] > 0) z.row(j) = (moved.row(j) / mass[j]).cast<float>();
  }
  return z;
}

double mean_w2_cost(const SetBatch& sets, const std::vector<int>& members, const MatF& z,
                    const BarycenterOptions& options) {
  options.validate();
  const std::vector<int> chosen = all_if_empty(sets, members);
  double total = 0.0;
  for_each_plan(loader_of(sets), chosen, z, options,
                [&](const CMapF&, const CMapF&, float value) { total += static_cast<double>(value); });
  return chosen.empty() ? 0.0 : total / static_cast<double>(chosen.size());
}

}  // namespace inductive
