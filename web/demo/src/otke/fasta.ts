// FASTA as the OTKE panel's learning reads it, in the worker: the core's reader (ind.parseFasta, what `inductive otke
// fit` reads), with the panel's convention on top: a `label=<class>` token in a header labels that sequence.
import type { Inductive } from 'inductive';

/** The `label=<class>` token of a FASTA header, '' when it has none. */
export function headerLabel(header: string): string {
  return /(?:^|\s)label=(\S+)/.exec(header)?.[1] ?? '';
}

/** Records with their labels ('' when the header has none); InductiveError naming the line for text that is not FASTA. */
export function parseLabelledFasta(
  ind: Inductive,
  text: string,
  name: string,
): { sequences: string[]; labels: string[] } {
  const records = ind.parseFasta(text, name);
  return { sequences: records.sequences, labels: records.names.map(headerLabel) };
}
