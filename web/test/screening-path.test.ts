// ScreeningDataset.path: a regularisation path in the browser build, the same computation as `inductive path`
// (core regularization_path): each lambda warm-started from the previous one, with or without screening. It must
// screen what the native CLI screens, reach the same objectives with and without screening (screening is safe),
// report progress per lambda, and stop when its progress callback says so.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { init, InductiveError, type ScreeningDataset } from '../src/index.js';

const ind = await init();
const repo = (path: string): string => fileURLToPath(new URL(`../../${path}`, import.meta.url));
const CLI = process.env.INDUCTIVE_CLI ?? repo('build/native-release/bin/inductive');
if (!existsSync(CLI)) throw new Error(`path tests: the native CLI ${CLI} is missing (npm test builds it first)`);
const DIGITS = repo('data/screening/digits.csv.gz');

describe('path on digits (9 vs rest, squared hinge + L2)', () => {
  let data: ScreeningDataset;
  const work = mkdtempSync(join(tmpdir(), 'inductive-path-'));
  beforeAll(() => {
    data = ind.loadDataset(new Uint8Array(readFileSync(DIGITS)), { format: 'csv' });
  });
  afterAll(() => {
    data.dispose();
    rmSync(work, { recursive: true, force: true });
  });

  it('visits the default grid and screens what the native CLI screens at each lambda', () => {
    const r = data.path({ positive: 9, tol: 1e-6 });
    // The CLI's grid: 20 lambdas from 1 down to 0.01, evenly spaced in log scale.
    expect(r.points.map((p) => p.lambda)).toEqual(
      Array.from({ length: 20 }, (_, i) => expect.closeTo(10 ** ((-2 * i) / 19), 12)),
    );
    execFileSync(
      CLI,
      [
        'path',
        '--csv',
        DIGITS,
        '--one-vs-rest',
        '9',
        '--tol',
        '1e-6',
        '--screening-only',
        '--out',
        join(work, 'p.json'),
      ],
      { stdio: 'ignore' },
    );
    const native = JSON.parse(readFileSync(join(work, 'p.json'), 'utf8'));
    expect(r.points.length).toBe(native.points.length);
    r.points.forEach((p, i) => {
      const q = native.points[i];
      // One point report (core path_point_report): the CLI's keys are the browser's, snake_cased.
      expect(Object.keys(q).sort()).toEqual(
        Object.keys(p)
          .map((k) => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`))
          .sort(),
      );
      expect(p.converged).toBe(true);
      expect(Math.abs(p.nScreened - q.n_screened)).toBeLessThanOrEqual(Math.ceil(0.005 * r.n));
      expect(Math.abs(p.primal! - q.primal)).toBeLessThan(1e-5 * Math.abs(q.primal));
    });
    expect(r.points.at(-1)!.fractionScreened).toBeGreaterThan(0.85);
    expect(r.seconds).toBeCloseTo(
      r.points.reduce((t, p) => t + p.seconds, 0),
      12,
    );
  });

  it('reaches the same objectives without screening, screening nothing', () => {
    const lambdas = [1, 0.3, 0.1, 0.03];
    const screened = data.path({ positive: 9, lambdas, tol: 1e-8 });
    const plain = data.path({ positive: 9, lambdas, tol: 1e-8, screening: false });
    expect(plain.screening).toBe(false);
    plain.points.forEach((p, i) => {
      expect(p.nScreened).toBe(0);
      expect(Math.abs(p.primal! - screened.points[i]!.primal!)).toBeLessThan(1e-6 * p.primal!);
    });
  });

  it('reaches the same objectives with a working set, certified on every sample', () => {
    const lambdas = [1, 0.3, 0.1, 0.03]; // at 0.01 both solvers need more than the 1000 epochs of maxEpochs
    const plain = data.path({ positive: 9, lambdas, tol: 1e-8, screening: false });
    const ws = data.path({ positive: 9, lambdas, tol: 1e-8, workingSet: true });
    expect(ws.workingSet).toBe(true);
    expect(plain.workingSet).toBe(false);
    ws.points.forEach((p, i) => {
      expect(p.converged).toBe(true);
      expect(p.gap!).toBeLessThanOrEqual(1e-8 * p.primal! * (1 + 1e-9));
      expect(Math.abs(p.primal! - plain.points[i]!.primal!)).toBeLessThan(1e-6 * p.primal!);
    });
    expect(() => data.path({ positive: 9, workingSet: 1 } as never)).toThrow(/workingSet must be a boolean/);
    expect(() => data.screen({ positive: 9, workingSet: true } as never)).toThrow(/unknown option 'workingSet'/);
  });

  it('reports progress per lambda and stops when onProgress returns false', () => {
    const stages: [string, number][] = [];
    data.path({
      positive: 9,
      count: 4,
      onProgress: (s, f) => {
        stages.push([s, f]);
      },
    });
    expect(stages.filter(([s]) => s === 'path').map(([, f]) => f)).toEqual([0.25, 0.5, 0.75, 1]);
    expect(stages.some(([s]) => s === 'solve')).toBe(true);
    let lambdasDone = 0;
    try {
      data.path({ positive: 9, count: 10, onProgress: (s) => !(s === 'path' && ++lambdasDone === 3) });
      throw new Error('expected a cancel');
    } catch (e) {
      expect(e).toBeInstanceOf(InductiveError);
      expect((e as InductiveError).code).toBe('cancelled');
    }
    expect(lambdasDone).toBe(3);
    expect(data.path({ positive: 9, lambdas: [0.5] }).points).toHaveLength(1); // still usable
  });

  it('refuses bad settings with a precise error', () => {
    expect(() => data.path({ lambda: 1 } as never)).toThrow(/unknown option 'lambda'/);
    expect(() => data.path({ lambdas: [1, Number.NaN] })).toThrow(/finite numbers/);
    expect(() => data.path({ lambdas: [1], count: 3 })).toThrow(/not both/);
    expect(() => data.path({ positive: 9, lambdas: [1, -1] })).toThrow(InductiveError);
  });
});
