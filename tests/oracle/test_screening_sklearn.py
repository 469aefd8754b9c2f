"""scikit-learn as the oracle of the screening solvers.

The C++ suite (tests/core/screening/sklearn_oracle_test.cpp) checks that our solvers reach scikit-learn's optimum on
the problems of tests/core/screening/sklearn_oracle_fixture.h. This module keeps that fixture honest:
- the committed numbers are what scikit-learn computes today (make_fixtures.py --check), and
- the lambda each case uses is the one that makes our objective a positive multiple of the estimator's:
    LinearSVC / LogisticRegression(l2):  1/2 ||w||^2 + C sum loss  =  C n * (1/n sum loss + lambda ||w||^2),
                                         lambda = 1 / (2 C n)
    LogisticRegression(l1, liblinear):   ||w||_1 + C sum loss      =  C n * (1/n sum loss + lambda ||w||_1),
                                         lambda = 1 / (C n)
  so both have the same minimiser (with liblinear's intercept as one more penalised coordinate).
Run with Debian's /usr/bin/python3 (numpy, scikit-learn).
"""
import os
import re
import subprocess
import sys
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "core", "screening")

try:
    import sklearn  # noqa: F401
except ImportError:  # pragma: no cover - Debian's python3 has scikit-learn
    sklearn = None


def setUpModule():
    if sklearn is None:
        raise RuntimeError("scikit-learn is not installed; run with /usr/bin/python3")


def load_fixture():
    with open(os.path.join(FIXTURES, "sklearn_oracle_fixture.h")) as f:
        text = f.read()
    n = int(re.search(r"kN = (\d+)", text).group(1))
    p = int(re.search(r"kP = (\d+)", text).group(1))
    x = np.array([float(v) for v in re.search(r"kX\[\] = \{([^}]*)\}", text).group(1).replace("f", "").split(",")])
    y = np.array([float(v) for v in re.search(r"kY\[\] = \{([^}]*)\}", text).group(1).split(",")])
    cases = []
    for m in re.finditer(r'\{"(\w+)", "(\w+)", "(\w+)", ([0-9.e-]+), (true|false), \{([^}]*)\}\}', text):
        cases.append(dict(name=m.group(1), loss=m.group(2), penalty=m.group(3), lam=float(m.group(4)),
                          intercept=m.group(5) == "true", coef=np.array([float(v) for v in m.group(6).split(",")])))
    return x.reshape(n, p), y, cases


def loss(kind, t):
    if kind == "squared_hinge":
        return np.maximum(1 - t, 0) ** 2
    if kind == "hinge":
        return np.maximum(1 - t, 0)
    if kind == "logistic":
        return np.logaddexp(0, -t)
    raise ValueError(kind)


class SklearnOracle(unittest.TestCase):
    def test_fixture_is_what_sklearn_computes_today(self):
        done = subprocess.run([sys.executable, os.path.join(FIXTURES, "make_fixtures.py"), "--check"],
                              capture_output=True, text=True, timeout=300)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)

    def test_mapped_lambda_makes_the_objectives_proportional(self):
        x, y, cases = load_fixture()
        n = len(y)
        self.assertEqual(len(cases), 6)
        rng = np.random.default_rng(0)
        for case in cases:
            a = np.hstack([x, np.ones((n, 1))]) if case["intercept"] else x
            penalised = (lambda w: np.abs(w).sum()) if case["penalty"] == "l1" else (lambda w: w @ w)
            ours = lambda w: loss(case["loss"], y * (a @ w)).mean() + case["lam"] * penalised(w)
            c = 1 / (case["lam"] * n) if case["penalty"] == "l1" else 1 / (2 * case["lam"] * n)
            theirs = (lambda w: np.abs(w).sum() + c * loss(case["loss"], y * (a @ w)).sum()) \
                if case["penalty"] == "l1" else (lambda w: 0.5 * w @ w + c * loss(case["loss"], y * (a @ w)).sum())
            for _ in range(3):  # proportional everywhere, not only at the optimum
                w = rng.normal(size=a.shape[1])
                self.assertAlmostEqual(theirs(w), c * n * ours(w), delta=1e-9 * theirs(w))
            # and sklearn's coefficients are (near) optimal for ours: no random perturbation does better
            w0 = case["coef"]
            for _ in range(50):
                self.assertLessEqual(ours(w0), ours(w0 + 1e-3 * rng.normal(size=w0.shape)) + 1e-12, case["name"])
        # the C used by the fixture generator (LinearSVC C = 0.5) is recovered from lambda
        self.assertAlmostEqual(1 / (2 * cases[0]["lam"] * n), 0.5)


if __name__ == "__main__":
    unittest.main()
