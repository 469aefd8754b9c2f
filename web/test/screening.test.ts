// Safe sample screening in wasm: datasets parse as the core reads them (LIBSVM, CSV, gzip, arrays), the digits run
// screens exactly what the native CLI screens (committed reference), every screened sample is truly in its loss's
// flat region at the solution and refitting without the screened samples gives the same solution (the safety the
// method promises), progress reports and cancellation work, and bad inputs are typed errors.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gzipSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { init, InductiveError, type ScreeningDataset, type ScreenProgress } from '../src/index.js';
import { expectInductiveError } from './support/expect.js';
import { readNpy } from './support/otke.js';

const repo = (path: string): string => fileURLToPath(new URL(`../../${path}`, import.meta.url));
const ind = await init();

const DIGITS = repo('data/screening/digits.csv.gz');
const REFERENCE = repo('tests/data/screening/digits-9-vs-rest-lambda1.json');
const REFERENCE_KEPT = repo('tests/data/screening/digits-9-vs-rest-lambda1.kept.npy');
// The CLI run of tests/data/screening/README.md.
const DIGITS_SETTINGS = { loss: 'squared_hinge', penalty: 'l2', lambda: 1, positive: 9, tol: 1e-9 } as const;

/** The digits CSV parsed here, independently of the core: 1797 x 64 pixel counts and the digit. */
function digitsArrays(): { x: Float32Array; y: Float32Array; n: number; p: number } {
  const lines = gunzipSync(readFileSync(DIGITS)).toString('utf8').trim().split('\n');
  const p = lines[0]!.split(',').length - 1;
  const x = new Float32Array(lines.length * p);
  const y = new Float32Array(lines.length);
  lines.forEach((line, i) => {
    const v = line.split(',').map(Number);
    x.set(v.slice(0, p), i * p);
    y[i] = v[p]!;
  });
  return { x, y, n: lines.length, p };
}

/** Rows `rows` of a dense dataset. */
function subset(
  x: Float32Array,
  y: Float32Array,
  p: number,
  rows: ArrayLike<number>,
): { x: Float32Array; y: Float32Array } {
  const sx = new Float32Array(rows.length * p);
  const sy = new Float32Array(rows.length);
  for (let k = 0; k < rows.length; ++k) {
    const i = rows[k]!;
    sx.set(x.subarray(i * p, (i + 1) * p), k * p);
    sy[k] = y[i]!;
  }
  return { x: sx, y: sy };
}

function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  let d = 0;
  for (let i = 0; i < a.length; ++i) d = Math.max(d, Math.abs(a[i]! - b[i]!));
  return d;
}

// The same 4 x 3 data in the three input forms (LIBSVM is sparse: zeros left out).
const SMALL_LIBSVM = '+1 1:0.5 3:2\n-1 2:1.5\n# a comment line\n+1 1:1 2:-1 3:0.25\n-1 1:-2 3:-1\n';
const SMALL_CSV = 'label;a;b;c\n1;0.5;0;2\n-1;0;1.5;0\n1;1;-1;0.25\n-1;-2;0;-1\n';
const SMALL_X = new Float32Array([0.5, 0, 2, 0, 1.5, 0, 1, -1, 0.25, -2, 0, -1]);
const SMALL_Y = new Float32Array([1, -1, 1, -1]);

describe('loading datasets', () => {
  it('reads LIBSVM text (sparse) with its labels', () => {
    const d = ind.loadDataset(SMALL_LIBSVM, { format: 'libsvm' });
    expect([d.n, d.p, d.nnz, d.sparse]).toEqual([4, 3, 8, true]);
    expect(d.labels).toEqual([-1, 1]);
    expect([d.yMin, d.yMax]).toEqual([-1, 1]);
    d.dispose();
  });

  it('reads CSV with a header, a label column and a delimiter (dense), as the same data', () => {
    const csv = ind.loadDataset(SMALL_CSV, { format: 'csv', header: true, labelColumn: 0, delimiter: ';' });
    const svm = ind.loadDataset(SMALL_LIBSVM, { format: 'libsvm' });
    const arrays = ind.datasetFromArrays(SMALL_X, 4, 3, SMALL_Y);
    expect([csv.n, csv.p, csv.sparse, arrays.sparse]).toEqual([4, 3, false, false]);
    expect(csv.labels).toEqual([-1, 1]);
    const results = [csv, svm, arrays].map((d) => d.screen({ lambda: 0.05, tol: 1e-10 }));
    for (const r of results.slice(1)) {
      expect(maxAbsDiff(r.coefficients, results[0]!.coefficients)).toBeLessThan(1e-6);
      expect(Array.from(r.screened)).toEqual(Array.from(results[0]!.screened));
    }
    [csv, svm, arrays].forEach((d) => d.dispose());
  });

  it('reads gzip-compressed bytes as the text itself', () => {
    const plain = ind.loadDataset(new TextEncoder().encode(SMALL_LIBSVM), { format: 'libsvm' });
    const gz = ind.loadDataset(new Uint8Array(gzipSync(SMALL_LIBSVM)), { format: 'libsvm' });
    expect([gz.n, gz.p, gz.nnz]).toEqual([plain.n, plain.p, plain.nnz]);
    expect(Array.from(gz.screen({ lambda: 0.05 }).coefficients)).toEqual(
      Array.from(plain.screen({ lambda: 0.05 }).coefficients),
    );
    const digits = ind.loadDataset(new Uint8Array(readFileSync(DIGITS)), { format: 'csv' });
    expect([digits.n, digits.p, digits.sparse]).toEqual([1797, 64, false]);
    expect(digits.labels).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    plain.dispose();
    gz.dispose();
    digits.dispose();
  });

  it('reads the breast cancer CSV (header line, label last)', () => {
    const d = ind.loadDataset(readFileSync(repo('data/screening/breast_cancer.csv'), 'utf8'), {
      format: 'csv',
      header: true,
    });
    expect([d.n, d.p]).toEqual([569, 30]);
    expect(d.labels).toEqual([0, 1]);
    d.dispose();
  });
});

describe('digits 9 vs rest, squared hinge + L2, lambda 1 (the thesis setting)', () => {
  let digits: ScreeningDataset;
  const native = JSON.parse(readFileSync(REFERENCE, 'utf8')) as Record<string, number | boolean | string>;
  const nativeKept = readNpy(new Uint8Array(readFileSync(REFERENCE_KEPT))).data;
  beforeAll(() => {
    digits = ind.loadDataset(new Uint8Array(readFileSync(DIGITS)), { format: 'csv' });
  });
  afterAll(() => digits.dispose());

  it('screens exactly the samples the native CLI screens', () => {
    const r = digits.screen({ ...DIGITS_SETTINGS });
    // Same core code, same deterministic coordinate order (own shuffle, seed 0), and the solver sums in double
    // precision: the two builds take the same path to the same solution, so counts and sets agree exactly.
    expect(r.nScreened).toBe(native.n_screened);
    expect(r.nDynamic).toBe(native.n_dynamic);
    expect(r.nStatic).toBe(native.n_static);
    expect(r.fractionScreened).toBeCloseTo(native.fraction_screened as number, 12);
    expect(r.epochs).toBe(native.epochs);
    expect(Array.from(r.kept)).toEqual(Array.from(nativeKept));
    expect(r.primal!).toBeCloseTo(native.primal as number, 9);
    expect(r.converged).toBe(true);
    expect(r.cancelled).toBe(false);
    expect(r.fractionScreened).toBeGreaterThan(0.7); // the thesis: 0.777 for its ideal screening
    expect([r.n, r.p, r.loss, r.penalty, r.lambda, r.mu]).toEqual([1797, 64, 'squared_hinge', 'l2', 1, 0]);
    expect(r.kept.length + r.nScreened).toBe(1797);
    expect(r.screened.reduce((a, b) => a + b, 0)).toBe(r.nScreened);
    expect(r.coefficients.length).toBe(64);
    expect(r.intercept).toBe(0);
  });

  it('reports what the native CLI reports, key for key: one report, defined in core, camelCased once', () => {
    const r = digits.screen({ ...DIGITS_SETTINGS }) as unknown as Record<string, unknown>;
    const camel = (key: string): string => key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
    const cliOnly = new Set(['input', 'tol', 'dynamic_screening', 'n_kept']); // the run's inputs, and kept.length
    const compared: string[] = [];
    for (const [key, value] of Object.entries(native as Record<string, unknown>)) {
      if (cliOnly.has(key) || key.endsWith('seconds')) continue; // timings are the run's own
      const mine = r[camel(key)];
      if (key === 'history') {
        const h = value as { epoch: number[]; gap: number[]; active: number[] };
        const m = mine as { epoch: Int32Array; gap: Float64Array; active: Int32Array };
        expect([Array.from(m.epoch), Array.from(m.active)]).toEqual([h.epoch, h.active]);
        m.gap.forEach((g, i) => expect(g).toBeCloseTo(h.gap[i] ?? NaN, 12));
      } else if (typeof value === 'number' && !Number.isInteger(value)) {
        expect(mine as number, key).toBeCloseTo(value, 12);
      } else {
        expect(mine, key).toEqual(value);
      }
      compared.push(key);
    }
    expect(compared.length).toBeGreaterThanOrEqual(20); // every key but the CLI's four and the timings
    expect(Object.keys(native)).toEqual(expect.arrayContaining(['n_screened', 'n_static_by_balls', 'history']));
  });

  it('screens only samples strictly inside the flat region at the solution (y_i (w.x_i + b) >= 1 - mu)', () => {
    const r = digits.screen({ ...DIGITS_SETTINGS });
    const { y } = digitsArrays();
    let checked = 0;
    let smallest = Infinity;
    for (let i = 0; i < r.n; ++i) {
      const t = (y[i] === 9 ? 1 : -1) * r.margins[i]!;
      if (r.screened[i]) {
        smallest = Math.min(smallest, t);
        checked += 1;
      }
      // The static scores say the same: > 0 only for samples in the flat region.
      if (r.scores[i]! > 0) expect(r.screened[i]).toBe(1);
    }
    expect(checked).toBe(r.nScreened);
    // margins are float32 copies of double values near 1: allow their rounding.
    expect(smallest).toBeGreaterThanOrEqual(1 - r.mu - 1e-6);
  });

  it('refitting on the kept samples alone gives the same solution (the screening was safe)', () => {
    const r = digits.screen({ ...DIGITS_SETTINGS });
    const { x, y, n, p } = digitsArrays();
    const kept = subset(x, y, p, r.kept);
    const small = ind.datasetFromArrays(kept.x, r.kept.length, p, kept.y);
    // The full objective restricted to the kept samples is (n'/n) (1/n' sum loss + lambda n / n' R): same minimiser.
    const refit = small.screen({
      ...DIGITS_SETTINGS,
      lambda: (DIGITS_SETTINGS.lambda * n) / r.kept.length,
      dynamic: false,
    });
    small.dispose();
    let scale = 0;
    for (const w of r.coefficients) scale = Math.max(scale, Math.abs(w));
    expect(maxAbsDiff(refit.coefficients, r.coefficients) / scale).toBeLessThan(1e-4);
  });

  it('reports progress with increasing epochs and a fraction screened that only grows', () => {
    const seen: ScreenProgress[] = [];
    const r = digits.screen({
      ...DIGITS_SETTINGS,
      onProgress: (p) => {
        seen.push(p);
      },
    });
    expect(seen.length).toBe(r.history.epoch.length);
    for (let k = 1; k < seen.length; ++k) {
      expect(seen[k]!.epoch).toBeGreaterThan(seen[k - 1]!.epoch);
      expect(seen[k]!.fractionScreened).toBeGreaterThanOrEqual(seen[k - 1]!.fractionScreened);
      expect(seen[k]!.primal).toBeGreaterThanOrEqual(seen[k]!.dual - 1e-12);
    }
    expect(Array.from(r.history.epoch)).toEqual(seen.map((p) => p.epoch));
    expect(Array.from(r.history.active)).toEqual(seen.map((p) => p.active));
    expect(Array.from(r.history.fractionScreened)).toEqual(seen.map((p) => 1 - p.active / 1797));
    expect(r.history.fractionScreened[r.history.fractionScreened.length - 1]).toBeCloseTo(r.nDynamic / r.n, 12);
    expect(r.history.gap.length).toBe(seen.length);
  });

  it('stops when onProgress returns false (cancelled, not converged), and rethrows what it throws', () => {
    const epochs: number[] = [];
    const r = digits.screen({
      ...DIGITS_SETTINGS,
      onProgress: (p) => {
        epochs.push(p.epoch);
        return p.epoch < 3;
      },
    });
    expect(epochs).toEqual([1, 2, 3]);
    expect(r.epochs).toBe(3);
    expect(r.cancelled).toBe(true);
    expect(r.converged).toBe(false);
    const boom = new Error('stop here');
    expect(() =>
      digits.screen({
        ...DIGITS_SETTINGS,
        onProgress: () => {
          throw boom;
        },
      }),
    ).toThrow(boom);
    expect(digits.screen({ ...DIGITS_SETTINGS }).nScreened).toBe(native.n_screened); // still usable
  });

  it('runs ellipsoid-method steps in the static test: never fewer samples, each flat at the solution', () => {
    // From a rough solution (gap 1e-3, no dynamic screening) the balls are large and the steps have room to help
    // (natively: 829 samples by the balls, 1091 after 40 steps).
    const rough = { ...DIGITS_SETTINGS, tol: 1e-3, dynamic: false };
    const balls = digits.screen(rough);
    expect(balls.ellipsoidSteps).toBe(0);
    expect(balls.nStaticByBalls).toBe(balls.nStatic);
    let previous = balls.nStatic;
    let last = balls;
    for (const steps of [2, 10, 40]) {
      const r = digits.screen({ ...rough, ellipsoidSteps: steps });
      expect(r.ellipsoidSteps).toBeGreaterThan(0);
      expect(r.ellipsoidSteps).toBeLessThanOrEqual(steps);
      expect(r.nStaticByBalls).toBe(balls.nStatic); // the same balls first
      expect(r.nStatic).toBeGreaterThanOrEqual(previous);
      previous = r.nStatic;
      last = r;
    }
    expect(last.nStatic).toBeGreaterThan(balls.nStatic); // or the steps proved nothing here
    // Safe: every sample the steps screened is in the flat region of a tightly solved problem.
    const exact = digits.screen({ ...DIGITS_SETTINGS, tol: 1e-10 });
    const { y } = digitsArrays();
    for (let i = 0; i < last.n; ++i) {
      if (last.screened[i]) expect((y[i] === 9 ? 1 : -1) * exact.margins[i]!).toBeGreaterThanOrEqual(1 - 1e-5);
    }
    expectInductiveError(() => digits.screen({ ellipsoidSteps: -1 }), 'invalid_argument', 'ellipsoidSteps');
    expectInductiveError(() => digits.screen({ ellipsoidSteps: 1.5 }), 'invalid_argument', 'ellipsoidSteps');
    expectInductiveError(() => digits.path({ positive: 9, ellipsoidSteps: 3 }), 'invalid_argument', 'staticScreen');
    const path = digits.path({ positive: 9, lambdas: [1, 0.5], staticScreen: true, ellipsoidSteps: 5 });
    expect(path.staticScreen).toBe(true);
    expect(path.points.every((pt) => pt.nStaticScreened <= pt.nScreened)).toBe(true);
  });

  it('screens more with a smaller lambda (a sparser dual)', () => {
    const a = digits.screen({ ...DIGITS_SETTINGS });
    const b = digits.screen({ ...DIGITS_SETTINGS, lambda: 0.1 });
    expect(b.fractionScreened).toBeGreaterThan(a.fractionScreened);
  });
});

describe('interval regression', () => {
  it('screens the samples whose interval [y - mu, y + mu] the fitted line passes strictly inside', () => {
    // y = 0.8 x - 0.3 + noise, one feature, an intercept.
    const n = 200;
    const x = new Float32Array(n);
    const y = new Float32Array(n);
    let s = 12345;
    const u = (): number => (s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < n; ++i) {
      x[i] = 2 * u() - 1;
      y[i] = 0.8 * x[i]! - 0.3 + 0.3 * (u() - 0.5);
    }
    const d = ind.datasetFromArrays(x, n, 1, y);
    expect(d.labels).toBe(null); // > 64 distinct values: regression targets
    const mu = 0.1;
    const r = d.screen({ loss: 'interval_regression', mu, lambda: 1e-3, intercept: true, tol: 1e-9 });
    expect(r.converged).toBe(true);
    expect(r.nScreened).toBeGreaterThan(0.2 * n);
    expect(r.nScreened).toBeLessThan(n);
    for (let i = 0; i < n; ++i) {
      const fitted = r.coefficients[0]! * x[i]! + r.intercept;
      expect(Math.abs(fitted - r.margins[i]!)).toBeLessThan(1e-5);
      if (r.screened[i]) expect(Math.abs(r.margins[i]! - y[i]!)).toBeLessThanOrEqual(mu + 1e-6);
    }
    expect(r.coefficients[0]).toBeCloseTo(0.8, 1);
    expect(r.intercept).toBeCloseTo(-0.3, 1);
    d.dispose();
  });
});

describe('bad inputs', () => {
  const good = (): ScreeningDataset => ind.datasetFromArrays(SMALL_X, 4, 3, SMALL_Y);

  it('names the malformed LIBSVM or CSV line', () => {
    expectInductiveError(
      () => ind.loadDataset('+1 1:0.5\n-1 2:oops\n', { format: 'libsvm' }),
      'invalid_argument',
      'libsvm: line 2',
      "'oops'",
    );
    expectInductiveError(
      () => ind.loadDataset('+1 1:0.5\n+1 1:1\nx 2:1\n', { format: 'libsvm' }),
      'invalid_argument',
      'line 3',
    );
    expectInductiveError(
      () => ind.loadDataset('a,b,y\n1,2,0\n3,4\n', { format: 'csv', header: true }),
      'invalid_argument',
      'csv: line 3',
      'got 2 columns, expected 3',
    );
    expectInductiveError(() => ind.loadDataset('', { format: 'libsvm' }), 'invalid_argument');
  });

  it('refuses an unknown format, wrong option types and non-text input', () => {
    expectInductiveError(
      () => ind.loadDataset('1 1:1', { format: 'arff' as never }),
      'invalid_argument',
      "format must be 'libsvm' or 'csv'",
    );
    expectInductiveError(
      () => ind.loadDataset('1 1:1', undefined as never),
      'invalid_argument',
      'options must be an object',
    );
    expectInductiveError(
      () => ind.loadDataset('1 1:1', { format: 'libsvm', header: true }),
      'invalid_argument',
      'CSV only',
    );
    expectInductiveError(
      () => ind.loadDataset('1,1', { format: 'csv', labelColumn: 0.5 }),
      'invalid_argument',
      'labelColumn must be a 32-bit integer',
    );
    expectInductiveError(
      () => ind.loadDataset('1,1', { format: 'csv', delimiter: ';;' }),
      'invalid_argument',
      'delimiter must be one character',
    );
    expectInductiveError(
      () => ind.loadDataset([1, 2] as never, { format: 'csv' }),
      'invalid_argument',
      'text must be a string or a Uint8Array',
    );
  });

  it('refuses NaN in the arrays, wrong lengths and wrong array types', () => {
    const x = SMALL_X.slice();
    x[4] = NaN;
    expectInductiveError(() => ind.datasetFromArrays(x, 4, 3, SMALL_Y), 'invalid_argument', 'values must be finite');
    const y = SMALL_Y.slice();
    y[2] = Infinity;
    expectInductiveError(() => ind.datasetFromArrays(SMALL_X, 4, 3, y), 'invalid_argument', 'label 2 is not finite');
    expectInductiveError(
      () => ind.datasetFromArrays(SMALL_X, 4, 4, SMALL_Y),
      'shape_mismatch',
      'x has 12 values; expected n x p = 4 x 4 = 16',
    );
    expectInductiveError(
      () => ind.datasetFromArrays(SMALL_X, 4, 3, new Float32Array(3)),
      'shape_mismatch',
      'y has 3 values; expected n = 4',
    );
    expectInductiveError(
      () => ind.datasetFromArrays(new Float64Array(12) as never, 4, 3, SMALL_Y),
      'invalid_argument',
      'x must be a Float32Array: got Float64Array',
    );
    expectInductiveError(
      () => ind.datasetFromArrays(SMALL_X, 2.5, 3, SMALL_Y),
      'invalid_argument',
      'n must be an integer',
    );
    expectInductiveError(
      () => ind.datasetFromArrays(new Float32Array(0), 0, 3, new Float32Array(0)),
      'invalid_argument',
      'no samples',
    );
  });

  it('leaves value checks to the core: lambda <= 0, an unknown loss or penalty, a bad mu', () => {
    const d = good();
    expectInductiveError(
      () => d.screen({ lambda: 0 }),
      'invalid_argument',
      'lambda must be a finite number > 0, got 0',
    );
    expectInductiveError(() => d.screen({ lambda: -1 }), 'invalid_argument', 'lambda must be a finite number > 0');
    expectInductiveError(
      () => d.screen({ loss: 'hinge_squared' as never }),
      'invalid_argument',
      "unknown loss 'hinge_squared'",
    );
    expectInductiveError(() => d.screen({ penalty: 'l3' as never }), 'invalid_argument', 'l3');
    expectInductiveError(() => d.screen({ loss: 'interval_regression', mu: -0.5 }), 'invalid_argument', 'mu');
    expectInductiveError(() => d.screen({ maxEpochs: 0 }), 'invalid_argument', 'maxEpochs must be an integer >= 1');
    // Types are checked here.
    expectInductiveError(
      () => d.screen({ lambda: NaN }),
      'invalid_argument',
      'lambda must be a finite number: got NaN',
    );
    expectInductiveError(
      () => d.screen({ lambda: '1' as never }),
      'invalid_argument',
      'lambda must be a number: got string',
    );
    expectInductiveError(() => d.screen({ maxEpochs: 2.5 }), 'invalid_argument', 'maxEpochs must be a 32-bit integer');
    expectInductiveError(() => d.screen({ lamda: 1 } as never), 'invalid_argument', "unknown option 'lamda'");
    expectInductiveError(
      () => d.screen({ onProgress: 3 as never }),
      'invalid_argument',
      'onProgress must be a function',
    );
    expect(d.screen({ lambda: 0.5 }).n).toBe(4); // still usable after every error
    d.dispose();
  });

  it('refuses single-class labels for classification, and more than two classes without positive', () => {
    const one = ind.datasetFromArrays(SMALL_X, 4, 3, new Float32Array([1, 1, 1, 1]));
    expectInductiveError(() => one.screen({}), 'invalid_argument', 'two distinct labels: got 1');
    one.dispose();
    const three = ind.datasetFromArrays(SMALL_X, 4, 3, new Float32Array([0, 1, 2, 1]));
    expectInductiveError(() => three.screen({}), 'invalid_argument', 'got 3 (use one_vs_rest)');
    expect(three.screen({ positive: 2, lambda: 0.1 }).n).toBe(4); // one-vs-rest makes it two-valued
    three.dispose();
  });

  it('refuses a disposed dataset or instance (backend), and dispose during a screen is deferred', async () => {
    const d = good();
    d.dispose();
    d.dispose(); // idempotent
    expect(d.disposed).toBe(true);
    expectInductiveError(() => d.screen({}), 'backend', 'ScreeningDataset was disposed');
    const e = good();
    const r = e.screen({
      lambda: 1e-3,
      tol: 1e-12,
      onProgress: () => {
        e.dispose();
      },
    });
    expect(r.n).toBe(4);
    expect(e.disposed).toBe(true);
    const other = await init();
    other.dispose();
    expectInductiveError(() => other.loadDataset('1 1:1', { format: 'libsvm' }), 'backend', 'disposed');
    expect(() => other.datasetFromArrays(SMALL_X, 4, 3, SMALL_Y)).toThrow(InductiveError);
  });
});
