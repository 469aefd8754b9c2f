// Kernel screening in wasm (screen({ kernel })): the digits run screens what the native CLI screens (committed
// reference, tests/data/screening/README.md), the returned coefficients are the model (margins = K alpha + b with
// K computed here, independently), screened samples have zero coefficients (they are not support vectors), and
// what the kernel path cannot do is refused with typed errors before any work. Dataset compression
// (compressionCurve) gives the CLI's curves.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { init, type ScreeningDataset } from '../src/index.js';
import { expectInductiveError } from './support/expect.js';
import { readNpy } from './support/otke.js';

const repo = (path: string): string => fileURLToPath(new URL(`../../${path}`, import.meta.url));
const ind = await init();

const DIGITS = repo('data/screening/digits.csv.gz');
const REFERENCE = repo('tests/data/screening/digits-9-vs-rest-gaussian.json');
const REFERENCE_KEPT = repo('tests/data/screening/digits-9-vs-rest-gaussian.kept.npy');

/** A reproducible dataset: labels +1 inside a disc of radius^2 1.4, -1 outside (no linear model separates it). */
function disc(n: number): { x: Float32Array; y: Float32Array } {
  const x = new Float32Array(n * 2);
  const y = new Float32Array(n);
  let s = 12345;
  const uniform = (): number => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 4 - 2;
  for (let i = 0; i < n; ++i) {
    x[2 * i] = uniform();
    x[2 * i + 1] = uniform();
    y[i] = x[2 * i]! ** 2 + x[2 * i + 1]! ** 2 < 1.4 ? 1 : -1;
  }
  return { x, y };
}

describe('kernel screening', () => {
  let digits: ScreeningDataset;
  beforeAll(() => {
    digits = ind.loadDataset(new Uint8Array(readFileSync(DIGITS)), { format: 'csv' });
  });
  afterAll(() => digits.dispose());

  it('screens on digits (Gaussian kernel) what the native CLI screens', () => {
    const native = JSON.parse(readFileSync(REFERENCE, 'utf8')) as Record<string, unknown>;
    const nativeKept = Array.from(readNpy(new Uint8Array(readFileSync(REFERENCE_KEPT))).data);
    const r = digits.screen({
      positive: 9,
      lambda: 0.001,
      tol: 1e-9,
      kernel: { type: 'gaussian', gamma: 0.001 },
    });
    // The same core on an eigendecomposition computed in another build (unvectorised Eigen): the solution agrees
    // to the gap, and a sample's verdict can only differ where it sits at the flat region's edge.
    expect(r.primal!).toBeCloseTo(native.primal as number, 8);
    const kept = new Set(Array.from(r.kept));
    const differing = nativeKept.filter((i) => !kept.has(i)).length + kept.size - nativeKept.length;
    expect(Math.abs(differing)).toBeLessThanOrEqual(2);
    expect(Math.abs(r.nScreened - (native.n_screened as number))).toBeLessThanOrEqual(2);
    expect(r.kernel).toMatchObject({
      type: 'gaussian',
      gamma: 0.001,
      rank: 1797,
      description: 'gaussian(gamma=0.001)',
    });
    expect(r.alpha.length).toBe(1797);
    expect(r.coefficients.length).toBe(0);
    expect(r.converged).toBe(true);
  });

  it('returns the model: margins are K alpha + b (K computed here), and screened samples have alpha 0', () => {
    const n = 120;
    const { x, y } = disc(n);
    const data = ind.datasetFromArrays(x, n, 2, y);
    try {
      const kernel = { type: 'polynomial', gamma: 0.5, degree: 2, coef0: 1 } as const;
      const r = data.screen({ lambda: 0.001, tol: 1e-10, intercept: true, kernel });
      expect(r.kernel!.rank).toBe(6); // (a.b/2 + 1)^2 on 2 features: 1, a1, a2, a1^2, a2^2, a1 a2
      let worst = 0;
      for (let i = 0; i < n; ++i) {
        let f = r.intercept;
        for (let j = 0; j < n; ++j) {
          const dot = x[2 * i]! * x[2 * j]! + x[2 * i + 1]! * x[2 * j + 1]!;
          f += r.alpha[j]! * (0.5 * dot + 1) ** 2;
        }
        worst = Math.max(worst, Math.abs(f - r.margins[i]!));
      }
      expect(worst).toBeLessThan(1e-4); // margins are float32
      expect(r.nScreened).toBeGreaterThan(0);
      for (let i = 0; i < n; ++i) {
        if (r.screened[i] === 1) expect(Math.abs(r.alpha[i]!)).toBe(0);
      }
    } finally {
      data.dispose();
    }
  });

  it('states its limit and refuses past it before any work, and refuses what it cannot do', () => {
    expect(ind.limits.maxKernelSamples).toBe(3000);
    const n = ind.limits.maxKernelSamples + 1;
    const { x, y } = disc(n);
    const big = ind.datasetFromArrays(x, n, 2, y);
    try {
      const start = performance.now();
      expectInductiveError(
        () => big.screen({ kernel: { type: 'gaussian' } }),
        'invalid_argument',
        "exceeds this build's limit of 3000 samples",
      );
      expect(performance.now() - start).toBeLessThan(2000); // no Gram matrix was built (3001^2 doubles, O(n^3))
    } finally {
      big.dispose();
    }
    expectInductiveError(
      () => digits.screen({ positive: 9, penalty: 'l1', kernel: { type: 'gaussian' } }),
      'invalid_argument',
      'the penalty must be l2',
    );
    expectInductiveError(
      () => digits.screen({ positive: 9, kernel: { type: 'sigmoid' as 'linear' } }),
      'invalid_argument',
      'kernel.type must be',
    );
    expectInductiveError(
      () => digits.screen({ positive: 9, kernel: { type: 'gaussian', gamma: Number.NaN } }),
      'invalid_argument',
      'kernel.gamma must be a finite number',
    );
    expectInductiveError(
      () => digits.screen({ positive: 9, kernel: { type: 'gaussian', gamma: -1 } }),
      'invalid_argument',
      'gamma must be finite and > 0',
    );
    expectInductiveError(
      () => digits.screen({ positive: 9, kernel: { type: 'polynomial', degree: 0 } }),
      'invalid_argument',
      'degree must be an integer in 1..20',
    );
    expectInductiveError(
      () => digits.screen({ positive: 9, kernel: { type: 'linear', width: 2 } as never }),
      'invalid_argument',
      "unknown option 'width'",
    );
    expectInductiveError(
      () => digits.path({ positive: 9, kernel: { type: 'gaussian' } } as never),
      'invalid_argument',
      "unknown option 'kernel'",
    );
  });
});

describe('dataset compression (compressionCurve)', () => {
  const REFERENCE_COMPRESS = repo('tests/data/screening/digits-9-vs-rest-compress.json');
  type NativePoint = { fraction_removed: number; n_kept: number; test_accuracy: number; train_objective: number };
  const native = JSON.parse(readFileSync(REFERENCE_COMPRESS, 'utf8')) as {
    n_train: number;
    n_test: number;
    n_certified: number;
    full_test_accuracy: number;
    curves: { ranking: string; points: NativePoint[] }[];
  };

  it('gives the native CLI curves on digits: same split, certified samples, accuracies and objectives', () => {
    const digits = ind.loadDataset(new Uint8Array(readFileSync(DIGITS)), { format: 'csv' });
    try {
      const stages = new Set<string>();
      const r = digits.compressionCurve({
        positive: 9,
        lambda: 1,
        tol: 1e-8,
        fractions: [0, 0.5, 0.8],
        onProgress: (stage, fraction) => {
          stages.add(stage);
          expect(fraction).toBeGreaterThanOrEqual(0);
          expect(fraction).toBeLessThanOrEqual(1);
        },
      });
      expect([...stages]).toEqual(['fit', 'refit']);
      expect([r.nTrain, r.nTest, r.nCertified]).toEqual([native.n_train, native.n_test, native.n_certified]);
      expect(r.fullTestAccuracy).toBe(native.full_test_accuracy);
      // One report (core compression_report): the CLI's keys, less the run's inputs, are the browser's snake_cased.
      const cliOnly = new Set(['input', 'test', 'intercept', 'tol', 'ellipsoid_steps']);
      expect(
        Object.keys(native)
          .filter((k) => !cliOnly.has(k))
          .sort(),
      ).toEqual(
        Object.keys(r)
          .map((k) => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`))
          .sort(),
      );
      expect(r.curves.map((c) => c.ranking)).toEqual(['screening', 'margin', 'random']);
      r.curves.forEach((c, k) => {
        c.points.forEach((p, i) => {
          const q = native.curves[k]!.points[i]!;
          expect([p.fractionRemoved, p.nKept]).toEqual([q.fraction_removed, q.n_kept]);
          expect(p.testAccuracy).toBeCloseTo(q.test_accuracy, 6);
          expect(p.trainObjective!).toBeCloseTo(q.train_objective, 4); // each refit to a relative gap of 1e-8
        });
      });
      // The thesis' finding: removing certified samples (here half the training set) keeps the model exactly;
      // removing as many at random does not.
      expect(r.curves[0]!.points[1]!.certifiedGap!).toBeLessThan(1e-6);
      expect(r.curves[2]!.points[1]!.certifiedGap!).toBeGreaterThan(1e-3);
    } finally {
      digits.dispose();
    }
  });

  it('cancels from onProgress and refuses bad options with typed errors', () => {
    const n = 200;
    const { x, y } = disc(n);
    const data = ind.datasetFromArrays(x, n, 2, y);
    try {
      expectInductiveError(() => data.compressionCurve({ onProgress: () => false }), 'cancelled', 'cancelled');
      expectInductiveError(() => data.compressionCurve({ fractions: [0, 1] }), 'invalid_argument', '[0, 1)');
      expectInductiveError(
        () => data.compressionCurve({ rankings: ['best' as 'random'] }),
        'invalid_argument',
        'rankings must be',
      );
      expectInductiveError(
        () => data.compressionCurve({ testFraction: Number.NaN }),
        'invalid_argument',
        'testFraction must be a finite number',
      );
      expectInductiveError(() => data.compressionCurve({ testFraction: 1 }), 'invalid_argument', '(0, 1)');
      expectInductiveError(
        () => data.compressionCurve({ kernel: { type: 'linear' } } as never),
        'invalid_argument',
        "unknown option 'kernel'",
      );
      // Still usable after all of that.
      const ok = data.compressionCurve({ fractions: [0], rankings: ['random'], lambda: 0.01 });
      expect(ok.curves[0]!.points[0]!.nKept).toBe(ok.nTrain);
    } finally {
      data.dispose();
    }
  });
});
