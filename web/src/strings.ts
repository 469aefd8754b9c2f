// Checks and packing of string inputs (sequences, SMILES) on their way into wasm memory.
import { typeName } from './checks.js';
import { InductiveError } from './errors.js';

export function checkSequences(where: string, x: unknown): string[] {
  if (!Array.isArray(x)) {
    throw new InductiveError('invalid_argument', `${where}: sequences must be an array of strings: got ${typeName(x)}`);
  }
  x.forEach((s, i) => {
    if (typeof s !== 'string') {
      throw new InductiveError('invalid_argument', `${where}: sequence ${i} must be a string: got ${typeName(s)}`);
    }
  });
  return x as string[];
}

export function checkNames(where: string, names: unknown, count: number): string[] {
  if (!Array.isArray(names) || names.some((s) => typeof s !== 'string')) {
    throw new InductiveError('invalid_argument', `${where}: names must be an array of strings`);
  }
  if (names.length !== count) {
    throw new InductiveError('shape_mismatch', `${where}: ${names.length} names for ${count} sequences`);
  }
  return names as string[];
}

/** Strings [start, end) back to back, and end - start + 1 offsets into them. */
export function pack(encoded: Uint8Array[], start: number, end: number): [Uint8Array, Int32Array] {
  const offsets = new Int32Array(end - start + 1);
  for (let i = start; i < end; ++i) offsets[i - start + 1] = (offsets[i - start] ?? 0) + (encoded[i]?.length ?? 0);
  const bytes = new Uint8Array(offsets[end - start] ?? 0);
  for (let i = start; i < end; ++i) bytes.set(encoded[i] ?? new Uint8Array(0), offsets[i - start] ?? 0);
  return [bytes, offsets];
}
