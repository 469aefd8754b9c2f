// What a model file holds, read by the core's one validating reader (inductive::read_model), without copying
// tensor data out.
import type { InductiveModule } from '../wasm/inductive.mjs';
import { typeName } from './checks.js';
import { InductiveError, lastError } from './errors.js';
import { withBlock } from './heap.js';

export interface TensorInfo {
  name: string;
  dtype: 'F32' | 'I32';
  /** Row-major dimensions. */
  shape: number[];
  byteLength: number;
}

export interface ModelInfo {
  /** The file's format version (this build reads 1 up to the newest it writes). */
  formatVersion: number;
  /** The model kind, e.g. "otke". */
  model: string;
  /** The model's configuration (the JSON object stored in the file). */
  config: Record<string, unknown>;
  /** What wrote the file: "inductive <version> <build>". */
  producer: string;
  /** Tensors in file order. */
  tensors: TensorInfo[];
}

export function readModelInfo(module: InductiveModule, bytes: unknown): ModelInfo {
  const where = 'readModelInfo';
  if (!(bytes instanceof Uint8Array)) {
    throw new InductiveError('invalid_argument', `${where}: bytes must be a Uint8Array: got ${typeName(bytes)}`);
  }
  const data = bytes;
  // A malloc'd copy is 8-byte aligned, which the reader relies on for typed tensor access.
  const json = withBlock(module, [{ type: 'u8', length: data.length }], where, (block) => {
    block.write(0, data);
    const text = module.modelInfo(block.addresses[0] ?? 0, data.length);
    if (text === '') throw lastError(module);
    return text;
  });
  try {
    return JSON.parse(json) as ModelInfo;
  } catch (e) {
    throw new InductiveError('internal', `${where}: the wasm side returned invalid JSON: ${String(e)}`);
  }
}
