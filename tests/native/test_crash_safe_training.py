"""Crash-safe training, as a user on a shared machine meets it: `kill -9` at any moment of `otke train` and
`graphit train` (checkpoint writes included) leaves the previous or the new checkpoint on disk, never a torn one;
resuming gives the model of an uninterrupted run, byte for byte; the temp files of killed writers are cleaned up.
A full disk while writing an output is one `error:` line, exit 2, the previous output intact and no temp file.

The kills land at seeded random moments spread over the run (measured first), so some hit checkpoint writes.
"""
import glob
import json
import os
import random
import shutil
import struct
import subprocess
import tempfile
import time
import unittest

CLI = os.environ.get("INDUCTIVE_CLI")
REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
POS = os.path.join(REPO, "data", "promoters", "ecoli_prom_150.fa")
NEG = os.path.join(REPO, "data", "promoters", "ecoli_non_prom_150.fa")
CLASSES = ["--class", f"promoter={POS}", "--class", f"non_promoter={NEG}"]
MUTAG = os.path.join(REPO, "data", "tu-MUTAG")
FOLDS = os.path.join(REPO, "data", "graphit-folds", "MUTAG")


def setUpModule():
    if not CLI:
        raise RuntimeError("INDUCTIVE_CLI is not set (ctest sets it to the built CLI)")


def complete_safetensors(path):
    """True when the file is a whole safetensors file: its header parses and the data is exactly what it lists."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 8:
        return False
    (n,) = struct.unpack("<Q", data[:8])
    try:
        header = json.loads(data[8:8 + n])
    except ValueError:
        return False
    header.pop("__metadata__", None)
    end = max((t["data_offsets"][1] for t in header.values()), default=0)
    return len(data) == 8 + n + end


class KilledTraining(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="inductive-crash-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.dir, name)

    def kill_and_resume(self, args, checkpoint, out, kills=6, seed=0):
        """Runs `args` to completion once (reference), then again with kill -9 at random moments, resuming each
        time from `checkpoint`; checks the checkpoint after every kill and returns (reference bytes, final bytes)."""
        reference = self.path("reference.out")
        # The kill moments are fractions of one run's duration: take the faster of two runs, so that a cold first
        # run (page cache, a fresh machine) does not stretch them past the end of every later run.
        durations = []
        for _ in range(2):
            start = time.monotonic()
            done = subprocess.run([CLI, *args, "--out", reference], capture_output=True, text=True, timeout=600)
            self.assertEqual(done.returncode, 0, done.stderr)
            durations.append(time.monotonic() - start)
        duration = min(durations)
        rng = random.Random(seed)
        finished = False
        killed = 0
        shrink = 1.0
        for _ in range(kills):
            proc = subprocess.Popen([CLI, *args, "--checkpoint", checkpoint, "--out", out],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(rng.uniform(0.05, 0.9) * duration * shrink)
            if proc.poll() is None:
                proc.kill()  # SIGKILL: no handler runs, no cleanup
                killed += 1
            proc.wait()
            if killed == 0 and os.path.exists(out):
                # This machine ran faster than the timed runs: nothing was tested yet, so start over from scratch
                # with earlier kill moments rather than accept a run that was never interrupted.
                for stale in (out, checkpoint):
                    if os.path.exists(stale):
                        os.remove(stale)
                shrink /= 2
                continue
            if os.path.exists(checkpoint):
                self.assertTrue(complete_safetensors(checkpoint), "a torn checkpoint after kill -9")
                info = subprocess.run([CLI, "info", checkpoint], capture_output=True, text=True, timeout=60)
                self.assertEqual(info.returncode, 0, info.stderr)
            if os.path.exists(out):
                self.assertTrue(complete_safetensors(out), "a torn output after kill -9")
                finished = True
                break
        self.assertGreater(killed, 0, "no run was killed mid-way: the test did not test anything")
        if not finished:
            done = subprocess.run([CLI, *args, "--checkpoint", checkpoint, "--out", out], capture_output=True,
                                  text=True, timeout=600)
            self.assertEqual(done.returncode, 0, done.stderr)
        # The killed writers' temp files are gone (removed by the next writer of the same file).
        self.assertEqual(glob.glob(os.path.join(self.dir, "*.tmp-*")), [])
        with open(reference, "rb") as a, open(out, "rb") as b:
            return a.read(), b.read()

    def test_otke_train_killed_anywhere_resumes_to_the_uninterrupted_model(self):
        init = self.path("init.safetensors")
        # Big enough (about 0.5 s of training here) that the kills land inside the epochs, not in start-up.
        fit = subprocess.run([CLI, "otke", "fit", "--quiet", *CLASSES, "--kmer", "8", "--anchors", "64", "--p", "16",
                              "--iters", "30", "--seed", "3", "--out", init], capture_output=True, text=True, timeout=300)
        self.assertEqual(fit.returncode, 0, fit.stderr)
        args = ["otke", "train", "--init", init, *CLASSES, "--epochs", "30", "--early-stop", "1000", "--batch-size",
                "16", "--seed", "1", "--quiet"]
        ref, got = self.kill_and_resume(args, self.path("ck.safetensors"), self.path("trained.safetensors"))
        self.assertEqual(ref, got)

    def test_graphit_train_killed_anywhere_resumes_to_the_uninterrupted_model(self):
        args = ["graphit", "train", "--tu", MUTAG, "--folds", FOLDS, "--fold", "2", "--layers", "1", "--dim", "16",
                "--epochs", "30", "--quiet"]
        ref, got = self.kill_and_resume(args, self.path("ck.bin"), self.path("model.safetensors"), seed=1)
        self.assertEqual(ref, got)


class FullDisk(unittest.TestCase):
    """A 256 KiB tmpfs, filled up: writing an output fails cleanly and leaves the previous one."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="inductive-full-")
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", self.dir],
                                 capture_output=True, text=True)
        if mounted.returncode != 0:
            raise RuntimeError(f"cannot mount a small tmpfs for the full-disk test (run as root): {mounted.stderr}")

    def tearDown(self):
        subprocess.run(["umount", self.dir], capture_output=True)
        shutil.rmtree(self.dir, ignore_errors=True)

    def test_a_full_disk_is_one_error_line_and_the_previous_output_stays(self):
        model = os.path.join(self.dir, "model.safetensors")
        fit = [CLI, "otke", "fit", "--quiet", *CLASSES, "--kmer", "8", "--anchors", "16", "--p", "8", "--iters",
               "30", "--out", model]
        first = subprocess.run(fit + ["--seed", "3"], capture_output=True, text=True, timeout=300)
        self.assertEqual(first.returncode, 0, first.stderr)
        with open(model, "rb") as f:
            before = f.read()
        # Fill the disk, leaving less than a model file's size.
        fd = os.open(os.path.join(self.dir, "filler"), os.O_WRONLY | os.O_CREAT)
        try:
            while os.write(fd, b"\0" * 4096) > 0:
                pass
        except OSError:
            pass
        finally:
            os.close(fd)
        again = subprocess.run(fit + ["--seed", "4"], capture_output=True, text=True, timeout=300)
        self.assertEqual(again.returncode, 2, again.stderr)
        lines = again.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, again.stderr)
        self.assertTrue(lines[0].startswith("error:") and "No space left on device" in lines[0], lines[0])
        with open(model, "rb") as f:
            self.assertEqual(f.read(), before)
        self.assertEqual(glob.glob(os.path.join(self.dir, "*.tmp-*")), [])


if __name__ == "__main__":
    unittest.main()
