// Log-domain Sinkhorn, forward pass (see inductive/sinkhorn.h for the contract). Problems whose logits and marginals
// are in a proven range run in the scaling domain instead (sinkhorn_scaling.cpp): the same iterates with a tenth of
// the exps; with a tape (training) only the wide ones, recording the log domain's tape.
//
// Scaled potentials F = f/eps, G = g/eps and logits K = -C/eps. One iteration, POT's sinkhorn_log order:
//   G_j = log b_j - LSE_i(F_i + K_ij)      (columns; two streaming passes over the rows: max, then sum exp)
//   F_i = log a_i - LSE_j(G_j + K_ij)      (rows; contiguous)
// K lives in the plan buffer and is overwritten at the end by the plan rows P_i = a_i softmax_j(G_j + K_ij), which
// equal exp(F_i + G_j + K_ij) but keep exact row sums when eps is tiny; so the solver needs no n x p memory beyond
// its output.
#include <cmath>
#include <limits>
#include <vector>

#include "ot/sinkhorn_detail.h"
#include "simd/lse_kernels.h"

namespace inductive {

using detail::ProblemSlice;

namespace {

using detail::OneResult;

// Wide problems (p not small next to the SIMD width): rows of K are contiguous and each update streams over them.
template <typename T>
OneResult solve_rows(const ProblemSlice<T>& s, const SinkhornOptions& o, T* plan, T* f_out, T* g_out,
                     std::vector<T>* tape) {
  const auto& kern = simd::best_kernels<T>();
  const int n = s.n, p = s.p, ld = s.ld;
  constexpr T kNegInf = -std::numeric_limits<T>::infinity();
  detail::fill_logits(s, o, plan);
  std::vector<T> la, lb;
  detail::log_marginal(s.a, n, la);
  detail::log_marginal(s.b, p, lb);
  std::vector<T> F(n, T(0)), G(p, T(0)), m(p), acc(p), cl(p), rl(n);

  OneResult r;
  for (int t = 0; t < o.max_iter; ++t) {
    std::fill(m.begin(), m.end(), kNegInf);
    std::fill(acc.begin(), acc.end(), T(0));
    for (int i = 0; i < n; ++i) kern.col_max(plan + static_cast<int64_t>(i) * ld, F[i], m.data(), p);
    for (int i = 0; i < n; ++i) kern.col_sumexp(plan + static_cast<int64_t>(i) * ld, F[i], m.data(), acc.data(), p);
    kern.log_plus(acc.data(), m.data(), T(0), cl.data(), p);
    if (o.tol > 0 && t > 0) {
      // Column sums of the current plan are exp(G_j + cl_j): the stopping test costs nothing extra.
      double err = 0;
      for (int j = 0; j < p; ++j)
        err += std::fabs(std::exp(static_cast<double>(G[j]) + cl[j]) - detail::marginal_at(s.b, p, j));
      if (err <= o.tol) {
        r.met_tol = true;
        break;
      }
    }
    for (int j = 0; j < p; ++j) G[j] = lb[j] - cl[j];
    for (int i = 0; i < n; ++i) {
      rl[i] = kern.row_lse(plan + static_cast<int64_t>(i) * ld, G.data(), p);
      F[i] = la[i] - rl[i];
    }
    if (tape) {
      tape->insert(tape->end(), cl.begin(), cl.end());
      tape->insert(tape->end(), rl.begin(), rl.end());
    }
    r.n_iter = t + 1;
  }

  for (int i = 0; i < n; ++i) {
    T* row = plan + static_cast<int64_t>(i) * ld;
    const T w = detail::marginal_at(s.a, n, i);
    if (w > 0)
      F[i] = la[i] - kern.plan_row(row, G.data(), w, row, p);  // same F as the last update, recomputed
    else
      std::fill(row, row + p, T(0));
  }
  detail::summarise_plan(s, o, plan, F.data(), G.data(), f_out, g_out, r);
  return r;
}

}  // namespace

template <typename T>
void sinkhorn_log(const SinkhornProblem<T>& pr, const SinkhornOptions& o, const SinkhornOutput<T>& out,
                  SinkhornTape<T>* tape) {
  o.validate();
  pr.validate("sinkhorn");
  INDUCTIVE_CHECK(out.plan != nullptr, ErrorCode::kInvalidArgument, "sinkhorn: no plan buffer given");
  std::vector<std::vector<T>> tapes(tape ? pr.batch : 0);
  detail::for_each_problem(pr.batch, [&](int bi) {
    const auto s = detail::slice(pr, bi);
    const int64_t off = static_cast<int64_t>(bi) * pr.n_max * pr.p_max;
    T* f = out.f ? out.f + static_cast<int64_t>(bi) * pr.n_max : nullptr;
    T* g = out.g ? out.g + static_cast<int64_t>(bi) * pr.p_max : nullptr;
    OneResult r;
    const bool scaled = o.domain == SinkhornOptions::Domain::kAuto &&
                        detail::solve_scaling(s, o, out.plan + off, f, g, r, tape ? &tapes[bi] : nullptr);
    if (!scaled) {
      if (tape) tapes[bi].clear();  // a scaling-domain attempt may have begun it
      r = detail::solve_narrow(s, o) ? detail::solve_columns(s, o, out.plan + off, f, g, tape ? &tapes[bi] : nullptr)
                                     : solve_rows(s, o, out.plan + off, f, g, tape ? &tapes[bi] : nullptr);
    }
    detail::zero_padding(out.plan + off, pr.n_max, pr.p_max, s.n, s.p);
    if (f) std::fill(f + s.n, f + pr.n_max, T(0));
    if (g) std::fill(g + s.p, g + pr.p_max, T(0));
    const double mass = s.a ? [&] { double m = 0; for (int i = 0; i < s.n; ++i) m += s.a[i]; return m; }() : 1.0;
    if (out.n_iter) out.n_iter[bi] = r.n_iter;
    if (out.marginal_err) out.marginal_err[bi] = static_cast<T>(r.marginal_err);
    if (out.cost_value) out.cost_value[bi] = static_cast<T>(r.cost_value);
    // With a tolerance, converged means the stopping test was met (evaluated in the log domain, more precise than
    // the float plan's marginal error, which may exceed tol by float rounding when tol is near float precision).
    if (out.converged) out.converged[bi] = r.met_tol || r.marginal_err <= (o.tol > 0 ? o.tol : 1e-4 * mass);
  });
  if (tape) {
    tape->lse.clear();
    tape->offset.assign(pr.batch, 0);
    tape->n_iter.assign(pr.batch, 0);
    for (int bi = 0; bi < pr.batch; ++bi) {
      const auto s = detail::slice(pr, bi);
      tape->offset[bi] = static_cast<int64_t>(tape->lse.size());
      tape->n_iter[bi] = static_cast<int32_t>(tapes[bi].size() / (s.n + s.p));
      tape->lse.insert(tape->lse.end(), tapes[bi].begin(), tapes[bi].end());
    }
  }
}

template <typename T>
SinkhornResult<T> sinkhorn_log(const T* cost, int n, int p, const T* a, const T* b, const SinkhornOptions& o) {
  SinkhornProblem<T> pr;
  pr.cost = cost;
  pr.n_max = n;
  pr.p_max = p;
  pr.a = a;
  pr.b = b;
  SinkhornResult<T> r;
  o.validate();
  pr.validate("sinkhorn");
  r.n = n;
  r.p = p;
  r.plan.resize(static_cast<size_t>(n) * p);
  r.f.resize(n);
  r.g.resize(p);
  int32_t iters = 0;
  T err = 0, value = 0;
  uint8_t conv = 0;
  SinkhornOutput<T> out{r.plan.data(), r.f.data(), r.g.data(), &iters, &err, &conv, &value};
  sinkhorn_log(pr, o, out);
  r.n_iter = iters;
  r.marginal_err = err;
  r.converged = conv != 0;
  r.cost_value = value;
  return r;
}

const char* sinkhorn_kernel_name() { return simd::best_kernels<float>().name; }

template void sinkhorn_log<float>(const SinkhornProblem<float>&, const SinkhornOptions&, const SinkhornOutput<float>&,
                                  SinkhornTape<float>*);
template void sinkhorn_log<double>(const SinkhornProblem<double>&, const SinkhornOptions&,
                                   const SinkhornOutput<double>&, SinkhornTape<double>*);
template SinkhornResult<float> sinkhorn_log<float>(const float*, int, int, const float*, const float*,
                                                   const SinkhornOptions&);
template SinkhornResult<double> sinkhorn_log<double>(const double*, int, int, const double*, const double*,
                                                     const SinkhornOptions&);

}  // namespace inductive
