// Every bad input is an InductiveError with a code a caller can act on, and a message naming the problem.
// Shapes and types are checked in TS; values (NaN, eps, masses) by the core, whose errors cross into JS as data.
import { describe, expect, it } from 'vitest';
import { init, InductiveError } from '../src/index.js';
import { expectInductiveError } from './support/expect.js';

const ind = await init();
const cost6 = new Float32Array([0, 1, 2, 3, 4, 5]); // a valid 2 x 3 or 3 x 2 cost

describe('bad Sinkhorn inputs', () => {
  it.each([
    ['no rows', () => ind.sinkhorn(new Float32Array(0), 0, 3), 'empty point set: got n = 0, p = 3'],
    ['no columns', () => ind.sinkhorn(new Float32Array(0), 2, 0), 'empty point set: got n = 2, p = 0'],
    [
      'an empty batch',
      () => ind.sinkhornBatch(new Float32Array(0), { batch: 0, nMax: 2, pMax: 3 }),
      'batch size must be >= 1: got 0',
    ],
    [
      'NaN in the cost',
      () => ind.sinkhorn(new Float32Array([0, 1, NaN, 3, 4, 5]), 2, 3),
      'non-finite value at (0, 2): got nan',
    ],
    [
      'Infinity in the cost',
      () => ind.sinkhorn(new Float32Array([0, 1, 2, 3, -Infinity, 5]), 2, 3),
      'non-finite value at (1, 1)',
    ],
    [
      'NaN in a marginal',
      () => ind.sinkhorn(cost6, 2, 3, { a: new Float32Array([0.5, NaN]) }),
      'marginal a of problem 0 has a non-finite value at index 1',
    ],
    [
      'a negative weight',
      () => ind.sinkhorn(cost6, 2, 3, { b: new Float32Array([1.5, -0.25, -0.25]) }),
      'negative weight at index 1',
    ],
    [
      'a zero-mass marginal',
      () => ind.sinkhorn(cost6, 2, 3, { a: new Float32Array(2), b: new Float32Array(3) }),
      'zero total mass',
    ],
    [
      'unequal masses',
      () => ind.sinkhorn(cost6, 2, 3, { a: new Float32Array([1, 1]) }),
      'do not have the same mass: got sum(a) = 2, sum(b) = 1',
    ],
    ['a negative eps', () => ind.sinkhorn(cost6, 2, 3, { eps: -0.5 }), 'eps must be a finite number > 0: got -0.5'],
    ['eps = 0', () => ind.sinkhorn(cost6, 2, 3, { eps: 0 }), 'eps must be a finite number > 0: got 0'],
    ['a NaN eps', () => ind.sinkhorn(cost6, 2, 3, { eps: NaN }), 'eps must be a finite number > 0'],
    ['maxIter = 0', () => ind.sinkhorn(cost6, 2, 3, { maxIter: 0 }), 'max_iter out of range: got 0'],
    ['a negative tol', () => ind.sinkhorn(cost6, 2, 3, { tol: -1 }), 'tol must be a finite number >= 0'],
    [
      'a length n above nMax',
      () => ind.sinkhornBatch(cost6, { batch: 1, nMax: 2, pMax: 3, n: new Int32Array([3]) }),
      'length n of problem 0 out of range: got 3, expected 1..2',
    ],
    [
      'a length p of 0',
      () => ind.sinkhornBatch(cost6, { batch: 1, nMax: 2, pMax: 3, p: new Int32Array([0]) }),
      'length p of problem 0 out of range: got 0, expected 1..3',
    ],
  ])('%s -> invalid_argument or shape_mismatch from the core', (_, call, fragment) => {
    const e = expectInductiveError(
      call,
      fragment.startsWith('length') ? 'shape_mismatch' : 'invalid_argument',
      fragment,
    );
    expect(e.message.startsWith('sinkhorn: ')).toBe(true);
  });

  it.each([
    [
      'a cost shorter than n x p',
      () => ind.sinkhorn(new Float32Array(5), 2, 3),
      'sinkhorn: cost has 5 values; expected n x p = 2 x 3 = 6',
    ],
    ['a cost longer than n x p', () => ind.sinkhorn(new Float32Array(7), 2, 3), 'cost has 7 values'],
    [
      'a of the wrong length',
      () => ind.sinkhorn(cost6, 2, 3, { a: new Float32Array(3) }),
      'sinkhorn: a has 3 values; expected n = 2',
    ],
    [
      'b of the wrong length',
      () => ind.sinkhorn(cost6, 2, 3, { b: new Float32Array(2) }),
      'sinkhorn: b has 2 values; expected p = 3',
    ],
    [
      'a batch cost of the wrong length',
      () => ind.sinkhornBatch(cost6, { batch: 2, nMax: 2, pMax: 3 }),
      'sinkhornBatch: cost has 6 values; expected batch x nMax x pMax = 2 x 2 x 3 = 12',
    ],
    [
      'batch lengths n of the wrong length',
      () => ind.sinkhornBatch(cost6, { batch: 1, nMax: 2, pMax: 3, n: new Int32Array(2) }),
      'sinkhornBatch: n has 2 values; expected batch = 1',
    ],
    [
      'batch marginals of the wrong length',
      () => ind.sinkhornBatch(cost6, { batch: 1, nMax: 2, pMax: 3 }, { b: new Float32Array(2) }),
      'sinkhornBatch: b has 2 values; expected batch x pMax = 1 x 3 = 3',
    ],
  ])('%s -> shape_mismatch', (_, call, fragment) => {
    expectInductiveError(call, 'shape_mismatch', fragment);
  });

  it.each([
    [
      'a Float64Array cost',
      () => ind.sinkhorn(new Float64Array(6) as never, 2, 3),
      'sinkhorn: cost must be a Float32Array: got Float64Array',
    ],
    [
      'a plain array cost',
      () => ind.sinkhorn([0, 1, 2, 3, 4, 5] as never, 2, 3),
      'cost must be a Float32Array: got Array',
    ],
    [
      'a non-integer n',
      () => ind.sinkhorn(cost6, 2.5, 3),
      'sinkhorn: n must be an integer in [0, 2147483647]: got 2.5',
    ],
    ['a negative p', () => ind.sinkhorn(cost6, 2, -3), 'p must be an integer in [0, 2147483647]: got -3'],
    ['a NaN n', () => ind.sinkhorn(cost6, NaN, 3), 'n must be an integer in [0, 2147483647]: got NaN'],
    ['n as a string', () => ind.sinkhorn(cost6, '2' as never, 3), 'got string'],
    [
      'a Float64Array marginal',
      () => ind.sinkhorn(cost6, 2, 3, { a: new Float64Array(2) as never }),
      'a must be a Float32Array: got Float64Array',
    ],
    [
      'batch lengths as Float32Array',
      () => ind.sinkhornBatch(cost6, { batch: 1, nMax: 2, pMax: 3, n: new Float32Array([2]) as never }),
      'sinkhornBatch: n must be an Int32Array: got Float32Array',
    ],
    [
      'a non-integer maxIter',
      () => ind.sinkhorn(cost6, 2, 3, { maxIter: 2.5 }),
      'maxIter must be a 32-bit integer: got 2.5',
    ],
    ['a string eps', () => ind.sinkhorn(cost6, 2, 3, { eps: '0.5' as never }), 'eps must be a number: got string'],
    [
      'a non-boolean similarity',
      () => ind.sinkhorn(cost6, 2, 3, { similarity: 1 as never }),
      'similarity must be a boolean: got number',
    ],
    [
      'options that are not an object',
      () => ind.sinkhorn(cost6, 2, 3, 0.5 as never),
      'options must be an object: got number',
    ],
    ['a missing batch shape', () => ind.sinkhornBatch(cost6, undefined as never), 'shape must be an object'],
  ])('%s -> invalid_argument', (_, call, fragment) => {
    expectInductiveError(call, 'invalid_argument', fragment);
  });

  it('leaves the instance usable: a valid solve after each kind of error still succeeds', () => {
    expect(() => ind.sinkhorn(cost6, 2, 3, { eps: -1 })).toThrow(InductiveError);
    expect(() => ind.sinkhorn(cost6, 7, 3)).toThrow(InductiveError);
    expect(ind.sinkhorn(cost6, 2, 3).converged).toBe(true);
  });

  it('is an Error with name InductiveError, so stack traces and logs show it as such', () => {
    const e = expectInductiveError(() => ind.sinkhorn(cost6, 2, 3, { eps: 0 }), 'invalid_argument');
    expect(e).toBeInstanceOf(Error);
    expect(e.name).toBe('InductiveError');
    expect(String(e)).toMatch(/^InductiveError: sinkhorn: eps/);
  });
});
