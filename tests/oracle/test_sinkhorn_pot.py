"""`inductive sinkhorn` (float32) agrees with POT's log-domain Sinkhorn (float64) on fixed random problems.

What POT 0.8.2 does, read from ot/bregman.py, and how we match it:
- `ot.bregman.sinkhorn_log` runs `for ii in range(numItermax)`: v = log b - LSE_i(-M/reg + u), then
  u = log a - LSE_j(-M/reg + v). Same order as ours (columns, then rows).
- It tests `err < stopThr` *after* the update, every 10th iteration (ii = 0, 10, ...), with err the L2 norm of
  the column-marginal violation. With stopThr = 0 the test never passes, so exactly numItermax iterations run.
- log['log_u'], log['log_v'] are the scaled potentials; ours are in cost units: f = reg * log_u, g = reg * log_v.
  log['niter'] is the index of the last iteration (numItermax - 1), not a count.
- `ot.sinkhorn2(..., method='sinkhorn_log')` returns the linear cost <P, M> only, not the regularised one.

Relative error of an array = max|ours - POT| / max|POT|. The two potentials share one scale (they are one dual
vector up to the split f + g), so both are measured against max(|f_POT|, |g_POT|).
The bar is 1e-5 in float32. For the plan it is max(1e-5, 2 * 2^-24 * max|C| / eps): an entry is exp(f_i/eps +
g_j/eps - C_ij/eps), a sum of float32 terms as large as max|C|/eps, so their rounding alone moves it by that much
(1.2e-4 at max|C|/eps = 1000; the bound is 1e-5 up to max|C|/eps = 84).
"""
import json
import os
import subprocess
import tempfile
import unittest
import warnings

import numpy as np

try:
    import ot
except ImportError:  # pragma: no cover - the Debian image has python3-pot
    ot = None

CLI = os.environ.get("INDUCTIVE_CLI")
TOL = 1e-5
FLOAT32_UNIT_ROUNDOFF = 2.0 ** -24


def setUpModule():
    if ot is None:
        raise RuntimeError("POT is not installed (apt install python3-pot); run with /usr/bin/python3")
    if not CLI:
        raise RuntimeError("INDUCTIVE_CLI is not set (ctest sets it to the built CLI)")


def rel_err(ours, ref, scale=None):
    scale = np.abs(ref).max() if scale is None else scale
    return float(np.abs(np.asarray(ours, np.float64) - ref).max() / scale)


def plan_tol(cost, eps):
    return max(TOL, 2 * FLOAT32_UNIT_ROUNDOFF * float(np.abs(cost).max()) / eps)


def random_problem(rng, n, p, cost_scale, uniform=False):
    """Cost in [0, cost_scale) and positive marginals of mass 1, all float32 (what the CLI reads)."""
    cost = (rng.random((n, p)) * cost_scale).astype(np.float32)
    if uniform:
        return cost, None, None
    a = (rng.random(n) + 0.2).astype(np.float32)
    b = (rng.random(p) + 0.2).astype(np.float32)
    return cost, (a / a.sum()).astype(np.float32), (b / b.sum()).astype(np.float32)


class Cli:
    """Runs `inductive sinkhorn` in a private temp folder and returns plan, f, g and the JSON summary."""

    def __init__(self):
        self.dir = tempfile.TemporaryDirectory(prefix="inductive-oracle-")

    def close(self):
        self.dir.cleanup()

    def path(self, name):
        return os.path.join(self.dir.name, name)

    def sinkhorn(self, cost, a, b, eps, *args):
        np.save(self.path("C.npy"), cost)
        cmd = [CLI, "sinkhorn", "--cost", self.path("C.npy"), "--eps", repr(float(eps)),
               "--out", self.path("P.npy"), "--out-f", self.path("f.npy"), "--out-g", self.path("g.npy")]
        for flag, w in (("--a", a), ("--b", b)):
            if w is not None:
                np.save(self.path(flag[2:] + ".npy"), w)
                cmd += [flag, self.path(flag[2:] + ".npy")]
        done = subprocess.run(cmd + list(args), capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise AssertionError(f"CLI failed ({done.returncode}): {done.stderr.strip()}")
        load = lambda name: np.load(self.path(name))  # noqa: E731
        return load("P.npy"), load("f.npy"), load("g.npy"), json.loads(done.stdout)


def pot_fixed_iters(cost, a, b, eps, n_iter, similarity=False):
    """POT in float64 on the same float32 numbers, exactly n_iter iterations (stopThr = 0 never stops early)."""
    m = cost.astype(np.float64) * (-1.0 if similarity else 1.0)
    a64 = np.array([]) if a is None else a.astype(np.float64)  # [] = uniform, as in POT
    b64 = np.array([]) if b is None else b.astype(np.float64)
    # POT also stores u = exp(log_u), v = exp(log_v) in its log; those overflow harmlessly when C/eps is large.
    with np.errstate(over="ignore"):
        plan, log = ot.bregman.sinkhorn_log(a64, b64, m, eps, numItermax=n_iter, stopThr=0.0, log=True, warn=False)
    assert log["niter"] == n_iter - 1  # POT records the last index, so this confirms n_iter full iterations
    return plan, eps * log["log_u"], eps * log["log_v"]


def regularised_cost(plan, m, eps):
    """<P, M> - eps H(P) with H(P) = -sum P (log P - 1): the `cost` our CLI reports (see inductive/sinkhorn.h)."""
    pos = plan[plan > 0]
    return float((plan * m).sum() + eps * (pos * (np.log(pos) - 1.0)).sum())


class FixedIterationsMatchPot(unittest.TestCase):
    """Same problem, same iteration count: same plan and potentials, iteration for iteration."""

    @classmethod
    def setUpClass(cls):
        cls.cli = Cli()

    @classmethod
    def tearDownClass(cls):
        cls.cli.close()

    def check_against_pot(self, cost, a, b, eps, n_iter):
        plan, f, g, summary = self.cli.sinkhorn(cost, a, b, eps, "--iters", str(n_iter))
        ref_plan, ref_f, ref_g = pot_fixed_iters(cost, a, b, eps, n_iter)
        scale = max(np.abs(ref_f).max(), np.abs(ref_g).max())
        self.assertEqual(summary["n_iter"], n_iter)
        self.assertLessEqual(rel_err(plan, ref_plan), plan_tol(cost, eps))
        self.assertLessEqual(rel_err(f, ref_f, scale), TOL)
        self.assertLessEqual(rel_err(g, ref_g, scale), TOL)

    def test_grid_of_shapes_eps_and_cost_scales(self):
        rng = np.random.default_rng(20240611)
        shapes = [(40, 40), (100, 7), (9, 64), (1, 5), (5, 1)]  # square, tall, wide, one row, one column
        cases = [(eps, scale) for eps in (0.01, 0.05, 0.1, 0.5, 1.0) for scale in (0.1, 1.0, 10.0)]
        for n, p in shapes:
            for eps, scale in cases:
                for n_iter in (1, 10, 100):
                    cost, a, b = random_problem(rng, n, p, scale)
                    with self.subTest(n=n, p=p, eps=eps, cost_scale=scale, n_iter=n_iter):
                        self.check_against_pot(cost, a, b, eps, n_iter)

    def test_uniform_marginals_are_the_default(self):
        rng = np.random.default_rng(7)
        for n, p in [(30, 12), (12, 30)]:
            cost, _, _ = random_problem(rng, n, p, 1.0, uniform=True)
            with self.subTest(n=n, p=p):
                self.check_against_pot(cost, None, None, 0.1, 50)

    def test_costs_shifted_far_from_zero(self):
        # The plan does not change when a constant is added to C; the potentials absorb it. Costs around 1000
        # with spread 1 check that nothing is lost to the offset.
        rng = np.random.default_rng(8)
        cost, a, b = random_problem(rng, 25, 16, 1.0)
        self.check_against_pot((cost + 1000.0).astype(np.float32), a, b, 5.0, 30)

    def test_public_entry_point_ot_sinkhorn_agrees(self):
        # ot.sinkhorn(method='sinkhorn_log', log=True) is the documented way in; it must give the same answer.
        rng = np.random.default_rng(10)
        cost, a, b = random_problem(rng, 33, 21, 1.0)
        plan, f, g, _ = self.cli.sinkhorn(cost, a, b, 0.05, "--iters", "40")
        ref_plan, log = ot.sinkhorn(a.astype(np.float64), b.astype(np.float64), cost.astype(np.float64), 0.05,
                                    method="sinkhorn_log", numItermax=40, stopThr=0.0, log=True, warn=False)
        ref_f, ref_g = 0.05 * log["log_u"], 0.05 * log["log_v"]
        scale = max(np.abs(ref_f).max(), np.abs(ref_g).max())
        self.assertLessEqual(rel_err(plan, ref_plan), TOL)
        self.assertLessEqual(rel_err(f, ref_f, scale), TOL)
        self.assertLessEqual(rel_err(g, ref_g, scale), TOL)

    def test_similarity_mode_is_transport_with_cost_minus_s(self):
        rng = np.random.default_rng(11)
        s = (rng.standard_normal((20, 10)) * 0.5).astype(np.float32)  # e.g. <psi(x_i), z_j>, of either sign
        plan, f, g, summary = self.cli.sinkhorn(s, None, None, 0.1, "--iters", "10", "--similarity")
        ref_plan, ref_f, ref_g = pot_fixed_iters(s, None, None, 0.1, 10, similarity=True)
        scale = max(np.abs(ref_f).max(), np.abs(ref_g).max())
        self.assertLessEqual(rel_err(plan, ref_plan), TOL)
        self.assertLessEqual(rel_err(f, ref_f, scale), TOL)
        self.assertLessEqual(rel_err(g, ref_g, scale), TOL)
        ref_cost = regularised_cost(ref_plan, -s.astype(np.float64), 0.1)
        self.assertAlmostEqual(summary["cost"], ref_cost, delta=TOL * (1 + abs(ref_cost)))


class CostsMatchPot(unittest.TestCase):
    """The reported cost is <P, C> - eps H(P); <P, C> of our plan is what ot.sinkhorn2 returns."""

    def test_linear_cost_matches_sinkhorn2_and_regularised_cost_matches_its_definition(self):
        rng = np.random.default_rng(12)
        cli = Cli()
        try:
            for (n, p), eps, n_iter in [((30, 30), 0.05, 100), ((50, 8), 0.5, 10), ((8, 50), 1.0, 100)]:
                cost, a, b = random_problem(rng, n, p, 1.0)
                m = cost.astype(np.float64)
                plan, _, _, summary = cli.sinkhorn(cost, a, b, eps, "--iters", str(n_iter))
                with warnings.catch_warnings():  # POT 0.8.2's sinkhorn2 does not pass warn=False on
                    warnings.simplefilter("ignore")
                    linear = ot.sinkhorn2(a.astype(np.float64), b.astype(np.float64), m, eps,
                                          method="sinkhorn_log", numItermax=n_iter, stopThr=0.0)
                ref_plan, _, _ = pot_fixed_iters(cost, a, b, eps, n_iter)
                reg = regularised_cost(ref_plan, m, eps)
                # Scale of the regularised cost: its two parts can cancel, so measure against their sizes.
                reg_scale = abs(float(linear)) + abs(reg - float(linear))
                with self.subTest(n=n, p=p, eps=eps, n_iter=n_iter):
                    self.assertAlmostEqual(float((plan.astype(np.float64) * m).sum()), float(linear),
                                           delta=TOL * abs(float(linear)))
                    self.assertAlmostEqual(summary["cost"], reg, delta=TOL * reg_scale)
        finally:
            cli.close()


class ToleranceModeConverges(unittest.TestCase):
    """With --tol both solvers run to convergence (each with its own stopping rule) and land on the same plan."""

    @classmethod
    def setUpClass(cls):
        cls.cli = Cli()

    @classmethod
    def tearDownClass(cls):
        cls.cli.close()

    def test_both_converge_to_the_same_plan(self):
        rng = np.random.default_rng(13)
        tol, max_iter = 1e-5, 5000
        for (n, p), eps in [((40, 25), 0.5), ((25, 40), 0.1), ((64, 64), 1.0)]:
            cost, a, b = random_problem(rng, n, p, 1.0)
            plan, _, _, summary = self.cli.sinkhorn(cost, a, b, eps, "--tol", str(tol), "--max-iter", str(max_iter))
            # POT gets the marginals renormalised in float64: float32 rounding leaves sum(a) - sum(b) ~ 1e-8,
            # a column error no iteration can remove, and POT's stopThr would never be met.
            a64, b64 = a.astype(np.float64), b.astype(np.float64)
            a64, b64 = a64 / a64.sum(), b64 / b64.sum()
            ref_plan, log = ot.bregman.sinkhorn_log(a64, b64, cost.astype(np.float64), eps, numItermax=max_iter,
                                                    stopThr=1e-9, log=True, warn=False)
            with self.subTest(n=n, p=p, eps=eps):
                self.assertLess(log["niter"], max_iter - 1)  # POT stopped on its own test
                self.assertLess(summary["n_iter"], max_iter)  # and so did we
                self.assertTrue(summary["converged"])
                self.assertLessEqual(summary["marginal_err"], tol)
                # Our plan is within tol (L1) of the marginals, POT's within 1e-9: entries agree to about tol.
                self.assertLessEqual(float(np.abs(plan - ref_plan).max()), tol)

    def test_looser_tolerance_stops_earlier(self):
        rng = np.random.default_rng(14)
        cost, a, b = random_problem(rng, 30, 20, 1.0)
        _, _, _, loose = self.cli.sinkhorn(cost, a, b, 0.05, "--tol", "1e-2")
        _, _, _, tight = self.cli.sinkhorn(cost, a, b, 0.05, "--tol", "1e-5")
        self.assertTrue(loose["converged"] and tight["converged"])
        self.assertLessEqual(loose["marginal_err"], 1e-2)
        self.assertLess(loose["n_iter"], tight["n_iter"])

    def test_a_run_that_stopped_on_its_tolerance_reports_converged(self):
        # Stopping before --max-iter means the tolerance was met, so the summary must say converged. Its
        # marginal_err is measured on the float32 plan (rows + columns), which may exceed the stopping test (made
        # in the log domain) by the plan's rounding: a few float32 ulps of the mass. Whether a tolerance near that
        # floor is reached is not asserted; what a run that did stop reports is.
        rounding = 8 * FLOAT32_UNIT_ROUNDOFF  # x mass 1
        rng = np.random.default_rng(15)
        for (n, p), eps in [((30, 20), 0.05), ((64, 64), 0.5), ((200, 10), 0.1)]:
            cost, a, b = random_problem(rng, n, p, 1.0)
            for tol in (1e-5, 3e-6, 1e-6, 5e-7):
                _, _, _, summary = self.cli.sinkhorn(cost, a, b, eps, "--tol", str(tol), "--max-iter", "2000")
                if summary["n_iter"] == 2000:
                    continue
                with self.subTest(n=n, p=p, eps=eps, tol=tol, summary=summary):
                    self.assertTrue(summary["converged"])
                    self.assertLessEqual(summary["marginal_err"], tol + rounding)


if __name__ == "__main__":
    unittest.main()
