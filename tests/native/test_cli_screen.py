"""`inductive screen` as a user drives it: safe sample screening on a small LIBSVM file the test writes itself.

Contract (ARCHITECTURE.md, "CLI"): exit 0 on success with the JSON report written to --out; on bad input or
arguments exit 2 with exactly one stderr line starting with `error:` and no output file.
"""
import json
import os
import shutil
import subprocess
import tempfile
import unittest

import numpy as np

CLI = os.environ.get("INDUCTIVE_CLI")

KEYS = ("n", "p", "loss", "penalty", "lambda", "fraction_screened", "n_kept", "n_screened", "epochs", "solve_seconds",
        "gap", "converged")


def setUpModule():
    if not CLI:
        raise RuntimeError("INDUCTIVE_CLI is not set (ctest sets it to the built CLI)")


class CliCase(unittest.TestCase):
    """Writes a small separable-ish LIBSVM problem; runs `inductive <command>` in a temp dir."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="inductive-cli-screen-")
        self.addCleanup(shutil.rmtree, self.dir)
        rng = np.random.default_rng(0)
        x = rng.normal(size=(200, 5))
        w = np.array([1.0, -2.0, 0.5, 1.5, -1.0])
        y = np.where(x @ w + 0.1 * rng.normal(size=200) > 0, 1, -1)
        self.n = 200
        lines = ["%d %s\n" % (y[i], " ".join("%d:%.6g" % (j + 1, x[i, j]) for j in range(5))) for i in range(200)]
        self.data = self.write("data.svm", "".join(lines))

    def path(self, name):
        return os.path.join(self.dir, name)

    def write(self, name, text):
        with open(self.path(name), "w") as out:
            out.write(text)
        return self.path(name)

    command = "screen"

    def run_cli(self, *args):
        return subprocess.run([CLI, self.command, *args], capture_output=True, text=True, timeout=120, cwd=self.dir)

    def assert_refused(self, *args, extra=("--compressed", "compressed.svm")):
        out = self.path("bad.json")
        before = sorted(os.listdir(self.dir))
        r = self.run_cli(*args, *extra, "--out", out)
        self.assertEqual(r.returncode, 2, r.stderr)
        lines = r.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertTrue(lines[0].startswith("error:"), r.stderr)
        self.assertFalse(os.path.exists(out))
        self.assertEqual(sorted(os.listdir(self.dir)), before)  # no temp leftovers either
        return lines[0]


class ScreenCase(CliCase):
    def test_squared_hinge_l2_screens_safely(self):
        out, kept, scores = self.path("r.json"), self.path("kept.npy"), self.path("scores.npy")
        r = self.run_cli("--libsvm", self.data, "--loss", "squared_hinge", "--penalty", "l2", "--lambda", "0.01",
                         "--verify", "--out", out, "--kept", kept, "--scores", scores)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            report = json.load(f)
        for key in KEYS:
            self.assertIn(key, report)
        self.assertEqual(report["n"], self.n)
        self.assertEqual(report["p"], 5)
        self.assertEqual(report["loss"], "squared_hinge")
        self.assertEqual(report["penalty"], "l2")
        self.assertGreater(report["fraction_screened"], 0)
        self.assertEqual(report["n_kept"] + report["n_screened"], self.n)
        self.assertTrue(report["verify"]["safe"])
        self.assertEqual(report["verify"]["violations"], [])
        k = np.load(kept)
        self.assertEqual(k.dtype, np.int32)
        self.assertEqual(len(k), report["n_kept"])
        self.assertTrue(np.all(np.diff(k) > 0))
        s = np.load(scores)
        self.assertEqual(s.shape, (self.n,))

    def test_no_dynamic(self):
        out = self.path("r.json")
        r = self.run_cli("--libsvm", self.data, "--lambda", "0.01", "--no-dynamic", "--out", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            report = json.load(f)
        self.assertFalse(report["dynamic_screening"])
        self.assertEqual(report["n_dynamic"], 0)
        self.assertGreater(report["fraction_screened"], 0)

    def test_ellipsoid_steps_never_screen_fewer_and_stay_safe(self):
        # The digits of the thesis (9 vs rest, lambda 1) from a rough solution (gap 1e-3, no dynamic screening):
        # the balls screen 829 samples, the ellipsoid method more, and --verify proves each one flat at the optimum.
        digits = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data", "screening",
                              "digits.csv.gz")
        counts = []
        for steps in (0, 5, 40):
            out = self.path(f"e{steps}.json")
            r = self.run_cli("--csv", digits, "--one-vs-rest", "9", "--lambda", "1", "--tol", "1e-3", "--no-dynamic",
                             "--ellipsoid-steps", str(steps), "--verify", "--out", out)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out) as f:
                report = json.load(f)
            self.assertEqual(report["ellipsoid_steps"], steps)
            self.assertLessEqual(report["n_static_by_balls"], report["n_static"])
            self.assertTrue(report["verify"]["safe"], report["verify"])
            counts.append((report["n_static"], report["n_static_by_balls"]))
        self.assertEqual(len({balls for _, balls in counts}), 1)  # the same balls first, whatever the steps
        self.assertEqual(counts[0][0], counts[0][1])
        self.assertLessEqual(counts[0][0], counts[1][0])
        self.assertLess(counts[1][0], counts[2][0])
        msg = self.assert_refused("--libsvm", self.data, "--ellipsoid-steps", "-1")
        self.assertIn("--ellipsoid-steps must be >= 0", msg)

    def test_pure_l1_screens_in_the_certified_support(self):
        # Without strong convexity the balls screen nothing; the ellipsoid method in the support the dual ball
        # certifies does, and the refit confirms it.
        out = self.path("l1.json")
        base = ("--libsvm", self.data, "--loss", "safe_logistic", "--mu", "0.2", "--penalty", "l1", "--lambda",
                "0.01", "--no-dynamic", "--tol", "1e-8", "--verify", "--out", out)
        r = self.run_cli(*base)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            balls = json.load(f)
        r = self.run_cli(*base, "--ellipsoid-steps", "3000")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            steps = json.load(f)
        self.assertEqual(balls["n_screened"], 0)
        self.assertLessEqual(steps["l1_support_size"], 5)
        self.assertGreater(steps["n_screened"], 50)
        self.assertTrue(steps["verify"]["safe"], steps["verify"])

    def test_csv_input(self):
        rng = np.random.default_rng(1)
        x = rng.normal(size=(50, 3))
        y = np.where(x[:, 0] > 0, 1, 0)
        csv = self.write("d.csv", "a,b,c,y\n" + "".join("%g,%g,%g,%d\n" % (*x[i], y[i]) for i in range(50)))
        out = self.path("r.json")
        r = self.run_cli("--csv", csv, "--header", "--lambda", "0.1", "--out", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            self.assertEqual(json.load(f)["n"], 50)

    def test_malformed_libsvm(self):
        bad = self.write("bad.svm", "1 1:0.5 2:1\n-1 1:oops\n")
        msg = self.assert_refused("--libsvm", bad)
        self.assertIn("line 2", msg)

    def test_unknown_loss(self):
        self.assert_refused("--libsvm", self.data, "--loss", "nope")

    def test_negative_lambda(self):
        self.assert_refused("--libsvm", self.data, "--lambda", "-1")

    def test_missing_file(self):
        self.assert_refused("--libsvm", self.path("missing.svm"))

    def test_no_input(self):
        self.assert_refused()

    def test_compressed_dataset_keeps_the_optimum(self):
        """The kept samples, written as LIBSVM, give the same solution as the full data (the point of safety)."""
        out, kept, comp = self.path("r.json"), self.path("kept.npy"), self.path("kept.svm")
        r = self.run_cli("--libsvm", self.data, "--lambda", "0.01", "--tol", "1e-9", "--out", out, "--kept", kept,
                         "--compressed", comp)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            full = json.load(f)
        k = np.load(kept)
        with open(comp) as f:
            rows = [line for line in f if line.strip()]
        self.assertEqual(len(rows), full["n_kept"])
        self.assertLess(full["n_kept"], self.n)
        with open(self.data) as f:
            original = f.read().splitlines()
        for line, i in zip(rows, k):  # same labels, same values (float32 storage)
            a, b = line.split(), original[i].split()
            self.assertEqual(float(a[0]), float(b[0]))
            va = {kv.split(":")[0]: float(kv.split(":")[1]) for kv in a[1:]}
            vb = {kv.split(":")[0]: float(kv.split(":")[1]) for kv in b[1:]}
            self.assertEqual(va.keys(), vb.keys())
            for key in va:
                self.assertAlmostEqual(va[key], vb[key], delta=1e-6 * max(1, abs(vb[key])))


class PathCase(CliCase):
    """`inductive path`: the same data/problem options, a lambda grid solved with and without screening."""

    command = "path"

    def test_path_with_and_without_screening_agree(self):
        out = self.path("p.json")
        r = self.run_cli("--libsvm", self.data, "--lambda-max", "1", "--ratio", "0.001", "--count", "8",
                         "--tol", "1e-8", "--out", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("lambda 8/8", r.stderr)  # progress per lambda
        with open(out) as f:
            report = json.load(f)
        self.assertEqual(len(report["points"]), 8)
        np.testing.assert_allclose(report["lambdas"], np.geomspace(1, 0.001, 8), rtol=1e-12)
        for p in report["points"]:
            self.assertTrue(p["converged"])
            self.assertTrue(p["without_screening"]["converged"])
            self.assertTrue(p["objectives_agree"], p)
            self.assertGreaterEqual(p["fraction_screened"], 0)
        # Small lambdas fit the separable-ish data: many samples sit in the flat region and are screened.
        self.assertGreater(report["points"][-1]["fraction_screened"], 0.2)
        self.assertGreater(report["seconds_without_screening"], 0)
        self.assertGreater(report["speedup"], 0)

    def test_path_working_set_reaches_the_plain_paths_objectives(self):
        # safe logistic + elastic net: proximal gradient over the samples not flat at each warm start; every point is
        # certified on the whole problem, so both runs' objectives agree within their gaps.
        out = self.path("ws.json")
        r = self.run_cli("--libsvm", self.data, "--loss", "safe_logistic", "--mu", "0.2", "--penalty", "elastic_net",
                         "--l1-ratio", "0.9", "--lambda-max", "0.3", "--ratio", "0.001", "--count", "8",
                         "--tol", "1e-8", "--working-set", "--out", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            report = json.load(f)
        self.assertTrue(report["working_set"])
        self.assertEqual(len(report["points"]), 8)
        for p in report["points"]:
            self.assertTrue(p["converged"], p)
            self.assertTrue(p["objectives_agree"], p)
            self.assertLessEqual(p["gap"], 1e-8 * abs(p["primal"]) * (1 + 1e-9), p)

    def test_explicit_lambdas_and_screening_only(self):
        out = self.path("p.json")
        r = self.run_cli("--libsvm", self.data, "--lambdas", "0.5,0.05,0.005", "--screening-only",
                         "--loss", "safe_logistic", "--penalty", "l1", "--out", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            report = json.load(f)
        self.assertEqual(report["lambdas"], [0.5, 0.05, 0.005])
        self.assertEqual(report["penalty"], "l1")
        self.assertNotIn("without_screening", report["points"][0])

    def test_static_screening_with_ellipsoid_steps(self):
        out = self.path("p.json")
        r = self.run_cli("--libsvm", self.data, "--lambdas", "0.1,0.01", "--static-screen", "--ellipsoid-steps", "5",
                         "--tol", "1e-8", "--out", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            report = json.load(f)
        self.assertEqual(report["ellipsoid_steps"], 5)
        self.assertTrue(all(p["objectives_agree"] for p in report["points"]))
        msg = self.assert_refused("--libsvm", self.data, "--ellipsoid-steps", "5", extra=())
        self.assertIn("needs --static-screen", msg)

    def test_bad_lambda_lists(self):
        for bad in ("0.1,x", "0.1,-1", "", "1,,2"):
            msg = self.assert_refused("--libsvm", self.data, "--lambdas", bad, extra=())
            self.assertIn("--lambdas", msg)
        self.assert_refused("--libsvm", self.data, "--ratio", "2", extra=())
        self.assert_refused("--libsvm", self.data, "--count", "0", extra=())

    def test_missing_file_and_bad_loss(self):
        self.assert_refused("--libsvm", self.path("missing.svm"), extra=())
        self.assert_refused("--libsvm", self.data, "--loss", "nope", extra=())


class CompressCase(CliCase):
    """`inductive compress`: refits after removing samples by screening score, margin or at random."""

    command = "compress"

    def test_curves_on_a_held_out_split(self):
        out, csv = self.path("c.json"), self.path("c.csv")
        r = self.run_cli("--libsvm", self.data, "--lambda", "0.01", "--tol", "1e-9", "--fractions", "0,0.2,0.5",
                         "--test-fraction", "0.25", "--seed", "4", "--out", out, "--out-csv", csv)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("100% of the refits done", r.stderr)  # progress
        with open(out) as f:
            report = json.load(f)
        self.assertEqual((report["n_train"], report["n_test"]), (150, 50))
        self.assertEqual(report["test"], {"held_out_fraction": 0.25, "seed": 4})
        self.assertEqual([c["ranking"] for c in report["curves"]], ["screening", "margin", "random"])
        self.assertTrue(report["full_converged"])
        for c in report["curves"]:
            self.assertEqual([p["fraction_removed"] for p in c["points"]], [0, 0.2, 0.5])
            self.assertEqual([p["n_kept"] for p in c["points"]], [150, 120, 75])
            for p in c["points"]:
                # Never below the full optimum, never above it by more than the certified gap.
                self.assertGreaterEqual(p["train_objective"], report["full_primal"] - 1e-9)
                self.assertLessEqual(p["train_objective"] - report["full_primal"], p["certified_gap"] + 1e-9)
            if c["ranking"] == "screening":
                # Removing certified samples only changes nothing (the static test certifies > 20% here).
                self.assertGreater(report["n_certified"], 30)
                self.assertLess(c["points"][1]["certified_gap"], 1e-6)
                self.assertEqual(c["points"][1]["test_accuracy"], report["full_test_accuracy"])
        rows = np.genfromtxt(csv, delimiter=",", names=True, dtype=None, encoding="utf-8")
        self.assertEqual(len(rows), 9)
        self.assertEqual(list(rows["ranking"][:3]), ["screening"] * 3)
        self.assertAlmostEqual(float(rows["test_accuracy"][0]), report["curves"][0]["points"][0]["test_accuracy"])

    def test_a_test_file_and_a_choice_of_rankings(self):
        out = self.path("c.json")
        with open(self.data) as f:
            test = self.write("test.svm", "".join(f.readlines()[:40]))
        r = self.run_cli("--libsvm", self.data, "--test-libsvm", test, "--rankings", "random", "--fractions", "0.3",
                         "--out", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            report = json.load(f)
        self.assertEqual((report["n_train"], report["n_test"], report["test"]), (200, 40, test))
        self.assertEqual(len(report["curves"]), 1)
        self.assertEqual(report["curves"][0]["points"][0]["n_kept"], 140)

    def test_refusals(self):
        cases = [
            (("--fractions", "0,1"), "fractions must be in [0, 1)"),
            (("--fractions", "0,x"), "--fractions: not a number"),
            (("--rankings", "screening,best"), "--rankings must be screening, margin or random: got 'best'"),
            (("--test-fraction", "1.5"), "test fraction must be in (0, 1)"),
            (("--lambda", "0"), "--lambda must be"),
        ]
        for args, message in cases:
            msg = self.assert_refused("--libsvm", self.data, *args, extra=("--out-csv", "c.csv"))
            self.assertIn(message, msg)
        narrow = self.write("narrow.csv", "1,2,1\n3,4,-1\n")
        wide = self.write("wide.csv", "1,2,3,1\n3,4,5,-1\n2,2,2,1\n")
        msg = self.assert_refused("--csv", wide, "--test-csv", narrow, extra=())
        self.assertIn("2 features, the training input has 3", msg)


if __name__ == "__main__":
    unittest.main()
