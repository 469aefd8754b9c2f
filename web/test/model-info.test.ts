// readModelInfo: the core's validating reader, on the committed fixture, on files written here by the spec,
// and on damaged bytes.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { init } from '../src/index.js';
import { expectInductiveError } from './support/expect.js';
import { inductiveMetadata, safetensorsBytes } from './support/safetensors.js';

const ind = await init();

const FIXTURES = new URL('../../tests/data/models/', import.meta.url);
const fixture = (name: string): Uint8Array =>
  new Uint8Array(readFileSync(fileURLToPath(new URL(`${name}.safetensors`, FIXTURES))));
const haveFixture = existsSync(fileURLToPath(new URL('v1_minimal.safetensors', FIXTURES)));
if (!haveFixture) throw new Error(`model-info.test: ${fileURLToPath(FIXTURES)} is missing (committed fixtures)`);

// A valid file: model "test" with a 2 x 3 F32 tensor and a 4-element I32 tensor.
const specFile = () =>
  safetensorsBytes({
    metadata: inductiveMetadata('test', { note: 'written by web/test', k: 3 }),
    tensors: [
      { name: 'a.weight', dtype: 'F32', shape: [2, 3], data: new Float32Array([1, 2, 3, 4, 5, 6]) },
      { name: 'b.index', dtype: 'I32', shape: [4], data: new Int32Array([0, 1, 2, 3]) },
    ],
  });

describe('readModelInfo', () => {
  it('describes the committed v1 fixture exactly (files of every version stay readable)', () => {
    expect(ind.readModelInfo(fixture('v1_minimal'))).toEqual({
      formatVersion: 1,
      model: 'test',
      config: { dim: 3, eps: 0.5, name: 'minimal' },
      producer: 'make_fixtures.py (python struct+json)',
      tensors: [
        { name: 'weight', dtype: 'F32', shape: [2, 3], byteLength: 24 },
        { name: 'labels', dtype: 'I32', shape: [4], byteLength: 16 },
      ],
    });
  });

  // The damaged fixtures the core tests use (tests/data/models/README.md), read through the wasm build.
  it.each([
    ['future_version', 'unsupported_version', 'file is format_version 99; this build reads up to 1'],
    ['truncated', 'bad_model_file', 'truncated'],
    ['overlapping', 'bad_model_file', 'overlap'],
    ['bad_json', 'bad_model_file', 'invalid JSON'],
    ['wrong_dtype', 'bad_model_file', 'F64'],
    ['huge_header', 'bad_model_file', 'header length'],
  ] as const)('rejects the fixture %s.safetensors as %s', (name, code, fragment) => {
    expectInductiveError(() => ind.readModelInfo(fixture(name)), code, fragment);
  });

  it('describes a file written by the spec: version, kind, parsed config, producer, tensors in file order', () => {
    expect(ind.readModelInfo(specFile())).toEqual({
      formatVersion: 1,
      model: 'test',
      config: { note: 'written by web/test', k: 3 },
      producer: 'inductive 0.1.0 test',
      tensors: [
        { name: 'a.weight', dtype: 'F32', shape: [2, 3], byteLength: 24 },
        { name: 'b.index', dtype: 'I32', shape: [4], byteLength: 16 },
      ],
    });
  });

  it('accepts bytes at any offset of a larger buffer (they are copied to aligned wasm memory)', () => {
    const bytes = specFile();
    const shifted = new Uint8Array(bytes.length + 3);
    shifted.set(bytes, 3);
    expect(ind.readModelInfo(shifted.subarray(3)).model).toBe('test');
  });

  it.each([
    ['no bytes at all', () => new Uint8Array(0)],
    ['fewer than the 8 length bytes', () => new Uint8Array([1, 0, 0])],
    [
      'a header length beyond the end of the file',
      () => {
        const b = specFile();
        new DataView(b.buffer).setBigUint64(0, BigInt(b.length), true);
        return b;
      },
    ],
    [
      'a header that is not JSON',
      () => {
        const b = specFile();
        b[8] = 'x'.charCodeAt(0);
        return b;
      },
    ],
    ['a truncated data section', () => specFile().subarray(0, specFile().length - 4)],
    [
      'trailing bytes after the data section',
      () => {
        const b = specFile();
        const longer = new Uint8Array(b.length + 8);
        longer.set(b);
        return longer;
      },
    ],
    [
      'offsets that do not match the shape',
      () =>
        safetensorsBytes({
          metadata: inductiveMetadata('test', {}),
          tensors: [{ name: 'x', dtype: 'F32', shape: [2, 3], data: new Float32Array(5) }],
        }),
    ],
    [
      'a file of another format',
      () =>
        safetensorsBytes({
          metadata: { ...inductiveMetadata('test', {}), format: 'pytorch' },
          tensors: [],
        }),
    ],
    ['random bytes', () => Uint8Array.from({ length: 256 }, (_, i) => (i * 151 + 7) & 255)],
  ])('rejects %s as bad_model_file', (_, bytes) => {
    expectInductiveError(() => ind.readModelInfo(bytes()), 'bad_model_file');
  });

  it('rejects a file from a newer format version as unsupported_version, naming both versions', () => {
    const newer = safetensorsBytes({ metadata: inductiveMetadata('test', {}, 99), tensors: [] });
    expectInductiveError(() => ind.readModelInfo(newer), 'unsupported_version', '99');
  });

  it('rejects something other than a Uint8Array as invalid_argument', () => {
    expectInductiveError(
      () => ind.readModelInfo(new ArrayBuffer(8) as never),
      'invalid_argument',
      'readModelInfo: bytes must be a Uint8Array: got ArrayBuffer',
    );
  });
});
