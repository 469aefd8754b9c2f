"""Model files read from Python with a reader that is not ours, as the README promises Python users.

The reader below follows the safetensors layout from its specification only (numpy + struct + json; Debian 12
ships no safetensors package): an 8-byte little-endian header length, a JSON header, raw little-endian row-major
data. It opens model files the CLI wrote and must get the same tensors and config the CLI works with:
- the tensor list (names, dtypes, shapes, byte sizes) and the config equal what `inductive info` prints;
- the OTKE head's values, applied by numpy to the CLI's embeddings, give the CLI's `otke eval` confusion matrix;
- the tensors written back by a numpy writer, in another order, make a file the CLI reads as the same model
  (identical `otke embed` / `graphit predict` outputs).
"""
import json
import os
import struct
import subprocess
import tempfile
import unittest

import numpy as np

CLI = os.environ.get("INDUCTIVE_CLI")
REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
POS = os.path.join(REPO, "data", "promoters", "ecoli_prom_150.fa")
NEG = os.path.join(REPO, "data", "promoters", "ecoli_non_prom_150.fa")
GRAPHIT_MODEL = os.path.join(REPO, "data", "models", "graphit-mutag.safetensors")
DTYPES = {"F32": "<f4", "F64": "<f8", "I32": "<i4", "I64": "<i8", "U8": "u1", "I8": "i1", "F16": "<f2"}


def read_safetensors(path):
    """(tensors: name -> ndarray, dtypes: name -> str, metadata: dict); checks the layout as it goes."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n].decode("utf-8"))
    metadata = header.pop("__metadata__", {})
    body = data[8 + n:]
    tensors, dtypes, spans = {}, {}, []
    for name, t in header.items():
        begin, end = t["data_offsets"]
        dtype = np.dtype(DTYPES[t["dtype"]])
        count = int(np.prod(t["shape"], dtype=np.int64))
        assert end - begin == count * dtype.itemsize, f"{name}: {end - begin} bytes for shape {t['shape']}"
        tensors[name] = np.frombuffer(body[begin:end], dtype).reshape(t["shape"])
        dtypes[name] = t["dtype"]
        spans.append((begin, end))
    spans.sort()
    covered = 0
    for begin, end in spans:  # the specification: no holes, no overlaps, the data ends with the last tensor
        assert begin == covered, f"a gap or overlap at byte {begin}"
        covered = end
    assert covered == len(body), f"{len(body) - covered} trailing bytes"
    return tensors, dtypes, metadata


def write_safetensors(path, tensors, dtypes, metadata, order):
    header = {"__metadata__": metadata}
    offset, blobs = 0, []
    for name in order:
        blob = np.ascontiguousarray(tensors[name], dtype=DTYPES[dtypes[name]]).tobytes()
        header[name] = {"dtype": dtypes[name], "shape": list(tensors[name].shape),
                        "data_offsets": [offset, offset + len(blob)]}
        offset += len(blob)
        blobs.append(blob)
    text = json.dumps(header).encode("utf-8")
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def cli(*args):
    done = subprocess.run([CLI, *args], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"inductive {' '.join(args)}: {done.stderr}"
    return done.stdout


def info_report(stdout):
    """What `inductive info` prints: (config as parsed JSON, tensor table name -> (dtype, shape, bytes))."""
    lines = stdout.splitlines()
    config_at, tensors_at = lines.index("config:"), next(i for i, l in enumerate(lines) if l.startswith("tensors:"))
    config = json.loads("\n".join(lines[config_at + 1:tensors_at]))
    rows = {}
    for line in lines[tensors_at + 2:]:
        name, dtype = line.split()[:2]
        shape = json.loads(line[line.index("["):line.index("]") + 1])
        rows[name] = (dtype, shape, int(line.split()[-1]))
    return config, rows


def setUpModule():
    if not CLI:
        raise RuntimeError("INDUCTIVE_CLI is not set (ctest sets it to the built CLI)")


class PythonReadsCliModels(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="inductive-pyread-")
        cls.otke = os.path.join(cls.dir, "otke.safetensors")
        cli("otke", "fit", "--quiet", "--class", f"promoter={POS}", "--class", f"non_promoter={NEG}",
            "--kmer", "8", "--anchors", "16", "--p", "8", "--iters", "30", "--seed", "3", "--out", cls.otke)

    def path(self, name):
        return os.path.join(self.dir, name)

    def assert_same_as_info(self, model_path, tensors, dtypes, metadata):
        out = cli("info", model_path)
        self.assertIn(f"format:         {metadata['format']}\n", out)
        self.assertIn(f"format_version: {metadata['format_version']}\n", out)
        self.assertIn(f"model:          {metadata['model']}\n", out)
        config, listed = info_report(out)
        self.assertEqual(config, json.loads(metadata["config"]))
        ours = {name: (dtypes[name], list(t.shape), t.nbytes) for name, t in tensors.items()}
        self.assertEqual(listed, ours)

    def test_otke_tensors_and_config_match_the_cli(self):
        tensors, dtypes, metadata = read_safetensors(self.otke)
        self.assertEqual((metadata["format"], metadata["format_version"], metadata["model"]),
                         ("inductive", "1", "otke"))
        config = json.loads(metadata["config"])
        self.assertEqual(config["head"]["labels"], ["promoter", "non_promoter"])
        self.assertEqual(config["input"]["k"], 8)
        self.assert_same_as_info(self.otke, tensors, dtypes, metadata)

    def test_otke_head_values_applied_by_numpy_give_the_cli_confusion_matrix(self):
        tensors, _, _ = read_safetensors(self.otke)
        w, b = tensors["head.weight"].astype(np.float64), tensors["head.bias"].astype(np.float64)
        confusion = []
        for fasta in (POS, NEG):
            out = self.path(os.path.basename(fasta) + ".npy")
            cli("otke", "embed", "--quiet", "--model", self.otke, "--fasta", fasta, "--out", out)
            predicted = np.argmax(np.load(out).astype(np.float64) @ w.T + b, axis=1)
            confusion.append([int(np.sum(predicted == c)) for c in range(w.shape[0])])
        report = json.loads(cli("otke", "eval", "--quiet", "--model", self.otke,
                                "--class", f"promoter={POS}", "--class", f"non_promoter={NEG}"))
        self.assertEqual(report["confusion_matrix"]["matrix"], confusion)

    def test_otke_file_rewritten_by_numpy_is_the_same_model(self):
        tensors, dtypes, metadata = read_safetensors(self.otke)
        copy = self.path("otke-rewritten.safetensors")
        write_safetensors(copy, tensors, dtypes, metadata, order=sorted(tensors, reverse=True))
        self.assert_same_as_info(copy, tensors, dtypes, metadata)
        for model, out in ((self.otke, "a.npy"), (copy, "b.npy")):
            cli("otke", "embed", "--quiet", "--model", model, "--fasta", POS, "--out", self.path(out))
        self.assertTrue(np.array_equal(np.load(self.path("a.npy")), np.load(self.path("b.npy"))))

    def test_graphit_file_rewritten_by_numpy_is_the_same_model(self):
        tensors, dtypes, metadata = read_safetensors(GRAPHIT_MODEL)
        self.assertEqual(metadata["model"], "graphit")
        self.assertIsInstance(json.loads(metadata["config"]), dict)
        self.assert_same_as_info(GRAPHIT_MODEL, tensors, dtypes, metadata)
        copy = self.path("graphit-rewritten.safetensors")
        write_safetensors(copy, tensors, dtypes, metadata, order=sorted(tensors, reverse=True))
        smiles = "O=[N+]([O-])c1ccccc1N"
        for model, out in ((GRAPHIT_MODEL, "ga.npy"), (copy, "gb.npy")):
            cli("graphit", "predict", "--model", model, "--smiles", smiles, "--out", self.path(out))
        self.assertTrue(np.array_equal(np.load(self.path("ga.npy")), np.load(self.path("gb.npy"))))


if __name__ == "__main__":
    unittest.main()
