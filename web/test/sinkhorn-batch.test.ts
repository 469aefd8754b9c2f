// Batched, masked solves: the padded layout of inductive/sinkhorn.h.
import { describe, expect, it } from 'vitest';
import { init } from '../src/index.js';
import { sums } from './support/reference-sinkhorn.js';
import { marginal, randomInt, rng, squaredDistances } from './support/random.js';
import { unpad } from './support/expect.js';

const ind = await init();

// A batch of random problems padded to nMax x pMax; the padding holds NaN, which must never be read.
function randomBatch(seed: number, batch: number, nMax: number, pMax: number) {
  const next = rng(seed);
  const n = Int32Array.from({ length: batch }, () => randomInt(next, 1, nMax));
  const p = Int32Array.from({ length: batch }, () => randomInt(next, 1, pMax));
  const cost = new Float32Array(batch * nMax * pMax).fill(NaN);
  const a = new Float32Array(batch * nMax).fill(NaN);
  const b = new Float32Array(batch * pMax).fill(NaN);
  const problems = Array.from({ length: batch }, (_, k) => {
    const nk = n[k] ?? 0,
      pk = p[k] ?? 0;
    const c = squaredDistances(next, nk, pk);
    for (let i = 0; i < nk; ++i) cost.set(c.subarray(i * pk, (i + 1) * pk), (k * nMax + i) * pMax);
    const ak = marginal(next, nk, 1 + k),
      bk = marginal(next, pk, 1 + k);
    a.set(ak, k * nMax);
    b.set(bk, k * pMax);
    return { n: nk, p: pk, cost: c, a: ak, b: bk };
  });
  return { shape: { batch, nMax, pMax, n, p }, cost, a, b, problems };
}

describe('sinkhornBatch', () => {
  it('equals separate solves of each problem, and writes 0 in the padding', () => {
    const { shape, cost, a, b, problems } = randomBatch(7, 6, 23, 17);
    const options = { eps: 0.3, maxIter: 30 };
    const r = ind.sinkhornBatch(cost, shape, { ...options, a, b });
    const { nMax, pMax } = shape;
    problems.forEach((pr, k) => {
      const one = ind.sinkhorn(pr.cost, pr.n, pr.p, { ...options, a: pr.a, b: pr.b });
      expect(unpad(r.plan, k, nMax * pMax, pr.n, pr.p, pMax)).toEqual(one.plan);
      expect(r.f.subarray(k * nMax, k * nMax + pr.n)).toEqual(one.f);
      expect(r.g.subarray(k * pMax, k * pMax + pr.p)).toEqual(one.g);
      expect(r.nIter[k]).toBe(one.nIter);
      expect(r.marginalError[k]).toBe(Math.fround(one.marginalError));
      expect(r.converged[k]).toBe(one.converged ? 1 : 0);
      expect(r.cost[k]).toBe(Math.fround(one.cost));
      for (let i = 0; i < nMax; ++i) {
        for (let j = 0; j < pMax; ++j) {
          if (i >= pr.n || j >= pr.p) expect(r.plan[(k * nMax + i) * pMax + j]).toBe(0);
        }
      }
      expect(Array.from(r.f.subarray(k * nMax + pr.n, (k + 1) * nMax)).every((x) => x === 0)).toBe(true);
      expect(Array.from(r.g.subarray(k * pMax + pr.p, (k + 1) * pMax)).every((x) => x === 0)).toBe(true);
    });
  });

  it('without n and p, every problem is full size', () => {
    const next = rng(8);
    const cost = squaredDistances(next, 2 * 5, 4);
    const r = ind.sinkhornBatch(cost, { batch: 2, nMax: 5, pMax: 4 });
    const second = ind.sinkhorn(cost.subarray(20), 5, 4);
    expect(r.plan.subarray(20)).toEqual(second.plan);
  });

  it('returns results shaped [batch, nMax, pMax], [batch, nMax], [batch, pMax] and [batch]', () => {
    const { shape, cost } = randomBatch(9, 3, 4, 5);
    const r = ind.sinkhornBatch(cost, shape);
    expect([r.plan.length, r.f.length, r.g.length]).toEqual([3 * 4 * 5, 3 * 4, 3 * 5]);
    for (const x of [r.nIter, r.marginalError, r.converged, r.cost]) expect(x.length).toBe(3);
    expect(r.converged).toBeInstanceOf(Uint8Array);
    expect(r.nIter).toBeInstanceOf(Int32Array);
  });
});

describe('marginals are honoured', () => {
  it('rows match a exactly after the last iteration, columns match b once converged', () => {
    const { shape, cost, a, b, problems } = randomBatch(10, 4, 30, 20);
    const r = ind.sinkhornBatch(cost, shape, { a, b, eps: 0.5, maxIter: 300 });
    problems.forEach((pr, k) => {
      const plan = unpad(r.plan, k, shape.nMax * shape.pMax, pr.n, pr.p, shape.pMax);
      const { rows, cols } = sums(plan, pr.n, pr.p);
      const mass = 1 + k;
      rows.forEach((s, i) => expect(Math.abs(s - (pr.a[i] ?? 0))).toBeLessThan(1e-6 * mass));
      cols.forEach((s, j) => expect(Math.abs(s - (pr.b[j] ?? 0))).toBeLessThan(1e-5 * mass));
      expect(r.converged[k]).toBe(1);
      expect(r.marginalError[k]).toBeLessThan(1e-4 * mass);
    });
  });

  it('tol > 0 stops early once the column error is within tol', () => {
    const next = rng(11);
    const cost = squaredDistances(next, 40, 30);
    const r = ind.sinkhorn(cost, 40, 30, { eps: 0.5, maxIter: 10_000, tol: 1e-4 });
    expect(r.nIter).toBeGreaterThan(1);
    expect(r.nIter).toBeLessThan(10_000);
    expect(r.converged).toBe(true);
    expect(r.marginalError).toBeLessThanOrEqual(1e-4);
  });
});
