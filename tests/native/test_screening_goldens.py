"""The committed screening goldens (tests/data/screening) are what today's CLI makes
(tests/data/screening/make_goldens.py --check), and the check can fail."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np

SCRIPT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "screening")
sys.path.insert(0, SCRIPT_DIR)
import make_goldens  # noqa: E402

SCRIPT = os.path.join(SCRIPT_DIR, "make_goldens.py")
# ctest sets INDUCTIVE_CLI; run by hand, the release build's CLI. A missing CLI fails the tests, never skips them.
CLI = os.environ.get("INDUCTIVE_CLI") or os.path.join(make_goldens.ROOT, "build", "native-release", "bin", "inductive")
GOLDENS = make_goldens.files()


def run_script(*args):
    return subprocess.run([sys.executable, SCRIPT, "--check", "--cli", CLI, *args], capture_output=True, text=True)


def load_json(path):
    with open(path) as f:
        return json.load(f)


def save_json(path, value):
    with open(path, "w") as f:
        json.dump(value, f, indent=2)


class ScreeningGoldens(unittest.TestCase):
    def setUp(self):
        self.assertTrue(os.access(CLI, os.X_OK), f"no CLI at {CLI}: build it or set INDUCTIVE_CLI")
        self.tmp = tempfile.mkdtemp(prefix="screening-goldens-")
        self.addCleanup(shutil.rmtree, self.tmp)

    def copy(self):
        """A copy of the committed goldens, to perturb."""
        for f in GOLDENS:
            shutil.copy(os.path.join(make_goldens.HERE, f), os.path.join(self.tmp, f))
        return self.tmp

    def test_committed_goldens_are_current(self):
        self.assertEqual(len(GOLDENS), 5)
        r = run_script()
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr +
                         "\nstale goldens: see tests/data/screening/README.md (make_goldens.py without --check)")
        self.assertIn("5 files checked, 0 differences", r.stdout)

    def test_the_check_fails_on_a_perturbed_copy(self):
        # End to end, exit status included, on the two fast runs (the Gaussian one spends seconds in its Gram matrix).
        d = self.copy()
        r = run_script("--goldens", d, "--only", "lambda1,compress")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)  # the unchanged copy passes
        path = os.path.join(d, "digits-9-vs-rest-lambda1.json")
        report = load_json(path)
        report["primal"] *= 1 + 1e-6  # 10x the relative bar
        save_json(path, report)
        r = run_script("--goldens", d, "--only", "lambda1,compress")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("first difference: digits-9-vs-rest-lambda1.json.primal", r.stdout)
        self.assertIn("3 files checked, 1 differences", r.stdout)

    def test_the_comparison_sees_numbers_integers_keys_and_indices_but_not_timings(self):
        d = self.copy()
        here = make_goldens.HERE
        diff = lambda f: make_goldens.differences(here, d, f)  # noqa: E731  (the committed files play "new")
        self.assertEqual([x for f in GOLDENS for x in diff(f)], [])

        name = "digits-9-vs-rest-gaussian.json"
        original = load_json(os.path.join(here, name))
        report = json.loads(json.dumps(original))
        report["solve_seconds"] *= 7  # timings are not compared ...
        report["kernel"]["seconds"] += 100
        report["primal"] *= 1 + 1e-8  # ... nor differences within the bar
        save_json(os.path.join(d, name), report)
        self.assertEqual(diff(name), [])
        report["history"]["active"][3] += 1  # integers exactly
        save_json(os.path.join(d, name), report)
        self.assertEqual(diff(name), [f"{name}.history.active[3]: new {original['history']['active'][3]} != "
                                      f"committed {report['history']['active'][3]}"])
        report = json.loads(json.dumps(original))
        del report["screen_seconds"]  # a timing key's presence is compared
        save_json(os.path.join(d, name), report)
        self.assertEqual(diff(name), [f"{name}: key 'screen_seconds' only in the new output"])

        name = "digits-9-vs-rest-compress.json"
        report = load_json(os.path.join(here, name))
        report["curves"][2]["points"][1]["test_accuracy"] += 1e-4
        save_json(os.path.join(d, name), report)
        found = diff(name)
        self.assertEqual(len(found), 1)
        self.assertTrue(found[0].startswith(f"{name}.curves[2].points[1].test_accuracy: "), found)

        name = "digits-9-vs-rest-lambda1.kept.npy"
        kept = np.load(os.path.join(here, name))
        changed = kept.copy()
        changed[17] += 1
        np.save(os.path.join(d, name), changed)
        self.assertEqual(diff(name), [f"{name}[17]: new {kept[17]} != committed {changed[17]} (1 elements differ)"])
        np.save(os.path.join(d, name), kept.astype(np.int64))
        self.assertIn("int64", diff(name)[0])


if __name__ == "__main__":
    unittest.main()
