// Normalised Laplacian, its spectrum, kernels on graphs and LapPE (see inductive/graph_kernels.h).
#include "inductive/graph_kernels.h"

#include <cmath>
#include <sstream>

#include <Eigen/Eigenvalues>

#include "inductive/error.h"

namespace inductive {

MatD normalized_laplacian(const Graph& g) {
  g.validate("graph laplacian");
  const int n = g.n_nodes;
  const std::vector<int32_t> deg = g.degrees();
  std::vector<double> inv_sqrt(n);
  for (int i = 0; i < n; ++i) inv_sqrt[i] = deg[i] > 0 ? 1.0 / std::sqrt(static_cast<double>(deg[i])) : 0.0;
  MatD L = MatD::Identity(n, n);
  for (const auto& e : g.edges) {
    const double w = -inv_sqrt[e[0]] * inv_sqrt[e[1]];
    L(e[0], e[1]) = w;
    L(e[1], e[0]) = w;
  }
  return L;
}

GraphSpectrum graph_spectrum(const Graph& g) {
  // Dense n x n matrices and an O(n^3) eigendecomposition: refuse graphs where that would take minutes or
  // gigabytes (in the browser, past the 2 GiB heap) instead of appearing to hang.
  INDUCTIVE_CHECK(g.n_nodes <= kMaxSpectrumNodes, ErrorCode::kInvalidArgument, "graph spectrum: the graph has ",
                  g.n_nodes, " nodes; kernels on graphs and LapPE are dense, limited to ", kMaxSpectrumNodes, " nodes");
  GraphSpectrum s;
  s.laplacian = normalized_laplacian(g);
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(s.laplacian);
  INDUCTIVE_CHECK(eig.info() == Eigen::Success, ErrorCode::kInternal, "graph spectrum: eigendecomposition of a ",
                  g.n_nodes, "-node Laplacian failed");
  s.eigenvalues = eig.eigenvalues().cwiseMax(0.0).cwiseMin(2.0);
  s.eigenvectors = eig.eigenvectors();
  for (Eigen::Index j = 0; j < s.eigenvectors.cols(); ++j) {
    auto col = s.eigenvectors.col(j);
    const double largest = col.cwiseAbs().maxCoeff();
    for (Eigen::Index i = 0; i < col.size(); ++i)
      if (std::fabs(col[i]) >= largest - 1e-9) {
        if (col[i] < 0) col = -col;
        break;
      }
  }
  return s;
}

void GraphKernelOptions::validate() const {
  switch (type) {
    case GraphKernelType::kDiffusion:
      INDUCTIVE_CHECK(std::isfinite(beta) && beta >= 0, ErrorCode::kInvalidArgument,
                      "graph kernel: diffusion beta must be a finite number >= 0: got ", beta);
      break;
    case GraphKernelType::kPStep:
      INDUCTIVE_CHECK(std::isfinite(gamma) && gamma > 0, ErrorCode::kInvalidArgument,
                      "graph kernel: p-step gamma must be a finite number > 0: got ", gamma);
      INDUCTIVE_CHECK(p >= 1 && p <= 1000, ErrorCode::kInvalidArgument,
                      "graph kernel: p-step p must be in [1, 1000]: got ", p);
      break;
    case GraphKernelType::kAdjacency:
      break;
    default:
      INDUCTIVE_FAIL(ErrorCode::kInvalidArgument, "graph kernel: unknown kernel type ", static_cast<int>(type));
  }
}

std::string GraphKernelOptions::describe() const {
  std::ostringstream out;
  out.precision(17);
  out << graph_kernel_type_name(type);
  if (type == GraphKernelType::kDiffusion) out << "(beta=" << beta << ")";
  if (type == GraphKernelType::kPStep) out << "(gamma=" << gamma << ",p=" << p << ")";
  if (zero_diagonal) out << "+zero_diagonal";
  return out.str();
}

GraphKernelType parse_graph_kernel_type(const std::string& name) {
  if (name == "diffusion") return GraphKernelType::kDiffusion;
  if (name == "pstep" || name == "p-step") return GraphKernelType::kPStep;
  if (name == "adjacency" || name == "adj") return GraphKernelType::kAdjacency;
  INDUCTIVE_FAIL(ErrorCode::kInvalidArgument, "graph kernel: unknown kernel '", name.substr(0, 40),
                 "': expected diffusion, pstep or adjacency");
}

const char* graph_kernel_type_name(GraphKernelType type) {
  switch (type) {
    case GraphKernelType::kDiffusion:
      return "diffusion";
    case GraphKernelType::kPStep:
      return "pstep";
    case GraphKernelType::kAdjacency:
      return "adjacency";
  }
  return "unknown";
}

MatF graph_kernel(const GraphSpectrum& s, const GraphKernelOptions& o) {
  o.validate();
  const Eigen::Index n = s.eigenvalues.size();
  INDUCTIVE_CHECK(n >= 1 && s.eigenvectors.rows() == n && s.eigenvectors.cols() == n && s.laplacian.rows() == n &&
                      s.laplacian.cols() == n,
                  ErrorCode::kShapeMismatch, "graph kernel: inconsistent spectrum: ", n, " eigenvalues, ",
                  s.eigenvectors.rows(), " x ", s.eigenvectors.cols(), " eigenvectors, ", s.laplacian.rows(), " x ",
                  s.laplacian.cols(), " Laplacian");
  MatD k;
  if (o.type == GraphKernelType::kAdjacency) {
    // I - L exactly (no round-off from the decomposition); its diagonal is 0 by construction.
    k = -s.laplacian;
    k.diagonal().setZero();
  } else {
    Eigen::VectorXd f(n);
    for (Eigen::Index i = 0; i < n; ++i) {
      const double lambda = s.eigenvalues[i];
      f[i] = o.type == GraphKernelType::kDiffusion ? std::exp(-o.beta * lambda) : std::pow(1.0 - o.gamma * lambda, o.p);
    }
    k = s.eigenvectors * f.asDiagonal() * s.eigenvectors.transpose();
    k = 0.5 * (k + k.transpose()).eval();
  }
  if (o.zero_diagonal) k.diagonal().setZero();
  MatF out = k.cast<float>();
  INDUCTIVE_CHECK(out.allFinite(), ErrorCode::kInvalidArgument, "graph kernel: ", o.describe(),
                  " overflows float on a ", n, "-node graph (use a smaller p or gamma)");
  return out;
}

MatF graph_kernel(const Graph& g, const GraphKernelOptions& options) {
  options.validate();
  return graph_kernel(graph_spectrum(g), options);
}

MatF laplacian_pe(const GraphSpectrum& s, int m) {
  INDUCTIVE_CHECK(m >= 1, ErrorCode::kInvalidArgument, "laplacian pe: dimension m must be >= 1: got ", m);
  const Eigen::Index n = s.eigenvalues.size();
  MatF pe = MatF::Zero(n, m);
  const Eigen::Index keep = std::min<Eigen::Index>(m, n - 1);
  for (Eigen::Index j = 0; j < keep; ++j) pe.col(j) = s.eigenvectors.col(j + 1).cast<float>();
  return pe;
}

std::vector<float> draw_pe_signs(int m, std::mt19937_64& rng) {
  INDUCTIVE_CHECK(m >= 0, ErrorCode::kInvalidArgument, "laplacian pe: dimension m must be >= 0: got ", m);
  std::vector<float> signs(m);
  for (int j = 0; j < m; ++j) signs[j] = (rng() >> 63) ? -1.0f : 1.0f;
  return signs;
}

void apply_pe_signs(MatF& pe, const std::vector<float>& signs) {
  INDUCTIVE_CHECK(static_cast<Eigen::Index>(signs.size()) == pe.cols(), ErrorCode::kShapeMismatch, "laplacian pe: got ",
                  signs.size(), " signs for ", pe.cols(), " columns");
  for (Eigen::Index j = 0; j < pe.cols(); ++j) pe.col(j) *= signs[j];
}

}  // namespace inductive
