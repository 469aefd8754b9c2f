// native/cuda/otke_nystrom_ops.h - the input gradient of the Nystrom embedding (core's Nystrom::backward, its grad_x
// part) as per-row functors, written once for the CUDA kernels (otke_kernels.cu) and for the CPU executor that tests
// them (tests/device/otke_nystrom_pass_test.cpp). The device needs it where a token table learns under a Nystrom
// embedding: dL/d(looked-up features) is what the table's rows sum.
//
// psi_i = kappa(xhat_i W^T) F (times ||x_i|| with keep_norm), xhat_i = x_i / max(||x_i||, floor). The products
// around it are cuBLAS's (da = dL/dpsi' F o kx / sigma^2, dL/dxhat = da W, dpsi' = ||x|| dpsi with keep_norm);
// these functors are the row-wise parts:
// - NormGrad (keep_norm only; before dpsi is scaled): dL/d||x_i|| = <(kx F)_i, dpsi_i> = <psi_i, dpsi_i> / ||x_i||,
//   0 for a zero row (whose psi is 0);
// - InputGrad, in place on dL/dxhat: the radial part projected out, (g - <xhat, g> xhat) / ||x|| above the floor,
//   g / floor below it; with keep_norm plus dL/d||x|| xhat (times ||x|| / floor below the floor).
#pragma once

#include <cstdint>

#include "inductive/elementwise.h"

namespace inductive::otke_nystrom {

struct Args {
  const float* xhat = nullptr;  // [rows, d]
  const float* norm = nullptr;  // [rows], ||x_i|| before the floor
  const float* psi = nullptr;   // [rows, k], the embedding (keep_norm: read by NormGrad)
  const float* dpsi = nullptr;  // [rows, k], dL/dpsi before the norm's scaling (NormGrad)
  float* grad_norm = nullptr;   // [rows], dL/d||x|| (keep_norm: written by NormGrad, read by InputGrad)
  float* dx = nullptr;          // [rows, d]: dL/dxhat in, dL/dx out
  int64_t rows = 0;
  int d = 0, k = 0;
  bool keep_norm = false;
};

struct NormGrad {
  Args a;
  INDUCTIVE_HD void operator()(int64_t i) const {
    const float nrm = a.norm[i];
    if (!(nrm > 0.0f)) {
      a.grad_norm[i] = 0.0f;
      return;
    }
    const float* p = a.psi + i * a.k;
    const float* g = a.dpsi + i * a.k;
    float s = 0.0f;
    for (int j = 0; j < a.k; ++j) s += p[j] * g[j];
    a.grad_norm[i] = s / nrm;
  }
};

struct InputGrad {
  Args a;
  INDUCTIVE_HD void operator()(int64_t i) const {
    const float nrm = a.norm[i];
    const float* xh = a.xhat + i * a.d;
    float* g = a.dx + i * a.d;
    constexpr float floor = elementwise::kNystromNormFloor;
    if (nrm > floor) {
      float radial = 0.0f;
      for (int c = 0; c < a.d; ++c) radial += xh[c] * g[c];
      for (int c = 0; c < a.d; ++c) g[c] = (g[c] - radial * xh[c]) / nrm;
    } else {
      for (int c = 0; c < a.d; ++c) g[c] = g[c] / floor;
    }
    if (a.keep_norm && nrm > 0.0f) {
      const float t = a.grad_norm[i] * (nrm > floor ? 1.0f : nrm / floor);
      for (int c = 0; c < a.d; ++c) g[c] += t * xh[c];
    }
  }
};

// The passes on an executor with `launch(count, functor)` (graphit_exec_host.h's HostExec, or the CUDA one).
template <typename Exec>
void norm_gradient(Exec& exec, const Args& a) {
  exec.launch(a.rows, NormGrad{a});
}
template <typename Exec>
void input_gradient(Exec& exec, const Args& a) {
  exec.launch(a.rows, InputGrad{a});
}

}  // namespace inductive::otke_nystrom
