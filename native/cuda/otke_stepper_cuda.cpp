// Supervised OTKE steps on a CUDA device (see otke_stepper_cuda.h). The maths is core's otke_loss, operation by
// operation: S = psi z^T (cuBLAS), Sinkhorn (sinkhorn_kernels.h; with a tape for the unrolled gradient, without for
// the implicit one), positional weighting, Phi = c W^T psi (or the mean/max baselines, otke_pool_ops.h), the head,
// the loss (softmax or multilabel binary cross-entropy, otke_head_ops.h); backward in reverse through the same
// operations; Adam (elementwise.h).
#include "otke_stepper_cuda.h"

#include <algorithm>
#include <cstdint>
#include <cmath>
#include <cstring>
#include <string>

#include "blas.h"
#include "cuda_util.h"
#include "inductive/communicator.h"
#include "inductive/error.h"
#include "nccl_allreduce.h"
#include "otke_kernels.h"
#include "sinkhorn_kernels.h"

namespace inductive::cuda {

void check_cuda_otke_support(const OtkeConfig& c, const OtkeLossOptions& lo) {
  const char* plan =
      " yet (it trains identity, Nystrom and conv embeddings of vectors, sequences or tokens with OT, mean or max "
      "pooling, linear, MLP and multilabel heads, and OT pooling with either Sinkhorn gradient); train this model with "
      "--backend cpu";
  INDUCTIVE_CHECK(
      c.pooling != OtkePooling::kOtk || (c.otk.plan == OtkPlan::kSinkhorn && !c.otk.sinusoidal), ErrorCode::kBackend,
      "cuda: OTKE training does not support the attention plan or the sinusoidal encoding (ablations)", plan);
}

namespace {

std::string reference_name(int r) { return "otk.references." + std::to_string(r); }

}  // namespace

struct CudaOtkeStepper::State {
  int device = 0;
  OtkeModel host;  // shapes and config for the batch checks; parameters as of the last pull/push
  OtkeLossOptions lo;
  AdamOptions adam_options;
  int64_t adam_steps = 0;
  int q = 1, p = 1, k = 1, classes = 2, dim = 1;  // k: the pooled features' dimension; dim = D = q p k
  int hidden = 0, hd = 1;  // the MLP head's hidden units H (0: a linear head); hd: the output layer's input, H or D
  float dropout = 0;       // the MLP's inverted dropout on Phi, in training steps
  int d = 1;               // the local features' dimension (= k for the identity embedding; E for tokens)
  int width = 1;           // the input batch's width: d, or 1 for tokens (one index per element)
  bool tokens = false, train_tokens = false;  // token inputs: x holds indices, looked up into `local`
  bool nystrom = false;                       // embedding: psi = kappa(xhat W^T) factor
  bool conv = false;                          // embedding: psi = ReLU(x W^T + b); neither: psi = x
  bool train_anchors = false;                 // Nystrom anchors learn (their Adam step is on the host)
  bool train_conv = false;                    // conv filters learn (on the device, like the references)
  bool embedded() const { return nystrom || conv; }
  bool train_embedding() const { return train_anchors || train_conv; }
  bool want_dpsi() const { return train_embedding() || train_tokens; }  // dL/dpsi: a layer below the pooling learns
  bool want_dx() const { return train_tokens && embedded(); }           // dL/d(looked-up features) below an embedding
  float sigma = 0.6f;
  bool keep_norm = false;
  bool has_head = true;
  bool multilabel = false;  // C independent binary labels (bit sets), binary cross-entropy
  bool implicit = false;    // the implicit Sinkhorn gradient: no tape, a workspace independent of the iterations
  bool otk = true;          // OT pooling; else the mean/max baseline (q = 0: no references, no Sinkhorn)
  bool max_pool = false;
  float scale = 1;
  SinkhornOptions so;
  std::unique_ptr<Stream> stream;
  std::unique_ptr<Blas> blas;

  // Parameters, gradients and Adam's moments: references [q, p, k], head weight [C, D], bias [C].
  DeviceBuffer refs, weight, bias, g_refs, g_weight, g_bias, m_refs, v_refs, m_weight, v_weight, m_bias, v_bias;
  // Nystrom: anchors W [K, d] and factor [K, K] on the device, their gradients' two parts (direct, through the
  // factor) for the host, which finishes the anchor gradient (one K x K eigendecomposition, Nystrom::anchor_gradient),
  // steps the anchors with Adam and recomputes the factor, as the CPU does.
  DeviceBuffer anchors, factor, g_wdirect, g_factor;
  // MLP head: hidden layer W_h [H, D], b_h [H], gradients and moments; per batch ReLU(W_h Phi' + b_h) [batch, H],
  // its gradient, and with dropout the mask [batch, D] (drawn on the host with the CPU's generator) and Phi' = Phi o
  // mask.
  DeviceBuffer hid_w, hid_b, g_hid_w, g_hid_b, m_hid_w, v_hid_w, m_hid_b, v_hid_b, hid, dhid, keep, dropped;
  MatF keep_host;
  bool dropping = false;  // this batch's forward pass applied the mask
  // Conv: filters W [K, d] and bias [K], their gradients and Adam's moments, all on the device.
  DeviceBuffer conv_w, conv_b, g_conv_w, g_conv_b, m_conv_w, v_conv_w, m_conv_b, v_conv_b;
  std::vector<float> m_anchors, v_anchors;  // Adam's moments of the anchors, on the host with them
  MatF anchor_grad;                         // the last backward's dL/dW (K x d)
  // Batch buffers, sized for the largest batch x n_max seen.
  int cap_batch = 0, cap_n = 0;
  DeviceBuffer x, n, labels, sim, plan, wplan, tape, phi, logits, dlogits, dphi, gplan, dsim, loss, workspace;
  DeviceBuffer implicit_work, implicit_ok;  // the implicit gradient's workspace and per-problem flags [q, batch]
  std::vector<int32_t> implicit_ok_host;
  DeviceBuffer psi, xhat, norm, kx, dpsi, da;  // Nystrom: [rows, K] except xhat [rows, d], norm [rows]
  DeviceBuffer argmax;                         // max pooling: [batch, K], the element each feature came from
  // Tokens: the table [V, E] with its gradient and Adam's moments; per batch the looked-up features [rows, E], their
  // ids [rows] and (conv) dL/d(local features) [rows, E].
  DeviceBuffer table, g_table, m_table, v_table, local, ids, dx;
  DeviceBuffer grad_norm;  // Nystrom with keep_norm under a learning table: dL/d||x|| per row
  int vocab = 0;
  PinnedBuffer staging;
  int batch = 0, n_max = 0;  // the current batch's shape
  // The bound training set, when resident on the device.
  DeviceBuffer data, data_n, index;
  const SetBatch* bound = nullptr;
  bool resident = false;
  size_t resident_limit = SIZE_MAX;

  // Data-parallel ranks' sums (RankSums): the NCCL communicator, made at the first step that asks for it, and the
  // run's Communicator for the anchors' gradient. Declared last: NCCL's streams go before the compute stream does.
  RankSums rank_sums = RankSums::kNccl;
  Communicator* comm = nullptr;
  std::unique_ptr<NcclAllreduce> nccl;

  cudaStream_t s() const { return stream->get(); }
  size_t matrix() const { return static_cast<size_t>(batch) * n_max * p; }  // one [batch, n_max, p] buffer
  size_t tape_floats() const { return implicit ? 0 : static_cast<size_t>(batch) * so.max_iter * (p + n_max); }
  float* at(const DeviceBuffer& b, size_t offset) const { return b.as<float>() + offset; }

  // Grows the batch buffers to hold `b` sets of up to `nm` elements. Allocates everything first and commits after,
  // so a failed allocation (out of device memory: Error{kBackend}) leaves the stepper as it was, still usable.
  void make_buffers(int b, int nm) {
    if (b <= cap_batch && nm <= cap_n) return;
    const int cb = std::max(cap_batch, b), cn = std::max(cap_n, nm);
    const size_t rows = static_cast<size_t>(cb) * cn, f = sizeof(float);
    const size_t mat = rows * p * f * q;
    const SinkhornLaunch launch{s(), true};
    const size_t ny = nystrom ? rows * f : 0, em = embedded() ? rows * f : 0;
    const size_t tk = tokens ? rows : 0;
    DeviceBuffer npsi(em * k), nxhat(ny * d), nnorm(ny), nkx(ny * k), ndpsi(want_dpsi() ? rows * k * f : 0),
        nda(train_anchors || train_tokens ? ny * k : 0), nlocal(tk * d * f), nids(tk * sizeof(int32_t)),
        ndx(want_dx() ? tk * d * f : 0), ngn(nystrom && train_tokens && keep_norm ? ny : 0);
    DeviceBuffer nx(rows * width * f), nn(cb * sizeof(int32_t)), nl(cb * sizeof(int32_t)), ns(mat), np(mat),
        nw(host.config.otk.sigma_pos > 0 ? mat : 0),
        nt(implicit ? 0 : static_cast<size_t>(cb) * so.max_iter * (p + cn) * q * f),
        nphi(static_cast<size_t>(cb) * dim * f), ndphi(static_cast<size_t>(cb) * dim * f),
        nhid(static_cast<size_t>(cb) * hidden * f), ndhid(static_cast<size_t>(cb) * hidden * f),
        nkeep(dropout > 0 ? static_cast<size_t>(cb) * dim * f : 0),
        ndropped(dropout > 0 ? static_cast<size_t>(cb) * dim * f : 0), nlog(static_cast<size_t>(cb) * classes * f),
        ndlog(static_cast<size_t>(cb) * classes * f), ngp(otk ? rows * p * f : 0), nds(otk ? rows * p * f : 0),
        nws(otk ? sinkhorn_workspace_bytes(cb, cn, p, launch) : 0),
        nam(max_pool ? static_cast<size_t>(cb) * k * sizeof(int32_t) : 0),
        niw(implicit ? sinkhorn_implicit_workspace_bytes(cb, cn, p) : 0),
        nio(implicit ? static_cast<size_t>(q) * cb * sizeof(int32_t) : 0);
    x = std::move(nx), n = std::move(nn), labels = std::move(nl), sim = std::move(ns), plan = std::move(np);
    wplan = std::move(nw), tape = std::move(nt), phi = std::move(nphi), dphi = std::move(ndphi);
    hid = std::move(nhid), dhid = std::move(ndhid), keep = std::move(nkeep), dropped = std::move(ndropped);
    logits = std::move(nlog), dlogits = std::move(ndlog), gplan = std::move(ngp), dsim = std::move(nds);
    workspace = std::move(nws);
    implicit_work = std::move(niw), implicit_ok = std::move(nio);
    psi = std::move(npsi), xhat = std::move(nxhat), norm = std::move(nnorm), kx = std::move(nkx);
    dpsi = std::move(ndpsi), da = std::move(nda), argmax = std::move(nam);
    local = std::move(nlocal), ids = std::move(nids), dx = std::move(ndx), grad_norm = std::move(ngn);
    cap_batch = cb;
    cap_n = cn;
  }

  // Packs the batch (and labels) into pinned memory and enqueues the copies.
  void upload(const SetBatch& xb, const std::vector<int32_t>* y) {
    make_buffers(xb.batch, xb.n_max);
    batch = xb.batch;
    n_max = xb.n_max;
    const size_t xbytes = xb.x.size() * sizeof(float), ibytes = static_cast<size_t>(batch) * sizeof(int32_t);
    staging.reserve(xbytes + 2 * ibytes);
    std::memcpy(staging.data(), xb.x.data(), xbytes);
    std::memcpy(staging.data() + xbytes, xb.n.data(), ibytes);
    if (y) std::memcpy(staging.data() + xbytes + ibytes, y->data(), ibytes);
    check(cudaMemcpyAsync(x.data(), staging.data(), xbytes, cudaMemcpyHostToDevice, s()), "cudaMemcpyAsync");
    check(cudaMemcpyAsync(n.data(), staging.data() + xbytes, ibytes, cudaMemcpyHostToDevice, s()), "cudaMemcpyAsync");
    if (y)
      check(cudaMemcpyAsync(labels.data(), staging.data() + xbytes + ibytes, ibytes, cudaMemcpyHostToDevice, s()),
            "cudaMemcpyAsync");
  }

  // The sets `idx` of the resident dataset, packed on the device; only indices and labels cross the bus.
  void gather(const std::vector<int>& idx, const std::vector<int32_t>& y) {
    int nm = 1;
    for (int i : idx) nm = std::max(nm, bound->n[i]);
    const int b = static_cast<int>(idx.size());
    make_buffers(b, nm);
    if (index.bytes() < b * sizeof(int32_t)) index = DeviceBuffer(b * sizeof(int32_t));
    batch = b;
    n_max = nm;
    const size_t ibytes = static_cast<size_t>(b) * sizeof(int32_t);
    staging.reserve(2 * ibytes);
    std::copy(idx.begin(), idx.end(), reinterpret_cast<int32_t*>(staging.data()));
    std::memcpy(staging.data() + ibytes, y.data(), ibytes);
    check(cudaMemcpyAsync(index.data(), staging.data(), ibytes, cudaMemcpyHostToDevice, s()), "cudaMemcpyAsync");
    check(cudaMemcpyAsync(labels.data(), staging.data() + ibytes, ibytes, cudaMemcpyHostToDevice, s()),
          "cudaMemcpyAsync");
    gather_sets(data.as<float>(), data_n.as<int32_t>(), bound->n_max, width, index.as<int32_t>(), batch, x.as<float>(),
                n.as<int32_t>(), n_max, s());
  }

  SinkhornProblem<float> problem(int r) const {
    return {at(sim, r * matrix()), batch, n_max, p, n.as<int32_t>(), nullptr, nullptr, nullptr};
  }

  // The local features: the input, or for tokens their rows of the table.
  const float* inputs() const { return tokens ? local.as<float>() : x.as<float>(); }
  // The pooled features: the Nystrom or conv embedding of the local features, or those themselves.
  const float* features() const { return embedded() ? psi.as<float>() : inputs(); }
  int64_t rows() const { return static_cast<int64_t>(batch) * n_max; }

  // psi = kappa(xhat W^T) factor (times ||x|| with keep_norm), every padded row included (padding rows never reach
  // an output: the plans are 0 there).
  void embed() {
    normalize_rows(inputs(), xhat.as<float>(), norm.as<float>(), rows(), d, s());
    blas->gemm(static_cast<int>(rows()), k, d, 1.f, {xhat.as<float>(), d}, {anchors.as<float>(), d, true}, 0.f,
               kx.as<float>(), k);
    gaussian_on_sphere(kx.as<float>(), rows() * k, sigma, s());
    blas->gemm(static_cast<int>(rows()), k, k, 1.f, {kx.as<float>(), k}, {factor.as<float>(), k}, 0.f, psi.as<float>(),
               k);
    if (keep_norm) scale_rows(psi.as<float>(), norm.as<float>(), rows(), k, s());
  }

  // psi = ReLU(x W^T + b) on every padded row (padding rows give ReLU(b), which no output reads: plans, pooling
  // and gradients are 0 there).
  void convolve() {
    blas->gemm(static_cast<int>(rows()), k, d, 1.f, {inputs(), d}, {conv_w.as<float>(), d, true}, 0.f, psi.as<float>(),
               k);
    bias_relu(psi.as<float>(), conv_b.as<float>(), rows(), k, s());
  }

  // The mean/max pooling's arguments over the batch's features; forward writes Phi (and argmax), backward dL/dpsi.
  otke_pool::Args pool_args() const {
    otke_pool::Args a;
    a.psi = features();
    a.n = n.as<int32_t>();
    a.batch = batch;
    a.n_max = n_max;
    a.k = k;
    a.max = max_pool;
    a.phi = phi.as<float>();
    a.argmax = max_pool ? argmax.as<int32_t>() : nullptr;
    a.dphi = dphi.as<float>();
    a.dpsi = dpsi.as<float>();
    return a;
  }

  // Phi and the logits (bias not yet added) of the uploaded batch; with `train`, the tapes for backward.
  void forward(bool train) {
    if (tokens)
      token_lookup(
          {x.as<float>(), n.as<int32_t>(), n_max, table.as<float>(), vocab, d, local.as<float>(), ids.as<int32_t>()},
          rows(), s());
    if (nystrom) embed();
    if (conv) convolve();
    if (!otk) pool_forward(pool_args(), s());
    const float* xf = features();
    const int64_t nk = static_cast<int64_t>(n_max) * k, np = static_cast<int64_t>(n_max) * p;
    const float sigma = host.config.otk.sigma_pos;
    for (int r = 0; r < q; ++r) {
      float* sim_r = at(sim, r * matrix());
      float* plan_r = at(plan, r * matrix());
      // S_b = psi_b z_r^T  [n_max x p]
      blas->gemm(n_max, p, k, 1.f, {xf, k, false, nk}, {at(refs, r * p * k), k, true, 0}, 0.f, sim_r, p, np, batch);
      SinkhornLaunch launch{s(), true};
      if (train && !implicit) launch.tape = at(tape, r * tape_floats());
      sinkhorn_log_device(problem(r), so, SinkhornOutput<float>{plan_r}, workspace.data(), workspace.bytes(), launch);
      const float* weights = plan_r;
      if (sigma > 0) {
        positional_weighting(plan_r, at(wplan, r * matrix()), n.as<int32_t>(), batch, n_max, p, sigma, s());
        weights = at(wplan, r * matrix());
      }
      // Phi_b^r = c (P_b o Spos)^T psi_b  [p x k], at column r p k of row b of Phi [batch x D]
      blas->gemm(p, k, n_max, scale, {weights, p, true, np}, {xf, k, false, nk}, 0.f,
                 at(phi, static_cast<size_t>(r) * p * k), k, dim, batch);
    }
    if (!has_head) return;
    if (hidden > 0) {
      // h = ReLU(W_h Phi' + b_h), Phi' = Phi o mask in a training step with dropout, else Phi
      if (dropping)
        multiply(dropped.as<float>(), phi.as<float>(), keep.as<float>(), static_cast<int64_t>(batch) * dim, s());
      blas->gemm(batch, hidden, dim, 1.f, {hidden_input(), dim}, {hid_w.as<float>(), dim, true}, 0.f, hid.as<float>(),
                 hidden);
      bias_relu(hid.as<float>(), hid_b.as<float>(), batch, hidden, s());
    }
    blas->gemm(batch, classes, hd, 1.f, {head_input(), hd}, {weight.as<float>(), hd, true}, 0.f, logits.as<float>(),
               classes);
  }

  // What the MLP's hidden layer reads (Phi, or Phi o mask), and what the output layer reads (h, or Phi).
  const float* hidden_input() const { return dropping ? dropped.as<float>() : phi.as<float>(); }
  const float* head_input() const { return hidden > 0 ? hid.as<float>() : phi.as<float>(); }

  // A training step's dropout mask (the CPU stepper's: the same generator, seed and entry order), uploaded for the
  // batch just uploaded; `on` false (evaluation, or a model without dropout) turns the mask off.
  void set_dropout(bool on, uint64_t seed) {
    dropping = on && hidden > 0 && dropout > 0;
    if (!dropping) return;
    keep_host = otke_dropout_mask(batch, dim, dropout, seed);
    copy_in(keep, keep_host.data(), static_cast<size_t>(batch) * dim);
  }
  // The mask of the next Adam step (CpuOtkeStepper::step_options).
  void set_step_dropout(int rank = 0) { set_dropout(true, otke_step_dropout_seed(lo.dropout_seed, adam_steps, rank)); }

  // Cross-entropy and the gradients of head and references; returns the mean loss (synchronises).
  double backward() {
    head_loss(head_args(true), loss.as<double>(), s());
    blas->gemm(classes, hd, batch, 1.f, {dlogits.as<float>(), classes, true}, {head_input(), hd}, 0.f,
               g_weight.as<float>(), hd);
    column_sums(dlogits.as<float>(), g_bias.as<float>(), batch, classes, s());
    if (hidden > 0) {
      // dpre = (dlogits W) o [h > 0]; dW_h = dpre^T Phi', db_h = column sums of dpre
      blas->gemm(batch, hidden, classes, 1.f, {dlogits.as<float>(), classes}, {weight.as<float>(), hidden}, 0.f,
                 dhid.as<float>(), hidden);
      relu_gate(dhid.as<float>(), hid.as<float>(), static_cast<int64_t>(batch) * hidden, s());
      blas->gemm(hidden, dim, batch, 1.f, {dhid.as<float>(), hidden, true}, {hidden_input(), dim}, 0.f,
                 g_hid_w.as<float>(), dim);
      column_sums(dhid.as<float>(), g_hid_b.as<float>(), batch, hidden, s());
    }
    if (lo.references || want_dpsi()) {
      const float* xf = features();
      const int64_t nk = static_cast<int64_t>(n_max) * k, np = static_cast<int64_t>(n_max) * p;
      if (hidden > 0) {
        // dPhi = (dpre W_h) o mask
        blas->gemm(batch, dim, hidden, 1.f, {dhid.as<float>(), hidden}, {hid_w.as<float>(), dim}, 0.f, dphi.as<float>(),
                   dim);
        if (dropping)
          multiply(dphi.as<float>(), dphi.as<float>(), keep.as<float>(), static_cast<int64_t>(batch) * dim, s());
      } else {
        blas->gemm(batch, dim, classes, 1.f, {dlogits.as<float>(), classes}, {weight.as<float>(), dim}, 0.f,
                   dphi.as<float>(), dim);
      }
      for (int r = 0; r < q; ++r) {
        // dL/d(P o Spos)_b = c psi_b (dPhi_b^r)^T, then through the weighting to dL/dP
        blas->gemm(n_max, p, k, scale, {xf, k, false, nk}, {at(dphi, static_cast<size_t>(r) * p * k), k, true, dim},
                   0.f, gplan.as<float>(), p, np, batch);
        if (host.config.otk.sigma_pos > 0)
          positional_weighting(gplan.as<float>(), gplan.as<float>(), n.as<int32_t>(), batch, n_max, p,
                               host.config.otk.sigma_pos, s());
        if (implicit)
          sinkhorn_implicit_backward_device(problem(r), so, at(plan, r * matrix()), gplan.as<float>(), dsim.as<float>(),
                                            implicit_work.data(), implicit_work.bytes(),
                                            implicit_ok.as<int32_t>() + static_cast<size_t>(r) * batch, s());
        else
          sinkhorn_log_backward_device(problem(r), so, at(tape, r * tape_floats()), at(plan, r * matrix()),
                                       gplan.as<float>(), dsim.as<float>(), s());
        // dz_r = sum_b dS_b^T psi_b: one product over every (padded) row of the batch, padding rows being 0
        if (lo.references)
          blas->gemm(p, k, batch * n_max, 1.f, {dsim.as<float>(), p, true}, {xf, k}, 0.f,
                     at(g_refs, static_cast<size_t>(r) * p * k), k);
        if (want_dpsi()) {
          // dL/dpsi_b += c (P o Spos)_b dPhi_b^r + dS_b z_r (zero on padding rows: P and dS are)
          const float* weights = host.config.otk.sigma_pos > 0 ? at(wplan, r * matrix()) : at(plan, r * matrix());
          blas->gemm(n_max, k, p, scale, {weights, p, false, np},
                     {at(dphi, static_cast<size_t>(r) * p * k), k, false, dim}, r == 0 ? 0.f : 1.f, dpsi.as<float>(), k,
                     nk, batch);
          blas->gemm(static_cast<int>(rows()), k, p, 1.f, {dsim.as<float>(), p}, {at(refs, r * p * k), k}, 1.f,
                     dpsi.as<float>(), k);
        }
      }
      if (!otk) pool_backward(pool_args(), s());  // only the anchors learn below a mean/max pooling
      if (nystrom && (train_anchors || train_tokens)) nystrom_backward();
      if (conv && want_dpsi()) conv_backward();
      if (train_tokens) token_backward();
    }
    double sum = 0;
    const bool flags = implicit && (lo.references || want_dpsi());
    if (flags) {
      implicit_ok_host.resize(static_cast<size_t>(q) * batch);
      check(cudaMemcpyAsync(implicit_ok_host.data(), implicit_ok.data(), implicit_ok_host.size() * sizeof(int32_t),
                            cudaMemcpyDeviceToHost, s()),
            "cudaMemcpyAsync");
    }
    check(cudaMemcpyAsync(&sum, loss.data(), sizeof sum, cudaMemcpyDeviceToHost, s()), "cudaMemcpyAsync");
    check(cudaStreamSynchronize(s()), "otke step");
    if (flags)
      for (size_t e = 0; e < implicit_ok_host.size(); ++e)
        INDUCTIVE_CHECK(implicit_ok_host[e] == 1, ErrorCode::kInvalidArgument, "otke train (cuda): set ", e % batch,
                        " of the batch has a degenerate plan for reference ", e / batch,
                        " (its Schur complement is singular or the gradient is not finite); use the unrolled gradient");
    return sum / head_args(false).loss_divisor();
  }

  // The loss at the top of the head (otke_head_ops.h); without labels it only adds the bias.
  otke_head::Args head_args(bool with_labels) {
    otke_head::Args a;
    a.logits = logits.as<float>();
    a.bias = bias.as<float>();
    a.labels = with_labels ? labels.as<int32_t>() : nullptr;
    a.dlogits = dlogits.as<float>();
    a.batch = batch;
    a.classes = classes;
    a.multilabel = multilabel;
    return a;
  }

  // Nystrom::backward on the device: grad_w_direct and grad_factor (then Nystrom::anchor_gradient on the host) when
  // the anchors learn, grad_x (otke_nystrom_ops.h) when a token table below learns.
  void nystrom_backward() {
    otke_nystrom::Args a;
    a.xhat = xhat.as<float>();
    a.norm = norm.as<float>();
    a.psi = psi.as<float>();
    a.dpsi = dpsi.as<float>();
    a.grad_norm = grad_norm.as<float>();
    a.dx = dx.as<float>();
    a.rows = rows();
    a.d = d;
    a.k = k;
    a.keep_norm = keep_norm;
    if (keep_norm && train_tokens) nystrom_norm_gradient(a, s());  // reads dpsi before its scaling
    if (keep_norm) scale_rows(dpsi.as<float>(), norm.as<float>(), rows(), k, s());
    const int m = static_cast<int>(rows());
    if (train_anchors)
      blas->gemm(k, k, m, 1.f, {kx.as<float>(), k, true}, {dpsi.as<float>(), k}, 0.f, g_factor.as<float>(), k);
    blas->gemm(m, k, k, 1.f, {dpsi.as<float>(), k}, {factor.as<float>(), k}, 0.f, da.as<float>(), k);
    kappa_backward(da.as<float>(), kx.as<float>(), rows() * k, sigma, s());
    if (train_tokens) {
      blas->gemm(m, d, k, 1.f, {da.as<float>(), k}, {anchors.as<float>(), d}, 0.f, dx.as<float>(), d);  // dL/dxhat
      nystrom_input_gradient(a, s());
    }
    if (!train_anchors) return;
    blas->gemm(k, d, m, 1.f, {da.as<float>(), k, true}, {xhat.as<float>(), d}, 0.f, g_wdirect.as<float>(), d);
    MatF gw(k, d), gf(k, k);
    copy_out(gw.data(), g_wdirect, static_cast<size_t>(k) * d);
    copy_out(gf.data(), g_factor, static_cast<size_t>(k) * k);
    check(cudaStreamSynchronize(s()), "nystrom backward");
    anchor_grad = host.nystrom.anchor_gradient(gw, gf);
  }

  // dpre = dL/dpsi o [psi > 0] in place, then dW = dpre^T x and db = the column sums of dpre (padding rows: dpre is 0);
  // for a token table, dL/dx = dpre W.
  void conv_backward() {
    relu_gate(dpsi.as<float>(), psi.as<float>(), rows() * k, s());
    if (train_conv) {
      blas->gemm(k, d, static_cast<int>(rows()), 1.f, {dpsi.as<float>(), k, true}, {inputs(), d}, 0.f,
                 g_conv_w.as<float>(), d);
      column_sums(dpsi.as<float>(), g_conv_b.as<float>(), static_cast<int>(rows()), k, s());
    }
    if (train_tokens)
      blas->gemm(static_cast<int>(rows()), d, k, 1.f, {dpsi.as<float>(), k}, {conv_w.as<float>(), d}, 0.f,
                 dx.as<float>(), d);
  }

  // The lookup's adjoint: dL/d(local features) (the pooling's dL/dpsi itself under the identity embedding) summed
  // into the rows of the tokens (padding rows add 0 to row 0).
  void token_backward() {
    token_table_gradient(g_table.as<float>(), vocab, want_dx() ? dx.as<float>() : dpsi.as<float>(), ids.as<int32_t>(),
                         rows(), d, s());
  }

  void upload_anchors() {
    copy_in(anchors, host.nystrom.anchors().data(), static_cast<size_t>(k) * d);
    copy_in(factor, host.nystrom.factor().data(), static_cast<size_t>(k) * k);
  }

  void adam(double lr) {
    ++adam_steps;
    const elementwise::AdamCoefficients c = elementwise::adam_coefficients(
        lr, adam_options.beta1, adam_options.beta2, adam_options.eps, adam_options.weight_decay, adam_steps);
    adam_step(weight.as<float>(), m_weight.as<float>(), v_weight.as<float>(), g_weight.as<float>(),
              static_cast<int64_t>(classes) * hd, c, true, s());
    adam_step(bias.as<float>(), m_bias.as<float>(), v_bias.as<float>(), g_bias.as<float>(), classes, c, false, s());
    if (hidden > 0) {
      adam_step(hid_w.as<float>(), m_hid_w.as<float>(), v_hid_w.as<float>(), g_hid_w.as<float>(),
                static_cast<int64_t>(hidden) * dim, c, true, s());
      adam_step(hid_b.as<float>(), m_hid_b.as<float>(), v_hid_b.as<float>(), g_hid_b.as<float>(), hidden, c, false,
                s());
    }
    if (lo.references)
      adam_step(refs.as<float>(), m_refs.as<float>(), v_refs.as<float>(), g_refs.as<float>(),
                static_cast<int64_t>(q) * p * k, c, false, s());
    if (train_tokens)
      adam_step(table.as<float>(), m_table.as<float>(), v_table.as<float>(), g_table.as<float>(),
                static_cast<int64_t>(vocab) * d, c, true, s());
    if (train_conv) {
      adam_step(conv_w.as<float>(), m_conv_w.as<float>(), v_conv_w.as<float>(), g_conv_w.as<float>(),
                static_cast<int64_t>(k) * d, c, true, s());
      adam_step(conv_b.as<float>(), m_conv_b.as<float>(), v_conv_b.as<float>(), g_conv_b.as<float>(), k, c, false, s());
    }
    if (train_anchors) {
      // On the host, like the CPU stepper: Adam on the anchors, then set_anchors renormalises and refactors.
      MatF w = host.nystrom.anchors();
      for (Eigen::Index e = 0; e < w.size(); ++e)
        elementwise::adam_update(w.data()[e], m_anchors[e], v_anchors[e], anchor_grad.data()[e], c, false);
      host.nystrom.set_anchors(std::move(w));
      upload_anchors();
    }
  }

  // The device gradients this stepper trains, in download_gradients' order: what the ranks sum on the devices.
  std::vector<std::pair<float*, int64_t>> device_gradients() {
    std::vector<std::pair<float*, int64_t>> t = {{g_weight.as<float>(), static_cast<int64_t>(classes) * hd},
                                                 {g_bias.as<float>(), classes}};
    if (hidden > 0) {
      t.push_back({g_hid_w.as<float>(), static_cast<int64_t>(hidden) * dim});
      t.push_back({g_hid_b.as<float>(), hidden});
    }
    if (train_tokens) t.push_back({g_table.as<float>(), static_cast<int64_t>(vocab) * d});
    if (train_conv) {
      t.push_back({g_conv_w.as<float>(), static_cast<int64_t>(k) * d});
      t.push_back({g_conv_b.as<float>(), k});
    }
    if (lo.references) t.push_back({g_refs.as<float>(), static_cast<int64_t>(q) * p * k});
    return t;
  }

  // A rank with no sets this step: zero gradients where the sum reads them.
  void zero_gradients() {
    for (auto [data, count] : device_gradients())
      check(cudaMemsetAsync(data, 0, static_cast<size_t>(count) * sizeof(float), s()), "cudaMemsetAsync");
    if (train_anchors) anchor_grad = MatF::Zero(k, d);
  }

  // The last backward's gradients to the host, shaped as otke_loss gives them (synchronises).
  void download_gradients(OtkeGradients* grads) {
    *grads = OtkeGradients{};
    grads->head_weight.resize(classes, hd);
    grads->head_bias.resize(classes);
    copy_out(grads->head_weight.data(), g_weight, static_cast<size_t>(classes) * hd);
    copy_out(grads->head_bias.data(), g_bias, classes);
    if (hidden > 0) {
      grads->hidden_weight.resize(hidden, dim);
      grads->hidden_bias.resize(hidden);
      copy_out(grads->hidden_weight.data(), g_hid_w, static_cast<size_t>(hidden) * dim);
      copy_out(grads->hidden_bias.data(), g_hid_b, hidden);
    }
    if (train_anchors) grads->anchors = anchor_grad;
    if (train_tokens) {
      grads->tokens.resize(vocab, d);
      copy_out(grads->tokens.data(), g_table, static_cast<size_t>(vocab) * d);
    }
    if (train_conv) {
      grads->conv_weight.resize(k, d);
      grads->conv_bias.resize(k);
      copy_out(grads->conv_weight.data(), g_conv_w, static_cast<size_t>(k) * d);
      copy_out(grads->conv_bias.data(), g_conv_b, k);
    }
    if (lo.references) {
      grads->references.assign(q, MatF(p, k));
      for (int r = 0; r < q; ++r)
        copy_out(grads->references[r].data(), g_refs, static_cast<size_t>(p) * k, static_cast<size_t>(r) * p * k);
    }
    check(cudaStreamSynchronize(s()), "cudaStreamSynchronize");
  }

  // Gradients from the host (the ranks' mean) into the buffers adam() reads; the same shapes download_gradients gives.
  void upload_gradients(const OtkeGradients& g) {
    const auto put = [&](DeviceBuffer& dst, const float* src, int64_t have, int64_t want, const char* what,
                         size_t offset = 0) {
      INDUCTIVE_CHECK(have == want, ErrorCode::kShapeMismatch, "otke train (cuda): ", what, " gradient has ", have,
                      " values, expected ", want);
      copy_in(dst, src, static_cast<size_t>(want), offset);
    };
    put(g_weight, g.head_weight.data(), g.head_weight.size(), static_cast<int64_t>(classes) * hd, "head.weight");
    put(g_bias, g.head_bias.data(), g.head_bias.size(), classes, "head.bias");
    if (hidden > 0) {
      put(g_hid_w, g.hidden_weight.data(), g.hidden_weight.size(), static_cast<int64_t>(hidden) * dim,
          "head.hidden.weight");
      put(g_hid_b, g.hidden_bias.data(), g.hidden_bias.size(), hidden, "head.hidden.bias");
    }
    if (train_anchors) {
      INDUCTIVE_CHECK(g.anchors.rows() == k && g.anchors.cols() == d, ErrorCode::kShapeMismatch,
                      "otke train (cuda): nystrom.anchors gradient is ", g.anchors.rows(), " x ", g.anchors.cols(),
                      ", expected ", k, " x ", d);
      anchor_grad = g.anchors;
    }
    if (train_tokens)
      put(g_table, g.tokens.data(), g.tokens.size(), static_cast<int64_t>(vocab) * d, "tokens.embedding");
    if (train_conv) {
      put(g_conv_w, g.conv_weight.data(), g.conv_weight.size(), static_cast<int64_t>(k) * d, "conv.weight");
      put(g_conv_b, g.conv_bias.data(), g.conv_bias.size(), k, "conv.bias");
    }
    if (lo.references) {
      INDUCTIVE_CHECK(static_cast<int>(g.references.size()) == q, ErrorCode::kShapeMismatch,
                      "otke train (cuda): ", g.references.size(), " reference gradients, expected ", q);
      for (int r = 0; r < q; ++r)
        put(g_refs, g.references[r].data(), g.references[r].size(), static_cast<int64_t>(p) * k, "otk.references",
            static_cast<size_t>(r) * p * k);
    }
  }

  void copy_in(DeviceBuffer& dst, const float* src, size_t count, size_t offset = 0) {
    check(cudaMemcpyAsync(dst.as<float>() + offset, src, count * sizeof(float), cudaMemcpyHostToDevice, s()),
          "cudaMemcpyAsync");
  }
  void copy_out(float* dst, const DeviceBuffer& src, size_t count, size_t offset = 0) {
    check(cudaMemcpyAsync(dst, src.as<float>() + offset, count * sizeof(float), cudaMemcpyDeviceToHost, s()),
          "cudaMemcpyAsync");
  }
};

CudaOtkeStepper::CudaOtkeStepper(int device, const OtkeModel& model, const Adam& adam, const OtkeLossOptions& lo,
                                 RankSums sums)
    : s_(std::make_unique<State>()) {
  s_->rank_sums = sums;
  const OtkeConfig& c = model.config;
  check_cuda_otke_support(c, lo);
  INDUCTIVE_CHECK(c.classes == 0 || (model.head.weight.rows() == c.classes && model.head.weight.cols() == c.head_dim()),
                  ErrorCode::kInvalidArgument, "otke (cuda): the model's head is ", model.head.weight.rows(), " x ",
                  model.head.weight.cols(), ", expected ", c.classes, " x ", c.head_dim());
  State& s = *s_;
  s.device = device;
  s.host = model;
  s.lo = learning_layers(c, lo);  // "anchors" are the Nystrom anchors or the conv filters
  s.otk = c.pooling == OtkePooling::kOtk;
  s.max_pool = c.pooling == OtkePooling::kMax;
  s.implicit = s.otk && lo.sinkhorn_gradient == SinkhornGradient::kImplicit;
  s.q = s.otk ? c.otk.q : 0;
  s.p = c.otk.p;
  s.k = s.otk ? model.pooling.dim() : c.embed_dim();
  s.d = c.feature_dim();
  s.width = c.input_width();
  s.tokens = c.input_type == OtkeInput::kTokens;
  s.train_tokens = s.tokens && s.lo.tokens;
  s.vocab = s.tokens ? static_cast<int>(c.tokens.size()) : 0;
  s.nystrom = c.embedding == OtkeEmbedding::kNystrom;
  s.conv = c.embedding == OtkeEmbedding::kConv;
  s.train_anchors = s.nystrom && s.lo.anchors;
  s.train_conv = s.conv && s.lo.anchors;
  s.sigma = c.nystrom.sigma;
  s.keep_norm = c.nystrom.keep_norm;
  s.classes = std::max(c.classes, 1);  // embedding-only models (no head) keep 1-class buffers that stay unused
  s.has_head = c.classes >= 2;
  s.multilabel = s.has_head && c.multilabel;
  s.dim = c.output_dim();
  s.hidden = s.has_head ? c.hidden : 0;
  s.hd = s.hidden > 0 ? s.hidden : s.dim;
  s.dropout = s.hidden > 0 ? c.dropout : 0.0f;
  s.scale =
      c.otk.scale == OtkScale::kPaper ? static_cast<float>(std::sqrt(double(s.p) / c.otk.q)) : static_cast<float>(s.p);
  s.so.eps = c.otk.eps;
  s.so.max_iter = c.otk.iters;
  s.so.similarity = true;
  check(cudaSetDevice(device), "cudaSetDevice");
  s.stream = std::make_unique<Stream>();
  s.blas = std::make_unique<Blas>(s.stream->get());
  const size_t refs = static_cast<size_t>(s.q) * s.p * s.k, head = static_cast<size_t>(s.classes) * s.hd;
  for (DeviceBuffer* b : {&s.refs, &s.g_refs, &s.m_refs, &s.v_refs}) *b = DeviceBuffer(refs * sizeof(float));
  for (DeviceBuffer* b : {&s.weight, &s.g_weight, &s.m_weight, &s.v_weight}) *b = DeviceBuffer(head * sizeof(float));
  for (DeviceBuffer* b : {&s.bias, &s.g_bias, &s.m_bias, &s.v_bias}) *b = DeviceBuffer(s.classes * sizeof(float));
  s.loss = DeviceBuffer(sizeof(double));
  if (s.nystrom) {
    const size_t kd = static_cast<size_t>(s.k) * s.d * sizeof(float),
                 kk = static_cast<size_t>(s.k) * s.k * sizeof(float);
    s.anchors = DeviceBuffer(kd);
    s.factor = DeviceBuffer(kk);
    s.g_wdirect = DeviceBuffer(s.train_anchors ? kd : 0);
    s.g_factor = DeviceBuffer(s.train_anchors ? kk : 0);
  }
  if (s.conv) {
    const size_t kd = static_cast<size_t>(s.k) * s.d * sizeof(float), kb = static_cast<size_t>(s.k) * sizeof(float);
    s.conv_w = DeviceBuffer(kd);
    s.conv_b = DeviceBuffer(kb);
    for (DeviceBuffer* b : {&s.g_conv_w, &s.m_conv_w, &s.v_conv_w}) *b = DeviceBuffer(s.train_conv ? kd : 0);
    for (DeviceBuffer* b : {&s.g_conv_b, &s.m_conv_b, &s.v_conv_b}) *b = DeviceBuffer(s.train_conv ? kb : 0);
  }
  if (s.hidden > 0) {
    const size_t hw = static_cast<size_t>(s.hidden) * s.dim * sizeof(float), hb = s.hidden * sizeof(float);
    for (DeviceBuffer* b : {&s.hid_w, &s.g_hid_w, &s.m_hid_w, &s.v_hid_w}) *b = DeviceBuffer(hw);
    for (DeviceBuffer* b : {&s.hid_b, &s.g_hid_b, &s.m_hid_b, &s.v_hid_b}) *b = DeviceBuffer(hb);
  }
  if (s.tokens) {
    const size_t vd = static_cast<size_t>(s.vocab) * s.d * sizeof(float);
    s.table = DeviceBuffer(vd);
    for (DeviceBuffer* b : {&s.g_table, &s.m_table, &s.v_table}) *b = DeviceBuffer(s.train_tokens ? vd : 0);
  }
  push(model, adam);
}

CudaOtkeStepper::~CudaOtkeStepper() {
  (void)cudaSetDevice(s_->device);
  (void)cudaStreamSynchronize(s_->s());
}

void CudaOtkeStepper::push(const OtkeModel& model, const Adam& adam) {
  State& s = *s_;
  check(cudaSetDevice(s.device), "cudaSetDevice");
  s.host = model;
  s.adam_options = adam.options();
  s.adam_steps = adam.steps();
  const size_t ref = static_cast<size_t>(s.p) * s.k, head = static_cast<size_t>(s.classes) * s.hd,
               hw = static_cast<size_t>(s.hidden) * s.dim;
  for (int r = 0; r < s.q; ++r) s.copy_in(s.refs, model.pooling.references()[r].data(), ref, r * ref);
  if (s.has_head) {
    s.copy_in(s.weight, model.head.weight.data(), head);
    s.copy_in(s.bias, model.head.bias.data(), s.classes);
  }
  if (s.hidden > 0) {
    INDUCTIVE_CHECK(model.hidden.weight.rows() == s.hidden && model.hidden.weight.cols() == s.dim &&
                        model.hidden.bias.size() == s.hidden,
                    ErrorCode::kShapeMismatch, "otke train (cuda): the model's hidden layer is ",
                    model.hidden.weight.rows(), " x ", model.hidden.weight.cols(), ", expected ", s.hidden, " x ",
                    s.dim);
    s.copy_in(s.hid_w, model.hidden.weight.data(), hw);
    s.copy_in(s.hid_b, model.hidden.bias.data(), s.hidden);
  }
  if (s.nystrom) {
    INDUCTIVE_CHECK(model.nystrom.num_anchors() == s.k && model.nystrom.dim() == s.d, ErrorCode::kShapeMismatch,
                    "otke train (cuda): the model's anchors are ", model.nystrom.num_anchors(), " x ",
                    model.nystrom.dim(), ", expected ", s.k, " x ", s.d);
    s.upload_anchors();
    s.m_anchors.assign(static_cast<size_t>(s.k) * s.d, 0.0f);
    s.v_anchors.assign(static_cast<size_t>(s.k) * s.d, 0.0f);
  }
  if (s.tokens) {
    INDUCTIVE_CHECK(model.token_table.rows() == s.vocab && model.token_table.cols() == s.d, ErrorCode::kShapeMismatch,
                    "otke train (cuda): the model's token table is ", model.token_table.rows(), " x ",
                    model.token_table.cols(), ", expected ", s.vocab, " x ", s.d, " (is the model fitted?)");
    s.copy_in(s.table, model.token_table.data(), static_cast<size_t>(s.vocab) * s.d);
  }
  if (s.conv) {
    INDUCTIVE_CHECK(model.conv_weight.rows() == s.k && model.conv_weight.cols() == s.d && model.conv_bias.size() == s.k,
                    ErrorCode::kShapeMismatch, "otke train (cuda): the model's conv filters are ",
                    model.conv_weight.rows(), " x ", model.conv_weight.cols(), " with ", model.conv_bias.size(),
                    " biases, expected ", s.k, " x ", s.d, " with ", s.k);
    s.copy_in(s.conv_w, model.conv_weight.data(), static_cast<size_t>(s.k) * s.d);
    s.copy_in(s.conv_b, model.conv_bias.data(), s.k);
  }
  // Moments by the CPU's block names; a block Adam has not seen yet starts at zero.
  for (DeviceBuffer* b :
       {&s.m_refs, &s.v_refs, &s.m_weight, &s.v_weight, &s.m_bias, &s.v_bias, &s.m_conv_w, &s.v_conv_w, &s.m_conv_b,
        &s.v_conv_b, &s.m_table, &s.v_table, &s.m_hid_w, &s.v_hid_w, &s.m_hid_b, &s.v_hid_b})
    if (b->bytes()) check(cudaMemsetAsync(b->data(), 0, b->bytes(), s.s()), "cudaMemsetAsync");
  for (const Adam::Moments& m : adam.moments()) {
    DeviceBuffer *dm = nullptr, *dv = nullptr;
    size_t count = 0, offset = 0;
    if (m.name == "head.weight") dm = &s.m_weight, dv = &s.v_weight, count = head;
    if (m.name == "head.bias") dm = &s.m_bias, dv = &s.v_bias, count = s.classes;
    if (m.name == "head.hidden.weight" && s.hidden > 0) dm = &s.m_hid_w, dv = &s.v_hid_w, count = hw;
    if (m.name == "head.hidden.bias" && s.hidden > 0) dm = &s.m_hid_b, dv = &s.v_hid_b, count = s.hidden;
    if (m.name == "tokens.embedding" && s.train_tokens)
      dm = &s.m_table, dv = &s.v_table, count = static_cast<size_t>(s.vocab) * s.d;
    if (m.name == "conv.weight" && s.train_conv)
      dm = &s.m_conv_w, dv = &s.v_conv_w, count = static_cast<size_t>(s.k) * s.d;
    if (m.name == "conv.bias" && s.train_conv) dm = &s.m_conv_b, dv = &s.v_conv_b, count = s.k;
    if (m.name == "nystrom.anchors" && s.train_anchors) {
      INDUCTIVE_CHECK(m.m.size() == s.m_anchors.size() && m.v.size() == s.v_anchors.size(), ErrorCode::kShapeMismatch,
                      "otke train (cuda): Adam moments of 'nystrom.anchors' have ", m.m.size(), " values, expected ",
                      s.m_anchors.size());
      s.m_anchors = m.m;
      s.v_anchors = m.v;
      continue;
    }
    for (int r = 0; r < s.q; ++r)
      if (m.name == reference_name(r)) dm = &s.m_refs, dv = &s.v_refs, count = ref, offset = r * ref;
    if (!dm) continue;  // a block this stepper does not train
    INDUCTIVE_CHECK(m.m.size() == count, ErrorCode::kShapeMismatch, "otke train (cuda): Adam moments of '", m.name,
                    "' have ", m.m.size(), " values, expected ", count);
    s.copy_in(*dm, m.m.data(), count, offset);
    s.copy_in(*dv, m.v.data(), count, offset);
  }
  check(cudaStreamSynchronize(s.s()), "cudaStreamSynchronize");
}

void CudaOtkeStepper::pull(OtkeModel& model, Adam& adam) {
  State& s = *s_;
  check(cudaSetDevice(s.device), "cudaSetDevice");
  const size_t ref = static_cast<size_t>(s.p) * s.k, head = static_cast<size_t>(s.classes) * s.hd,
               hw = static_cast<size_t>(s.hidden) * s.dim;
  std::vector<MatF> refs(s.q, MatF(s.p, s.k));
  for (int r = 0; r < s.q; ++r) s.copy_out(refs[r].data(), s.refs, ref, r * ref);
  if (s.has_head) {
    s.copy_out(s.host.head.weight.data(), s.weight, head);
    s.copy_out(s.host.head.bias.data(), s.bias, s.classes);
  }
  if (s.hidden > 0) {
    s.copy_out(s.host.hidden.weight.data(), s.hid_w, hw);
    s.copy_out(s.host.hidden.bias.data(), s.hid_b, s.hidden);
  }
  if (s.tokens) s.copy_out(s.host.token_table.data(), s.table, static_cast<size_t>(s.vocab) * s.d);
  if (s.conv) {
    s.copy_out(s.host.conv_weight.data(), s.conv_w, static_cast<size_t>(s.k) * s.d);
    s.copy_out(s.host.conv_bias.data(), s.conv_b, s.k);
  }
  // The CPU stepper's block order (head, hidden layer, tokens, anchors, conv, then references), so checkpoints hold the
  // same tensors in the same order.
  std::vector<Adam::Moments> moments;
  // One block's moments, copied from the device (the vectors' buffers survive the push_backs that move them).
  const auto add = [&](const std::string& name, const DeviceBuffer& m, const DeviceBuffer& v, size_t count,
                       size_t offset = 0) {
    moments.push_back({name, std::vector<float>(count), std::vector<float>(count)});
    s.copy_out(moments.back().m.data(), m, count, offset);
    s.copy_out(moments.back().v.data(), v, count, offset);
  };
  if (s.adam_steps > 0) {
    add("head.weight", s.m_weight, s.v_weight, head);
    add("head.bias", s.m_bias, s.v_bias, s.classes);
    if (s.hidden > 0) {
      add("head.hidden.weight", s.m_hid_w, s.v_hid_w, hw);
      add("head.hidden.bias", s.m_hid_b, s.v_hid_b, s.hidden);
    }
    if (s.train_tokens) add("tokens.embedding", s.m_table, s.v_table, static_cast<size_t>(s.vocab) * s.d);
    if (s.train_anchors) moments.push_back({"nystrom.anchors", s.m_anchors, s.v_anchors});
    if (s.train_conv) {
      add("conv.weight", s.m_conv_w, s.v_conv_w, static_cast<size_t>(s.k) * s.d);
      add("conv.bias", s.m_conv_b, s.v_conv_b, s.k);
    }
    if (s.lo.references)
      for (int r = 0; r < s.q; ++r) add(reference_name(r), s.m_refs, s.v_refs, ref, r * ref);
  }
  check(cudaStreamSynchronize(s.s()), "cudaStreamSynchronize");
  if (s.otk) s.host.pooling.set_references(std::move(refs));
  model.pooling = s.host.pooling;
  model.head = s.host.head;
  if (s.hidden > 0) model.hidden = s.host.hidden;
  if (s.nystrom) model.nystrom = s.host.nystrom;
  if (s.tokens) model.token_table = s.host.token_table;
  if (s.conv) {
    model.conv_weight = s.host.conv_weight;
    model.conv_bias = s.host.conv_bias;
  }
  adam.restore(std::move(moments), s.adam_steps);
}

double CudaOtkeStepper::step(const SetBatch& features, const std::vector<int32_t>& labels, double lr) {
  const double loss = run_batch(features, labels, nullptr, 0);
  s_->adam(lr);
  return loss;
}

double CudaOtkeStepper::loss_and_gradients(const SetBatch& features, const std::vector<int32_t>& labels,
                                           OtkeGradients* grads) {
  return run_batch(features, labels, grads, -1);
}

double CudaOtkeStepper::run_batch(const SetBatch& features, const std::vector<int32_t>& labels, OtkeGradients* grads,
                                  int dropout_rank) {
  State& s = *s_;
  check_otke_batch(s.host, features, labels);
  if (s.tokens) check_otke_tokens(s.host, features);
  check(cudaSetDevice(s.device), "cudaSetDevice");
  s.upload(features, &labels);
  if (dropout_rank >= 0)
    s.set_step_dropout(dropout_rank);
  else
    s.set_dropout(s.lo.dropout, s.lo.dropout_seed);  // otke_loss's options: no dropout unless asked for
  s.forward(true);
  const double loss = s.backward();
  if (grads) s.download_gradients(grads);
  return loss;
}

double CudaOtkeStepper::share_gradients(const std::vector<int>& indices, const std::vector<int32_t>& labels, int rank,
                                        OtkeGradients* grads) {
  State& s = *s_;
  INDUCTIVE_CHECK(s.bound != nullptr, ErrorCode::kInternal, "otke stepper: share_gradients before bind");
  if (indices.empty()) {
    if (grads) {
      *grads = zero_otke_gradients(s.host, s.lo);
    } else {
      check(cudaSetDevice(s.device), "cudaSetDevice");
      s.zero_gradients();
    }
    return 0.0;
  }
  if (!s.resident) return run_batch(s.bound->gather(indices), labels, grads, rank);
  check_resident_batch(indices, labels);
  check(cudaSetDevice(s.device), "cudaSetDevice");
  s.gather(indices, labels);
  s.set_step_dropout(rank);
  s.forward(true);
  const double loss = s.backward();
  if (grads) s.download_gradients(grads);
  return loss;
}

bool CudaOtkeStepper::sums_on_device(Communicator& comm) {
  State& s = *s_;
  if (s.rank_sums == RankSums::kHost || (s.rank_sums == RankSums::kNccl && comm.size() < 2)) return false;
  if (!s.nccl) {
    check(cudaSetDevice(s.device), "cudaSetDevice");
    s.nccl = std::make_unique<NcclAllreduce>(comm, s.device, s.s());
  }
  s.comm = &comm;
  return true;
}

int64_t CudaOtkeStepper::sum_gradients_on_device(float scale) {
  State& s = *s_;
  INDUCTIVE_CHECK(s.nccl != nullptr && s.comm != nullptr, ErrorCode::kInternal,
                  "otke train (cuda): sum_gradients_on_device before sums_on_device");
  check(cudaSetDevice(s.device), "cudaSetDevice");
  int64_t values = 0;
  for (auto [data, count] : s.device_gradients()) {
    if (scale != 1.0f) scale_values(data, count, scale, s.s());
    s.nccl->start_gradient_sum(data, count);
    values += count;
  }
  s.nccl->finish_gradients();
  if (s.train_anchors) {  // finished on the host (Nystrom::anchor_gradient): summed there
    s.anchor_grad *= scale;
    s.comm->allreduce_sum_float(s.anchor_grad.data(), s.anchor_grad.size());
    values += s.anchor_grad.size();
  }
  return values * static_cast<int64_t>(sizeof(float));
}

void CudaOtkeStepper::apply_gradients_on_device(double lr) {
  State& s = *s_;
  check(cudaSetDevice(s.device), "cudaSetDevice");
  s.adam(lr);
}

void CudaOtkeStepper::apply_gradients(OtkeGradients& grads, double lr) {
  State& s = *s_;
  check(cudaSetDevice(s.device), "cudaSetDevice");
  s.upload_gradients(grads);
  s.adam(lr);
}

void CudaOtkeStepper::check_resident_batch(const std::vector<int>& indices, const std::vector<int32_t>& labels) const {
  const State& s = *s_;
  INDUCTIVE_CHECK(s.has_head, ErrorCode::kInvalidArgument, "otke train: the model has no classifier head");
  INDUCTIVE_CHECK(labels.size() == indices.size(), ErrorCode::kShapeMismatch, "otke loss: ", labels.size(),
                  " labels for ", indices.size(), " sets");
  for (size_t i = 0; i < indices.size(); ++i)
    INDUCTIVE_CHECK(indices[i] >= 0 && indices[i] < s.bound->batch, ErrorCode::kInvalidArgument,
                    "otke train: set index ", indices[i], " out of range");
  check_otke_labels(s.host.config, labels, "otke loss");
}

void CudaOtkeStepper::bind(const SetBatch& d) {
  State& s = *s_;
  check(cudaSetDevice(s.device), "cudaSetDevice");
  INDUCTIVE_CHECK(d.dim == s.width, ErrorCode::kShapeMismatch, "otke train: features have dimension ", d.dim,
                  ", expected ", s.width);
  if (s.tokens) check_otke_tokens(s.host, d);  // once here: resident batches are gathered on the device
  s.bound = &d;
  s.resident = false;
  s.data = DeviceBuffer();
  s.data_n = DeviceBuffer();
  size_t free_bytes = 0, total = 0;
  check(cudaMemGetInfo(&free_bytes, &total), "cudaMemGetInfo");
  const size_t bytes = d.x.size() * sizeof(float);
  if (bytes > std::min(free_bytes / 2, s.resident_limit)) return;  // streamed: step_on gathers on the host
  s.data = DeviceBuffer(bytes);
  s.data_n = DeviceBuffer(d.n.size() * sizeof(int32_t));
  check(cudaMemcpyAsync(s.data.data(), d.x.data(), bytes, cudaMemcpyHostToDevice, s.s()), "cudaMemcpyAsync");
  check(cudaMemcpyAsync(s.data_n.data(), d.n.data(), d.n.size() * sizeof(int32_t), cudaMemcpyHostToDevice, s.s()),
        "cudaMemcpyAsync");
  check(cudaStreamSynchronize(s.s()), "cudaStreamSynchronize");
  s.resident = true;
}

bool CudaOtkeStepper::resident() const { return s_->resident; }

void CudaOtkeStepper::set_resident_limit(size_t bytes) { s_->resident_limit = bytes; }

double CudaOtkeStepper::step_on(const std::vector<int>& indices, const std::vector<int32_t>& labels, double lr) {
  State& s = *s_;
  INDUCTIVE_CHECK(s.bound != nullptr, ErrorCode::kInternal, "otke stepper: step_on before bind");
  if (!s.resident) return step(s.bound->gather(indices), labels, lr);
  check_resident_batch(indices, labels);
  check(cudaSetDevice(s.device), "cudaSetDevice");
  s.gather(indices, labels);
  s.set_step_dropout();
  s.forward(true);
  const double loss = s.backward();
  s.adam(lr);
  return loss;
}

void CudaOtkeStepper::forward_inference(const SetBatch& features) {
  State& s = *s_;
  features.validate("otke embed");
  INDUCTIVE_CHECK(features.dim == s.width, ErrorCode::kShapeMismatch, "otke embed: features have dimension ",
                  features.dim, ", expected ", s.width);
  if (s.tokens) check_otke_tokens(s.host, features);
  check(cudaSetDevice(s.device), "cudaSetDevice");
  s.upload(features, nullptr);
  s.set_dropout(false, 0);
  s.forward(false);
}

MatF CudaOtkeStepper::embed(const SetBatch& features) {
  State& s = *s_;
  forward_inference(features);
  MatF out(s.batch, s.dim);
  s.copy_out(out.data(), s.phi, static_cast<size_t>(s.batch) * s.dim);
  check(cudaStreamSynchronize(s.s()), "cudaStreamSynchronize");
  return out;
}

MatF CudaOtkeStepper::logits(const SetBatch& features) {
  State& s = *s_;
  INDUCTIVE_CHECK(s.has_head, ErrorCode::kInvalidArgument, "otke predict: the model has no classifier head");
  forward_inference(features);
  head_loss(s.head_args(false), nullptr, s.s());
  MatF out(s.batch, s.classes);
  s.copy_out(out.data(), s.logits, static_cast<size_t>(s.batch) * s.classes);
  check(cudaStreamSynchronize(s.s()), "cudaStreamSynchronize");
  return out;
}

size_t CudaOtkeStepper::device_bytes() const {
  size_t total = 0;
  const State& s = *s_;
  for (const DeviceBuffer* b : {&s.refs,      &s.weight,   &s.bias,          &s.g_refs,      &s.g_weight, &s.g_bias,
                                &s.m_refs,    &s.v_refs,   &s.m_weight,      &s.v_weight,    &s.m_bias,   &s.v_bias,
                                &s.x,         &s.n,        &s.labels,        &s.sim,         &s.plan,     &s.wplan,
                                &s.tape,      &s.phi,      &s.logits,        &s.dlogits,     &s.dphi,     &s.gplan,
                                &s.dsim,      &s.loss,     &s.workspace,     &s.index,       &s.psi,      &s.xhat,
                                &s.norm,      &s.kx,       &s.dpsi,          &s.da,          &s.anchors,  &s.factor,
                                &s.g_wdirect, &s.g_factor, &s.implicit_work, &s.implicit_ok, &s.argmax,   &s.conv_w,
                                &s.conv_b,    &s.g_conv_w, &s.g_conv_b,      &s.m_conv_w,    &s.v_conv_w, &s.m_conv_b,
                                &s.v_conv_b,  &s.table,    &s.g_table,       &s.m_table,     &s.v_table,  &s.local,
                                &s.ids,       &s.dx,       &s.hid_w,         &s.hid_b,       &s.g_hid_w,  &s.g_hid_b,
                                &s.m_hid_w,   &s.v_hid_w,  &s.m_hid_b,       &s.v_hid_b,     &s.hid,      &s.dhid,
                                &s.keep,      &s.dropped,  &s.grad_norm})
    total += b->bytes();
  return total;
}

}  // namespace inductive::cuda
