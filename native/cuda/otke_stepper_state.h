// native/cuda/otke_stepper_state.h - what a CudaOtkeStepper holds on its device and the operations of one step on it
// (otke_stepper_cuda.cpp only: the stepper's public methods drive this State). Forward: S = psi z^T, Sinkhorn, the
// pooling, the head, the loss; backward in reverse through the same operations; Adam; the gradients' and parameters'
// copies between host and device.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

#include "blas.h"
#include "cuda_util.h"
#include "inductive/communicator.h"
#include "inductive/error.h"
#include "nccl_allreduce.h"
#include "otke_kernels.h"
#include "otke_stepper_cuda.h"
#include "sinkhorn_kernels.h"

namespace inductive::cuda {

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

}  // namespace inductive::cuda
