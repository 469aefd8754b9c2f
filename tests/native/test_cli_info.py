"""`inductive info`, driven as a user drives it: what it prints for a good model file, and the exit code and
single `error:` line for each corrupt fixture in tests/data/models (see its README).

Run by ctest with INDUCTIVE_CLI (the binary) and INDUCTIVE_TEST_DATA set; by hand:
    INDUCTIVE_CLI=build/h-io/bin/inductive INDUCTIVE_TEST_DATA=tests/data /usr/bin/python3 -m unittest -v test_cli_info
"""
import os
import subprocess
import unittest

CLI = os.environ.get("INDUCTIVE_CLI", "")
DATA = os.environ.get("INDUCTIVE_TEST_DATA", "")


def models_dir():
    # INDUCTIVE_TEST_DATA is <repo>/tests/data; "<repo>/data" + "../tests/data" covers a move to the root.
    for rel in ("models", os.path.join("..", "tests", "data", "models")):
        path = os.path.normpath(os.path.join(DATA, rel))
        if os.path.isfile(os.path.join(path, "v1_minimal.safetensors")):
            return path
    raise RuntimeError(f"model fixtures not found under INDUCTIVE_TEST_DATA={DATA!r}")


def info(path):
    return subprocess.run([CLI, "info", path], capture_output=True, text=True, timeout=60)


def setUpModule():
    if not CLI:
        raise RuntimeError("INDUCTIVE_CLI is not set (ctest sets it to the built CLI)")


class InfoCommand(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.models = models_dir()

    def fixture(self, name):
        return os.path.join(self.models, name)

    def test_describes_a_valid_model(self):
        r = info(self.fixture("v1_minimal.safetensors"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr, "")
        out = r.stdout
        for line in ("format:         inductive", "format_version: 1", "model:          test",
                     "producer:       make_fixtures.py (python struct+json)", "tensors:        2 (40 bytes)"):
            self.assertIn(line + "\n", out)
        self.assertIn('"eps": 0.5', out)
        rows = [line.split() for line in out.splitlines() if line.startswith("  ") and not line.startswith("   ")]
        self.assertIn(["name", "dtype", "shape", "bytes"], rows)
        self.assertIn(["weight", "F32", "[2,", "3]", "24"], rows)
        self.assertIn(["labels", "I32", "[4]", "16"], rows)

    def assert_one_error_line(self, path, *fragments, code=2):
        r = info(path)
        self.assertEqual(r.returncode, code, f"stdout={r.stdout!r} stderr={r.stderr!r}")
        self.assertEqual(r.stdout, "")
        lines = r.stderr.splitlines()
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertTrue(lines[0].startswith("error: "), lines[0])
        self.assertIn(path, lines[0], "the message names the file")
        for fragment in fragments:
            self.assertIn(fragment, lines[0])

    def test_corrupt_files_exit_2_with_one_error_line(self):
        cases = {
            "truncated.safetensors": "end beyond the data section",
            "overlapping.safetensors": "overlap",
            "bad_json.safetensors": "invalid JSON",
            "wrong_dtype.safetensors": 'dtype: got "F64"',
            "huge_header.safetensors": "expected at most 16777216",
            "future_version.safetensors": "file is format_version 99; this build reads up to 1",
        }
        for name, fragment in cases.items():
            with self.subTest(name):
                self.assert_one_error_line(self.fixture(name), fragment)

    def test_missing_file_exits_2(self):
        path = self.fixture("no_such_model.safetensors")
        self.assert_one_error_line(path, "No such file")

    def test_directory_exits_2(self):
        self.assert_one_error_line(self.models)


if __name__ == "__main__":
    unittest.main()
