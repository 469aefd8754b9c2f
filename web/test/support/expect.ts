// Assertions shared by the suites.
import { expect } from 'vitest';
import { InductiveError, type ErrorCodeName } from '../../src/index.js';

/** Largest absolute difference relative to the largest reference magnitude (a norm-wise relative error). */
export function relativeError(actual: ArrayLike<number>, expected: ArrayLike<number>): number {
  expect(actual.length).toBe(expected.length);
  let diff = 0;
  let scale = 0;
  for (let i = 0; i < expected.length; ++i) {
    diff = Math.max(diff, Math.abs((actual[i] ?? NaN) - (expected[i] ?? NaN)));
    scale = Math.max(scale, Math.abs(expected[i] ?? 0));
  }
  return scale > 0 ? diff / scale : diff;
}

/** `body` must throw an InductiveError with `code` whose message contains every fragment. */
export function expectInductiveError(body: () => unknown, code: ErrorCodeName, ...fragments: string[]): InductiveError {
  let caught: unknown;
  try {
    body();
  } catch (e) {
    caught = e;
  }
  expect(caught, 'expected an InductiveError to be thrown').toBeInstanceOf(InductiveError);
  const error = caught as InductiveError;
  expect(error.code, error.message).toBe(code);
  for (const fragment of fragments) expect(error.message).toContain(fragment);
  return error;
}

/** The padded slice [b] of a batch output with `stride` values per problem, cut to `rows` x `cols` of `ld`. */
export function unpad(
  x: Float32Array,
  b: number,
  stride: number,
  rows: number,
  cols: number,
  ld: number,
): Float32Array {
  const out = new Float32Array(rows * cols);
  for (let i = 0; i < rows; ++i) out.set(x.subarray(b * stride + i * ld, b * stride + i * ld + cols), i * cols);
  return out;
}
