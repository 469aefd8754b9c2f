"""`inductive screen --kernel` against independent kernel solvers (scikit-learn, SciPy), through the CLI.

Our kernel problem is  min_h 1/n sum_i phi(t_i) + lambda ||h||_H^2,  h = sum_j alpha_j K(a_j, .), solved through the
kernel map (an eigendecomposition of K). The references work on alpha directly with scikit-learn's own Gram
matrices, so a wrong kernel formula, a wrong map or a wrong alpha shows up as different decision values K alpha:
- squared loss 1/2 t^2: 1/(2n) ||K alpha - y||^2 + lambda alpha^T K alpha is (2n)^-1 times KernelRidge's
  ||y - K alpha||^2 + a alpha^T K alpha with a = 2 n lambda (same minimiser);
- squared hinge: no scikit-learn estimator has it with a kernel, so SciPy's L-BFGS minimises the objective over alpha.
Screening on the kernel problem must stay safe (--verify refits on the kept samples).
Run with Debian's /usr/bin/python3 (numpy, scipy, scikit-learn).
"""
import json
import os
import shutil
import subprocess
import tempfile
import unittest

import numpy as np

CLI = os.environ.get("INDUCTIVE_CLI")

try:
    from scipy.optimize import minimize
    from sklearn.kernel_ridge import KernelRidge
    from sklearn.metrics.pairwise import polynomial_kernel, rbf_kernel
except ImportError:  # pragma: no cover - Debian's python3 has both
    KernelRidge = None


def setUpModule():
    if not CLI:
        raise RuntimeError("INDUCTIVE_CLI is not set (ctest sets it to the built CLI)")
    if KernelRidge is None:
        raise RuntimeError("scikit-learn / scipy are not installed; run with /usr/bin/python3")


class KernelScreening(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="inductive-kernel-")
        self.addCleanup(shutil.rmtree, self.dir)
        rng = np.random.default_rng(3)
        self.x = rng.normal(size=(150, 4))
        # A non-linear target: a linear model cannot fit it, a Gaussian kernel can.
        self.target = np.sin(self.x[:, 0]) + self.x[:, 1] * self.x[:, 2] + 0.1 * rng.normal(size=150)
        self.labels = np.where(self.x[:, 0] ** 2 + self.x[:, 1] ** 2 > 1.4, 1.0, -1.0)

    def csv(self, y):
        path = os.path.join(self.dir, "data.csv")
        np.savetxt(path, np.column_stack([self.x, y]), delimiter=",", fmt="%.17g")
        return path

    def screen(self, y, *args):
        out, alpha = os.path.join(self.dir, "r.json"), os.path.join(self.dir, "alpha.npy")
        r = subprocess.run([CLI, "screen", "--csv", self.csv(y), "--out", out, "--alpha", alpha, "--tol", "1e-12",
                            "--kept", os.path.join(self.dir, "kept.npy"),
                            "--max-epochs", "100000", *args], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            report = json.load(f)
        return report, np.load(alpha)

    def test_gaussian_kernel_ridge_matches_scikit_learn(self):
        lam, gamma = 0.01, 0.3
        report, alpha = self.screen(self.target, "--loss", "squared", "--kernel", "gaussian", "--gamma", str(gamma),
                                    "--lambda", str(lam))
        krr = KernelRidge(alpha=2 * 150 * lam, kernel="rbf", gamma=gamma).fit(self.x, self.target)
        k = rbf_kernel(self.x, gamma=gamma)
        np.testing.assert_allclose(k @ alpha, krr.predict(self.x), atol=1e-5)
        # Our alpha_i = -phi'(t_i) / (2 n lambda) = (y_i - h(a_i)) / a: KernelRidge's dual_coef_ exactly.
        np.testing.assert_allclose(alpha, krr.dual_coef_, atol=1e-6)
        self.assertEqual(report["kernel"]["type"], "gaussian")
        self.assertEqual(report["kernel"]["rank"], 150)

    def test_polynomial_kernel_ridge_matches_scikit_learn(self):
        lam, gamma, coef0 = 0.05, 0.5, 1.0
        report, alpha = self.screen(self.target, "--loss", "squared", "--kernel", "polynomial", "--gamma",
                                    str(gamma), "--degree", "3", "--coef0", str(coef0), "--lambda", str(lam))
        krr = KernelRidge(alpha=2 * 150 * lam, kernel="poly", gamma=gamma, degree=3, coef0=coef0)
        krr.fit(self.x, self.target)
        k = polynomial_kernel(self.x, degree=3, gamma=gamma, coef0=coef0)
        np.testing.assert_allclose(k @ alpha, krr.predict(self.x), atol=1e-5)
        np.testing.assert_allclose(alpha, krr.dual_coef_, atol=1e-6)  # unique although K is singular
        # A degree-3 polynomial kernel on 4 features has rank C(4 + 3, 3) = 35: the map drops the null space.
        self.assertEqual(report["kernel"]["rank"], 35)

    def test_gaussian_squared_hinge_matches_lbfgs_and_screening_is_safe(self):
        lam, gamma, n = 0.002, 0.5, 150
        report, alpha = self.screen(self.labels, "--kernel", "gaussian", "--gamma", str(gamma), "--lambda", str(lam),
                                    "--verify")
        k, y = rbf_kernel(self.x, gamma=gamma), self.labels

        def objective(a):
            f = k @ a
            slack = np.maximum(1 - y * f, 0)
            value = np.mean(slack ** 2) + lam * a @ f
            grad = k @ (-2.0 / n * y * slack + 2 * lam * a)
            return value, grad

        ref = minimize(objective, np.zeros(n), jac=True, method="L-BFGS-B",
                       options=dict(maxiter=50000, gtol=1e-13, ftol=1e-16))
        np.testing.assert_allclose(objective(alpha)[0], ref.fun, rtol=1e-7)
        np.testing.assert_allclose(k @ alpha, k @ ref.x, atol=2e-3)
        self.assertTrue(report["verify"]["safe"], report["verify"])
        self.assertGreater(report["n_screened"], 20)  # the kernel separates the disc: many samples sit in the flat region
        # Screened samples have zero dual coefficients (alpha_i = -y_i phi'(t_i) / (2 n lambda), and phi' = 0 on
        # the flat region): deleting them leaves h unchanged.
        screened = np.ones(n, bool)
        screened[np.load(os.path.join(self.dir, "kept.npy"))] = False
        self.assertEqual(screened.sum(), report["n_screened"])
        self.assertTrue(np.all(alpha[screened] == 0))

    def test_linear_kernel_is_the_linear_problem(self):
        lam = 0.01
        report, alpha = self.screen(self.labels, "--kernel", "linear", "--lambda", str(lam))
        out = os.path.join(self.dir, "lin.json")
        r = subprocess.run([CLI, "screen", "--csv", self.csv(self.labels), "--out", out, "--tol", "1e-12",
                            "--lambda", str(lam)], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            linear = json.load(f)
        self.assertAlmostEqual(report["primal"], linear["primal"], places=9)
        self.assertEqual(report["kernel"]["rank"], 4)

    def test_refusals(self):
        data = self.csv(self.labels)
        cases = [
            (["--kernel", "gaussian", "--penalty", "l1"], "penalty must be l2"),
            (["--alpha", os.path.join(self.dir, "a.npy")], "needs --kernel"),
            (["--kernel", "gaussian", "--gamma", "-1"], "gamma must be finite"),
            (["--kernel", "polynomial", "--degree", "0"], "degree must be an integer in 1..20"),
            (["--kernel", "sigmoid"], "--kernel"),
        ]
        for args, message in cases:
            out = os.path.join(self.dir, "refused.json")
            r = subprocess.run([CLI, "screen", "--csv", data, "--out", out, *args], capture_output=True, text=True)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            lines = r.stderr.strip().splitlines()
            self.assertEqual(len(lines), 1, r.stderr)
            self.assertTrue(lines[0].startswith("error:") and message in lines[0], (args, lines))
            self.assertFalse(os.path.exists(out))

    def test_too_many_samples_is_refused_before_any_work(self):
        path = os.path.join(self.dir, "big.csv")
        n = 8001
        np.savetxt(path, np.column_stack([np.arange(n) % 7, np.where(np.arange(n) % 2, 1, -1)]), delimiter=",",
                   fmt="%g")
        out = os.path.join(self.dir, "big.json")
        r = subprocess.run([CLI, "screen", "--csv", path, "--out", out, "--kernel", "gaussian"], capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("exceeds this build's limit of 8000 samples", r.stderr)
        self.assertFalse(os.path.exists(out))


if __name__ == "__main__":
    unittest.main()
