"""A numpy reader of the model file's safetensors layout, independent of inductive's own reader, for the tests:
read_safetensors(path) -> ({name: float32 array of its shape}, parsed config)."""
import json
import struct

import numpy as np


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    meta = header.pop("__metadata__")
    tensors = {name: np.frombuffer(data[8 + n + t["data_offsets"][0]:8 + n + t["data_offsets"][1]],
                                   "<f4").reshape(t["shape"]) for name, t in header.items()}
    return tensors, json.loads(meta["config"])
