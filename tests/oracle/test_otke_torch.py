"""`inductive otke embed` (float32) against an independent PyTorch implementation (float64) of the same maths.

The oracle re-derives the embedding from the thesis' formulas (ch. 2; restated in inductive/otke.h, nystrom.h and
otk_pooling.h), reading only the model file's tensors and config, never our code:
  xhat = x / max(||x||, 1e-2);  psi = kappa(xhat W^T) F  (kappa(u) = exp((u - 1) / sigma^2); times ||x|| with
  keep_norm; psi = x for the identity embedding)
  S^r = psi z_r^T;  log-domain Sinkhorn on K = S^r / eps with a = 1/n, b = 1/p: per iteration
  G = log b - LSE_i(F + K), F = log a - LSE_j(G + K); P = exp(F + G + K)
  P <- P o exp(-(i/n - j/p)^2 / sigma_pos^2) (when sigma_pos > 0);  Phi^r = c P^T psi,  c = sqrt(p/q) or p
Ablations: plan "attention" is P = softmax_i(K) / p column by column (no Sinkhorn); "sinusoidal" adds
PE(i) / sqrt(k/2) to psi before pooling, PE_2m(i) = sin(i / 10000^(2m/k)), PE_2m+1(i) = cos(...).
Baselines (pooling "mean" / "max"): Phi = (1/n) sum_i psi_i, or Phi_k = max_i psi_ik, over the n true elements.
Sequences (input "sequence", alphabet A = dna "ACGT" | protein "ARNDCQEGHILKMFPSTWYV" | letters:..., letters
case-insensitive): x_i = onehot(s_i) ++ ... ++ onehot(s_{i+k-1}) / ||.||  (each k-mer L2-normalised, so every entry
is 0 or 1/sqrt(k)), i = 0..L-k, n = L - k + 1 elements; the oracle builds them itself from the FASTA letters.
Conv front end (embedding "conv", the thesis' DeepSEA layer): psi_i = ReLU(W x_i + b), W = conv.weight [K, d],
b = conv.bias [K]; on sequences that is a Conv1d of width k, stride 1, no padding, over the one-hot sequence with
weight W reshaped [K, k, A] -> [K, A, k] and divided by sqrt(k) (the unit-norm k-mers), computed here as such.
The head (`otke eval --probabilities`): softmax_c(W_head Phi + b_head) with head.weight [C, D], head.bias [C].
Every variant: Nystrom, identity and conv embeddings, keep_norm, q = 1, 2 and 3, positional weighting, both scales,
both ablations, mean and max pooling, vector sets and DNA/protein sequences of different lengths in one file, and
the head's probabilities. The bar: max |ours - torch| <= 1e-5 x max |torch|.
"""
import json
import os
import struct
import subprocess
import sys
import tempfile
import unittest

import numpy as np

import torch  # Debian's python3-torch, installed by scripts/setup.sh; run with /usr/bin/python3

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "native"))
from safetensors_np import read_safetensors  # noqa: E402

CLI = os.environ.get("INDUCTIVE_CLI")
TOL = 1e-5


def read_model(path):
    tensors, config = read_safetensors(path)
    return {name: t.astype(np.float64) for name, t in tensors.items()}, config


ALPHABETS = {"dna": "ACGT", "protein": "ARNDCQEGHILKMFPSTWYV"}


def t(a):
    return torch.tensor(np.asarray(a), dtype=torch.float64)


def alphabet_letters(name):
    return name[len("letters:"):] if name.startswith("letters:") else ALPHABETS[name]


def one_hot_sequence(sequence, letters):
    """L x |A|: row i is the one-hot vector of letter i (case-insensitive)."""
    index = {c: a for a, c in enumerate(letters.upper())}
    out = torch.zeros(len(sequence), len(letters), dtype=torch.float64)
    for i, c in enumerate(sequence.upper()):
        out[i, index[c]] = 1.0
    return out


def kmer_features(sequence, letters, k):
    """(L - k + 1) x k|A|: the concatenated one-hot vectors of letters i..i+k-1, each k-mer L2-normalised."""
    h = one_hot_sequence(sequence, letters)
    x = torch.stack([h[i:i + k].reshape(-1) for i in range(len(sequence) - k + 1)])
    return x / x.norm(dim=1, keepdim=True)


def conv_on_sequence(tensors, sequence, letters, k):
    """The conv front end as a Conv1d over the one-hot sequence: width k, no padding, then ReLU."""
    A = len(letters)
    w = t(tensors["conv.weight"])  # [K, k * A], column t * A + a = letter a at offset t
    w = w.reshape(w.shape[0], k, A).permute(0, 2, 1) / np.sqrt(k)  # [K, A, k]: unit-norm k-mers scale by 1/sqrt(k)
    h = one_hot_sequence(sequence, letters).T[None]  # [1, A, L]
    out = torch.nn.functional.conv1d(h, w, t(tensors["conv.bias"]))[0].T  # [L - k + 1, K]
    return torch.relu(out)


def embed_elements(tensors, config, xb):
    """psi (n x K) of one set's local features xb (n x d)."""
    emb = config["embedding"]
    if emb["type"] == "nystrom":
        norm = xb.norm(dim=1, keepdim=True)
        xhat = xb / norm.clamp(min=1e-2)
        kx = torch.exp((xhat @ t(tensors["nystrom.anchors"]).T - 1.0) / emb["sigma"] ** 2)
        psi = kx @ t(tensors["nystrom.factor"])
        if emb.get("keep_norm", False):
            psi = psi * norm
        return psi
    if emb["type"] == "conv":
        return torch.relu(xb @ t(tensors["conv.weight"]).T + t(tensors["conv.bias"]))
    assert emb["type"] == "identity", emb
    return xb


def pool(tensors, config, psi):
    """Phi of one embedded set psi (n x K), flattened."""
    opts = config["pooling"]
    n = psi.shape[0]
    if opts["type"] == "mean":
        return psi.mean(dim=0)
    if opts["type"] == "max":
        return psi.max(dim=0).values
    assert opts["type"] == "otk", opts
    q, p, eps, iters = opts["q"], opts["p"], opts["eps"], opts["iters"]
    sigma_pos = opts.get("sigma_pos", 0.0)
    c = float(np.sqrt(p / q)) if opts.get("scale", "paper") == "paper" else float(p)
    if opts.get("sinusoidal", False):
        k = psi.shape[1]
        i = torch.arange(n, dtype=torch.float64)[:, None]
        freq = 10000.0 ** (-2.0 * torch.arange((k + 1) // 2, dtype=torch.float64) / k)
        pe = torch.zeros(n, k, dtype=torch.float64)
        pe[:, 0::2] = torch.sin(i * freq)
        pe[:, 1::2] = torch.cos(i * freq)[:, : k // 2]
        psi = psi + pe / np.sqrt(max(k, 2) / 2)
    phis = []
    for r in range(q):
        z = t(tensors["otk.references"][r])
        K = psi @ z.T / eps
        la = torch.full((n,), -np.log(n), dtype=torch.float64)
        lb = torch.full((p,), -np.log(p), dtype=torch.float64)
        F = torch.zeros(n, dtype=torch.float64)
        G = torch.zeros(p, dtype=torch.float64)
        for _ in range(iters):
            G = lb - torch.logsumexp(F[:, None] + K, dim=0)
            F = la - torch.logsumexp(G[None, :] + K, dim=1)
        P = torch.exp(F[:, None] + G[None, :] + K)
        if opts.get("plan", "sinkhorn") == "attention":
            P = torch.softmax(K, dim=0) / p
        if sigma_pos > 0:
            i = torch.arange(n, dtype=torch.float64)[:, None] / n
            j = torch.arange(p, dtype=torch.float64)[None, :] / p
            P = P * torch.exp(-((i - j) ** 2) / sigma_pos ** 2)
        phis.append((c * P.T @ psi).reshape(-1))
    return torch.cat(phis)


def oracle_embedding(tensors, config, x, lengths):
    """Phi [B, D] of the vector sets x[b, :lengths[b]]."""
    return torch.stack([pool(tensors, config, embed_elements(tensors, config, t(x[b, :n])))
                        for b, n in enumerate(lengths)]).numpy()


def oracle_sequence_embedding(tensors, config, sequences):
    """Phi [B, D] of sequences given as letters: k-mer features (or the Conv1d) built here, then pooled."""
    letters, k = alphabet_letters(config["input"]["alphabet"]), config["input"]["k"]
    out = []
    for s in sequences:
        if config["embedding"]["type"] == "conv":
            psi = conv_on_sequence(tensors, s, letters, k)
        else:
            psi = embed_elements(tensors, config, kmer_features(s, letters, k))
        out.append(pool(tensors, config, psi))
    return torch.stack(out).numpy()


def oracle_probabilities(tensors, phi):
    """The linear head's softmax probabilities [B, C] of embeddings phi [B, D]."""
    logits = t(phi) @ t(tensors["head.weight"]).T + t(tensors["head.bias"])
    return torch.softmax(logits, dim=1).numpy()


def write_tensor(path, name, values):
    """Overwrites a float32 tensor's data in a model file in place (same shape), header and config unchanged."""
    with open(path, "r+b") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        entry = json.loads(f.read(n))[name]
        begin, end = entry["data_offsets"]
        data = np.ascontiguousarray(values, dtype="<f4")
        assert entry["dtype"] == "F32" and list(data.shape) == entry["shape"] and data.nbytes == end - begin
        f.seek(8 + n + begin)
        f.write(data.tobytes())


def write_fasta(path, records, width=7):
    """Sequences wrapped every `width` letters (the reader joins the lines)."""
    with open(path, "w") as f:
        for name, s in records:
            f.write(f">{name} some description\n")
            for i in range(0, len(s), width):
                f.write(s[i:i + width] + "\n")


def random_sequences(rng, letters, lengths, prefix):
    """Random sequences with some lowercase letters (letters are case-insensitive)."""
    out = []
    for j, L in enumerate(lengths):
        s = "".join(rng.choice(list(letters), size=L))
        s = "".join(c.lower() if rng.random() < 0.2 else c for c in s)
        out.append((f"{prefix}{j}", s))
    return out


class OtkeEmbeddingAgainstTorch(unittest.TestCase):
    errors = {}  # name -> measured relative error, printed at the end when OTKE_ORACLE_REPORT is set

    @classmethod
    def setUpClass(cls):
        if not CLI:
            raise RuntimeError("set INDUCTIVE_CLI to the inductive executable")
        cls.dir = tempfile.mkdtemp(prefix="inductive-torch-")
        rng = np.random.default_rng(5)
        cls.lengths = rng.integers(1, 40, size=12).astype(np.int32)
        cls.lengths[0] = 40
        cls.x = rng.standard_normal((12, 40, 6)).astype(np.float32)
        cls.x[3, :5] *= 1e-3  # rows under the 1e-2 norm floor
        for b, n in enumerate(cls.lengths):
            cls.x[b, n:] = 0
        cls.y = (np.arange(12) % 2).astype(np.int32)
        cls.y3 = (np.arange(12) % 3).astype(np.int32)  # three classes, for the head's softmax
        for name, a in (("x.npy", cls.x), ("n.npy", cls.lengths), ("y.npy", cls.y), ("y3.npy", cls.y3)):
            np.save(os.path.join(cls.dir, name), a)
        # Sequences, two FASTA files (= two classes) per alphabet; lengths from k (a single k-mer) to 45.
        cls.fasta = {}
        for alphabet, letters, k in (("dna", ALPHABETS["dna"], 4), ("protein", ALPHABETS["protein"], 3)):
            files = []
            for c in ("pos", "neg"):
                lengths = rng.integers(k, 46, size=6)
                lengths[0] = k
                records = random_sequences(rng, letters, lengths, f"{alphabet}_{c}")
                file = f"{alphabet}_{c}.fa"
                write_fasta(os.path.join(cls.dir, file), records)
                files.append((c, file, [s for _, s in records]))
            cls.fasta[alphabet] = (k, files)

    @classmethod
    def tearDownClass(cls):
        if os.environ.get("OTKE_ORACLE_REPORT"):
            for name, err in cls.errors.items():
                print(f"{name:40s} {err:.2e}", file=sys.stderr)

    def run_cli(self, *args):
        done = subprocess.run([CLI, *args], cwd=self.dir, capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stderr)
        return done

    def assert_close(self, name, ours, ref):
        self.assertEqual(ours.shape, ref.shape)
        err = np.abs(ours - ref).max() / np.abs(ref).max()
        self.errors[name] = err
        self.assertLessEqual(err, TOL, f"{name}: relative error {err:.2e}")
        return err

    def model(self, name):
        return read_model(os.path.join(self.dir, f"{name}.safetensors"))

    def fit(self, name, data, *fit_args):
        self.run_cli("otke", "fit", "--quiet", *data, *fit_args, "--seed", "3", "--out", f"{name}.safetensors")

    def embed(self, name, data):
        self.run_cli("otke", "embed", "--quiet", "--model", f"{name}.safetensors", *data, "--out", f"{name}.npy")
        return np.load(os.path.join(self.dir, f"{name}.npy"))

    def check(self, name, *fit_args, labels="y.npy", before_embed=None):
        """Vector sets: fit, embed, and the embedding against the oracle's; returns the oracle's Phi.
        `before_embed(path)` may edit the fitted model file first."""
        data = ["--sets", "x.npy", "--lengths", "n.npy"]
        self.fit(name, data + ["--labels", labels], *fit_args)
        if before_embed:
            before_embed(os.path.join(self.dir, f"{name}.safetensors"))
        ours = self.embed(name, data)
        tensors, config = self.model(name)
        ref = oracle_embedding(tensors, config, self.x, self.lengths)
        self.assert_close(name, ours, ref)
        return ref

    def sequence_data(self, alphabet):
        k, files = self.fasta[alphabet]
        labelled = [a for c, file, _ in files for a in ("--class", f"{c}={file}")]
        unlabelled = [a for _, file, _ in files for a in ("--fasta", file)]
        sequences = [s for _, _, seqs in files for s in seqs]  # file order, as embed and eval read them
        return k, labelled, unlabelled, sequences

    def check_sequences(self, name, alphabet, *fit_args, before_embed=None):
        """FASTA sequences: fit on the two classes, embed both files, and the embedding against the oracle's,
        computed from the letters. Returns the oracle's Phi."""
        k, labelled, unlabelled, sequences = self.sequence_data(alphabet)
        self.fit(name, labelled, "--alphabet", alphabet, "--kmer", str(k), *fit_args)
        if before_embed:
            before_embed(os.path.join(self.dir, f"{name}.safetensors"))
        ours = self.embed(name, unlabelled)
        tensors, config = self.model(name)
        self.assertEqual(config["input"], {"type": "sequence", "alphabet": alphabet, "k": k})
        ref = oracle_sequence_embedding(tensors, config, sequences)
        self.assertEqual(ref.shape[0], len(sequences))
        self.assert_close(name, ours, ref)
        return ref

    def check_head(self, name, eval_data, phi):
        """`otke eval --probabilities` against softmax(W Phi + b) from the model's head and the oracle's Phi."""
        self.run_cli("otke", "eval", "--quiet", "--model", f"{name}.safetensors", *eval_data, "--probabilities",
                     f"{name}_probs.npy")
        ours = np.load(os.path.join(self.dir, f"{name}_probs.npy"))
        tensors, config = self.model(name)
        ref = oracle_probabilities(tensors, phi)
        self.assertEqual(ref.shape, (phi.shape[0], config["head"]["classes"]))
        # Not a degenerate check: the probabilities are away from 0 and 1 (a moderate --lambda keeps them so).
        self.assertGreater(ref.min(), 1e-3)
        self.assertLess(ref.max(), 1 - 1e-3)
        self.assert_close(f"{name} (probabilities)", ours, ref)

    def test_nystrom_one_reference(self):
        self.check("nystrom", "--anchors", "5", "--p", "4", "--iters", "20")

    def test_nystrom_keep_norm_three_references_positional_weighting(self):
        self.check("positional", "--anchors", "7", "--p", "5", "--q", "3", "--sigma-pos", "0.3", "--keep-norm")

    def test_identity_embedding(self):
        self.check("identity", "--embedding", "identity", "--p", "6", "--eps", "1.0")

    def test_attention_plan_with_positional_weighting(self):
        self.check("attention", "--anchors", "5", "--p", "4", "--q", "2", "--plan", "attention", "--sigma-pos", "0.3")

    def test_sinusoidal_encoding(self):
        self.check("sinusoidal", "--anchors", "6", "--p", "4", "--sinusoidal")

    def test_sinusoidal_encoding_odd_dimension_attention(self):
        self.check("sinusoidal_odd", "--anchors", "5", "--p", "3", "--sinusoidal", "--plan", "attention")

    def test_otk_compatible_scale_and_small_eps(self):
        self.check("otkscale", "--anchors", "4", "--p", "3", "--eps", "0.1", "--scale", "otk-compatible")

    # The thesis' baselines: Phi = mean or max of psi over a set's n true elements (padding never counts).
    def test_mean_pooling_nystrom(self):
        self.check("mean_nystrom", "--anchors", "6", "--pooling", "mean")

    def test_max_pooling_nystrom_keep_norm(self):
        self.check("max_nystrom", "--anchors", "6", "--pooling", "max", "--keep-norm")

    def test_mean_pooling_identity(self):
        self.check("mean_identity", "--embedding", "identity", "--pooling", "mean")

    def test_max_pooling_identity(self):
        # Identity features are signed: max over elements differs from max |.|, and the padded zeros must not win.
        self.check("max_identity", "--embedding", "identity", "--pooling", "max")

    # Sequences: unit-norm one-hot k-mers, built by the oracle from the FASTA letters.
    def test_dna_sequences_nystrom_two_references_positional_weighting(self):
        self.check_sequences("dna_nystrom", "dna", "--anchors", "8", "--sigma", "0.6", "--p", "4", "--q", "2",
                             "--sigma-pos", "0.2")

    def test_protein_sequences_nystrom_keep_norm_positional_weighting(self):
        # keep_norm multiplies psi by ||x||, which is 1 for the unit-norm k-mers: it pins the normalisation down.
        self.check_sequences("protein_nystrom", "protein", "--anchors", "10", "--sigma", "0.5", "--p", "3",
                             "--sigma-pos", "0.3", "--eps", "0.2", "--keep-norm")

    def test_dna_sequences_nystrom_max_pooling(self):
        self.check_sequences("dna_max", "dna", "--anchors", "8", "--pooling", "max")

    # The head: `otke eval --probabilities` = softmax(W Phi + b), Phi the oracle's.
    def test_head_softmax_three_classes(self):
        phi = self.check("head3", "--anchors", "5", "--p", "3", "--q", "2", "--sigma-pos", "0.3", "--lambda", "0.01",
                         labels="y3.npy")
        self.check_head("head3", ["--sets", "x.npy", "--lengths", "n.npy", "--labels", "y3.npy"], phi)

    def test_head_softmax_dna_sequences(self):
        phi = self.check_sequences("head_dna", "dna", "--anchors", "8", "--p", "4", "--sigma-pos", "0.2",
                                   "--lambda", "0.01")
        self.check_head("head_dna", self.sequence_data("dna")[1], phi)

    # The conv front end, ReLU(W x + b): fit draws W (seeded He initialisation) and sets b = 0, so a nonzero b is
    # written into the model file first, for the bias to count (and the ReLU to zero some entries and not others).
    def with_conv_bias(self, path):
        K = read_model(path)[1]["embedding"]["filters"]
        write_tensor(path, "conv.bias", np.linspace(-0.4, 0.3, K))

    def assert_relu_active(self, name, pre_activation):
        negative = (pre_activation < 0).double().mean().item()
        self.assertTrue(0.1 < negative < 0.9, f"{name}: {negative:.0%} of the conv's pre-activations are negative")

    def test_conv_dna_sequences_positional_weighting(self):
        phi = self.check_sequences("conv_dna", "dna", "--embedding", "conv", "--filters", "6", "--p", "4",
                                   "--sigma-pos", "0.2", "--lambda", "0.1", before_embed=self.with_conv_bias)
        tensors, config = self.model("conv_dna")
        k, _, _, sequences = self.sequence_data("dna")
        pre = torch.cat([kmer_features(s, ALPHABETS["dna"], k) @ t(tensors["conv.weight"]).T + t(tensors["conv.bias"])
                         for s in sequences])
        self.assert_relu_active("conv_dna", pre)
        self.check_head("conv_dna", self.sequence_data("dna")[1], phi)

    def conv_pre_activations(self, name):
        tensors, _ = self.model(name)
        return torch.cat([t(self.x[b, :n]) @ t(tensors["conv.weight"]).T + t(tensors["conv.bias"])
                          for b, n in enumerate(self.lengths)])

    def test_conv_vector_sets_two_references(self):
        self.check("conv_sets", "--embedding", "conv", "--filters", "5", "--p", "3", "--q", "2",
                   before_embed=self.with_conv_bias)
        self.assert_relu_active("conv_sets", self.conv_pre_activations("conv_sets"))

    def test_conv_vector_sets_mean_pooling(self):
        self.check("conv_mean", "--embedding", "conv", "--filters", "5", "--pooling", "mean",
                   before_embed=self.with_conv_bias)
        self.assert_relu_active("conv_mean", self.conv_pre_activations("conv_mean"))


if __name__ == "__main__":
    unittest.main()
