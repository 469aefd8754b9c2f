// OTK pooling forward and backward (see inductive/otk_pooling.h).
#include "inductive/otk_pooling.h"

#include <algorithm>
#include <cmath>

#include "inductive/elementwise.h"
#include "inductive/parallel.h"
#include "ot/sinkhorn_detail.h"
#include "simd/small_gemm.h"

namespace inductive {

void OtkOptions::validate() const {
  INDUCTIVE_CHECK(p >= 1 && p <= 65536, ErrorCode::kInvalidArgument, "otk: p (supports) must be in 1..65536: got ", p);
  INDUCTIVE_CHECK(q >= 1 && q <= 1024, ErrorCode::kInvalidArgument, "otk: q (references) must be in 1..1024: got ", q);
  INDUCTIVE_CHECK(std::isfinite(eps) && eps > 0, ErrorCode::kInvalidArgument,
                  "otk: eps must be a finite number > 0: got ", eps);
  INDUCTIVE_CHECK(iters >= 1 && iters <= 100000, ErrorCode::kInvalidArgument, "otk: iters must be in 1..100000: got ",
                  iters);
  INDUCTIVE_CHECK(std::isfinite(sigma_pos) && sigma_pos >= 0, ErrorCode::kInvalidArgument,
                  "otk: sigma_pos must be a finite number >= 0 (0 = off): got ", sigma_pos);
  INDUCTIVE_CHECK(plan == OtkPlan::kSinkhorn || plan == OtkPlan::kAttention, ErrorCode::kInvalidArgument,
                  "otk: unknown plan ", static_cast<int>(plan));
}

void sinusoidal_encoding(int64_t i, int k, float* out) {
  const double norm = 1.0 / std::sqrt(std::max(k, 2) / 2.0);
  for (int m = 0; 2 * m < k; ++m) {
    const double angle = static_cast<double>(i) / std::pow(10000.0, 2.0 * m / k);
    out[2 * m] = static_cast<float>(norm * std::sin(angle));
    if (2 * m + 1 < k) out[2 * m + 1] = static_cast<float>(norm * std::cos(angle));
  }
}

SetBatch add_sinusoidal_encoding(const SetBatch& psi) {
  SetBatch out = psi;
  const int longest = psi.batch == 0 ? 0 : *std::max_element(psi.n.begin(), psi.n.end());
  MatF table(std::max(longest, 1), psi.dim);  // row i = PE(i), computed once for the batch
  for (int i = 0; i < longest; ++i) sinusoidal_encoding(i, psi.dim, table.row(i).data());
  for (int b = 0; b < psi.batch; ++b) MapF(out.row(b, 0), psi.n[b], psi.dim) += table.topRows(psi.n[b]);
  return out;
}

namespace {

// Rows of x per chunk of the backward's product x [c g; z]^T: 128 KB at k 512, in L2 while both halves read it.
constexpr int kBackwardRows = 64;

// The attention plan (see the header): per set and support j, P_ij = softmax_i(S_ij / eps) / p over the valid rows;
// padding rows 0, as Sinkhorn leaves them.
void attention_plan(const float* sim, int B, int N, int p, const int* n, double eps, float* plan) {
  const float inv_eps = static_cast<float>(1.0 / eps), mass = 1.0f / p;
  detail::for_each_problem(B, [&](int b) {
    const int64_t off = static_cast<int64_t>(b) * N * p;
    CMapF s(sim + off, n[b], p);
    MapF P(plan + off, N, p);
    P.bottomRows(N - n[b]).setZero();
    for (int j = 0; j < p; ++j) {
      const float top = s.col(j).maxCoeff();
      auto col = P.col(j).head(n[b]);
      col = ((s.col(j).array() - top) * inv_eps).exp().matrix();
      col *= mass / col.sum();
    }
  });
}

// Its backward: with a = p P (a column softmax) and gA = gP / p, dS = a o (gA - <a, gA>) / eps, i.e.
// dS_ij = P_ij (gP_ij - p sum_i' P_i'j gP_i'j) / eps.
void attention_plan_backward(const float* plan, const float* grad_plan, int B, int N, int p, const int* n, double eps,
                             float* grad_sim) {
  const float inv_eps = static_cast<float>(1.0 / eps);
  detail::for_each_problem(B, [&](int b) {
    const int64_t off = static_cast<int64_t>(b) * N * p;
    CMapF P(plan + off, n[b], p), gP(grad_plan + off, n[b], p);
    MapF gS(grad_sim + off, n[b], p);
    const Eigen::RowVectorXf dots = (P.array() * gP.array()).colwise().sum() * static_cast<float>(p);
    gS = (P.array() * (gP.rowwise() - dots).array()) * inv_eps;
  });
}

}  // namespace

void positional_weights(int n, int p, float sigma, float* out) {
  const double inv = 1.0 / (static_cast<double>(sigma) * sigma);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < p; ++j) out[static_cast<int64_t>(i) * p + j] = elementwise::positional_weight(i, n, j, p, inv);
}

OtkPooling::OtkPooling(std::vector<MatF> references, OtkOptions options) : options_(options) {
  options_.validate();
  set_references(std::move(references));
}

void OtkPooling::set_references(std::vector<MatF> references) {
  INDUCTIVE_CHECK(static_cast<int>(references.size()) == options_.q, ErrorCode::kShapeMismatch,
                  "otk: expected q = ", options_.q, " references, got ", references.size());
  for (size_t r = 0; r < references.size(); ++r) {
    INDUCTIVE_CHECK(
        references[r].rows() == options_.p && references[r].cols() >= 1 && references[r].cols() == references[0].cols(),
        ErrorCode::kShapeMismatch, "otk: reference ", r, " must be p x k = ", options_.p, " x ", references[0].cols(),
        ": got ", references[r].rows(), " x ", references[r].cols());
    INDUCTIVE_CHECK(references[r].allFinite(), ErrorCode::kInvalidArgument, "otk: reference ", r,
                    " contains NaN or Inf");
  }
  refs_ = std::move(references);
}

float OtkPooling::scale() const {
  return options_.scale == OtkScale::kPaper ? static_cast<float>(std::sqrt(double(options_.p) / options_.q))
                                            : static_cast<float>(options_.p);
}

SinkhornOptions OtkPooling::sinkhorn_options() const {
  SinkhornOptions o;
  o.eps = options_.eps;
  o.max_iter = options_.iters;
  o.similarity = true;
  return o;
}

MatF OtkPooling::forward(const SetBatch& embedded, Cache* cache, std::vector<std::vector<float>>* plans_out) const {
  // Non-finite features surface through the check of the similarities below, which costs n p, not n k.
  embedded.validate_shape("otk");
  INDUCTIVE_CHECK(embedded.dim == dim(), ErrorCode::kShapeMismatch, "otk: embedded features have dimension ",
                  embedded.dim, ", expected ", dim(), " (the references' dimension)");
  SetBatch encoded;
  if (options_.sinusoidal) encoded = add_sinusoidal_encoding(embedded);
  const SetBatch& psi = options_.sinusoidal ? encoded : embedded;
  const int B = psi.batch, N = psi.n_max, p = options_.p, k = psi.dim, q = options_.q;
  const float c = scale();
  MatF out(B, output_dim());
  const size_t set_size = static_cast<size_t>(N) * p, size = static_cast<size_t>(B) * set_size;
  const bool attention = options_.plan == OtkPlan::kAttention;
  const bool tape = cache && cache->gradient == SinkhornGradient::kUnrolled && !attention;
  // What backward needs: the plans (before positional weighting), the tapes and, with one reference, the
  // similarities. Without a cache a set's similarities and plan live in its thread's buffers.
  const bool keep_sim = cache && q == 1;
  if (cache) {
    cache->plans.assign(q, std::vector<float>(size));
    cache->tapes.assign(q, {});
    cache->similarities.assign(keep_sim ? size : 0, 0.0f);
  }
  if (plans_out) plans_out->assign(q, std::vector<float>(size));
  std::vector<std::vector<SinkhornTape<float>>> set_tapes(tape ? q : 0, std::vector<SinkhornTape<float>>(B));
  // With p a multiple of the vector width, x z^T runs faster as broadcasts and FMAs over z^T (gemm_ab) than as dot
  // products, whose horizontal sums cost more than they save (wasm k128 p64: +18 %; native k512 p64: 1.9x). Else
  // gemm_ab would end each row with scalar columns, and the dot products win (wasm k512 p10: -12 % with gemm_ab).
  const bool by_rows = p % simd::vector_floats() == 0;
  std::vector<MatF> zt(q);
  if (by_rows)
    for (int r = 0; r < q; ++r) zt[r] = refs_[r].transpose();
  std::vector<std::vector<float>> buffers(static_cast<size_t>(std::max(1, parallel_threads())));
  // Each set in turn through its similarities, plan and P^T x for every reference, so that P^T x reads the set's
  // features while x z^T has just brought them into cache. Step by step over the batch, each product read every set
  // from memory: at k 512 a set is 1.2 MB and a batch of 64 is 78 MB, past L3. Each set is solved alone by the code
  // that solves a batch's sets, so no bit depends on the batch.
  const std::vector<int> order = largest_first(B, [&](int b) { return psi.n[b]; });
  parallel_for(B, 1, 0, [&](int i, int worker) {
    const int b = order[static_cast<size_t>(i)];
    const int n = psi.n[b];
    const int64_t off = static_cast<int64_t>(b) * N * p;
    std::vector<float>& own = buffers[static_cast<size_t>(worker)];
    if (!keep_sim || !cache) own.resize(2 * set_size);  // a set's similarities and plan live in the cache otherwise
    for (int r = 0; r < q; ++r) {
      float* sim = keep_sim ? cache->similarities.data() + off : own.data();
      float* plan = cache       ? cache->plans[r].data() + off
                    : plans_out ? (*plans_out)[r].data() + off
                                : own.data() + set_size;
      if (by_rows)
        simd::gemm_ab(psi.row(b, 0), k, zt[r].data(), p, sim, p, n, p, k);
      else
        simd::gemm_abt(psi.row(b, 0), k, refs_[r].data(), k, sim, p, n, p, k);
      // Named here by set (a one-set Sinkhorn call would name problem 0); padding rows are never read.
      INDUCTIVE_CHECK(CMapF(sim, n, p).allFinite(), ErrorCode::kInvalidArgument, "otk: set ", b,
                      " has non-finite similarities to the references (NaN or Inf in its features)");
      if (attention) {
        attention_plan(sim, 1, N, p, &psi.n[b], options_.eps, plan);
      } else {
        const SinkhornProblem<float> one{sim, 1, N, p, &psi.n[b], nullptr, nullptr, nullptr};
        sinkhorn_log(one, sinkhorn_options(), SinkhornOutput<float>{plan}, tape ? &set_tapes[r][b] : nullptr);
      }
      float* shown = plans_out ? (*plans_out)[r].data() + off : nullptr;
      if (shown && shown != plan) std::copy(plan, plan + set_size, shown);
      MatF w;
      if (options_.sigma_pos > 0) {
        w.resize(n, p);
        positional_weights(n, p, options_.sigma_pos, w.data());
        w.array() *= CMapF(plan, n, p).array();
        if (shown) MapF(shown, n, p) = w;
      }
      const float* weights = options_.sigma_pos > 0 ? w.data() : plan;
      simd::gemm_atb(weights, p, psi.row(b, 0), k, out.row(b).data() + static_cast<int64_t>(r) * p * k, k, p, k, n, c);
    }
  });
  // The sets' tapes, one batch's (as sinkhorn_log on the batch would write it).
  for (int r = 0; tape && r < q; ++r) {
    SinkhornTape<float>& t = cache->tapes[r];
    t.offset.resize(B);
    t.n_iter.resize(B);
    for (int b = 0; b < B; ++b) {
      const SinkhornTape<float>& one = set_tapes[r][b];
      t.offset[b] = static_cast<int64_t>(t.lse.size());
      t.n_iter[b] = one.n_iter[0];
      t.lse.insert(t.lse.end(), one.lse.begin(), one.lse.end());
    }
  }
  return out;
}

void OtkPooling::backward(const SetBatch& embedded, const Cache& cache, const Eigen::Ref<const MatF>& grad_out,
                          SetBatch* grad_psi, std::vector<MatF>* grad_refs) const {
  // The sinusoidal encoding is an additive constant: its gradient passes through, but the similarities and the
  // pooled values below are those of the encoded features.
  SetBatch encoded;
  if (options_.sinusoidal) encoded = add_sinusoidal_encoding(embedded);
  const SetBatch& psi = options_.sinusoidal ? encoded : embedded;
  const int B = psi.batch, N = psi.n_max, p = options_.p, k = psi.dim;
  INDUCTIVE_CHECK(grad_out.rows() == B && grad_out.cols() == output_dim(), ErrorCode::kShapeMismatch,
                  "otk backward: gradient is ", grad_out.rows(), " x ", grad_out.cols(), ", expected ", B, " x ",
                  output_dim());
  INDUCTIVE_CHECK(static_cast<int>(cache.plans.size()) == options_.q, ErrorCode::kShapeMismatch,
                  "otk backward: cache does not come from forward on this batch");
  const float c = scale();
  if (grad_psi) *grad_psi = SetBatch(B, N, k), grad_psi->n = psi.n;
  if (grad_refs && grad_refs->empty()) grad_refs->assign(options_.q, MatF::Zero(p, k));
  // The Sinkhorn backward reads the logits from the similarities: forward keeps them with one reference, else they
  // are recomputed here, a set at a time.
  const size_t set_size = static_cast<size_t>(N) * p;
  const bool kept = !cache.similarities.empty();
  INDUCTIVE_CHECK(!kept || (options_.q == 1 && cache.similarities.size() == static_cast<size_t>(B) * set_size),
                  ErrorCode::kShapeMismatch, "otk backward: cache does not come from forward on this batch");
  const bool attention = options_.plan == OtkPlan::kAttention;
  const bool unrolled = !attention && cache.gradient == SinkhornGradient::kUnrolled;
  for (int r = 0; r < options_.q; ++r)
    INDUCTIVE_CHECK(cache.plans[r].size() == static_cast<size_t>(B) * set_size &&
                        (!unrolled || static_cast<int>(cache.tapes.at(r).n_iter.size()) == B),
                    ErrorCode::kShapeMismatch, "otk backward: cache does not come from forward on this batch");
  std::vector<MatF> grad_z_per_set(grad_refs ? B : 0);
  const std::vector<int> order = largest_first(B, [&](int b) { return psi.n[b]; });  // as in forward
  // Per thread: dL/dP, dL/dS and (when not kept) the similarities of the set at hand.
  std::vector<std::vector<float>> buffers(static_cast<size_t>(std::max(1, parallel_threads())));
  for (int r = 0; r < options_.q; ++r) {
    const MatF& z = refs_[r];
    const std::vector<float>& plan = cache.plans[r];
    const bool by_rows = p % simd::vector_floats() == 0;  // as in forward
    const int width = kept ? p : 2 * p;                   // [c g] or [c g; z]
    // Each set in turn from dL/dP to dL/dS to the products with x, so that dC^T x reads the set's features while
    // x [c g; z]^T has just brought them into cache (see forward).
    parallel_for(B, 1, 0, [&](int i, int worker) {
      const int b = order[static_cast<size_t>(i)];
      const int n = psi.n[b];
      const int64_t off = static_cast<int64_t>(b) * N * p;
      const float* x = psi.row(b, 0);
      std::vector<float>& own = buffers[static_cast<size_t>(worker)];
      own.resize((kept ? 2 : 3) * set_size);  // dL/dP, dL/dS and, when not kept, the similarities
      float* gp = own.data();
      std::fill(gp + static_cast<int64_t>(n) * p, gp + set_size, 0.0f);  // padding: the products write the valid rows
      float* gs = own.data() + set_size;
      float* s = kept ? nullptr : own.data() + 2 * set_size;
      const float* sim = kept ? cache.similarities.data() + off : s;
      CMapF g(grad_out.row(b).data() + static_cast<int64_t>(r) * p * k, p, k);
      CMapF pb(plan.data() + off, n, p);
      // dL/d(P o Spos) = c x g^T and, when forward did not keep them, the similarities x z^T from the same pass over
      // x: x [c g; z]^T, in row chunks that stay in L2 (x is 2 MB per set at k 512) while both halves read them.
      MatF stacked(width, k);
      stacked.topRows(p) = c * g;
      if (!kept) stacked.bottomRows(p) = z;
      const MatF stacked_t = by_rows ? MatF(stacked.transpose()) : MatF();
      for (int i = 0; i < n; i += kBackwardRows) {
        const int rows = std::min(kBackwardRows, n - i);
        const float* xi = x + static_cast<int64_t>(i) * k;
        float* gpi = gp + static_cast<int64_t>(i) * p;
        if (by_rows)
          simd::gemm_ab(xi, k, stacked_t.data(), width, gpi, p, rows, p, k);
        else
          simd::gemm_abt(xi, k, stacked.data(), k, gpi, p, rows, p, k);
        if (kept) continue;
        float* si = s + static_cast<int64_t>(i) * p;
        if (by_rows)
          simd::gemm_ab(xi, k, stacked_t.data() + p, width, si, p, rows, p, k);
        else
          simd::gemm_abt(xi, k, stacked.data() + static_cast<int64_t>(p) * k, k, si, p, rows, p, k);
      }
      MatF pw = pb;
      if (options_.sigma_pos > 0) {
        MatF w(n, p);
        positional_weights(n, p, options_.sigma_pos, w.data());
        MapF(gp, n, p).array() *= w.array();
        pw.array() *= w.array();
      }
      // dL/dx += (P o Spos) (c g), c g the top of `stacked`.
      if (grad_psi) simd::gemm_ab(pw.data(), p, stacked.data(), k, grad_psi->row(b, 0), k, n, k, p, true);
      // dL/dS of this set alone, through the same per-problem code as a batch's.
      const SinkhornProblem<float> one{sim, 1, N, p, &psi.n[b], nullptr, nullptr, nullptr};
      if (attention) {
        attention_plan_backward(plan.data() + off, gp, 1, N, p, &psi.n[b], options_.eps, gs);
      } else if (!unrolled) {
        sinkhorn_implicit_backward(one, sinkhorn_options(), plan.data() + off, gp, gs);
      } else {
        const SinkhornTape<float>& t = cache.tapes[r];
        const auto first = t.lse.begin() + t.offset[b];
        const int64_t length = static_cast<int64_t>(t.n_iter[b]) * (n + p);
        SinkhornTape<float> set_tape{std::vector<float>(first, first + length), {0}, {t.n_iter[b]}};
        sinkhorn_log_backward(one, sinkhorn_options(), set_tape, plan.data() + off, gp, gs);
      }
      if (grad_psi) simd::gemm_ab(gs, p, z.data(), k, grad_psi->row(b, 0), k, n, k, p, true);
      if (grad_refs) {
        grad_z_per_set[b].resize(p, k);
        simd::gemm_atb(gs, p, x, k, grad_z_per_set[b].data(), k, p, k, n, 1.0f);
      }
    });
    // The sets' dL/dz summed in set order for every entry, rows of z dealt to the threads (the same bits as one
    // thread's sum; at k 512 the B p x k terms are 8 MB, a serial pass a 2-thread step had waited on).
    if (grad_refs) {
      MatF& gz = (*grad_refs)[r];
      parallel_for(p, 4, 0, [&](int row, int) {
        for (int b = 0; b < B; ++b) gz.row(row) += grad_z_per_set[b].row(row);
      });
    }
  }
}

}  // namespace inductive
