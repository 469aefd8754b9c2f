"""`inductive sinkhorn` as a user drives it: what it accepts, what it writes, and how it refuses bad input.

The contract (ARCHITECTURE.md, "CLI"): exit 0 on success with a one-line JSON summary on stdout; on bad input or
arguments exit 2 with exactly one stderr line starting with `error:`, nothing on stdout, and no output written:
an output that did not exist must not appear (no temp leftovers either), one that existed must keep its bytes.
"""
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest

import numpy as np

CLI = os.environ.get("INDUCTIVE_CLI")
REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def setUpModule():
    if not CLI:
        raise RuntimeError("INDUCTIVE_CLI is not set (ctest sets it to the built CLI)")


def machine_has_nvidia_gpu():
    try:
        return subprocess.run(["nvidia-smi", "-L"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


class CliCase(unittest.TestCase):
    """Each test runs in a fresh folder holding a valid 4 x 3 problem (C.npy, a.npy, b.npy)."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="inductive-cli-")
        self.addCleanup(shutil.rmtree, self.dir)
        rng = np.random.default_rng(0)
        self.cost = rng.random((4, 3)).astype(np.float32)
        self.save("C.npy", self.cost)
        self.save("a.npy", np.full(4, 0.25, np.float32))
        self.save("b.npy", np.full(3, 1 / 3, np.float32))

    def path(self, name):
        return os.path.join(self.dir, name)

    def save(self, name, array):
        np.save(self.path(name), array)
        return self.path(name)

    def write(self, name, data):
        with open(self.path(name), "wb") as out:
            out.write(data)
        return self.path(name)

    def run_cli(self, *args):
        return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=60, cwd=self.dir)

    def sinkhorn(self, *args):
        return self.run_cli("sinkhorn", *args)


class RefusesBadInput(CliCase):
    """Every refusal: exit 2, one `error:` line naming the problem, nothing on stdout, no output file."""

    def assert_refused(self, args, message_pattern, outputs=("P.npy",)):
        self.check_refusal(self.sinkhorn(*args), message_pattern, outputs)

    def check_refusal(self, done, message_pattern, outputs=("P.npy",)):
        self.assertEqual(done.returncode, 2, f"stdout={done.stdout!r} stderr={done.stderr!r}")
        lines = done.stderr.splitlines()
        self.assertEqual(len(lines), 1, f"expected one stderr line, got {lines!r}")
        self.assertTrue(lines[0].startswith("error: "), lines[0])
        self.assertRegex(lines[0], message_pattern)
        self.assertEqual(done.stdout, "")
        for name in outputs:
            self.assertFalse(os.path.exists(self.path(name)), f"{name} was written by a failed run")
        leftovers = [f for f in os.listdir(self.dir) if ".tmp-" in f]
        self.assertEqual(leftovers, [], "temporary files left behind")

    def refuse(self, message_pattern, *extra, cost="C.npy"):
        """Asks for all three outputs; none may appear."""
        outputs = ("P.npy", "f.npy", "g.npy")
        self.assert_refused(["--cost", self.path(cost), "--out", self.path("P.npy"), "--out-f", self.path("f.npy"),
                             "--out-g", self.path("g.npy"), *extra], message_pattern, outputs)

    # The cost matrix.
    def test_nan_in_cost(self):
        self.save("bad.npy", np.where(np.arange(12).reshape(4, 3) == 7, np.nan, self.cost).astype(np.float32))
        self.refuse(r"non-finite.*\(2, 1\).*nan", cost="bad.npy")

    def test_inf_in_cost(self):
        self.save("bad.npy", np.where(np.arange(12).reshape(4, 3) == 0, -np.inf, self.cost).astype(np.float32))
        self.refuse(r"non-finite.*inf", cost="bad.npy")

    def test_empty_cost_zero_rows(self):
        self.save("bad.npy", np.zeros((0, 3), np.float32))
        self.refuse(r"empty.*\(0, 3\)", cost="bad.npy")

    def test_empty_cost_zero_columns(self):
        self.save("bad.npy", np.zeros((4, 0), np.float32))
        self.refuse(r"empty.*\(4, 0\)", cost="bad.npy")

    def test_three_dimensional_cost(self):
        self.save("bad.npy", np.zeros((2, 4, 3), np.float32))
        self.refuse(r"matrix.*3-d array", cost="bad.npy")

    def test_vector_cost(self):
        self.save("bad.npy", np.zeros(4, np.float32))
        self.refuse(r"matrix.*1-d array", cost="bad.npy")

    def test_integer_cost(self):
        self.save("bad.npy", np.zeros((4, 3), np.int32))
        self.refuse(r"float32 or float64", cost="bad.npy")

    def test_truncated_npy(self):
        with open(self.path("C.npy"), "rb") as f:
            self.write("bad.npy", f.read()[:-5])
        self.refuse(r"bad\.npy.*truncated", cost="bad.npy")

    def test_file_that_is_not_npy(self):
        self.write("bad.npy", b"plain text, not an array\n")
        self.refuse(r"bad\.npy.*not a \.npy", cost="bad.npy")

    def test_nonexistent_file(self):
        self.refuse(r"missing\.npy", cost="missing.npy")

    # The marginals.
    def test_unequal_marginal_masses(self):
        self.save("a2.npy", np.full(4, 0.5, np.float32))  # mass 2 against mass 1
        self.refuse(r"same mass", "--a", self.path("a2.npy"), "--b", self.path("b.npy"))

    def test_marginal_a_of_wrong_length(self):
        self.save("a5.npy", np.full(5, 0.2, np.float32))
        self.refuse(r"a5\.npy.*marginal a.*4", "--a", self.path("a5.npy"))

    def test_marginal_b_of_wrong_length(self):
        self.save("b4.npy", np.full(4, 0.25, np.float32))
        self.refuse(r"b4\.npy.*marginal b.*3", "--b", self.path("b4.npy"))

    def test_marginal_that_is_a_matrix(self):
        self.save("a41.npy", np.full((4, 1), 0.25, np.float32))
        self.refuse(r"marginal a", "--a", self.path("a41.npy"))

    def test_negative_marginal_weight(self):
        self.save("an.npy", np.array([0.5, 0.5, 0.5, -0.5], np.float32))
        self.refuse(r"negative weight", "--a", self.path("an.npy"))

    # The options.
    def test_negative_eps(self):
        self.refuse(r"eps.*-0\.5", "--eps", "-0.5")

    def test_zero_eps(self):
        self.refuse(r"eps", "--eps", "0")

    def test_nan_eps(self):
        self.refuse(r"eps", "--eps", "nan")

    def test_non_numeric_eps(self):
        self.refuse(r"eps", "--eps", "abc")

    def test_iters_together_with_tol(self):
        self.refuse(r"--iters.*--tol|--tol.*--iters", "--iters", "10", "--tol", "1e-3")

    def test_zero_iterations(self):
        # "Run exactly N iterations": 0 or a negative N is a mistake, not a request for the default 100.
        self.refuse(r"iter", "--iters", "0")

    def test_negative_iterations(self):
        self.refuse(r"iter", "--iters", "-3")

    def test_max_iter_without_tol(self):
        self.refuse(r"--max-iter", "--max-iter", "5")

    def test_unknown_option(self):
        self.refuse(r"--bogus", "--bogus")

    def test_missing_out(self):
        self.assert_refused(["--cost", self.path("C.npy")], r"--out")

    def test_unknown_backend(self):
        self.refuse(r"tpu", "--backend", "tpu")

    def test_cuda_backend_where_there_is_none(self):
        # A build without the CUDA backend, or a machine without a GPU, must refuse: never a silent CPU fallback.
        done = self.sinkhorn("--cost", self.path("C.npy"), "--out", self.path("P.npy"), "--backend", "cuda")
        if done.returncode == 0:
            self.assertTrue(machine_has_nvidia_gpu(), "--backend cuda succeeded on a machine without a GPU")
            self.assertTrue(json.loads(done.stdout)["backend"].startswith("cuda"), done.stdout)
            self.skipTest("this build has CUDA and the machine a GPU")
        self.check_refusal(done, r"cuda")

    # Outputs.
    def test_unwritable_plan_path(self):
        self.assert_refused(["--cost", self.path("C.npy"), "--out", self.path("no/such/dir/P.npy")], r"P\.npy")

    def test_unwritable_potential_path_leaves_no_plan(self):
        # The plan is one of three outputs of one run; if f cannot be written, the run failed as a whole.
        self.assert_refused(["--cost", self.path("C.npy"), "--out", self.path("P.npy"),
                             "--out-f", self.path("no/such/dir/f.npy")], r"f\.npy", outputs=("P.npy",))

    def test_failed_run_keeps_a_pre_existing_output_unchanged(self):
        for name in ("P.npy", "f.npy", "g.npy"):
            self.write(name, b"previous contents of " + name.encode())
        self.save("bad.npy", np.full((4, 3), np.nan, np.float32))
        done = self.sinkhorn("--cost", self.path("bad.npy"), "--out", self.path("P.npy"),
                             "--out-f", self.path("f.npy"), "--out-g", self.path("g.npy"))
        self.assertEqual(done.returncode, 2)
        for name in ("P.npy", "f.npy", "g.npy"):
            with open(self.path(name), "rb") as f:
                self.assertEqual(f.read(), b"previous contents of " + name.encode())


class Succeeds(CliCase):
    """Valid input: exit 0, the outputs asked for, and a JSON summary that describes the run."""

    def solve(self, *extra, cost="C.npy"):
        done = self.sinkhorn("--cost", self.path(cost), "--out", self.path("P.npy"), *extra)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout.count("\n"), 1, "the summary is one line")
        return json.loads(done.stdout)

    def test_plan_is_float32_n_by_p_with_the_right_marginals(self):
        summary = self.solve("--eps", "0.5", "--iters", "200")
        plan = np.load(self.path("P.npy"))
        self.assertEqual(plan.dtype, np.float32)
        self.assertEqual(plan.shape, (4, 3))
        np.testing.assert_allclose(plan.sum(1), 0.25, atol=1e-6)
        np.testing.assert_allclose(plan.sum(0), 1 / 3, atol=1e-6)
        self.assertEqual(set(summary), {"n", "p", "eps", "n_iter", "marginal_err", "converged", "cost", "backend"})
        self.assertEqual((summary["n"], summary["p"], summary["eps"]), (4, 3, 0.5))
        self.assertEqual(summary["n_iter"], 200)
        self.assertTrue(summary["converged"])
        self.assertEqual(summary["backend"], "cpu")

    def test_default_is_100_iterations(self):
        self.assertEqual(self.solve()["n_iter"], 100)

    def test_potentials_are_written_on_request(self):
        self.solve("--out-f", self.path("f.npy"), "--out-g", self.path("g.npy"))
        f, g = np.load(self.path("f.npy")), np.load(self.path("g.npy"))
        self.assertEqual((f.dtype, f.shape), (np.float32, (4,)))
        self.assertEqual((g.dtype, g.shape), (np.float32, (3,)))
        # They generate the plan: P_ij = exp((f_i + g_j - C_ij) / eps), eps = 0.5 by default.
        plan = np.exp((f[:, None] + g[None, :] - self.cost) / 0.5)
        np.testing.assert_allclose(np.load(self.path("P.npy")), plan, rtol=1e-5)

    def test_float64_input_is_accepted(self):
        self.save("C64.npy", self.cost.astype(np.float64))
        self.save("a64.npy", np.full(4, 0.25))
        self.save("b64.npy", np.full(3, 1 / 3))
        self.solve("--a", self.path("a64.npy"), "--b", self.path("b64.npy"), cost="C64.npy")
        self.assertEqual(np.load(self.path("P.npy")).dtype, np.float32)

    def test_marginals_given_explicitly(self):
        self.save("a.npy", np.array([0.1, 0.2, 0.3, 0.4], np.float32))
        self.save("b.npy", np.array([0.5, 0.25, 0.25], np.float32))
        self.solve("--a", self.path("a.npy"), "--b", self.path("b.npy"), "--iters", "500")
        plan = np.load(self.path("P.npy"))
        np.testing.assert_allclose(plan.sum(1), [0.1, 0.2, 0.3, 0.4], atol=1e-6)
        np.testing.assert_allclose(plan.sum(0), [0.5, 0.25, 0.25], atol=1e-5)

    def test_tol_mode_reports_its_iterations(self):
        summary = self.solve("--tol", "1e-4", "--max-iter", "1000")
        self.assertLess(summary["n_iter"], 1000)
        self.assertLessEqual(summary["marginal_err"], 1e-4)
        self.assertTrue(summary["converged"])

    def test_successful_run_replaces_an_existing_output(self):
        self.write("P.npy", b"old")
        self.solve()
        self.assertEqual(np.load(self.path("P.npy")).shape, (4, 3))
        self.assertEqual([f for f in os.listdir(self.dir) if ".tmp-" in f], [])

    def test_help_exits_0(self):
        for args in (["--help"], ["sinkhorn", "--help"]):
            done = self.run_cli(*args)
            with self.subTest(args=args):
                self.assertEqual(done.returncode, 0, done.stderr)
                self.assertIn("sinkhorn", done.stdout)
        self.assertIn("--cost", self.run_cli("sinkhorn", "--help").stdout)

    def test_version_names_the_release_and_the_build(self):
        with open(os.path.join(REPO, "package.json")) as f:
            version = json.load(f)["version"]  # the one place the version lives
        done = self.run_cli("--version")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout.strip(), f"inductive {version} native")

    def test_no_command_is_an_error(self):
        done = self.run_cli()
        self.assertEqual(done.returncode, 2)
        self.assertTrue(re.match(r"^error: ", done.stderr))


if __name__ == "__main__":
    unittest.main()
