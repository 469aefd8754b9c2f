// What the OTKE suites share: the committed default model and its native reference embeddings, the vendored
// promoter sequences, and small readers for .npy and safetensors files (written from their specs, so that the
// tests do not read files through the code under test).
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { inductiveMetadata, safetensorsBytes, type SpecTensor } from './safetensors.js';

const repo = (path: string): string => fileURLToPath(new URL(`../../../${path}`, import.meta.url));

/** The default model (data/models/README.md); INDUCTIVE_OTKE_MODEL points the suites at another one. */
export const MODEL_PATH = process.env.INDUCTIVE_OTKE_MODEL ?? repo('data/models/otke-promoters-ecoli.safetensors');
/** Embeddings of REFERENCE_SEQUENCES written by the native CLI (`inductive otke embed`), next to the model. */
export const REFERENCE_PATH = MODEL_PATH.replace(/\.safetensors$/, '.reference.npy');
export const haveModel = existsSync(MODEL_PATH);
if (!haveModel) throw new Error(`otke tests: ${MODEL_PATH} is missing (committed default model)`);

export const modelBytes = (): Uint8Array => new Uint8Array(readFileSync(MODEL_PATH));

export interface FastaRecord {
  name: string;
  sequence: string;
}

/** The records of a vendored FASTA file of data/promoters (one sequence line per record). */
export function promoters(
  file: 'ecoli_prom_150.fa' | 'ecoli_non_prom_150.fa' | 'bsubtilis_prom_100.fa' | 'bsubtilis_non_prom_100.fa',
): FastaRecord[] {
  const out: FastaRecord[] = [];
  for (const line of readFileSync(repo(`data/promoters/${file}`), 'utf8').split('\n')) {
    if (line.startsWith('>')) out.push({ name: line.slice(1).trim(), sequence: '' });
    else if (line.trim() !== '' && out.length > 0) out[out.length - 1]!.sequence += line.trim();
  }
  return out;
}

/**
 * The model's names for the two classes, whatever spelling the file uses ("non-promoter", "non_promoter", ...):
 * the one that says "non" is the negative class.
 */
export function classNames(labels: string[]): { positive: string; negative: string } {
  const negative = labels.find((l) => /non/i.test(l));
  const positive = labels.find((l) => l !== negative);
  if (labels.length !== 2 || negative === undefined || positive === undefined) {
    throw new Error(`expected a promoter / non-promoter model, its classes are ${JSON.stringify(labels)}`);
  }
  return { positive, negative };
}

/** All vendored sequences with their class named as in `labels` (a model's): promoters first, then the others. */
export function labelledPromoters(labels: string[] = ['promoter', 'non-promoter']): {
  sequences: string[];
  labels: string[];
  names: string[];
} {
  const { positive, negative } = classNames(labels);
  const pos = promoters('ecoli_prom_150.fa');
  const neg = promoters('ecoli_non_prom_150.fa');
  return {
    sequences: [...pos, ...neg].map((r) => r.sequence),
    labels: [...pos.map(() => positive), ...neg.map(() => negative)],
    names: [...pos, ...neg].map((r) => r.name),
  };
}

/** The 8 sequences of the reference file: the first 4 promoters, then the first 4 non-promoters. */
export function referenceSequences(): string[] {
  return [...promoters('ecoli_prom_150.fa').slice(0, 4), ...promoters('ecoli_non_prom_150.fa').slice(0, 4)].map(
    (r) => r.sequence,
  );
}

/** A float32 or int32 .npy file (format 1.0/2.0, little-endian, C order). */
export function readNpy(bytes: Uint8Array): { shape: number[]; data: Float32Array | Int32Array } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const magic = String.fromCharCode(...bytes.subarray(1, 6));
  if (bytes[0] !== 0x93 || magic !== 'NUMPY') throw new Error('not a .npy file');
  const major = bytes[6];
  const headerLength = major === 1 ? view.getUint16(8, true) : view.getUint32(8, true);
  const start = major === 1 ? 10 : 12;
  const header = new TextDecoder().decode(bytes.subarray(start, start + headerLength));
  const descr = /'descr':\s*'([^']+)'/.exec(header)?.[1];
  const fortran = /'fortran_order':\s*(True|False)/.exec(header)?.[1];
  const shapeText = /'shape':\s*\(([^)]*)\)/.exec(header)?.[1] ?? '';
  if (fortran !== 'False') throw new Error('.npy: only C order is read here');
  const shape = shapeText
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map(Number);
  const count = shape.reduce((a, b) => a * b, 1);
  const body = bytes.slice(start + headerLength, start + headerLength + 4 * count);
  if (descr === '<f4') return { shape, data: new Float32Array(body.buffer, 0, count) };
  if (descr === '<i4') return { shape, data: new Int32Array(body.buffer, 0, count) };
  throw new Error(`.npy: dtype ${descr} is not read here`);
}

export interface ParsedModel {
  metadata: Record<string, string>;
  config: Record<string, unknown>;
  tensors: Map<string, SpecTensor>;
}

/** Parses a safetensors model file by the spec (header length, JSON header, raw little-endian data). */
export function readSafetensors(bytes: Uint8Array): ParsedModel {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = Number(view.getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n))) as Record<string, unknown>;
  const metadata = header.__metadata__ as Record<string, string>;
  const tensors = new Map<string, SpecTensor>();
  for (const [name, info] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const t = info as { dtype: 'F32' | 'I32'; shape: number[]; data_offsets: [number, number] };
    const raw = bytes.slice(8 + n + t.data_offsets[0], 8 + n + t.data_offsets[1]);
    const data = t.dtype === 'F32' ? new Float32Array(raw.buffer) : new Int32Array(raw.buffer);
    tensors.set(name, { name, dtype: t.dtype, shape: t.shape, data });
  }
  return { metadata, config: JSON.parse(metadata.config ?? '{}') as Record<string, unknown>, tensors };
}

/** A model file written by the spec: `config` and `tensors` as given, model kind and version as asked. */
export function writeModel(
  config: object,
  tensors: Iterable<SpecTensor>,
  model = 'otke',
  formatVersion = 1,
): Uint8Array {
  return safetensorsBytes({ metadata: inductiveMetadata(model, config, formatVersion), tensors: [...tensors] });
}

/** The parsed model with its config changed by `edit` and, optionally, without some tensors. */
export function editModel(
  bytes: Uint8Array,
  edit: (config: Record<string, any>) => void,
  drop: string[] = [],
): Uint8Array {
  const parsed = readSafetensors(bytes);
  const config = structuredClone(parsed.config) as Record<string, any>;
  edit(config);
  return writeModel(
    config,
    [...parsed.tensors.values()].filter((t) => !drop.includes(t.name)),
  );
}

/** One-hot k-mers / sqrt(k) of a DNA sequence: the local features of inductive/sequence.h, [L - k + 1, 4 k]. */
export function dnaKmers(sequence: string, k: number): Float32Array {
  const letters = 'ACGT';
  const n = sequence.length - k + 1;
  const out = new Float32Array(n * 4 * k);
  const value = 1 / Math.sqrt(k);
  for (let i = 0; i < n; ++i) {
    for (let t = 0; t < k; ++t) out[i * 4 * k + t * 4 + letters.indexOf(sequence[i + t]!.toUpperCase())] = value;
  }
  return out;
}
