// inductive/barycenter.h - the free-support 2-Wasserstein barycenter of sets (thesis ch. 2: the alternative to
// k-means for learning an OTKE reference without labels).
//
// For sets x^1..x^m (uniform masses 1/n_b) and p supports z (uniform masses 1/p), minimises
//     F(z) = sum_b W2_eps^2(x^b, z),     cost C_ij = ||x^b_i - z_j||^2,
// by the fixed point of Cuturi & Doucet (2014, "Fast computation of Wasserstein barycenters", Alg. 2 with free
// supports): given the plans P^b of the current z, each support moves to the mean of the points sent to it,
//     z_j <- sum_b (P^b^T x^b)_j / sum_b (P^b^T 1)_j,
// which is the exact minimiser of sum_b <P^b, C(z)> for fixed plans (a block-coordinate descent step: F never
// increases for exact plans). Plans come from log-domain Sinkhorn with a small eps so that the result approaches
// the unregularised barycenter; dividing by the plans' true column masses keeps the step exact when Sinkhorn has
// not fully converged. K-means is the special case of one set holding every point (the thesis' remark).
// eps is relative: each plan is computed on its cost divided by the cost's mean. An absolute eps would depend on
// the features' scale, and where it exceeds the spread of the costs the plans are uniform, every support moves to
// the same mean, and the next plans are more uniform still: the reference collapses to one point (seen with
// eps 0.05 on Nystrom features of DNA 10-mers, whose squared distances are ~0.1).
#pragma once

#include <functional>
#include <vector>

#include "inductive/linalg.h"
#include "inductive/progress.h"
#include "inductive/set_batch.h"

namespace inductive {

class Communicator;

struct BarycenterOptions {
  int iters = 10;     // fixed-point steps
  double eps = 0.05;  // Sinkhorn's regularisation, relative to each plan's mean squared distance (above)
  // Each plan's Sinkhorn stops once its L1 marginal error is <= sinkhorn_tol, or after sinkhorn_iters. Small eps
  // needs many iterations (a plan that has not converged sends each point to its nearest support: k-means again).
  int sinkhorn_iters = 2000;
  double sinkhorn_tol = 1e-4;
  // Data parallelism (null: one process): each rank computes the plans of its share of the sets; the supports'
  // sums are all-reduced, so every rank gets the same barycenter.
  Communicator* communicator = nullptr;
  void validate() const;
};

// The barycenter of sets[members] (all sets when `members` is empty), starting from `init` (p x dim).
MatF wasserstein_barycenter(const SetBatch& sets, const std::vector<int>& members, MatF init,
                            const BarycenterOptions& options);

// Sets produced on demand: load(ids) returns the sets `ids` as a batch, in that order. The barycenter asks for a
// few hundred at a time, so the sets never have to be in memory together (OTKE's fit embeds them on the fly).
using SetLoader = std::function<SetBatch(const std::vector<int>& ids)>;
MatF wasserstein_barycenter(const SetLoader& load, const std::vector<int>& members, MatF init,
                            const BarycenterOptions& options);

// F(z) / m: the mean entropic W2^2 cost from the sets to z (what the fixed point decreases), each set's cost in
// units of its own mean squared distance.
double mean_w2_cost(const SetBatch& sets, const std::vector<int>& members, const MatF& z,
                    const BarycenterOptions& options);

}  // namespace inductive
