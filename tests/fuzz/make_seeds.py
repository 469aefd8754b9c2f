#!/usr/bin/env python3
"""Writes the committed seed corpora of the text and gzip fuzz targets (tests/fuzz/seeds/<target>/): small real
inputs cut from the vendored data, plus hand-made edge cases. Rerun after changing it:
    /usr/bin/python3 tests/fuzz/make_seeds.py
"""
import base64
import gzip
import os
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
OUT = os.path.join(HERE, "seeds")


def write(target, name, data):
    os.makedirs(os.path.join(OUT, target), exist_ok=True)
    with open(os.path.join(OUT, target, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def smiles():
    with open(os.path.join(REPO, "data", "molecules", "bbbp.csv")) as f:
        rows = [line.rsplit(",", 1)[0] for line in f.read().splitlines()[1:]]
    for i, s in enumerate(rows[:24]):
        write("smiles_fuzz", f"bbbp_{i:02d}.smi", s)
    for name, s in {"nitro": "O=[N+]([O-])c1ccccc1", "rings": "C1CC2CCC1CC2", "percent": "C%10CCCCC%10",
                    "percent_paren": "C%(123)CC%(123)", "isotope_charge": "[13CH3][NH3+].[Cl-]",
                    "stereo": "F/C=C/F", "aromatic": "c1ccc2[nH]ccc2c1", "branches": "CC(C)(C(C)C)C",
                    "bad_ring": "C1CC", "bad_branch": "C(C"}.items():
        write("smiles_fuzz", f"{name}.smi", s)


def libsvm():
    cases = {
        "basic.svm": "+1 1:0.5 3:-2\n-1 2:1 4:3.25\n",
        "zero_based.svm": "0 0:1 5:2\n1 1:1\n",
        "qid_comments.svm": "# header comment\n1 qid:3 1:1 2:2 # tail\n\n2 qid:3 2:4\n",
        "sci.svm": "1 1:1e-3 2:-2.5E+2\n-1 7:0\n",
        "bad_index.svm": "1 x:2\n",
        "dup.svm": "1 2:1 2:3\n",
    }
    for name, text in cases.items():
        write("libsvm_fuzz", name, text)


def csv():
    with open(os.path.join(REPO, "data", "screening", "breast_cancer.csv")) as f:
        head = "\n".join(f.read().splitlines()[:12]) + "\n"
    # The first byte picks the options (bit 0: header line, bit 1: label in the first column).
    write("csv_fuzz", "breast_cancer_head.csv", b"\x01" + head.encode())
    write("csv_fuzz", "plain.csv", b"\x00" + b"1,2,0\n3,4,1\n")
    write("csv_fuzz", "label_first.csv", b"\x02" + b"0,1.5,2\n1,-3,4e2\n")
    write("csv_fuzz", "ragged.csv", b"\x00" + b"1,2,0\n3,1\n")


def fasta():
    with open(os.path.join(REPO, "data", "promoters", "ecoli_prom_150.fa")) as f:
        lines = f.read().splitlines()
    write("fasta_fuzz", "promoters_head.fa", "\n".join(lines[:16]) + "\n")
    write("fasta_fuzz", "wrapped.fa", ">a desc\nACGT\nacgt\n\n>b\nNNAC GT\n")
    write("fasta_fuzz", "empty_record.fa", ">only\n>next\nACGT\n")
    write("fasta_fuzz", "no_header.fa", "ACGT\n")


def gz():
    payload = b"label,x,y\n" + b"".join(b"%d,%d,%d\n" % (i % 2, i, i * i) for i in range(200))
    write("gzip_fuzz", "levels9.gz", gzip.compress(payload, 9, mtime=0))
    write("gzip_fuzz", "stored.gz", gzip.compress(payload[:300], 0, mtime=0))
    write("gzip_fuzz", "fixed_huffman.gz", gzip.compress(b"abcabcabcabc" * 5, 1, mtime=0))
    write("gzip_fuzz", "two_members.gz", gzip.compress(b"first\n", mtime=0) + gzip.compress(b"second\n", mtime=0))
    write("gzip_fuzz", "trailing_zeros.gz", gzip.compress(b"x" * 50, mtime=0) + bytes(8))
    member = gzip.compress(b"hello gzip\n", mtime=0)
    write("gzip_fuzz", "bad_crc.gz", member[:-8] + bytes(4) + member[-4:])
    write("gzip_fuzz", "truncated.gz", member[:-3])
    co = zlib.compressobj(6, zlib.DEFLATED, 31)
    write("gzip_fuzz", "zlib_stream.gz", co.compress(payload[:1000]) + co.flush())
    # gzip_fuzz's finding of 2026-11-26: a second member whose dynamic block has an incomplete distance code,
    # which zlib refuses and ours inflated (tests/core/screening/datasets_test.cpp keeps it as a regression test).
    write("gzip_fuzz", "finding_incomplete_distance_code.gz", base64.b64decode(
        "H4sIAAAAAAAEA0tMSk4kFwEALfqR4TwAAAAfiwgAAAAFAAADLVNJjtwwDLzPV3iQuPM5GWBu/YDJ71MsBQAAAAAAAQAAAAAAAAAAAAAA"))


def tu():
    """The first graphs of MUTAG as the five TU files, separated by 0x1f (tu_fuzz's layout)."""
    d = os.path.join(REPO, "data", "tu-MUTAG")
    read = lambda name: open(os.path.join(d, f"MUTAG_{name}.txt")).read().splitlines()
    indicator = read("graph_indicator")
    for graphs in (1, 3):
        nodes = sum(1 for g in indicator if int(g) <= graphs)
        edges = [e for e in read("A") if all(int(v) <= nodes for v in e.split(","))]
        parts = ["\n".join(edges), "\n".join(indicator[:nodes]), "\n".join(read("graph_labels")[:graphs]),
                 "\n".join(read("node_labels")[:nodes]), ""]
        write("tu_fuzz", f"mutag_{graphs}.tu", "\x1f".join(p + "\n" for p in parts[:4]) + "\x1f")
    write("tu_fuzz", "attributes.tu", "1, 2\n2, 1\n\x1f1\n1\n\x1f-1\n\x1f\x1f0.5, 1\n2, -3\n")
    write("tu_fuzz", "cross_graph_edge.tu", "1, 3\n\x1f1\n1\n2\n\x1f1\n2\n")


def folds():
    with open(os.path.join(REPO, "data", "graphit-folds", "MUTAG", "test_idx-1.txt")) as f:
        text = f.read()
    write("folds_fuzz", "mutag_test_1.txt", bytes([187]) + text.encode())  # 188 graphs
    write("folds_fuzz", "duplicate.txt", b"\x09" + b"1\n2\n2\n")
    write("folds_fuzz", "out_of_range.txt", b"\x03" + b"0\n4\n")


def mnist():
    import struct
    images = struct.pack(">IIII", 0x803, 2, 2, 3) + bytes(range(12))
    labels = struct.pack(">II", 0x801, 2) + bytes([3, 8])
    write("mnist_fuzz", "two_2x3.idx", struct.pack(">H", len(images)) + images + labels)
    write("mnist_fuzz", "count_mismatch.idx", struct.pack(">H", len(images)) + images + labels[:-1])
    write("mnist_fuzz", "bad_magic.idx", struct.pack(">H", 16) + struct.pack(">IIII", 0x802, 1, 1, 1) + labels)


def tokens():
    write("tokens_fuzz", "sst2.txt", b"\x01" + b"it 's a charming and often affecting journey .\n"
          b"unflinchingly bleak and desperate\n( great ) -- `` fun '' ...\n")
    write("tokens_fuzz", "utf8.txt", b"\x00" + "Caf\u00e9 na\u00efve co-star n't 'S\n\t\x0b\x0c\n".encode())


def text_tsv():
    """The first byte picks the table: 0 GLUE labelled, 1 GLUE unlabelled, 2 label<TAB>sequence."""
    glue = os.path.join(REPO, "..", "shared", "data", "sst2-glue")  # written once from ../shared, then committed
    with open(os.path.join(glue, "train.tsv")) as f:
        write("text_tsv_fuzz", "sst2_train_head.tsv", b"\x00" + "".join(f.readlines()[:9]).encode())
    with open(os.path.join(glue, "test_unlabeled.tsv")) as f:
        write("text_tsv_fuzz", "sst2_test_head.tsv", b"\x01" + "".join(f.readlines()[:6]).encode())
    write("text_tsv_fuzz", "crlf_blank_lines.tsv", b"\x00" + b"label\tsentence\r\n\r\npos\tit 's \"fun\" `\r\n")
    write("text_tsv_fuzz", "ragged.tsv", b"\x00" + b"sentence\tlabel\na\t1\tx\n")
    # text_tsv_fuzz's first finding: a lone CR after the tab was taken for a one-letter sequence.
    write("text_tsv_fuzz", "finding_cr_only_sequence.tsv", b"\x02se\xf8se\x00\t\r\r")
    with open(os.path.join(REPO, "data", "promoters", "ecoli_prom_150.fa")) as f:
        seqs = [line for line in f.read().splitlines() if not line.startswith(">")][:4]
    write("text_tsv_fuzz", "promoters.tsv", b"\x02" + "# label<TAB>sequence\n".encode()
          + "".join(f"{'yes' if i % 2 else 'no'}\t{s}\n" for i, s in enumerate(seqs)).encode())


def config():
    import json
    import struct
    for name in ("otke-promoters-ecoli", "graphit-mutag"):
        with open(os.path.join(REPO, "data", "models", f"{name}.safetensors"), "rb") as f:
            data = f.read()
        (n,) = struct.unpack("<Q", data[:8])
        config = json.loads(json.loads(data[8:8 + n])["__metadata__"]["config"])
        write("config_fuzz", f"{name}.json", json.dumps(config, indent=1))
    write("config_fuzz", "unknown_key.json", '{"input": {"type": "vectors", "dim": 4, "colour": 1}}')
    write("config_fuzz", "wrong_type.json", '{"pooling": {"type": "otk", "p": "many"}}')


if __name__ == "__main__":
    smiles()
    libsvm()
    csv()
    fasta()
    gz()
    tu()
    folds()
    mnist()
    tokens()
    text_tsv()
    config()
