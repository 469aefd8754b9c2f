// A batch of two masked Sinkhorn problems in double (the second smaller than the padding), random costs and
// non-uniform marginals: the shared fixture of the gradient specifications.
#pragma once

#include <vector>

#include "inductive/sinkhorn.h"
#include "../test_util.h"

namespace inductive::testing {

struct MaskedBatch {
  int batch = 2, n_max, p_max;
  std::vector<int32_t> n, p;
  std::vector<double> cost, a, b;
  // Problem bi draws its cost, a and b from seeds seed + bi, seed + 10 + bi and seed + 20 + bi.
  MaskedBatch(std::vector<int32_t> rows, std::vector<int32_t> cols, uint32_t seed)
      : n_max(rows[0]), p_max(cols[0]), n(std::move(rows)), p(std::move(cols)) {
    cost.assign(static_cast<size_t>(batch) * n_max * p_max, 0.0);
    a.assign(static_cast<size_t>(batch) * n_max, 0.0);
    b.assign(static_cast<size_t>(batch) * p_max, 0.0);
    for (int bi = 0; bi < batch; ++bi) {
      const auto c = random_cost<double>(n[bi], p[bi], seed + bi);
      const auto aa = random_marginal<double>(n[bi], seed + 10 + bi);
      const auto bb = random_marginal<double>(p[bi], seed + 20 + bi);
      for (int i = 0; i < n[bi]; ++i) {
        a[bi * n_max + i] = aa[i];
        for (int j = 0; j < p[bi]; ++j) cost[(bi * n_max + i) * p_max + j] = c[i * p[bi] + j];
      }
      for (int j = 0; j < p[bi]; ++j) b[bi * p_max + j] = bb[j];
    }
  }
  // Moves the mass of row i of problem bi to row `to`: a zero-mass point, same total.
  void zero_row_mass(int bi, int i, int to) {
    a[bi * n_max + to] += a[bi * n_max + i];
    a[bi * n_max + i] = 0;
  }
  SinkhornProblem<double> problem(const std::vector<double>& c) const {
    return {c.data(), batch, n_max, p_max, n.data(), p.data(), a.data(), b.data()};
  }
  bool valid(int k) const {
    const int bi = k / (n_max * p_max), i = (k / p_max) % n_max, j = k % p_max;
    return i < n[bi] && j < p[bi];
  }
};

}  // namespace inductive::testing
