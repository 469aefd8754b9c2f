"""How the golden-file scripts (cli_references.py, screening/make_goldens.py) compare a new JSON report with the
committed one: every difference, in document order, each naming its place ("file.key[3].key")."""


def json_differences(a, b, where, close, skip=lambda key: False):
    """Where JSON values a (new) and b (committed) differ: keys of objects must match (those `skip` names are present
    but not compared, e.g. timings), lists must have the same length, floats agree when close(new, committed), and
    everything else must be equal and of the same type."""
    if isinstance(b, dict):
        if not isinstance(a, dict):
            return [f"{where}: {type(a).__name__} {a!r:.60} != committed object"]
        out = [f"{where}: key {k!r} only in the new output" for k in a if k not in b]
        out += [f"{where}: key {k!r} missing from the new output" for k in b if k not in a]
        for k in b:
            if k in a and not skip(k):
                out += json_differences(a[k], b[k], f"{where}.{k}", close, skip)
        return out
    if isinstance(b, list):
        if not isinstance(a, list) or len(a) != len(b):
            return [f"{where}: {a!r:.80} != committed {b!r:.80}"]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in json_differences(x, y, f"{where}[{i}]", close, skip)]
    if isinstance(b, float) and isinstance(a, (int, float)) and not isinstance(a, bool):
        return [] if close(a, b) else [f"{where}: new {a!r} != committed {b!r} (|diff| {abs(a - b):.3g})"]
    return [] if a == b and type(a) is type(b) else [f"{where}: new {a!r} != committed {b!r}"]


def file_differences(new_root, committed_root, rel, close, npy, skip=lambda key: False):
    """The differences of golden file `rel` between two folders: a missing committed file, then for .npy files
    npy(new array, committed array) (a list of messages; dtype and shape are compared first), for JSON
    json_differences with `close` and `skip`."""
    import json
    import os

    import numpy as np

    new, old = os.path.join(new_root, rel), os.path.join(committed_root, rel)
    if not os.path.exists(old):
        return [f"{rel}: not committed"]
    if rel.endswith(".npy"):
        a, b = np.load(new), np.load(old)
        if a.dtype != b.dtype or a.shape != b.shape:
            return [f"{rel}: new {a.dtype}{list(a.shape)} != committed {b.dtype}{list(b.shape)}"]
        return [f"{rel}{m}" for m in npy(a, b)]
    with open(new) as f, open(old) as g:
        return json_differences(json.load(f), json.load(g), rel, close, skip)
