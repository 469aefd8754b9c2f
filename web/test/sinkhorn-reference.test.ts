// The wasm solver (float32, SIMD) against an independent plain-JS float64 log-domain Sinkhorn.
import { describe, expect, it } from 'vitest';
import { init } from '../src/index.js';
import { referenceSinkhorn } from './support/reference-sinkhorn.js';
import { marginal, randomInt, rng, squaredDistances, uniform } from './support/random.js';
import { relativeError } from './support/expect.js';

const ind = await init();

const maxAbs = (x: ArrayLike<number>): number => Array.from(x).reduce((m, v) => Math.max(m, Math.abs(v)), 0);
const maxAbsDiff = (x: ArrayLike<number>, y: ArrayLike<number>): number =>
  Array.from(x).reduce((m, v, i) => Math.max(m, Math.abs(v - (y[i] ?? NaN))), 0);
const outerSum = (f: ArrayLike<number>, g: ArrayLike<number>): Float64Array =>
  Float64Array.from(
    { length: f.length * g.length },
    (_, k) => (f[Math.floor(k / g.length)] ?? 0) + (g[k % g.length] ?? 0),
  );

interface Case {
  seed: number;
  eps: number;
  iterations: number;
  marginals: boolean;
  similarity: boolean;
}

// Every combination of regularisation, iteration count (the thesis' 10 supervised / 100 unsupervised),
// given or uniform marginals, and cost or similarity input; sizes drawn at random, including 1 and odd sizes
// that leave SIMD remainders.
const cases: Case[] = [];
let seed = 100;
for (const eps of [0.05, 0.5, 2]) {
  for (const iterations of [1, 10, 100]) {
    for (const marginals of [false, true]) {
      for (const similarity of [false, true]) cases.push({ seed: seed++, eps, iterations, marginals, similarity });
    }
  }
}

describe('sinkhorn agrees with a float64 JS reference to 1e-5 relative', () => {
  it.each(cases)(
    'seed $seed: eps $eps, $iterations iterations, marginals $marginals, similarity $similarity',
    ({ seed, eps, iterations, marginals, similarity }) => {
      const next = rng(seed);
      const n = randomInt(next, 1, 37),
        p = randomInt(next, 1, 37);
      const cost = similarity ? uniform(next, n * p, -1, 1) : squaredDistances(next, n, p);
      const a = marginals ? marginal(next, n, 2) : undefined;
      const b = marginals ? marginal(next, p, 2) : undefined;

      const got = ind.sinkhorn(cost, n, p, { a, b, eps, maxIter: iterations, similarity });
      const want = referenceSinkhorn({ cost, n, p, a, b, eps, iterations, similarity });

      expect(got.nIter).toBe(iterations);
      expect(relativeError(got.plan, want.plan)).toBeLessThan(1e-5);
      // Potentials are defined up to a shift (f + c, g - c) that Sinkhorn does not damp, so float32 rounding
      // drifts along it: f_i + g_j, which defines the plan, is compared as is; f and g on their joint scale.
      expect(relativeError(outerSum(got.f, got.g), outerSum(want.f, want.g))).toBeLessThan(1e-5);
      const scale = Math.max(maxAbs(want.f), maxAbs(want.g));
      expect(maxAbsDiff(got.f, want.f)).toBeLessThan(1e-5 * scale);
      expect(maxAbsDiff(got.g, want.g)).toBeLessThan(1e-5 * scale);
      expect(relativeError([got.cost], [want.cost])).toBeLessThan(1e-5);
      // The marginal error is a difference of near-equal sums: compare it on the scale of the mass.
      expect(Math.abs(got.marginalError - want.marginalError)).toBeLessThan(1e-5 * (marginals ? 2 : 1));
    },
  );
});
