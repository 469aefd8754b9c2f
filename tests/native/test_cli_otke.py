"""`inductive otke fit | embed | eval` as a user drives them, on the vendored E. coli promoter subset.

The contract (ARCHITECTURE.md, "CLI"): exit 0 with a JSON summary on stdout; on bad input exit 2 with exactly one
stderr line starting with `error:` that names the problem, nothing on stdout, and no output written (no new file,
no temp leftovers, an existing file keeps its bytes).
Data: data/promoters/ (150 promoters + 150 non-promoters, 81 nt each; data/SOURCE.md).
"""
import json
import os
import shutil
import subprocess
import tempfile
import unittest

import numpy as np

from safetensors_np import read_safetensors

CLI = os.environ.get("INDUCTIVE_CLI")
REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
TEST_DATA = os.environ.get("INDUCTIVE_TEST_DATA", os.path.join(REPO, "tests", "data"))
PROMOTERS = os.path.join(REPO, "data", "promoters")
POS = os.path.join(PROMOTERS, "ecoli_prom_150.fa")
NEG = os.path.join(PROMOTERS, "ecoli_non_prom_150.fa")
CLASSES = ["--class", f"promoter={POS}", "--class", f"non_promoter={NEG}"]
# Small and fast, yet enough to learn the promoter signal: 16 anchors on 8-mers, 8 supports.
SMALL = ["--kmer", "8", "--anchors", "16", "--p", "8", "--iters", "30", "--seed", "3"]


def setUpModule():
    if not CLI:
        raise RuntimeError("INDUCTIVE_CLI is not set (ctest sets it to the built CLI)")


def run_cli(*args, cwd=None):
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=300, cwd=cwd)


def read_fasta(path):
    records = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith(">"):
                records.append([line[1:], ""])
            elif line:
                records[-1][1] += line
    return records


class TrainedModel(unittest.TestCase):
    """One model fitted on the subset, shared by the tests that only read it."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="inductive-otke-")
        cls.model = os.path.join(cls.dir, "model.safetensors")
        done = run_cli("otke", "fit", *CLASSES, *SMALL, "--out", cls.model)
        assert done.returncode == 0, done.stderr
        cls.fit = json.loads(done.stdout)
        cls.fit_stderr = done.stderr

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir)

    def path(self, name):
        return os.path.join(self.dir, name)

    def test_fit_summary_reports_split_lambda_and_accuracies(self):
        f = self.fit
        self.assertEqual(f["classes"], ["promoter", "non_promoter"])
        self.assertEqual(f["class_counts"], {"promoter": 150, "non_promoter": 150})
        self.assertEqual((f["n_train"], f["n_val"]), (240, 60))  # stratified 20%: 30 + 30
        self.assertIn(f["lambda_log2"], range(-20, -4))       # the thesis grid 2^-5 .. 2^-20
        self.assertEqual(len(f["head"]["lambda_path"]), 16)
        self.assertEqual(f["head"]["lambda_choice"], "holdout")
        self.assertEqual(f["embedding_dim"], 8 * 16)
        self.assertGreater(f["head"]["holdout_accuracy"], 0.65)  # real signal, far above chance on 60 samples
        for stage in ("load", "unsupervised", "embed", "head", "write", "total"):
            self.assertGreaterEqual(f["timings_s"][stage], 0.0)

    def test_fit_reports_progress_on_stderr(self):
        lines = self.fit_stderr.splitlines()
        self.assertTrue(lines and all(line.startswith("otke fit: [") for line in lines), lines[:3])
        self.assertTrue(any("lambda selection 100%" in line for line in lines))

    def test_model_file_holds_labels_and_a_head_on_raw_embeddings(self):
        tensors, config = read_safetensors(self.model)
        self.assertEqual(config["head"], {"classes": 2, "labels": ["promoter", "non_promoter"]})
        self.assertEqual(config["input"], {"type": "sequence", "alphabet": "dna", "k": 8})
        self.assertEqual(tensors["head.weight"].shape, (2, 128))
        self.assertEqual(tensors["otk.references"].shape, (1, 8, 16))

    def test_same_seed_same_model_bytes(self):
        again = self.path("again.safetensors")
        done = run_cli("otke", "fit", "--quiet", *CLASSES, *SMALL, "--out", again)
        self.assertEqual(done.returncode, 0, done.stderr)
        with open(self.model, "rb") as a, open(again, "rb") as b:
            self.assertEqual(a.read(), b.read())

    def embed(self, *args):
        done = run_cli("otke", "embed", "--quiet", "--model", self.model, *args)
        self.assertEqual(done.returncode, 0, done.stderr)
        return json.loads(done.stdout)

    def test_embed_writes_embeddings_and_plans_with_sinkhorn_marginals(self):
        e_path, p_path = self.path("E.npy"), self.path("P.npy")
        out = self.embed("--fasta", POS, "--out", e_path, "--plans", p_path)
        e, p = np.load(e_path), np.load(p_path)
        self.assertEqual(e.dtype, np.float32)
        self.assertEqual(e.shape, (150, 128))
        self.assertTrue(np.isfinite(e).all())
        self.assertEqual(p.shape, (150, 1, 81 - 8 + 1, 8))  # [B, q, n_max, p]
        self.assertEqual(out["plans"]["shape"], list(p.shape))
        # No positional weighting here: rows carry 1/n, columns 1/p.
        np.testing.assert_allclose(p.sum(axis=3), 1.0 / 74, rtol=1e-3)
        np.testing.assert_allclose(p.sum(axis=2), 1.0 / 8, rtol=1e-3)

    def test_embedding_in_chunks_changes_nothing(self):
        self.embed("--fasta", POS, "--out", self.path("a.npy"))
        self.embed("--fasta", POS, "--out", self.path("b.npy"), "--batch-size", "7")
        np.testing.assert_allclose(np.load(self.path("a.npy")), np.load(self.path("b.npy")), rtol=0, atol=1e-6)

    def test_plans_of_short_sequences_are_zero_padded(self):
        records = read_fasta(POS)[:3]
        fa = self.path("ragged.fa")
        with open(fa, "w") as f:
            for (name, seq), length in zip(records, (81, 30, 8)):
                f.write(f">{name}\n{seq[:length]}\n")
        self.embed("--fasta", fa, "--out", self.path("r.npy"), "--plans", self.path("rp.npy"))
        p = np.load(self.path("rp.npy"))
        self.assertEqual(p.shape, (3, 1, 74, 8))
        self.assertEqual(np.abs(p[1, 0, 23:]).max(), 0.0)  # length 30: 23 k-mers
        self.assertEqual(np.abs(p[2, 0, 1:]).max(), 0.0)   # length 8: a single k-mer
        np.testing.assert_allclose(p[2, 0, 0], 1.0 / 8, rtol=1e-4)

    def evaluate(self, *args):
        done = run_cli("otke", "eval", "--quiet", "--model", self.model, *args)
        self.assertEqual(done.returncode, 0, done.stderr)
        return json.loads(done.stdout)

    def test_eval_agrees_with_embed_and_the_stored_head(self):
        out = self.evaluate(*CLASSES)
        self.assertEqual(out["n"], 300)
        self.assertEqual(out["classes"], ["promoter", "non_promoter"])
        self.assertEqual(list(out["top_k_accuracy"]), ["1"])
        cm = np.array(out["confusion_matrix"]["matrix"])
        self.assertEqual(cm.sum(axis=1).tolist(), [150, 150])
        self.assertAlmostEqual(out["accuracy"], np.trace(cm) / 300, places=12)
        self.assertGreater(out["auroc"], 0.8)
        # Recompute the predictions from `embed` and the head read straight from the file.
        self.embed("--fasta", POS, "--fasta", NEG, "--out", self.path("all.npy"))
        tensors, _ = read_safetensors(self.model)
        logits = np.load(self.path("all.npy")) @ tensors["head.weight"].T + tensors["head.bias"]
        y = np.r_[np.zeros(150, int), np.ones(150, int)]
        self.assertAlmostEqual(out["accuracy"], np.mean(logits.argmax(axis=1) == y), places=12)

    def test_tsv_input_gives_the_same_metrics(self):
        tsv = self.path("data.tsv")
        with open(tsv, "w") as f:
            f.write("# label<TAB>sequence\n")
            for label, path in (("non_promoter", NEG), ("promoter", POS)):  # order of lines does not matter
                for _, seq in read_fasta(path):
                    f.write(f"{label}\t{seq}\n")
        a, b = self.evaluate(*CLASSES), self.evaluate("--tsv", tsv)
        self.assertAlmostEqual(a["accuracy"], b["accuracy"], places=12)
        self.assertAlmostEqual(a["auroc"], b["auroc"], places=12)
        self.assertEqual(a["confusion_matrix"], b["confusion_matrix"])

    def test_eval_on_one_class_counts_but_has_no_auroc(self):
        out = self.evaluate("--class", f"promoter={POS}")
        self.assertEqual(out["class_counts"], [150, 0])
        self.assertIsNone(out["auroc"])


class BundledModel(unittest.TestCase):
    """data/models/otke-promoters-ecoli.safetensors still loads and behaves as data/models/README.md says."""

    MODEL = os.path.join(REPO, "data", "models", "otke-promoters-ecoli.safetensors")

    def setUp(self):
        self.assertTrue(os.path.exists(self.MODEL), f"{self.MODEL} is missing: it is committed (data/models/README.md)")
        self.dir = tempfile.mkdtemp(prefix="inductive-otke-bundled-")
        self.addCleanup(shutil.rmtree, self.dir)

    def test_held_out_metrics_match_the_readme(self):
        done = run_cli("otke", "eval", "--quiet", "--model", self.MODEL, *CLASSES)
        self.assertEqual(done.returncode, 0, done.stderr)
        out = json.loads(done.stdout)
        # Deltas leave room for a borderline sample or two on another SIMD path, not for a changed model.
        self.assertAlmostEqual(out["accuracy"], 0.870, delta=0.01)
        self.assertAlmostEqual(out["auroc"], 0.964, delta=0.002)

    def test_reference_embeddings_are_what_embed_computes(self):
        fa = os.path.join(self.dir, "reference8.fa")
        with open(fa, "w") as f:
            for path in (POS, NEG):
                for name, seq in read_fasta(path)[:4]:
                    f.write(f">{name}\n{seq}\n")
        out = os.path.join(self.dir, "E.npy")
        done = run_cli("otke", "embed", "--quiet", "--model", self.MODEL, "--fasta", fa, "--out", out)
        self.assertEqual(done.returncode, 0, done.stderr)
        reference = np.load(self.MODEL.replace(".safetensors", ".reference.npy"))
        self.assertEqual(reference.shape, (8, 2048))
        np.testing.assert_allclose(np.load(out), reference, rtol=0, atol=1e-5)


class VectorSets(unittest.TestCase):
    """Sets of generic vectors (NPY): two classes whose sets differ in the mean of one coordinate."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="inductive-otke-sets-")
        self.addCleanup(shutil.rmtree, self.dir)
        rng = np.random.default_rng(0)
        B, n_max, d = 120, 12, 5
        self.y = (np.arange(B) % 2).astype(np.int32)
        x = rng.normal(size=(B, n_max, d)).astype(np.float32)
        x[:, :, 0] += 1.5 * self.y[:, None]
        self.n = rng.integers(3, n_max + 1, B).astype(np.int32)
        for b in range(B):
            x[b, self.n[b]:] = np.nan  # padding is never read: even NaN there is fine
        for name, a in (("x.npy", x), ("n.npy", self.n), ("y.npy", self.y)):
            np.save(os.path.join(self.dir, name), a)

    def run_ok(self, *args):
        done = run_cli(*args, cwd=self.dir)
        self.assertEqual(done.returncode, 0, done.stderr)
        return json.loads(done.stdout)

    def test_fit_and_eval_on_sets_with_each_pooling(self):
        for pooling in ("otk", "mean", "max"):
            fit = self.run_ok("otke", "fit", "--quiet", "--sets", "x.npy", "--lengths", "n.npy", "--labels", "y.npy",
                              "--anchors", "8", "--p", "4", "--pooling", pooling, "--out", f"{pooling}.safetensors")
            self.assertEqual(fit["input"], "vectors")
            self.assertEqual(fit["classes"], ["0", "1"])
            out = self.run_ok("otke", "eval", "--quiet", "--model", f"{pooling}.safetensors", "--sets", "x.npy",
                              "--lengths", "n.npy", "--labels", "y.npy")
            self.assertGreater(out["accuracy"], 0.8, pooling)

    def test_unlabelled_sets_join_the_unsupervised_stage(self):
        fit = self.run_ok("otke", "fit", "--quiet", "--sets", "x.npy", "--lengths", "n.npy", "--labels", "y.npy",
                          "--unlabeled-sets", "x.npy", "--unlabeled-lengths", "n.npy", "--embedding", "identity",
                          "--p", "4", "--out", "m.safetensors")
        self.assertEqual(fit["n_unlabeled"], 120)
        self.assertEqual(fit["embedding_dim"], 4 * 5)


class WholeSetStagesStream(unittest.TestCase):
    """q > 1 (the Wasserstein k-means) and the barycenter read every set; they embed them a chunk at a time.

    6,000 unlabelled 81-letter sequences: their k-mer features (74 x 32 floats each) and embeddings (74 x 64) would
    add 170 MB held at once. The fit's peak must stay within 50 MB of the q = 1 k-means fit of the same data, which
    never reads whole sets (the CLI's own baseline, ~240 MB here, is mostly its shared libraries)."""

    def peak_mb(self, *args):
        with subprocess.Popen([CLI, "otke", "fit", "--quiet", *CLASSES, "--unlabeled", self.many, "--kmer", "8",
                               "--anchors", "64", "--p", "8", "--iters", "20", "--max-samples", "20000", *args,
                               "--out", self.out], stdout=subprocess.PIPE, stderr=subprocess.PIPE) as child:
            _, status, usage = os.wait4(child.pid, 0)
            stderr = child.stderr.read().decode()
        self.assertEqual(os.waitstatus_to_exitcode(status), 0, stderr)
        return usage.ru_maxrss / 1024  # kilobytes on Linux

    def test_peak_memory_does_not_grow_with_every_sets_embedding(self):
        rng = np.random.default_rng(7)
        folder = tempfile.mkdtemp(prefix="inductive-stream-")
        self.addCleanup(shutil.rmtree, folder)
        self.many, self.out = os.path.join(folder, "many.fa"), os.path.join(folder, "m.safetensors")
        letters = np.array(list("ACGT"))
        with open(self.many, "w") as f:
            for i, row in enumerate(rng.integers(0, 4, size=(6000, 81))):
                f.write(f">u{i}\n{''.join(letters[row])}\n")
        baseline = self.peak_mb()
        whole_sets = self.peak_mb("--q", "2", "--reference-update", "barycenter", "--barycenter-iters", "2")
        self.assertLess(whole_sets - baseline, 50, f"peak RSS {whole_sets:.0f} MB against {baseline:.0f} MB")
        tensors, _ = read_safetensors(self.out)
        self.assertEqual(tensors["otk.references"].shape, (2, 8, 64))


class RefusesBadInput(unittest.TestCase):
    """Every refusal: exit 2, one `error:` line naming the problem, nothing on stdout, nothing written."""

    @classmethod
    def setUpClass(cls):
        cls.shared = tempfile.mkdtemp(prefix="inductive-otke-bad-")
        cls.model = os.path.join(cls.shared, "model.safetensors")
        done = run_cli("otke", "fit", "--quiet", *CLASSES, *SMALL, "--out", cls.model)
        assert done.returncode == 0, done.stderr
        cls.mean_model = os.path.join(cls.shared, "mean.safetensors")
        done = run_cli("otke", "fit", "--quiet", *CLASSES, *SMALL, "--pooling", "mean", "--out", cls.mean_model)
        assert done.returncode == 0, done.stderr

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.shared)

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="inductive-otke-bad-")
        self.addCleanup(shutil.rmtree, self.dir)

    def write(self, name, text):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def assert_refused(self, args, pattern, outputs=("out.safetensors",)):
        done = run_cli(*args, cwd=self.dir)
        self.assertEqual(done.returncode, 2, f"stdout={done.stdout!r} stderr={done.stderr!r}")
        lines = done.stderr.splitlines()
        self.assertEqual(len(lines), 1, f"expected one stderr line, got {lines!r}")
        self.assertTrue(lines[0].startswith("error: "), lines[0])
        self.assertRegex(lines[0], pattern)
        self.assertEqual(done.stdout, "")
        for name in outputs:
            self.assertFalse(os.path.exists(os.path.join(self.dir, name)), f"{name} was written by a failed run")
        self.assertEqual([f for f in os.listdir(self.dir) if ".tmp-" in f], [], "temporary files left behind")

    def fit(self, *data):
        return ["otke", "fit", *data, *SMALL, "--out", "out.safetensors"]

    def test_cuda_backend_without_a_gpu_is_refused_never_run_on_the_cpu(self):
        # train, embed and eval: a build without CUDA or a machine without a GPU refuses `--backend cuda` (the GPU
        # runs are bench/gpu/check.sh's). On a machine with a GPU this test has nothing to check.
        if subprocess.run(["sh", "-c", "nvidia-smi -L"], capture_output=True).returncode == 0:
            self.skipTest("this machine has a GPU")
        self.assert_refused(["otke", "train", "--quiet", *CLASSES, "--init", self.model, "--epochs", "1",
                             "--backend", "cuda", "--out", "out.safetensors"], r"cuda")
        self.assert_refused(["otke", "embed", "--quiet", "--model", self.model, "--fasta", POS, "--backend", "cuda",
                             "--out", "e.npy"], r"cuda", outputs=("e.npy",))
        self.assert_refused(["otke", "eval", "--quiet", "--model", self.model, *CLASSES, "--backend", "cuda:3"],
                            r"cuda", outputs=())
        # fit embeds its labelled samples on the backend: refused before the data is read, no model written.
        self.assert_refused(self.fit(*CLASSES, "--backend", "cuda"), r"cuda", outputs=("out.safetensors",))
        self.assert_refused(["otke", "embed", "--quiet", "--model", self.model, "--fasta", POS, "--backend", "tpu",
                             "--out", "e.npy"], r"unknown backend 'tpu'", outputs=("e.npy",))

    def test_invalid_letter_names_file_record_and_position(self):
        bad = self.write("bad.fa", ">ok\nACGTACGTACGT\n>has_n\nACGTNACGTACG\n")
        self.assert_refused(self.fit("--class", f"a={bad}", "--class", f"b={NEG}"),
                            r"bad\.fa record 2 \(has_n\): invalid letter 'N' at position 5: expected one of ACGT")

    def test_invalid_letter_is_refused_by_embed_and_eval_too(self):
        bad = self.write("bad.fa", ">x\nACGTACGTACGTU\n")
        self.assert_refused(["otke", "embed", "--model", self.model, "--fasta", bad, "--out", "E.npy"],
                            r"bad\.fa record 1 \(x\): invalid letter 'U' at position 13", outputs=("E.npy",))
        self.assert_refused(["otke", "eval", "--model", self.model, "--class", f"promoter={bad}"],
                            r"invalid letter 'U' at position 13", outputs=())

    def test_empty_sequence(self):
        bad = self.write("empty_seq.fa", ">a\nACGTACGTAC\n>nothing\n>c\nACGTACGTAC\n")
        self.assert_refused(self.fit("--class", f"a={bad}", "--class", f"b={NEG}"),
                            r"empty_seq\.fa: record 'nothing' \(line 3\) has an empty sequence")

    def test_sequence_shorter_than_k(self):
        bad = self.write("short.fa", ">long\nACGTACGTACGT\n>tiny\nACGTA\n")
        self.assert_refused(self.fit("--class", f"a={bad}", "--class", f"b={NEG}"),
                            r"short\.fa record 2 \(tiny\): sequence shorter than k: got length 5, expected >= 8")
        self.assert_refused(["otke", "embed", "--model", self.model, "--fasta", bad, "--out", "E.npy"],
                            r"record 2 \(tiny\): sequence shorter than k: got length 5, expected >= 8",
                            outputs=("E.npy",))

    def test_missing_class_file(self):
        self.assert_refused(self.fit("--class", "promoter=missing.fa", "--class", f"b={NEG}"),
                            r"--class promoter: missing\.fa: cannot open FASTA file")

    def test_empty_fasta(self):
        empty = self.write("empty.fa", "")
        self.assert_refused(self.fit("--class", f"a={empty}", "--class", f"b={NEG}"), r"empty\.fa: no FASTA record")
        self.assert_refused(["otke", "embed", "--model", self.model, "--fasta", empty, "--out", "E.npy"],
                            r"--fasta: .*empty\.fa: no FASTA record", outputs=("E.npy",))

    def test_model_of_another_kind(self):
        other = os.path.join(TEST_DATA, "models", "v1_minimal.safetensors")  # a valid file of model kind "test"
        self.assert_refused(["otke", "embed", "--model", other, "--fasta", POS, "--out", "E.npy"],
                            r"v1_minimal\.safetensors: model file holds a 'test' model, expected an otke model",
                            outputs=("E.npy",))
        self.assert_refused(["otke", "eval", "--model", other, *CLASSES], r"holds a 'test' model", outputs=())

    def test_class_unknown_to_the_model(self):
        self.assert_refused(["otke", "eval", "--model", self.model, "--class", f"enhancer={POS}"],
                            r"class 'enhancer' is not a class of the model: expected one of promoter, non_promoter",
                            outputs=())

    def test_malformed_class_argument(self):
        self.assert_refused(self.fit("--class", POS), r"--class '.*ecoli_prom_150\.fa': expected NAME=FILE\.fa")

    def test_a_single_class_cannot_train_a_classifier(self):
        self.assert_refused(self.fit("--class", f"promoter={POS}"), r"need at least 2 classes, got 1 \('promoter'\)")

    def test_no_input_at_all(self):
        self.assert_refused(self.fit(), r"no input: give labelled data with --class NAME=FILE\.fa")

    def test_bad_option_value(self):
        fit = ["otke", "fit", *CLASSES, "--out", "out.safetensors"]
        self.assert_refused([*fit, "--p", "0"], r"p \(supports\) must be in 1\.\.65536: got 0")
        self.assert_refused([*fit, "--val-fraction", "1"], r"--val-fraction must be in \(0, 1\): got 1")
        self.assert_refused([*fit, "--pooling", "attention"], r"--pooling must be otk, mean or max: got .attention.")

    def test_sets_given_to_a_sequence_model(self):
        np.save(os.path.join(self.dir, "x.npy"), np.zeros((2, 3, 4), np.float32))
        np.save(os.path.join(self.dir, "n.npy"), np.array([3, 2], np.int32))
        self.assert_refused(["otke", "embed", "--model", self.model, "--sets", "x.npy", "--lengths", "n.npy",
                             "--out", "E.npy"], r"the model reads sequences \(alphabet dna, k = 8\)",
                            outputs=("E.npy",))

    def test_lengths_must_be_integers_in_range(self):
        np.save(os.path.join(self.dir, "x.npy"), np.zeros((2, 3, 4), np.float32))
        np.save(os.path.join(self.dir, "y.npy"), np.array([0, 1], np.int32))
        np.save(os.path.join(self.dir, "n_float.npy"), np.array([3, 2], np.float32))
        np.save(os.path.join(self.dir, "n_big.npy"), np.array([3, 4], np.int32))
        sets = ["--sets", "x.npy", "--labels", "y.npy"]
        self.assert_refused(self.fit(*sets, "--lengths", "n_float.npy"),
                            r"--lengths n_float\.npy: expected int32 \(or int64\), got float")
        self.assert_refused(self.fit(*sets, "--lengths", "n_big.npy"),
                            r"--lengths n_big\.npy: set 1 has length 4, expected 1\.\.3")

    def test_plans_need_otk_pooling(self):
        self.assert_refused(["otke", "embed", "--model", self.mean_model, "--fasta", POS, "--out", "E.npy",
                             "--plans", "P.npy"], r"--plans needs a model with otk pooling", outputs=("E.npy", "P.npy"))

    def test_missing_output_folder(self):
        self.assert_refused(["otke", "embed", "--model", self.model, "--fasta", POS, "--out", "no/such/E.npy"],
                            r"--out no/such/E\.npy: folder 'no/such' does not exist", outputs=())

    def test_failed_run_keeps_an_existing_output(self):
        out = self.write("out.safetensors", "precious")
        bad = self.write("bad.fa", ">x\nACGTNNNNACGT\n")
        done = run_cli(*self.fit("--class", f"a={bad}", "--class", f"b={NEG}"), cwd=self.dir)
        self.assertEqual(done.returncode, 2)
        with open(out) as f:
            self.assertEqual(f.read(), "precious")


class SupervisedTraining(unittest.TestCase):
    """`otke train` starts from the fitted model, improves it on the training loss and resumes exactly."""

    setUpClass = classmethod(TrainedModel.setUpClass.__func__)
    tearDownClass = classmethod(TrainedModel.tearDownClass.__func__)
    path = TrainedModel.path

    def train(self, out, *extra):
        return run_cli("otke", "train", "--init", self.model, *CLASSES, "--epochs", "4", "--batch-size", "32",
                       "--seed", "1", "--quiet", "--out", out, *extra)

    def test_train_reports_history_and_keeps_the_best_epoch(self):
        done = self.train(self.path("trained.safetensors"))
        self.assertEqual(done.returncode, 0, done.stderr)
        s = json.loads(done.stdout)
        self.assertEqual(s["epochs_run"], 4)
        self.assertEqual(s["best_val_loss"], min([e["val_loss"] for e in s["history"]] + [s["best_val_loss"]]))
        self.assertLess(s["history"][-1]["train_loss"], s["history"][0]["train_loss"] * 1.05)
        _, config = read_safetensors(self.path("trained.safetensors"))
        self.assertEqual(config["pooling"]["iters"], 10)  # the thesis' supervised iteration count

    def test_implicit_sinkhorn_gradient_trains_too(self):
        # Memory independent of --iters: train with 100 iterations; the loss still goes down.
        done = self.train(self.path("implicit.safetensors"), "--sinkhorn-gradient", "implicit", "--iters", "100")
        self.assertEqual(done.returncode, 0, done.stderr)
        s = json.loads(done.stdout)
        self.assertLess(s["history"][-1]["train_loss"], s["history"][0]["train_loss"])
        bad = self.train(self.path("never.safetensors"), "--sinkhorn-gradient", "backprop")
        self.assertNotEqual(bad.returncode, 0)
        self.assertIn("--sinkhorn-gradient", bad.stderr)
        self.assertFalse(os.path.exists(self.path("never.safetensors")))

    def test_an_interrupted_run_resumes_to_the_same_model(self):
        straight = self.path("straight.safetensors")
        self.assertEqual(self.train(straight).returncode, 0)
        ck = self.path("ck.safetensors")
        first = run_cli("otke", "train", "--init", self.model, *CLASSES, "--epochs", "2", "--batch-size", "32",
                        "--seed", "1", "--quiet", "--checkpoint", ck, "--out", self.path("half.safetensors"))
        self.assertEqual(first.returncode, 0, first.stderr)
        resumed = self.path("resumed.safetensors")
        done = self.train(resumed, "--checkpoint", ck)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertTrue(json.loads(done.stdout)["resumed"])
        with open(straight, "rb") as a, open(resumed, "rb") as b:
            self.assertEqual(a.read(), b.read())

    def test_bad_init_is_refused_without_output(self):
        out = self.path("never.safetensors")
        done = run_cli("otke", "train", "--init", os.path.join(TEST_DATA, "models", "v1_minimal.safetensors"),
                       *CLASSES, "--out", out)
        self.assertEqual(done.returncode, 2)
        self.assertEqual(len(done.stderr.strip().splitlines()), 1)
        self.assertTrue(done.stderr.startswith("error:"), done.stderr)
        self.assertFalse(os.path.exists(out))


# A toy sentiment task in GLUE format (header "sentence<TAB>label", trailing space before the TAB as in SST-2).
POSITIVE = ["a good movie", "great fun", "the plot is good", "good , great acting", "it 's great"]
NEGATIVE = ["a bad movie", "awful fun", "the plot is bad", "bad , awful acting", "it 's awful"]


def write_glue(path, rows, header="sentence\tlabel"):
    with open(path, "w") as f:
        f.write(header + "\n" + "".join(f"{s} \t{y}\n" for s, y in rows))
    return path


def toy_rows(count, offset=0):
    return [((POSITIVE if i % 2 else NEGATIVE)[(i // 2 + offset) % 5], i % 2) for i in range(count)]


class TextInput(unittest.TestCase):
    """--text: sentences from a GLUE TSV become a tokens model whose table `otke train` learns; eval/embed read it."""

    TEXT = ["--dim", "8", "--embedding", "identity", "--p", "4", "--eps", "0.5", "--iters", "10", "--seed", "2",
            "--lambda", "0.01", "--quiet"]

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="inductive-otke-text-")
        cls.train_tsv = write_glue(os.path.join(cls.dir, "train.tsv"), toy_rows(60))
        cls.dev_tsv = write_glue(os.path.join(cls.dir, "dev.tsv"), toy_rows(20, offset=2))
        cls.fitted = os.path.join(cls.dir, "fit.safetensors")
        done = run_cli("otke", "fit", "--text", cls.train_tsv, *cls.TEXT, "--out", cls.fitted)
        assert done.returncode == 0, done.stderr
        cls.fit = json.loads(done.stdout)
        cls.trained = os.path.join(cls.dir, "trained.safetensors")
        done = run_cli("otke", "train", "--init", cls.fitted, "--text", cls.train_tsv, "--epochs", "15", "--lr", "0.05",
                       "--batch-size", "8", "--val-fraction", "0.2", "--seed", "1", "--quiet", "--out", cls.trained)
        assert done.returncode == 0, done.stderr
        cls.train = json.loads(done.stdout)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir)

    def test_fit_builds_the_vocabulary_and_a_token_table(self):
        self.assertEqual(self.fit["input"], "tokens")
        self.assertEqual(self.fit["classes"], ["0", "1"])
        tensors, config = read_safetensors(self.fitted)
        words = {w for s in POSITIVE + NEGATIVE for w in s.split()}
        self.assertEqual(config["input"]["type"], "tokens")
        self.assertEqual(config["input"]["tokens"][0], "<unk>")
        self.assertEqual(set(config["input"]["tokens"][1:]), words)
        self.assertEqual(config["input"]["vocab"], len(words) + 1)
        self.assertEqual(tensors["tokens.embedding"].shape, (len(words) + 1, 8))
        self.assertEqual(self.fit["vocab"], len(words) + 1)

    def test_train_learns_the_table_and_eval_reads_glue_dev(self):
        before, _ = read_safetensors(self.fitted)
        after, _ = read_safetensors(self.trained)
        self.assertGreater(np.abs(after["tokens.embedding"] - before["tokens.embedding"]).max(), 1e-3)
        done = run_cli("otke", "eval", "--model", self.trained, "--text", self.dev_tsv, "--quiet")
        self.assertEqual(done.returncode, 0, done.stderr)
        metrics = json.loads(done.stdout)
        self.assertEqual(metrics["n"], 20)
        self.assertGreaterEqual(metrics["accuracy"], 0.9)

    def test_embed_reads_unlabelled_text_with_other_columns(self):
        tsv = os.path.join(self.dir, "test.tsv")
        with open(tsv, "w") as f:
            f.write("index\tsentence\n0\tgood movie\n1\tA NEVER-SEEN word\n")
        out, plans = os.path.join(self.dir, "E.npy"), os.path.join(self.dir, "P.npy")
        done = run_cli("otke", "embed", "--model", self.trained, "--text", tsv, "--out", out, "--plans", plans,
                       "--quiet")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(np.load(out).shape, (2, 4 * 8))
        self.assertEqual(np.load(plans).shape, (2, 1, 3, 4))  # n_max = 3 tokens ("a", "never-seen", "word")

    def test_mean_pooling_baseline_trains_too(self):
        fitted, trained = os.path.join(self.dir, "mean_fit.safetensors"), os.path.join(self.dir, "mean.safetensors")
        done = run_cli("otke", "fit", "--text", self.train_tsv, *self.TEXT, "--pooling", "mean", "--out", fitted)
        self.assertEqual(done.returncode, 0, done.stderr)
        done = run_cli("otke", "train", "--init", fitted, "--text", self.train_tsv, "--epochs", "3", "--quiet",
                       "--out", trained)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(read_safetensors(trained)[1]["pooling"]["type"], "mean")


class RefusesBadText(unittest.TestCase):
    """Bad --text input: the same contract as every refusal (one `error:` line naming file and line)."""

    setUp = RefusesBadInput.setUp
    write = RefusesBadInput.write
    assert_refused = RefusesBadInput.assert_refused
    tearDownClass = classmethod(RefusesBadInput.tearDownClass.__func__)

    @classmethod
    def setUpClass(cls):
        cls.shared = tempfile.mkdtemp(prefix="inductive-otke-bad-text-")
        cls.model = os.path.join(REPO, "data", "models", "otke-promoters-ecoli.safetensors")  # a sequence model
        cls.tsv = write_glue(os.path.join(cls.shared, "train.tsv"), toy_rows(20))
        cls.text_model = os.path.join(cls.shared, "text.safetensors")
        done = run_cli("otke", "fit", "--text", cls.tsv, *TextInput.TEXT, "--out", cls.text_model)
        assert done.returncode == 0, done.stderr

    def fit_text(self, path):
        return ["otke", "fit", "--text", path, *TextInput.TEXT, "--out", "out.safetensors"]

    def test_empty_sentence(self):
        bad = self.write("bad.tsv", "sentence\tlabel\ngood\t1\n   \t0\n")
        self.assert_refused(self.fit_text(bad), r"--text: .*bad\.tsv: line 3: empty sentence")

    def test_missing_label(self):
        bad = self.write("bad.tsv", "sentence\tlabel\ngood\t1\nbad\t\n")
        self.assert_refused(self.fit_text(bad), r"bad\.tsv: line 3: missing label")

    def test_malformed_line(self):
        bad = self.write("bad.tsv", "sentence\tlabel\ngood\t1\nno tab here\n")
        self.assert_refused(self.fit_text(bad),
                            r"bad\.tsv: line 3: expected 2 tab-separated fields \(as the header\), got 1")
        bad = self.write("extra.tsv", "sentence\tlabel\ngood\t1\t7\n")
        self.assert_refused(self.fit_text(bad), r"extra\.tsv: line 2: expected 2 tab-separated fields")

    def test_header_without_label_or_sentence(self):
        bad = self.write("nolabel.tsv", "index\tsentence\n0\tgood\n")
        self.assert_refused(self.fit_text(bad), r"nolabel\.tsv: line 1: the header has no 'label' column")
        bad = self.write("noheader.tsv", "good movie\t1\nbad movie\t0\n")
        self.assert_refused(self.fit_text(bad), r"noheader\.tsv: line 1: the header has no 'sentence' column")
        empty = self.write("empty.tsv", "")
        self.assert_refused(self.fit_text(empty), r"empty\.tsv: empty file")
        only = self.write("only.tsv", "sentence\tlabel\n")
        self.assert_refused(self.fit_text(only), r"only\.tsv: no sentence after the header")

    def test_text_and_models_must_match(self):
        self.assert_refused(["otke", "embed", "--model", self.model, "--text", self.tsv, "--out", "E.npy"],
                            r"the model reads sequences, not text", outputs=("E.npy",))
        self.assert_refused(["otke", "embed", "--model", self.text_model, "--fasta", POS, "--out", "E.npy"],
                            r"the model reads text \(input tokens, \d+ tokens\): give --text", outputs=("E.npy",))
        self.assert_refused(["otke", "train", "--init", self.text_model, *CLASSES, "--out", "out.safetensors"],
                            r"the model reads text")

    def test_empty_sentence_refused_by_eval_and_embed(self):
        bad = self.write("bad.tsv", "sentence\tlabel\ngood\t1\n\t0\n")
        self.assert_refused(["otke", "eval", "--model", self.text_model, "--text", bad],
                            r"bad\.tsv: line 3: empty sentence", outputs=())
        bad = self.write("bad_u.tsv", "sentence\ngood\n \n")
        self.assert_refused(["otke", "embed", "--model", self.text_model, "--text", bad, "--out", "E.npy"],
                            r"bad_u\.tsv: line 3: empty sentence", outputs=("E.npy",))


if __name__ == "__main__":
    unittest.main()
