"""The committed native references the browser tests compare with are what today's CLI makes
(tests/data/cli_references.py --check), and the check can fail."""
import json
import os
import shutil
import sys
import tempfile
import unittest

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data"))
import cli_references  # noqa: E402

# ctest sets INDUCTIVE_CLI; run by hand, the release build's CLI. A missing CLI fails the tests, never skips them.
CLI = os.environ.get("INDUCTIVE_CLI") or os.path.join(cli_references.ROOT, "build", "native-release", "bin",
                                                       "inductive")


class CliReferences(unittest.TestCase):
    def setUp(self):
        self.assertTrue(os.access(CLI, os.X_OK), f"no CLI at {CLI}: build it or set INDUCTIVE_CLI")
    def test_committed_references_are_current(self):
        rels, found = cli_references.check(CLI)
        self.assertGreaterEqual(len(rels), 30)  # 2 OTKE embeddings, GraphiT predict x 2, 6 attention folders
        self.assertEqual(found, [], "stale references: run /usr/bin/python3 tests/data/cli_references.py")

    def test_the_comparison_sees_a_changed_number_and_a_changed_key(self):
        root = cli_references.ROOT
        with tempfile.TemporaryDirectory() as tmp:
            for rel in ("tests/data/graphit/predict.npy", "tests/data/graphit/predict.json"):
                os.makedirs(os.path.dirname(os.path.join(tmp, rel)), exist_ok=True)
                shutil.copy(os.path.join(root, rel), os.path.join(tmp, rel))
            self.assertEqual(cli_references.differences(tmp, root, "tests/data/graphit/predict.npy"), [])
            a = np.load(os.path.join(tmp, "tests/data/graphit/predict.npy"))
            a[1, 0] += 1e-4
            np.save(os.path.join(tmp, "tests/data/graphit/predict.npy"), a)
            self.assertEqual(len(cli_references.differences(tmp, root, "tests/data/graphit/predict.npy")), 1)
            with open(os.path.join(tmp, "tests/data/graphit/predict.json")) as f:
                report = json.load(f)
            report["graphs"][0]["prediction"] = "non-mutagenic" if report["graphs"][0]["prediction"] == "mutagenic" \
                else "mutagenic"
            report["extra"] = 1
            with open(os.path.join(tmp, "tests/data/graphit/predict.json"), "w") as f:
                json.dump(report, f)
            # Both are reported: the key the new output has too many, and the changed value below it.
            found = cli_references.differences(tmp, root, "tests/data/graphit/predict.json")
            self.assertEqual(len(found), 2, found)
            self.assertIn("'extra' only in the new output", found[0])
            del report["extra"]
            with open(os.path.join(tmp, "tests/data/graphit/predict.json"), "w") as f:
                json.dump(report, f)
            found = cli_references.differences(tmp, root, "tests/data/graphit/predict.json")
            self.assertEqual(len(found), 1)
            self.assertIn("graphs[0].prediction", found[0])


if __name__ == "__main__":
    unittest.main()
