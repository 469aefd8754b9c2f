"""Molecule graphs read from SMILES by `inductive smiles` equal RDKit's (python3-rdkit, an independent parser):
same atoms in the same order (so the browser's RDKit drawing colours the right atoms), same bonds, on every
molecule of the vendored MoleculeNet BBBP and ClinTox sets (charges, stereo, fragments, explicit hydrogens)."""
import json
import os
import subprocess
import tempfile
import unittest

from rdkit import Chem, RDLogger

CLI = os.environ.get("INDUCTIVE_CLI")
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data", "molecules")


class SmilesAgainstRdkit(unittest.TestCase):
    def setUp(self):
        if not CLI:
            raise RuntimeError("INDUCTIVE_CLI is not set (ctest sets it to the built CLI)")
        RDLogger.DisableLog("rdApp.*")

    def check(self, name, expected_count):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "graphs.jsonl")
            r = subprocess.run([CLI, "smiles", "--csv", os.path.join(DATA, name), "--out", out],
                               capture_output=True, text=True, timeout=300)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out) as f:
                records = [json.loads(line) for line in f]
        self.assertEqual(len(records), expected_count)
        compared = 0
        for rec in records:
            mol = Chem.MolFromSmiles(rec["smiles"])
            if mol is None:  # RDKit refuses it (valence); ours reads structure only. None in these sets.
                continue
            self.assertNotIn("error", rec, rec)
            atoms = [a.GetSymbol() for a in mol.GetAtoms()]
            bonds = sorted(tuple(sorted((b.GetBeginAtomIdx(), b.GetEndAtomIdx()))) for b in mol.GetBonds())
            self.assertEqual(rec["atoms"], atoms, rec["smiles"])
            self.assertEqual(sorted(tuple(b[:2]) for b in rec["bonds"]), bonds, rec["smiles"])
            compared += 1
        self.assertEqual(compared, expected_count)

    def test_bbbp(self):
        self.check("bbbp.csv", 2039)

    def test_clintox(self):
        self.check("clintox.csv", 1478)

    def test_malformed_smiles_is_reported_per_molecule(self):
        with tempfile.TemporaryDirectory() as tmp:
            src = os.path.join(tmp, "m.csv")
            with open(src, "w") as f:
                f.write('smiles,y\nc1ccccc1,1\n"C1CC",0\n')
            out = os.path.join(tmp, "g.jsonl")
            r = subprocess.run([CLI, "smiles", "--csv", src, "--out", out], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out) as f:
                recs = [json.loads(line) for line in f]
            self.assertEqual(len(recs[0]["atoms"]), 6)
            self.assertIn("never closed", recs[1]["error"])


if __name__ == "__main__":
    unittest.main()
