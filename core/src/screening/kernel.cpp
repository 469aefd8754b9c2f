// Kernel screening through the empirical kernel map (see inductive/screening/kernel.h).
#include <chrono>
#include <cmath>
#include <sstream>

#include <Eigen/Eigenvalues>

#include "inductive/error.h"
#include "inductive/screening/kernel.h"

namespace inductive {
namespace {

// The rows of `x` as a dense n x p double matrix (a row-wise axpy into zeros costs nnz(a_i), dense or sparse).
MatDc dense_rows(const DesignMatrix& x) {
  MatDc out = MatDc::Zero(x.rows(), x.cols());
  VecD r(x.cols());
  for (int i = 0; i < x.rows(); ++i) {
    r.setZero();
    x.row_axpy(i, 1.0, r.data());
    out.row(i) = r.transpose();
  }
  return out;
}

}  // namespace

void KernelSpec::validate() const {
  INDUCTIVE_CHECK(std::isfinite(gamma) && gamma >= 0, ErrorCode::kInvalidArgument,
                  "kernel: gamma must be finite and > 0 (or 0 for 1 / features): got ", gamma);
  if (kind == KernelKind::kPolynomial) {
    INDUCTIVE_CHECK(degree >= 1 && degree <= 20, ErrorCode::kInvalidArgument,
                    "kernel: polynomial degree must be an integer in 1..20: got ", degree);
    INDUCTIVE_CHECK(std::isfinite(coef0), ErrorCode::kInvalidArgument, "kernel: coef0 must be finite: got ", coef0);
  }
}

double KernelSpec::gamma_for(int p) const { return gamma > 0 ? gamma : 1.0 / std::max(p, 1); }

std::string KernelSpec::describe(int p) const {
  std::ostringstream os;
  os << kind;
  if (kind == KernelKind::kGaussian) os << "(gamma=" << gamma_for(p) << ")";
  if (kind == KernelKind::kPolynomial)
    os << "(gamma=" << gamma_for(p) << ", degree=" << degree << ", coef0=" << coef0 << ")";
  return os.str();
}

MatD kernel_cross_gram(const KernelSpec& kernel, const DesignMatrix& test, const DesignMatrix& train) {
  kernel.validate();
  INDUCTIVE_CHECK(test.cols() == train.cols(), ErrorCode::kShapeMismatch, "kernel: ", test.cols(), " features against ",
                  train.cols());
  const MatDc a = dense_rows(test);
  const MatDc b = &test == &train ? a : dense_rows(train);
  MatD k = a * b.transpose();  // the inner products: every kernel here is a function of them (and the norms)
  const double gamma = kernel.gamma_for(train.cols());
  switch (kernel.kind) {
    case KernelKind::kLinear:
      break;
    case KernelKind::kGaussian: {
      const VecD na = a.rowwise().squaredNorm(), nb = b.rowwise().squaredNorm();
      for (Eigen::Index i = 0; i < k.rows(); ++i)
        for (Eigen::Index j = 0; j < k.cols(); ++j)
          k(i, j) = std::exp(-gamma * std::max(na[i] + nb[j] - 2 * k(i, j), 0.0));  // rounding can dip below 0
      break;
    }
    case KernelKind::kPolynomial:
      k = (gamma * k.array() + kernel.coef0).pow(kernel.degree).matrix();
      break;
  }
  return k;
}

MatD kernel_gram(const KernelSpec& kernel, const DesignMatrix& x) { return kernel_cross_gram(kernel, x, x); }

MatD gaussian_cross_gram(const DesignMatrix& test, const DesignMatrix& train, double gamma) {
  INDUCTIVE_CHECK(std::isfinite(gamma) && gamma > 0, ErrorCode::kInvalidArgument,
                  "gaussian kernel: gamma must be finite and > 0: got ", gamma);
  return kernel_cross_gram({KernelKind::kGaussian, gamma}, test, train);
}

MatD gaussian_gram(const DesignMatrix& x, double gamma) { return gaussian_cross_gram(x, x, gamma); }

int max_kernel_samples() {
#ifdef __EMSCRIPTEN__
  return 3000;
#else
  return 8000;
#endif
}

KernelProblem::KernelProblem(const MatD& gram, std::vector<double> y, Loss loss, double lambda, bool intercept,
                             double intercept_scaling, double rel_tol) {
  const Eigen::Index n = gram.rows();
  INDUCTIVE_CHECK(n > 0 && gram.cols() == n, ErrorCode::kShapeMismatch,
                  "kernel problem: gram must be square and non-empty: got ", gram.rows(), " x ", gram.cols());
  INDUCTIVE_CHECK(gram.allFinite(), ErrorCode::kInvalidArgument, "kernel problem: gram must be finite");
  INDUCTIVE_CHECK(rel_tol >= 0 && rel_tol < 1, ErrorCode::kInvalidArgument,
                  "kernel problem: rel_tol must be in [0, 1): got ", rel_tol);
  const double asym = (gram - gram.transpose()).cwiseAbs().maxCoeff(), scale = gram.cwiseAbs().maxCoeff();
  INDUCTIVE_CHECK(asym <= 1e-8 * std::max(scale, 1e-300), ErrorCode::kInvalidArgument,
                  "kernel problem: gram is not symmetric: max |K - K^T| = ", asym);
  const MatDc sym = 0.5 * (gram + gram.transpose());
  Eigen::SelfAdjointEigenSolver<MatDc> eig(sym);
  const VecD& ev = eig.eigenvalues();
  const double top = std::max(ev.maxCoeff(), 0.0);
  INDUCTIVE_CHECK(ev.minCoeff() >= -1e-6 * std::max(top, 1e-300), ErrorCode::kInvalidArgument,
                  "kernel problem: gram is not positive semi-definite: smallest eigenvalue ", ev.minCoeff(),
                  " for a largest of ", top);
  std::vector<Eigen::Index> keep;
  for (Eigen::Index j = 0; j < n; ++j)
    if (ev[j] > rel_tol * top && ev[j] > 0) keep.push_back(j);
  INDUCTIVE_CHECK(!keep.empty(), ErrorCode::kInvalidArgument, "kernel problem: gram is zero");
  const auto r = static_cast<Eigen::Index>(keep.size());
  basis_.resize(n, r);
  eigenvalues_.resize(r);
  DenseDesignD::Matrix phi(n, r);
  for (Eigen::Index k = 0; k < r; ++k) {
    basis_.col(k) = eig.eigenvectors().col(keep[k]);
    eigenvalues_[k] = ev[keep[k]];
    phi.col(k) = basis_.col(k) * std::sqrt(eigenvalues_[k]);
  }
  map_ = std::make_unique<DenseDesignD>(std::move(phi));
  problem_.x = map_.get();
  problem_.y = std::move(y);
  problem_.loss = loss;
  problem_.penalty = Penalty::l2();
  problem_.lambda = lambda;
  problem_.intercept = intercept;
  problem_.intercept_scaling = intercept_scaling;
  problem_.validate();
}

VecD KernelProblem::alpha(const VecD& x) const {
  INDUCTIVE_CHECK(x.size() == problem_.dim(), ErrorCode::kShapeMismatch, "kernel problem: solution has ", x.size(),
                  " entries, expected ", problem_.dim());
  // K alpha = U ev U^T U ev^{-1/2} x_f = U ev^{1/2} x_f = Phi x_f.
  return basis_ * x.head(rank()).cwiseQuotient(eigenvalues_.cwiseSqrt());
}

double KernelProblem::intercept(const VecD& x) const {
  return problem_.intercept ? problem_.intercept_scaling * x[rank()] : 0.0;
}

VecD KernelProblem::decision_function(const MatD& cross_gram, const VecD& x) const {
  INDUCTIVE_CHECK(cross_gram.cols() == basis_.rows(), ErrorCode::kShapeMismatch, "kernel problem: cross gram has ",
                  cross_gram.cols(), " columns, expected ", basis_.rows(), " (training points)");
  return (cross_gram * alpha(x)).array() + intercept(x);
}

KernelScreenResult kernel_solve_and_screen(const ErmProblem& samples, const KernelSpec& kernel,
                                           const SolverOptions& options, const ScreenOptions& screen) {
  kernel.validate();
  INDUCTIVE_CHECK(samples.x != nullptr, ErrorCode::kInvalidArgument, "kernel screening: no samples");
  INDUCTIVE_CHECK(samples.penalty.kind == PenaltyKind::kL2, ErrorCode::kInvalidArgument,
                  "kernel screening: the penalty must be l2 (lambda ||h||^2 in the kernel's space): got ",
                  samples.penalty.name());
  const int n = samples.n();
  INDUCTIVE_CHECK(n <= max_kernel_samples(), ErrorCode::kInvalidArgument, "kernel screening holds the ", n, " x ", n,
                  " Gram matrix and its eigendecomposition (about ", 4.0 * n * n * 8 / 1e6, " MB): n = ", n,
                  " exceeds this build's limit of ", max_kernel_samples(),
                  " samples; screen a subsample or use the linear problem");
  const auto start = std::chrono::steady_clock::now();
  const MatD gram = kernel_gram(kernel, *samples.x);
  KernelScreenResult r;
  r.kernel_problem = std::make_unique<KernelProblem>(gram, samples.y, samples.loss, samples.lambda, samples.intercept,
                                                     samples.intercept_scaling);
  r.kernel_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const ErmProblem& linear = r.kernel_problem->problem();
  r.result = solve_and_screen(linear, options, screen);
  // The representer's coefficients from the solver's dual point nu_i = phi'(t_i): the optimality condition
  // 1/n sum_i phi'(t_i) s_i K(a_i, .) + 2 lambda h = 0 (s_i = y_i for classification, 1 for regression) gives
  // alpha_i = -s_i nu_i / (2 lambda n). Unlike the minimum-norm alpha of the map (KernelProblem::alpha, which K's
  // null space leaves free), these are zero exactly for the samples screening removed: the non-support vectors.
  const VecD& nu = r.result.fit.nu;
  INDUCTIVE_CHECK(nu.size() == n, ErrorCode::kInternal, "kernel screening: the solver returned ", nu.size(),
                  " dual variables for ", n, " samples");
  r.alpha.resize(n);
  const bool classification = samples.loss.is_classification();
  for (int i = 0; i < n; ++i) r.alpha[i] = -(classification ? samples.y[i] : 1.0) * nu[i] / (2 * samples.lambda * n);
  r.intercept = r.kernel_problem->intercept(r.result.fit.x);
  r.decision.resize(n);
  for (int i = 0; i < n; ++i) r.decision[i] = linear.x->row_dot(i, r.result.fit.x.data()) + r.intercept;
  return r;
}

}  // namespace inductive
