// Example sequences for the OTKE panel, read from the vendored E. coli promoter subset (data/promoters, see
// data/SOURCE.md) at build time: 81-letter windows around transcription start sites and random genomic windows.

import promotersFa from '../../../../data/promoters/ecoli_prom_150.fa?raw';
import nonPromotersFa from '../../../../data/promoters/ecoli_non_prom_150.fa?raw';

export interface Example {
  /** Short name for lists and error messages, e.g. "aldAp" or "non-promoter 3". */
  name: string;
  sequence: string;
  /** What the dataset says it is. */
  truth: 'promoter' | 'non-promoter';
}

function parseFasta(text: string): { header: string; sequence: string }[] {
  const out: { header: string; sequence: string }[] = [];
  for (const line of text.split(/\r?\n/)) {
    if (line.startsWith('>')) out.push({ header: line.slice(1).trim(), sequence: '' });
    else if (out.length > 0) out[out.length - 1].sequence += line.trim();
  }
  return out;
}

// Promoter headers look like "ECK120010673__aldAp__forward__1486214": the middle field names the promoter.
const promoterName = (header: string, i: number): string => header.split('__')[1] || `promoter ${i + 1}`;

const PROMOTERS: Example[] = parseFasta(promotersFa).map((r, i) => ({
  name: promoterName(r.header, i),
  sequence: r.sequence,
  truth: 'promoter' as const,
}));
const NON_PROMOTERS: Example[] = parseFasta(nonPromotersFa).map((r, i) => ({
  name: `non-promoter ${i + 1}`,
  sequence: r.sequence,
  truth: 'non-promoter' as const,
}));

/** Every vendored sequence of each file, for learning a model in the page. */
export const PROMOTER_RECORDS: { name: string; sequence: string }[] = PROMOTERS;
export const NON_PROMOTER_RECORDS: { name: string; sequence: string }[] = NON_PROMOTERS;

/** For the picker: the first four of each file (those of the native reference embeddings). */
export const PICKER_EXAMPLES: Example[] = [...PROMOTERS.slice(0, 4), ...NON_PROMOTERS.slice(0, 4)];

/** For labelling: the next six of each, alternating, so that a few clicks give both classes. */
export const LABEL_EXAMPLES: Example[] = Array.from(
  { length: 12 },
  (_, i) => (i % 2 === 0 ? PROMOTERS : NON_PROMOTERS)[4 + Math.floor(i / 2)],
);

/** FASTA text or plain letters -> the letters: header lines and white space dropped, nothing else changed. */
export function sequenceFromInput(text: string): string {
  return text
    .split(/\r?\n/)
    .filter((line) => !line.trimStart().startsWith('>'))
    .join('')
    .replace(/\s+/g, '');
}
