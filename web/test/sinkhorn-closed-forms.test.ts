// Problems whose entropic transport plan is known exactly.
import { describe, expect, it } from 'vitest';
import { init } from '../src/index.js';
import { marginal, rng } from './support/random.js';
import { relativeError } from './support/expect.js';

const ind = await init();

describe('sinkhorn on problems with a closed-form answer', () => {
  it('a constant cost gives the independent coupling a b^T, for any eps', () => {
    const next = rng(1);
    const n = 7,
      p = 5;
    const a = marginal(next, n),
      b = marginal(next, p);
    const cost = new Float32Array(n * p).fill(3.25);
    const expected = Float64Array.from({ length: n * p }, (_, k) => (a[Math.floor(k / p)] ?? 0) * (b[k % p] ?? 0));
    for (const eps of [0.01, 0.5, 10]) {
      const r = ind.sinkhorn(cost, n, p, { a, b, eps, maxIter: 5 });
      // Float32 potentials carry C/eps (325 at eps = 0.01): rounding it costs about C/eps x 2^-24 in P.
      expect(relativeError(r.plan, expected)).toBeLessThan(1e-6 + (4 * 3.25) / eps / 2 ** 24);
      expect(r.converged).toBe(true);
    }
  });

  it('uniform marginals and a constant cost give 1 / (n p) everywhere, and cost = C - eps H(P)', () => {
    const n = 4,
      p = 6,
      eps = 0.5,
      c = 2;
    const r = ind.sinkhorn(new Float32Array(n * p).fill(c), n, p, { eps, maxIter: 1 });
    for (const v of r.plan) expect(v).toBeCloseTo(1 / (n * p), 7);
    // H(P) = -sum P (log P - 1) = log(n p) + 1 for the uniform plan of mass 1.
    expect(r.cost).toBeCloseTo(c - eps * (Math.log(n * p) + 1), 5);
  });

  it('one source point sends everything along b, one target point collects a', () => {
    const next = rng(2);
    const b = marginal(next, 9);
    const row = ind.sinkhorn(Float32Array.from({ length: 9 }, next), 1, 9, { b, eps: 0.1 });
    expect(relativeError(row.plan, b)).toBeLessThan(1e-6);

    const a = marginal(next, 4);
    const column = ind.sinkhorn(Float32Array.from({ length: 4 }, next), 4, 1, { a, eps: 0.1 });
    expect(relativeError(column.plan, a)).toBeLessThan(1e-6);

    const single = ind.sinkhorn(new Float32Array([42]), 1, 1);
    expect(Array.from(single.plan)).toEqual([1]);
    expect(single.marginalError).toBe(0);
  });

  it('a 2 x 2 swap cost [[0, 1], [1, 0]] keeps x = e^(1/eps) / (2 (1 + e^(1/eps))) on the diagonal', () => {
    for (const eps of [0.25, 0.5, 2]) {
      const r = ind.sinkhorn(new Float32Array([0, 1, 1, 0]), 2, 2, { eps, maxIter: 50 });
      const e = Math.exp(1 / eps);
      const x = e / (2 * (1 + e));
      expect(relativeError(r.plan, [x, 0.5 - x, 0.5 - x, x])).toBeLessThan(1e-6);
    }
  });

  it('the potentials reproduce the plan: P_ij = exp((f_i + g_j - C_ij) / eps)', () => {
    const next = rng(3);
    const n = 6,
      p = 4,
      eps = 0.3;
    const cost = Float32Array.from({ length: n * p }, next);
    const r = ind.sinkhorn(cost, n, p, { eps });
    const fromPotentials = Float64Array.from({ length: n * p }, (_, k) =>
      Math.exp(((r.f[Math.floor(k / p)] ?? 0) + (r.g[k % p] ?? 0) - (cost[k] ?? 0)) / eps),
    );
    expect(relativeError(r.plan, fromPotentials)).toBeLessThan(1e-5);
  });

  it('similarity: true solves the problem with cost -S', () => {
    const next = rng(4);
    const s = Float32Array.from({ length: 12 }, next);
    const asSimilarity = ind.sinkhorn(s, 3, 4, { similarity: true, eps: 0.2 });
    const asCost = ind.sinkhorn(
      s.map((x) => -x),
      3,
      4,
      { eps: 0.2 },
    );
    expect(Array.from(asSimilarity.plan)).toEqual(Array.from(asCost.plan));
  });
});
