// OTK pooling forward and backward (see inductive/otk_pooling.h).
#include "inductive/otk_pooling.h"

#include <algorithm>
#include <cmath>

#include "inductive/elementwise.h"
#include "inductive/parallel.h"
#include "ot/sinkhorn_detail.h"
#include "simd/small_gemm.h"
#include "simd/transpose.h"

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

// What every set's forward and backward share: the references (and z^T for the rows form), the scale, Sinkhorn's
// options. Forward, backward and their fusion call the same per-set code below, so a set's bits do not depend on
// which of them computed it.
struct OtkPooling::SetMaths {
  const OtkOptions& options;
  const std::vector<MatF>& refs;
  float c;
  SinkhornOptions sinkhorn;
  // With p a multiple of the vector width, x z^T runs faster as broadcasts and FMAs over z^T (gemm_ab) than as dot
  // products, whose horizontal sums cost more than they save (wasm k128 p64: +18 %; native k512 p64: 1.9x). Else
  // gemm_ab would end each row with scalar columns, and the dot products win (wasm k512 p10: -12 % with gemm_ab).
  bool by_rows;
  bool attention;
  std::vector<MatF> zt;  // z^T per reference (rows form only)

  explicit SetMaths(const OtkPooling& pool)
      : options(pool.options_),
        refs(pool.refs_),
        c(pool.scale()),
        sinkhorn(pool.sinkhorn_options()),
        by_rows(pool.options_.p % simd::vector_floats() == 0),
        attention(pool.options_.plan == OtkPlan::kAttention) {
    if (by_rows)
      for (const MatF& z : refs) zt.push_back(z.transpose());
  }

  // Set b against reference r: its similarities into `sim` (n x p), its plan into `plan` (N x p, padding 0) and,
  // for the unrolled gradient, its tape; then c (P o Spos)^T x into `out` (p x k). `shown`: the plan after
  // positional weighting as well (visualisation), or null.
  void forward(const SetBatch& psi, int b, int r, float* sim, float* plan, SinkhornTape<float>* tape, float* shown,
               float* out) const {
    const int n = psi.n[b], N = psi.n_max, p = options.p, k = psi.dim;
    if (by_rows)
      simd::gemm_ab(psi.row(b, 0), k, zt[r].data(), p, sim, p, n, p, k);
    else
      simd::gemm_abt(psi.row(b, 0), k, refs[r].data(), k, sim, p, n, p, k);
    // Named here by set (a one-set Sinkhorn call would name problem 0); padding rows are never read.
    INDUCTIVE_CHECK(CMapF(sim, n, p).allFinite(), ErrorCode::kInvalidArgument, "otk: set ", b,
                    " has non-finite similarities to the references (NaN or Inf in its features)");
    if (attention) {
      attention_plan(sim, 1, N, p, &psi.n[b], options.eps, plan);
    } else {
      const SinkhornProblem<float> one{sim, 1, N, p, &psi.n[b], nullptr, nullptr, nullptr};
      sinkhorn_log(one, sinkhorn, SinkhornOutput<float>{plan}, tape);
    }
    if (shown && shown != plan) std::copy(plan, plan + static_cast<size_t>(N) * p, shown);
    MatF w;
    if (options.sigma_pos > 0) {
      w.resize(n, p);
      positional_weights(n, p, options.sigma_pos, w.data());
      w.array() *= CMapF(plan, n, p).array();
      if (shown) MapF(shown, n, p) = w;
    }
    const float* weights = options.sigma_pos > 0 ? w.data() : plan;
    simd::gemm_atb(weights, p, psi.row(b, 0), k, out, k, p, k, n, c);
  }

  // Set b's backward against reference r, from g = dL/dPhi^r (p x k): adds dL/dx to `grad_x` (n x k, or null) and
  // writes this set's dL/dz^r to `grad_z` (p x k, or null). `sim`: the similarities forward kept, or null to
  // recompute them; `tape`: the set's own tape (unrolled gradient). `own`: the thread's scratch.
  void backward(const SetBatch& psi, int b, int r, const float* sim, const float* plan, const SinkhornTape<float>* tape,
                SinkhornGradient gradient, const float* g_row, float* grad_x, float* grad_z,
                std::vector<float>& own) const {
    const int n = psi.n[b], N = psi.n_max, p = options.p, k = psi.dim;
    const size_t set_size = static_cast<size_t>(N) * p;
    const bool kept = sim != nullptr;
    const float* x = psi.row(b, 0);
    const MatF& z = refs[r];
    const int width = kept ? p : 2 * p;     // [c g] or [c g; z]
    own.resize((kept ? 2 : 3) * set_size);  // dL/dP, dL/dS and, when not kept, the similarities
    float* gp = own.data();
    std::fill(gp + static_cast<int64_t>(n) * p, gp + set_size, 0.0f);  // padding: the products write the valid rows
    float* gs = own.data() + set_size;
    float* s = kept ? nullptr : own.data() + 2 * set_size;
    if (!kept) sim = s;
    CMapF g(g_row, p, k);
    // dL/d(P o Spos) = c x g^T and, when forward did not keep them, the similarities x z^T from the same pass over
    // x: x [c g; z]^T, in row chunks that stay in L2 (x is 2 MB per set at k 512) while both halves read them.
    // By rows the products read [c g; z]^T, built directly (z^T is zt); the rows [c g; z] are needed for the dot
    // products, and c g for dL/dx.
    MatF stacked, stacked_t;
    if (by_rows) {
      stacked_t.resize(k, width);
      simd::transpose(g_row, p, k, k, c, stacked_t.data(), width);
      if (!kept) stacked_t.rightCols(p) = zt[r];
    }
    if (!by_rows || grad_x) {
      stacked.resize(width, k);
      stacked.topRows(p) = c * g;
      if (!kept) stacked.bottomRows(p) = z;
    }
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
    MatF w;
    if (options.sigma_pos > 0) {
      w.resize(n, p);
      positional_weights(n, p, options.sigma_pos, w.data());
      MapF(gp, n, p).array() *= w.array();
    }
    // dL/dx += (P o Spos) (c g), c g the top of `stacked`.
    if (grad_x) {
      MatF pw = CMapF(plan, n, p);
      if (options.sigma_pos > 0) pw.array() *= w.array();
      simd::gemm_ab(pw.data(), p, stacked.data(), k, grad_x, k, n, k, p, true);
    }
    // dL/dS of this set alone, through the same per-problem code as a batch's.
    const SinkhornProblem<float> one{sim, 1, N, p, &psi.n[b], nullptr, nullptr, nullptr};
    if (attention) {
      attention_plan_backward(plan, gp, 1, N, p, &psi.n[b], options.eps, gs);
    } else if (gradient == SinkhornGradient::kImplicit) {
      sinkhorn_implicit_backward(one, sinkhorn, plan, gp, gs);
    } else {
      sinkhorn_log_backward(one, sinkhorn, *tape, plan, gp, gs);
    }
    if (grad_x) simd::gemm_ab(gs, p, z.data(), k, grad_x, k, n, k, p, true);
    if (grad_z) simd::gemm_atb(gs, p, x, k, grad_z, k, p, k, n, 1.0f);
  }
};

namespace {

// The batch's features as pooled: psi itself, or psi plus the sinusoidal encoding (an additive constant: its
// gradient passes through, but the similarities and the pooled values are those of the encoded features).
const SetBatch& pooled_features(const SetBatch& embedded, const OtkOptions& options, SetBatch& encoded) {
  if (!options.sinusoidal) return embedded;
  encoded = add_sinusoidal_encoding(embedded);
  return encoded;
}

// The sets' dL/dz summed in set order for every entry, rows of z dealt to the threads (the same bits as one thread's
// sum; at k 512 the B p x k terms are 8 MB, a serial pass a 2-thread step had waited on).
void sum_in_set_order(const std::vector<MatF>& per_set, MatF& gz) {
  parallel_for(static_cast<int>(gz.rows()), 4, 0, [&](int row, int) {
    for (const MatF& one : per_set) gz.row(row) += one.row(row);
  });
}

}  // namespace

const SetBatch& OtkPooling::checked_features(const SetBatch& embedded, SetBatch& encoded) const {
  // Non-finite features surface through the check of the similarities (SetMaths::forward), which costs n p, not n k.
  embedded.validate_shape("otk");
  INDUCTIVE_CHECK(embedded.dim == dim(), ErrorCode::kShapeMismatch, "otk: embedded features have dimension ",
                  embedded.dim, ", expected ", dim(), " (the references' dimension)");
  return pooled_features(embedded, options_, encoded);
}

MatF OtkPooling::forward(const SetBatch& embedded, Cache* cache, std::vector<std::vector<float>>* plans_out) const {
  SetBatch encoded;
  const SetBatch& psi = checked_features(embedded, encoded);
  const int B = psi.batch, N = psi.n_max, p = options_.p, k = psi.dim, q = options_.q;
  MatF out(B, output_dim());
  const size_t set_size = static_cast<size_t>(N) * p, size = static_cast<size_t>(B) * set_size;
  const SetMaths maths(*this);
  const bool tape = cache && cache->gradient == SinkhornGradient::kUnrolled && !maths.attention;
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
  std::vector<std::vector<float>> buffers(static_cast<size_t>(std::max(1, parallel_threads())));
  // Each set in turn through its similarities, plan and P^T x for every reference, so that P^T x reads the set's
  // features while x z^T has just brought them into cache. Step by step over the batch, each product read every set
  // from memory: at k 512 a set is 1.2 MB and a batch of 64 is 78 MB, past L3. Each set is solved alone by the code
  // that solves a batch's sets, so no bit depends on the batch.
  const std::vector<int> order = largest_first(B, [&](int b) { return psi.n[b]; });
  parallel_for(B, 1, 0, [&](int i, int worker) {
    const int b = order[static_cast<size_t>(i)];
    const int64_t off = static_cast<int64_t>(b) * N * p;
    std::vector<float>& own = buffers[static_cast<size_t>(worker)];
    if (!keep_sim || !cache) own.resize(2 * set_size);  // a set's similarities and plan live in the cache otherwise
    for (int r = 0; r < q; ++r) {
      float* sim = keep_sim ? cache->similarities.data() + off : own.data();
      float* plan = cache       ? cache->plans[r].data() + off
                    : plans_out ? (*plans_out)[r].data() + off
                                : own.data() + set_size;
      float* shown = plans_out ? (*plans_out)[r].data() + off : nullptr;
      maths.forward(psi, b, r, sim, plan, tape ? &set_tapes[r][b] : nullptr, shown,
                    out.row(b).data() + static_cast<int64_t>(r) * p * k);
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
  SetBatch encoded;
  const SetBatch& psi = pooled_features(embedded, options_, encoded);
  const int B = psi.batch, N = psi.n_max, p = options_.p, k = psi.dim;
  INDUCTIVE_CHECK(grad_out.rows() == B && grad_out.cols() == output_dim(), ErrorCode::kShapeMismatch,
                  "otk backward: gradient is ", grad_out.rows(), " x ", grad_out.cols(), ", expected ", B, " x ",
                  output_dim());
  INDUCTIVE_CHECK(static_cast<int>(cache.plans.size()) == options_.q, ErrorCode::kShapeMismatch,
                  "otk backward: cache does not come from forward on this batch");
  if (grad_psi) *grad_psi = SetBatch(B, N, k), grad_psi->n = psi.n;
  if (grad_refs && grad_refs->empty()) grad_refs->assign(options_.q, MatF::Zero(p, k));
  // The Sinkhorn backward reads the logits from the similarities: forward keeps them with one reference, else they
  // are recomputed here, a set at a time.
  const size_t set_size = static_cast<size_t>(N) * p;
  const bool kept = !cache.similarities.empty();
  INDUCTIVE_CHECK(!kept || (options_.q == 1 && cache.similarities.size() == static_cast<size_t>(B) * set_size),
                  ErrorCode::kShapeMismatch, "otk backward: cache does not come from forward on this batch");
  const SetMaths maths(*this);
  const bool unrolled = !maths.attention && cache.gradient == SinkhornGradient::kUnrolled;
  for (int r = 0; r < options_.q; ++r)
    INDUCTIVE_CHECK(cache.plans[r].size() == static_cast<size_t>(B) * set_size &&
                        (!unrolled || static_cast<int>(cache.tapes.at(r).n_iter.size()) == B),
                    ErrorCode::kShapeMismatch, "otk backward: cache does not come from forward on this batch");
  std::vector<MatF> grad_z_per_set(grad_refs ? B : 0);
  const std::vector<int> order = largest_first(B, [&](int b) { return psi.n[b]; });  // as in forward
  std::vector<std::vector<float>> buffers(static_cast<size_t>(std::max(1, parallel_threads())));
  for (int r = 0; r < options_.q; ++r) {
    // Each set in turn from dL/dP to dL/dS to the products with x, so that dC^T x reads the set's features while
    // x [c g; z]^T has just brought them into cache (see forward).
    parallel_for(B, 1, 0, [&](int i, int worker) {
      const int b = order[static_cast<size_t>(i)];
      const int64_t off = static_cast<int64_t>(b) * N * p;
      SinkhornTape<float> set_tape;
      if (unrolled) {
        const SinkhornTape<float>& t = cache.tapes[r];
        const auto first = t.lse.begin() + t.offset[b];
        const int64_t length = static_cast<int64_t>(t.n_iter[b]) * (psi.n[b] + p);
        set_tape = SinkhornTape<float>{std::vector<float>(first, first + length), {0}, {t.n_iter[b]}};
      }
      if (grad_refs) grad_z_per_set[b].resize(p, k);
      maths.backward(psi, b, r, kept ? cache.similarities.data() + off : nullptr, cache.plans[r].data() + off,
                     &set_tape, unrolled ? SinkhornGradient::kUnrolled : SinkhornGradient::kImplicit,
                     grad_out.row(b).data() + static_cast<int64_t>(r) * p * k, grad_psi ? grad_psi->row(b, 0) : nullptr,
                     grad_refs ? grad_z_per_set[b].data() : nullptr, buffers[static_cast<size_t>(worker)]);
    });
    if (grad_refs) sum_in_set_order(grad_z_per_set, (*grad_refs)[r]);
  }
}

MatF OtkPooling::forward_backward(const SetBatch& embedded, SinkhornGradient gradient, const RowGradient& row_gradient,
                                  SetBatch* grad_psi, std::vector<MatF>* grad_refs) const {
  SetBatch encoded;
  const SetBatch& psi = checked_features(embedded, encoded);
  const int B = psi.batch, N = psi.n_max, p = options_.p, k = psi.dim, q = options_.q;
  MatF out(B, output_dim());
  const size_t set_size = static_cast<size_t>(N) * p;
  const SetMaths maths(*this);
  const bool unrolled = !maths.attention && gradient == SinkhornGradient::kUnrolled;
  // grad_z_per_set[r][b]: set b's dL/dz^r, summed in set order at the end as backward sums them.
  std::vector<std::vector<MatF>> grad_z_per_set(grad_refs ? q : 0, std::vector<MatF>(B));
  SetBatch grad_x;  // moved to *grad_psi once every set succeeded
  if (grad_psi) grad_x = SetBatch(B, N, k), grad_x.n = psi.n;
  // Per thread: the set's similarities and plans for every reference (kept from its forward to its backward), its
  // tapes, dL/dPhi of its row, and the backward's scratch. Nothing of size B N p: memory does not grow with the batch.
  struct Scratch {
    std::vector<float> sims, plans, grad_row, backward;
    std::vector<SinkhornTape<float>> tapes;
  };
  std::vector<Scratch> scratch(static_cast<size_t>(std::max(1, parallel_threads())));
  const std::vector<int> order = largest_first(B, [&](int b) { return psi.n[b]; });  // as in forward
  parallel_for(B, 1, 0, [&](int i, int worker) {
    const int b = order[static_cast<size_t>(i)];
    Scratch& s = scratch[static_cast<size_t>(worker)];
    s.sims.resize(q * set_size);
    s.plans.resize(q * set_size);
    s.grad_row.resize(static_cast<size_t>(output_dim()));
    s.tapes.assign(q, {});
    float* phi = out.row(b).data();
    for (int r = 0; r < q; ++r)
      maths.forward(psi, b, r, s.sims.data() + r * set_size, s.plans.data() + r * set_size,
                    unrolled ? &s.tapes[r] : nullptr, nullptr, phi + static_cast<int64_t>(r) * p * k);
    row_gradient(b, phi, s.grad_row.data());
    for (int r = 0; r < q; ++r) {
      if (grad_refs) grad_z_per_set[r][b].resize(p, k);
      maths.backward(psi, b, r, s.sims.data() + r * set_size, s.plans.data() + r * set_size, &s.tapes[r],
                     unrolled ? SinkhornGradient::kUnrolled : SinkhornGradient::kImplicit,
                     s.grad_row.data() + static_cast<int64_t>(r) * p * k, grad_psi ? grad_x.row(b, 0) : nullptr,
                     grad_refs ? grad_z_per_set[r][b].data() : nullptr, s.backward);
    }
  });
  // Only now, after every set succeeded: a failed pass leaves the caller's gradients as they were.
  if (grad_psi) *grad_psi = std::move(grad_x);
  if (grad_refs && grad_refs->empty()) grad_refs->assign(q, MatF::Zero(p, k));
  for (int r = 0; grad_refs && r < q; ++r) sum_in_set_order(grad_z_per_set[r], (*grad_refs)[r]);
  return out;
}

}  // namespace inductive
