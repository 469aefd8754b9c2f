// inductive/otk_pooling.h - the optimal transport kernel embedding's pooling layer (thesis ch. 2, §§1.3-1.6).
//
// For an embedded set psi (n x k, mass 1/n per element) and q references z^r (p x k, mass 1/p per support):
//   P^r = Sinkhorn(similarity S = psi z^r^T, eps, iters)           n x p, rows sum to 1/n, columns to 1/p
//   P^r <- P^r o Spos,  Spos_ij = exp(-(i/n - j/p)^2 / sigma_pos^2)  (optional; n the TRUE length, 0-based i, j)
//   Phi^r = c P^r^T psi                                              p x k
//   Phi = (Phi^1, ..., Phi^q) flattened to q p k, reference-major then support-major
// with c = sqrt(p / q) (the paper's scale, default) or c = p (`otk-compatible`: the public OTK code's scale, whose
// plan has row mass p/n and whose heads are concatenated without 1/sqrt(q)). Padding never changes a set's output.
// Sinkhorn runs in the log domain with a fixed number of iterations. Its gradient is either unrolled (exact for
// those iterations; recomputes the softmaxes from a tape of n + p values per iteration instead of storing n x p per
// iteration) or implicit (differentiates the converged map; no tape: memory independent of `iters`).
//
// Two ablations of the thesis (ch. 2, "dot-product instead of OT" and the DeepSEA positional-encoding comparison):
//   plan "attention":  P^r_ij = softmax_i(S_ij / eps) / p   each support attends over the set's elements (one
//                      column normalisation, no row constraint): the columns sum to 1/p as the OT plan's do, so the
//                      scale c and everything after the plan are unchanged; `iters` is not used.
//   sinusoidal:        psi_i <- psi_i + PE(i) / sqrt(k / 2) before pooling, PE Vaswani et al.'s encoding of the
//                      0-based position i (PE_2m = sin(i / 10000^(2m/k)), PE_2m+1 = cos(...)); the 1/sqrt(k/2) makes
//                      |PE| = 1 (for even k), the scale of the unit-norm features it is added to. Independent of
//                      sigma_pos (the thesis compares the two one at a time).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "inductive/enum_names.h"
#include "inductive/linalg.h"
#include "inductive/set_batch.h"
#include "inductive/sinkhorn.h"

namespace inductive {

enum class OtkScale { kPaper, kOtkCompatible };
enum class OtkPlan : uint8_t { kSinkhorn, kAttention };
inline constexpr EnumName<OtkPlan> kOtkPlans[] = {{OtkPlan::kSinkhorn, "sinkhorn"}, {OtkPlan::kAttention, "attention"}};
template <>
struct EnumTable<OtkPlan> {
  static constexpr const auto& names = kOtkPlans;
};
inline constexpr EnumName<OtkScale> kOtkScales[] = {{OtkScale::kPaper, "paper"},
                                                    {OtkScale::kOtkCompatible, "otk-compatible"}};
template <>
struct EnumTable<OtkScale> {
  static constexpr const auto& names = kOtkScales;
};
inline const char* otk_scale_name(OtkScale s) { return name_of(s); }
inline OtkScale parse_otk_scale(const std::string& name) { return parse_enum(kOtkScales, name, "otk scale"); }

struct OtkOptions {
  int p = 64;              // supports per reference
  int q = 1;               // references
  double eps = 0.5;        // entropic regularisation (thesis: 0.5 SCOP, 1.0 DeepSEA, 3.0 SST-2)
  int iters = 10;          // Sinkhorn iterations (thesis: 10 supervised, 100 unsupervised)
  float sigma_pos = 0.0f;  // > 0: positional weighting (thesis DeepSEA: 0.1); 0: off
  OtkScale scale = OtkScale::kPaper;
  OtkPlan plan = OtkPlan::kSinkhorn;  // kAttention: the dot-product ablation (see above)
  bool sinusoidal = false;            // add the sinusoidal positional encoding to psi (see above)
  void validate() const;
};

class OtkPooling {
 public:
  OtkPooling() = default;
  // references: q matrices p x k.
  OtkPooling(std::vector<MatF> references, OtkOptions options);

  const OtkOptions& options() const { return options_; }
  int dim() const { return static_cast<int>(refs_.empty() ? 0 : refs_[0].cols()); }
  int output_dim() const { return options_.q * options_.p * dim(); }
  const std::vector<MatF>& references() const { return refs_; }
  void set_references(std::vector<MatF> references);

  struct Cache {
    SinkhornGradient gradient = SinkhornGradient::kUnrolled;  // set before forward: how backward differentiates
    std::vector<std::vector<float>> plans;   // per reference [batch, n_max, p] (before positional weighting)
    std::vector<SinkhornTape<float>> tapes;  // per reference; empty for the implicit gradient
    // With one reference: the similarities x z^T [batch, n_max, p], which backward would otherwise recompute (the
    // Sinkhorn backward reads them as logits). Backward needs a buffer of this size for them either way, so keeping
    // it from forward costs no peak memory and saves a product; with q references it would cost q - 1 more.
    std::vector<float> similarities;
  };

  // psi: [batch, n_max, k] with lengths. Returns batch x output_dim. `cache` (for backward) and `plans_out` (per
  // reference, the plans after positional weighting, for visualisation) are optional.
  MatF forward(const SetBatch& psi, Cache* cache = nullptr, std::vector<std::vector<float>>* plans_out = nullptr) const;

  // grad_out: batch x output_dim. Writes dL/dpsi (same layout as psi, padding 0) and adds dL/dz^r to grad_refs
  // (resized to q matrices p x k when empty).
  void backward(const SetBatch& psi, const Cache& cache, const Eigen::Ref<const MatF>& grad_out, SetBatch* grad_psi,
                std::vector<MatF>* grad_refs) const;

  // dL/dPhi of set b's row from the row itself (output_dim floats each): a loss whose gradient with respect to a
  // set's embedding depends on that set's embedding only (a linear head and a per-set loss). Called on the thread
  // that pools set b, for several sets at once.
  using RowGradient = std::function<void(int b, const float* phi, float* grad_phi)>;
  // forward and backward in one pass over the sets: set b's forward, row_gradient(b), then set b's backward, while
  // its features are still in cache (at k 512 a batch of 64 sets is 78 MB, past L3, and forward then backward read
  // every set from memory twice). Returns Phi as forward does, and writes dL/dpsi (optional) and adds dL/dz^r to
  // grad_refs as backward does, with the same bits. Keeps no B x n x p buffer: per thread, one set's similarities,
  // plans and tapes. On an error neither gradient is touched.
  MatF forward_backward(const SetBatch& psi, SinkhornGradient gradient, const RowGradient& row_gradient,
                        SetBatch* grad_psi, std::vector<MatF>* grad_refs) const;

 private:
  struct SetMaths;  // one set's forward and backward (otk_pooling.cpp)
  // The batch as pooled (psi, or psi plus the sinusoidal encoding, written to `encoded`), after its shape checks.
  const SetBatch& checked_features(const SetBatch& embedded, SetBatch& encoded) const;
  float scale() const;
  SinkhornOptions sinkhorn_options() const;
  std::vector<MatF> refs_;
  OtkOptions options_;
};

// Spos for one set (n x p, row-major): exp(-(i/n - j/p)^2 / sigma^2).
void positional_weights(int n, int p, float sigma, float* out);

// The unit-norm sinusoidal encoding of 0-based position i in dimension k (see above), into out[0..k).
void sinusoidal_encoding(int64_t i, int k, float* out);
// psi + the sinusoidal encoding of each element's position in its set (padding stays 0).
SetBatch add_sinusoidal_encoding(const SetBatch& psi);

}  // namespace inductive
