// Example molecules for the refit card, picked in the worker from MoleculeNet BBBP (blood-brain barrier
// penetration; data/molecules, see data/SOURCE.md), bundled into the worker at build time. Only molecules the
// library parses and whose atoms are all in the model's vocabulary qualify: BBBP has S, P, B, ... that the
// MUTAG model cannot embed, and charged salts such as "[Na+]" the vocabulary lacks too.

import type { Inductive } from 'inductive';
import bbbpCsv from '../../../../data/molecules/bbbp.csv?raw';
import type { GraphitExamplesResponse, GraphitLabelledMolecule } from '../protocol';

export const BBBP_SOURCE = 'MoleculeNet BBBP';

/** BBBP's p_np column: 1 = the molecule crosses the blood-brain barrier. */
const CLASS_OF: Record<string, string> = { '1': 'permeable', '0': 'non-permeable' };

/** The first `perClass` usable permeable molecules, then the first `perClass` non-permeable ones. */
export function bbbpExamples(ind: Inductive, nodeLabels: readonly string[], perClass: number): GraphitExamplesResponse {
  const known = new Set(nodeLabels);
  const picked: Record<string, GraphitLabelledMolecule[]> = { permeable: [], 'non-permeable': [] };
  let read = 0;
  let skipped = 0;
  const lines = bbbpCsv.split(/\r?\n/).slice(1); // header: smiles,p_np
  for (const line of lines) {
    if (picked.permeable.length >= perClass && picked['non-permeable'].length >= perClass) break;
    const comma = line.lastIndexOf(',');
    const label = CLASS_OF[line.slice(comma + 1).trim()];
    if (comma <= 0 || label === undefined) continue;
    read += 1;
    if (picked[label].length >= perClass) continue;
    const smiles = line.slice(0, comma).trim();
    if (!usable(ind, known, smiles)) {
      skipped += 1;
      continue;
    }
    picked[label].push({ smiles, label });
  }
  return {
    method: 'graphit-examples',
    molecules: [...picked.permeable, ...picked['non-permeable']],
    source: BBBP_SOURCE,
    read,
    skipped,
  };
}

function usable(ind: Inductive, known: Set<string>, smiles: string): boolean {
  try {
    return ind.parseSmiles(smiles).atoms.every((a) => known.has(a));
  } catch {
    return false; // the parser refuses it (the library's error is not worth showing for an example we skip)
  }
}
