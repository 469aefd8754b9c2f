"""Differential fuzzing: our readers against independent parsers on the same mutated inputs.

  SMILES  vs RDKit (python3-rdkit; MolFromSmiles without sanitising, then RemoveHs: we read structure, no valence)
  NPY     vs numpy (np.load, allow_pickle=False)
  LIBSVM  vs scikit-learn (load_svmlight_file, zero_based='auto' as ours)

Inputs are mutants of real seeds (the committed fuzz seeds cut from data/, plus files numpy and RDKit write), made
by a seeded mutator that knows each format's tokens. For every input both sides must give the same verdict, and
when both accept, the same content: atoms (element and charge), aromatic flags, bonds and orders; dtype, shape and
values; samples, features, labels and entries. The gzip inflater is differential against zlib in libFuzzer itself
(tests/fuzz/gzip_fuzz.cpp).

Differences that are deliberate are listed in KNOWN below, each with its reason, as a predicate on the input or on
the oracle's answer; anything else fails the test with the input and both answers. Our parse runs in one process
(inductive_parse_dump), so thousands of inputs take seconds.

    /usr/bin/python3 tests/oracle/test_differential_fuzz.py --dump build/native-release/tests/inductive_parse_dump \\
        --cases 200000 --seed 7        # a longer campaign: prints a table (kind, inputs, agreeing, known, findings)
"""
import argparse
import collections
import io
import os
import random
import re
import struct
import subprocess
import sys
import tempfile
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
SEEDS = os.path.join(REPO, "tests", "fuzz", "seeds")
DUMP = os.environ.get("INDUCTIVE_PARSE_DUMP", "")
CASES = int(os.environ.get("INDUCTIVE_DIFFERENTIAL_CASES", "4000"))


# ---- our side ---------------------------------------------------------------------------------------------------
def ours(kind, blobs, dump=None):
    """What inductive_parse_dump makes of each blob (a list of dicts, in order)."""
    import json
    with tempfile.TemporaryDirectory(prefix="inductive-diff-") as tmp:
        lines = []
        for i, blob in enumerate(blobs):
            path = os.path.join(tmp, str(i))
            with open(path, "wb") as f:
                f.write(blob)
            lines.append(f"{kind}\t{path}\n")
        done = subprocess.run([dump or DUMP], input="".join(lines), capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            raise RuntimeError(f"inductive_parse_dump exited {done.returncode}: {done.stderr[-2000:]}")
        out = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(out) == len(blobs), (len(out), len(blobs))
    return out


# ---- the mutator ------------------------------------------------------------------------------------------------
class Mutator:
    """Seeded mutations of a byte string: replace, insert a format token, delete, duplicate, swap; 1 to 4 of them."""

    def __init__(self, seed, tokens, alphabet):
        self.rng = random.Random(seed)
        self.tokens = [t.encode() if isinstance(t, str) else t for t in tokens]
        self.alphabet = alphabet.encode()

    def __call__(self, data):
        s = bytearray(data)
        r = self.rng
        for _ in range(r.randint(1, 4)):
            op, i = r.randrange(5), r.randrange(len(s) + 1)
            if op == 0 and s:
                s[min(i, len(s) - 1)] = r.choice(self.alphabet)
            elif op == 1:
                s[i:i] = r.choice(self.tokens)
            elif op == 2 and s:
                del s[i:min(len(s), i + r.randint(1, 4))]
            elif op == 3 and s:
                s[i:i] = s[i:min(len(s), i + r.randint(1, 8))]
            elif op == 4 and len(s) > 1:
                a, b = r.randrange(len(s)), r.randrange(len(s))
                s[a], s[b] = s[b], s[a]
        return bytes(s)


def seed_files(target):
    d = os.path.join(SEEDS, target)
    out = []
    for name in sorted(os.listdir(d)):
        with open(os.path.join(d, name), "rb") as f:
            out.append(f.read())
    return out


# ---- SMILES vs RDKit --------------------------------------------------------------------------------------------
SMILES_TOKENS = ["[", "]", "(", ")", "=", "#", "$", ":", "/", "\\", ".", "%", "%(", "%1", "@", "@@", "@TH1", "@SP2",
                 "@OH12", "+", "-", "++", "H", "H2", "Cl", "Br", "c1", "n", "[nH]", "[O-]", "[N+]", "*", "1", "2",
                 "%10", "C", "c", "O", "N", "[H]", "[2H]", "[H+]", "[Fe+2]", "->", "<-", ":1", "[13CH3]", "[se]",
                 "[C@@H]", "[NH4+]", "[Na+].[Cl-]"]
SMILES_ALPHABET = "CNOSPFIBrcnosp[]()=#$:/\\.%@+-H0123456789*<>"

# Deliberate differences, each a predicate on the input (text) and RDKit's verdict, with why.
SMILES_KNOWN = [
    ("a ring bond written with two different bond symbols ('C-1CC#1') is refused as ambiguous (OpenSMILES); RDKit "
     "keeps one of them", lambda s, rd: rd is not None and re.search(r"[-=#$:/\\]%?\(?\d", s) is not None),
    ("formal charges beyond +-15 are refused (no element has one; RDKit takes any integer)",
     lambda s, rd: rd is not None and re.search(r"[+-]\d\d", s) is not None),
    ("%0n ring labels: OpenSMILES allows two-digit labels 00-99; RDKit 2022.09 refuses %00-%09, we read them",
     lambda s, rd: rd is None and re.search(r"%0\d", s) is not None),
    ("a hydrogen with a ring bond ('[H]1C1'): RDKit refuses it; we read the bond (a graph needs no H rule there)",
     lambda s, rd: rd is None and re.search(r"\[[0-9]*H[^\]]*\][^A-Za-z\[(]*[%0-9]", s) is not None),
]


def rdkit_view(smiles):
    from rdkit import Chem
    mol = Chem.MolFromSmiles(smiles, sanitize=False)
    if mol is None:
        return None
    mol = Chem.RemoveHs(mol, sanitize=False)
    order = {"SINGLE": 1, "DOUBLE": 2, "TRIPLE": 3, "QUADRUPLE": 4, "AROMATIC": 5, "DATIVE": 1}
    types = []
    for a in mol.GetAtoms():
        q = a.GetFormalCharge()
        types.append(a.GetSymbol() + ("" if q == 0 else ("+" if q > 0 else "-") + ("" if abs(q) == 1 else str(abs(q)))))
    bonds = sorted([min(b.GetBeginAtomIdx(), b.GetEndAtomIdx()), max(b.GetBeginAtomIdx(), b.GetEndAtomIdx()),
                    order.get(str(b.GetBondType()), -1)] for b in mol.GetBonds())
    return {"types": types, "aromatic": [int(a.GetIsAromatic()) for a in mol.GetAtoms()], "bonds": bonds}


def compare_smiles(blob, mine):
    s = blob.decode("latin1")
    theirs = rdkit_view(s)
    if "crash" in mine:
        return "finding", f"crash: {mine['crash']}"
    if (theirs is None) == (not mine["ok"]):
        if theirs is None:
            return "both refuse", None
        view = {"types": mine["types"], "aromatic": mine["aromatic"], "bonds": sorted(mine["bonds"])}
        return ("same", None) if view == theirs else ("finding", f"ours {view} rdkit {theirs}")
    for why, known in SMILES_KNOWN:
        if known(s, theirs):
            return "known", why
    return "finding", ("rdkit refuses, ours reads it" if theirs is None else f"ours refuses ({mine['error']})")


def smiles_inputs(n, seed):
    seeds = [b for b in seed_files("smiles_fuzz") if b and b"\n" not in b]
    mutate = Mutator(seed, SMILES_TOKENS, SMILES_ALPHABET)
    out = list(seeds)
    while len(out) < n:
        m = mutate(random.Random(seed + len(out)).choice(seeds))
        # RDKit reads text: no NUL, no line break (MolFromSmiles stops at whitespace), something to read.
        if m and not re.search(rb"[\x00\s]", m) and all(c < 128 for c in m):
            out.append(m)
    return out


# ---- NPY vs numpy -----------------------------------------------------------------------------------------------
def npy_seeds():
    seeds = []
    for arr, fortran in [(np.arange(6, dtype="<f4").reshape(2, 3), False), (np.array([0.5, -1, 1e300], "<f8"), False),
                         (np.array([1, -2, 3, 4], "<i4"), False), (np.array([7, -(1 << 40)], "<i8"), False),
                         (np.array(3.5, "<f4"), False), (np.zeros((0, 5), "<f4"), False),
                         (np.arange(4, dtype="<f4").reshape(2, 2), True), (np.arange(24, dtype="<f8").reshape(2, 3, 4), False),
                         (np.array([1, 2], ">f4"), False), (np.array([1, 2], "u1"), False), (np.array([1, 2], "<f2"), False),
                         (np.array([1, 2], "<i2"), False), (np.array([True], "?"), False)]:
        f = io.BytesIO()
        np.save(f, np.asfortranarray(arr) if fortran else arr)
        seeds.append(f.getvalue())
    f = io.BytesIO()
    np.lib.format.write_array(f, np.arange(3, dtype="<f4"), version=(2, 0))
    seeds.append(f.getvalue())
    return seeds


NPY_TOKENS = ["'descr'", "'<f4'", "'<f8'", "'<i4'", "'<i8'", "'>f4'", "'|u1'", "'<c8'", "'fortran_order'", "True",
              "False", "'shape'", "(", ")", ",", " ", ":", "{", "}", "0", "1", "2", "-1", "9999999999", "L", "\n",
              "\x00\x00\x80\x7f", "\x00\x00\xc0\x7f"]
NPY_KNOWN = [
    ("bytes after the array: numpy's reader stops at the data's end and ignores them; ours refuses a file longer "
     "than its header says (a concatenated or corrupt file)",
     lambda blob, a, mine: a is not None and "bytes, expected" in mine.get("error", "")),
    ("Fortran order: refused with a message (save with np.ascontiguousarray)",
     lambda blob, a, mine: a is not None and "Fortran-order" in mine.get("error", "")),
    ("dtype spellings: ours reads the descr strings numpy writes ('<f4', '<f8', '<i4', '<i8', '|f4'); numpy's reader "
     "also takes aliases ('<i', 'f4', 'float32')", lambda blob, a, mine: a is not None and "unsupported npy dtype" in
     mine.get("error", "") and a.dtype.str in ("<f4", "<f8", "<i4", "<i8")),
    ("float64 values beyond float32's range: refused (they would become infinite); numpy keeps float64",
     lambda blob, a, mine: a is not None and "beyond float32" in mine.get("error", "")),
    ("Python literal spellings ast.literal_eval takes and ours does not: duplicated keys (the last wins there), "
     "numbers with signs, underscores or other bases, escapes in strings",
     lambda blob, a, mine: a is not None and re.search(r"appears twice|expected a dimension|escapes|leading zero",
                                                       mine.get("error", "")) is not None),
    ("Python 2 long integers in the shape ((2L, 3L)): numpy strips the L", lambda blob, a, mine: a is not None and
     "npy header is malformed" in mine.get("error", "") and re.search(rb"\dL", blob) is not None),
    ("string prefixes (u'<f4', b'<f4') ast.literal_eval takes", lambda blob, a, mine: a is not None and
     "expected a quoted string" in mine.get("error", "") and re.search(rb"[uUbBrR]['\"]", blob) is not None),
    ("only float32/float64/int32/int64, little-endian: numpy reads every dtype; ours refuses the others, naming "
     "the dtype", lambda blob, a, mine: a is not None and (a.dtype.str not in ("<f4", "<f8", "<i4", "<i8"))),
    ("int64 values outside int32: numpy keeps them; ours refuses them (indices and labels are int32)",
     lambda blob, a, mine: a is not None and a.dtype.str == "<i8" and a.size > 0
     and (a.max() > 2**31 - 1 or a.min() < -2**31)),
    ("more than 2^31 elements claimed, or a dimension above 2^30: ours refuses before reading",
     lambda blob, a, mine: a is not None and (a.size >= 2**31 or any(d > 2**30 for d in a.shape))),
]


def numpy_view(blob):
    try:
        return np.load(io.BytesIO(blob), allow_pickle=False)
    except Exception:
        return None


def compare_npy(blob, mine):
    a = numpy_view(blob)
    if "crash" in mine:
        return "finding", f"crash: {mine['crash']}"
    if a is not None and mine["ok"]:
        want = a.astype(np.float32 if a.dtype.kind == "f" else np.int64).ravel(order="C")
        got = np.array([float(v) if isinstance(v, str) else v for v in mine["values"]], dtype=want.dtype)
        same = (list(a.shape) == mine["shape"] and got.shape == want.shape
                and np.array_equal(got, want, equal_nan=a.dtype.kind == "f"))
        return ("same", None) if same else ("finding", f"ours {mine['shape']} {got[:8]} numpy {a.shape} {want[:8]}")
    if a is None and not mine["ok"]:
        return "both refuse", None
    for why, known in NPY_KNOWN:
        if known(blob, a, mine):
            return "known", why
    return "finding", ("numpy refuses, ours reads it" if a is None else f"ours refuses ({mine['error']})")


def npy_inputs(n, seed):
    seeds = npy_seeds()
    mutate = Mutator(seed, NPY_TOKENS, "0123456789(),:' <>|fiu{}TrueFalse")
    rng = random.Random(seed)
    out = list(seeds)
    while len(out) < n:
        s = rng.choice(seeds)
        major = s[6]
        start = 10 if major == 1 else 12
        (hlen,) = struct.unpack("<H" if major == 1 else "<I", s[8:start])
        header, data = s[start:start + hlen], s[start + hlen:]
        roll = rng.random()
        if roll < 0.5:  # mutate the header, then (mostly) keep its length field right so parsing goes on
            header = mutate(header)
            if rng.random() < 0.85:
                size = struct.pack("<H", len(header) & 0xFFFF) if major == 1 else struct.pack("<I", len(header))
                out.append(s[:8] + size + header + data)
            else:
                out.append(s[:start] + header + data)
        elif roll < 0.8 and data:  # overwrite data bytes: NaN, Inf, subnormal and huge values reach both readers
            data = bytearray(data)
            for _ in range(rng.randint(1, 4)):
                data[rng.randrange(len(data))] = rng.choice([0, 0x7F, 0x80, 0xFF, 0xC0, 0x01, rng.randrange(256)])
            out.append(s[:start] + header + bytes(data))
        else:
            out.append(mutate(s))
    return out


# ---- LIBSVM vs scikit-learn ------------------------------------------------------------------------------------
LIBSVM_TOKENS = [" ", "\n", ":", "#", "qid:", "1", "-1", "+1", "0", "1e5", "2.5", ".", "-", "e", "E+3", "nan", "inf",
                 "\t", "\r\n", "10", "0:", "3:0", "99:1", "1:1"]
LIBSVM_KNOWN = [
    ("NaN and Inf (also overflowing values such as 1e400) are refused by design; scikit-learn keeps them",
     lambda text, sk: not isinstance(sk, str) and (not np.isfinite(sk[0].data).all() or not np.isfinite(sk[1]).all())),
    ("a file without any sample is refused (nothing to screen); scikit-learn returns a 0 x 1 matrix",
     lambda text, sk: not isinstance(sk, str) and sk[0].shape[0] == 0),
    ("samples without any feature index: ours refuses (no feature, p = 0); scikit-learn invents one zero column",
     lambda text, sk: not isinstance(sk, str) and sk[0].nnz == 0 and sk[0].shape[1] <= 1),
    ("qid: ours ignores 'qid:N' wherever it stands; scikit-learn reads it only right after the label, and there takes "
     "any token starting with 'qid' ('qidd:3', 'qid1:1')", lambda text, sk: b"qid" in text),
    ("index spellings Python's int() takes and ours does not ('+12', '-0', '1_2')",
     lambda text, sk: not isinstance(sk, str) and re.search(rb"(^|\s)[+-]\d+:", text, re.M) is not None),
    ("values beyond float32's range (stored as float32) are refused; scikit-learn keeps float64",
     lambda text, sk: not isinstance(sk, str) and sk[0].nnz > 0 and np.abs(sk[0].data).max() > np.finfo(np.float32).max),
    ("indices out of order: ours sorts them; scikit-learn refuses unsorted lines",
     lambda text, sk: isinstance(sk, str) and "sorted" in sk),
    ("Python number syntax scikit-learn's float() accepts and C's strtod does not (1_0, infinity spellings)",
     lambda text, sk: re.search(rb"_|inf|nan", text, re.I) is not None),
]


def sklearn_view(blob):
    from sklearn.datasets import load_svmlight_file
    try:
        return load_svmlight_file(io.BytesIO(blob), zero_based="auto")
    except Exception as e:  # noqa: BLE001 - any refusal is a verdict
        return str(e)


def compare_libsvm(blob, mine):
    sk = sklearn_view(blob)
    if "crash" in mine:
        return "finding", f"crash: {mine['crash']}"
    ok = not isinstance(sk, str)
    if ok and mine["ok"]:
        X, y = sk
        X = X.tocoo()
        want = sorted(zip(X.row.tolist(), X.col.tolist(), np.float32(X.data).tolist()))
        got = sorted((i, j, float(np.float32(v))) for i, j, v in mine["entries"])
        want = [e for e in want if e[2] != 0]
        got = [e for e in got if e[2] != 0]
        same = X.shape == (mine["n"], mine["p"]) and y.tolist() == mine["y"] and got == want
        return ("same", None) if same else ("finding", f"ours n {mine['n']} p {mine['p']} y {mine['y'][:5]} "
                                             f"{got[:5]}; sklearn {X.shape} {y[:5].tolist()} {want[:5]}")
    if not ok and not mine["ok"]:
        return "both refuse", None
    for why, known in LIBSVM_KNOWN:
        if known(blob, sk):
            return "known", why
    return "finding", (f"sklearn refuses ({sk[:80]}), ours reads it" if not ok else f"ours refuses ({mine['error']})")


def libsvm_inputs(n, seed):
    seeds = seed_files("libsvm_fuzz") + [b"+1 1:0.5 3:-2\n-1 2:1 4:3.25\n+1 2:2\n", b"2 qid:1 1:1 2:0.5\n1 qid:1 3:1\n"]
    mutate = Mutator(seed, LIBSVM_TOKENS, "0123456789 :.-+eE#\n")
    out = list(seeds)
    while len(out) < n:
        out.append(mutate(random.Random(seed + len(out)).choice(seeds)))
    return out


KINDS = {"smiles": (smiles_inputs, compare_smiles), "npy": (npy_inputs, compare_npy),
         "libsvm": (libsvm_inputs, compare_libsvm)}


def differential(kind, n, seed, dump=None):
    """(counts per verdict: same, both refuse, known, finding; known reasons seen; findings [(input, what)])."""
    make, compare = KINDS[kind]
    blobs = make(n, seed)
    counts, known, findings = collections.Counter(), collections.Counter(), []
    for blob, mine in zip(blobs, ours(kind, blobs, dump)):
        verdict, what = compare(blob, mine)
        counts[verdict] += 1
        if verdict == "known":
            known[what] += 1
        elif verdict == "finding":
            findings.append((blob, what))
    return counts, known, findings


class Differential(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not DUMP:
            raise RuntimeError("INDUCTIVE_PARSE_DUMP is not set (ctest sets it to tests/inductive_parse_dump)")
        from rdkit import RDLogger
        RDLogger.DisableLog("rdApp.*")

    def check(self, kind):
        counts, known, findings = differential(kind, CASES, seed=2026)
        print(f"{kind}: {dict(counts)}; known differences: {dict(known)}", file=sys.stderr)
        self.assertFalse(findings, "\n".join(f"{blob!r}: {what}" for blob, what in findings[:10]))
        # Mutants that both sides read and compare are what make this test prove something; both refusing proves less.
        self.assertGreater(counts["same"], CASES // 10)

    def test_smiles_against_rdkit(self):
        self.check("smiles")

    def test_npy_against_numpy(self):
        self.check("npy")

    def test_libsvm_against_scikit_learn(self):
        self.check("libsvm")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dump", required=True, help="inductive_parse_dump executable")
    ap.add_argument("--cases", type=int, default=100000, help="inputs per reader")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--kinds", default="smiles,npy,libsvm")
    a = ap.parse_args()
    from rdkit import RDLogger
    RDLogger.DisableLog("rdApp.*")
    print("| reader | oracle | inputs | both read, same content | both refuse | known differences | findings |")
    print("|---|---|---|---|---|---|---|")
    oracle = {"smiles": "RDKit", "npy": "numpy", "libsvm": "scikit-learn"}
    bad = 0
    for kind in a.kinds.split(","):
        counts, known, findings = differential(kind, a.cases, a.seed, a.dump)
        bad += len(findings)
        print(f"| {kind} | {oracle[kind]} | {sum(counts.values())} | {counts['same']} | {counts['both refuse']} | "
              f"{counts['known']} | {len(findings)} |")
        for blob, what in findings[:20]:
            print(f"  finding: {blob!r}: {what}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1].startswith("--dump"):
        sys.exit(main())
    unittest.main()
