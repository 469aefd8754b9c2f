#!/usr/bin/python3
"""Builds the bundled OT example from two real MNIST test digits (data/SOURCE.md).

Each digit becomes a weighted point cloud: its ink pixels (intensity > 0) at their (row, col) coordinates scaled to
[0, 1], weighted by intensity / total ink. The cost is the squared Euclidean distance between pixel positions, so
the transport plan morphs one digit into the other. Run from anywhere with Debian's python3 (numpy):
    /usr/bin/python3 data/examples/make_examples.py [/path/to/shared/data/mnist-test-idx]
"""
import gzip
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "..", "shared", "data", "mnist-test-idx")
# First test image of digit 3 and of digit 8 (indices into the 10k MNIST test set, found below).
DIGITS = (3, 8)


def load(name, offset):
    with gzip.open(os.path.join(SRC, name)) as f:
        return np.frombuffer(f.read(), dtype=np.uint8, offset=offset)


def main():
    images = load("t10k-images-idx3-ubyte.gz", 16).reshape(-1, 28, 28)
    labels = load("t10k-labels-idx1-ubyte.gz", 8)
    clouds = []
    for d in DIGITS:
        idx = int(np.flatnonzero(labels == d)[0])
        img = images[idx].astype(np.float64)
        rows, cols = np.nonzero(img > 0)
        w = img[rows, cols]
        clouds.append((idx, np.stack([rows, cols], 1) / 27.0, w / w.sum()))
    (ia, x, a), (ib, y, b) = clouds
    cost = ((x[:, None, :] - y[None, :, :]) ** 2).sum(-1)
    np.save(os.path.join(HERE, "mnist_3_points.npy"), x.astype(np.float32))
    np.save(os.path.join(HERE, "mnist_8_points.npy"), y.astype(np.float32))
    np.save(os.path.join(HERE, "mnist_3_weights.npy"), a.astype(np.float32))
    np.save(os.path.join(HERE, "mnist_8_weights.npy"), b.astype(np.float32))
    np.save(os.path.join(HERE, "mnist_3_to_8_cost.npy"), cost.astype(np.float32))
    print(f"digit 3 = test image {ia} ({len(a)} ink pixels), digit 8 = test image {ib} ({len(b)} ink pixels)")


if __name__ == "__main__":
    main()
