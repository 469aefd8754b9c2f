#!/usr/bin/env python3
"""Writes the model-file fixtures in this folder with Python's struct + json only.

This is deliberately an independent writer (not inductive's C++ code and not the `safetensors` package), so the
tests prove that inductive reads files other tools write, byte layout included. The files are committed; rerun
this script only to add fixtures. Never regenerate v1_minimal.safetensors with different contents: it is the
format_version 1 file that every later version must still read (tests/core/io/model_file_test.cpp asserts it).

    /usr/bin/python3 tests/data/models/make_fixtures.py
"""
import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))

CONFIG = {"dim": 3, "eps": 0.5, "name": "minimal"}
WEIGHT = [0.5, -1.0, 2.0, 3.25, -4.5, 6.0]  # F32 [2, 3], row-major
LABELS = [1, -2, 3, 2147483647]  # I32 [4]


def metadata(format_version="1", **overrides):
    meta = {
        "format": "inductive",
        "format_version": format_version,
        "model": "test",
        "config": json.dumps(CONFIG),
        "producer": "make_fixtures.py (python struct+json)",
    }
    meta.update(overrides)
    return meta


def container(entries, meta, data, pad=True):
    """entries: list of (name, dtype, shape, [begin, end]) in the order they appear in the JSON header."""
    header = {}
    for name, dtype, shape, offsets in entries:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": offsets}
    if meta is not None:
        header["__metadata__"] = meta  # last on purpose: readers must not depend on key order
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    if pad:
        text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + data


def minimal(meta):
    # Data order (weight, then labels) differs from name order on purpose: offsets, not names, place the data.
    w = struct.pack("<6f", *WEIGHT)
    l = struct.pack("<4i", *LABELS)
    entries = [("weight", "F32", [2, 3], [0, 24]), ("labels", "I32", [4], [24, 40])]
    return container(entries, meta, w + l)


def raw_header(text, data=b""):
    text = text.encode("utf-8")
    text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + data


def fixtures():
    v1 = minimal(metadata())
    yield "v1_minimal.safetensors", v1
    yield "future_version.safetensors", minimal(metadata(format_version="99"))
    # Cut inside the data section: the header promises 40 bytes of data, 34 remain.
    yield "truncated.safetensors", v1[:-6]
    # 'b' starts inside 'a'.
    yield "overlapping.safetensors", container(
        [("a", "F32", [6], [0, 24]), ("b", "F32", [6], [16, 40])], metadata(), bytes(40))
    # The header stops in the middle of an object.
    yield "bad_json.safetensors", raw_header('{"__metadata__":{"format":"inductive",')
    # F64 is a valid safetensors dtype that inductive does not use.
    yield "wrong_dtype.safetensors", container([("w", "F64", [2], [0, 16])], metadata(), bytes(16))
    # Header length 2^63: a reader that trusts it allocates exabytes.
    yield "huge_header.safetensors", struct.pack("<Q", 1 << 63) + b"{}      "


def main():
    for name, data in fixtures():
        with open(os.path.join(HERE, name), "wb") as f:
            f.write(data)
        print(f"{name}: {len(data)} bytes")


if __name__ == "__main__":
    main()
