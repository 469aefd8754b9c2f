"""core/'s folders stand on floors, and no #include runs from a folder up to a higher floor.

Floors (a folder may include its own floor and those below):
  0  common, simd           errors, arrays, threads, the backend interface; SIMD kernels
  1  io, kernels, ot        model files and files; Nystrom and k-means; Sinkhorn
  2  data                   method-neutral readers: gzip, FASTA, text and feature tables, splits
  3  graph, learn, screening
  4  chem, otke
  5  graphit
  6  backends, models       what knows every method: the CPU backend and the registry of backends by name, core's
                            model kinds registered at once
A header belongs to the folder of the .cpp of its name (inductive/otke_inputs.h -> core/src/otke/otke_inputs.cpp),
or, for a header with no such .cpp, to the folder listed in HEADER_ONLY; a private header core/src/X/y.h to X. A
folder or header the tables do not place fails the test, so a new one is placed on purpose.
"""
import os
import re
import unittest

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
SRC = os.path.join(ROOT, "core", "src")
INC = os.path.join(ROOT, "core", "include")

FLOORS = {
    "common": 0, "simd": 0,
    "io": 1, "kernels": 1, "ot": 1,
    "data": 2,
    "graph": 3, "learn": 3, "screening": 3,
    "chem": 4, "otke": 4,
    "graphit": 5,
    "backends": 6, "models": 6,
}
# Headers without a .cpp of their name: what they declare is defined (or inline) in that folder.
HEADER_ONLY = {
    "inductive/backend.h": "common",  # an interface: the Sinkhorn and method types it names are only declared
    "inductive/backend_registry.h": "backends",
    "inductive/elementwise.h": "common",
    "inductive/enum_names.h": "common",
    "inductive/json_number.h": "common",
    "inductive/linalg.h": "common",
    "inductive/progress.h": "common",
    "inductive/random.h": "common",
    "inductive/feature_table.h": "data",  # libsvm.cpp, csv_table.cpp, mnist_idx.cpp
    "inductive/text_lines.h": "data",  # csv_fields.cpp
    "inductive/otke.h": "otke",  # otke_model.cpp, otke_config.cpp, otke_fit.cpp
    "inductive/otke_stepper.h": "otke",  # otke_stepper_cpu.cpp
    "inductive/graphit.h": "graphit",  # graphit_model.cpp, graphit_forward.cpp, ...
    "inductive/graphit_stepper.h": "graphit",  # graphit_stepper_cpu.cpp
    "inductive/screening.h": "screening",  # includes screening's headers, one include for users
    "inductive/screening/design_matrix.h": "screening",  # design_dense.cpp, design_csr.cpp
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def owner_of(header):
    """The folder a header (as included: "inductive/x.h", "ot/x.h") belongs to, or None for a non-core header."""
    if os.path.exists(os.path.join(SRC, header)):
        return header.split("/")[0]
    if not os.path.exists(os.path.join(INC, header)):
        return None
    if header in HEADER_ONLY:
        return HEADER_ONLY[header]
    stem = os.path.splitext(os.path.basename(header))[0]
    folders = [f for f in sorted(os.listdir(SRC)) if os.path.exists(os.path.join(SRC, f, stem + ".cpp"))]
    if len(folders) != 1:
        raise AssertionError(f"{header}: no single core/src/*/{stem}.cpp: place it in HEADER_ONLY")
    return folders[0]


def core_files():
    """(folder, path, text) of every core source and public header."""
    for folder in sorted(os.listdir(SRC)):
        d = os.path.join(SRC, folder)
        if os.path.isdir(d):
            for name in sorted(os.listdir(d)):
                if name.endswith((".cpp", ".h")):
                    with open(os.path.join(d, name), encoding="utf-8") as f:
                        yield folder, os.path.relpath(os.path.join(d, name), ROOT), f.read()
    for dirpath, _, names in os.walk(os.path.join(INC, "inductive")):
        for name in sorted(names):
            path = os.path.join(dirpath, name)
            with open(path, encoding="utf-8") as f:
                yield owner_of(os.path.relpath(path, INC)), os.path.relpath(path, ROOT), f.read()


def edges(files=None):
    """{(from folder, to folder): [file -> header, ...]} over `files` (default: every core file)."""
    out = {}
    for folder, path, text in core_files() if files is None else files:
        for header in INCLUDE.findall(text):
            to = owner_of(header)
            if to is not None and to != folder:
                out.setdefault((folder, to), []).append(f"{path} -> {header}")
    return out


def upward(found):
    return [f"{a} (floor {FLOORS[a]}) -> {b} (floor {FLOORS[b]}): {', '.join(files)}"
            for (a, b), files in sorted(found.items()) if FLOORS[b] > FLOORS[a]]


class CoreLayering(unittest.TestCase):
    def test_every_folder_has_a_floor(self):
        folders = {f for f in os.listdir(SRC) if os.path.isdir(os.path.join(SRC, f))}
        self.assertEqual(folders - set(FLOORS), set(), "folders without a floor: add them to FLOORS")

    def test_no_include_runs_up_a_floor(self):
        up = upward(edges())
        self.assertEqual(up, [], "includes up a floor:\n" + "\n".join(up))

    def test_the_folder_graph_has_no_cycle(self):
        graph = {}
        for a, b in edges():
            graph.setdefault(a, set()).add(b)
        state = {}

        def visit(node, stack):
            state[node] = "open"
            for nxt in sorted(graph.get(node, ())):
                if state.get(nxt) == "open":
                    self.fail("cycle: " + " -> ".join(stack + [node, nxt]))
                if nxt not in state:
                    visit(nxt, stack + [node])
            state[node] = "done"

        for node in sorted(graph):
            if node not in state:
                visit(node, [])

    def test_io_and_data_name_no_method(self):
        """The model file and the readers know no method: what they would name is registered from above."""
        words = re.compile(r"\b(otke|graphit|screening|gckn|Otke|Graphit)\w*\b")
        for folder, path, text in core_files():
            if folder in ("io", "data"):
                code = re.sub(r"//[^\n]*", "", text)  # comments may say who uses what
                code = re.sub(r'"(?:\\.|[^"\\\n])*"', '""', code)
                self.assertIsNone(words.search(code), f"{path} names a method")

    def test_the_check_can_fail(self):
        """A planted upward include is reported (so a passing run means something)."""
        planted = [("io", "core/src/io/planted.cpp", '#include "inductive/otke_inputs.h"\n#include "io/json_section.h"')]
        self.assertEqual(upward(edges(planted)), ["io (floor 1) -> otke (floor 4): core/src/io/planted.cpp -> "
                                                  "inductive/otke_inputs.h"])


if __name__ == "__main__":
    unittest.main()
