// inductive/graph_kernels.h - kernels on graphs and Laplacian positional encodings for GraphiT (thesis ch. 3).
//
// Everything comes from the symmetric normalised Laplacian built as PyTorch Geometric's
// get_laplacian(normalization="sym") builds it, which the public GraphiT code uses:
//     L = I - D^-1/2 A D^-1/2,   A without self-loops, D the degrees; an isolated node has D^-1/2 = 0, so L_ii = 1.
// One symmetric eigendecomposition L = U diag(lambda) U^T (double precision) per graph then gives
//     diffusion       K = exp(-beta L) = U diag(exp(-beta lambda)) U^T        (beta = 1 in the thesis)
//     p-step walk     K = (I - gamma L)^p = U diag((1 - gamma lambda)^p) U^T  (gamma = 0.5, p = 2 or 3)
//     adjacency       K = D^-1/2 A D^-1/2 = I - L, zero diagonal              (= p-step with p = 1, gamma = 1)
// and LapPE: the eigenvectors of the m smallest non-trivial eigenvalues. Eigenvalues lie in [0, 2]; the diffusion
// kernel is symmetric positive definite, the p-step kernel is PSD for even p (and for any p when gamma <= 1/2,
// since then 1 - gamma lambda >= 0), the adjacency kernel is symmetric and indefinite.
//
// Single-node graphs (L = [1]), disconnected graphs and inputs with self-loops (dropped: see graph.h) are fine.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "inductive/graph.h"
#include "inductive/linalg.h"

namespace inductive {

// The normalised Laplacian of `g` (n x n, symmetric).
MatD normalized_laplacian(const Graph& g);

struct GraphSpectrum {
  Eigen::VectorXd eigenvalues;  // n, ascending, clamped to [0, 2] (round-off can push them just outside)
  MatD eigenvectors;            // n x n, column j for eigenvalue j; orthonormal; sign fixed (see below)
  MatD laplacian;               // L itself, so that the adjacency kernel is exact
  int n_nodes() const { return static_cast<int>(eigenvalues.size()); }
};

// Largest graph graph_spectrum accepts (dense n x n double matrices, O(n^3) time: ~2 s and 200 MB at the limit).
inline constexpr int kMaxSpectrumNodes = 4096;

// One decomposition per graph (Eigen::SelfAdjointEigenSolver). Each eigenvector's sign is fixed so that its entry
// of largest magnitude (the first one, on ties within 1e-9) is positive: the same LapPE on every build, whatever
// sign the solver happened to return. Throws Error{kInternal} if the solver fails (it does not on finite input).
GraphSpectrum graph_spectrum(const Graph& g);

enum class GraphKernelType { kDiffusion, kPStep, kAdjacency };

struct GraphKernelOptions {
  GraphKernelType type = GraphKernelType::kDiffusion;
  double beta = 1.0;           // diffusion: exp(-beta L), beta >= 0 (beta = 0 gives I)
  double gamma = 0.5;          // p-step: (I - gamma L)^p, gamma > 0 (the paper: 0.5; the reference scripts: 1.0)
  int p = 2;                   // p-step: p >= 1
  bool zero_diagonal = false;  // set K_ii = 0 (the adjacency kernel always has a zero diagonal)
  void validate() const;
  std::string describe() const;  // e.g. "diffusion(beta=1)"; stable, used in cache keys
};

// "diffusion" | "pstep" | "adjacency" (throws on anything else), and back.
GraphKernelType parse_graph_kernel_type(const std::string& name);
const char* graph_kernel_type_name(GraphKernelType type);

// n x n float kernel, symmetric (exactly: computed in double and symmetrised before the cast).
MatF graph_kernel(const GraphSpectrum& spectrum, const GraphKernelOptions& options);
// Convenience: spectrum + kernel for one graph.
MatF graph_kernel(const Graph& g, const GraphKernelOptions& options);

// LapPE: n x m, column j = eigenvector of the (j+2)-th smallest eigenvalue (the first, trivial one is dropped);
// graphs with n - 1 < m nodes get zero columns for the missing eigenvectors. m >= 1.
MatF laplacian_pe(const GraphSpectrum& spectrum, int m);

// Random sign flips of LapPE columns, for training only (an eigenvector's sign is arbitrary; evaluation must use the
// encodings as computed, unlike the public reference which flips at evaluation too). Draw one +-1 per column from
// `rng` and apply them to every graph of a batch.
std::vector<float> draw_pe_signs(int m, std::mt19937_64& rng);
void apply_pe_signs(MatF& pe, const std::vector<float>& signs);

}  // namespace inductive
