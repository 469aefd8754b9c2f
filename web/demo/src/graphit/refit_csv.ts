// The refit card's text format: one labelled molecule per line, "smiles,label". A SMILES string never holds a
// comma, so the line splits at its last one and a label may be any text without commas. The page checks only the
// shape of each line; the library judges the SMILES and the labels (unknown atoms, a single class, ...).

import { SolverError } from '../solver_client';

export interface LabelledMolecules {
  smiles: string[];
  labels: string[];
}

/** Parses the card's text; blank lines, '#' comments and a "smiles,..." header line are skipped. */
export function parseLabelledCsv(text: string): LabelledMolecules {
  const out: LabelledMolecules = { smiles: [], labels: [] };
  let first = true;
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const header = first && /^smiles\s*,/i.test(line);
    first = false;
    if (header) return;
    const comma = line.lastIndexOf(',');
    const smiles = line.slice(0, Math.max(comma, 0)).trim();
    const label = line.slice(comma + 1).trim();
    if (comma < 0 || smiles === '' || label === '') {
      throw new SolverError(
        'invalid_argument',
        `refit data, line ${i + 1}: expected "smiles,label", got "${line.length > 60 ? `${line.slice(0, 60)}…` : line}"`,
      );
    }
    out.smiles.push(smiles);
    out.labels.push(label);
  });
  if (out.smiles.length === 0) {
    throw new SolverError('invalid_argument', 'refit data: no labelled molecule; write one "smiles,label" per line');
  }
  return out;
}

/** The text of labelled molecules, one "smiles,label" line each. */
export function formatLabelledCsv(molecules: readonly { smiles: string; label: string }[]): string {
  return molecules.map((m) => `${m.smiles},${m.label}`).join('\n');
}
