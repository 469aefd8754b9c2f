// Example molecules for the GraphiT panel: only atoms of MUTAG's seven types (C, N, O, F, I, Cl, Br), the
// vocabulary of the committed model. Nitroaromatics and aromatic amines are the classic mutagens of the set.

export interface MoleculeExample {
  name: string;
  smiles: string;
  kind: string;
}

export const EXAMPLES: MoleculeExample[] = [
  { name: '2-nitronaphthalene', smiles: 'O=[N+]([O-])c1ccc2ccccc2c1', kind: 'nitroaromatic' },
  { name: '1-nitropyrene', smiles: 'O=[N+]([O-])c1ccc2ccc3cccc4ccc1c2c34', kind: 'nitroaromatic' },
  { name: '4-bromonitrobenzene', smiles: 'O=[N+]([O-])c1ccc(Br)cc1', kind: 'nitroaromatic' },
  { name: '2,4-dinitrotoluene', smiles: 'Cc1ccc(cc1[N+](=O)[O-])[N+](=O)[O-]', kind: 'nitroaromatic' },
  { name: 'benzidine', smiles: 'Nc1ccc(cc1)-c1ccc(N)cc1', kind: 'aromatic amine' },
  { name: '2-aminoanthracene', smiles: 'Nc1ccc2cc3ccccc3cc2c1', kind: 'aromatic amine' },
  { name: '4-chloroaniline', smiles: 'Nc1ccc(Cl)cc1', kind: 'aromatic amine' },
  { name: 'ethanol', smiles: 'CCO', kind: 'simple alcohol' },
  { name: 'glycerol', smiles: 'OCC(O)CO', kind: 'simple alcohol' },
  { name: 'benzyl alcohol', smiles: 'OCc1ccccc1', kind: 'simple alcohol' },
  { name: '5-fluoro-2-iodobenzoic acid', smiles: 'Fc1ccc(I)c(C(=O)O)c1', kind: 'halogenated acid' },
];
