#!/usr/bin/env python3
"""Writes the vendored promoter subsets from Umarov & Solovyev (2017): E. coli (150 promoters + 150 non-promoters)
and B. subtilis (100 + 100, the second label of the multilabel tests).

Selection is deterministic and independent of file order: records are ranked by the sha256 of
"<header>\\n<sequence>" and the 150 smallest of each file are kept, written in their original file order, one
sequence per line. The source files are checked against their published sha256 first (data/SOURCE.md).

    /usr/bin/python3 data/promoters/make_subset.py [SOURCE_DIR] [--rest DIR]

SOURCE_DIR defaults to ../shared/data/promoters-umarov2017. With --rest, the records *not* vendored are also
written to DIR (ecoli_prom_rest.fa, ecoli_non_prom_rest.fa): the training set of the demo model, which keeps the
vendored subset unseen so that the demo's accuracy on it is a held-out figure (data/models/README.md).
"""
import argparse
import hashlib
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SOURCE = os.path.join(HERE, "..", "..", "..", "shared", "data", "promoters-umarov2017")
FILES = {  # source file -> (sha256, vendored file, records kept)
    "Ecoli_prom.fa": ("1712f385e357491d309bd14f8fd4e8de3d018bd418402cab3c6014232197ce5e", "ecoli_prom_150.fa", 150),
    "Ecoli_non_prom.fa": ("cf5f078da7e56c5f38c8abd8ffaeaa227863bff4f5c249f2cfda61cb5331c774", "ecoli_non_prom_150.fa",
                          150),
    # B. subtilis: the second label of the multilabel (DeepSEA-style) tests, "promoter" x "b_subtilis".
    "Bacillus_prom.fa": ("ed567448ac42e2b7958f58c971e2b8e95d7e28e266a1d8d778fec03de0d8bb68", "bsubtilis_prom_100.fa",
                         100),
    "Bacillus_non_prom.fa": ("ffb3bc854a6b410ce692a0dea47838dadb6c0f6bdeaf41bcbffe24108b4f7fad",
                             "bsubtilis_non_prom_100.fa", 100),
}


def read_fasta(path):
    records, header, seq = [], None, []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith(">"):
                if header is not None:
                    records.append((header, "".join(seq)))
                header, seq = line[1:].strip(), []
            elif line:
                seq.append(line)
    if header is not None:
        records.append((header, "".join(seq)))
    return records


def write_fasta(path, records):
    with open(path, "w") as out:
        for header, seq in records:
            out.write(f">{header}\n{seq}\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("source", nargs="?", default=DEFAULT_SOURCE)
    parser.add_argument("--rest", help="also write the records not vendored to this folder")
    args = parser.parse_args()
    source = args.source
    for name, (sha, out_name, per_file) in FILES.items():
        path = os.path.join(source, name)
        with open(path, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        if digest != sha:
            sys.exit(f"{path}: sha256 {digest}, expected {sha} (a different version of the data)")
        records = read_fasta(path)
        rank = sorted(range(len(records)),
                      key=lambda i: hashlib.sha256(f"{records[i][0]}\n{records[i][1]}".encode()).hexdigest())
        keep = sorted(rank[:per_file])
        write_fasta(os.path.join(HERE, out_name), [records[i] for i in keep])
        print(f"{out_name}: {len(keep)} of {len(records)} records from {name}")
        if args.rest:
            rest_name = out_name.replace(f"_{per_file}.fa", "_rest.fa")
            rest = sorted(rank[per_file:])
            write_fasta(os.path.join(args.rest, rest_name), [records[i] for i in rest])
            print(f"{os.path.join(args.rest, rest_name)}: the other {len(rest)} records")


if __name__ == "__main__":
    main()
