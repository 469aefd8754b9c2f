// The core's text readers, as `inductive otke fit|train|embed` reads its inputs: FASTA records, and the labelled
// tables (label<TAB>sequence lines; GLUE-style TSV of sentences). The browser parses with the same code as the CLI,
// so a file the CLI takes gives the same sequences, names and classes here, and a malformed one the same message.
import type { InductiveModule } from '../wasm/inductive.mjs';
import { checkBoolean, checkOptionsObject, checkString, typeName } from './checks.js';
import { InductiveError, lastError, parseJson } from './errors.js';

/** FASTA records in file order: headers without '>' (may be empty) and letters as written, line breaks removed. */
export interface FastaRecords {
  names: string[];
  sequences: string[];
}

export interface TextSamplesOptions {
  /** 'labelled-sequences': one `label<TAB>sequence` per line ('#' and blank lines skipped; `otke fit --tsv`).
   * 'glue': a header naming tab-separated columns, 'sentence' and (labelled) 'label' (`otke fit --text`). */
  format: 'labelled-sequences' | 'glue';
  /** glue: whether a 'label' column is required. Default true. */
  labelled?: boolean;
  /** Names the text in messages (a file name). Default the format. */
  name?: string;
}

/** Samples of a labelled table: labels index classNames, which are the distinct labels sorted. */
export interface TextSamples {
  samples: string[];
  /** Per sample, for messages: "NAME line N". */
  names: string[];
  labels: number[];
  classNames: string[];
}

function text(where: string, x: unknown): string {
  if (typeof x !== 'string') {
    throw new InductiveError(
      'invalid_argument',
      `${where}: text must be a string (decode bytes with TextDecoder): got ${typeName(x)}`,
    );
  }
  return x;
}

function parsed<T>(module: InductiveModule, where: string, json: string): T {
  if (json === '') throw lastError(module);
  return parseJson<T>(json, where);
}

/** ind.parseFasta: the records of FASTA text (core parse_fasta). No record, or text before the first header, throws. */
export function parseFasta(module: InductiveModule, fasta: unknown, name?: unknown): FastaRecords {
  const where = 'parseFasta';
  const what = checkString(where, 'name', name, 'fasta');
  return parsed<FastaRecords>(module, where, module.parseFasta(text(where, fasta), what));
}

/** ind.parseTextSamples: a labelled table as the CLI's --tsv / --text read it (core text_samples.h). */
export function parseTextSamples(module: InductiveModule, table: unknown, options: unknown): TextSamples {
  const where = 'parseTextSamples';
  checkOptionsObject(where, options);
  if (options === undefined) {
    throw new InductiveError('invalid_argument', `${where}: options { format } are required`);
  }
  const o = options as TextSamplesOptions;
  const format = checkString(where, 'format', o.format, '');
  const labelled = checkBoolean(where, 'labelled', o.labelled, true);
  const what = checkString(where, 'name', o.name, format);
  return parsed<TextSamples>(module, where, module.parseTextSamples(text(where, table), format, what, labelled));
}
