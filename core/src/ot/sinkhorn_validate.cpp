// Input validation for Sinkhorn: every check runs before any output is written, so a bad batch never leaves
// half-filled buffers behind.
#include <cmath>
#include <cstdint>
#include <vector>

#include "common/finite.h"
#include "inductive/parallel.h"
#include "inductive/sinkhorn.h"

namespace inductive {

void SinkhornOptions::validate() const {
  INDUCTIVE_CHECK(std::isfinite(eps) && eps > 0, ErrorCode::kInvalidArgument,
                  "sinkhorn: eps must be a finite number > 0: got ", eps);
  INDUCTIVE_CHECK(max_iter >= 1 && max_iter <= 100000000, ErrorCode::kInvalidArgument,
                  "sinkhorn: max_iter out of range: got ", max_iter, ", expected 1..100000000");
  INDUCTIVE_CHECK(std::isfinite(tol) && tol >= 0, ErrorCode::kInvalidArgument,
                  "sinkhorn: tol must be a finite number >= 0: got ", tol);
}

namespace {

// Checks one marginal vector and returns its mass.
template <typename T>
double check_marginal(const char* where, const char* name, int b, const T* w, int len) {
  double mass = 0;
  for (int i = 0; i < len; ++i) {
    INDUCTIVE_CHECK(std::isfinite(static_cast<double>(w[i])), ErrorCode::kInvalidArgument, where, ": marginal ", name,
                    " of problem ", b, " has a non-finite value at index ", i, ": got ", w[i]);
    INDUCTIVE_CHECK(w[i] >= 0, ErrorCode::kInvalidArgument, where, ": marginal ", name, " of problem ", b,
                    " has a negative weight at index ", i, ": got ", w[i], ", expected >= 0");
    mass += w[i];
  }
  INDUCTIVE_CHECK(mass > 0, ErrorCode::kInvalidArgument, where, ": marginal ", name, " of problem ", b,
                  " has zero total mass; expected > 0");
  return mass;
}

// Whether every entry of an nb x pb block (rows of stride ld) is finite.
template <typename T>
bool block_finite(const T* c, int nb, int pb, int64_t ld) {
  for (int i = 0; i < nb; ++i)
    if (!detail::all_finite(c + i * ld, pb)) return false;
  return true;
}

}  // namespace

template <typename T>
void SinkhornProblem<T>::validate(const char* where) const {
  INDUCTIVE_CHECK(batch >= 1, ErrorCode::kInvalidArgument, where, ": batch size must be >= 1: got ", batch);
  INDUCTIVE_CHECK(n_max >= 1 && p_max >= 1, ErrorCode::kInvalidArgument, where, ": empty point set: got n = ", n_max,
                  ", p = ", p_max, ", expected n >= 1 and p >= 1");
  INDUCTIVE_CHECK(static_cast<int64_t>(batch) * n_max * p_max < (int64_t{1} << 40), ErrorCode::kInvalidArgument, where,
                  ": problem too large: batch x n x p = ", static_cast<int64_t>(batch) * n_max * p_max);
  INDUCTIVE_CHECK(cost != nullptr, ErrorCode::kInvalidArgument, where, ": no cost matrix given");
  // The costs' finiteness first, problem by problem on the threads and in vector loops: as one scalar pass with a
  // check per entry, on one thread before the solve, it was 15 % of a 10-iteration batch. A problem found unclean
  // (or with lengths out of range) is checked entry by entry below, in order, so the error is the plain scan's.
  std::vector<uint8_t> clean(static_cast<size_t>(batch), 0);
  parallel_for(batch, 1, 0, [&](int bi, int) {
    const int nb = n ? n[bi] : n_max;
    const int pb = p ? p[bi] : p_max;
    if (nb >= 1 && nb <= n_max && pb >= 1 && pb <= p_max)
      clean[bi] = block_finite(cost + static_cast<int64_t>(bi) * n_max * p_max, nb, pb, p_max) ? 1 : 0;
  });
  for (int bi = 0; bi < batch; ++bi) {
    const int nb = n ? n[bi] : n_max;
    const int pb = p ? p[bi] : p_max;
    INDUCTIVE_CHECK(nb >= 1 && nb <= n_max, ErrorCode::kShapeMismatch, where, ": length n of problem ", bi,
                    " out of range: got ", nb, ", expected 1..", n_max);
    INDUCTIVE_CHECK(pb >= 1 && pb <= p_max, ErrorCode::kShapeMismatch, where, ": length p of problem ", bi,
                    " out of range: got ", pb, ", expected 1..", p_max);
    const T* c = cost + static_cast<int64_t>(bi) * n_max * p_max;
    for (int i = 0; i < (clean[bi] ? 0 : nb); ++i)
      for (int j = 0; j < pb; ++j) {
        const double v = c[static_cast<int64_t>(i) * p_max + j];
        INDUCTIVE_CHECK(std::isfinite(v), ErrorCode::kInvalidArgument, where, ": cost matrix of problem ", bi,
                        " has a non-finite value at (", i, ", ", j, "): got ", v);
      }
    const double ma = a ? check_marginal(where, "a", bi, a + static_cast<int64_t>(bi) * n_max, nb) : 1.0;
    const double mb = b ? check_marginal(where, "b", bi, b + static_cast<int64_t>(bi) * p_max, pb) : 1.0;
    INDUCTIVE_CHECK(std::fabs(ma - mb) <= 1e-4 * std::max(ma, mb), ErrorCode::kInvalidArgument, where,
                    ": marginals of problem ", bi, " do not have the same mass: got sum(a) = ", ma, ", sum(b) = ", mb,
                    ", expected equal within 1e-4 relative");
  }
}

template struct SinkhornProblem<float>;
template struct SinkhornProblem<double>;

}  // namespace inductive
